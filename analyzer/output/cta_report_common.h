/* What the summary's renderings (cta_report.c: the text; cta_json_report.c: the JSON) and the
 * other outputs of a finished model (export, timeline) compute the same way, so that they never
 * disagree: breakdowns, orderings, how a process ended, the libraries it ran, peaks and
 * stragglers. Everything here reads a finished model only. */
#ifndef CTA_REPORT_COMMON_H
#define CTA_REPORT_COMMON_H

#include "cta_model.h"
#include "cta_out.h"

/* Per process and device breakdown, shared by both renderings, the ranks table and the export. */
typedef struct {
    uint64_t window, busy, idle;
    uint64_t busy_bounded;    /* of busy, covered only by end-bounded operations: at most this
                               * much less busy, more idle */
    cta_hostsplit host;
    double max_speedup_gpu, max_speedup_host; /* INFINITY when the bound is unlimited */
} cta_breakdown;
void cta_breakdown_of(const cta_dev *d, cta_breakdown *b);

static inline uint64_t cta_wall_of(const cta_proc *p) { return p->t_last >= p->t_first ? p->t_last - p->t_first : 0; }

/* Whether a device (or the pinned host, CTA_HOST_DEV) gets a VRAM entry: memory was allocated
 * on it or an allocation failed; the text and the JSON list the same ones. */
static inline int cta_report_has_vram(const cta_dev *dv) { return dv->allocs || dv->nfails; }

static inline double cta_gbps(uint64_t bytes, uint64_t ns) { return ns ? (double)bytes / (double)ns : 0; }

/* How the process ended (FORMAT.md 4.4), indexed by cta_end.how, for the text and the JSON. */
#define CTA_REPORT_END_HOWS 7
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
/* The name of what a failed call of an API layer (CTA_LAYER_*) returned: its cudaError_t,
 * CUresult or cublasStatus_t as NVIDIA's headers name it; NULL for a value they do not name. */
const char *cta_report_error_name(int layer, int32_t code);

/* How process p ended, in words ("exit status 3", "killed by signal 15 (SIGTERM)", "crashed:
 * signal 11 (SIGSEGV)", "trace stopped early: the file system was full ...", "no END record:
 * ..."), into buf (160 bytes hold every text); returns buf. */
const char *cta_end_text(const cta_model *m, const cta_proc *p, char *buf, size_t n);
/* END CT_END_STOPPED's code as JSON's `stopped_by` ("disk_full", "quota", "file_size_limit",
 * "write_error"), and in words ("the file system was full (ENOSPC)"). */
const char *cta_stop_key(int code);
const char *cta_stop_words(int code);

/* Calls fn for every device of p that has a breakdown to show (a window of GPU activity, or
 * work without a GPU interval, untimed of its operations: then busy and idle would count that
 * work as idle, and only the counts are shown), in device order, with its breakdown. */
void cta_report_breakdowns(const cta_proc *p,
                           void (*fn)(void *ctx, const cta_proc *p, int dev, uint64_t untimed,
                                      const cta_breakdown *b),
                           void *ctx);
/* JSON: the full call stacks of a site (every frame up to CTA_FULL_STACK_FRAMES, Python ones as
 * "function (file:line)"): "stacks" and "more_stacks" (it had more than listed). */
void cta_report_json_stacks(cta_json *j, const cta_model *m, const cta_proc *p, const cta_stackset *s);

#endif
