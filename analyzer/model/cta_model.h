/* The analysis model: one pass over the records of a set of traces (delivered in time order by
 * the format library's reader) builds per-process state from which every table, the timeline's
 * joined events and every diagnosis are computed. Memory grows with the live state (calls whose
 * GPU work is in flight, live allocations, distinct names and call stacks), never with the
 * number of records.
 *
 * How records are joined (FORMAT.md 4.3): an API call, its LAUNCH / COPY / MEM detail and its
 * GPU interval share a correlation id. Details and API records of a call are adjacent in their
 * thread's stream; the GPU record completes the call. It usually comes later, but comes first
 * when the work ended before the call returned (a synchronous copy, a tiny kernel): it then waits
 * in the call's entry for the detail.
 *
 * The host-versus-GPU breakdown is a sweep over the time axis: each interval (GPU work, API
 * call, blocking synchronization), CPU-time reading and allocation becomes points that are
 * sorted in a time-bucketed queue and applied in time order once no record can still start
 * before them. Records are ordered by their end, so a point is safe once it is older than the
 * longest span of any record: the reader knows it before the first record from the file's chunk
 * headers (ct_stats.max_span, FORMAT.md 3.2), and the sweep lags by that span, at least
 * CTA_SWEEP_MIN_LAG_NS; once an interval exceeds it (files of 1.0 declare none), by twice the
 * longest interval seen. A point that arrives
 * later than that (the reader delivered a record late, a thread's CPU readings spread over
 * streams) is applied at the sweep's current time and counted (cta_proc.late_points). Back-to-back GPU intervals of a device enter the sweep as one
 * busy run (the union and the gaps are unchanged). A damaged trace cannot make the sweep
 * unbounded: points far ahead of it wait in a heap rather than sizing the bucket ring, empty
 * stretches are jumped, and past 1 M queued points it stops lagging (later points count as
 * late), so an interval (or a declared span) claiming years costs neither memory nor time. */
#ifndef CTA_MODEL_H
#define CTA_MODEL_H

#include <stdint.h>

#include "cttrace.h"
#include "cta_map.h"
#include "cta_series.h"
#include "cta_sketch.h"
#include "cta_union.h"

#define CTA_MAX_DEV 16            /* devices per process the model follows */
#define CTA_HOST_DEV CTA_MAX_DEV   /* slot of pinned host memory in the per-device arrays */
/* The API layers, each a table of its own: a runtime or library call contains driver calls. */
enum { CTA_LAYER_RUNTIME, CTA_LAYER_DRIVER, CTA_LAYER_LIBRARY, CTA_LAYER_N };
#define CTA_TOP_STACKS 10         /* live allocations grouped by stack, at a peak or an OOM */
#define CTA_TOP_GAPS 10
#define CTA_MAX_FAILS 16          /* failed allocations kept in detail */
#define CTA_SWEEP_MIN_LAG_NS 200000000ull
#define CTA_FEAT_MAX 8            /* features plugged into the model (cta_feature.h) */
#define CTA_BW_MIN_BYTES (256u << 10) /* smaller copies measure latency, not bandwidth */

/* copy operations, as the tables name them */
enum { CTA_OP_H2D, CTA_OP_D2H, CTA_OP_D2D, CTA_OP_P2P, CTA_OP_H2H, CTA_OP_MEMSET, CTA_OP_N };
/* host memory kinds of a copy */
enum { CTA_HK_PAGEABLE, CTA_HK_PINNED, CTA_HK_NONE, CTA_HK_N };
extern const char *const cta_op_names[CTA_OP_N];
extern const char *const cta_hk_names[CTA_HK_N];

/* GPU idle gaps, each attributed to one cause (first that applies):
 *  STARVE  ends with a host-to-device copy and the host spent most of it outside CUDA
 *  SYNC    a synchronization call returned during the gap (the queue had been drained)
 *  SYNCCPY a blocking (synchronous) copy returned during the gap
 *  LAUNCH  the host spent most of it inside CUDA calls (launch overhead)
 *  HOST    anything else (host work between GPU phases) */
enum { CTA_GAP_STARVE, CTA_GAP_SYNC, CTA_GAP_SYNCCPY, CTA_GAP_LAUNCH, CTA_GAP_HOST, CTA_GAP_N };
extern const char *const cta_gap_names[CTA_GAP_N];
/* The channels of a device's plot series (cta_dev.util): its GPU busy time; the idle time of
 * the gap in progress by host state (outside CUDA with a known CPU rate, and the CPU time of
 * that, apart), moved when the gap's cause is decided into the idle time by host state and by
 * the gap's cause. A gap never decided (after the device's last GPU work) stays pending and is
 * not shown, as the breakdown leaves it out. */
enum { CTA_CH_BUSY, CTA_CH_PEND_IN_API, CTA_CH_PEND_BLOCKED, CTA_CH_PEND_OUTSIDE, CTA_CH_PEND_CPU,
       CTA_CH_PEND_UNKNOWN, CTA_CH_IN_API, CTA_CH_BLOCKED, CTA_CH_COMPUTE, CTA_CH_WAIT,
       CTA_CH_UNKNOWN, CTA_CH_GAP, CTA_CH_N = CTA_CH_GAP + CTA_GAP_N };

/* GPU operations of one kind (kernels; copies and sets) for estimating their work (cta_gpu.c:
 * work_sample): how many, the shortest recorded (a bound, if nothing better), how many were
 * timed exactly and their work: the interval of one begun after its call returned (queued
 * behind other work), else its part after its call returned. */
typedef struct {
    uint64_t ops, shortest_ns, exact_ops, exact_ns;
} cta_work;

/* The GPU time of all of w's operations: the exactly timed ones' work, each other at the
 * shortest recorded, the tightest of their bounds (their own held the host's staging: 1.5 times
 * PyTorch's starved loop's work). An exact one begun on an idle stream began somewhere inside
 * its call, which may hold milliseconds of host time (a pageable copy's staging: train_loop's
 * batches recorded at 1.38 ms for 0.41; a launch descheduled before it handed its kernel over,
 * beside CPU-bound processes: PyTorch's starved loop's work five times the truth), where the
 * part after it was 0.40 ms, and PyTorch's kernels' 4.9 us for 5. Summed, not averaged over all
 * operations: the exactly timed are the longest (a short kernel has ended when its end is
 * timed on a busy host: 8 GELUs of 50 us among 134 kernels of 5 us made the average 5 times the
 * truth). Per operation, not per byte: a small copy's time is mostly latency, and its rate
 * applied to a large one would make it out hundreds of times too long. */
static inline double cta_work_estimate(const cta_work *w)
{
    return (double)w->exact_ns + (double)(w->ops - w->exact_ops) * (double)w->shortest_ns;
}

/* What the host was doing while a device was idle. "unknown" is time outside CUDA on a thread
 * with no CPU-time readings. */
typedef struct {
    uint64_t in_api, blocked, compute, wait, unknown;
} cta_hostsplit;

static inline void cta_hostsplit_add(cta_hostsplit *h, const cta_hostsplit *x)
{
    h->in_api += x->in_api;
    h->blocked += x->blocked;
    h->compute += x->compute;
    h->wait += x->wait;
    h->unknown += x->unknown;
}

/* Data-loading gaps of one length class (cta_sketch_bucket of their length): how many and their
 * time, for the diagnosis to find the typical gap and price each class of gaps at its length;
 * steps: of them, those ended by a step's first batch copy (a kernel ran since the previous
 * host-to-device copy, once a kernel has run): the others are the program's start, or pauses
 * within a step, before its second copy (PyTorch's labels), however long the host was kept
 * from it. */
typedef struct {
    uint64_t n, ns, steps;
} cta_starve_bin;

typedef struct {
    uint64_t start, len;
    int cls;
    cta_hostsplit host;
} cta_gap;

/* A gap's time by cause, in time order: from start, ns[0] of cause cls[0], then ns[1] (0: none)
 * of cls[1] (a gap after a synchronization: what the synchronization is owed, then the host's
 * own time; cta_sweep.c gap_commit). */
typedef struct {
    uint64_t start, ns[2];
    int cls[2];
} cta_gap_parts;

/* The call stacks counted in one call site: stacks that reach the same Python line in user code
 * through different native frames are one site (cta_model_site_group). The first
 * CTA_SITE_STACKS distinct ones, and whether there were more. */
#define CTA_SITE_STACKS 4
typedef struct {
    uint32_t ids[CTA_SITE_STACKS]; /* stack indices */
    uint32_t n;
    int more;
} cta_stackset;

typedef struct {
    uint32_t stack; /* index into cta_proc stacks (0: no stack): the holder's first stack */
    uint64_t bytes, count;
    cta_stackset stacks;
} cta_holder;

typedef struct {
    uint64_t time, requested, in_use;
    uint32_t stack;
    int kind;       /* enum ct_alloc_kind */
    uint32_t result;
    int nholders;
    cta_holder holders[CTA_TOP_STACKS];
} cta_fail;

/* Per device (and CTA_HOST_DEV for pinned host memory) of one process. */
typedef struct {
    int seen;
    ct_rec_device prop;
    int have_prop;
    char name[128];
    /* breakdown (sweep) */
    int busy_depth;
    int run_open;                 /* a merged GPU busy run whose end is not queued yet */
    uint64_t run_start, run_end;
    int windowed;                 /* first GPU work seen */
    uint64_t first_gpu, last_gpu; /* the window */
    uint64_t paused, pause_pend;  /* of it, idle time outside the capture windows (cta_sweep.c);
                                   * of the gap in progress */
    uint64_t busy;
    cta_hostsplit idle;            /* committed gaps */
    cta_hostsplit pend;            /* the gap in progress (compute: in wait until it ends) */
    double pend_cpu;              /* its CPU time outside CUDA: time x rate (compute) */
    uint64_t gap_start;
    int gap_sync, gap_synccpy;    /* a blocking call returned during the gap in progress */
    uint64_t gap_sync_ns[3];      /* the time the synchronizations and synchronous copies that
                                   * returned in it blocked the host (what the gap owes them:
                                   * cta_sweep.c gap_commit); of the synchronizations, event
                                   * synchronizations' */
    int gap_mem;                  /* the host was in an allocation call during it */
    cta_gap closed;                /* the gap that ended at the sweep's current instant, ... */
    int closed_open, closed_h2d, closed_batch, closed_sync, closed_synccpy, closed_mem; /* ...
                                                                   * its cause not yet decided */
    uint64_t closed_sync_ns[3];
    uint64_t sync_event_owed;     /* of the after-sync time, what event synchronizations hold */
    uint64_t gap_ns[CTA_GAP_N], gap_count[CTA_GAP_N];
    cta_sketch starve_len;         /* lengths of the data-loading gaps (their regularity) */
    cta_starve_bin *starve_bins;   /* CTA_SKETCH_BUCKETS of them, NULL until the first such gap */
    /* Data-loading gaps before the device's first kernel: the program's start up to its first
     * batch (the model's weights copied, loader workers starting), no loop's step yet, when a
     * kernel runs at all (a program of copies alone has no steps to tell). first_kernel: that
     * kernel's start is queued; kernel_run: the sweep has passed it. */
    uint64_t starve_startup_ns, starve_startup;
    cta_hostsplit starve_startup_host;
    /* The first data-loading gap a step's first batch copy ended (cta_starve_bin.steps): its
     * start (0: none) and the data-loading time before it, where the loop's steps begin. */
    uint64_t first_step_gap, starve_before_step;
    int first_kernel, kernel_run;
    /* The batches loaded, for the loader's CPU per batch: host-to-device copies with a kernel
     * since the previous one (a step's images and labels are one batch), once a kernel has run;
     * those before the first kernel (the model's weights, imagenet's 122 copies, then the first
     * batch) one, unless no kernel ever runs (a program of copies alone: each its batch). */
    uint64_t h2d_batches, h2d_before_kernels;
    int kernel_since_h2d;
    cta_hostsplit gap_host[CTA_GAP_N];
    uint64_t idle_in_memcall;     /* of gaps with an allocation call, the host's time in CUDA */
    uint64_t long_gaps;           /* gaps of 100 us or more: the loop's rhythm */
    cta_gap top[CTA_TOP_GAPS];
    int ntop;
    cta_series util;              /* CTA_CH_N channels from the first GPU work */
    /* memory */
    uint64_t in_use, peak, peak_time, allocs, frees, alloc_bytes;
    int peak_pending;             /* the peak's holders are not yet snapshotted */
    cta_holder peak_holders[CTA_TOP_STACKS];
    int npeak_holders;
    cta_series mem;
    uint64_t nfails;
    cta_fail fails[CTA_MAX_FAILS];
    /* work counts */
    uint64_t kernels, kernel_ns;  /* kernels with a GPU interval, their GPU time */
    /* The GPU's wait for launches (launch-bound): for each kernel, the time from the end of
     * the device's earlier work (as recorded so far) to the latest the kernel can have started
     * (its recorded start, or the call's return when the record starts before it: on an idle
     * stream the tracer can only bound the start to the call) if its launch call took at
     * least half of it, else that time's part in the call; and how many waits */
    uint64_t launch_wait_ns, launch_waits, end_seen;
    uint64_t graph_launch_wait_ns;    /* of launch_wait_ns, the waits for graph launches
                                       * (LAUNCH flag CT_LAUNCH_GRAPH) */
    /* Kernels, copies and sets whose LAUNCH / COPY record says they ran here (host-to-host
     * copies excluded: no GPU work) and those of them with a GPU interval. Fewer timed than
     * recorded (GPU timing off, 1 in N, timings lost): busy and idle time, the gaps and what
     * is drawn from them are unknown for this device. */
    uint64_t gpu_ops, gpu_timed;
    uint64_t copy_ns;             /* GPU time of copies and sets, summed (overlaps counted twice) */
    cta_work work_kernels, work_copies[CTA_OP_N]; /* what a step's GPU work is estimated from */
    /* The union of the exact GPU intervals (not CT_GPU_END_BOUND): the busy time only
     * end-bounded operations cover is busy less its measure (busy_bounded, set by
     * cta_model_finish): the busy time and what is drawn from it are upper bounds by that much,
     * the idle time and its gaps lower bounds. */
    cta_union u_exact;
    uint64_t bounded_ops, busy_bounded;
} cta_dev;

/* Operations of a device whose GPU interval is missing. */
static inline uint64_t cta_dev_untimed(const cta_dev *d)
{
    return d->gpu_ops > d->gpu_timed ? d->gpu_ops - d->gpu_timed : 0;
}

/* An API call that may still get a detail record */
typedef struct {
    uint64_t corr, start, end;
    uint32_t idx, stack;          /* API name index, stack index */
    uint32_t ctx;                 /* the call's context (cta_feature.ctx_ref), 0 none */
} cta_apislot;

typedef struct {
    uint32_t tid;
    double rate;                  /* CPU seconds per second over the current reading interval */
    int rate_known;
    uint64_t last_ts, last_cpu;   /* previous reading */
    int have_reading;
    uint64_t api_calls;
    cta_apislot recent[4];         /* last calls still waiting for their detail record */
    /* A call's site is on its API record, which follows its SYNC record and its detail: */
    uint64_t last_api_corr;       /* the thread's last API record ... */
    uint32_t last_api_stack;      /* ... and its stack index ... */
    uint64_t last_api_ns;         /* ... and host time */
    uint64_t sync_corr, sync_ns;  /* a synchronization waiting for its API record (corr != 0) */
    uint64_t sync_start;          /* ... and when it began */
    uint32_t sync_kind;
    uint64_t await_corr;          /* a call with detail and GPU interval waiting for its API */
    uint64_t child_parent;        /* the parent of the last nested call with a site ... */
    uint32_t child_stack;         /* ... and that site */
    uint64_t *nested;             /* corrs of the calls nested in the thread's current top-level */
    size_t nnested, nested_cap;   /* call so far (its kernels, if it is a cuBLAS GEMM) */
    char name[64];
    void *feat[CTA_FEAT_MAX];     /* each feature's state of the thread (cta_feature.h) */
} cta_thread;

/* Per call-site accumulator for diagnoses (key: diagnosis kind + stack). */
enum { CTA_SITE_PAGEABLE, CTA_SITE_ASYNC_PAGEABLE, CTA_SITE_SYNC_COPY, CTA_SITE_SYNC, CTA_SITE_CHURN,
       CTA_SITE_LAUNCH, CTA_SITE_N };
/* A diagnosis's events, by where they are counted (cta_feature.where): the call-site kinds, then
 * the idle-gap classes (CTA_GAP_*), then failed allocations. */
enum { CTA_WHERE_GAP = CTA_SITE_N, CTA_WHERE_OOM = CTA_WHERE_GAP + CTA_GAP_N, CTA_WHERE_N };
typedef struct {
    uint64_t count, bytes, ns;
    cta_stackset stacks;
} cta_site;

/* The longest event of one site kind (all of them, with or without a call stack): the call, or
 * for pageable copies the GPU interval, a call-based diagnosis is drawn from (cta_diag.at). */
typedef struct {
    uint64_t start, len;
    int dev;                      /* -1 unknown */
    int set;
} cta_site_longest;

typedef struct cta_sweep cta_sweep;

/* A CUDA library the process mapped (a SHLIB record, FORMAT.md 4.6). */
#define CTA_MAX_SHLIBS 16
typedef struct {
    uint32_t kind;                /* enum ct_shlib_kind */
    char path[512];
    char build_id[132];           /* hex; "" when the object has none */
} cta_shlib;

/* The CPython the process ran (a PYTHON record, FORMAT.md 4.7); version 0: none recorded. */
typedef struct {
    uint32_t version;             /* PY_VERSION_HEX */
    char program[512];
    char prefix[512], exec_prefix[512];
    char path[2048];              /* the module search path it computed, ':'-separated */
} cta_python;

typedef struct {
    uint32_t file;
    char host[256];
    uint32_t pid;
    int rank;                     /* from the rank variables of the environment; -1: none */
    int gpu_timing;               /* the tracer's GPU timing: 0 off, 1 all, N 1 in N, -1 unknown */
    char command[512];
    int torch;                    /* PyTorch's CUDA library was loaded (header CT_FW_TORCH):
                                   * advice in its terms, its caching allocator plausible */
    int kineto;                   /* converted from a PyTorch profiler (Kineto) trace (header
                                   * tracer_version "kineto", analyzer/KINETO.md): no CPU-time
                                   * readings, the host's time outside CUDA is unknown */
    uint64_t t_first, t_last;     /* first and last record times */
    int ended;                    /* END record seen */
    ct_rec_end end;
    const ct_stats *stats;        /* reader's damage counts (valid until the reader closes) */
    cta_shlib shlibs[CTA_MAX_SHLIBS]; /* in the order described; later ones beyond the limit dropped */
    size_t nshlibs;
    cta_python python;
    cta_dev dev[CTA_MAX_DEV + 1];
    cta_thread *threads;
    size_t nthreads, threads_cap;
    cta_map thread_idx;            /* tid -> index */
    uint32_t thread_hint[16];     /* tid % 16 -> 1 + index of a thread with that tid, 0: none */
    /* joins */
    ct_hash corr;                 /* corr -> pool entry */
    cta_pool calls;
    /* stack id (file's) -> index, for grouping; index 0 is "no stack" */
    cta_map stack_idx;
    uint32_t *stack_ids;          /* index -> file stack id */
    size_t nstacks, stacks_cap;
    /* stack index -> the first stack index of its call site (cta_model_site_group; 0: not yet
     * looked up), and the Python sites seen (file\0line\0function -> first stack index) */
    uint32_t *site_group;
    size_t site_group_cap;
    cta_map site_keys;
    uint32_t *site_first;
    size_t site_first_cap;
    /* live allocations: address -> pool entry */
    ct_hash live;
    cta_pool allocs;
    cta_map holders;               /* (dev, site's first stack) -> index in holder_bytes */
    uint64_t *holder_bytes, *holder_count;
    cta_stackset *holder_stacks;
    size_t holders_cap;
    cta_map freed_sizes;           /* (dev, size) -> index: sizes freed, for churn */
    /* per-site accumulators */
    cta_map sites;                 /* (kind, api name index, site's first stack) -> index in site */
    cta_site *site;
    size_t site_cap;
    cta_site_longest site_longest[CTA_SITE_N];
    /* copies detail for diagnoses */
    uint64_t pageable_count, pageable_bytes, pageable_ns;
    uint64_t pageable_recost_ns;  /* the same copies at the pinned bandwidth */
    uint64_t pageable_async;      /* of them, Async copies: async-memcpy-pageable prices the
                                   * same pinning of them (its saving includes this one's) */
    int pinned_from;              /* what pageable copies were re-costed with where no pinned
                                   * copy was measured: 1 the link's peak, 2 (no peak known
                                   * either) their own transfer after staging; 0 measured */
    uint64_t async_pageable_count, async_pageable_bytes, async_pageable_host_ns;
    /* What pinning would save: per timed call, from the later of its entry and its GPU start
     * (the host waited for queued work ahead of the copy either way: a synchronization after
     * a pinned copy waits for it too) to the later of its return and its GPU end, less the
     * copy at the pinned bandwidth, or where none is known, less the copy's GPU time after the
     * call returned (the transfer proper, at the link's rate); untimed copies: the bytes at the
     * pinned bandwidth, at most the call. Device-to-host copies under CTA_BW_MIN_BYTES count
     * nothing (their latency stays, and the host waits for their data either way) */
    uint64_t async_pageable_copy_ns;
    int async_pageable_from_bw;   /* some copies had no GPU interval: re-costed from bytes */
    uint64_t sync_copy_count, sync_copy_bytes, sync_copy_host_ns;
    /* The latency-bound ones (under CTA_BW_MIN_BYTES) with GPU timing, per device and direction:
     * their GPU time, count and the fastest. Their intervals end when the call returned, so
     * beyond the fastest they hold the host's wake-up after the copy, when the GPU, with
     * nothing queued by the blocked host, idled; the gaps after them do not hold it */
    uint64_t scp_ns[CTA_MAX_DEV][2], scp_n[CTA_MAX_DEV][2], scp_min[CTA_MAX_DEV][2];
    /* the fastest small copy per device and direction whose end was timed exactly (not a
     * bound): what such a copy takes without the host's wake-up */
    uint64_t small_exact_min[CTA_MAX_DEV][2], small_exact_n[CTA_MAX_DEV][2];
    uint64_t sync_calls, sync_ns, sync_count_kind[8];
    uint64_t event_timings;       /* the program's own timings: event elapsed-time calls */
    uint64_t churn_allocs, churn_frees, churn_ns;
    uint64_t short_kernels;       /* kernels shorter than their launch call */
    uint64_t launches, launch_api_ns;
    cta_sketch launch_queue;       /* launch call entry -> kernel start */
    uint64_t late_points, unmatched_gpu, unknown_frees;
    /* pinned bandwidth measured per device and direction (bytes, ns), for re-costing */
    uint64_t pinned_bytes[CTA_MAX_DEV][2], pinned_ns[CTA_MAX_DEV][2];
    /* pageable copies per device and direction, re-costed at the end */
    uint64_t pg_bytes[CTA_MAX_DEV][2], pg_ns[CTA_MAX_DEV][2], pg_count[CTA_MAX_DEV][2];
    uint64_t pg_tail_ns[CTA_MAX_DEV][2];  /* their GPU time after the call returned */
    /* Async pageable copies per device and direction: all, and those with a GPU interval */
    uint64_t apg_bytes[CTA_MAX_DEV][2], apg_host_ns[CTA_MAX_DEV][2];
    uint64_t apg_timed_bytes[CTA_MAX_DEV][2], apg_timed_host_ns[CTA_MAX_DEV][2];
    uint64_t apg_span_ns[CTA_MAX_DEV][2];  /* timed ones: the spans above, summed */
    uint64_t apg_tail_ns[CTA_MAX_DEV][2];  /* and their GPU time after the call returned */
    uint64_t gpu_longest;         /* the longest GPU interval (the lag of the dev unions) */
    uint64_t *kern_ns;            /* kernel time per kernel index (cta_model.kernels) */
    size_t kern_cap;
    char top_kernel[160];         /* the kernel with the most GPU time (set by cta_model_finish;
                                   * a longer name cut, as ct_string_cut does) */
    /* A windowed trace (CAPTURE records, FORMAT.md 4.9): its windows, their total, the one
     * open since capture_since (cta_sweep_capture) */
    int captured, capture_on;
    uint64_t capture_windows, capture_ns, capture_since;
    uint64_t (*capture_win)[2];   /* each window's start and end, in time order */
    size_t capture_cap;
    cta_sweep *sweep;
    void *feat[CTA_FEAT_MAX];     /* each feature's state of the process (cta_feature.h) */
} cta_proc;

/* Per kernel (or kernel variant) or API function. Kernels: d holds the GPU durations of the
 * instances timed exactly, b those of the instances whose end is only an upper bound
 * (CT_GPU_END_BOUND), `launched` counts every instance from its LAUNCH record. A row's statistics
 * are d's when it has any exact instance (cta_stat_shown): a bound can exceed the true duration
 * by the time the host was held up, so it would drown the exact figures. */
typedef struct {
    cta_sketch d, b;
    uint64_t failures;            /* API only ... */
    int32_t fail_code;            /* ... the first failure's result (cudaError_t, CUresult or
                                   * cublasStatus_t by layer) ... */
    int fail_codes_vary;          /* ... and whether another failure returned another */
    int layer;                    /* API only: CTA_LAYER_RUNTIME (cuda*), _DRIVER (cu*), _LIBRARY
                                   * (cuBLAS, cuBLASLt) */
    uint64_t launched, launch_ns; /* kernels: LAUNCH records, host time of their launch calls */
    uint64_t in_graphs;           /* kernels: of the instances, those run by CUDA graph launches
                                   * (counted from the graphs' nodes, never GPU-timed alone) */
    uint32_t grid[3], block[3];   /* kernels: the first launch's configuration ... */
    int configs_vary;             /* ... and whether later launches used another */
    uint64_t first_ts;            /* kernels: when the first launch was read (cta_model.now):
                                   * which one is first when partial models merge */
} cta_stat;

/* The durations a kernel row's statistics are of: its exact instances, or where it has none,
 * the bounds of its end-bounded ones (the statistics are then upper bounds). */
static inline const cta_sketch *cta_stat_shown(const cta_stat *s) { return s->d.count ? &s->d : &s->b; }
static inline int cta_stat_upper(const cta_stat *s) { return !s->d.count && s->b.count; }
static inline uint64_t cta_stat_timed(const cta_stat *s) { return s->d.count + s->b.count; }
/* A kernel row's total GPU time (its Total and Time %): every timed instance counts, the
 * end-bounded ones at the exact instances' average (their bound may exceed their duration by
 * the time the host was held up, and an instance left out would shrink the kernel's share);
 * with no exact instance, the bounds' sum, an upper bound. cta_stat_total_estimated: the row
 * mixes both, so its total is partly that estimate. */
static inline uint64_t cta_stat_total(const cta_stat *s)
{
    if (!s->d.count)
        return s->b.sum;
    /* b.count x the average, rounded half up, in exact arithmetic */
    unsigned __int128 twice = (unsigned __int128)s->b.count * s->d.sum * 2 + s->d.count;
    return s->d.sum + (uint64_t)(twice / ((unsigned __int128)s->d.count * 2));
}
static inline int cta_stat_total_estimated(const cta_stat *s) { return s->d.count && s->b.count; }

/* Per copy operation and host memory kind: count and bytes from the COPY records and the copy
 * and set nodes of graph launches (in_graphs of them: events time a graph as a whole, so never
 * timed), and of those with a GPU interval, the exact ones (timed, timed_bytes, ns) and those
 * whose end is only an upper bound (bounded, bounded_bytes, bounded_ns), as for kernels
 * (cta_stat). */
typedef struct {
    uint64_t count, bytes, in_graphs, timed, timed_bytes, ns;
    uint64_t bounded, bounded_bytes, bounded_ns;
    double peak_bps;              /* of the first device it ran on (0 unknown) ... */
    uint64_t peak_ts;             /* ... when that copy was read (cta_model.now) */
} cta_copystat;

/* What a copy row's time and bandwidth are of (cta_stat_shown's rule). */
typedef struct {
    uint64_t n, bytes, ns;
    int upper;
} cta_copyshown;
static inline cta_copyshown cta_copy_shown(const cta_copystat *c)
{
    if (c->timed || !c->bounded)
        return (cta_copyshown){c->timed, c->timed_bytes, c->ns, 0};
    return (cta_copyshown){c->bounded, c->bounded_bytes, c->bounded_ns, 1};
}

/* What a consumer other than the tables (the timeline) may observe as the pass goes. All
 * pointers are valid during the call only. */
typedef struct {
    uint64_t corr, api_start, api_end;
    uint32_t tid;
    const char *api_name;
    int is_launch, is_copy;
    const ct_rec_launch *launch;  /* is_launch */
    const ct_rec_copy *copy;      /* is_copy */
    const char *kernel_name;
    uint32_t kernel_idx;          /* is_launch: kernel_name's index in the model's names */
    int have_api;
} cta_call;

typedef struct {
    void *ctx;
    /* an API record; stack: its call site's stack index in p (the record's stack, or for a runtime
     * call without one the driver call's nested in it), 0 none */
    void (*on_api)(void *ctx, cta_proc *p, const ct_rec *r, const char *name, uint32_t stack);
    /* a GPU interval (end: its end time), joined with its call when known */
    void (*on_gpu)(void *ctx, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c);
    /* a kernel, copy or set known from its call only: its GPU interval was not collected (at
     * its call's return with GPU timing off, else at the end of the pass, out of time order) */
    void (*on_untimed)(void *ctx, cta_proc *p, const cta_call *c);
    void (*on_mem)(void *ctx, cta_proc *p, uint64_t t, int dev, uint64_t in_use);
    void (*on_proc)(void *ctx, cta_proc *p);
    void (*on_thread)(void *ctx, cta_proc *p, const cta_thread *t);
    /* a stream created, with the priority it was created with */
    void (*on_stream)(void *ctx, cta_proc *p, int dev, uint64_t stream, int priority);
    /* an NVTX_RANGE (at its end) or NVTX_MARK record, as read (its strings are resolvable) */
    void (*on_nvtx)(void *ctx, cta_proc *p, const ct_rec *r);
    /* a CAPTURE record: recording of a windowed trace started or stopped */
    void (*on_capture)(void *ctx, cta_proc *p, const ct_rec *r);
    /* every record, once the model has taken it (cta_load_run); nonzero stops the pass (the
     * consumer failed: nothing more is worth reading) */
    int (*on_record)(void *ctx, const ct_rec *r);
} cta_observer;

typedef struct {
    const ct_reader *rd;
    cta_proc *procs;               /* procs[i] is the file file0 + i */
    size_t nprocs;
    uint32_t file0;
    cta_map kernel_names;          /* name -> index */
    cta_stat *kernels;
    size_t kernels_cap;
    cta_map variants;              /* name\0grid\0block -> index */
    cta_stat *variant_stats;
    size_t variants_cap;
    cta_map api_names;
    cta_stat *api;
    size_t api_cap;
    cta_copystat copies[CTA_OP_N][CTA_HK_N];
    uint64_t t0;                  /* earliest time of any record (report times are relative) */
    uint64_t launched, launched_timed; /* kernel instances, and those with a GPU interval */
    uint64_t records;
    uint64_t now;                 /* time of the record being fed */
    /* per-file string id -> kernel / api index + 1 (caches; 0 = not yet looked up) */
    uint32_t **kcache, **acache;
    size_t *kcache_n, *acache_n;
    uint8_t **acat;               /* api category per string id */
    const cta_observer *obs;
    int variants_on;              /* also keep per grid/block variant statistics */
    const struct cta_plugs *plugs; /* the features (cta_model_plug) */
    void *feat[CTA_FEAT_MAX];     /* each feature's state of the whole model (cta_feature.h) */
} cta_model;

/* rd stays open until cta_model_free (names and stacks are resolved through it). */
void cta_model_init(cta_model *m, const ct_reader *rd, const cta_observer *obs);
/* Models made file by file (cta_load_run with jobs): a partial model of one file, fed that
 * file's records alone and finished on its own (its process is complete then: nothing in a
 * process depends on another's records), with tables of its own; and the model they are merged
 * into, which starts with no process (cta_model_init_merged). cta_model_merge moves src's
 * process into dst and adds src's tables to dst's (kernels, variants and API functions by name,
 * copies, counts, the cuBLAS calls, the NVTX ranges by name), renumbering what the process
 * holds by table row (its per-kernel time, its call sites by function); src is left with no
 * process, to be freed (cta_model_free) once what observed it is done with it. Merging
 * the files in file order gives the same model whichever order they were modelled in. */
void cta_model_init_file(cta_model *m, const ct_reader *rd, const cta_observer *obs, uint32_t file);
void cta_model_init_merged(cta_model *m, const ct_reader *rd, int variants);
void cta_model_merge(cta_model *dst, cta_model *src);
void cta_model_feed(cta_model *m, const ct_rec *r);
/* Flushes the sweeps and computes what needs the whole trace. */
void cta_model_finish(cta_model *m);
void cta_model_free(cta_model *m);

/* The window of a device: last - first GPU activity (0 if none). */
static inline uint64_t cta_dev_window(const cta_dev *d) { return d->windowed ? d->last_gpu - d->first_gpu - d->paused : 0; }

#endif
