/* Contexts: the per-thread context stack, cuCtx*, limits and primary contexts. Apart from
 * fc_core.c because a context's life (creation, destruction, reset, release of the last
 * reference) is one job and process setup, errors and cuGetProcAddress others. */
#define _GNU_SOURCE
#include "fc.h"

#include <stdlib.h>
#include <string.h>

/* ---- contexts ------------------------------------------------------------------------ */

#define FC_CTX_STACK 32
static __thread fc_ctx *fc_ctx_stack[FC_CTX_STACK];
static __thread int fc_ctx_depth;

fc_ctx *fc_ctx_current(void)
{
    return fc_ctx_depth ? fc_ctx_stack[fc_ctx_depth - 1] : NULL;
}

CUresult fc_ctx_get(fc_ctx **out)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_ctx *c = fc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!atomic_load(&c->alive))
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *out = c;
    return CUDA_SUCCESS;
}

fc_device *fc_ctx_dev(fc_ctx *c)
{
    return &fc_devs[c->dev];
}

CUresult fc_check_device(CUdevice dev)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    return dev >= 0 && dev < fc_g.ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static fc_ctx *fc_ctx_new(int dev, unsigned flags, int primary)
{
    fc_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    static _Atomic unsigned long long ids = 1;
    c->magic = FC_CTX_MAGIC;
    c->id = atomic_fetch_add(&ids, 1);
    c->dev = dev;
    c->flags = flags;
    c->is_primary = primary;
    atomic_store(&c->alive, 1);
    pthread_mutex_init(&c->lock, NULL);
    pthread_key_create(&c->ptds_key, fc_stream_retire);
    pthread_mutex_init(&c->limits_lock, NULL);
    /* NVIDIA's defaults. */
    c->limits[CU_LIMIT_STACK_SIZE] = 1024;
    c->limits[CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20;
    c->limits[CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20;
    c->limits[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2;
    c->limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
    c->limits[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64;
    c->legacy = fc_stream_new(c, 0, 0, 1);
    return c;
}

int fc_ctx_valid(CUcontext c)
{
    return c && c->magic == FC_CTX_MAGIC;
}

static void fc_ctx_set_top(fc_ctx *c)
{
    if (fc_ctx_depth == 0) {
        if (c)
            fc_ctx_stack[fc_ctx_depth++] = c;
    } else if (c) {
        fc_ctx_stack[fc_ctx_depth - 1] = c;
    } else {
        fc_ctx_depth--;
    }
}

static CUresult fc_ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_ctx_depth == FC_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_ctx *c = fc_ctx_new(dev, flags, 0);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_ctx_stack[fc_ctx_depth++] = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate");
    return fc_ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate_v2");
    return fc_ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                          int numParams, unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate_v3");
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                          unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate_v4");
    if (ctxCreateParams && (ctxCreateParams->numExecAffinityParams || ctxCreateParams->cigParams))
        return CUDA_ERROR_NOT_SUPPORTED;
    return fc_ctx_create(pctx, flags, dev);
}

static CUresult fc_ctx_destroy(CUcontext ctx)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_ctx_valid(ctx) || ctx->is_primary || !atomic_load(&ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx_sync(ctx);
    fc_cls_destroy(ctx);
    atomic_store(&ctx->alive, 0);
    /* Its streams go with it (their worker threads end). */
    for (;;) {
        pthread_mutex_lock(&ctx->lock);
        fc_stream *s = ctx->streams;
        pthread_mutex_unlock(&ctx->lock);
        if (!s)
            break;
        fc_stream_retire(s);
    }
    ctx->legacy = NULL;
    /* Destroying a context pops it from this thread's stack if current; the object stays
     * allocated so stale handles are detected, not dereferenced after free. */
    for (int i = fc_ctx_depth - 1; i >= 0; i--)
        if (fc_ctx_stack[i] == ctx) {
            memmove(&fc_ctx_stack[i], &fc_ctx_stack[i + 1],
                    (size_t)(fc_ctx_depth - i - 1) * sizeof(fc_ctx *));
            fc_ctx_depth--;
        }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    FC_ENTER("cuCtxDestroy");
    return fc_ctx_destroy(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    FC_ENTER("cuCtxDestroy_v2");
    return fc_ctx_destroy(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    FC_ENTER_INIT("cuCtxSetCurrent");
    if (ctx && (!fc_ctx_valid(ctx) || !atomic_load(&ctx->alive)))
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx_set_top(ctx);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    FC_ENTER_INIT("cuCtxGetCurrent");
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fc_ctx_current();
    return CUDA_SUCCESS;
}

static CUresult fc_ctx_push(CUcontext ctx)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_ctx_valid(ctx) || !atomic_load(&ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fc_ctx_depth == FC_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_ctx_stack[fc_ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

static CUresult fc_ctx_pop(CUcontext *pctx)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (fc_ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx *c = fc_ctx_stack[--fc_ctx_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    FC_ENTER("cuCtxPushCurrent");
    return fc_ctx_push(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    FC_ENTER("cuCtxPushCurrent_v2");
    return fc_ctx_push(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    FC_ENTER("cuCtxPopCurrent");
    return fc_ctx_pop(pctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FC_ENTER("cuCtxPopCurrent_v2");
    return fc_ctx_pop(pctx);
}

static CUresult fc_ctx_or_current(CUcontext ctx, fc_ctx **out)
{
    if (!ctx)
        return fc_ctx_get(out);
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_ctx_valid(ctx) || !atomic_load(&ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = ctx;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    FC_ENTER("cuCtxSynchronize");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r == CUDA_SUCCESS && (r = fc_capture_unsafe()) == CUDA_SUCCESS)
        fc_ctx_sync(c);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
    FC_ENTER("cuCtxSynchronize_v2");
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r == CUDA_SUCCESS && (r = fc_capture_unsafe()) == CUDA_SUCCESS)
        fc_ctx_sync(c);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    FC_ENTER("cuCtxGetDevice");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    FC_ENTER("cuCtxGetDevice_v2");
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    FC_ENTER("cuCtxGetId");
    return fc_ctx_id(ctx, ctxId);
}

CUresult fc_ctx_id(CUcontext ctx, unsigned long long *ctxId)
{
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    *ctxId = c->id;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
    FC_ENTER("cuCtxGetFlags");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    FC_ENTER("cuCtxGetApiVersion");
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    FC_ENTER("cuCtxGetStreamPriorityRange");
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    return CUDA_SUCCESS;
}

static CUresult fc_limit(CUlimit limit, size_t *value, int set)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if ((unsigned)limit >= CU_LIMIT_MAX || (!set && !value))
        return CUDA_ERROR_INVALID_VALUE;
    if (limit == CU_LIMIT_PERSISTING_L2_CACHE_SIZE && set) {
        int max;
        fc_device_attribute(&max, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE,
                            fc_ctx_dev(c)->d);
        if (*value > (size_t)max)
            return CUDA_ERROR_INVALID_VALUE;
    }
    /* An ordinary context is not CIG-enabled: cuBLASLt queries this, and on any answer but
     * success and 0 skips its device set-up while cublasCreate still succeeds. Query-only. */
    if (limit == CU_LIMIT_CIG_ENABLED && !set) {
        *value = 0;
        return CUDA_SUCCESS;
    }
    if (limit == CU_LIMIT_SHMEM_SIZE || limit == CU_LIMIT_CIG_ENABLED ||
        limit == CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_mutex_lock(&c->limits_lock);
    if (set)
        c->limits[limit] = *value;
    else
        *value = c->limits[limit];
    pthread_mutex_unlock(&c->limits_lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
    FC_ENTER("cuCtxSetLimit");
    return fc_limit(limit, &value, 1);
}

FC_EXPORT CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    FC_ENTER("cuCtxGetLimit");
    return fc_limit(limit, pvalue, 0);
}

/* ---- primary contexts ---------------------------------------------------------------- */

fc_ctx *fc_primary_handle(CUdevice dev)
{
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (!d->primary)
        d->primary = fc_ctx_new(dev, d->primary_flags, 1);
    else
        atomic_store(&d->primary->alive, 1);
    fc_ctx *c = d->primary;
    pthread_mutex_unlock(&d->lock);
    return c;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxRetain");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (!d->primary)
        d->primary = fc_ctx_new(dev, d->primary_flags, 1);
    if (!d->primary) {
        pthread_mutex_unlock(&d->lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    atomic_store(&d->primary->alive, 1);
    d->primary->flags = d->primary_flags;
    d->primary_refs++;
    *pctx = d->primary;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

static CUresult fc_primary_release(CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (d->primary_refs == 0) {
        pthread_mutex_unlock(&d->lock);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    fc_ctx *gone = NULL;
    if (--d->primary_refs == 0) {
        fc_ctx_sync(d->primary);
        /* Inactive, but the same handle comes back on the next retain, as on NVIDIA's. */
        atomic_store(&d->primary->alive, 0);
        gone = d->primary;
    }
    pthread_mutex_unlock(&d->lock);
    if (gone) /* unlocked: the destructors may call the driver */
        fc_cls_destroy(gone);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxRelease");
    return fc_primary_release(dev);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxRelease_v2");
    return fc_primary_release(dev);
}

static CUresult fc_primary_set_flags(CUdevice dev, unsigned flags)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags & ~(unsigned)(CU_CTX_SCHED_MASK | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_COREDUMP_ENABLE |
                            CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS | CU_CTX_MAP_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    d->primary_flags = flags;
    if (d->primary)
        d->primary->flags = flags;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    FC_ENTER("cuDevicePrimaryCtxSetFlags");
    return fc_primary_set_flags(dev, flags);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    FC_ENTER("cuDevicePrimaryCtxSetFlags_v2");
    return fc_primary_set_flags(dev, flags);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    FC_ENTER("cuDevicePrimaryCtxGetState");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    *flags = d->primary_flags;
    *active = d->primary_refs > 0;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

static CUresult fc_primary_reset(CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (d->primary) {
        fc_ctx_sync(d->primary);
        atomic_store(&d->primary->alive, 0);
    }
    d->primary_refs = 0;
    d->primary_flags = 0;
    fc_ctx *gone = d->primary;
    pthread_mutex_unlock(&d->lock);
    if (gone)
        fc_cls_destroy(gone);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxReset");
    return fc_primary_reset(dev);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxReset_v2");
    return fc_primary_reset(dev);
}

/* Persisting L2 lines are not simulated (an access policy window is only read back), so there
 * is nothing to demote: the call succeeds where a context is current, as on a device without
 * persisting lines in use. */
FC_EXPORT CUresult CUDAAPI cuCtxResetPersistingL2Cache(void)
{
    FC_ENTER("cuCtxResetPersistingL2Cache");
    fc_ctx *c;
    return fc_ctx_get(&c);
}
