/* Copies and memsets: their modelled cost and NVIDIA's "API synchronization behavior".
 *
 * Cost: FC_COPY_LATENCY_NS plus bytes / rate, where the rate is the device's host link
 * (fc_dev_link_bw) for pinned host <-> device, its memory bandwidth (fc_dev_mem_bw) for
 * device <-> device and memsets. Pageable transfers run at a third of the link rate:
 *   - host -> device from pageable memory: the host copies into a staging buffer at half the
 *     link rate (blocking the caller for that long; the synchronous form first waits for the
 *     stream), then the DMA from staging runs on the stream at the link rate, so the caller
 *     may return before the data has landed, as documented;
 *   - device -> pageable host: one stream op at a third of the link rate, and the caller
 *     waits for it, in the Async form too.
 * Host blocking, per the documentation: synchronous pinned H2D and any D2H return after the
 * copy; synchronous D2D does not block; host-to-host copies are fully synchronous; Async
 * copies with pinned memory never block; synchronous memsets block only when the target is
 * pinned host or managed memory. Managed memory is device memory for costs. */
#include "fc_graph.h"

#include <stdlib.h>
#include <string.h>

int64_t fc_bytes_ns(size_t bytes, double rate)
{
    return (int64_t)((double)bytes * 1e9 / rate);
}

#define FC_STAGING_KEPT 4

static pthread_mutex_t fc_staging_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *p;
    size_t cap;
} fc_staging_kept[FC_STAGING_KEPT];

void *fc_staging_take(size_t n, size_t *cap)
{
    n = n ? n : 1;
    int best = -1;
    pthread_mutex_lock(&fc_staging_mu);
    for (int i = 0; i < FC_STAGING_KEPT; i++)
        if (fc_staging_kept[i].p && fc_staging_kept[i].cap >= n &&
            (best < 0 || fc_staging_kept[i].cap < fc_staging_kept[best].cap))
            best = i;
    void *p = NULL;
    if (best >= 0) {
        p = fc_staging_kept[best].p;
        *cap = fc_staging_kept[best].cap;
        fc_staging_kept[best].p = NULL;
    }
    pthread_mutex_unlock(&fc_staging_mu);
    if (!p) {
        p = malloc(n);
        if (!p)
            fc_fatal("out of host memory for a %zu-byte staging buffer", n);
        *cap = n;
    }
    return p;
}

void fc_staging_give(void *p, size_t cap)
{
    pthread_mutex_lock(&fc_staging_mu);
    for (int i = 0; i < FC_STAGING_KEPT; i++)
        if (!fc_staging_kept[i].p) {
            fc_staging_kept[i].p = p;
            fc_staging_kept[i].cap = cap;
            p = NULL;
            break;
        }
    pthread_mutex_unlock(&fc_staging_mu);
    free(p);
}

typedef enum { FC_SIDE_PAGEABLE, FC_SIDE_PINNED, FC_SIDE_DEVICE } fc_side;

static fc_side fc_classify(uintptr_t p)
{
    fc_range r;
    if (fc_mem_lookup(p, &r) != 0)
        return FC_SIDE_PAGEABLE;
    return fc_mem_is_pinned_kind(r.kind) ? FC_SIDE_PINNED : FC_SIDE_DEVICE;
}

static int fc_is_host(fc_side s)
{
    return s != FC_SIDE_DEVICE;
}

/* Submits op (its data effect set up) with the cost and host blocking that the source and
 * destination sides imply. For a pageable source, `stage` copies the source data into a
 * staging buffer and points op at it, so the caller's memory is free once this returns. */
static void fc_transfer(fc_stream *s, fc_op *op, fc_side src, fc_side dst, size_t bytes,
                        int async, void (*stage)(fc_op *, void *))
{
    if (fc_capture_add(s, op)) { /* a graph's copy reads its source when the graph runs */
        fc_op_free(op);
        return;
    }
    const fc_device_desc *d = fc_ctx_dev(s->ctx)->d;
    double link = fc_dev_link_bw(d), mem = fc_dev_mem_bw(d);
    if (fc_is_host(src) && fc_is_host(dst)) {
        fc_stream_wait(s, atomic_load(&s->submitted));
        uint64_t seq = fc_submit(s, op);
        fc_stream_wait(s, seq);
        return;
    }
    if (!fc_is_host(src) && !fc_is_host(dst)) {
        op->dur_ns = FC_COPY_LATENCY_NS + fc_bytes_ns(bytes, mem);
        fc_submit(s, op);
        return;
    }
    if (src == FC_SIDE_PAGEABLE && !fc_g.instant) {
        if (!async)
            fc_stream_wait(s, atomic_load(&s->submitted));
        int64_t staged = fc_now_ns() + fc_bytes_ns(bytes, link / 2);
        void *buf = fc_staging_take(bytes, &op->staging_cap);
        stage(op, buf);
        op->staging = buf;
        fc_sleep_until(staged);
        op->dur_ns = FC_COPY_LATENCY_NS + fc_bytes_ns(bytes, link);
        op->engine = FC_ENGINE_H2D;
        fc_submit(s, op);
        return;
    }
    op->engine = fc_is_host(src) ? FC_ENGINE_H2D : FC_ENGINE_D2H;
    int pageable = src == FC_SIDE_PAGEABLE || dst == FC_SIDE_PAGEABLE;
    op->dur_ns = FC_COPY_LATENCY_NS + fc_bytes_ns(bytes, pageable ? link / 3 : link);
    uint64_t seq = fc_submit(s, op);
    if (!async || dst == FC_SIDE_PAGEABLE)
        fc_stream_wait(s, seq);
}

void fc_copy_model(fc_op *op, fc_ctx *c, uintptr_t src, uintptr_t dst, size_t bytes)
{
    const fc_device_desc *d = fc_ctx_dev(c)->d;
    fc_side a = fc_classify(src), b = fc_classify(dst);
    if (fc_is_host(a) == fc_is_host(b)) {
        /* host-to-host copies cost the host's memcpy, not modelled (as in fc_transfer) */
        op->dur_ns = fc_is_host(a) ? 0 : FC_COPY_LATENCY_NS + fc_bytes_ns(bytes, fc_dev_mem_bw(d));
        return;
    }
    int pageable = a == FC_SIDE_PAGEABLE || b == FC_SIDE_PAGEABLE;
    double link = fc_dev_link_bw(d);
    op->engine = fc_is_host(a) ? FC_ENGINE_H2D : FC_ENGINE_D2H;
    op->dur_ns = FC_COPY_LATENCY_NS + fc_bytes_ns(bytes, pageable ? link / 3 : link);
}

static void fc_stage_1d(fc_op *op, void *buf)
{
    memcpy(buf, op->u.copy.src, op->u.copy.n);
    op->u.copy.src = buf;
}

/* Which side an entry point names as device memory; unified copies (cuMemcpy) name none. */
enum { FC_DEV_NONE = 0, FC_DEV_SRC = 1, FC_DEV_DST = 2 };

/* Whether [p, p+n) lies inside one device-side allocation, as a device pointer argument must. */
static int fc_valid_device_span(uintptr_t p, size_t n)
{
    fc_range r;
    return fc_mem_lookup(p, &r) == 0 && !fc_mem_is_pinned_kind(r.kind) &&
           n <= r.base + r.size - p;
}

static CUresult fc_memcpy(uintptr_t dst, uintptr_t src, size_t n, int dev_args, CUstream h,
                          int pt, int async)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (n == 0)
        return CUDA_SUCCESS;
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    if (((dev_args & FC_DEV_SRC) && !fc_valid_device_span(src, n)) ||
        ((dev_args & FC_DEV_DST) && !fc_valid_device_span(dst, n)))
        return CUDA_ERROR_INVALID_VALUE;
    fc_op *op = fc_op_new(FC_OP_COPY);
    op->u.copy.dst = (void *)dst;
    op->u.copy.src = (const void *)src;
    op->u.copy.n = n;
    fc_transfer(s, op, fc_classify(src), fc_classify(dst), n, async, fc_stage_1d);
    return CUDA_SUCCESS;
}

/* ---- 2D / 3D ------------------------------------------------------------------------- */

static uintptr_t fc_2d_base(CUmemorytype t, const void *host, CUdeviceptr dev)
{
    return t == CU_MEMORYTYPE_HOST ? (uintptr_t)host : (uintptr_t)dev;
}

static void fc_stage_2d(fc_op *op, void *buf)
{
    CUDA_MEMCPY2D *p = &op->u.copy2d.p;
    const char *src = (const char *)fc_2d_base(p->srcMemoryType, p->srcHost, p->srcDevice) +
                      p->srcY * p->srcPitch + p->srcXInBytes;
    for (size_t r = 0; r < p->Height; r++)
        memcpy((char *)buf + r * p->WidthInBytes, src + r * p->srcPitch, p->WidthInBytes);
    p->srcMemoryType = CU_MEMORYTYPE_HOST;
    p->srcHost = buf;
    p->srcXInBytes = p->srcY = 0;
    p->srcPitch = p->WidthInBytes;
}

static CUresult fc_memcpy2d(const CUDA_MEMCPY2D *pa, CUstream h, int pt, int async)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pa)
        return CUDA_ERROR_INVALID_VALUE;
    /* an array side is its memory, rows packed (fc_array.c) */
    CUDA_MEMCPY2D q = *pa;
    const CUDA_MEMCPY2D *p = &q;
    if ((r = fc_array_side(&q.srcMemoryType, q.srcArray, &q.srcDevice, &q.srcPitch,
                           q.srcXInBytes, q.srcY, 0, q.WidthInBytes, q.Height, 1, NULL)) ||
        (r = fc_array_side(&q.dstMemoryType, q.dstArray, &q.dstDevice, &q.dstPitch,
                           q.dstXInBytes, q.dstY, 0, q.WidthInBytes, q.Height, 1, NULL)))
        return r;
    if ((p->Height > 1 && (p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!p->WidthInBytes || !p->Height)
        return CUDA_SUCCESS;
    uintptr_t src = fc_2d_base(p->srcMemoryType, p->srcHost, p->srcDevice);
    uintptr_t dst = fc_2d_base(p->dstMemoryType, p->dstHost, p->dstDevice);
    if (!src || !dst)
        return CUDA_ERROR_INVALID_VALUE;
    fc_op *op = fc_op_new(FC_OP_COPY2D);
    op->u.copy2d.p = *p;
    fc_transfer(s, op, fc_classify(src), fc_classify(dst), p->WidthInBytes * p->Height, async,
                fc_stage_2d);
    return CUDA_SUCCESS;
}

CUDA_MEMCPY2D fc_copy3d_slice(const CUDA_MEMCPY3D *p, size_t z)
{
    return (CUDA_MEMCPY2D){
        .srcXInBytes = p->srcXInBytes, .srcY = (p->srcZ + z) * p->srcHeight + p->srcY,
        .srcMemoryType = p->srcMemoryType, .srcHost = p->srcHost, .srcDevice = p->srcDevice,
        .srcArray = p->srcArray, .srcPitch = p->srcPitch, .dstXInBytes = p->dstXInBytes,
        .dstY = (p->dstZ + z) * p->dstHeight + p->dstY, .dstMemoryType = p->dstMemoryType,
        .dstHost = p->dstHost, .dstDevice = p->dstDevice, .dstArray = p->dstArray,
        .dstPitch = p->dstPitch, .WidthInBytes = p->WidthInBytes, .Height = p->Height};
}

/* A 3D copy is a 2D copy per slice (rows of a slice are srcHeight/dstHeight apart). */
static CUresult fc_memcpy3d(const CUDA_MEMCPY3D *p, CUstream h, int pt, int async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->srcLOD || p->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    /* an array side becomes its memory, slices of the array's rows (fc_array.c) */
    CUDA_MEMCPY3D a = *p;
    CUresult r;
    if ((r = fc_array_side(&a.srcMemoryType, a.srcArray, &a.srcDevice, &a.srcPitch,
                           a.srcXInBytes, a.srcY, a.srcZ, a.WidthInBytes, a.Height, a.Depth,
                           &a.srcHeight)) ||
        (r = fc_array_side(&a.dstMemoryType, a.dstArray, &a.dstDevice, &a.dstPitch,
                           a.dstXInBytes, a.dstY, a.dstZ, a.WidthInBytes, a.Height, a.Depth,
                           &a.dstHeight)))
        return r;
    /* Whole slices on both sides are consecutive rows: one 2D copy, so the copy is one
     * operation (as the trace sees one call) */
    if (a.Depth > 1 && a.srcHeight == a.Height && a.dstHeight == a.Height) {
        CUDA_MEMCPY2D q = fc_copy3d_slice(&a, 0);
        q.Height *= a.Depth;
        return fc_memcpy2d(&q, h, pt, async);
    }
    for (size_t z = 0; z < a.Depth; z++) {
        CUDA_MEMCPY2D q = fc_copy3d_slice(&a, z);
        CUresult r = fc_memcpy2d(&q, h, pt, async);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}

/* The 32-bit ABI (CUDA 2.x) forms of the descriptors, widened. */
static CUDA_MEMCPY2D fc_widen_2d(const CUDA_MEMCPY2D_v1 *p)
{
    return (CUDA_MEMCPY2D){
        .srcXInBytes = p->srcXInBytes, .srcY = p->srcY, .srcMemoryType = p->srcMemoryType,
        .srcHost = p->srcHost, .srcDevice = p->srcDevice, .srcArray = p->srcArray,
        .srcPitch = p->srcPitch, .dstXInBytes = p->dstXInBytes, .dstY = p->dstY,
        .dstMemoryType = p->dstMemoryType, .dstHost = p->dstHost, .dstDevice = p->dstDevice,
        .dstArray = p->dstArray, .dstPitch = p->dstPitch, .WidthInBytes = p->WidthInBytes,
        .Height = p->Height};
}

/* A CUDA_MEMCPY3D from any descriptor with its fields (the 32-bit ABI's, the peer one's). */
#define FC_AS_COPY3D(p)                                                                         \
    ((CUDA_MEMCPY3D){                                                                          \
        .srcXInBytes = (p)->srcXInBytes, .srcY = (p)->srcY, .srcZ = (p)->srcZ,                 \
        .srcLOD = (p)->srcLOD, .srcMemoryType = (p)->srcMemoryType, .srcHost = (p)->srcHost,   \
        .srcDevice = (p)->srcDevice, .srcArray = (p)->srcArray, .srcPitch = (p)->srcPitch,     \
        .srcHeight = (p)->srcHeight, .dstXInBytes = (p)->dstXInBytes, .dstY = (p)->dstY,       \
        .dstZ = (p)->dstZ, .dstLOD = (p)->dstLOD, .dstMemoryType = (p)->dstMemoryType,         \
        .dstHost = (p)->dstHost, .dstDevice = (p)->dstDevice, .dstArray = (p)->dstArray,       \
        .dstPitch = (p)->dstPitch, .dstHeight = (p)->dstHeight,                                \
        .WidthInBytes = (p)->WidthInBytes, .Height = (p)->Height, .Depth = (p)->Depth})

static CUDA_MEMCPY3D fc_widen_3d(const CUDA_MEMCPY3D_v1 *p) { return FC_AS_COPY3D(p); }

static CUresult fc_memcpy2d_v1(const CUDA_MEMCPY2D_v1 *p, CUstream h, int async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY2D q = fc_widen_2d(p);
    return fc_memcpy2d(&q, h, 0, async);
}

static CUresult fc_memcpy3d_v1(const CUDA_MEMCPY3D_v1 *p, CUstream h, int async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMCPY3D q = fc_widen_3d(p);
    return fc_memcpy3d(&q, h, 0, async);
}

/* ---- peer ---------------------------------------------------------------------------- */

/* A synchronous peer copy is "serialized with respect to all pending and future asynchronous
 * work" of the destination too (cudaMemcpyPeer's documentation): the destination context's
 * legacy stream waits for the copy, which runs on the caller's stream. */
static CUresult fc_peer_order(CUresult r, CUcontext dctx, CUstream h, int pt, int async)
{
    fc_stream *s;
    if (r != CUDA_SUCCESS || async || fc_g.instant || !dctx || !dctx->legacy ||
        fc_stream_resolve(h, pt, &s) != CUDA_SUCCESS || s->ctx == dctx)
        return r;
    fc_op *op = fc_op_new(FC_OP_WAIT);
    fc_op_add_dep(op, s, atomic_load(&s->submitted));
    fc_submit(dctx->legacy, op);
    return r;
}

static CUresult fc_memcpy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                               CUcontext sctx, size_t n, CUstream h, int pt, int async)
{
    if (!dctx || !sctx || dctx->magic != FC_CTX_MAGIC || sctx->magic != FC_CTX_MAGIC)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* Unified addresses make a peer copy an ordinary device copy in this simulation. */
    return fc_peer_order(fc_memcpy(dst, src, n, FC_DEV_SRC | FC_DEV_DST, h, pt, async), dctx, h, pt,
                         async);
}

/* A 3D copy between contexts: the peer descriptor's contexts stand where the plain one's reserved
 * fields are, and unified addresses make it an ordinary 3D copy here (as fc_memcpy_peer). */
static CUresult fc_memcpy3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream h, int pt, int async)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const CUcontext ctx[2] = {p->srcMemoryType == CU_MEMORYTYPE_DEVICE ? p->srcContext : NULL,
                              p->dstMemoryType == CU_MEMORYTYPE_DEVICE ? p->dstContext : NULL};
    for (int k = 0; k < 2; k++)
        if (ctx[k] && ctx[k]->magic != FC_CTX_MAGIC)
            return CUDA_ERROR_INVALID_CONTEXT;
    CUDA_MEMCPY3D q = FC_AS_COPY3D(p);
    return fc_peer_order(fc_memcpy3d(&q, h, pt, async), ctx[1], h, pt, async);
}

/* ---- memsets ------------------------------------------------------------------------- */

/* height rows of count elements of elem bytes, pitch bytes apart (1D: height 1). */
static CUresult fc_memset(CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem,
                          size_t count, size_t height, CUstream h, int pt, int async)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (!count || !height)
        return CUDA_SUCCESS;
    if (!dst || dst % elem || (height > 1 && pitch < count * elem))
        return CUDA_ERROR_INVALID_VALUE;
    fc_range rg;
    size_t span = (height - 1) * pitch + count * elem;
    if (fc_mem_lookup((uintptr_t)dst, &rg) != 0 || span > rg.base + rg.size - (uintptr_t)dst)
        return CUDA_ERROR_INVALID_VALUE;
    fc_op *op = fc_op_new(FC_OP_MEMSET);
    op->u.memset.dst = (char *)(uintptr_t)dst;
    op->u.memset.value = value;
    op->u.memset.elem = elem;
    op->u.memset.count = count;
    op->u.memset.pitch = pitch;
    op->u.memset.height = height;
    op->dur_ns = FC_COPY_LATENCY_NS +
                 fc_bytes_ns(count * elem * height, fc_dev_mem_bw(fc_ctx_dev(s->ctx)->d));
    uint64_t seq = fc_submit(s, op);
    if (!async && (fc_mem_is_pinned_kind(rg.kind) || rg.kind == FC_MEM_MANAGED))
        fc_stream_wait(s, seq);
    return CUDA_SUCCESS;
}

/* ---- entry points -------------------------------------------------------------------- */

typedef uintptr_t up;

FC_DEF(cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n),
       fc_memcpy(d, s, n, FC_DEV_NONE, NULL, 0, 0))
FC_DEF(cuMemcpy_ptds, (CUdeviceptr d, CUdeviceptr s, size_t n),
       fc_memcpy(d, s, n, FC_DEV_NONE, NULL, 1, 0))
FC_DEF(cuMemcpyAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h),
       fc_memcpy(d, s, n, FC_DEV_NONE, h, 0, 1))
FC_DEF(cuMemcpyAsync_ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h),
       fc_memcpy(d, s, n, FC_DEV_NONE, h, 1, 1))

FC_DEF(cuMemcpyPeer, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n),
       fc_memcpy_peer(d, dc, s, sc, n, NULL, 0, 0))
FC_DEF(cuMemcpyPeer_ptds, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n),
       fc_memcpy_peer(d, dc, s, sc, n, NULL, 1, 0))
FC_DEF(cuMemcpyPeerAsync,
       (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream h),
       fc_memcpy_peer(d, dc, s, sc, n, h, 0, 1))
FC_DEF(cuMemcpyPeerAsync_ptsz,
       (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream h),
       fc_memcpy_peer(d, dc, s, sc, n, h, 1, 1))

FC_DEF(cuMemcpyHtoD, (CUdeviceptr_v1 d, const void *s, unsigned n),
       fc_memcpy(d, (up)s, n, FC_DEV_DST, NULL, 0, 0))
FC_DEF(cuMemcpyHtoD_v2, (CUdeviceptr d, const void *s, size_t n),
       fc_memcpy(d, (up)s, n, FC_DEV_DST, NULL, 0, 0))
FC_DEF(cuMemcpyHtoD_v2_ptds, (CUdeviceptr d, const void *s, size_t n),
       fc_memcpy(d, (up)s, n, FC_DEV_DST, NULL, 1, 0))
FC_DEF(cuMemcpyDtoH, (void *d, CUdeviceptr_v1 s, unsigned n),
       fc_memcpy((up)d, s, n, FC_DEV_SRC, NULL, 0, 0))
FC_DEF(cuMemcpyDtoH_v2, (void *d, CUdeviceptr s, size_t n),
       fc_memcpy((up)d, s, n, FC_DEV_SRC, NULL, 0, 0))
FC_DEF(cuMemcpyDtoH_v2_ptds, (void *d, CUdeviceptr s, size_t n),
       fc_memcpy((up)d, s, n, FC_DEV_SRC, NULL, 1, 0))
FC_DEF(cuMemcpyDtoD, (CUdeviceptr_v1 d, CUdeviceptr_v1 s, unsigned n),
       fc_memcpy(d, s, n, FC_DEV_SRC | FC_DEV_DST, NULL, 0, 0))
FC_DEF(cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n),
       fc_memcpy(d, s, n, FC_DEV_SRC | FC_DEV_DST, NULL, 0, 0))
FC_DEF(cuMemcpyDtoD_v2_ptds, (CUdeviceptr d, CUdeviceptr s, size_t n),
       fc_memcpy(d, s, n, FC_DEV_SRC | FC_DEV_DST, NULL, 1, 0))

FC_DEF(cuMemcpyHtoDAsync, (CUdeviceptr_v1 d, const void *s, unsigned n, CUstream h),
       fc_memcpy(d, (up)s, n, FC_DEV_DST, h, 0, 1))
FC_DEF(cuMemcpyHtoDAsync_v2, (CUdeviceptr d, const void *s, size_t n, CUstream h),
       fc_memcpy(d, (up)s, n, FC_DEV_DST, h, 0, 1))
FC_DEF(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr d, const void *s, size_t n, CUstream h),
       fc_memcpy(d, (up)s, n, FC_DEV_DST, h, 1, 1))
FC_DEF(cuMemcpyDtoHAsync, (void *d, CUdeviceptr_v1 s, unsigned n, CUstream h),
       fc_memcpy((up)d, s, n, FC_DEV_SRC, h, 0, 1))
FC_DEF(cuMemcpyDtoHAsync_v2, (void *d, CUdeviceptr s, size_t n, CUstream h),
       fc_memcpy((up)d, s, n, FC_DEV_SRC, h, 0, 1))
FC_DEF(cuMemcpyDtoHAsync_v2_ptsz, (void *d, CUdeviceptr s, size_t n, CUstream h),
       fc_memcpy((up)d, s, n, FC_DEV_SRC, h, 1, 1))
FC_DEF(cuMemcpyDtoDAsync, (CUdeviceptr_v1 d, CUdeviceptr_v1 s, unsigned n, CUstream h),
       fc_memcpy(d, s, n, FC_DEV_SRC | FC_DEV_DST, h, 0, 1))
FC_DEF(cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h),
       fc_memcpy(d, s, n, FC_DEV_SRC | FC_DEV_DST, h, 0, 1))
FC_DEF(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h),
       fc_memcpy(d, s, n, FC_DEV_SRC | FC_DEV_DST, h, 1, 1))

FC_DEF(cuMemcpy2D, (const CUDA_MEMCPY2D_v1 *p), fc_memcpy2d_v1(p, NULL, 0))
FC_DEF(cuMemcpy2DUnaligned, (const CUDA_MEMCPY2D_v1 *p), fc_memcpy2d_v1(p, NULL, 0))
FC_DEF(cuMemcpy2DAsync, (const CUDA_MEMCPY2D_v1 *p, CUstream h), fc_memcpy2d_v1(p, h, 1))
FC_DEF(cuMemcpy3D, (const CUDA_MEMCPY3D_v1 *p), fc_memcpy3d_v1(p, NULL, 0))
FC_DEF(cuMemcpy3DAsync, (const CUDA_MEMCPY3D_v1 *p, CUstream h), fc_memcpy3d_v1(p, h, 1))
FC_DEF(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *p), fc_memcpy2d(p, NULL, 0, 0))
FC_DEF(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *p), fc_memcpy2d(p, NULL, 1, 0))
FC_DEF(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *p), fc_memcpy2d(p, NULL, 0, 0))
FC_DEF(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *p), fc_memcpy2d(p, NULL, 1, 0))
FC_DEF(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *p, CUstream h), fc_memcpy2d(p, h, 0, 1))
FC_DEF(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *p, CUstream h), fc_memcpy2d(p, h, 1, 1))
FC_DEF(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *p), fc_memcpy3d(p, NULL, 0, 0))
FC_DEF(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *p), fc_memcpy3d(p, NULL, 1, 0))
FC_DEF(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *p, CUstream h), fc_memcpy3d(p, h, 0, 1))
FC_DEF(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *p, CUstream h), fc_memcpy3d(p, h, 1, 1))
FC_DEF(cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *p), fc_memcpy3d_peer(p, NULL, 0, 0))
FC_DEF(cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *p), fc_memcpy3d_peer(p, NULL, 1, 0))
FC_DEF(cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *p, CUstream h), fc_memcpy3d_peer(p, h, 0, 1))
FC_DEF(cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER *p, CUstream h),
       fc_memcpy3d_peer(p, h, 1, 1))

FC_DEF(cuMemsetD8, (CUdeviceptr_v1 d, unsigned char v, unsigned n),
       fc_memset(d, 0, v, 1, n, 1, NULL, 0, 0))
FC_DEF(cuMemsetD8_v2, (CUdeviceptr d, unsigned char v, size_t n),
       fc_memset(d, 0, v, 1, n, 1, NULL, 0, 0))
FC_DEF(cuMemsetD8_v2_ptds, (CUdeviceptr d, unsigned char v, size_t n),
       fc_memset(d, 0, v, 1, n, 1, NULL, 1, 0))
FC_DEF(cuMemsetD16, (CUdeviceptr_v1 d, unsigned short v, unsigned n),
       fc_memset(d, 0, v, 2, n, 1, NULL, 0, 0))
FC_DEF(cuMemsetD16_v2, (CUdeviceptr d, unsigned short v, size_t n),
       fc_memset(d, 0, v, 2, n, 1, NULL, 0, 0))
FC_DEF(cuMemsetD16_v2_ptds, (CUdeviceptr d, unsigned short v, size_t n),
       fc_memset(d, 0, v, 2, n, 1, NULL, 1, 0))
FC_DEF(cuMemsetD32, (CUdeviceptr_v1 d, unsigned v, unsigned n),
       fc_memset(d, 0, v, 4, n, 1, NULL, 0, 0))
FC_DEF(cuMemsetD32_v2, (CUdeviceptr d, unsigned v, size_t n),
       fc_memset(d, 0, v, 4, n, 1, NULL, 0, 0))
FC_DEF(cuMemsetD32_v2_ptds, (CUdeviceptr d, unsigned v, size_t n),
       fc_memset(d, 0, v, 4, n, 1, NULL, 1, 0))
FC_DEF(cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream h),
       fc_memset(d, 0, v, 1, n, 1, h, 0, 1))
FC_DEF(cuMemsetD8Async_ptsz, (CUdeviceptr d, unsigned char v, size_t n, CUstream h),
       fc_memset(d, 0, v, 1, n, 1, h, 1, 1))
FC_DEF(cuMemsetD16Async, (CUdeviceptr d, unsigned short v, size_t n, CUstream h),
       fc_memset(d, 0, v, 2, n, 1, h, 0, 1))
FC_DEF(cuMemsetD16Async_ptsz, (CUdeviceptr d, unsigned short v, size_t n, CUstream h),
       fc_memset(d, 0, v, 2, n, 1, h, 1, 1))
FC_DEF(cuMemsetD32Async, (CUdeviceptr d, unsigned v, size_t n, CUstream h),
       fc_memset(d, 0, v, 4, n, 1, h, 0, 1))
FC_DEF(cuMemsetD32Async_ptsz, (CUdeviceptr d, unsigned v, size_t n, CUstream h),
       fc_memset(d, 0, v, 4, n, 1, h, 1, 1))

FC_DEF(cuMemsetD2D8, (CUdeviceptr_v1 d, unsigned p, unsigned char v, unsigned w, unsigned ht),
       fc_memset(d, p, v, 1, w, ht, NULL, 0, 0))
FC_DEF(cuMemsetD2D8_v2, (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t ht),
       fc_memset(d, p, v, 1, w, ht, NULL, 0, 0))
FC_DEF(cuMemsetD2D8_v2_ptds, (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t ht),
       fc_memset(d, p, v, 1, w, ht, NULL, 1, 0))
FC_DEF(cuMemsetD2D16, (CUdeviceptr_v1 d, unsigned p, unsigned short v, unsigned w, unsigned ht),
       fc_memset(d, p, v, 2, w, ht, NULL, 0, 0))
FC_DEF(cuMemsetD2D16_v2, (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t ht),
       fc_memset(d, p, v, 2, w, ht, NULL, 0, 0))
FC_DEF(cuMemsetD2D16_v2_ptds, (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t ht),
       fc_memset(d, p, v, 2, w, ht, NULL, 1, 0))
FC_DEF(cuMemsetD2D32, (CUdeviceptr_v1 d, unsigned p, unsigned v, unsigned w, unsigned ht),
       fc_memset(d, p, v, 4, w, ht, NULL, 0, 0))
FC_DEF(cuMemsetD2D32_v2, (CUdeviceptr d, size_t p, unsigned v, size_t w, size_t ht),
       fc_memset(d, p, v, 4, w, ht, NULL, 0, 0))
FC_DEF(cuMemsetD2D32_v2_ptds, (CUdeviceptr d, size_t p, unsigned v, size_t w, size_t ht),
       fc_memset(d, p, v, 4, w, ht, NULL, 1, 0))
FC_DEF(cuMemsetD2D8Async, (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t ht, CUstream h),
       fc_memset(d, p, v, 1, w, ht, h, 0, 1))
FC_DEF(cuMemsetD2D8Async_ptsz,
       (CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t ht, CUstream h),
       fc_memset(d, p, v, 1, w, ht, h, 1, 1))
FC_DEF(cuMemsetD2D16Async,
       (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t ht, CUstream h),
       fc_memset(d, p, v, 2, w, ht, h, 0, 1))
FC_DEF(cuMemsetD2D16Async_ptsz,
       (CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t ht, CUstream h),
       fc_memset(d, p, v, 2, w, ht, h, 1, 1))
FC_DEF(cuMemsetD2D32Async, (CUdeviceptr d, size_t p, unsigned v, size_t w, size_t ht, CUstream h),
       fc_memset(d, p, v, 4, w, ht, h, 0, 1))
FC_DEF(cuMemsetD2D32Async_ptsz,
       (CUdeviceptr d, size_t p, unsigned v, size_t w, size_t ht, CUstream h),
       fc_memset(d, p, v, 4, w, ht, h, 1, 1))
