/* GPU timing, the writer's side (see ct_harvest.h). */
#include "ct_harvest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ct_clock.h"
#include "ct_fns.h"
#include "ct_real.h"

typedef struct {
    ct_gpu_pend p;
    ct_thread *owner;
} ct_pending;

static ct_pending *ct_pend;
static size_t ct_npend, ct_pend_cap;
static uint64_t ct_harvest_lost; /* lost timings no per-operation LOSS record reports */

/* Operations whose timing is lost, written as LOSS records at the next harvest. */
static ct_rec_loss *ct_lost_ops;
static size_t ct_nlost, ct_lost_cap;

static void ct_lost_op(const ct_thread *owner, uint64_t corr, uint32_t why)
{
    if (ct_nlost == ct_lost_cap) {
        size_t cap = ct_lost_cap ? ct_lost_cap * 2 : 64;
        ct_rec_loss *v = realloc(ct_lost_ops, cap * sizeof *v);
        if (!v) {
            ct_harvest_lost++;
            return;
        }
        ct_lost_ops = v;
        ct_lost_cap = cap;
    }
    ct_lost_ops[ct_nlost++] = (ct_rec_loss){CT_LOSS_GPU_TIMING, 1, owner ? owner->tid : 0, corr,
                                            why};
}

#define CT_ANCHOR_SAMPLES 8
typedef struct {
    uint64_t ctx;
    CUevent ev[CT_ANCHOR_SAMPLES]; /* ev[best] is the anchor */
    unsigned best;
    CUstream stream;
    uint64_t host, made;
} ct_anchor;
static ct_anchor ct_anchors[64];
static unsigned ct_nanchors;

#define CT_ANCHOR_PERIOD_NS 1000000000ull
/* How long the end of a trace (exit, exec) waits for operations still running. */
#define CT_FINAL_WAIT_NS 250000000ull

static CUresult ct_elapsed(float *ms, CUevent a, CUevent b)
{
    if (ct_resolve(CT_FN_cuEventElapsedTime_v2))
        return CT_REAL(cuEventElapsedTime_v2)(ms, a, b);
    return CT_REAL(cuEventElapsedTime)(ms, a, b);
}

/* e back to its owner's stash, or destroyed (owner gone, stash full, or ctx 0: a context that
 * is being destroyed). */
static void ct_give_back(ct_thread *owner, CUevent e, uint64_t ctx)
{
    if (!e)
        return;
    ct_gpu_stash *s = owner && !owner->dead ? owner->gpu : NULL;
    if (s && ctx) {
        uint64_t head = atomic_load_explicit(&s->head, memory_order_relaxed);
        if (head - atomic_load_explicit(&s->tail, memory_order_acquire) < CT_GPU_STASH) {
            s->ev[head & (CT_GPU_STASH - 1)] = e;
            s->ctx[head & (CT_GPU_STASH - 1)] = ctx;
            atomic_store_explicit(&s->head, head + 1, memory_order_release);
            return;
        }
    }
    if (s) /* the owner may create another in its place */
        atomic_fetch_add_explicit(&s->destroyed, 1, memory_order_relaxed);
    CT_REAL(cuEventDestroy_v2)(e);
}

void ct_gpu_collect(ct_thread *owner, const ct_gpu_pend *p)
{
    if (p->kind == 0) {
        ct_give_back(owner, p->ev0, p->ctx);
        ct_give_back(owner, p->ev1, p->ctx);
        if (p->why)
            ct_lost_op(owner, p->corr, p->why);
        return;
    }
    if (ct_npend == ct_pend_cap) {
        size_t cap = ct_pend_cap ? ct_pend_cap * 2 : 1024;
        ct_pending *v = realloc(ct_pend, cap * sizeof *v);
        if (!v) {
            ct_lost_op(owner, p->corr, CT_GPU_LOST_NO_MEMORY);
            ct_give_back(owner, p->ev0, p->ctx);
            ct_give_back(owner, p->ev1, p->ctx);
            return;
        }
        ct_pend = v;
        ct_pend_cap = cap;
    }
    ct_pend[ct_npend++] = (ct_pending){*p, owner};
}

/* The context's anchor, renewed when older than CT_ANCHOR_PERIOD_NS; NULL if none can be had. */
static ct_anchor *ct_anchor_for(uint64_t ctx, uint64_t now)
{
    ct_anchor *a = NULL;
    for (unsigned i = 0; i < ct_nanchors; i++)
        if (ct_anchors[i].ctx == ctx)
            a = &ct_anchors[i];
    /* made may be later than now (an anchor renewed earlier in the same harvest) */
    if (a && now < a->made + CT_ANCHOR_PERIOD_NS)
        return a;
    if (!a) {
        if (ct_nanchors == sizeof ct_anchors / sizeof ct_anchors[0])
            return NULL;
        a = &ct_anchors[ct_nanchors++];
        memset(a, 0, sizeof *a);
        a->ctx = ctx;
    }
    CUcontext popped;
    if (CT_REAL(cuCtxPushCurrent_v2)((CUcontext)(uintptr_t)ctx) != CUDA_SUCCESS)
        return NULL;
    int ok = a->stream || CT_REAL(cuStreamCreate)(&a->stream, CU_STREAM_NON_BLOCKING) ==
                              CUDA_SUCCESS;
    /* The GPU stamps an event recorded on an idle stream somewhere inside the record call: the
     * call's middle is the estimate, off by at most half the call. A call can be slow (one
     * that wakes the driver's or the simulation's worker, a preempted host): of
     * CT_ANCHOR_SAMPLES records back to back (after the first, the worker is awake), each on its
     * own event, the shortest call's is the anchor. */
    uint64_t best = UINT64_MAX, t0s[CT_ANCHOR_SAMPLES], t1s[CT_ANCHOR_SAMPLES];
    unsigned n = 0;
    for (; ok && n < CT_ANCHOR_SAMPLES; n++) {
        ok = a->ev[n] || CT_REAL(cuEventCreate)(&a->ev[n], CU_EVENT_DEFAULT) == CUDA_SUCCESS;
        t0s[n] = ct_now();
        ok = ok && CT_REAL(cuEventRecord)(a->ev[n], a->stream) == CUDA_SUCCESS;
        t1s[n] = ct_now();
    }
    /* Polled, not cuEventSynchronize: a query is what the relaxed capture mode allows while
     * another thread captures (ct_gpu_harvest). */
    CUresult st = CUDA_ERROR_NOT_READY;
    while (ok && (st = CT_REAL(cuEventQuery)(a->ev[n - 1])) == CUDA_ERROR_NOT_READY)
        ;
    ok = ok && st == CUDA_SUCCESS;
    for (unsigned i = 0; ok && i < n; i++)
        if (t1s[i] - t0s[i] < best) {
            best = t1s[i] - t0s[i];
            a->best = i;
            a->host = t0s[i] + best / 2;
            a->made = t1s[i];
        }
    CT_REAL(cuCtxPopCurrent_v2)(&popped);
    return ok ? a : NULL;
}

static void ct_anchor_drop(uint64_t ctx)
{
    for (unsigned i = 0; i < ct_nanchors; i++)
        if (ct_anchors[i].ctx == ctx) {
            for (unsigned k = 0; k < CT_ANCHOR_SAMPLES; k++)
                if (ct_anchors[i].ev[k])
                    CT_REAL(cuEventDestroy_v2)(ct_anchors[i].ev[k]);
            if (ct_anchors[i].stream)
                CT_REAL(cuStreamDestroy_v2)(ct_anchors[i].stream);
            ct_anchors[i] = ct_anchors[--ct_nanchors];
            return;
        }
}

static int ct_gpu_cmp(const void *x, const void *y)
{
    uint64_t a = ((const ct_rec *)x)->ts, b = ((const ct_rec *)y)->ts;
    return a < b ? -1 : a > b;
}

/* Everything of context ctx, which is about to be destroyed, before its events go with it:
 * waits for its timed operations (the destruction waits for them too), so that the harvest
 * that follows converts them; destroys its events in every stash. (Its anchor goes after the
 * harvest, ct_anchor_drop.) */
static void ct_gpu_retire(uint64_t ctx)
{
    for (size_t i = 0; i < ct_npend; i++)
        if (ct_pend[i].p.ctx == ctx)
            CT_REAL(cuEventSynchronize)(ct_pend[i].p.ev1);
    for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
        ct_gpu_stash *s = t->dead ? NULL : t->gpu;
        if (!s)
            continue;
        /* Take every entry (the owner may be taking one: whoever moves the tail owns it),
         * then put back those of other contexts. */
        uint64_t head = atomic_load_explicit(&s->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire), n = 0;
        static CUevent keep[CT_GPU_STASH]; /* flushes are serialized; app stacks may be small */
        static uint64_t kctx[CT_GPU_STASH];
        do {
            n = 0;
            for (uint64_t i = tail; i != head; i++) {
                keep[n] = s->ev[i & (CT_GPU_STASH - 1)];
                kctx[n++] = s->ctx[i & (CT_GPU_STASH - 1)];
            }
        } while (!atomic_compare_exchange_strong(&s->tail, &tail, head));
        for (uint64_t i = 0; i < n; i++)
            ct_give_back(t, keep[i], kctx[i] == ctx ? 0 : kctx[i]);
    }
}

/* r into e; a full e goes out as a chunk (full()) first. */
static void ct_gpu_put(ct_enc *e, const ct_rec *r, uint64_t *min_ts, void (*full)(void))
{
    int rc = ct_enc_rec(e, r);
    if (rc == CT_E_FULL) {
        full();
        rc = ct_enc_rec(e, r);
    }
    if (rc != 0)
        ct_harvest_lost++;
    else if (r->ts < *min_ts)
        *min_ts = r->ts;
}

uint64_t ct_gpu_harvest(ct_enc *e, int final, uint64_t *min_ts, uint64_t retire,
                        void (*full)(void))
{
    /* The tracer's queries must neither fail nor invalidate a capture the program runs in
     * another thread in CU_STREAM_CAPTURE_MODE_GLOBAL (where a query is a "potentially unsafe"
     * call): this thread is relaxed while it harvests, and restored after (it may be a
     * thread of the program's, at exit or in ct_gpu_ctx_gone). */
    if (!ct_real_handle())
        return UINT64_MAX; /* no real driver: no operation was timed */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    int exchanged = CT_REAL(cuThreadExchangeStreamCaptureMode)(&mode) == CUDA_SUCCESS;
    if (retire)
        ct_gpu_retire(retire);
    /* The trace ends (exit, exec, a fatal signal the writer handles): work still queued
     * completes on the GPU anyway (a context's teardown waits for it), so wait for it a
     * little rather than lose its timing. */
    uint64_t until = ct_now() + CT_FINAL_WAIT_NS;
    for (size_t i = 0; final && i < ct_npend; i++) {
        while (CT_REAL(cuEventQuery)(ct_pend[i].p.ev1) == CUDA_ERROR_NOT_READY &&
               ct_now() < until) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    uint64_t now = ct_now(), oldest = UINT64_MAX;
    size_t keep = 0, nout = 0;
    ct_rec *out = ct_npend ? malloc(ct_npend * sizeof *out) : NULL;
    for (size_t i = 0; i < ct_npend; i++) {
        ct_pending *q = &ct_pend[i];
        CUresult st = CT_REAL(cuEventQuery)(q->p.ev1);
        if (st == CUDA_ERROR_NOT_READY && !final) {
            if (q->p.submit < oldest)
                oldest = q->p.submit;
            ct_pend[keep++] = *q;
            continue;
        }
        ct_anchor *a = st == CUDA_SUCCESS ? ct_anchor_for(q->p.ctx, now) : NULL;
        float ms0, ms1;
        if (a && out && ct_elapsed(&ms0, a->ev[a->best], q->p.ev0) == CUDA_SUCCESS &&
            ct_elapsed(&ms1, q->p.ev0, q->p.ev1) == CUDA_SUCCESS) {
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
            ct_lost_op(q->owner, q->p.corr,
                       st == CUDA_ERROR_NOT_READY ? CT_GPU_LOST_RUNNING_AT_END
                       : st == CUDA_ERROR_INVALID_HANDLE || st == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
                               st == CUDA_ERROR_INVALID_CONTEXT
                           ? CT_GPU_LOST_CONTEXT_GONE
                           : CT_GPU_LOST_NO_TIME);
        }
        ct_give_back(q->owner, q->p.ev0, q->p.ctx == retire ? 0 : q->p.ctx);
        ct_give_back(q->owner, q->p.ev1, q->p.ctx == retire ? 0 : q->p.ctx);
    }
    ct_npend = keep;
    qsort(out, nout, sizeof *out, ct_gpu_cmp);
    for (size_t i = 0; i < nout; i++)
        ct_gpu_put(e, &out[i], min_ts, full);
    free(out);
    for (size_t i = 0; i < ct_nlost; i++) {
        ct_rec r = {.type = CT_REC_LOSS, .ts = now, .u.loss = ct_lost_ops[i]};
        ct_gpu_put(e, &r, min_ts, full);
    }
    ct_nlost = 0;
    if (retire)
        ct_anchor_drop(retire);
    if (exchanged)
        CT_REAL(cuThreadExchangeStreamCaptureMode)(&mode);
    return oldest;
}

uint64_t ct_gpu_lost(void)
{
    return ct_harvest_lost;
}

uint64_t ct_gpu_pending(void)
{
    return ct_npend;
}

void ct_gpu_thread_dead(ct_thread *t)
{
    ct_gpu_stash *s = t->gpu;
    if (!s)
        return;
    for (uint64_t i = atomic_load(&s->tail); i != atomic_load(&s->head); i++)
        CT_REAL(cuEventDestroy_v2)(s->ev[i & (CT_GPU_STASH - 1)]);
    t->gpu = NULL;
    free(s);
}

void ct_gpu_reset(void)
{
    ct_npend = 0;
    ct_nlost = 0;
    ct_nanchors = 0;
    ct_harvest_lost = 0;
}
