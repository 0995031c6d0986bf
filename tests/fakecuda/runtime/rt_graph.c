/* Stream capture, graphs, extended and cooperative launches and occupancy in the simulated
 * runtime (contract in fc_rt.h). Each call goes to the driver entry point NVIDIA's runtime uses;
 * runtime and driver handles are the same objects (cudaGraph_t is CUgraph, cudaGraphNode_t
 * CUgraphNode, ...), the enums share their values and many parameter structs their layout (the
 * asserts below), so most of these calls only pass their arguments on: forward.txt lists those,
 * and gen.py writes them. What differs is translated here: a kernel is named by its host stub in
 * the runtime and by its CUkernel in the driver, copies describe their operands differently, and
 * nodes that touch memory belong to the current device's primary context. */
#include "fc_rt.h"

#include <stdint.h>
#include <string.h>

_Static_assert(sizeof(cudaGraphEdgeData) == sizeof(CUgraphEdgeData), "edge data layouts");
_Static_assert(sizeof(struct cudaHostNodeParams) == sizeof(CUDA_HOST_NODE_PARAMS), "host node layouts");
_Static_assert(sizeof(struct cudaMemsetParams) == sizeof(CUDA_MEMSET_NODE_PARAMS), "memset node layouts");
_Static_assert(sizeof(cudaGraphInstantiateParams) == sizeof(CUDA_GRAPH_INSTANTIATE_PARAMS), "instantiate layouts");
_Static_assert(sizeof(cudaGraphExecUpdateResultInfo) == sizeof(CUgraphExecUpdateResultInfo), "update layouts");
_Static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute), "launch attribute layouts");
_Static_assert(sizeof(struct cudaMemAllocNodeParams) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS), "alloc node layouts");
_Static_assert(sizeof(struct cudaExternalSemaphoreSignalNodeParams) == sizeof(CUDA_EXT_SEM_SIGNAL_NODE_PARAMS),
               "semaphore node layouts");
_Static_assert(sizeof(struct cudaExternalSemaphoreWaitNodeParams) == sizeof(CUDA_EXT_SEM_WAIT_NODE_PARAMS),
               "semaphore node layouts");

/* The current device's primary context, which memset and memcpy nodes name. */
static cudaError_t fc_context(CUcontext *ctx)
{
    cudaError_t e = fc_rt_ctx();
    return e == cudaSuccess ? fc_rt_primary(fc_rt_device(), ctx) : e;
}

/* The mode is per thread and needs no context; NVIDIA's runtime still initializes the driver. */
FC_EXPORT cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    cudaError_t e = fc_rt_init();
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuThreadExchangeStreamCaptureMode_v10010, (CUstreamCaptureMode *)mode));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *pHandle_out,
                                                                 cudaGraph_t graph, unsigned int defaultLaunchValue,
                                                                 unsigned int flags)
{
    CUcontext ctx;
    cudaError_t e = fc_context(&ctx);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuGraphConditionalHandleCreate_v12030, (CUgraphConditionalHandle *)pHandle_out,
                            graph, ctx, defaultLaunchValue, flags));
}

/* ---- memory nodes and the graph memory of a device ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                        const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                        void *dptr)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuGraphAddMemFreeNode_v11040, pGraphNode, graph, pDependencies, numDependencies,
                            (CUdeviceptr)(uintptr_t)dptr));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGraphMemTrim(int device)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    return e != cudaSuccess ? fc_rt_ret(e) : fc_rt_err(FC_DRV(fc_drv.cuDeviceGraphMemTrim_v11040, dev));
}

/* cudaGraphMemAttributeType and CUgraphMem_attribute share their values. */
static cudaError_t fc_graph_mem_attr(int device, enum cudaGraphMemAttributeType attr, void *value, int set)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUgraphMem_attribute a = (CUgraphMem_attribute)attr;
    return fc_rt_err(set ? FC_DRV(fc_drv.cuDeviceSetGraphMemAttribute_v11040, dev, a, value)
                         : FC_DRV(fc_drv.cuDeviceGetGraphMemAttribute_v11040, dev, a, value));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                                                               void *value)
{
    return fc_graph_mem_attr(device, attr, value, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr,
                                                               void *value)
{
    return fc_graph_mem_attr(device, attr, value, 1);
}

/* ---- kernel nodes: host stub <-> CUkernel ---- */

static cudaError_t fc_kernel_params(const struct cudaKernelNodeParams *p, CUDA_KERNEL_NODE_PARAMS *k)
{
    if (!p)
        return cudaErrorInvalidValue;
    CUkernel kern;
    cudaError_t e = fc_rt_kernel(p->func, &kern);
    if (e != cudaSuccess)
        return e;
    /* func, as cuLaunchKernel takes the CUkernel cast to CUfunction from this runtime. */
    *k = (CUDA_KERNEL_NODE_PARAMS){
        .func = (CUfunction)kern,
        .gridDimX = p->gridDim.x, .gridDimY = p->gridDim.y, .gridDimZ = p->gridDim.z,
        .blockDimX = p->blockDim.x, .blockDimY = p->blockDim.y, .blockDimZ = p->blockDim.z,
        .sharedMemBytes = p->sharedMemBytes, .kernelParams = p->kernelParams, .extra = p->extra,
    };
    return cudaSuccess;
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                       const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                       const struct cudaKernelNodeParams *pNodeParams)
{
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = fc_kernel_params(pNodeParams, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuGraphAddKernelNode_v12000, pGraphNode, graph, pDependencies, numDependencies, &k));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphKernelNodeGetParams(cudaGraphNode_t node,
                                                             struct cudaKernelNodeParams *pNodeParams)
{
    if (!pNodeParams)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUDA_KERNEL_NODE_PARAMS k;
    memset(&k, 0, sizeof k);
    CUresult r = FC_DRV(fc_drv.cuGraphKernelNodeGetParams_v12000, node, &k);
    if (r != CUDA_SUCCESS)
        return fc_rt_err(r);
    const void *stub = fc_rt_host_fun(k.kern ? k.kern : (CUkernel)k.func);
    *pNodeParams = (struct cudaKernelNodeParams){
        /* A kernel not loaded through this runtime (a captured driver launch) has no host stub:
         * NVIDIA's runtime then returns the driver's handle, as here. */
        .func = stub ? (void *)stub : (void *)(k.kern ? (void *)k.kern : (void *)k.func),
        .gridDim = {k.gridDimX, k.gridDimY, k.gridDimZ},
        .blockDim = {k.blockDimX, k.blockDimY, k.blockDimZ},
        .sharedMemBytes = k.sharedMemBytes, .kernelParams = k.kernelParams, .extra = k.extra,
    };
    return cudaSuccess;
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                             const struct cudaKernelNodeParams *pNodeParams)
{
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = fc_kernel_params(pNodeParams, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuGraphKernelNodeSetParams_v12000, node, &k));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                                 const struct cudaKernelNodeParams *pNodeParams)
{
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = fc_kernel_params(pNodeParams, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuGraphExecKernelNodeSetParams_v12000, hGraphExec, node, &k));
}

/* ---- memset nodes (same layout; the driver also takes the context) ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                       const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                       const struct cudaMemsetParams *pMemsetParams)
{
    CUcontext ctx;
    cudaError_t e = fc_context(&ctx);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuGraphAddMemsetNode_v10000, pGraphNode, graph, pDependencies, numDependencies,
                            (const CUDA_MEMSET_NODE_PARAMS *)pMemsetParams, ctx));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                                 const struct cudaMemsetParams *pNodeParams)
{
    CUcontext ctx;
    cudaError_t e = fc_context(&ctx);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuGraphExecMemsetNodeSetParams_v10020, hGraphExec, node,
                            (const CUDA_MEMSET_NODE_PARAMS *)pNodeParams, ctx));
}

/* ---- memcpy nodes: cudaMemcpy3DParms (or a 1D copy) as CUDA_MEMCPY3D ---- */

static cudaError_t fc_copy1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, CUDA_MEMCPY3D *m)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct cudaPitchedPtr){(void *)src, count, count, 1};
    p.dstPtr = (struct cudaPitchedPtr){dst, count, count, 1};
    p.extent = (struct cudaExtent){count, 1, 1};
    p.kind = kind;
    return fc_rt_copy3d(&p, m);
}

/* op: 0 add (node, graph, deps), 1 set on a node, 2 set on an executable graph's node. */
static cudaError_t fc_memcpy_node(int op, cudaGraphNode_t *out, cudaGraph_t g, cudaGraphExec_t exec,
                                  cudaGraphNode_t node, const cudaGraphNode_t *deps, size_t n, CUDA_MEMCPY3D *m,
                                  cudaError_t converted)
{
    if (converted != cudaSuccess)
        return fc_rt_ret(converted);
    CUcontext ctx;
    cudaError_t e = fc_context(&ctx);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUresult r = op == 0   ? FC_DRV(fc_drv.cuGraphAddMemcpyNode_v10000, out, g, deps, n, m, ctx)
                 : op == 1 ? FC_DRV(fc_drv.cuGraphMemcpyNodeSetParams_v10000, node, m)
                           : FC_DRV(fc_drv.cuGraphExecMemcpyNodeSetParams_v10020, exec, node, m, ctx);
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                       const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                       const struct cudaMemcpy3DParms *pCopyParams)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(0, pGraphNode, graph, NULL, NULL, pDependencies, numDependencies, &m,
                          fc_rt_copy3d(pCopyParams, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                         const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                         void *dst, const void *src, size_t count,
                                                         enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(0, pGraphNode, graph, NULL, NULL, pDependencies, numDependencies, &m,
                          fc_copy1d(dst, src, count, kind, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node,
                                                             const struct cudaMemcpy3DParms *pNodeParams)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(1, NULL, NULL, NULL, node, NULL, 0, &m, fc_rt_copy3d(pNodeParams, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src,
                                                               size_t count, enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(1, NULL, NULL, NULL, node, NULL, 0, &m, fc_copy1d(dst, src, count, kind, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                                 const struct cudaMemcpy3DParms *pNodeParams)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(2, NULL, NULL, hGraphExec, node, NULL, 0, &m, fc_rt_copy3d(pNodeParams, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                                   void *dst, const void *src, size_t count,
                                                                   enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(2, NULL, NULL, hGraphExec, node, NULL, 0, &m, fc_copy1d(dst, src, count, kind, &m));
}

/* A 1D copy to (to_symbol) or from a device variable, as CUDA_MEMCPY3D. */
static cudaError_t fc_copy_symbol(int to_symbol, void *mem, const void *symbol, size_t count, size_t offset,
                                  enum cudaMemcpyKind kind, CUDA_MEMCPY3D *m)
{
    void *var;
    cudaError_t e = fc_rt_ctx();
    if (e == cudaSuccess)
        e = fc_rt_symbol_span(to_symbol, symbol, count, offset, kind, &var);
    if (e != cudaSuccess)
        return e;
    return to_symbol ? fc_copy1d(var, mem, count, kind, m) : fc_copy1d(mem, var, count, kind, m);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                               const cudaGraphNode_t *pDependencies,
                                                               size_t numDependencies, const void *symbol,
                                                               const void *src, size_t count, size_t offset,
                                                               enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(0, pGraphNode, graph, NULL, NULL, pDependencies, numDependencies, &m,
                          fc_copy_symbol(1, (void *)src, symbol, count, offset, kind, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                                 const cudaGraphNode_t *pDependencies,
                                                                 size_t numDependencies, void *dst,
                                                                 const void *symbol, size_t count, size_t offset,
                                                                 enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(0, pGraphNode, graph, NULL, NULL, pDependencies, numDependencies, &m,
                          fc_copy_symbol(0, dst, symbol, count, offset, kind, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void *symbol,
                                                                     const void *src, size_t count, size_t offset,
                                                                     enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(1, NULL, NULL, NULL, node, NULL, 0, &m,
                          fc_copy_symbol(1, (void *)src, symbol, count, offset, kind, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void *dst,
                                                                       const void *symbol, size_t count,
                                                                       size_t offset, enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(1, NULL, NULL, NULL, node, NULL, 0, &m, fc_copy_symbol(0, dst, symbol, count, offset, kind, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t hGraphExec,
                                                                         cudaGraphNode_t node, const void *symbol,
                                                                         const void *src, size_t count,
                                                                         size_t offset, enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(2, NULL, NULL, hGraphExec, node, NULL, 0, &m,
                          fc_copy_symbol(1, (void *)src, symbol, count, offset, kind, &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t hGraphExec,
                                                                           cudaGraphNode_t node, void *dst,
                                                                           const void *symbol, size_t count,
                                                                           size_t offset, enum cudaMemcpyKind kind)
{
    CUDA_MEMCPY3D m;
    return fc_memcpy_node(2, NULL, NULL, hGraphExec, node, NULL, 0, &m,
                          fc_copy_symbol(0, dst, symbol, count, offset, kind, &m));
}

/* The driver's description back as cudaMemcpy3DParms: pitched pointers (a host side's address
 * is its host pointer, a device side's its device pointer), positions in bytes. */
FC_EXPORT cudaError_t CUDARTAPI cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, struct cudaMemcpy3DParms *pNodeParams)
{
    if (!pNodeParams)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUDA_MEMCPY3D m;
    CUresult r = FC_DRV(fc_drv.cuGraphMemcpyNodeGetParams_v10000, node, &m);
    if (r != CUDA_SUCCESS)
        return fc_rt_err(r);
    int src_host = m.srcMemoryType == CU_MEMORYTYPE_HOST, dst_host = m.dstMemoryType == CU_MEMORYTYPE_HOST;
    void *src = src_host ? (void *)m.srcHost : (void *)(uintptr_t)m.srcDevice;
    void *dst = dst_host ? m.dstHost : (void *)(uintptr_t)m.dstDevice;
    memset(pNodeParams, 0, sizeof *pNodeParams);
    pNodeParams->srcPtr = (struct cudaPitchedPtr){src, m.srcPitch, m.WidthInBytes, m.srcHeight};
    pNodeParams->dstPtr = (struct cudaPitchedPtr){dst, m.dstPitch, m.WidthInBytes, m.dstHeight};
    pNodeParams->srcPos = (struct cudaPos){m.srcXInBytes, m.srcY, m.srcZ};
    pNodeParams->dstPos = (struct cudaPos){m.dstXInBytes, m.dstY, m.dstZ};
    pNodeParams->extent = (struct cudaExtent){m.WidthInBytes, m.Height, m.Depth};
    pNodeParams->kind = src_host ? (dst_host ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                                 : (dst_host ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
    return cudaSuccess;
}

/* ---- generic node parameters (cudaGraphNodeParams as CUgraphNodeParams) ---- */

_Static_assert(sizeof(struct cudaGraphNodeParams) == sizeof(CUgraphNodeParams), "node parameter layouts");
_Static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS) == sizeof(CUDA_KERNEL_NODE_PARAMS_v3), "kernel node layouts");

/* The union's members lay out as the driver's but for kernels (a host stub, not a CUkernel),
 * copies (cudaMemcpy3DParms) and fills (no context). Not recorded. */
static cudaError_t fc_node_params(const struct cudaGraphNodeParams *p, CUgraphNodeParams *d)
{
    if (!p)
        return cudaErrorInvalidValue;
    memcpy(d, p, sizeof *d);
    CUcontext ctx;
    cudaError_t e = fc_context(&ctx);
    if (e != cudaSuccess)
        return e;
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        const struct cudaKernelNodeParamsV2 *k = &p->kernel;
        struct cudaKernelNodeParams v1 = {k->func, k->gridDim, k->blockDim, k->sharedMemBytes, k->kernelParams,
                                          k->extra};
        CUDA_KERNEL_NODE_PARAMS converted;
        e = fc_kernel_params(&v1, &converted);
        memset(&d->kernel, 0, sizeof d->kernel);
        memcpy(&d->kernel, &converted, sizeof converted);
        return e;
    }
    case cudaGraphNodeTypeMemcpy:
        memset(&d->memcpy, 0, sizeof d->memcpy);
        d->memcpy.copyCtx = ctx;
        return fc_rt_copy3d(&p->memcpy.copyParams, &d->memcpy.copyParams);
    case cudaGraphNodeTypeMemset:
        d->memset.ctx = ctx;
        return cudaSuccess;
    default:
        return cudaSuccess;
    }
}

/* Outputs (a memory allocation node's address) back into the caller's parameters. */
static void fc_node_outputs(struct cudaGraphNodeParams *p, const CUgraphNodeParams *d)
{
    if (p->type == cudaGraphNodeTypeMemAlloc)
        memcpy(&p->alloc, &d->alloc, sizeof p->alloc);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies,
                                                 const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                 struct cudaGraphNodeParams *nodeParams)
{
    CUgraphNodeParams d;
    cudaError_t e = fc_node_params(nodeParams, &d);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUresult r = FC_DRV(fc_drv.cuGraphAddNode_v12030, pGraphNode, graph, pDependencies,
                        (const CUgraphEdgeData *)dependencyData, numDependencies, &d);
    if (r == CUDA_SUCCESS)
        fc_node_outputs(nodeParams, &d);
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *nodeParams)
{
    CUgraphNodeParams d;
    cudaError_t e = fc_node_params(nodeParams, &d);
    return e != cudaSuccess ? fc_rt_ret(e) : fc_rt_err(FC_DRV(fc_drv.cuGraphNodeSetParams_v12020, node, &d));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGraphExecNodeSetParams(cudaGraphExec_t graphExec, cudaGraphNode_t node,
                                                           struct cudaGraphNodeParams *nodeParams)
{
    CUgraphNodeParams d;
    cudaError_t e = fc_node_params(nodeParams, &d);
    return e != cudaSuccess ? fc_rt_ret(e)
                            : fc_rt_err(FC_DRV(fc_drv.cuGraphExecNodeSetParams_v12020, graphExec, node, &d));
}

/* ---- launches with a configuration, cooperative launches ---- */

/* The kernel of func and c as the driver's CUlaunchConfig (cudaLaunchAttribute is
 * CUlaunchAttribute; the rest is renamed). Not recorded. */
static cudaError_t fc_launch_config(const cudaLaunchConfig_t *c, const void *func, CUkernel *k, CUlaunchConfig *cfg)
{
    if (!c)
        return cudaErrorInvalidValue;
    if (!fc_rt_config_ok(c->gridDim, c->blockDim))
        return cudaErrorInvalidConfiguration;
    cudaError_t e = fc_rt_kernel(func, k);
    if (e != cudaSuccess)
        return e;
    *cfg = (CUlaunchConfig){
        .gridDimX = c->gridDim.x, .gridDimY = c->gridDim.y, .gridDimZ = c->gridDim.z,
        .blockDimX = c->blockDim.x, .blockDimY = c->blockDim.y, .blockDimZ = c->blockDim.z,
        .sharedMemBytes = (unsigned)c->dynamicSmemBytes, .hStream = c->stream,
        .attrs = (CUlaunchAttribute *)c->attrs, .numAttrs = c->numAttrs,
    };
    return cudaSuccess;
}

static cudaError_t fc_launch_ex(const cudaLaunchConfig_t *c, const void *func, void **args, int pt)
{
    CUkernel k;
    CUlaunchConfig cfg;
    cudaError_t e = fc_launch_config(c, func, &k, &cfg);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuLaunchKernelEx_v11060, fc_drv.cuLaunchKernelEx_v11060_ptsz), &cfg,
                            (CUfunction)k, args, NULL));
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
    return fc_launch_ex(config, func, args, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                                         void **args)
{
    return fc_launch_ex(config, func, args, 1);
}

static cudaError_t fc_launch_coop(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s, int pt)
{
    CUkernel k;
    cudaError_t e = fc_rt_config_ok(g, b) ? fc_rt_kernel(func, &k) : cudaErrorInvalidConfiguration;
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuLaunchCooperativeKernel_v9000, fc_drv.cuLaunchCooperativeKernel_v9000_ptsz),
                            (CUfunction)k, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, s, args));
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                            size_t sharedMem, cudaStream_t stream)
{
    return fc_launch_coop(func, gridDim, blockDim, args, sharedMem, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                                                 void **args, size_t sharedMem, cudaStream_t stream)
{
    return fc_launch_coop(func, gridDim, blockDim, args, sharedMem, stream, 1);
}

/* ---- occupancy (the driver computes it for the CUkernel as a CUfunction) ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks,
                                                                                       const void *func,
                                                                                       int blockSize,
                                                                                       size_t dynamicSMemSize,
                                                                                       unsigned int flags)
{
    CUkernel k;
    cudaError_t e = fc_rt_kernel(func, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000, numBlocks,
                            (CUfunction)k, blockSize, dynamicSMemSize, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func,
                                                                              int blockSize, size_t dynamicSMemSize)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                  cudaOccupancyDefault);
}

FC_EXPORT cudaError_t CUDARTAPI cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func,
                                                                          int numBlocks, int blockSize)
{
    CUkernel k;
    cudaError_t e = fc_rt_kernel(func, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuOccupancyAvailableDynamicSMemPerBlock_v10020, dynamicSmemSize, (CUfunction)k,
                            numBlocks, blockSize));
}

/* which: 0 cuOccupancyMaxPotentialClusterSize, 1 cuOccupancyMaxActiveClusters. */
static cudaError_t fc_cluster_occupancy(int which, int *out, const void *func, const cudaLaunchConfig_t *c)
{
    CUkernel k;
    CUlaunchConfig cfg;
    cudaError_t e = fc_launch_config(c, func, &k, &cfg);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(which ? FC_DRV(fc_drv.cuOccupancyMaxActiveClusters_v11070, out, (CUfunction)k, &cfg)
                           : FC_DRV(fc_drv.cuOccupancyMaxPotentialClusterSize_v11070, out, (CUfunction)k, &cfg));
}

FC_EXPORT cudaError_t CUDARTAPI cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
                                                                     const cudaLaunchConfig_t *launchConfig)
{
    return fc_cluster_occupancy(0, clusterSize, func, launchConfig);
}

FC_EXPORT cudaError_t CUDARTAPI cudaOccupancyMaxActiveClusters(int *numClusters, const void *func,
                                                               const cudaLaunchConfig_t *launchConfig)
{
    return fc_cluster_occupancy(1, numClusters, func, launchConfig);
}
