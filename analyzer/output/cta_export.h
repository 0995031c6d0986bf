/* The export (`cutrace export`): the traces as tables (cta_tables.h;
 * schema in analyzer/SQLITE.md). One pass of the model: the per-event tables (kernels, copies,
 * sets, API calls, NVTX ranges and marks, allocations) are written as the model observes the
 * joined events (cta_observer) and the allocation records go by; the per-process tables
 * (processes, breakdown, diagnoses) from the finished model and its diagnoses, computed as
 * `cutrace summary` computes them. Times are nanoseconds on the timeline's axis: 0 is the
 * earliest trace start. Memory is the model's plus the names and call sites seen (StringIds). */
#ifndef CTA_EXPORT_H
#define CTA_EXPORT_H

#include "cta_diag.h"
#include "cta_tables.h"

/* Writes the tables of the traces of rd (cta_load_open file by file), modelled by jobs workers,
 * into t, and closes t (complete only when everything was written); the diagnoses with dopt.
 * Returns a CTA_EXIT_* status (errors on stderr), and the rows written in *rows. */
int cta_export_write(cta_tables *t, ct_reader *rd, const cta_diag_opts *dopt, int jobs, uint64_t *rows);

#endif
