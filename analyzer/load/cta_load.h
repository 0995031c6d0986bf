/* Reading traces into a model, shared by the commands: expands the PATH arguments, opens them,
 * feeds every record to the model (and through it to observers), either file by file on worker
 * threads with the partial models merged in file order (cta_load_run_jobs: summary, report,
 * export) or as one time-ordered stream (cta_load_run: the timeline, whose events are written in
 * time order), and shows progress on stderr when stderr is a terminal. */
#ifndef CTA_LOAD_H
#define CTA_LOAD_H

#include "cta_model.h"

/* Opens the PATH arguments (files, directories), printing why not: CTA_EXIT_OK or CTA_EXIT_INPUT.
 * by_file: the reader will be read file by file (ct_reader_next_in, cta_load_run_jobs), each
 * file's chunk headers walked (ct_stats.max_span) by the thread that reads it rather than all
 * here (ct_reader_opts.defer_spans); 0 for cta_load_run, whose model needs every file's span
 * from its start. Traces converted from Kineto are walked here either way.
 * cta_load_run reads them as one time-ordered stream into m (cta_model_init: what the timeline,
 * whose observer wants time order, uses) and returns CTA_EXIT_OK with m finished, CTA_EXIT_INPUT
 * after printing why, or CTA_EXIT_FAIL when the observer's on_record stopped it; on either
 * failure the model is freed. */
int cta_load_open(const char *cmd, char *const *paths, int npaths, int by_file, ct_reader **rd);
int cta_load_run(const char *cmd, ct_reader *rd, const cta_observer *obs, int variants, cta_model *m);
/* Observers of a pass made file by file (cta_load_run_jobs). begin, on the worker that models
 * file, before its partial model `part` is set up (the address is final), sets *obs (zeroed)
 * to observe that model and returns what it observes into; end, on the thread that merges, in
 * file order, once part has been merged into m (part is freed after it), takes that state back
 * (also when the pass failed: then m is NULL). Nonzero from end stops the pass (the consumer
 * failed). done (may be NULL), on the worker, once the file's model is finished (or its pass
 * failed). abort (may be NULL), on the merging thread when the pass fails, before it waits for
 * the workers: an observer that can hold a worker up (in its callbacks or done) must let it go. */
typedef struct {
    void *ctx;
    void *(*begin)(void *ctx, uint32_t file, const cta_model *part, cta_observer *obs);
    void (*done)(void *ctx, void *state);
    int (*end)(void *ctx, uint32_t file, void *state, const cta_model *m, const cta_model *part);
    void (*abort)(void *ctx);
} cta_file_observers;

/* cta_load_run with the files modelled by `jobs` worker threads (>= 1): each file is read on
 * its own (ct_reader_next_in) into a partial model (cta_model_init_file), finished, and merged
 * into m in file order (cta_model_merge) as soon as it and every earlier file are done. The
 * same steps run for any number of jobs, so the model, and all that is printed from it, is
 * the same byte for byte; it may differ from cta_load_run's (a merged stream) where order
 * decides (rows that tie, floating-point sums). Decoding memory is bounded by the jobs, not the
 * files. Returns as cta_load_run does. */
int cta_load_run_jobs(const char *cmd, ct_reader *rd, const cta_file_observers *fo, int variants,
                      int jobs, cta_model *m);
/* All the processors online: the default of -j. */
int cta_load_default_jobs(void);
/* The earliest start (file header clock) of the opened files, on the merged time axis. */
uint64_t cta_load_start(const ct_reader *rd);
void cta_load_close(ct_reader *rd, cta_model *m);

#endif
