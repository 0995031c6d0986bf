/* Allocation, copies and fills of the simulated runtime (contract in fc_rt.h). Each operation has
 * one implementation taking `pt`: 1 for the _ptds/_ptsz exports that programs built with
 * --default-stream per-thread call, which use the driver's per-thread entry points. */
#include "fc_rt.h"

#include <string.h>

/* ---- allocation ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUdeviceptr d = 0;
    CUresult r = size ? FC_DRV(fc_drv.cuMemAlloc_v3020, &d, size) : CUDA_SUCCESS;
    *devPtr = (void *)(uintptr_t)d;
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
    if (!devPtr || !pitch)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUdeviceptr d = 0;
    /* 16-byte elements: the strictest alignment the driver accepts. */
    CUresult r = FC_DRV(fc_drv.cuMemAllocPitch_v3020, &d, pitch, width, height, 16);
    *devPtr = (void *)(uintptr_t)d;
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    if (!devPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUdeviceptr d = 0;
    CUresult r = FC_DRV(fc_drv.cuMemAllocManaged_v6000, &d, size, flags);
    *devPtr = (void *)(uintptr_t)d;
    return fc_rt_err(r);
}

/* cudaFree(NULL) is the documented way to initialize the context, so it does that and succeeds. */
FC_EXPORT cudaError_t CUDARTAPI cudaFree(void *devPtr)
{
    FC_CTX();
    if (!devPtr)
        return cudaSuccess;
    return fc_rt_err(FC_DRV(fc_drv.cuMemFree_v3020, (CUdeviceptr)(uintptr_t)devPtr));
}

/* cudaHostAlloc flags (Portable 1, Mapped 2, WriteCombined 4) are CU_MEMHOSTALLOC_*'s values. */
static cudaError_t fc_host_alloc(void **pHost, size_t size, unsigned flags)
{
    if (!pHost)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemHostAlloc_v2020, pHost, size, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    return fc_host_alloc(pHost, size, flags);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocHost(void **ptr, size_t size)
{
    return fc_host_alloc(ptr, size, cudaHostAllocDefault);
}

FC_EXPORT cudaError_t CUDARTAPI cudaFreeHost(void *ptr)
{
    FC_CTX();
    if (!ptr)
        return cudaSuccess;
    return fc_rt_err(FC_DRV(fc_drv.cuMemFreeHost_v2000, ptr));
}

FC_EXPORT cudaError_t CUDARTAPI cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemHostRegister_v6050, ptr, size, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaHostUnregister(void *ptr)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemHostUnregister_v4000, ptr));
}

FC_EXPORT cudaError_t CUDARTAPI cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (!pDevice)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUdeviceptr d = 0;
    CUresult r = FC_DRV(fc_drv.cuMemHostGetDevicePointer_v3020, &d, pHost, flags);
    *pDevice = (void *)(uintptr_t)d;
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaHostGetFlags(unsigned int *pFlags, void *pHost)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemHostGetFlags_v2030, pFlags, pHost));
}

static cudaError_t fc_malloc_async(void **devPtr, size_t size, CUmemoryPool pool, cudaStream_t s, int pt)
{
    if (!devPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUdeviceptr d = 0;
    CUresult r = pool ? FC_DRV(FC_PT(pt, fc_drv.cuMemAllocFromPoolAsync_v11020,
                                     fc_drv.cuMemAllocFromPoolAsync_v11020_ptsz), &d, size, pool, s)
                      : FC_DRV(FC_PT(pt, fc_drv.cuMemAllocAsync_v11020, fc_drv.cuMemAllocAsync_v11020_ptsz),
                               &d, size, s);
    *devPtr = (void *)(uintptr_t)d;
    return fc_rt_err(r);
}

static cudaError_t fc_free_async(void *devPtr, cudaStream_t s, int pt)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuMemFreeAsync_v11020, fc_drv.cuMemFreeAsync_v11020_ptsz),
                            (CUdeviceptr)(uintptr_t)devPtr, s));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return fc_malloc_async(devPtr, size, NULL, hStream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
    return fc_malloc_async(devPtr, size, NULL, hStream, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
    return memPool ? fc_malloc_async(ptr, size, (CUmemoryPool)memPool, stream, 0) : fc_rt_ret(cudaErrorInvalidValue);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                                             cudaStream_t stream)
{
    return memPool ? fc_malloc_async(ptr, size, (CUmemoryPool)memPool, stream, 1) : fc_rt_ret(cudaErrorInvalidValue);
}

FC_EXPORT cudaError_t CUDARTAPI cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return fc_free_async(devPtr, hStream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    return fc_free_async(devPtr, hStream, 1);
}

/* ---- pointer attributes and copy direction ---- */

/* The driver's memory type of p; 0 for host memory the driver does not know (pageable). */
static CUmemorytype fc_memtype(const void *p, int *managed)
{
    CUmemorytype type = 0;
    int is_managed = 0;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void *vals[] = {&type, &is_managed};
    if (FC_DRV(fc_drv.cuPointerGetAttributes_v7000, 2, attrs, vals, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        type = 0, is_managed = 0;
    if (managed)
        *managed = is_managed;
    return type;
}

static int fc_on_device(const void *p)
{
    CUmemorytype t = fc_memtype(p, NULL);
    return t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED;
}

/* The explicit direction of a copy: cudaMemcpyDefault is resolved from where each pointer lives
 * (unified addressing), as NVIDIA's runtime does. */
static cudaError_t fc_direction(enum cudaMemcpyKind kind, void *dst, const void *src, enum cudaMemcpyKind *out)
{
    if (kind == cudaMemcpyDefault) {
        int d = fc_on_device(dst), s = fc_on_device(src);
        *out = s ? (d ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                 : (d ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
        return cudaSuccess;
    }
    if ((unsigned)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    *out = kind;
    return cudaSuccess;
}

FC_EXPORT cudaError_t CUDARTAPI cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    if (!attributes)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUmemorytype type = 0;
    int managed = 0, ordinal = -1;
    void *dptr = NULL, *hptr = NULL;
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                   CU_POINTER_ATTRIBUTE_HOST_POINTER};
    void *vals[] = {&type, &managed, &ordinal, &dptr, &hptr};
    CUresult r = FC_DRV(fc_drv.cuPointerGetAttributes_v7000, 5, attrs, vals, (CUdeviceptr)(uintptr_t)ptr);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_VALUE)
        return fc_rt_err(r);
    memset(attributes, 0, sizeof *attributes);
    attributes->device = -1;
    if (r == CUDA_SUCCESS && type != 0) {
        attributes->type = managed ? cudaMemoryTypeManaged
                         : type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
        attributes->device = ordinal;
        attributes->devicePointer = dptr;
        attributes->hostPointer = hptr;
    } else {
        attributes->type = cudaMemoryTypeUnregistered;
    }
    return cudaSuccess;
}

/* ---- copies ---- */

static cudaError_t fc_memcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                             int async, cudaStream_t s, int pt)
{
    FC_CTX();
    enum cudaMemcpyKind dir;
    cudaError_t e = fc_direction(kind, dst, src, &dir);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    if (count == 0)
        return cudaSuccess;
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, sp = (CUdeviceptr)(uintptr_t)src;
    CUresult r;
    switch (dir) {
    case cudaMemcpyHostToDevice:
        r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpyHtoDAsync_v3020, fc_drv.cuMemcpyHtoDAsync_v7000_ptsz),
                           d, src, count, s)
                  : FC_DRV(FC_PT(pt, fc_drv.cuMemcpyHtoD_v3020, fc_drv.cuMemcpyHtoD_v7000_ptds), d, src, count);
        break;
    case cudaMemcpyDeviceToHost:
        r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpyDtoHAsync_v3020, fc_drv.cuMemcpyDtoHAsync_v7000_ptsz),
                           dst, sp, count, s)
                  : FC_DRV(FC_PT(pt, fc_drv.cuMemcpyDtoH_v3020, fc_drv.cuMemcpyDtoH_v7000_ptds), dst, sp, count);
        break;
    case cudaMemcpyDeviceToDevice:
        r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpyDtoDAsync_v3020, fc_drv.cuMemcpyDtoDAsync_v7000_ptsz),
                           d, sp, count, s)
                  : FC_DRV(FC_PT(pt, fc_drv.cuMemcpyDtoD_v3020, fc_drv.cuMemcpyDtoD_v7000_ptds), d, sp, count);
        break;
    default: /* host to host: the unified copy, so it is ordered like any other */
        r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpyAsync_v4000, fc_drv.cuMemcpyAsync_v7000_ptsz), d, sp, count, s)
                  : FC_DRV(FC_PT(pt, fc_drv.cuMemcpy_v4000, fc_drv.cuMemcpy_v7000_ptds), d, sp, count);
        break;
    }
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return fc_memcpy(dst, src, count, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return fc_memcpy(dst, src, count, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                                cudaStream_t stream)
{
    return fc_memcpy(dst, src, count, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                                     enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return fc_memcpy(dst, src, count, kind, 1, stream, 1);
}

static void fc_2d_side(CUmemorytype *type, const void **host, CUdeviceptr *dev, const void *p, int on_device)
{
    *type = on_device ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    if (on_device)
        *dev = (CUdeviceptr)(uintptr_t)p;
    else
        *host = p;
}

static cudaError_t fc_memcpy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                               size_t height, enum cudaMemcpyKind kind, int async, cudaStream_t s, int pt)
{
    FC_CTX();
    enum cudaMemcpyKind dir;
    cudaError_t e = fc_direction(kind, dst, src, &dir);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    if (width > dpitch || width > spitch)
        return fc_rt_ret(cudaErrorInvalidPitchValue);
    if (width == 0 || height == 0)
        return cudaSuccess;
    CUDA_MEMCPY2D m;
    memset(&m, 0, sizeof m);
    fc_2d_side(&m.srcMemoryType, &m.srcHost, &m.srcDevice, src,
               dir == cudaMemcpyDeviceToHost || dir == cudaMemcpyDeviceToDevice);
    fc_2d_side(&m.dstMemoryType, (const void **)&m.dstHost, &m.dstDevice, dst,
               dir == cudaMemcpyHostToDevice || dir == cudaMemcpyDeviceToDevice);
    m.srcPitch = spitch;
    m.dstPitch = dpitch;
    m.WidthInBytes = width;
    m.Height = height;
    CUresult r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpy2DAsync_v3020, fc_drv.cuMemcpy2DAsync_v7000_ptsz), &m, s)
                       : FC_DRV(FC_PT(pt, fc_drv.cuMemcpy2DUnaligned_v3020, fc_drv.cuMemcpy2DUnaligned_v7000_ptds), &m);
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                             size_t height, enum cudaMemcpyKind kind)
{
    return fc_memcpy2d(dst, dpitch, src, spitch, width, height, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                  size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return fc_memcpy2d(dst, dpitch, src, spitch, width, height, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                  size_t width, size_t height, enum cudaMemcpyKind kind,
                                                  cudaStream_t stream)
{
    return fc_memcpy2d(dst, dpitch, src, spitch, width, height, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                       size_t width, size_t height, enum cudaMemcpyKind kind,
                                                       cudaStream_t stream)
{
    return fc_memcpy2d(dst, dpitch, src, spitch, width, height, kind, 1, stream, 1);
}

/* ---- copies to and from CUDA arrays (offsets and widths in bytes) ---- */

static cudaError_t fc_memcpy_array(cudaArray_const_t array, int to_array, size_t wOffset, size_t hOffset,
                                   const void *ptr, size_t pitch, size_t width, size_t height,
                                   enum cudaMemcpyKind kind, int async, cudaStream_t s, int pt)
{
    FC_CTX();
    enum cudaMemcpyKind dir;
    cudaError_t e = fc_direction(kind, (void *)(to_array ? NULL : ptr), to_array ? ptr : NULL, &dir);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    if (height > 1 && width > pitch)
        return fc_rt_ret(cudaErrorInvalidPitchValue);
    if (width == 0 || height == 0)
        return cudaSuccess;
    CUDA_MEMCPY2D m = {.WidthInBytes = width, .Height = height};
    if (to_array) {
        m.dstMemoryType = CU_MEMORYTYPE_ARRAY, m.dstArray = (CUarray)(uintptr_t)array;
        m.dstXInBytes = wOffset, m.dstY = hOffset, m.srcPitch = pitch;
        fc_2d_side(&m.srcMemoryType, &m.srcHost, &m.srcDevice, ptr,
                   dir == cudaMemcpyDeviceToHost || dir == cudaMemcpyDeviceToDevice);
    } else {
        m.srcMemoryType = CU_MEMORYTYPE_ARRAY, m.srcArray = (CUarray)(uintptr_t)array;
        m.srcXInBytes = wOffset, m.srcY = hOffset, m.dstPitch = pitch;
        fc_2d_side(&m.dstMemoryType, (const void **)&m.dstHost, &m.dstDevice, ptr,
                   dir == cudaMemcpyHostToDevice || dir == cudaMemcpyDeviceToDevice);
    }
    CUresult r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpy2DAsync_v3020, fc_drv.cuMemcpy2DAsync_v7000_ptsz), &m, s)
                       : FC_DRV(FC_PT(pt, fc_drv.cuMemcpy2DUnaligned_v3020, fc_drv.cuMemcpy2DUnaligned_v7000_ptds), &m);
    return fc_rt_err(r);
}

/* The deprecated count forms: count bytes from (wOffset, hOffset), within a row or whole rows
 * from the row's start (the array's rows are consecutive in its layout). */
static cudaError_t fc_memcpy_array_count(cudaArray_const_t array, int to_array, size_t wOffset, size_t hOffset,
                                         const void *ptr, size_t count, enum cudaMemcpyKind kind, int async,
                                         cudaStream_t s, int pt)
{
    FC_CTX();
    CUDA_ARRAY3D_DESCRIPTOR d;
    size_t elem;
    cudaError_t e = fc_rt_array_desc(array, &d, &elem);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    size_t row = d.Width * elem;
    if (wOffset + count <= row)
        return fc_memcpy_array(array, to_array, wOffset, hOffset, ptr, count, count, 1, kind, async, s, pt);
    if (wOffset != 0 || count % row)
        return fc_rt_ret(cudaErrorInvalidValue);
    return fc_memcpy_array(array, to_array, 0, hOffset, ptr, row, row, count / row, kind, async, s, pt);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                                    size_t spitch, size_t width, size_t height,
                                                    enum cudaMemcpyKind kind)
{
    return fc_memcpy_array(dst, 1, wOffset, hOffset, src, spitch, width, height, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                         const void *src, size_t spitch, size_t width, size_t height,
                                                         enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return fc_memcpy_array(dst, 1, wOffset, hOffset, src, spitch, width, height, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                                      size_t hOffset, size_t width, size_t height,
                                                      enum cudaMemcpyKind kind)
{
    return fc_memcpy_array(src, 0, wOffset, hOffset, dst, dpitch, width, height, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src,
                                                           size_t wOffset, size_t hOffset, size_t width,
                                                           size_t height, enum cudaMemcpyKind kind,
                                                           cudaStream_t stream)
{
    return fc_memcpy_array(src, 0, wOffset, hOffset, dst, dpitch, width, height, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                                  size_t count, enum cudaMemcpyKind kind)
{
    return fc_memcpy_array_count(dst, 1, wOffset, hOffset, src, count, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                       const void *src, size_t count, enum cudaMemcpyKind kind,
                                                       cudaStream_t stream)
{
    return fc_memcpy_array_count(dst, 1, wOffset, hOffset, src, count, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                                    size_t count, enum cudaMemcpyKind kind)
{
    return fc_memcpy_array_count(src, 0, wOffset, hOffset, dst, count, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wOffset,
                                                         size_t hOffset, size_t count, enum cudaMemcpyKind kind,
                                                         cudaStream_t stream)
{
    return fc_memcpy_array_count(src, 0, wOffset, hOffset, dst, count, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                         const void *src, size_t spitch, size_t width, size_t height,
                                                         enum cudaMemcpyKind kind)
{
    return fc_memcpy_array(dst, 1, wOffset, hOffset, src, spitch, width, height, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                              const void *src, size_t spitch, size_t width,
                                                              size_t height, enum cudaMemcpyKind kind,
                                                              cudaStream_t stream)
{
    return fc_memcpy_array(dst, 1, wOffset, hOffset, src, spitch, width, height, kind, 1, stream, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch, cudaArray_const_t src,
                                                           size_t wOffset, size_t hOffset, size_t width,
                                                           size_t height, enum cudaMemcpyKind kind)
{
    return fc_memcpy_array(src, 0, wOffset, hOffset, dst, dpitch, width, height, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch, cudaArray_const_t src,
                                                                size_t wOffset, size_t hOffset, size_t width,
                                                                size_t height, enum cudaMemcpyKind kind,
                                                                cudaStream_t stream)
{
    return fc_memcpy_array(src, 0, wOffset, hOffset, dst, dpitch, width, height, kind, 1, stream, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToArray_ptds(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                       const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return fc_memcpy_array_count(dst, 1, wOffset, hOffset, src, count, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t wOffset, size_t hOffset,
                                                            const void *src, size_t count, enum cudaMemcpyKind kind,
                                                            cudaStream_t stream)
{
    return fc_memcpy_array_count(dst, 1, wOffset, hOffset, src, count, kind, 1, stream, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromArray_ptds(void *dst, cudaArray_const_t src, size_t wOffset,
                                                         size_t hOffset, size_t count, enum cudaMemcpyKind kind)
{
    return fc_memcpy_array_count(src, 0, wOffset, hOffset, dst, count, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromArrayAsync_ptsz(void *dst, cudaArray_const_t src, size_t wOffset,
                                                              size_t hOffset, size_t count, enum cudaMemcpyKind kind,
                                                              cudaStream_t stream)
{
    return fc_memcpy_array_count(src, 0, wOffset, hOffset, dst, count, kind, 1, stream, 1);
}

/* ---- fills ---- */

/* A 1D fill is the 2D fill of one row. */
static cudaError_t fc_memset2d(void *devPtr, size_t pitch, int value, size_t width, size_t height, int async,
                               cudaStream_t s, int pt)
{
    FC_CTX();
    if (width == 0 || height == 0)
        return cudaSuccess;
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)devPtr;
    unsigned char v = (unsigned char)value;
    CUresult r;
    if (height == 1)
        r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemsetD8Async_v3020, fc_drv.cuMemsetD8Async_v7000_ptsz), d, v, width, s)
                  : FC_DRV(FC_PT(pt, fc_drv.cuMemsetD8_v3020, fc_drv.cuMemsetD8_v7000_ptds), d, v, width);
    else
        r = async ? FC_DRV(FC_PT(pt, fc_drv.cuMemsetD2D8Async_v3020, fc_drv.cuMemsetD2D8Async_v7000_ptsz), d, pitch,
                           v, width, height, s)
                  : FC_DRV(FC_PT(pt, fc_drv.cuMemsetD2D8_v3020, fc_drv.cuMemsetD2D8_v7000_ptds), d, pitch, v, width,
                           height);
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset(void *devPtr, int value, size_t count)
{
    return fc_memset2d(devPtr, count, value, count, 1, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return fc_memset2d(devPtr, count, value, count, 1, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return fc_memset2d(devPtr, count, value, count, 1, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return fc_memset2d(devPtr, count, value, count, 1, 1, stream, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return fc_memset2d(devPtr, pitch, value, width, height, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width, size_t height)
{
    return fc_memset2d(devPtr, pitch, value, width, height, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset2DAsync(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                                                  cudaStream_t stream)
{
    return fc_memset2d(devPtr, pitch, value, width, height, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
                                                       size_t height, cudaStream_t stream)
{
    return fc_memset2d(devPtr, pitch, value, width, height, 1, stream, 1);
}

/* Pure: NVIDIA's returns the described format whatever the device. */
FC_EXPORT struct cudaChannelFormatDesc CUDARTAPI cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                       enum cudaChannelFormatKind f)
{
    return (struct cudaChannelFormatDesc){x, y, z, w, f};
}

static cudaError_t fc_memcpy_peer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count, int async,
                                  cudaStream_t s)
{
    FC_CTX();
    CUdevice unused;
    CUcontext dc, sc;
    cudaError_t e = fc_rt_cudevice(dstDevice, &unused);
    if (e == cudaSuccess)
        e = fc_rt_cudevice(srcDevice, &unused);
    if (e == cudaSuccess)
        e = fc_rt_primary(dstDevice, &dc);
    if (e == cudaSuccess)
        e = fc_rt_primary(srcDevice, &sc);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, sp = (CUdeviceptr)(uintptr_t)src;
    return fc_rt_err(async ? FC_DRV(fc_drv.cuMemcpyPeerAsync_v4000, d, dc, sp, sc, count, s)
                           : FC_DRV(fc_drv.cuMemcpyPeer_v4000, d, dc, sp, sc, count));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    return fc_memcpy_peer(dst, dstDevice, src, srcDevice, count, 0, NULL);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                                    size_t count, cudaStream_t stream)
{
    return fc_memcpy_peer(dst, dstDevice, src, srcDevice, count, 1, stream);
}

/* ---- device variables (registered by __cudaRegisterVar) ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
    CUdeviceptr d;
    size_t size;
    if (!devPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_rt_symbol(symbol, &d, &size);
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)d;
    return fc_rt_ret(e);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetSymbolSize(size_t *size, const void *symbol)
{
    CUdeviceptr d;
    if (!size)
        return fc_rt_ret(cudaErrorInvalidValue);
    return fc_rt_ret(fc_rt_symbol(symbol, &d, size));
}

cudaError_t fc_rt_symbol_span(int to_symbol, const void *symbol, size_t count, size_t offset,
                              enum cudaMemcpyKind kind, void **var)
{
    CUdeviceptr d;
    size_t size;
    cudaError_t e = fc_rt_symbol(symbol, &d, &size);
    if (e != cudaSuccess)
        return e;
    if (offset > size || count > size - offset)
        return cudaErrorInvalidValue;
    enum cudaMemcpyKind host_side = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (kind != host_side && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    *var = (char *)(uintptr_t)d + offset;
    return cudaSuccess;
}

static cudaError_t fc_symbol_copy(int to_symbol, void *mem, const void *symbol, size_t count, size_t offset,
                                  enum cudaMemcpyKind kind, int async, cudaStream_t s, int pt)
{
    void *var;
    cudaError_t e = fc_rt_symbol_span(to_symbol, symbol, count, offset, kind, &var);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return to_symbol ? fc_memcpy(var, mem, count, kind, async, s, pt) : fc_memcpy(mem, var, count, kind, async, s, pt);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                                   enum cudaMemcpyKind kind)
{
    return fc_symbol_copy(1, (void *)src, symbol, count, offset, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                                        size_t offset, enum cudaMemcpyKind kind)
{
    return fc_symbol_copy(1, (void *)src, symbol, count, offset, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                                        size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return fc_symbol_copy(1, (void *)src, symbol, count, offset, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                                             size_t offset, enum cudaMemcpyKind kind,
                                                             cudaStream_t stream)
{
    return fc_symbol_copy(1, (void *)src, symbol, count, offset, kind, 1, stream, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                                     enum cudaMemcpyKind kind)
{
    return fc_symbol_copy(0, dst, symbol, count, offset, kind, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
                                                          enum cudaMemcpyKind kind)
{
    return fc_symbol_copy(0, dst, symbol, count, offset, kind, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                                          enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return fc_symbol_copy(0, dst, symbol, count, offset, kind, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                                               size_t offset, enum cudaMemcpyKind kind,
                                                               cudaStream_t stream)
{
    return fc_symbol_copy(0, dst, symbol, count, offset, kind, 1, stream, 1);
}

/* ---- managed memory hints (CUDA 13 takes a cudaMemLocation, laid out as CUmemLocation) ---- */

_Static_assert(sizeof(struct cudaMemLocation) == sizeof(CUmemLocation), "cudaMemLocation is CUmemLocation");
/* The batched forms and external memory (forward.txt) pass these to the driver as they are. */
_Static_assert(sizeof(struct cudaExternalMemoryHandleDesc) == sizeof(CUDA_EXTERNAL_MEMORY_HANDLE_DESC),
               "external memory layouts");
_Static_assert(sizeof(struct cudaExternalMemoryBufferDesc) == sizeof(CUDA_EXTERNAL_MEMORY_BUFFER_DESC),
               "external buffer layouts");
_Static_assert(sizeof(struct cudaExternalSemaphoreHandleDesc) == sizeof(CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC),
               "external semaphore layouts");
_Static_assert(sizeof(struct cudaExternalSemaphoreSignalParams) == sizeof(CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS),
               "semaphore signal layouts");
_Static_assert(sizeof(struct cudaExternalSemaphoreWaitParams) == sizeof(CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS),
               "semaphore wait layouts");
_Static_assert(sizeof(struct cudaMemcpyAttributes) == sizeof(CUmemcpyAttributes), "copy attribute layouts");
_Static_assert(sizeof(struct cudaMemcpy3DBatchOp) == sizeof(CUDA_MEMCPY3D_BATCH_OP), "3D batch layouts");

static CUmemLocation fc_location(struct cudaMemLocation l)
{
    return (CUmemLocation){.type = (CUmemLocationType)l.type, .id = l.id};
}

static cudaError_t fc_prefetch(const void *p, size_t count, struct cudaMemLocation loc, unsigned flags, cudaStream_t s,
                               int pt)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuMemPrefetchAsync_v12020, fc_drv.cuMemPrefetchAsync_v12020_ptsz),
                            (CUdeviceptr)(uintptr_t)p, count, fc_location(loc), flags, s));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                                     unsigned int flags, cudaStream_t stream)
{
    return fc_prefetch(devPtr, count, location, flags, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                                          struct cudaMemLocation location, unsigned int flags,
                                                          cudaStream_t stream)
{
    return fc_prefetch(devPtr, count, location, flags, stream, 1);
}

/* cudaMemoryAdvise and CUmem_advise share their values. */
FC_EXPORT cudaError_t CUDARTAPI cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                                              struct cudaMemLocation location)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemAdvise_v12020, (CUdeviceptr)(uintptr_t)devPtr, count, (CUmem_advise)advice,
                            fc_location(location)));
}

/* ---- 3D copies (pitched pointers and CUDA arrays) ---- */

cudaError_t fc_rt_copy3d(const struct cudaMemcpy3DParms *p, CUDA_MEMCPY3D *m)
{
    if (!p)
        return cudaErrorInvalidValue;
    /* With an array on either side, the extent and the array's position are in elements. */
    size_t selem = 1, delem = 1;
    CUDA_ARRAY3D_DESCRIPTOR ad;
    cudaError_t e;
    if ((p->srcArray && (e = fc_rt_array_desc(p->srcArray, &ad, &selem)) != cudaSuccess) ||
        (p->dstArray && (e = fc_rt_array_desc(p->dstArray, &ad, &delem)) != cudaSuccess))
        return e;
    enum cudaMemcpyKind dir;
    if ((e = fc_direction(p->kind, p->dstPtr.ptr, p->srcPtr.ptr, &dir)) != cudaSuccess)
        return e;
    size_t elem = p->srcArray ? selem : delem;
    /* A pitched pointer's x is in bytes, and its ysize is the height of its slices. */
    *m = (CUDA_MEMCPY3D){
        .srcXInBytes = p->srcPos.x * selem, .srcY = p->srcPos.y, .srcZ = p->srcPos.z,
        .srcPitch = p->srcPtr.pitch, .srcHeight = p->srcPtr.ysize,
        .dstXInBytes = p->dstPos.x * delem, .dstY = p->dstPos.y, .dstZ = p->dstPos.z,
        .dstPitch = p->dstPtr.pitch, .dstHeight = p->dstPtr.ysize,
        .WidthInBytes = p->extent.width * elem, .Height = p->extent.height, .Depth = p->extent.depth,
    };
    if (p->srcArray) {
        m->srcMemoryType = CU_MEMORYTYPE_ARRAY;
        m->srcArray = (CUarray)p->srcArray;
    } else {
        fc_2d_side(&m->srcMemoryType, &m->srcHost, &m->srcDevice, p->srcPtr.ptr,
                   dir == cudaMemcpyDeviceToHost || dir == cudaMemcpyDeviceToDevice);
    }
    if (p->dstArray) {
        m->dstMemoryType = CU_MEMORYTYPE_ARRAY;
        m->dstArray = (CUarray)p->dstArray;
    } else {
        fc_2d_side(&m->dstMemoryType, (const void **)&m->dstHost, &m->dstDevice, p->dstPtr.ptr,
                   dir == cudaMemcpyHostToDevice || dir == cudaMemcpyDeviceToDevice);
    }
    return cudaSuccess;
}

static cudaError_t fc_memcpy3d(const struct cudaMemcpy3DParms *p, int async, cudaStream_t s, int pt)
{
    FC_CTX();
    CUDA_MEMCPY3D m;
    cudaError_t e = fc_rt_copy3d(p, &m);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpy3DAsync_v3020, fc_drv.cuMemcpy3DAsync_v7000_ptsz), &m, s)
                           : FC_DRV(FC_PT(pt, fc_drv.cuMemcpy3D_v3020, fc_drv.cuMemcpy3D_v7000_ptds), &m));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    return fc_memcpy3d(p, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
    return fc_memcpy3d(p, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    return fc_memcpy3d(p, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
    return fc_memcpy3d(p, 1, stream, 1);
}

/* A pitched allocation of extent.height * extent.depth rows, as NVIDIA's cudaMalloc3D. */
FC_EXPORT cudaError_t CUDARTAPI cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
    if (!pitchedDevPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUdeviceptr d = 0;
    size_t pitch = 0;
    CUresult r = FC_DRV(fc_drv.cuMemAllocPitch_v3020, &d, &pitch, extent.width, extent.height * extent.depth, 16);
    if (r == CUDA_SUCCESS)
        *pitchedDevPtr = (struct cudaPitchedPtr){(void *)(uintptr_t)d, pitch, extent.width, extent.height};
    return fc_rt_err(r);
}

/* The driver has no 3D fill: slices whose rows follow each other (extent.height == ysize) are
 * one 2D fill of height * depth rows, otherwise one 2D fill per slice. */
static cudaError_t fc_memset3d(struct cudaPitchedPtr p, int value, struct cudaExtent ext, int async, cudaStream_t s,
                               int pt)
{
    if (ext.height == p.ysize)
        return fc_memset2d(p.ptr, p.pitch, value, ext.width, ext.height * ext.depth, async, s, pt);
    cudaError_t e = cudaSuccess;
    for (size_t z = 0; z < ext.depth && e == cudaSuccess; z++)
        e = fc_memset2d((char *)p.ptr + z * p.pitch * p.ysize, p.pitch, value, ext.width, ext.height, async, s, pt);
    return e;
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset3D(struct cudaPitchedPtr pitchedDevPtr, int value, struct cudaExtent extent)
{
    return fc_memset3d(pitchedDevPtr, value, extent, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                                                  struct cudaExtent extent)
{
    return fc_memset3d(pitchedDevPtr, value, extent, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset3DAsync(struct cudaPitchedPtr pitchedDevPtr, int value,
                                                  struct cudaExtent extent, cudaStream_t stream)
{
    return fc_memset3d(pitchedDevPtr, value, extent, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
                                                       struct cudaExtent extent, cudaStream_t stream)
{
    return fc_memset3d(pitchedDevPtr, value, extent, 1, stream, 1);
}

/* ---- a device's current pool (the driver takes a CUdevice) ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    return e != cudaSuccess ? fc_rt_ret(e) : fc_rt_err(FC_DRV(fc_drv.cuDeviceGetMemPool_v11020, memPool, dev));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    return e != cudaSuccess ? fc_rt_ret(e) : fc_rt_err(FC_DRV(fc_drv.cuDeviceSetMemPool_v11020, dev, memPool));
}

/* ---- 3D copies between devices: each side's device pointer in its device's primary context ---- */

static cudaError_t fc_memcpy3d_peer(const struct cudaMemcpy3DPeerParms *p, int async, cudaStream_t s, int pt)
{
    if (!p)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    struct cudaMemcpy3DParms same = {.srcArray = p->srcArray, .srcPos = p->srcPos, .srcPtr = p->srcPtr,
                                     .dstArray = p->dstArray, .dstPos = p->dstPos, .dstPtr = p->dstPtr,
                                     .extent = p->extent, .kind = cudaMemcpyDeviceToDevice};
    CUDA_MEMCPY3D m;
    CUcontext src_ctx, dst_ctx;
    cudaError_t e = fc_rt_copy3d(&same, &m);
    if (e == cudaSuccess)
        e = fc_rt_cudevice(p->srcDevice, &(CUdevice){0});
    if (e == cudaSuccess)
        e = fc_rt_cudevice(p->dstDevice, &(CUdevice){0});
    if (e == cudaSuccess)
        e = fc_rt_primary(p->srcDevice, &src_ctx);
    if (e == cudaSuccess)
        e = fc_rt_primary(p->dstDevice, &dst_ctx);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUDA_MEMCPY3D_PEER q = {
        .srcXInBytes = m.srcXInBytes, .srcY = m.srcY, .srcZ = m.srcZ, .srcMemoryType = m.srcMemoryType,
        .srcDevice = m.srcDevice, .srcContext = src_ctx, .srcPitch = m.srcPitch, .srcHeight = m.srcHeight,
        .dstXInBytes = m.dstXInBytes, .dstY = m.dstY, .dstZ = m.dstZ, .dstMemoryType = m.dstMemoryType,
        .dstDevice = m.dstDevice, .dstContext = dst_ctx, .dstPitch = m.dstPitch, .dstHeight = m.dstHeight,
        .WidthInBytes = m.WidthInBytes, .Height = m.Height, .Depth = m.Depth,
    };
    return fc_rt_err(async ? FC_DRV(FC_PT(pt, fc_drv.cuMemcpy3DPeerAsync_v4000, fc_drv.cuMemcpy3DPeerAsync_v7000_ptsz),
                                    &q, s)
                           : FC_DRV(FC_PT(pt, fc_drv.cuMemcpy3DPeer_v4000, fc_drv.cuMemcpy3DPeer_v7000_ptds), &q));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p)
{
    return fc_memcpy3d_peer(p, 0, NULL, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p)
{
    return fc_memcpy3d_peer(p, 0, NULL, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    return fc_memcpy3d_peer(p, 1, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream)
{
    return fc_memcpy3d_peer(p, 1, stream, 1);
}
