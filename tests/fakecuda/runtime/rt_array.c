/* CUDA arrays, texture and surface objects, on the driver's (cuArray3DCreate, cuTexObjectCreate,
 * cuSurfObjectCreate). A cudaArray_t is the driver's CUarray; texture and surface objects are the
 * driver's handles. Channel descriptors become the driver's format and channel count: channels
 * of equal size (8, 16 or 32 bits; float 16 or 32), 1, 2 or 4 of them, as cuArray3DCreate takes;
 * anything else is cudaErrorInvalidChannelDescriptor. */
#include "fc_rt.h"

#include <string.h>

static cudaError_t fc_format(const struct cudaChannelFormatDesc *c, CUarray_format *fmt, unsigned *channels)
{
    int bits[4] = {c->x, c->y, c->z, c->w};
    unsigned n = 0;
    while (n < 4 && bits[n])
        n++;
    for (unsigned k = n; k < 4; k++)
        if (bits[k])
            return cudaErrorInvalidChannelDescriptor;
    for (unsigned k = 1; k < n; k++)
        if (bits[k] != bits[0])
            return cudaErrorInvalidChannelDescriptor;
    if (n == 0 || n == 3)
        return cudaErrorInvalidChannelDescriptor;
    static const struct {
        enum cudaChannelFormatKind kind;
        int bits;
        CUarray_format fmt;
    } table[] = {
        {cudaChannelFormatKindUnsigned, 8, CU_AD_FORMAT_UNSIGNED_INT8},
        {cudaChannelFormatKindUnsigned, 16, CU_AD_FORMAT_UNSIGNED_INT16},
        {cudaChannelFormatKindUnsigned, 32, CU_AD_FORMAT_UNSIGNED_INT32},
        {cudaChannelFormatKindSigned, 8, CU_AD_FORMAT_SIGNED_INT8},
        {cudaChannelFormatKindSigned, 16, CU_AD_FORMAT_SIGNED_INT16},
        {cudaChannelFormatKindSigned, 32, CU_AD_FORMAT_SIGNED_INT32},
        {cudaChannelFormatKindFloat, 16, CU_AD_FORMAT_HALF},
        {cudaChannelFormatKindFloat, 32, CU_AD_FORMAT_FLOAT},
    };
    for (unsigned i = 0; i < sizeof table / sizeof *table; i++)
        if (table[i].kind == c->f && table[i].bits == bits[0]) {
            *fmt = table[i].fmt;
            *channels = n;
            return cudaSuccess;
        }
    return cudaErrorInvalidChannelDescriptor;
}

/* The channel descriptor of a driver format (cudaGetChannelDesc, cudaArrayGetInfo). */
static struct cudaChannelFormatDesc fc_channel_desc(CUarray_format fmt, unsigned channels)
{
    int bits = fmt == CU_AD_FORMAT_UNSIGNED_INT8 || fmt == CU_AD_FORMAT_SIGNED_INT8 ? 8
               : fmt == CU_AD_FORMAT_UNSIGNED_INT16 || fmt == CU_AD_FORMAT_SIGNED_INT16 ||
                       fmt == CU_AD_FORMAT_HALF ? 16 : 32;
    enum cudaChannelFormatKind kind =
        fmt == CU_AD_FORMAT_HALF || fmt == CU_AD_FORMAT_FLOAT ? cudaChannelFormatKindFloat
        : fmt == CU_AD_FORMAT_SIGNED_INT8 || fmt == CU_AD_FORMAT_SIGNED_INT16 ||
                fmt == CU_AD_FORMAT_SIGNED_INT32 ? cudaChannelFormatKindSigned
                                                 : cudaChannelFormatKindUnsigned;
    return (struct cudaChannelFormatDesc){.x = bits, .y = channels > 1 ? bits : 0,
                                          .z = channels > 2 ? bits : 0, .w = channels > 3 ? bits : 0,
                                          .f = kind};
}

static cudaError_t fc_malloc_array(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t w,
                                   size_t h, size_t d, unsigned flags)
{
    FC_CTX();
    if (!array || !desc)
        return fc_rt_ret(cudaErrorInvalidValue);
    CUDA_ARRAY3D_DESCRIPTOR ad = {.Width = w, .Height = h, .Depth = d, .Flags = flags};
    cudaError_t e = fc_format(desc, &ad.Format, &ad.NumChannels);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUarray a;
    CUresult r = FC_DRV(fc_drv.cuArray3DCreate_v3020, &a, &ad);
    if (r == CUDA_SUCCESS)
        *array = (cudaArray_t)a;
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                                size_t width, size_t height, unsigned int flags)
{
    return fc_malloc_array(array, desc, width, height, 0, flags);
}

FC_EXPORT cudaError_t CUDARTAPI cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                                  struct cudaExtent extent, unsigned int flags)
{
    return fc_malloc_array(array, desc, extent.width, extent.height, extent.depth, flags);
}

FC_EXPORT cudaError_t CUDARTAPI cudaFreeArray(cudaArray_t array)
{
    FC_CTX();
    if (!array)
        return cudaSuccess;
    return fc_rt_err(FC_DRV(fc_drv.cuArrayDestroy_v2000, (CUarray)array));
}

cudaError_t fc_rt_array_desc(cudaArray_const_t array, CUDA_ARRAY3D_DESCRIPTOR *d, size_t *elem)
{
    CUresult r = FC_DRV(fc_drv.cuArray3DGetDescriptor_v3020, d, (CUarray)(uintptr_t)array);
    if (r != CUDA_SUCCESS)
        return r == CUDA_ERROR_INVALID_HANDLE ? cudaErrorInvalidResourceHandle : fc_rt_map(r);
    if (elem) {
        struct cudaChannelFormatDesc c = fc_channel_desc(d->Format, d->NumChannels);
        *elem = (size_t)c.x / 8 * d->NumChannels;
    }
    return cudaSuccess;
}

FC_EXPORT cudaError_t CUDARTAPI cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent,
                                                 unsigned int *flags, cudaArray_t array)
{
    FC_CTX();
    CUDA_ARRAY3D_DESCRIPTOR d;
    cudaError_t e = fc_rt_array_desc(array, &d, NULL);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    if (desc)
        *desc = fc_channel_desc(d.Format, d.NumChannels);
    if (extent)
        *extent = (struct cudaExtent){d.Width, d.Height, d.Depth};
    if (flags)
        *flags = d.Flags;
    return cudaSuccess;
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t array)
{
    FC_CTX();
    if (!desc)
        return fc_rt_ret(cudaErrorInvalidValue);
    CUDA_ARRAY3D_DESCRIPTOR d;
    cudaError_t e = fc_rt_array_desc(array, &d, NULL);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    *desc = fc_channel_desc(d.Format, d.NumChannels);
    return cudaSuccess;
}

/* ---- texture and surface objects ---- */

static cudaError_t fc_resource(const struct cudaResourceDesc *in, CUDA_RESOURCE_DESC *out)
{
    memset(out, 0, sizeof *out);
    switch (in->resType) {
    case cudaResourceTypeArray:
        out->resType = CU_RESOURCE_TYPE_ARRAY;
        out->res.array.hArray = (CUarray)in->res.array.array;
        return cudaSuccess;
    case cudaResourceTypeLinear:
        out->resType = CU_RESOURCE_TYPE_LINEAR;
        out->res.linear.devPtr = (CUdeviceptr)(uintptr_t)in->res.linear.devPtr;
        out->res.linear.sizeInBytes = in->res.linear.sizeInBytes;
        return fc_format(&in->res.linear.desc, &out->res.linear.format, &out->res.linear.numChannels);
    case cudaResourceTypePitch2D:
        out->resType = CU_RESOURCE_TYPE_PITCH2D;
        out->res.pitch2D.devPtr = (CUdeviceptr)(uintptr_t)in->res.pitch2D.devPtr;
        out->res.pitch2D.width = in->res.pitch2D.width;
        out->res.pitch2D.height = in->res.pitch2D.height;
        out->res.pitch2D.pitchInBytes = in->res.pitch2D.pitchInBytes;
        return fc_format(&in->res.pitch2D.desc, &out->res.pitch2D.format, &out->res.pitch2D.numChannels);
    default: /* mipmapped arrays are not simulated */
        return cudaErrorInvalidValue;
    }
}

FC_EXPORT cudaError_t CUDARTAPI cudaCreateTextureObject(cudaTextureObject_t *pTexObject,
                                                        const struct cudaResourceDesc *pResDesc,
                                                        const struct cudaTextureDesc *pTexDesc,
                                                        const struct cudaResourceViewDesc *pResViewDesc)
{
    FC_CTX();
    if (!pTexObject || !pResDesc || !pTexDesc)
        return fc_rt_ret(cudaErrorInvalidValue);
    if (pResViewDesc)
        return fc_rt_unsupported("cudaCreateTextureObject", cudaErrorNotSupported,
                                 "resource views are not simulated");
    CUDA_RESOURCE_DESC rd;
    cudaError_t e = fc_resource(pResDesc, &rd);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    /* the runtime's element-type read mode is the driver's integer read */
    CUDA_TEXTURE_DESC td = {
        .addressMode = {(CUaddress_mode)pTexDesc->addressMode[0], (CUaddress_mode)pTexDesc->addressMode[1],
                        (CUaddress_mode)pTexDesc->addressMode[2]},
        .filterMode = (CUfilter_mode)pTexDesc->filterMode,
        .flags = (pTexDesc->readMode == cudaReadModeElementType ? CU_TRSF_READ_AS_INTEGER : 0) |
                 (pTexDesc->normalizedCoords ? CU_TRSF_NORMALIZED_COORDINATES : 0) |
                 (pTexDesc->sRGB ? CU_TRSF_SRGB : 0),
        .maxAnisotropy = pTexDesc->maxAnisotropy,
        .borderColor = {pTexDesc->borderColor[0], pTexDesc->borderColor[1], pTexDesc->borderColor[2],
                        pTexDesc->borderColor[3]},
    };
    CUtexObject t;
    CUresult r = FC_DRV(fc_drv.cuTexObjectCreate_v5000, &t, &rd, &td, NULL);
    if (r == CUDA_SUCCESS)
        *pTexObject = t;
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaDestroyTextureObject(cudaTextureObject_t texObject)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuTexObjectDestroy_v5000, texObject));
}

FC_EXPORT cudaError_t CUDARTAPI cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject,
                                                        const struct cudaResourceDesc *pResDesc)
{
    FC_CTX();
    if (!pSurfObject || !pResDesc)
        return fc_rt_ret(cudaErrorInvalidValue);
    CUDA_RESOURCE_DESC rd;
    cudaError_t e = fc_resource(pResDesc, &rd);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUsurfObject s;
    CUresult r = FC_DRV(fc_drv.cuSurfObjectCreate_v5000, &s, &rd);
    if (r == CUDA_SUCCESS)
        *pSurfObject = s;
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuSurfObjectDestroy_v5000, surfObject));
}
