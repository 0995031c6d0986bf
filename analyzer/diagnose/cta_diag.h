/* Diagnoses: each is a function over the finished model (cta_model.h) that names a cause, with
 * its evidence, call sites, the fix in the user's terms and an estimate of the time the fix
 * would save, computed from the trace. A diagnosis is reported only when that estimate is at
 * least min_saving_pct of its process's window (the span from its first to its last GPU
 * activity; a per-device finding's, its device's whole window, even where the finding is of the
 * steady state), except `oom`, which is always reported. The per-device findings are of the steady
 * state (cta_startup.h: a device's window from where its iteration starts repeating), the
 * start-up's are apart (cta_diag.startup). The list is sorted by estimated saving, the steady
 * state's first.
 * Each diagnosis is one rule (cta_diag_int.h says how rules are written and walked). */
#ifndef CTA_DIAG_H
#define CTA_DIAG_H

#include "cta_model.h"
#include "cta_nvtx.h"
#include "cta_starve_cause.h"

/* evidence figures of one finding; a rule giving more is a defect (cta_diag_ev stops) */
#define CTA_DIAG_MAX_EV 24
#define CTA_DIAG_MAX_SITES 5
/* dataloader-starvation recommends at most this many loader workers (a host's cores bound it) */
#define CTA_DIAG_MAX_WORKERS 16
/* dataloader-starvation counts the gaps of the busiest band of lengths this factor wide (a power
 * of two) */
#define CTA_DIAG_STARVE_BAND 4

typedef enum { CTA_EV_COUNT, CTA_EV_NS, CTA_EV_BYTES, CTA_EV_PCT, CTA_EV_GBPS, CTA_EV_RATIO } cta_ev_unit;

typedef struct {
    const char *key;
    double value;
    cta_ev_unit unit;
} cta_evidence;

/* A call site of a diagnosis: where the user's code made the calls (or, for `oom`, allocated
 * what held the memory), with what those calls amount to. */
typedef struct {
    char call[96];                /* the CUDA function called ("" unknown) */
    char stack[400];              /* the user's frames, innermost first ("" not captured) */
    uint64_t count, bytes, ns;    /* calls (allocations), bytes, time */
    char text[600];               /* one line for people: call, stack and numbers */
    int python;                   /* stack is a Python line in user code */
    cta_stackset stacks;          /* the call stacks counted in this site */
} cta_diag_site;

/* Where a finding happened: its representative event (per id in analyzer/JSON.md: the longest
 * gap of its cause, the longest call it counted, the failed allocation, the lowest window, the
 * first repeated instantiation), on the model's time axis. set 0: no single place. */
typedef struct {
    int set;
    int dev;                      /* the device it happened on, -1 none */
    uint64_t start, end;
} cta_diag_at;

typedef struct {
    const char *id;
    const char *severity;         /* "error", "high", "medium", "low" */
    const cta_proc *proc;
    int dev;                      /* device ordinal, -1 for the process as a whole */
    char message[600];
    uint64_t saving_ns;
    uint64_t window_ns;
    cta_evidence ev[CTA_DIAG_MAX_EV];
    int nev;
    cta_diag_site sites[CTA_DIAG_MAX_SITES];
    int nsites;
    char fix[2048];               /* naming the Python line of the first site where it has one */
    char detail[4096];            /* extra lines (gaps, holders, windows), text only */
    int in_range;                 /* its events happened in NVTX ranges: where (range) */
    cta_nvtx_where_info range;
    cta_diag_at at;
    cta_starve_cause cause;       /* dataloader-starvation, gpu-gaps: why (known 0: no host samples) */
    int gap;                      /* 1 + the gap cause (CTA_GAP_*) it is drawn from, 0 none */
    int startup;                  /* of the start-up (cta_startup.h), not the steady state */
    cta_span span;                /* the gaps it is drawn from (cta_startup_span): its host
                                   * activity is theirs */
} cta_diag;

typedef struct {
    double min_saving_pct;        /* default 1 */
    uint64_t util_window_ns;      /* 0: max(10 ms, window / 100) */
} cta_diag_opts;

/* Fills *out (malloc'd, caller frees) with the diagnoses that fire; returns how many. */
int cta_diagnose(const cta_model *m, const cta_diag_opts *o, cta_diag **out);

#endif
