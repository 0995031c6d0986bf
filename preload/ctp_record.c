/* The category recorders (see ctp_record.h). */
#define _GNU_SOURCE
#include "ctp_record.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctp_capture.h"
#include "ctp_clock.h"
#include "ctp_device.h"
#include "ctp_fns.h"
#include "ctp_gpu.h"
#include "ctp_maps.h"
#include "ctp_real.h"
#include "ctp_python.h"
#include "ctp_shlib.h"
#include "ctp_stack.h"
#include "ctp_wake.h"

/* ---- context, device, memory kinds ---- */

/* The calling thread's current context and its device ordinal (cached per thread). */
static void ctp_current(ctp_thread *th, uint64_t *ctx, uint32_t *dev)
{
    CUcontext cur = NULL;
    if (CTP_REAL(cuCtxGetCurrent)(&cur) != CUDA_SUCCESS)
        cur = NULL;
    *ctx = (uint64_t)(uintptr_t)cur;
    if (*ctx != th->cache_ctx) {
        CUdevice d = 0;
        if (!cur || CTP_REAL(cuCtxGetDevice)(&d) != CUDA_SUCCESS)
            d = 0;
        th->cache_ctx = *ctx;
        th->cache_dev = (uint32_t)d;
        if (cur)
            ctp_device_seen(th, (uint32_t)d);
    }
    *dev = th->cache_dev;
}

static unsigned ctp_memkind_of_alloc(unsigned kind)
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
static unsigned ctp_memkind(uint64_t addr)
{
    ctp_range r;
    if (ctp_rmap_find(&ctp_mem_ranges, addr, &r))
        return ctp_memkind_of_alloc(r.kind);
    unsigned type = 0;
    if (CTP_REAL(cuPointerGetAttribute)(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr) !=
        CUDA_SUCCESS)
        return CT_MEMKIND_PAGEABLE;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        return CT_MEMKIND_PINNED;
    case CU_MEMORYTYPE_ARRAY:
        return CT_MEMKIND_ARRAY;
    default: {
        int managed = 0;
        if (CTP_REAL(cuPointerGetAttribute)(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, addr) ==
                CUDA_SUCCESS && managed)
            return CT_MEMKIND_MANAGED;
        return CT_MEMKIND_DEVICE;
    }
    }
}

static int ctp_is_host(unsigned kind)
{
    return kind == CT_MEMKIND_PAGEABLE || kind == CT_MEMKIND_PINNED;
}

/* The call site of a category that wants one (allocations, copies, sets, syncs), unless
 * `all` mode captured it already in ctp_leave. */
static uint32_t ctp_site(ctp_call *c)
{
    if (ctp_opt.stacks && !c->stack) {
        c->stack = ctp_stack_capture();
        if (c->th)
            ctp_python_describe(c->th);
    }
    return c->stack;
}

/* ---- kernel names ---- */

/* function id (demangled) | symbol id (mangled, 0 if the same) << 32 */
static uint64_t ctp_names_of(const char *mangled)
{
    uint32_t sym = ctp_intern(mangled, strlen(mangled));
    uint32_t fn = ctp_intern_demangled(mangled);
    return fn == sym ? fn : fn | (uint64_t)sym << 32;
}

/* Names of a CUfunction or CUkernel handle: cached from cuModuleGetFunction /
 * cuLibraryGetKernel / cuKernelGetFunction, else asked once from the driver. */
static uint64_t ctp_kernel_ids(uint64_t handle)
{
    uint64_t v;
    if (ctp_hmap_get(&ctp_kernel_names, handle, &v))
        return v;
    const char *name = NULL;
    if (CTP_REAL(cuFuncGetName)(&name, (CUfunction)(uintptr_t)handle) != CUDA_SUCCESS || !name)
        if (CTP_REAL(cuKernelGetName)(&name, (CUkernel)(uintptr_t)handle) != CUDA_SUCCESS)
            name = NULL;
    char unknown[48];
    if (!name) {
        snprintf(unknown, sizeof unknown, "<kernel 0x%llx>", (unsigned long long)handle);
        name = unknown;
    }
    v = ctp_names_of(name);
    if (handle)
        ctp_hmap_put(&ctp_kernel_names, handle, v);
    return v;
}

void ctp_on_name(ctp_call *c, CUresult r, uint64_t handle, const char *name)
{
    if (r != CUDA_SUCCESS || !handle || !name)
        return;
    uint64_t known;
    /* a handle not seen before comes from a module just loaded, by a library perhaps loaded
     * since the last look (cuBLAS); a program looking the same kernel up again costs no look */
    int seen = ctp_hmap_get(&ctp_kernel_names, handle, &known);
    ctp_hmap_put(&ctp_kernel_names, handle, ctp_names_of(name));
    if (!seen && c->th)
        ctp_shlib_scan(c->th);
}

void ctp_on_kernel_function(ctp_call *c, CUresult r, uint64_t func, uint64_t kernel)
{
    (void)c;
    if (r == CUDA_SUCCESS && func && kernel)
        ctp_hmap_put(&ctp_kernel_names, func, ctp_kernel_ids(kernel));
}

/* ---- launches ---- */

static void ctp_launch_record(ctp_call *c, CUresult r, uint64_t names, const unsigned g[3],
                             const unsigned b[3], unsigned shared, uint64_t stream, unsigned flags)
{
    uint64_t ctx;
    uint32_t dev;
    ctp_current(c->th, &ctx, &dev);
    ct_rec_launch *l = ctp_emit_begin(c, CT_REC_LAUNCH, sizeof *l);
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
                             .flags = flags | c->captured |
                                      ctp_gpu_untimed(c, r, CT_LAUNCH_UNTIMED)};
        ctp_emit_end(c);
    }
    ctp_gpu_end(c, r, CT_GPU_KERNEL, dev, 0);
}

void ctp_on_launch(ctp_call *c, CUresult r, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                  unsigned bx, unsigned by, unsigned bz, unsigned shared, uint64_t stream)
{
    if (!c->th)
        return;
    unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    ctp_launch_record(c, r, ctp_kernel_ids((uint64_t)(uintptr_t)f), g, b, shared, stream, 0);
}

void ctp_on_launch_ex(ctp_call *c, CUresult r, const CUlaunchConfig *cfg, CUfunction f,
                     uint64_t stream)
{
    if (!c->th || !cfg)
        return;
    unsigned g[3] = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
    unsigned b[3] = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
    ctp_launch_record(c, r, ctp_kernel_ids((uint64_t)(uintptr_t)f), g, b, cfg->sharedMemBytes,
                     stream, 0);
}

void ctp_on_graph_launch(ctp_call *c, CUresult r, CUgraphExec g, uint64_t stream)
{
    (void)g;
    if (!c->th)
        return;
    static const char graph[] = "[CUDA graph]";
    static uint32_t graph_id;
    if (!__atomic_load_n(&graph_id, __ATOMIC_RELAXED))
        __atomic_store_n(&graph_id, ctp_intern(graph, sizeof graph - 1), __ATOMIC_RELAXED);
    /* which exec ran, for the reader to name its kernels: before the LAUNCH (the launch's
     * detail, timed as a whole), so that a reader knows them once the GPU interval joins it */
    ct_rec_graph gr = {.corr = c->corr, .op = CT_GRAPH_LAUNCH, .exec = (uint64_t)(uintptr_t)g,
                       .stream = stream, .result = (uint32_t)r};
    /* the handles only: the node's fields, none a launch's, read 0 (ctp_writer.c) */
    ctp_push(c->th, CT_REC_GRAPH, c->fn, c->t1, &gr, offsetof(ct_rec_graph, node));
    unsigned zero[3] = {0, 0, 0};
    ctp_launch_record(c, r, __atomic_load_n(&graph_id, __ATOMIC_RELAXED), zero, zero, 0, stream,
                     CT_LAUNCH_GRAPH);
}

/* ---- copies and sets ---- */

/* Whether a copy's call returns only once the copy has completed, per NVIDIA's "API
 * synchronization behavior": host to host always; an Async copy when it goes to pageable
 * memory; a synchronous one when it goes to host memory or comes from pinned memory (not from
 * pageable memory, which returns once staged, nor device to device). */
static int ctp_copy_waited(unsigned flags, unsigned src_kind, unsigned dst_kind)
{
    if (ctp_is_host(src_kind) && ctp_is_host(dst_kind))
        return 1;
    if (flags & CT_COPY_ASYNC)
        return dst_kind == CT_MEMKIND_PAGEABLE;
    return ctp_is_host(dst_kind) || src_kind == CT_MEMKIND_PINNED;
}

static void ctp_copy_record(ctp_call *c, CUresult r, unsigned op, unsigned dir, unsigned src_kind,
                           unsigned dst_kind, uint64_t bytes, uint64_t stream, unsigned flags)
{
    uint64_t ctx;
    uint32_t dev;
    ctp_current(c->th, &ctx, &dev);
    ctp_site(c);
    /* The writer adds the SYNC record of a copy the host waited for (ctp_copy_sync). */
    ct_rec_copy *k = ctp_emit_begin(c, CT_REC_COPY, sizeof *k);
    if (k) {
        *k = (ct_rec_copy){.corr = c->corr,
                           .op = op,
                           .dir = dir,
                           .bytes = bytes,
                           .src_kind = src_kind,
                           .dst_kind = dst_kind,
                           .flags = flags | (c->captured ? CT_COPY_CAPTURED : 0) |
                                    ctp_gpu_untimed(c, r, CT_COPY_UNTIMED),
                           .stream = stream,
                           .device = dev};
        ctp_emit_end(c);
    }
    if (op == CT_COPY_MEMSET)
        ctp_gpu_end(c, r, CT_GPU_MEMSET, dev, 0);
    else
        ctp_gpu_end(c, r, CT_GPU_MEMCPY, dev, ctp_copy_waited(flags, src_kind, dst_kind));
}

static unsigned ctp_dir_of(unsigned src, unsigned dst)
{
    int sh = ctp_is_host(src), dh = ctp_is_host(dst);
    return sh && dh ? CT_DIR_HTOH : sh ? CT_DIR_HTOD : dh ? CT_DIR_DTOH : CT_DIR_DTOD;
}

void ctp_on_copy(ctp_call *c, CUresult r, unsigned dir, uint64_t dst, uint64_t src, uint64_t bytes,
                uint64_t stream, unsigned flags)
{
    if (!c->th)
        return;
    unsigned sk, dk;
    switch (dir) {
    case CT_DIR_HTOD:
        sk = ctp_memkind(src);
        dk = CT_MEMKIND_DEVICE;
        break;
    case CT_DIR_DTOH:
        sk = CT_MEMKIND_DEVICE;
        dk = ctp_memkind(dst);
        break;
    case CT_DIR_DTOD:
    case CT_DIR_PEER:
        sk = dk = CT_MEMKIND_DEVICE;
        break;
    default: /* unified addressing: the pointers say */
        sk = ctp_memkind(src);
        dk = ctp_memkind(dst);
        dir = ctp_dir_of(sk, dk);
    }
    ctp_copy_record(c, r, CT_COPY_MEMCPY, dir, sk, dk, bytes, stream, flags);
}

static unsigned ctp_side_kind(CUmemorytype t, const void *host, uint64_t dev)
{
    switch (t) {
    case CU_MEMORYTYPE_HOST:
        return ctp_memkind((uint64_t)(uintptr_t)host);
    case CU_MEMORYTYPE_ARRAY:
        return CT_MEMKIND_ARRAY;
    case CU_MEMORYTYPE_UNIFIED:
        return ctp_memkind(dev);
    default:
        return CT_MEMKIND_DEVICE;
    }
}

/* A 2D or 3D copy's direction (an array is device memory). */
static unsigned ctp_dir_nd(unsigned sk, unsigned dk)
{
    return ctp_dir_of(sk == CT_MEMKIND_ARRAY ? CT_MEMKIND_DEVICE : sk,
                      dk == CT_MEMKIND_ARRAY ? CT_MEMKIND_DEVICE : dk);
}

static void ctp_copy_nd(ctp_call *c, CUresult r, unsigned sk, unsigned dk, uint64_t bytes,
                       uint64_t stream, unsigned flags)
{
    ctp_copy_record(c, r, CT_COPY_MEMCPY, ctp_dir_nd(sk, dk), sk, dk, bytes, stream, flags);
}

void ctp_on_copy2d(ctp_call *c, CUresult r, const CUDA_MEMCPY2D *p, uint64_t stream,
                  unsigned flags)
{
    if (!c->th || !p)
        return;
    ctp_copy_nd(c, r, ctp_side_kind(p->srcMemoryType, p->srcHost, p->srcDevice),
               ctp_side_kind(p->dstMemoryType, p->dstHost, p->dstDevice),
               (uint64_t)p->WidthInBytes * p->Height, stream, flags | CT_COPY_2D);
}

void ctp_on_copy3d(ctp_call *c, CUresult r, const CUDA_MEMCPY3D *p, uint64_t stream,
                  unsigned flags)
{
    if (!c->th || !p)
        return;
    ctp_copy_nd(c, r, ctp_side_kind(p->srcMemoryType, p->srcHost, p->srcDevice),
               ctp_side_kind(p->dstMemoryType, p->dstHost, p->dstDevice),
               (uint64_t)p->WidthInBytes * p->Height * (p->Depth ? p->Depth : 1), stream,
               flags | CT_COPY_3D);
}

void ctp_on_set(ctp_call *c, CUresult r, uint64_t dst, uint64_t bytes, uint64_t stream,
               unsigned flags)
{
    if (!c->th)
        return;
    unsigned dk = ctp_memkind(dst);
    ctp_copy_record(c, r, CT_COPY_MEMSET, ctp_is_host(dk) ? CT_DIR_HTOH : CT_DIR_DTOD,
                   CT_MEMKIND_UNKNOWN, dk, bytes, stream, flags);
}

/* ---- graph nodes ---- */

static void ctp_node_memset(ct_rec_graph *g, const CUDA_MEMSET_NODE_PARAMS *p)
{
    g->node_type = CT_GNODE_MEMSET;
    g->dst_kind = ctp_memkind(p->dst);
    g->dir = ctp_is_host(g->dst_kind) ? CT_DIR_HTOH : CT_DIR_DTOD;
    g->bytes = (uint64_t)p->elementSize * p->width * (p->height ? p->height : 1);
}

/* What a node of type t with parameters p runs (a kernel's CUDA_KERNEL_NODE_PARAMS_v2 or _v3,
 * the same layout; a memcpy's CUDA_MEMCPY3D; a memset's CUDA_MEMSET_NODE_PARAMS or the _v2 that
 * begins with it), into g; 0 for other node types (nothing a reader counts). */
static int ctp_node_fill(ct_rec_graph *g, unsigned t, const void *p)
{
    switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        const CUDA_KERNEL_NODE_PARAMS_v2 *k = p;
        uint64_t names = ctp_kernel_ids(k->func ? (uint64_t)(uintptr_t)k->func
                                                : (uint64_t)(uintptr_t)k->kern);
        g->node_type = CT_GNODE_KERNEL;
        g->function = (uint32_t)names;
        g->symbol = (uint32_t)(names >> 32);
        memcpy(g->grid, (uint32_t[3]){k->gridDimX, k->gridDimY, k->gridDimZ}, sizeof g->grid);
        memcpy(g->block, (uint32_t[3]){k->blockDimX, k->blockDimY, k->blockDimZ}, sizeof g->block);
        g->shared_bytes = k->sharedMemBytes;
        return 1;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
        const CUDA_MEMCPY3D *m = p;
        g->node_type = CT_GNODE_MEMCPY;
        g->src_kind = ctp_side_kind(m->srcMemoryType, m->srcHost, m->srcDevice);
        g->dst_kind = ctp_side_kind(m->dstMemoryType, m->dstHost, m->dstDevice);
        g->dir = ctp_dir_nd(g->src_kind, g->dst_kind);
        g->bytes = (uint64_t)m->WidthInBytes * (m->Height ? m->Height : 1) *
                   (m->Depth ? m->Depth : 1);
        return 1;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET:
        ctp_node_memset(g, p);
        return 1;
    default:
        return 0;
    }
}

/* What node n of type t runs, asked from the driver; 0 if not a kernel, memcpy or memset node
 * or the driver did not say. */
static int ctp_node_ask(ct_rec_graph *g, CUgraphNode n, CUgraphNodeType t)
{
    union {
        CUDA_KERNEL_NODE_PARAMS_v2 kernel;
        CUDA_MEMCPY3D memcpy;
        CUDA_MEMSET_NODE_PARAMS memset;
    } u;
    memset(&u, 0, sizeof u);
    CUresult r = t == CU_GRAPH_NODE_TYPE_KERNEL ? CTP_REAL(cuGraphKernelNodeGetParams_v2)(n, &u.kernel)
                 : t == CU_GRAPH_NODE_TYPE_MEMCPY ? CTP_REAL(cuGraphMemcpyNodeGetParams)(n, &u.memcpy)
                 : t == CU_GRAPH_NODE_TYPE_MEMSET ? CTP_REAL(cuGraphMemsetNodeGetParams)(n, &u.memset)
                                                  : CUDA_ERROR_INVALID_VALUE;
    return r == CUDA_SUCCESS && ctp_node_fill(g, t, &u);
}

/* Child graphs nested deeper are not listed (the driver allows any depth; a program's are few). */
enum { CTP_GRAPH_DEPTH = 16 };

/* A NODE record per kernel, memcpy and memset node of graph, its child graphs' included, for
 * the instantiation or update of exec this call made; returns how many were written (some may
 * have been dropped, the ring full). Not a hot path (once per instantiation): the node list is
 * allocated. */
static uint32_t ctp_graph_nodes(ctp_call *c, uint64_t graph, uint64_t exec, int depth, int *unlisted)
{
    size_t n = 0;
    uint32_t written = 0;
    if (CTP_REAL(cuGraphGetNodes)((CUgraph)(uintptr_t)graph, NULL, &n) != CUDA_SUCCESS || !n)
        return 0;
    CUgraphNode *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    if (CTP_REAL(cuGraphGetNodes)((CUgraph)(uintptr_t)graph, v, &n) != CUDA_SUCCESS)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        CUgraphNodeType t;
        if (CTP_REAL(cuGraphNodeGetType)(v[i], &t) != CUDA_SUCCESS)
            continue;
        CUgraph child;
        if (t == CU_GRAPH_NODE_TYPE_GRAPH) {
            if (depth < CTP_GRAPH_DEPTH &&
                CTP_REAL(cuGraphChildGraphNodeGetGraph)(v[i], &child) == CUDA_SUCCESS)
                written += ctp_graph_nodes(c, (uint64_t)(uintptr_t)child, exec, depth + 1, unlisted);
            continue;
        }
        *unlisted |= t == CU_GRAPH_NODE_TYPE_CONDITIONAL;
        ct_rec_graph g = {.corr = c->corr, .op = CT_GRAPH_NODE, .graph = graph, .exec = exec,
                          .node = (uint64_t)(uintptr_t)v[i]};
        if (ctp_node_ask(&g, v[i], t)) {
            ctp_push(c->th, CT_REC_GRAPH, c->fn, c->t1, &g, sizeof g);
            written++;
        }
    }
    free(v);
    return written;
}

void ctp_on_graph(ctp_call *c, CUresult r, unsigned op, uint64_t graph, uint64_t exec,
                  uint64_t stream, unsigned mode)
{
    if (!c->th)
        return;
    /* the nodes first: the instantiation or update that follows makes the exec run them */
    int unlisted = 0;
    uint32_t nodes = r == CUDA_SUCCESS && graph && exec &&
                             (op == CT_GRAPH_INSTANTIATE || op == CT_GRAPH_UPDATE)
                         ? ctp_graph_nodes(c, graph, exec, 0, &unlisted)
                         : 0;
    if (unlisted)
        nodes = CT_GRAPH_NODES_UNKNOWN;
    ct_rec_graph *gr = ctp_emit_begin(c, CT_REC_GRAPH, sizeof *gr);
    if (gr) {
        *gr = (ct_rec_graph){.corr = c->corr, .op = op, .mode = mode, .graph = graph, .exec = exec,
                             .stream = stream, .result = (uint32_t)r, .nodes = nodes};
        ctp_emit_end(c);
    }
}

void ctp_on_graph_set(ctp_call *c, CUresult r, uint64_t exec, uint64_t node, unsigned type,
                      const void *p)
{
    /* p is read only once the driver accepted it: a failed call's may be anything */
    ct_rec_graph g = {.corr = c->corr, .op = CT_GRAPH_NODE_SET, .exec = exec, .node = node};
    if (!c->th || r != CUDA_SUCCESS)
        return;
    /* a child graph's or a conditional node's new work, or a node switched on or off: not
     * listed, so the exec's work becomes unknown */
    if (type == CT_GNODE_CHANGED || type == CU_GRAPH_NODE_TYPE_GRAPH ||
        type == CU_GRAPH_NODE_TYPE_CONDITIONAL) {
        g.node_type = CT_GNODE_CHANGED;
        ctp_emit(c, CT_REC_GRAPH, &g, sizeof g);
    } else if (p && ctp_node_fill(&g, type, p)) {
        ctp_emit(c, CT_REC_GRAPH, &g, sizeof g);
    }
}

/* ---- allocations ---- */

static void ctp_mem_record(ctp_call *c, CUresult r, unsigned op, unsigned kind, uint64_t addr,
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
    m.stack = ctp_site(c);
    ctp_emit(c, CT_REC_MEM, &m, sizeof m);
}

void ctp_on_alloc(ctp_call *c, CUresult r, unsigned kind, uint64_t addr, uint64_t size,
                 uint64_t stream, uint64_t handle)
{
    if (!c->th)
        return;
    uint64_t ctx;
    uint32_t dev;
    ctp_current(c->th, &ctx, &dev);
    if (r == CUDA_SUCCESS) {
        if (kind == CT_ALLOC_VMM_PHYSICAL)
            ctp_rmap_add(&ctp_vmm_handles, handle, size, kind, dev);
        else if (kind != CT_ALLOC_VMM_RESERVE && addr)
            ctp_rmap_add(&ctp_mem_ranges, addr, size, kind, dev);
    }
    ctp_mem_record(c, r, CT_MEM_ALLOC, kind, addr, size, dev, stream, handle);
}

void ctp_on_free(ctp_call *c, CUresult r, unsigned kind, uint64_t addr, uint64_t size,
                uint64_t stream, uint64_t handle)
{
    if (!c->th || (!addr && !handle))
        return;
    ctp_range known = {0, 0, kind, 0};
    int found = 0;
    if (kind == CT_ALLOC_VMM_PHYSICAL) {
        found = r == CUDA_SUCCESS ? ctp_rmap_remove(&ctp_vmm_handles, handle, &known)
                                  : ctp_rmap_find(&ctp_vmm_handles, handle, &known);
    } else if (kind != CT_ALLOC_VMM_RESERVE) {
        found = r == CUDA_SUCCESS ? ctp_rmap_remove(&ctp_mem_ranges, addr, &known)
                                  : ctp_rmap_find(&ctp_mem_ranges, addr, &known);
    }
    if (kind == CT_ALLOC_UNKNOWN && found)
        kind = known.kind;
    if (!size && found)
        size = known.size;
    uint64_t ctx;
    uint32_t dev;
    ctp_current(c->th, &ctx, &dev);
    ctp_mem_record(c, r, CT_MEM_FREE, kind, addr, size, found ? known.device : dev, stream,
                  handle);
}

/* ---- synchronization, streams ---- */

void ctp_on_sync(ctp_call *c, CUresult r, unsigned kind, uint64_t object)
{
    (void)r;
    if (!c->th)
        return;
    ct_rec_sync s = {c->t0, c->corr, kind, object};
    ctp_site(c);
    ctp_emit(c, CT_REC_SYNC, &s, sizeof s);
    if (ctp_opt.gpu_every && kind != CT_SYNC_STREAM_WAIT_EVENT)
        ctp_writer_nudge();
}

void ctp_on_stream(ctp_call *c, CUresult r, unsigned op, uint64_t stream, unsigned flags,
                  int priority)
{
    if (!c->th || r != CUDA_SUCCESS)
        return;
    ct_rec_stream s = {0};
    s.op = op;
    s.stream = stream;
    s.flags = flags;
    s.priority = priority;
    ctp_current(c->th, &s.context, &s.device);
    ctp_emit(c, CT_REC_STREAM, &s, sizeof s);
}

void ctp_on_profiler(ctp_call *c, CUresult r, unsigned op)
{
    (void)r;
    ctp_capture_mark(c->th, ctp_capture_profiler(op));
}
