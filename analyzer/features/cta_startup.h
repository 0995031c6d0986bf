/* Start-up apart from the steady state (issue 28, item 3). A real run begins with CUDA's
 * initialization, libraries loading, cuDNN's autotuning and the first allocations, then repeats
 * its iteration. The feature finds where the repetition begins: from the program's NVTX ranges
 * where it has some (the outermost range repeating most, from its first instance no longer than
 * 1.5 times their median: a first step autotuning is longer), else per device from the sequence of
 * the device's kernels and copies in time order (the first CTA_STARTUP_MAX_OPS of them) on its
 * busiest stream (another stream's work, a copy stream's next batch, falls anywhere among it), the
 * shortest period P whose repetition (a tenth of each period may differ: iterations vary) lasts
 * nearly as long as any and holds at least three periods, 24 operations and a quarter of them
 * (a run ends with other work, an evaluation or a checkpoint, as it begins with its start-up);
 * in a run of more than 8,192 operations, P is that of the 8,192 in its middle or at its end
 * (a start-up of thousands of autotuning kernels before them), whichever repeats longer through
 * the run: linear in the run but for two windows' search (cta_period.c, CTA_PERIOD_WINDOW);
 * the steady state begins at the first whole period, the unit turned to begin after its longest
 * typical gap (where one iteration ends and the next begins), as the end of the GPU work before
 * it. No repetition: the whole run is steady, and the output says so.
 *
 * Of the start-up, it tells apart: CUDA's initialization (the first CUDA call to the end of the
 * call that made the context, or of the first call), library loading (cuBLAS / cuDNN handles
 * made, modules loaded), allocations before the steady state, and autotuning (synchronizations
 * whose call stack is in cuDNN's algorithm search or the convolution's benchmark; kernels the
 * start-up runs that the steady state never does; the thread samples in such frames), and the
 * device's idle time before the steady state by cause.
 *
 * Contract: a feature of the table (cta_features.c). The diagnoses (cta_diag.c) compute the
 * per-device rules over the steady state (cta_startup_steady: a device as if its record began at
 * the steady state) and report start-up apart (the startup-autotuning rule,
 * cta_diag_startup.c, from cta_startup_of). Its text section comes after the breakdown, its
 * JSON key "startup" (analyzer/JSON.md). */
#ifndef CTA_STARTUP_H
#define CTA_STARTUP_H

#include "cta_feature.h"

/* GPU operations of a device the repetition is found in: a start-up of up to about as many
 * (16 bytes each, and its gaps 24, until the process is finished: ~6 MB at most a device; on
 * tracegen's 2.45 M-operation trace of make bench's section 3, peak memory 6.9 -> 12.7 MB,
 * CPU 0.80 -> 0.85 s; on 2.0 M operations after a start-up of 10,000, 0.70 -> 0.80 s, where
 * 8,192 found none) */
#define CTA_STARTUP_MAX_OPS (1u << 17)

/* How the steady state was found: not (the whole run is steady), from the sequence of
 * operations, from the NVTX ranges. */
enum { CTA_STARTUP_NONE, CTA_STARTUP_SEQUENCE, CTA_STARTUP_NVTX };

/* What a device's start-up was, once its process is finished. */
typedef struct {
    int found;                    /* CTA_STARTUP_* */
    uint64_t ops;                 /* GPU operations looked at */
    uint32_t period;              /* operations per iteration */
    uint64_t repeats;             /* whole iterations of the repetition from its start */
    uint64_t steady_op;           /* the steady state's first operation (its index) */
    uint64_t steady_from;         /* when it begins (model time; 0: no start-up) */
    uint64_t startup_busy;        /* GPU busy time before it, within the device's window */
    uint64_t idle_ns[CTA_GAP_N], idle_count[CTA_GAP_N]; /* idle time before it, by cause */
    uint64_t trial_kernels;       /* distinct kernels run before it and never after */
    uint64_t trial_runs;          /* their runs */
} cta_startup_dev;

/* The libraries whose loading and handle making the start-up tells apart. */
enum { CTA_LIB_CUBLAS, CTA_LIB_CUDNN, CTA_STARTUP_LIBS };
extern const char *const cta_startup_lib_names[CTA_STARTUP_LIBS]; /* "cuBLAS", "cuDNN" */

/* A library's loading (cta_startup.c, su_lib_seen): when it was first seen in use, and the host's
 * time on that thread from its previous CUDA call to the first call of that use. */
typedef struct {
    uint64_t seen;                /* model time; 0: not used */
    uint64_t first_call;          /* the first call of its use (0: none came) */
    uint64_t host_ns;             /* the host's time before it: loading, the handle made */
    uint32_t objects;             /* cuDNN: its shared objects the tracer found mapped */
    int before_cuda;              /* only mapped before the thread's first CUDA call: not told */
} cta_startup_lib;

/* What the process's start-up was, on the host. */
typedef struct {
    uint64_t first_call, init_end;        /* CUDA init: first call's start to context ready */
    uint64_t lib_calls, lib_ns;           /* library handles made, modules loaded */
    cta_startup_lib lib[CTA_STARTUP_LIBS]; /* cuBLAS's and cuDNN's loading */
    uint64_t alloc_calls, alloc_ns;       /* allocations before the steady state */
    uint64_t tune_calls, tune_ns;         /* synchronizations in an algorithm search */
    uint64_t tune_first, tune_last;       /* their span */
    uint64_t samples, tune_samples;       /* thread samples before the steady state, in it */
    uint64_t steady_from;                 /* the earliest device's steady state (0 none) */
    char nvtx_range[64];                  /* the NVTX range it was found by ("" none) ... */
    uint64_t nvtx_repeats;                /* ... and its instances from the steady state on */
} cta_startup_proc;

/* The feature (cta_startup_report.c: these hooks and the summary's sections). */
extern const cta_feature cta_startup_feature;
void cta_startup_record(cta_model *m, cta_proc *p, const ct_rec *r);
void cta_startup_api(cta_model *m, cta_proc *p, cta_thread *th, const ct_rec *r, uint32_t idx);
void cta_startup_gpu(cta_model *m, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c);
void cta_startup_gap(cta_model *m, cta_proc *p, int d, const cta_gap_parts *g);
void cta_startup_finish(cta_model *m, cta_proc *p);
void cta_startup_proc_free(cta_proc *p);

/* Device d of p's start-up (NULL: the feature is not plugged or saw no GPU work there). */
const cta_startup_dev *cta_startup_of(const cta_proc *p, int d);
const cta_startup_proc *cta_startup_proc_of(const cta_proc *p);
/* Writes into *out device d of p as the diagnoses see its steady state: its window from the
 * steady state on, its busy and idle time, gaps by cause, data-loading gap classes and longest
 * gaps without the start-up's; returns 1, or 0 (out untouched) when it had no start-up. */
int cta_startup_steady(const cta_proc *p, int d, cta_dev *out);
/* The gaps of device d of p that a finding of its start-up (startup 1) or of its steady state
 * (0) is drawn from: those begun before the steady state, from it on; all of them where
 * cta_startup_steady sets nothing apart. */
cta_span cta_startup_span(const cta_proc *p, int d, int startup);

#endif
