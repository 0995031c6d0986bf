/* The time sweep (the model's; a feature queues points of its own, CTA_P_FEAT_*, applied through
 * its point hook, cta_feature.h): the host-versus-GPU breakdown, the GPU's idle gaps and their
 * causes, and device memory in use over time (peaks, their holders, failed allocations). The
 * model turns records into intervals and points (cta_api_interval, cta_gpu_interval,
 * cta_push_interval, cta_sweep_push); cta_sweep_run applies, in time order, every point older
 * than the lag the model chooses (cta_model.h explains the lag). Points are only ever applied
 * once, in the order cta_pt_less defines; a point older than what has been applied is applied at
 * the sweep's current time and counted (cta_proc.late_points).
 *
 * The per-record functions are static inline here: they were file-local to the model and are on
 * its per-record path (make bench's summary figure). */
#ifndef CTA_SWEEP_H
#define CTA_SWEEP_H

#include "cta_model_int.h" /* cta_model.h, through the model's internal header (there) */

#include <assert.h>
#include <string.h>

/* ---- the sweep's time-bucketed queue --------------------------------------------------- */

/* Point types, in the order points of equal time are applied: ends before begins, so that
 * back-to-back work leaves no gap, and frees before allocations, so a peak is never counted
 * with memory that was already released. The end of a zero-length interval comes after the
 * begins (END0: its END type + CTA_P_END0), or it would be applied before its own begin and leave
 * the device busy, or the host inside a call, for the rest of the trace. */
enum { CTA_P_GPU_END, CTA_P_API_END, CTA_P_SYNC_END, CTA_P_FREE, CTA_P_FEAT_END, CTA_P_RATE,
       CTA_P_GPU_BEGIN, CTA_P_API_BEGIN, CTA_P_SYNC_BEGIN, CTA_P_FEAT_BEGIN, CTA_P_ALLOC, CTA_P_FAIL,
       CTA_P_CAPTURE, CTA_P_FIRST_KERNEL, CTA_P_END0 };
/* CTA_PF_FEEDS: an API call that puts work on the GPU or waits for it (a launch, copy, set,
 * synchronization): its thread is the one the GPU waits for (cta_sweep.last_tid).
 * CTA_PF_BATCH: a host-to-device copy that begins a step's batch (cta_model.h, h2d_batches). */
enum { CTA_PF_H2D = 1, CTA_PF_SYNCCOPY = 2, CTA_PF_MEMCALL = 4, CTA_PF_EVENTSYNC = 8, CTA_PF_FEEDS = 16,
       CTA_PF_BATCH = 32 };

typedef struct cta_pt {
    uint64_t t;
    uint8_t type, dev, flag, kind; /* kind: a failed allocation's; a feature's point: its slot */
    uint32_t a;   /* tid, or stack index */
    uint64_t b;   /* bytes, or rate (double bits), or the result of a failed allocation, or an
                   * interval's length (at its end) */
} cta_pt;

#define CTA_BUCKET_SHIFT 20 /* ~1 ms */
/* The ring spans at most this many buckets (~69 s) ahead of the sweep: a damaged trace's times
 * can lie years apart, so points further ahead wait in a heap instead of sizing the ring. */
#define CTA_RING_MAX ((uint64_t)1 << 16)
/* Points queued past this many, the sweep stops lagging (memory stays bounded when one absurd
 * interval would make it lag forever); later points for time already applied count as late. */
#define CTA_SWEEP_MAX_PENDING ((size_t)1 << 20)

typedef struct {
    cta_pt *v;
    size_t n, cap;
} cta_bucket;

struct cta_sweep {
    cta_bucket *ring;
    uint64_t *occ;       /* a bit per ring bucket holding points: empty stretches are skipped */
    size_t cap;          /* power of two */
    uint64_t head;       /* bucket index applied next */
    int started;
    size_t pending;      /* points queued, in the ring and in far */
    cta_pt *far;          /* min-heap of the points CTA_RING_MAX buckets or more ahead of head */
    size_t nfar, far_cap;
    uint64_t now;        /* time the state has been advanced to */
    uint64_t safe;       /* buckets before this one may be applied (the lag's limit so far) */
    int applied;         /* a point has been applied (now is set) */
    uint64_t max_dur;    /* longest interval seen */
    uint64_t file_span;  /* longest the trace's chunk headers declare (ct_stats.max_span) */
    int api_depth, sync_depth, mem_depth;
    int sync_ret, copy_ret;          /* a synchronization / a copy's wait has returned ... */
    uint64_t sync_ret_t, copy_ret_t; /* ... last at this time */
    uint64_t ret_ns[3];              /* the time those returning then blocked (sync, copy; of
                                      * the syncs, event syncs') */
    int ndev;            /* devices [0, ndev) may have GPU work */
    /* back-to-back plain calls of one thread, merged as GPU runs are (cta_api_interval); whether
     * one of them fed the GPU (CTA_PF_FEEDS) */
    int api_open, api_feeds;
    uint32_t api_tid;
    uint64_t api_start, api_end;
    /* The thread the GPU waits for: the last to call CUDA to feed it (CTA_PF_FEEDS), else the
     * last to call CUDA at all. Not any thread's call: PyTorch's pin-memory thread allocates
     * pinned buffers (cudaHostAlloc) while the main thread computes, and its CPU rate and
     * samples then stood for the main thread's (a gap of cuDNN set-up computing 260 ms was
     * called 290 ms of waiting). */
    uint32_t last_tid;
    int paused;          /* outside the capture windows of a windowed trace */
};

/* Test only (cta_sweep.c says why): set by cta_model_init from CUTRACE_TEST_SWEEP_FAULT. */
extern int cta_sweep_fault;

static inline int cta_pt_less(const cta_pt *x, const cta_pt *y)
{
    return x->t < y->t || (x->t == y->t && x->type < y->type);
}

/* The type of the end point of an interval [a, b] whose end type is te. */
static inline uint8_t cta_end_type(int te, uint64_t a, uint64_t b)
{
    return (uint8_t)(a == b && !cta_sweep_fault ? CTA_P_END0 + te : te);
}

/* Cold paths of the queue (cta_sweep.c). */
void cta_sweep_ring_grow(cta_sweep *s, size_t need);
void cta_sweep_far_push(cta_sweep *s, cta_pt pt);
/* Nothing applied yet and a point before head: the queue starts earlier, at bucket bi. */
void cta_sweep_rebase(cta_sweep *s, uint64_t bi);
/* Applies every queued point older than `upto` (UINT64_MAX: all, closing open runs first). */
void cta_sweep_run(cta_model *m, cta_proc *p, uint64_t upto);
/* At the end of the records: applies every point left, decides the last gap's cause and takes
 * the holders of a peak no free has followed. */
void cta_sweep_finish(cta_model *m, cta_proc *p);
/* A CAPTURE record at t: recording started (on) or stopped. The sweep counts a device's idle
 * time, and its gaps, inside the windows only (outside them the trace holds no GPU work, copies
 * or synchronizations but those already under way); memory in use counts throughout. */
void cta_sweep_capture(cta_proc *p, uint64_t t, int on);
/* The largest holders of device slot d's live memory, by call site (cta_model_site_group);
 * returns how many. */
int cta_sweep_holders(const cta_proc *p, int d, cta_holder *out);

/* The thread record of tid in p, created on first sight (the model's; the sweep's rate points
 * use it too). */
static inline cta_thread *cta_thread_of(cta_proc *p, uint32_t tid)
{
    /* records come from a few threads, interleaved (the GPU collector's with the caller's): a
     * direct-mapped cache answers before the hash map */
    uint32_t *hint = &p->thread_hint[tid % 16];
    if (*hint && p->threads[*hint - 1].tid == tid)
        return &p->threads[*hint - 1];
    int added;
    uint32_t i = cta_map_get(&p->thread_idx, &tid, sizeof tid, &added);
    if (added) {
        cta_grow(&p->threads, &p->threads_cap, i + 1, sizeof *p->threads);
        p->threads[i].tid = tid;
        p->nthreads = i + 1;
    }
    *hint = i + 1;
    return &p->threads[i];
}

/* Queues a point at or after head: in its bucket, or in far when beyond the ring's reach. */
static inline void cta_ring_put(cta_sweep *s, cta_pt pt)
{
    uint64_t bi = pt.t >> CTA_BUCKET_SHIFT;
    assert(bi >= s->head);
    if (bi - s->head >= CTA_RING_MAX) {
        cta_sweep_far_push(s, pt);
        return;
    }
    if (bi - s->head >= s->cap)
        cta_sweep_ring_grow(s, bi - s->head + 1);
    size_t k = bi & (s->cap - 1);
    cta_bucket *b = &s->ring[k];
    s->occ[k >> 6] |= 1ull << (k & 63);
    cta_grow(&b->v, &b->cap, b->n + 1, sizeof *b->v);
    /* insertion from the back: points mostly arrive in order */
    size_t i = b->n++;
    while (i > 0 && cta_pt_less(&pt, &b->v[i - 1])) {
        b->v[i] = b->v[i - 1];
        i--;
    }
    b->v[i] = pt;
}


static inline void cta_sweep_push(cta_proc *p, cta_pt pt)
{
    cta_sweep *s = p->sweep;
    uint64_t bi = pt.t >> CTA_BUCKET_SHIFT;
    if (!s->started) {
        s->started = 1;
        s->head = bi;
    }
    if (bi < s->head && !s->applied)
        cta_sweep_rebase(s, bi);
    if (bi < s->head || (s->applied && pt.t < s->now)) {
        /* older than what has been applied: apply it as early as still possible */
        p->late_points++;
        pt.t = s->now > (s->head << CTA_BUCKET_SHIFT) ? s->now : s->head << CTA_BUCKET_SHIFT;
        bi = pt.t >> CTA_BUCKET_SHIFT;
    }
    /* nothing queued: skip the empty stretch, but not past what the lag has let the sweep
     * pass (a record delivered later may still start before this point) */
    if (s->pending == 0 && bi > s->head && s->safe > s->head)
        s->head = bi < s->safe ? bi : s->safe;
    cta_ring_put(s, pt);
    s->pending++;
}


static inline void cta_push_interval(cta_proc *p, uint64_t a, uint64_t b, int tb, int te, int dev, int flag,
                          uint32_t tid)
{
    cta_sweep *s = p->sweep;
    if (b < a)
        a = b;
    if (b - a > s->max_dur)
        s->max_dur = b - a;
    cta_sweep_push(p, (cta_pt){.t = a, .type = (uint8_t)tb, .dev = (uint8_t)dev, .flag = (uint8_t)flag, .a = tid});
    /* the end carries the interval's length (a synchronization's blocked time) */
    cta_sweep_push(p, (cta_pt){.t = b, .type = cta_end_type(te, a, b), .dev = (uint8_t)dev, .flag = (uint8_t)flag, .a = tid,
                               .b = b - a});
}

/* A top-level API call. Calls of one thread that start where the previous one ended (a launch
 * loop) enter the sweep as one run, as GPU runs do: the host is inside CUDA throughout either
 * way; the run's end feeds the GPU if one of its calls did. Calls with another flag (blocking
 * copies, allocations) keep their own points. */
/* The merged run of calls, if open, ends. */
static inline void cta_api_flush(cta_proc *p)
{
    cta_sweep *s = p->sweep;
    if (!s->api_open)
        return;
    s->api_open = 0;
    cta_sweep_push(p, (cta_pt){.t = s->api_end, .type = cta_end_type(CTA_P_API_END, s->api_start, s->api_end),
                               .flag = (uint8_t)s->api_feeds, .a = s->api_tid});
}

static inline void cta_api_interval(cta_proc *p, uint64_t a, uint64_t b, int flag, uint32_t tid)
{
    cta_sweep *s = p->sweep;
    if (b < a)
        a = b;
    if (b - a > s->max_dur)
        s->max_dur = b - a;
    if (s->api_open && !(flag & ~CTA_PF_FEEDS) && tid == s->api_tid && a >= s->api_start &&
        a <= s->api_end) {
        if (b > s->api_end)
            s->api_end = b;
        s->api_feeds |= flag;
        return;
    }
    cta_api_flush(p);
    if (flag & ~CTA_PF_FEEDS) {
        cta_push_interval(p, a, b, CTA_P_API_BEGIN, CTA_P_API_END, 0, flag, tid);
        return;
    }
    s->api_open = 1;
    s->api_feeds = flag;
    s->api_tid = tid;
    s->api_start = a;
    s->api_end = b;
    cta_sweep_push(p, (cta_pt){.t = a, .type = CTA_P_API_BEGIN, .flag = (uint8_t)flag, .a = tid});
}

/* GPU intervals of a device that start inside the previous one's span (back-to-back kernels,
 * a queue) are merged into one busy run before they reach the sweep: the union, the gaps and
 * their causes stay the same with a fraction of the points. The run's begin is queued at once;
 * its end when no later record can extend it (sweep_run) or at the end. */
static inline void cta_gpu_interval(cta_proc *p, int d, uint64_t a, uint64_t b, int flag)
{
    cta_dev *dv = &p->dev[d];
    cta_sweep *s = p->sweep;
    if (b - a > s->max_dur)
        s->max_dur = b - a;
    /* (a host-to-device copy beginning with the run keeps its own begin: it may end a gap) */
    if (dv->run_open && a >= dv->run_start && a <= dv->run_end && !(flag && a == dv->run_start)) {
        if (b > dv->run_end)
            dv->run_end = b;
        return;
    }
    if (dv->run_open && a > dv->run_end) {
        cta_sweep_push(p, (cta_pt){.t = dv->run_end, .type = cta_end_type(CTA_P_GPU_END, dv->run_start, dv->run_end),
                                  .dev = (uint8_t)d});
        dv->run_open = 0;
    }
    if (dv->run_open) { /* overlaps the run from the left: counted on its own */
        cta_push_interval(p, a, b, CTA_P_GPU_BEGIN, CTA_P_GPU_END, d, flag, 0);
        return;
    }
    dv->run_open = 1;
    dv->run_start = a;
    dv->run_end = b;
    cta_sweep_push(p, (cta_pt){.t = a, .type = CTA_P_GPU_BEGIN, .dev = (uint8_t)d, .flag = (uint8_t)flag});
}

#endif
