/* Reading traces into a model, shared by `summary` and `timeline`: expands the PATH arguments,
 * opens them as one time-ordered stream (the format library merges processes and ranks), feeds
 * every record to the model (and through it to an observer), and shows progress on stderr when
 * stderr is a terminal. */
#ifndef CT_LOAD_H
#define CT_LOAD_H

#include "ct_model.h"

/* Returns CT_EXIT_OK with *rd open and *m finished (free with ct_load_close), or CT_EXIT_INPUT
 * after printing why. variants: also collect per grid/block kernel statistics. */
int ct_load(const char *cmd, char *const *paths, int npaths, const ct_observer *obs,
            int variants, ct_reader **rd, ct_model *m);
/* The two halves of ct_load, for a command that needs the open files before the pass. */
int ct_load_open(const char *cmd, char *const *paths, int npaths, ct_reader **rd);
int ct_load_run(const char *cmd, ct_reader *rd, const ct_observer *obs, int variants, ct_model *m);
/* The earliest start (file header clock) of the opened files, on the merged time axis. */
uint64_t ct_load_start(const ct_reader *rd);
void ct_load_close(ct_reader *rd, ct_model *m);

#endif
