/* The category recorders (see ct_record.h). */
#define _GNU_SOURCE
#include "ct_record.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_clock.h"
#include "ct_device.h"
#include "ct_fns.h"
#include "ct_gpu.h"
#include "ct_maps.h"
#include "ct_real.h"
#include "ct_shlib.h"
#include "ct_stack.h"
#include "ct_wake.h"

/* ---- context, device, memory kinds ---- */

/* The calling thread's current context and its device ordinal (cached per thread). */
static void ct_current(ct_thread *th, uint64_t *ctx, uint32_t *dev)
{
    CUcontext cur = NULL;
    if (CT_REAL(cuCtxGetCurrent)(&cur) != CUDA_SUCCESS)
        cur = NULL;
    *ctx = (uint64_t)(uintptr_t)cur;
    if (*ctx != th->cache_ctx) {
        CUdevice d = 0;
        if (!cur || CT_REAL(cuCtxGetDevice)(&d) != CUDA_SUCCESS)
            d = 0;
        th->cache_ctx = *ctx;
        th->cache_dev = (uint32_t)d;
        if (cur)
            ct_device_seen(th, (uint32_t)d);
    }
    *dev = th->cache_dev;
}

static unsigned ct_memkind_of_alloc(unsigned kind)
{
    switch (kind) {
    case CT_ALLOC_PINNED:
    case CT_ALLOC_HOST_REGISTER:
        return CT_MEMKIND_PINNED;
    case CT_ALLOC_MANAGED:
        return CT_MEMKIND_MANAGED;
    default:
        return CT_MEMKIND_DEVICE;
    }
}

/* Where addr lives: from what cutrace saw allocated or registered, else from the driver
 * (memory it does not know is ordinary pageable host memory). */
static unsigned ct_memkind(uint64_t addr)
{
    ct_range r;
    if (ct_rmap_find(&ct_mem_ranges, addr, &r))
        return ct_memkind_of_alloc(r.kind);
    unsigned type = 0;
    if (CT_REAL(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr) !=
        CUDA_SUCCESS)
        return CT_MEMKIND_PAGEABLE;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        return CT_MEMKIND_PINNED;
    case CU_MEMORYTYPE_ARRAY:
        return CT_MEMKIND_ARRAY;
    default: {
        int managed = 0;
        if (CT_REAL(cuPointerGetAttribute)(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, addr) ==
                CUDA_SUCCESS && managed)
            return CT_MEMKIND_MANAGED;
        return CT_MEMKIND_DEVICE;
    }
    }
}

static int ct_is_host(unsigned kind)
{
    return kind == CT_MEMKIND_PAGEABLE || kind == CT_MEMKIND_PINNED;
}

/* The call site of a category that wants one (allocations, copies, sets, syncs), unless
 * `all` mode captured it already in ct_leave. */
static uint32_t ct_site(ct_call *c)
{
    if (ct_opt.stacks && !c->stack)
        c->stack = ct_stack_capture();
    return c->stack;
}

/* ---- kernel names ---- */

/* function id (demangled) | symbol id (mangled, 0 if the same) << 32 */
static uint64_t ct_names_of(const char *mangled)
{
    uint32_t sym = ct_intern(mangled, strlen(mangled));
    uint32_t fn = ct_intern_demangled(mangled);
    return fn == sym ? fn : fn | (uint64_t)sym << 32;
}

/* Names of a CUfunction or CUkernel handle: cached from cuModuleGetFunction /
 * cuLibraryGetKernel / cuKernelGetFunction, else asked once from the driver. */
static uint64_t ct_kernel_ids(uint64_t handle)
{
    uint64_t v;
    if (ct_hmap_get(&ct_kernel_names, handle, &v))
        return v;
    const char *name = NULL;
    if (CT_REAL(cuFuncGetName)(&name, (CUfunction)(uintptr_t)handle) != CUDA_SUCCESS || !name)
        if (CT_REAL(cuKernelGetName)(&name, (CUkernel)(uintptr_t)handle) != CUDA_SUCCESS)
            name = NULL;
    char unknown[48];
    if (!name) {
        snprintf(unknown, sizeof unknown, "<kernel 0x%llx>", (unsigned long long)handle);
        name = unknown;
    }
    v = ct_names_of(name);
    if (handle)
        ct_hmap_put(&ct_kernel_names, handle, v);
    return v;
}

void ct_on_name(ct_call *c, CUresult r, uint64_t handle, const char *name)
{
    if (r != CUDA_SUCCESS || !handle || !name)
        return;
    uint64_t known;
    /* a handle not seen before comes from a module just loaded, by a library perhaps loaded
     * since the last look (cuBLAS); a program looking the same kernel up again costs no look */
    int seen = ct_hmap_get(&ct_kernel_names, handle, &known);
    ct_hmap_put(&ct_kernel_names, handle, ct_names_of(name));
    if (!seen && c->th)
        ct_shlib_scan(c->th);
}

void ct_on_kernel_function(ct_call *c, CUresult r, uint64_t func, uint64_t kernel)
{
    (void)c;
    if (r == CUDA_SUCCESS && func && kernel)
        ct_hmap_put(&ct_kernel_names, func, ct_kernel_ids(kernel));
}

/* ---- launches ---- */

static void ct_launch_record(ct_call *c, CUresult r, uint64_t names, const unsigned g[3],
                             const unsigned b[3], unsigned shared, uint64_t stream)
{
    uint64_t ctx;
    uint32_t dev;
    ct_current(c->th, &ctx, &dev);
    ct_rec_launch *l = ct_emit_begin(c, CT_REC_LAUNCH, sizeof *l);
    if (l) {
        *l = (ct_rec_launch){.corr = c->corr,
                             .function = (uint32_t)names,
                             .symbol = (uint32_t)(names >> 32),
                             .grid = {g[0], g[1], g[2]},
                             .block = {b[0], b[1], b[2]},
                             .shared_bytes = shared,
                             .stream = stream,
                             .context = ctx,
                             .device = dev,
                             .flags = c->captured | ct_gpu_untimed(c, r, CT_LAUNCH_UNTIMED)};
        ct_emit_end(c);
    }
    ct_gpu_end(c, r, CT_GPU_KERNEL, dev, 0);
}

void ct_on_launch(ct_call *c, CUresult r, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, unsigned shared, uint64_t stream)
{
    if (!c->th)
        return;
    unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    ct_launch_record(c, r, ct_kernel_ids((uint64_t)(uintptr_t)f), g, b, shared, stream);
}

void ct_on_launch_ex(ct_call *c, CUresult r, const CUlaunchConfig *cfg, CUfunction f,
                     uint64_t stream)
{
    if (!c->th || !cfg)
        return;
    unsigned g[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
    unsigned b[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
    ct_launch_record(c, r, ct_kernel_ids((uint64_t)(uintptr_t)f), g, b, cfg->sharedMemBytes,
                     stream);
}

void ct_on_graph_launch(ct_call *c, CUresult r, CUgraphExec g, uint64_t stream)
{
    (void)g;
    if (!c->th)
        return;
    static const char graph[] = "[CUDA graph]";
    static uint32_t graph_id;
    if (!__atomic_load_n(&graph_id, __ATOMIC_RELAXED))
        __atomic_store_n(&graph_id, ct_intern(graph, sizeof graph - 1), __ATOMIC_RELAXED);
    unsigned zero[3] = {0, 0, 0};
    ct_launch_record(c, r, __atomic_load_n(&graph_id, __ATOMIC_RELAXED), zero, zero, 0, stream);
}

/* ---- copies and sets ---- */

/* Whether a copy's call returns only once the copy has completed, per NVIDIA's "API
 * synchronization behavior": host to host always; an Async copy when it goes to pageable
 * memory; a synchronous one when it goes to host memory or comes from pinned memory (not from
 * pageable memory, which returns once staged, nor device to device). */
static int ct_copy_waited(unsigned flags, unsigned src_kind, unsigned dst_kind)
{
    if (ct_is_host(src_kind) && ct_is_host(dst_kind))
        return 1;
    if (flags & CT_COPY_ASYNC)
        return dst_kind == CT_MEMKIND_PAGEABLE;
    return ct_is_host(dst_kind) || src_kind == CT_MEMKIND_PINNED;
}

static void ct_copy_record(ct_call *c, CUresult r, unsigned op, unsigned dir, unsigned src_kind,
                           unsigned dst_kind, uint64_t bytes, uint64_t stream, unsigned flags)
{
    uint64_t ctx;
    uint32_t dev;
    ct_current(c->th, &ctx, &dev);
    ct_site(c);
    /* The writer adds the SYNC record of a copy the host waited for (ct_copy_sync). */
    ct_rec_copy *k = ct_emit_begin(c, CT_REC_COPY, sizeof *k);
    if (k) {
        *k = (ct_rec_copy){.corr = c->corr,
                           .op = op,
                           .dir = dir,
                           .bytes = bytes,
                           .src_kind = src_kind,
                           .dst_kind = dst_kind,
                           .flags = flags | (c->captured ? CT_COPY_CAPTURED : 0) |
                                    ct_gpu_untimed(c, r, CT_COPY_UNTIMED),
                           .stream = stream,
                           .device = dev};
        ct_emit_end(c);
    }
    if (op == CT_COPY_MEMSET)
        ct_gpu_end(c, r, CT_GPU_MEMSET, dev, 0);
    else
        ct_gpu_end(c, r, CT_GPU_MEMCPY, dev, ct_copy_waited(flags, src_kind, dst_kind));
}

static unsigned ct_dir_of(unsigned src, unsigned dst)
{
    int sh = ct_is_host(src), dh = ct_is_host(dst);
    return sh && dh ? CT_DIR_HTOH : sh ? CT_DIR_HTOD : dh ? CT_DIR_DTOH : CT_DIR_DTOD;
}

void ct_on_copy(ct_call *c, CUresult r, unsigned dir, uint64_t dst, uint64_t src, uint64_t bytes,
                uint64_t stream, unsigned flags)
{
    if (!c->th)
        return;
    unsigned sk, dk;
    switch (dir) {
    case CT_DIR_HTOD:
        sk = ct_memkind(src);
        dk = CT_MEMKIND_DEVICE;
        break;
    case CT_DIR_DTOH:
        sk = CT_MEMKIND_DEVICE;
        dk = ct_memkind(dst);
        break;
    case CT_DIR_DTOD:
    case CT_DIR_PEER:
        sk = dk = CT_MEMKIND_DEVICE;
        break;
    default: /* unified addressing: the pointers say */
        sk = ct_memkind(src);
        dk = ct_memkind(dst);
        dir = ct_dir_of(sk, dk);
    }
    ct_copy_record(c, r, CT_COPY_MEMCPY, dir, sk, dk, bytes, stream, flags);
}

static unsigned ct_side_kind(CUmemorytype t, const void *host, uint64_t dev)
{
    switch (t) {
    case CU_MEMORYTYPE_HOST:
        return ct_memkind((uint64_t)(uintptr_t)host);
    case CU_MEMORYTYPE_ARRAY:
        return CT_MEMKIND_ARRAY;
    case CU_MEMORYTYPE_UNIFIED:
        return ct_memkind(dev);
    default:
        return CT_MEMKIND_DEVICE;
    }
}

static void ct_copy_nd(ct_call *c, CUresult r, unsigned sk, unsigned dk, uint64_t bytes,
                       uint64_t stream, unsigned flags)
{
    unsigned dir = sk == CT_MEMKIND_ARRAY || dk == CT_MEMKIND_ARRAY
                       ? ct_dir_of(sk == CT_MEMKIND_ARRAY ? CT_MEMKIND_DEVICE : sk,
                                   dk == CT_MEMKIND_ARRAY ? CT_MEMKIND_DEVICE : dk)
                       : ct_dir_of(sk, dk);
    ct_copy_record(c, r, CT_COPY_MEMCPY, dir, sk, dk, bytes, stream, flags);
}

void ct_on_copy2d(ct_call *c, CUresult r, const CUDA_MEMCPY2D *p, uint64_t stream,
                  unsigned flags)
{
    if (!c->th || !p)
        return;
    ct_copy_nd(c, r, ct_side_kind(p->srcMemoryType, p->srcHost, p->srcDevice),
               ct_side_kind(p->dstMemoryType, p->dstHost, p->dstDevice),
               (uint64_t)p->WidthInBytes * p->Height, stream, flags | CT_COPY_2D);
}

void ct_on_copy3d(ct_call *c, CUresult r, const CUDA_MEMCPY3D *p, uint64_t stream,
                  unsigned flags)
{
    if (!c->th || !p)
        return;
    ct_copy_nd(c, r, ct_side_kind(p->srcMemoryType, p->srcHost, p->srcDevice),
               ct_side_kind(p->dstMemoryType, p->dstHost, p->dstDevice),
               (uint64_t)p->WidthInBytes * p->Height * (p->Depth ? p->Depth : 1), stream,
               flags | CT_COPY_3D);
}

void ct_on_set(ct_call *c, CUresult r, uint64_t dst, uint64_t bytes, uint64_t stream,
               unsigned flags)
{
    if (!c->th)
        return;
    unsigned dk = ct_memkind(dst);
    ct_copy_record(c, r, CT_COPY_MEMSET, ct_is_host(dk) ? CT_DIR_HTOH : CT_DIR_DTOD,
                   CT_MEMKIND_UNKNOWN, dk, bytes, stream, flags);
}

/* ---- allocations ---- */

static void ct_mem_record(ct_call *c, CUresult r, unsigned op, unsigned kind, uint64_t addr,
                          uint64_t size, uint32_t device, uint64_t stream, uint64_t handle)
{
    ct_rec_mem m = {0};
    m.op = op;
    m.kind = kind;
    m.corr = c->corr;
    m.address = addr;
    m.size = size;
    m.device = device;
    m.result = (uint32_t)r;
    m.stream = stream;
    m.handle = handle;
    m.stack = ct_site(c);
    ct_emit(c, CT_REC_MEM, &m, sizeof m);
}

void ct_on_alloc(ct_call *c, CUresult r, unsigned kind, uint64_t addr, uint64_t size,
                 uint64_t stream, uint64_t handle)
{
    if (!c->th)
        return;
    uint64_t ctx;
    uint32_t dev;
    ct_current(c->th, &ctx, &dev);
    if (r == CUDA_SUCCESS) {
        if (kind == CT_ALLOC_VMM_PHYSICAL)
            ct_rmap_add(&ct_vmm_handles, handle, size, kind, dev);
        else if (kind != CT_ALLOC_VMM_RESERVE && addr)
            ct_rmap_add(&ct_mem_ranges, addr, size, kind, dev);
    }
    ct_mem_record(c, r, CT_MEM_ALLOC, kind, addr, size, dev, stream, handle);
}

void ct_on_free(ct_call *c, CUresult r, unsigned kind, uint64_t addr, uint64_t size,
                uint64_t stream, uint64_t handle)
{
    if (!c->th || (!addr && !handle))
        return;
    ct_range known = {0, 0, kind, 0};
    int found = 0;
    if (kind == CT_ALLOC_VMM_PHYSICAL) {
        found = r == CUDA_SUCCESS ? ct_rmap_remove(&ct_vmm_handles, handle, &known)
                                  : ct_rmap_find(&ct_vmm_handles, handle, &known);
    } else if (kind != CT_ALLOC_VMM_RESERVE) {
        found = r == CUDA_SUCCESS ? ct_rmap_remove(&ct_mem_ranges, addr, &known)
                                  : ct_rmap_find(&ct_mem_ranges, addr, &known);
    }
    if (kind == CT_ALLOC_UNKNOWN && found)
        kind = known.kind;
    if (!size && found)
        size = known.size;
    uint64_t ctx;
    uint32_t dev;
    ct_current(c->th, &ctx, &dev);
    ct_mem_record(c, r, CT_MEM_FREE, kind, addr, size, found ? known.device : dev, stream,
                  handle);
}

/* ---- synchronization, streams ---- */

void ct_on_sync(ct_call *c, CUresult r, unsigned kind, uint64_t object)
{
    (void)r;
    if (!c->th)
        return;
    ct_rec_sync s = {c->t0, c->corr, kind, object};
    ct_site(c);
    ct_emit(c, CT_REC_SYNC, &s, sizeof s);
    if (ct_opt.gpu_every && kind != CT_SYNC_STREAM_WAIT_EVENT)
        ct_writer_nudge();
}

void ct_on_stream(ct_call *c, CUresult r, unsigned op, uint64_t stream, unsigned flags,
                  int priority)
{
    if (!c->th || r != CUDA_SUCCESS)
        return;
    ct_rec_stream s = {0};
    s.op = op;
    s.stream = stream;
    s.flags = flags;
    s.priority = priority;
    ct_current(c->th, &s.context, &s.device);
    ct_emit(c, CT_REC_STREAM, &s, sizeof s);
}
