/* GPU timing, the writer's side (see ctp_harvest.h). */
#include "ctp_harvest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctp_clock.h"
#include "ctp_fns.h"
#include "ctp_real.h"

typedef struct {
    ctp_gpu_pend p;
    ctp_thread *owner;
} ctp_pending;

static ctp_pending *ctp_pend;
static size_t ctp_npend, ctp_pend_cap;
static uint64_t ctp_harvest_lost; /* lost timings no per-operation LOSS record reports */

/* Operations whose timing is lost, written as LOSS records at the next harvest. */
static ct_rec_loss *ctp_lost_ops;
static size_t ctp_nlost, ctp_lost_cap;

static void ctp_lost_op(const ctp_thread *owner, uint64_t corr, uint32_t why)
{
    if (ctp_nlost == ctp_lost_cap) {
        size_t cap = ctp_lost_cap ? ctp_lost_cap * 2 : 64;
        ct_rec_loss *v = realloc(ctp_lost_ops, cap * sizeof *v);
        if (!v) {
            ctp_harvest_lost++;
            return;
        }
        ctp_lost_ops = v;
        ctp_lost_cap = cap;
    }
    ctp_lost_ops[ctp_nlost++] = (ct_rec_loss){CT_LOSS_GPU_TIMING, 1, owner ? owner->tid : 0, corr,
                                            why};
}

#define CTP_ANCHOR_SAMPLES 8
/* A context's anchor. Two sets of events: a renewal is sampled into the set not in use, so one
 * whose record calls were all slow can be refused and the anchor in use kept. */
typedef struct {
    uint64_t ctx;
    CUevent ev[2][CTP_ANCHOR_SAMPLES];
    unsigned set, best; /* ev[set][best] is the anchor */
    CUstream stream;
    uint64_t host, made;
    uint64_t call;  /* the anchor's record call: twice its error */
    uint64_t floor; /* the shortest record call the context has had */
    uint64_t retry; /* after a refused renewal, none before this */
} ctp_anchor;
static ctp_anchor ctp_anchors[64];
static unsigned ctp_nanchors;

#define CTP_ANCHOR_PERIOD_NS 1000000000ull
/* A host that is preempted or contended at a renewal can make all its record calls slow: seen
 * beside two CPU hogs, eight calls of 14-21 us where the context's shortest was 80 ns, so an
 * anchor off by 7-9 us. Such a renewal is refused, and retried CTP_ANCHOR_RETRY_NS later, unless
 * its call is within twice the context's shortest or within CTP_ANCHOR_GOOD_CALL_NS (an error of
 * half of it is the resolution of CUDA's event times, "around 0.5 microseconds"), or no worse
 * than the anchor's, or the anchor is CTP_ANCHOR_MAX_AGE_NS old (under 4096 ms, float
 * milliseconds are exact to 122 ns). */
#define CTP_ANCHOR_GOOD_CALL_NS 1000ull
#define CTP_ANCHOR_RETRY_NS 10000000ull
#define CTP_ANCHOR_MAX_AGE_NS 4000000000ull
/* How long the end of a trace (exit, exec) waits for operations still running. */
#define CTP_FINAL_WAIT_NS 250000000ull

static CUresult ctp_elapsed(float *ms, CUevent a, CUevent b)
{
    if (ctp_resolve(CTP_FN_cuEventElapsedTime_v2))
        return CTP_REAL(cuEventElapsedTime_v2)(ms, a, b);
    return CTP_REAL(cuEventElapsedTime)(ms, a, b);
}

/* e back to its owner's stash, or destroyed (owner gone, stash full, or ctx 0: a context that
 * is being destroyed). */
static void ctp_give_back(ctp_thread *owner, CUevent e, uint64_t ctx)
{
    if (!e)
        return;
    ctp_gpu_stash *s = owner && !owner->dead ? owner->gpu : NULL;
    if (s && ctx) {
        uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
        if (head - atomic_load_explicit(&s->tail, memory_order_acquire) < CTP_GPU_STASH) {
            s->ev[head & (CTP_GPU_STASH - 1)] = e;
            s->ctx[head & (CTP_GPU_STASH - 1)] = ctx;
            atomic_store_explicit(&s->head, head + 1, memory_order_release);
            return;
        }
    }
    if (s) /* the owner may create another in its place */
        atomic_fetch_add_explicit(&s->destroyed, 1, memory_order_relaxed);
    CTP_REAL(cuEventDestroy_v2)(e);
}

void ctp_gpu_collect(ctp_thread *owner, const ctp_gpu_pend *p)
{
    if (p->kind == 0) {
        ctp_give_back(owner, p->ev0, p->ctx);
        ctp_give_back(owner, p->ev1, p->ctx);
        if (p->why)
            ctp_lost_op(owner, p->corr, p->why);
        return;
    }
    if (ctp_npend == ctp_pend_cap) {
        size_t cap = ctp_pend_cap ? ctp_pend_cap * 2 : 1024;
        ctp_pending *v = realloc(ctp_pend, cap * sizeof *v);
        if (!v) {
            ctp_lost_op(owner, p->corr, CT_GPU_LOST_NO_MEMORY);
            ctp_give_back(owner, p->ev0, p->ctx);
            ctp_give_back(owner, p->ev1, p->ctx);
            return;
        }
        ctp_pend = v;
        ctp_pend_cap = cap;
    }
    ctp_pend[ctp_npend++] = (ctp_pending){*p, owner};
}

static int ctp_anchor_good(const ctp_anchor *a, uint64_t call)
{
    return call <= CTP_ANCHOR_GOOD_CALL_NS || call <= 2 * a->floor;
}

/* The context's anchor, renewed when older than CTP_ANCHOR_PERIOD_NS (sooner while its call
 * was slow); NULL if none can be had. */
static ctp_anchor *ctp_anchor_for(uint64_t ctx, uint64_t now)
{
    ctp_anchor *a = NULL;
    for (unsigned i = 0; i < ctp_nanchors; i++)
        if (ctp_anchors[i].ctx == ctx)
            a = &ctp_anchors[i];
    /* made may be later than now (an anchor renewed earlier in the same harvest) */
    if (a && ((now < a->made + CTP_ANCHOR_PERIOD_NS && ctp_anchor_good(a, a->call)) ||
              now < a->retry))
        return a;
    if (!a) {
        if (ctp_nanchors == sizeof ctp_anchors / sizeof ctp_anchors[0])
            return NULL;
        a = &ctp_anchors[ctp_nanchors++];
        memset(a, 0, sizeof *a);
        a->ctx = ctx;
        a->floor = UINT64_MAX;
    }
    int have = a->made != 0;
    unsigned set = have ? !a->set : 0;
    CUevent *ev = a->ev[set];
    CUcontext popped;
    if (CTP_REAL(cuCtxPushCurrent_v2)((CUcontext)(uintptr_t)ctx) != CUDA_SUCCESS)
        return have ? a : NULL;
    int ok = a->stream || CTP_REAL(cuStreamCreate)(&a->stream, CU_STREAM_NON_BLOCKING) ==
                              CUDA_SUCCESS;
    /* The GPU stamps an event recorded on an idle stream somewhere inside the record call: the
     * call's middle is the estimate, off by at most half the call. A call can be slow (one
     * that wakes the driver's or the simulation's worker, a preempted host): of
     * CTP_ANCHOR_SAMPLES records back to back (after the first, the worker is awake), each on its
     * own event, the shortest call's is the anchor. */
    uint64_t t0s[CTP_ANCHOR_SAMPLES], t1s[CTP_ANCHOR_SAMPLES];
    unsigned n = 0;
    for (; ok && n < CTP_ANCHOR_SAMPLES; n++) {
        ok = ev[n] || CTP_REAL(cuEventCreate)(&ev[n], CU_EVENT_DEFAULT) == CUDA_SUCCESS;
        t0s[n] = ctp_now();
        ok = ok && CTP_REAL(cuEventRecord)(ev[n], a->stream) == CUDA_SUCCESS;
        t1s[n] = ctp_now();
    }
    /* Polled, not cuEventSynchronize: a query is what the relaxed capture mode allows while
     * another thread captures (ctp_gpu_harvest). */
    CUresult st = CUDA_ERROR_NOT_READY;
    while (ok && (st = CTP_REAL(cuEventQuery)(ev[n - 1])) == CUDA_ERROR_NOT_READY)
        ;
    ok = ok && st == CUDA_SUCCESS;
    CTP_REAL(cuCtxPopCurrent_v2)(&popped);
    if (!ok)
        return have ? a : NULL;
    unsigned best = 0;
    for (unsigned i = 1; i < n; i++)
        if (t1s[i] - t0s[i] < t1s[best] - t0s[best])
            best = i;
    uint64_t call = t1s[best] - t0s[best];
    if (call < a->floor)
        a->floor = call;
    if (have && !ctp_anchor_good(a, call) && call > a->call &&
        now < a->made + CTP_ANCHOR_MAX_AGE_NS) {
        a->retry = now + CTP_ANCHOR_RETRY_NS;
        return a;
    }
    a->set = set;
    a->best = best;
    a->call = call;
    a->host = t0s[best] + call / 2;
    a->made = t1s[best];
    return a;
}

static void ctp_anchor_drop(uint64_t ctx)
{
    for (unsigned i = 0; i < ctp_nanchors; i++)
        if (ctp_anchors[i].ctx == ctx) {
            for (unsigned k = 0; k < 2 * CTP_ANCHOR_SAMPLES; k++)
                if (ctp_anchors[i].ev[k / CTP_ANCHOR_SAMPLES][k % CTP_ANCHOR_SAMPLES])
                    CTP_REAL(cuEventDestroy_v2)(
                        ctp_anchors[i].ev[k / CTP_ANCHOR_SAMPLES][k % CTP_ANCHOR_SAMPLES]);
            if (ctp_anchors[i].stream)
                CTP_REAL(cuStreamDestroy_v2)(ctp_anchors[i].stream);
            ctp_anchors[i] = ctp_anchors[--ctp_nanchors];
            return;
        }
}

static int ctp_gpu_cmp(const void *x, const void *y)
{
    uint64_t a = ((const ct_rec *)x)->ts, b = ((const ct_rec *)y)->ts;
    return a < b ? -1 : a > b;
}

/* Everything of context ctx, which is about to be destroyed, before its events go with it:
 * waits for its timed operations (the destruction waits for them too), so that the harvest
 * that follows converts them; destroys its events in every stash. (Its anchor goes after the
 * harvest, ctp_anchor_drop.) */
static void ctp_gpu_retire(uint64_t ctx)
{
    for (size_t i = 0; i < ctp_npend; i++)
        if (ctp_pend[i].p.ctx == ctx)
            CTP_REAL(cuEventSynchronize)(ctp_pend[i].p.ev1);
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next) {
        ctp_gpu_stash *s = t->dead ? NULL : t->gpu;
        if (!s)
            continue;
        /* Take every entry (the owner may be taking one: whoever moves the tail owns it),
         * then put back those of other contexts. */
        uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire), n = 0;
        static CUevent keep[CTP_GPU_STASH]; /* flushes are serialized; app stacks may be small */
        static uint64_t kctx[CTP_GPU_STASH];
        do {
            n = 0;
            for (uint64_t i = tail; i != head; i++) {
                keep[n] = s->ev[i & (CTP_GPU_STASH - 1)];
                kctx[n++] = s->ctx[i & (CTP_GPU_STASH - 1)];
            }
        } while (!atomic_compare_exchange_strong(&s->tail, &tail, head));
        for (uint64_t i = 0; i < n; i++)
            ctp_give_back(t, keep[i], kctx[i] == ctx ? 0 : kctx[i]);
    }
}

/* r into e; a full e goes out as a chunk (full()) first. */
static void ctp_gpu_put(ct_enc *e, const ct_rec *r, uint64_t *min_ts, void (*full)(void))
{
    int rc = ct_enc_rec(e, r);
    if (rc == CT_E_FULL) {
        full();
        rc = ct_enc_rec(e, r);
    }
    if (rc != 0)
        ctp_harvest_lost++;
    else if (r->ts < *min_ts)
        *min_ts = r->ts;
}

uint64_t ctp_gpu_harvest(ct_enc *e, int final, uint64_t *min_ts, uint64_t retire,
                        void (*full)(void))
{
    /* The tracer's queries must neither fail nor invalidate a capture the program runs in
     * another thread in CU_STREAM_CAPTURE_MODE_GLOBAL (where a query is a "potentially unsafe"
     * call): this thread is relaxed while it harvests, and restored after (it may be a
     * thread of the program's, at exit or in ctp_gpu_ctx_gone). */
    if (!ctp_real_handle())
        return UINT64_MAX; /* no real driver: no operation was timed */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    int exchanged = CTP_REAL(cuThreadExchangeStreamCaptureMode)(&mode) == CUDA_SUCCESS;
    if (retire)
        ctp_gpu_retire(retire);
    /* The trace ends (exit, exec, a fatal signal the writer handles): work still queued
     * completes on the GPU anyway (a context's teardown waits for it), so wait for it a
     * little rather than lose its timing. */
    uint64_t until = ctp_now() + CTP_FINAL_WAIT_NS;
    for (size_t i = 0; final && i < ctp_npend; i++) {
        while (CTP_REAL(cuEventQuery)(ctp_pend[i].p.ev1) == CUDA_ERROR_NOT_READY &&
               ctp_now() < until) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    uint64_t now = ctp_now(), oldest = UINT64_MAX;
    size_t keep = 0, nout = 0;
    ct_rec *out = ctp_npend ? malloc(ctp_npend * sizeof *out) : NULL;
    for (size_t i = 0; i < ctp_npend; i++) {
        ctp_pending *q = &ctp_pend[i];
        CUresult st = CTP_REAL(cuEventQuery)(q->p.ev1);
        if (st == CUDA_ERROR_NOT_READY && !final) {
            if (q->p.submit < oldest)
                oldest = q->p.submit;
            ctp_pend[keep++] = *q;
            continue;
        }
        ctp_anchor *a = st == CUDA_SUCCESS ? ctp_anchor_for(q->p.ctx, now) : NULL;
        float ms0, ms1;
        if (a && out && ctp_elapsed(&ms0, a->ev[a->set][a->best], q->p.ev0) == CUDA_SUCCESS &&
            ctp_elapsed(&ms1, q->p.ev0, q->p.ev1) == CUDA_SUCCESS) {
            ct_rec *r = &out[nout++];
            memset(r, 0, sizeof *r);
            r->type = CT_REC_GPU;
            r->u.gpu.start = (uint64_t)((int64_t)a->host + (int64_t)((double)ms0 * 1e6));
            r->ts = r->u.gpu.start + (uint64_t)((double)ms1 * 1e6);
            /* On an idle stream the start event completes at once; the operation itself
             * cannot start before the host submitted it. */
            if (r->u.gpu.start < q->p.submit && q->p.submit < r->ts)
                r->u.gpu.start = q->p.submit;
            if (q->p.done_by && q->p.done_by < r->ts)
                r->ts = q->p.done_by > r->u.gpu.start ? q->p.done_by : r->u.gpu.start;
            /* Nor end before it: an anchor's error may say so, and the writer's low-water
             * marks count on it (a pending operation holds them at its submission). */
            if (r->ts < q->p.submit)
                r->ts = q->p.submit;
            /* An end event that completed by the time its record returned found the stream
             * idle: the operation had ended earlier, at some unknown time. */
            if (q->p.done_by || r->ts <= q->p.ev1_host)
                r->u.gpu.flags = CT_GPU_END_BOUND;
            r->u.gpu.corr = q->p.corr;
            r->u.gpu.device = q->p.device;
            r->u.gpu.kind = q->p.kind;
            r->u.gpu.stream = q->p.stream;
        } else {
            /* Not ready at the end; or the events gone with a context destroyed unseen (the
             * simulation and the driver then call them invalid handles); or no time. */
            ctp_lost_op(q->owner, q->p.corr,
                       st == CUDA_ERROR_NOT_READY ? CT_GPU_LOST_RUNNING_AT_END
                       : st == CUDA_ERROR_INVALID_HANDLE || st == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
                               st == CUDA_ERROR_INVALID_CONTEXT
                           ? CT_GPU_LOST_CONTEXT_GONE
                           : CT_GPU_LOST_NO_TIME);
        }
        ctp_give_back(q->owner, q->p.ev0, q->p.ctx == retire ? 0 : q->p.ctx);
        ctp_give_back(q->owner, q->p.ev1, q->p.ctx == retire ? 0 : q->p.ctx);
    }
    ctp_npend = keep;
    qsort(out, nout, sizeof *out, ctp_gpu_cmp);
    for (size_t i = 0; i < nout; i++)
        ctp_gpu_put(e, &out[i], min_ts, full);
    free(out);
    for (size_t i = 0; i < ctp_nlost; i++) {
        ct_rec r = {.type = CT_REC_LOSS, .ts = now, .u.loss = ctp_lost_ops[i]};
        ctp_gpu_put(e, &r, min_ts, full);
    }
    ctp_nlost = 0;
    if (retire)
        ctp_anchor_drop(retire);
    if (exchanged)
        CTP_REAL(cuThreadExchangeStreamCaptureMode)(&mode);
    return oldest;
}

uint64_t ctp_gpu_lost(void)
{
    return ctp_harvest_lost;
}

uint64_t ctp_gpu_pending(void)
{
    return ctp_npend;
}

void ctp_gpu_thread_dead(ctp_thread *t)
{
    ctp_gpu_stash *s = t->gpu;
    if (!s)
        return;
    for (uint64_t i = atomic_load(&s->tail); i != atomic_load(&s->head); i++)
        CTP_REAL(cuEventDestroy_v2)(s->ev[i & (CTP_GPU_STASH - 1)]);
    t->gpu = NULL;
    free(s);
}

void ctp_gpu_reset(void)
{
    ctp_npend = 0;
    ctp_nlost = 0;
    ctp_nanchors = 0;
    ctp_harvest_lost = 0;
}
