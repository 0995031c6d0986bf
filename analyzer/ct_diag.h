/* Diagnoses: each is a function over the finished model (ct_model.h) that names a cause, with
 * its evidence, call sites, the fix in the user's terms and an estimate of the time the fix
 * would save, computed from the trace. A diagnosis is reported only when that estimate is at
 * least min_saving_pct of its process's window (the span from its first to its last GPU
 * activity), except `oom`, which is always reported. The list is sorted by estimated saving. */
#ifndef CT_DIAG_H
#define CT_DIAG_H

#include "ct_model.h"

#define CT_DIAG_MAX_EV 16
#define CT_DIAG_MAX_SITES 5
/* dataloader-starvation recommends at most this many loader workers (a host's cores bound it) */
#define CT_DIAG_MAX_WORKERS 16
/* dataloader-starvation counts the gaps of the busiest band of lengths this factor wide (a power
 * of two) */
#define CT_DIAG_STARVE_BAND 4

typedef enum { CT_EV_COUNT, CT_EV_NS, CT_EV_BYTES, CT_EV_PCT, CT_EV_GBPS, CT_EV_RATIO } ct_ev_unit;

typedef struct {
    const char *key;
    double value;
    ct_ev_unit unit;
} ct_evidence;

/* A call site of a diagnosis: where the user's code made the calls (or, for `oom`, allocated
 * what held the memory), with what those calls amount to. */
typedef struct {
    char call[96];                /* the CUDA function called ("" unknown) */
    char stack[400];              /* the user's frames, innermost first ("" not captured) */
    uint64_t count, bytes, ns;    /* calls (allocations), bytes, time */
    char text[600];               /* one line for people: call, stack and numbers */
} ct_diag_site;

typedef struct {
    const char *id;
    const char *severity;         /* "error", "high", "medium", "low" */
    const ct_proc *proc;
    int dev;                      /* device ordinal, -1 for the process as a whole */
    char message[600];
    uint64_t saving_ns;
    uint64_t window_ns;
    ct_evidence ev[CT_DIAG_MAX_EV];
    int nev;
    ct_diag_site sites[CT_DIAG_MAX_SITES];
    int nsites;
    const char *fix;
    char detail[2048];            /* extra lines (gaps, holders, windows), text only */
} ct_diag;

typedef struct {
    double min_saving_pct;        /* default 1 */
    uint64_t util_window_ns;      /* 0: max(10 ms, window / 100) */
} ct_diag_opts;

/* Fills *out (malloc'd, caller frees) with the diagnoses that fire; returns how many. */
int ct_diagnose(const ct_model *m, const ct_diag_opts *o, ct_diag **out);

/* Utilization windows of one device, shared by the report and low-gpu-utilization. */
typedef struct {
    uint64_t width;               /* window length */
    uint32_t n;                   /* windows from the device's first GPU activity */
    double util[CT_SERIES_BINS];  /* busy fraction of each */
    double median;
} ct_utilwin;
void ct_util_windows(const ct_dev *d, uint64_t want_width, ct_utilwin *u);

#endif
