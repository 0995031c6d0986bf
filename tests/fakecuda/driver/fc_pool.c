/* Stream-ordered allocation (cuMemAllocAsync, cuMemFreeAsync) and memory pools: only each
 * device's default pool exists. Apart from fc_mem.c because it orders allocations on streams;
 * the memory itself comes from fc_mem.c's device allocator. */
#define _GNU_SOURCE
#include "fc.h"

#include <stdlib.h>
#include <string.h>

/* ---- stream-ordered allocation and pools --------------------------------------------- */

#define FC_POOL_MAGIC 0x900190e1u

static struct CUmemPoolHandle_st *fc_default_pool(int dev)
{
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (!d->default_pool) {
        d->default_pool = calloc(1, sizeof *d->default_pool);
        if (!d->default_pool)
            fc_fatal("out of host memory for a memory pool");
        d->default_pool->magic = FC_POOL_MAGIC;
        d->default_pool->dev = dev;
        d->default_pool->reuse[0] = d->default_pool->reuse[1] = d->default_pool->reuse[2] = 1;
    }
    if (!d->current_pool)
        d->current_pool = d->default_pool;
    struct CUmemPoolHandle_st *p = d->default_pool;
    pthread_mutex_unlock(&d->lock);
    return p;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    FC_ENTER("cuDeviceGetDefaultMemPool");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    *pool_out = fc_default_pool(dev);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    FC_ENTER("cuDeviceGetMemPool");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    fc_default_pool(dev);
    pthread_mutex_lock(&fc_devs[dev].lock);
    *pool = fc_devs[dev].current_pool;
    pthread_mutex_unlock(&fc_devs[dev].lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    FC_ENTER("cuDeviceSetMemPool");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pool || pool->magic != FC_POOL_MAGIC || pool->dev != dev)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fc_devs[dev].lock);
    fc_devs[dev].current_pool = pool;
    pthread_mutex_unlock(&fc_devs[dev].lock);
    return CUDA_SUCCESS;
}

static CUresult fc_alloc_async(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                               CUstream h, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pool) {
        fc_default_pool(s->ctx->dev);
        pthread_mutex_lock(&fc_devs[s->ctx->dev].lock);
        pool = fc_devs[s->ctx->dev].current_pool;
        pthread_mutex_unlock(&fc_devs[s->ctx->dev].lock);
    } else if (pool->magic != FC_POOL_MAGIC) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_capture_alloc(s, bytesize, dptr, &r)) /* a graph's allocation node */
        return r;
    /* The allocation is usable by work queued after this call on the stream; taking the
     * address space now gives exactly that. */
    return fc_alloc_device(dptr, bytesize, FC_MEM_DEVICE, pool, s->ctx);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    FC_ENTER("cuMemAllocAsync");
    return fc_alloc_async(dptr, bytesize, NULL, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                CUstream hStream)
{
    FC_ENTER("cuMemAllocAsync_ptsz");
    return fc_alloc_async(dptr, bytesize, NULL, hStream, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
                                                   CUmemoryPool pool, CUstream hStream)
{
    FC_ENTER("cuMemAllocFromPoolAsync");
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_alloc_async(dptr, bytesize, pool, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                        CUmemoryPool pool, CUstream hStream)
{
    FC_ENTER("cuMemAllocFromPoolAsync_ptsz");
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_alloc_async(dptr, bytesize, pool, hStream, 1);
}

static CUresult fc_free_async(CUdeviceptr dptr, CUstream h, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    fc_range rg;
    if (fc_mem_lookup((uintptr_t)dptr, &rg) != 0 || rg.base != (uintptr_t)dptr ||
        rg.kind != FC_MEM_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    fc_op *op = fc_op_new(FC_OP_FREE);
    op->u.free.p = (uintptr_t)dptr;
    fc_submit(s, op);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    FC_ENTER("cuMemFreeAsync");
    return fc_free_async(dptr, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    FC_ENTER("cuMemFreeAsync_ptsz");
    return fc_free_async(dptr, hStream, 1);
}

static CUresult fc_pool_attr(CUmemoryPool pool, CUmemPool_attribute a, void *value, int set)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!pool || pool->magic != FC_POOL_MAGIC || !value)
        return CUDA_ERROR_INVALID_VALUE;
    switch (a) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: {
        int *slot = &pool->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
        if (set)
            *slot = *(int *)value != 0;
        else
            *(int *)value = *slot;
        return CUDA_SUCCESS;
    }
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        if (set)
            pool->release_threshold = *(cuuint64_t *)value;
        else
            *(cuuint64_t *)value = pool->release_threshold;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        if (set)
            return CUDA_ERROR_INVALID_VALUE;
        *(cuuint64_t *)value = atomic_load(&pool->used);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (set) { /* only a reset to zero is allowed; it restarts from the current use */
            if (*(cuuint64_t *)value != 0)
                return CUDA_ERROR_INVALID_VALUE;
            atomic_store(&pool->used_high, atomic_load(&pool->used));
        } else {
            *(cuuint64_t *)value = atomic_load(&pool->used_high);
        }
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

FC_EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                 void *value)
{
    FC_ENTER("cuMemPoolSetAttribute");
    return fc_pool_attr(pool, attr, value, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                 void *value)
{
    FC_ENTER("cuMemPoolGetAttribute");
    return fc_pool_attr(pool, attr, value, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    FC_ENTER("cuMemPoolTrimTo");
    (void)minBytesToKeep; /* freed blocks return to the device at once; nothing is cached */
    return pool && pool->magic == FC_POOL_MAGIC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
