/* The stream API: create, destroy, synchronize, query, wait for an event, properties, host
 * functions and callbacks. Apart from the time engine (fc_exec.c) that runs the streams' work,
 * because the API only checks arguments and submits ops to it. */
#define _GNU_SOURCE
#include "fc_graph.h"

#include <stdlib.h>
#include <string.h>

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

/* No context here comes from a green context (cuCtxFromGreenCtx is not simulated), so no
 * stream has one: NULL, as for a stream made in an ordinary context. cuDNN 9's LSTM asks, and
 * failed with CUDNN_STATUS_INTERNAL_ERROR on CUDA_ERROR_NOT_SUPPORTED. */
FC_EXPORT CUresult CUDAAPI cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx *phCtx)
{
    FC_ENTER("cuStreamGetGreenCtx");
    CUcontext c;
    CUresult r = fc_stream_get_ctx(hStream, &c, phCtx, 0);
    return r == CUDA_SUCCESS && !phCtx ? CUDA_ERROR_INVALID_VALUE : r;
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

/* ---- stream attributes ------------------------------------------------------------------- */

/* The slot of a launch attribute cuda.h marks "valid for streams" (priority aside: the stream's
 * own), -1 for any other. Nothing in the simulation runs differently for them: a program reads
 * back what it set, as on a device where they are hints. */
static int fc_attr_slot(CUstreamAttrID a)
{
    switch (a) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: return 0;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY: return 1;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: return 2;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN: return 3;
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING: return 4;
    default: return -1;
    }
}

/* The stream and the attribute's slot of a get or set; an error for a bad handle, no value, or
 * an attribute that is not a stream's. */
static CUresult fc_stream_attr(CUstream h, int pt, CUstreamAttrID a, const void *v, fc_stream **s,
                               int *k)
{
    CUresult r = fc_stream_resolve(h, pt, s);
    if (r != CUDA_SUCCESS)
        return r;
    *k = fc_attr_slot(a);
    return !v || (*k < 0 && a != CU_LAUNCH_ATTRIBUTE_PRIORITY) ? CUDA_ERROR_INVALID_VALUE
                                                               : CUDA_SUCCESS;
}

static CUresult fc_stream_get_attr(CUstream h, int pt, CUstreamAttrID a, CUstreamAttrValue *v)
{
    fc_stream *s;
    int k;
    CUresult r = fc_stream_attr(h, pt, a, v, &s, &k);
    if (r != CUDA_SUCCESS)
        return r;
    memset(v, 0, sizeof *v);
    if (a == CU_LAUNCH_ATTRIBUTE_PRIORITY)
        v->priority = s->priority;
    else if (s->attr_set & 1u << k)
        *v = s->attr[k];
    else if (a == CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY)
        v->syncPolicy = CU_SYNC_POLICY_AUTO;
    else if (a == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP)
        v->memSyncDomainMap = (CUlaunchMemSyncDomainMap){.default_ = 0, .remote = 1};
    return CUDA_SUCCESS;
}

static CUresult fc_stream_set_attr(CUstream h, int pt, CUstreamAttrID a, const CUstreamAttrValue *v)
{
    fc_stream *s;
    int k;
    CUresult r = fc_stream_attr(h, pt, a, v, &s, &k);
    if (r != CUDA_SUCCESS)
        return r;
    if (a == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW) {
        const CUaccessPolicyWindow *w = &v->accessPolicyWindow;
        if (!(w->hitRatio >= 0 && w->hitRatio <= 1) || w->hitProp > CU_ACCESS_PROPERTY_PERSISTING ||
            w->missProp > CU_ACCESS_PROPERTY_PERSISTING || w->missProp == CU_ACCESS_PROPERTY_PERSISTING)
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (a == CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY &&
        (v->syncPolicy < CU_SYNC_POLICY_AUTO || v->syncPolicy > CU_SYNC_POLICY_BLOCKING_SYNC))
        return CUDA_ERROR_INVALID_VALUE;
    if (a == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
        /* clamped to the device's range, as at creation */
        s->priority = v->priority > 0 ? 0 : v->priority < -5 ? -5 : v->priority;
        return CUDA_SUCCESS;
    }
    pthread_mutex_lock(&s->m);
    s->attr[k] = *v;
    s->attr_set |= 1u << k;
    pthread_mutex_unlock(&s->m);
    return CUDA_SUCCESS;
}

static CUresult fc_stream_copy_attrs(CUstream dst, CUstream src, int pt)
{
    fc_stream *d, *s;
    CUresult r = fc_stream_resolve(dst, pt, &d);
    if (r == CUDA_SUCCESS)
        r = fc_stream_resolve(src, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (d->ctx != s->ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (d == s)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&s->m);
    CUstreamAttrValue attr[5];
    memcpy(attr, s->attr, sizeof attr);
    unsigned set = s->attr_set;
    int prio = s->priority;
    pthread_mutex_unlock(&s->m);
    pthread_mutex_lock(&d->m);
    memcpy(d->attr, attr, sizeof attr);
    d->attr_set = set;
    d->priority = prio;
    pthread_mutex_unlock(&d->m);
    return CUDA_SUCCESS;
}

FC_DEF(cuStreamGetAttribute, (CUstream h, CUstreamAttrID a, CUstreamAttrValue *v),
       fc_stream_get_attr(h, 0, a, v))
FC_DEF(cuStreamGetAttribute_ptsz, (CUstream h, CUstreamAttrID a, CUstreamAttrValue *v),
       fc_stream_get_attr(h, 1, a, v))
FC_DEF(cuStreamSetAttribute, (CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v),
       fc_stream_set_attr(h, 0, a, v))
FC_DEF(cuStreamSetAttribute_ptsz, (CUstream h, CUstreamAttrID a, const CUstreamAttrValue *v),
       fc_stream_set_attr(h, 1, a, v))
FC_DEF(cuStreamCopyAttributes, (CUstream dst, CUstream src), fc_stream_copy_attrs(dst, src, 0))
FC_DEF(cuStreamCopyAttributes_ptsz, (CUstream dst, CUstream src), fc_stream_copy_attrs(dst, src, 1))
