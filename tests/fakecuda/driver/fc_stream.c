/* The stream API: create, destroy, synchronize, query, wait for an event, properties, host
 * functions and callbacks. Apart from the time engine (fc_exec.c) that runs the streams' work,
 * because the API only checks arguments and submits ops to it. */
#define _GNU_SOURCE
#include "fc_graph.h"

#include <stdlib.h>

/* ---- stream API ---------------------------------------------------------------------- */

static CUresult fc_stream_create(CUstream *ph, unsigned flags, int priority)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    /* Priorities outside [greatest, least] = [-5, 0] are clamped, as documented. */
    priority = priority > 0 ? 0 : priority < -5 ? -5 : priority;
    fc_stream *s = fc_stream_new(c, flags, priority, 0);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ph = s;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FC_ENTER("cuStreamCreate");
    return fc_stream_create(phStream, Flags, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                                      int priority)
{
    FC_ENTER("cuStreamCreateWithPriority");
    return fc_stream_create(phStream, flags, priority);
}

static CUresult fc_stream_destroy(CUstream h)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD || h->magic != FC_STREAM_MAGIC ||
        h->legacy || h->destroyed)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Pending work still completes (the worker drains the queue), as documented. */
    fc_stream_retire(h);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    FC_ENTER("cuStreamDestroy");
    return fc_stream_destroy(hStream);
}

FC_EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    FC_ENTER("cuStreamDestroy_v2");
    return fc_stream_destroy(hStream);
}

static CUresult fc_stream_sync(CUstream h, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r == CUDA_SUCCESS && (r = fc_capture_unsafe()) == CUDA_SUCCESS)
        fc_stream_wait(s, atomic_load(&s->submitted));
    return r;
}

FC_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    FC_ENTER("cuStreamSynchronize");
    return fc_stream_sync(hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
    FC_ENTER("cuStreamSynchronize_ptsz");
    return fc_stream_sync(hStream, 1);
}

static CUresult fc_stream_query(CUstream h, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS || (r = fc_capture_unsafe()) != CUDA_SUCCESS)
        return r;
    return atomic_load(&s->completed) >= atomic_load(&s->submitted) ? CUDA_SUCCESS
                                                                     : CUDA_ERROR_NOT_READY;
}

FC_EXPORT CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    FC_ENTER("cuStreamQuery");
    return fc_stream_query(hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
    FC_ENTER("cuStreamQuery_ptsz");
    return fc_stream_query(hStream, 1);
}

/* An event goes with its context, as on the card: handles of a destroyed context's events
 * are invalid. */
static CUresult fc_stream_wait_event(CUstream h, CUevent ev, unsigned flags, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_event_valid(ev))
        return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_capture_event_wait(s, ev, &r))
        return r;
    fc_stream_wait_event_on(s, ev);
    return CUDA_SUCCESS;
}

void fc_stream_wait_event_on(fc_stream *s, CUevent ev)
{
    if (fc_g.instant)
        return; /* every recorded event has already completed */
    fc_op *op = fc_op_new(FC_OP_WAIT);
    pthread_mutex_lock(&ev->m);
    if (ev->gen && ev->s)
        fc_op_add_dep(op, ev->s, ev->seq);
    pthread_mutex_unlock(&ev->m);
    if (op->ndeps == 0) { /* never recorded: nothing to wait for */
        fc_op_free(op);
        return;
    }
    fc_submit(s, op);
}

FC_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FC_ENTER("cuStreamWaitEvent");
    return fc_stream_wait_event(hStream, hEvent, Flags, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
                                                  unsigned int Flags)
{
    FC_ENTER("cuStreamWaitEvent_ptsz");
    return fc_stream_wait_event(hStream, hEvent, Flags, 1);
}

static CUresult fc_stream_get_ctx(CUstream h, CUcontext *pctx, CUgreenCtx *green, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = s->ctx;
    if (green)
        *green = NULL;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    FC_ENTER("cuStreamGetCtx");
    return fc_stream_get_ctx(hStream, pctx, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    FC_ENTER("cuStreamGetCtx_ptsz");
    return fc_stream_get_ctx(hStream, pctx, NULL, 1);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext *pctx, CUgreenCtx *pGreenCtx)
{
    FC_ENTER("cuStreamGetCtx_v2");
    return fc_stream_get_ctx(hStream, pctx, pGreenCtx, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pctx,
                                                  CUgreenCtx *pGreenCtx)
{
    FC_ENTER("cuStreamGetCtx_v2_ptsz");
    return fc_stream_get_ctx(hStream, pctx, pGreenCtx, 1);
}

/* One of the stream's properties, into the one non-NULL output. */
static CUresult fc_stream_info(CUstream h, int pt, unsigned *flags, int *prio,
                               unsigned long long *id, CUdevice *dev)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags && !prio && !id && !dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags)
        *flags = s->flags;
    if (prio)
        *prio = s->priority;
    if (id)
        *id = s->id;
    if (dev)
        *dev = s->ctx->dev;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    FC_ENTER("cuStreamGetFlags");
    return fc_stream_info(hStream, 0, flags, NULL, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
    FC_ENTER("cuStreamGetFlags_ptsz");
    return fc_stream_info(hStream, 1, flags, NULL, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
    FC_ENTER("cuStreamGetPriority");
    return fc_stream_info(hStream, 0, NULL, priority, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
    FC_ENTER("cuStreamGetPriority_ptsz");
    return fc_stream_info(hStream, 1, NULL, priority, NULL, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    FC_ENTER("cuStreamGetId");
    return fc_stream_info(hStream, 0, NULL, NULL, streamId, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
    FC_ENTER("cuStreamGetId_ptsz");
    return fc_stream_info(hStream, 1, NULL, NULL, streamId, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    FC_ENTER("cuStreamGetDevice");
    return fc_stream_info(hStream, 0, NULL, NULL, NULL, device);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
    FC_ENTER("cuStreamGetDevice_ptsz");
    return fc_stream_info(hStream, 1, NULL, NULL, NULL, device);
}

static CUresult fc_launch_host_func(CUstream h, CUhostFn fn, void *user, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    fc_op *op = fc_op_new(FC_OP_HOSTFN);
    op->u.hostfn.fn = fn;
    op->u.hostfn.user = user;
    fc_submit(s, op);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    FC_ENTER("cuLaunchHostFunc");
    return fc_launch_host_func(hStream, fn, userData, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    FC_ENTER("cuLaunchHostFunc_ptsz");
    return fc_launch_host_func(hStream, fn, userData, 1);
}

static CUresult fc_add_callback(CUstream h, CUstreamCallback fn, void *user, unsigned flags,
                               int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!fn || flags)
        return CUDA_ERROR_INVALID_VALUE;
    fc_op *op = fc_op_new(FC_OP_CALLBACK);
    op->u.callback.fn = fn;
    op->u.callback.h = h;
    op->u.callback.user = user;
    fc_submit(s, op);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                               void *userData, unsigned int flags)
{
    FC_ENTER("cuStreamAddCallback");
    return fc_add_callback(hStream, callback, userData, flags, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                                    void *userData, unsigned int flags)
{
    FC_ENTER("cuStreamAddCallback_ptsz");
    return fc_add_callback(hStream, callback, userData, flags, 1);
}
