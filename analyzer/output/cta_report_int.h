/* Internal to the summary's renderings (cta_report_common.c: what both share; cta_report.c: the
 * text; cta_json_report.c: the JSON): the orderings and figures both must compute the same way, so
 * that the text and the JSON never disagree. Everything here reads a finished model only. */
#ifndef CTA_REPORT_INT_H
#define CTA_REPORT_INT_H

#include "cta_report.h"

static inline uint64_t wall_of(const cta_proc *p) { return p->t_last >= p->t_first ? p->t_last - p->t_first : 0; }

/* Whether a device (or the pinned host, CTA_HOST_DEV) gets a VRAM entry: memory was allocated
 * on it or an allocation failed; the text and the JSON list the same ones. */
static inline int cta_report_has_vram(const cta_dev *dv) { return dv->allocs || dv->nfails; }

static inline double gbps(uint64_t bytes, uint64_t ns) { return ns ? (double)bytes / (double)ns : 0; }

/* How the process ended (FORMAT.md 4.4), indexed by cta_end.how, for the text and the JSON. */
#define CTA_REPORT_END_HOWS 6
extern const char *const cta_report_end_how[CTA_REPORT_END_HOWS];

/* A SHLIB kind's name (enum ct_shlib_kind), for the text and the JSON: "cudart", "cuda",
 * "cublas", "cublasLt", "other". */
const char *cta_report_shlib_kind(uint32_t kind);

/* Indices of stats sorted by total time, descending (caller frees). */
uint32_t *cta_report_sorted(const cta_stat *s, size_t n);
/* The END code: the exit status, the signal, or -1 where unknown. */
int cta_report_end_code(const cta_model *m, const cta_proc *p);
/* The highest device memory in use of any of the process's devices. */
uint64_t cta_report_proc_peak(const cta_proc *p);
/* The breakdown of a process's busiest device; 0 when it has none or its times are unknown. */
int cta_report_proc_breakdown(const cta_proc *p, cta_breakdown *b);
/* How many processes carry a rank identity (only those are compared as ranks). */
size_t cta_report_ranked(const cta_model *m);
/* The straggler verdict of a ranked process against the ranks' medians, or NULL. */
const char *cta_report_straggler(const cta_model *m, const cta_proc *p);
/* A kernel table's total: the sum of its rows' Total, so that Time % adds up to 100. */
uint64_t cta_report_shown_total(const cta_stat *st, size_t n);
/* Host time of one API layer (CTA_LAYER_*). */
uint64_t cta_report_layer_total(const cta_model *m, int layer);

#endif
