/* Events: create, record, query, synchronize, elapsed time, destroy. Apart from fc_stream.c
 * because an event is its own object over the time engine (fc_exec.c), as a stream is. */
#define _GNU_SOURCE
#include "fc_graph.h"

#include <stdlib.h>
/* ---- events -------------------------------------------------------------------------- */

int fc_event_valid(CUevent e)
{
    return e && e->magic == FC_EVENT_MAGIC && atomic_load(&e->ctx->alive);
}

void fc_event_unref(struct CUevent_st *e)
{
    if (atomic_fetch_sub(&e->refs, 1) == 1) {
        if (e->s)
            fc_stream_unref(e->s);
        fc_nodeset_free(&e->cap_deps);
        pthread_mutex_destroy(&e->m);
        e->magic = 0;
        free(e);
    }
}

FC_EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    FC_ENTER("cuEventCreate");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!phEvent || (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
                                         CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = FC_EVENT_MAGIC;
    e->ctx = c;
    e->flags = Flags;
    atomic_store(&e->refs, 1);
    pthread_mutex_init(&e->m, NULL);
    *phEvent = e;
    return CUDA_SUCCESS;
}

static CUresult fc_event_record(CUevent ev, CUstream h, unsigned flags, int pt)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_event_valid(ev))
        return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (s->ctx != ev->ctx)
        return CUDA_ERROR_INVALID_HANDLE;
    if ((r = fc_capture_legacy_check(s)) != CUDA_SUCCESS)
        return r;
    if (fc_capture_event_record(s, ev, flags))
        return CUDA_SUCCESS;
    fc_event_record_on(s, ev);
    return CUDA_SUCCESS;
}

void fc_event_record_on(fc_stream *s, CUevent ev)
{
    fc_op *op = fc_op_new(FC_OP_RECORD);
    atomic_fetch_add(&ev->refs, 1);
    op->u.record.ev = ev;
    pthread_mutex_lock(&ev->m);
    /* Holding the event lock across submission keeps (gen, stream, seq) consistent for
     * concurrent cuStreamWaitEvent and cuEventSynchronize callers. */
    op->u.record.gen = ++ev->gen;
    ev->captured = 0;
    if (ev->s != s) {
        fc_stream_ref(s);
        if (ev->s)
            fc_stream_unref(ev->s);
        ev->s = s;
    }
    if (fc_g.instant) {
        ev->seq = atomic_load(&s->submitted) + 1;
        pthread_mutex_unlock(&ev->m);
        fc_submit(s, op); /* completes inline, taking the lock itself */
        return;
    }
    ev->seq = fc_submit(s, op);
    pthread_mutex_unlock(&ev->m);
}

FC_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    FC_ENTER("cuEventRecord");
    return fc_event_record(hEvent, hStream, 0, 0);
}

FC_EXPORT CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    FC_ENTER("cuEventRecord_ptsz");
    return fc_event_record(hEvent, hStream, 0, 1);
}

FC_EXPORT CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream,
                                                  unsigned int flags)
{
    FC_ENTER("cuEventRecordWithFlags");
    return fc_event_record(hEvent, hStream, flags, 0);
}

FC_EXPORT CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream,
                                                       unsigned int flags)
{
    FC_ENTER("cuEventRecordWithFlags_ptsz");
    return fc_event_record(hEvent, hStream, flags, 1);
}

static int fc_event_done(CUevent e)
{
    pthread_mutex_lock(&e->m);
    int done = atomic_load(&e->done_gen) >= e->gen;
    pthread_mutex_unlock(&e->m);
    return done;
}

/* Querying or waiting for an event: a captured one, or any during a conflicting capture
 * (fc_graph.c), fails. */
static CUresult fc_event_capture_check(CUevent e)
{
    pthread_mutex_lock(&e->m);
    int captured = e->captured;
    fc_stream *s = e->s;
    pthread_mutex_unlock(&e->m);
    if (captured) {
        fc_capture_event_used(s);
        return CUDA_ERROR_CAPTURED_EVENT;
    }
    return fc_capture_unsafe();
}

FC_EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    FC_ENTER_INIT("cuEventQuery");
    if (!fc_event_valid(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_event_capture_check(hEvent);
    if (r != CUDA_SUCCESS)
        return r;
    return fc_event_done(hEvent) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FC_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    FC_ENTER_INIT("cuEventSynchronize");
    if (!fc_event_valid(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult cr = fc_event_capture_check(hEvent);
    if (cr != CUDA_SUCCESS)
        return cr;
    pthread_mutex_lock(&hEvent->m);
    fc_stream *s = hEvent->s;
    uint64_t seq = hEvent->seq;
    if (s)
        fc_stream_ref(s);
    pthread_mutex_unlock(&hEvent->m);
    if (s) {
        fc_stream_wait(s, seq);
        fc_stream_unref(s);
    }
    return CUDA_SUCCESS;
}

static CUresult fc_elapsed(float *ms, CUevent a, CUevent b)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_event_valid(a) || !fc_event_valid(b))
        return CUDA_ERROR_INVALID_HANDLE;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&a->m);
    uint64_t ga = a->gen;
    int64_t ta = a->time_ns;
    pthread_mutex_unlock(&a->m);
    pthread_mutex_lock(&b->m);
    uint64_t gb = b->gen;
    int64_t tb = b->time_ns;
    pthread_mutex_unlock(&b->m);
    if (!ga || !gb)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!fc_event_done(a) || !fc_event_done(b))
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)(tb - ta) / 1e6);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    FC_ENTER("cuEventElapsedTime");
    return fc_elapsed(pMilliseconds, hStart, hEnd);
}

FC_EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    FC_ENTER("cuEventElapsedTime_v2");
    return fc_elapsed(pMilliseconds, hStart, hEnd);
}

static CUresult fc_event_destroy(CUevent e)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_event_valid(e))
        return CUDA_ERROR_INVALID_HANDLE;
    /* A pending record keeps its own reference; the event is freed when it completes. */
    e->magic = 0x0dead0e7u;
    fc_event_unref(e);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    FC_ENTER("cuEventDestroy");
    return fc_event_destroy(hEvent);
}

FC_EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
    FC_ENTER("cuEventDestroy_v2");
    return fc_event_destroy(hEvent);
}
