/* Stream capture status (the captures themselves are fc_graph.c's), and advisory calls on
 * managed memory and caches, which are validated and accepted. Programs (PyTorch's caching
 * allocator, for one) make these on hot paths and must not see errors from them. */
#include "fc_graph.h"

__thread CUstreamCaptureMode fc_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static CUresult fc_stream_capture_status(CUstream h, int pt, CUstreamCaptureStatus *status,
                                         cuuint64_t *id)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_capture_status(s, status, id);
}

FC_EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *st)
{
    FC_ENTER("cuStreamIsCapturing");
    return fc_stream_capture_status(hStream, 0, st, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *st)
{
    FC_ENTER("cuStreamIsCapturing_ptsz");
    return fc_stream_capture_status(hStream, 1, st, NULL);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *st,
                                                  cuuint64_t *id)
{
    FC_ENTER("cuStreamGetCaptureInfo");
    return fc_stream_capture_status(hStream, 0, st, id);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                                       CUstreamCaptureStatus *st, cuuint64_t *id)
{
    FC_ENTER("cuStreamGetCaptureInfo_ptsz");
    return fc_stream_capture_status(hStream, 1, st, id);
}

static CUresult fc_capture_info(CUstream h, int pt, CUstreamCaptureStatus *st, cuuint64_t *id,
                                CUgraph *graph, const CUgraphNode **deps,
                                const CUgraphEdgeData **edges, size_t *ndeps)
{
    CUresult r = fc_stream_capture_status(h, pt, st, id);
    fc_stream *s;
    if (r == CUDA_SUCCESS && (r = fc_stream_resolve(h, pt, &s)) == CUDA_SUCCESS)
        r = fc_capture_deps(s, graph, deps, edges, ndeps);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *st,
                                                     cuuint64_t *id, CUgraph *graph,
                                                     const CUgraphNode **deps, size_t *ndeps)
{
    FC_ENTER("cuStreamGetCaptureInfo_v2");
    return fc_capture_info(hStream, 0, st, id, graph, deps, NULL, ndeps);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                          CUstreamCaptureStatus *st,
                                                          cuuint64_t *id, CUgraph *graph,
                                                          const CUgraphNode **deps,
                                                          size_t *ndeps)
{
    FC_ENTER("cuStreamGetCaptureInfo_v2_ptsz");
    return fc_capture_info(hStream, 1, st, id, graph, deps, NULL, ndeps);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *st,
                                                     cuuint64_t *id, CUgraph *graph,
                                                     const CUgraphNode **deps,
                                                     const CUgraphEdgeData **edges,
                                                     size_t *ndeps)
{
    FC_ENTER("cuStreamGetCaptureInfo_v3");
    return fc_capture_info(hStream, 0, st, id, graph, deps, edges, ndeps);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                          CUstreamCaptureStatus *st,
                                                          cuuint64_t *id, CUgraph *graph,
                                                          const CUgraphNode **deps,
                                                          const CUgraphEdgeData **edges,
                                                          size_t *ndeps)
{
    FC_ENTER("cuStreamGetCaptureInfo_v3_ptsz");
    return fc_capture_info(hStream, 1, st, id, graph, deps, edges, ndeps);
}

FC_EXPORT CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    FC_ENTER_INIT("cuThreadExchangeStreamCaptureMode");
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = fc_capture_mode;
    fc_capture_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

/* ---- managed-memory advice and prefetch: validated, accepted, no cost ---------------- */

static CUresult fc_managed_range(CUdeviceptr p, size_t n)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_range r;
    if (!n || fc_mem_lookup((uintptr_t)p, &r) != 0 || r.kind != FC_MEM_MANAGED ||
        n > r.base + r.size - (uintptr_t)p)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult fc_prefetch(CUdeviceptr p, size_t n, CUstream h, int pt)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    return r != CUDA_SUCCESS ? r : fc_managed_range(p, n);
}

FC_EXPORT CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                              CUstream hStream)
{
    FC_ENTER("cuMemPrefetchAsync");
    (void)dstDevice;
    return fc_prefetch(devPtr, count, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count,
                                                   CUdevice dstDevice, CUstream hStream)
{
    FC_ENTER("cuMemPrefetchAsync_ptsz");
    (void)dstDevice;
    return fc_prefetch(devPtr, count, hStream, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                                                 CUmemLocation location, unsigned int flags,
                                                 CUstream hStream)
{
    FC_ENTER("cuMemPrefetchAsync_v2");
    (void)location;
    return flags ? CUDA_ERROR_INVALID_VALUE : fc_prefetch(devPtr, count, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
                                                      CUmemLocation location, unsigned int flags,
                                                      CUstream hStream)
{
    FC_ENTER("cuMemPrefetchAsync_v2_ptsz");
    (void)location;
    return flags ? CUDA_ERROR_INVALID_VALUE : fc_prefetch(devPtr, count, hStream, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                       CUdevice device)
{
    FC_ENTER("cuMemAdvise");
    (void)advice, (void)device;
    return fc_managed_range(devPtr, count);
}

FC_EXPORT CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                          CUmemLocation location)
{
    FC_ENTER("cuMemAdvise_v2");
    (void)advice, (void)location;
    return fc_managed_range(devPtr, count);
}

FC_EXPORT CUresult CUDAAPI cuPointerSetAttribute(const void *value, CUpointer_attribute attribute,
                                                 CUdeviceptr ptr)
{
    FC_ENTER_INIT("cuPointerSetAttribute");
    fc_range r;
    if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ||
        fc_mem_lookup((uintptr_t)ptr, &r) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS; /* every memory operation is already synchronous where it matters */
}

/* ---- cache preferences: accepted, they change nothing here --------------------------- */

static __thread CUfunc_cache fc_cache_config = CU_FUNC_CACHE_PREFER_NONE;

FC_EXPORT CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config)
{
    FC_ENTER("cuCtxSetCacheConfig");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if ((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    fc_cache_config = config;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
    FC_ENTER("cuCtxGetCacheConfig");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pconfig)
        return CUDA_ERROR_INVALID_VALUE;
    *pconfig = fc_cache_config;
    return CUDA_SUCCESS;
}
