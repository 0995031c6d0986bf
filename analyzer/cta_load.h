/* Reading traces into a model, shared by `summary` and `timeline`: expands the PATH arguments,
 * opens them as one time-ordered stream (the format library merges processes and ranks), feeds
 * every record to the model (and through it to an observer), and shows progress on stderr when
 * stderr is a terminal. */
#ifndef CTA_LOAD_H
#define CTA_LOAD_H

#include "cta_model.h"

/* Returns CTA_EXIT_OK with *rd open and *m finished (free with cta_load_close), or CTA_EXIT_INPUT
 * after printing why. variants: also collect per grid/block kernel statistics. */
int cta_load(const char *cmd, char *const *paths, int npaths, const cta_observer *obs,
            int variants, ct_reader **rd, cta_model *m);
/* The two halves of cta_load, for a command that needs the open files before the pass. The run
 * returns as cta_load does, or CTA_EXIT_FAIL when the observer's on_record stopped it; on either
 * failure the model is freed. */
int cta_load_open(const char *cmd, char *const *paths, int npaths, ct_reader **rd);
int cta_load_run(const char *cmd, ct_reader *rd, const cta_observer *obs, int variants, cta_model *m);
/* The earliest start (file header clock) of the opened files, on the merged time axis. */
uint64_t cta_load_start(const ct_reader *rd);
void cta_load_close(ct_reader *rd, cta_model *m);

#endif
