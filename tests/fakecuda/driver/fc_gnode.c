/* Graphs built node by node (CUDA driver API "Graph Management"): creation, cloning, nodes of
 * every type the simulation executes, edges, queries, node parameters. Node parameters are
 * validated as a launch or copy of the same kind would be, and kept by value (fc_graph.h).
 * Memory-allocation nodes allocate when they are made (the address is fixed for the graph's
 * life, as CUDA documents); the memory is released when the last graph or executable graph
 * holding the node goes. A conditional node owns its body graphs (made empty with the node, to
 * be filled by the caller), as CUDA's does. */
#define _GNU_SOURCE
#include "fc_graph.h"
#include "fc_module.h"

#include <stdlib.h>
#include <string.h>

static void *fc_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        fc_fatal("out of host memory for a graph");
    return p;
}

struct CUgraph_st *fc_graph_new(void)
{
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (!g)
        fc_fatal("out of host memory for a graph");
    g->magic = FC_GRAPH_MAGIC;
    return g;
}

int fc_node_valid(const struct CUgraphNode_st *n)
{
    return n && n->magic == FC_GNODE_MAGIC;
}

static int fc_graph_valid(const struct CUgraph_st *g)
{
    return g && g->magic == FC_GRAPH_MAGIC;
}

void fc_node_params_free(struct CUgraphNode_st *n)
{
    switch (n->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
        free(n->u.k.args);
        n->u.k.args = NULL;
        break;
    case CU_GRAPH_NODE_TYPE_GRAPH:
        if (n->u.child)
            fc_graph_free(n->u.child);
        n->u.child = NULL;
        break;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        for (unsigned i = 0; n->u.cond.body && i < n->u.cond.p.size; i++)
            fc_graph_free(n->u.cond.body[i]);
        free(n->u.cond.body);
        n->u.cond.body = NULL;
        break;
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC:
        if (n->u.alloc.a && atomic_fetch_sub(&n->u.alloc.a->refs, 1) == 1) {
            /* the program may have freed it (cuMemFreeAsync) and the address be reused */
            fc_range rg;
            if (fc_mem_lookup((uintptr_t)n->u.alloc.a->p, &rg) == 0 &&
                rg.id == n->u.alloc.a->id)
                fc_mem_free_device(n->u.alloc.a->p);
            free(n->u.alloc.a);
        }
        n->u.alloc.a = NULL;
        break;
    default:
        break;
    }
}

void fc_node_params_copy(struct CUgraphNode_st *dst, const struct CUgraphNode_st *src)
{
    fc_node_params_free(dst);
    dst->u = src->u;
    if (src->type == CU_GRAPH_NODE_TYPE_KERNEL)
        dst->u.k.args = fc_kernel_args_copy(src->u.k.f, src->u.k.args);
    else if (src->type == CU_GRAPH_NODE_TYPE_GRAPH)
        dst->u.child = fc_graph_clone(src->u.child);
    else if (src->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC)
        atomic_fetch_add(&dst->u.alloc.a->refs, 1);
    else if (src->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
        fc_cond_bodies(dst, src->u.cond.body);
}

void fc_cond_bodies(struct CUgraphNode_st *n, struct CUgraph_st *const *from)
{
    n->u.cond.body = fc_xrealloc(NULL, n->u.cond.p.size * sizeof *n->u.cond.body);
    for (unsigned i = 0; i < n->u.cond.p.size; i++)
        n->u.cond.body[i] = from ? fc_graph_clone(from[i]) : fc_graph_new();
    n->u.cond.p.phGraph_out = n->u.cond.body;
}

void fc_graph_free(struct CUgraph_st *g)
{
    for (size_t i = 0; i < g->n; i++) {
        fc_node_params_free(g->nodes[i]);
        free(g->nodes[i]->deps);
        g->nodes[i]->magic = 0;
        free(g->nodes[i]);
    }
    free(g->nodes);
    free(g->conds);
    g->magic = 0;
    free(g);
}

static void fc_dep_push(struct CUgraphNode_st *n, struct CUgraphNode_st *d)
{
    if (n->ndeps == n->capdeps) {
        n->capdeps = n->capdeps ? 2 * n->capdeps : 4;
        n->deps = fc_xrealloc(n->deps, n->capdeps * sizeof *n->deps);
    }
    n->deps[n->ndeps++] = d;
}

static int fc_has_dep(const struct CUgraphNode_st *n, const struct CUgraphNode_st *d)
{
    for (size_t i = 0; i < n->ndeps; i++)
        if (n->deps[i] == d)
            return 1;
    return 0;
}

struct CUgraphNode_st *fc_node_add(struct CUgraph_st *g, CUgraphNodeType t,
                                   struct CUgraphNode_st *const *deps, size_t ndeps,
                                   CUresult *r)
{
    if (ndeps && !deps) {
        *r = CUDA_ERROR_INVALID_VALUE;
        return NULL;
    }
    for (size_t i = 0; i < ndeps; i++) {
        if (!fc_node_valid(deps[i]) || deps[i]->g != g) {
            *r = CUDA_ERROR_INVALID_VALUE;
            return NULL;
        }
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i]) {
                *r = CUDA_ERROR_INVALID_VALUE; /* "duplicate dependencies" */
                return NULL;
            }
    }
    struct CUgraphNode_st *n = calloc(1, sizeof *n);
    if (!n)
        fc_fatal("out of host memory for a graph node");
    n->magic = FC_GNODE_MAGIC;
    n->g = g;
    n->type = t;
    for (size_t i = 0; i < ndeps; i++)
        fc_dep_push(n, deps[i]);
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 8;
        g->nodes = fc_xrealloc(g->nodes, g->cap * sizeof *g->nodes);
    }
    n->idx = g->n;
    g->nodes[g->n++] = n;
    *r = CUDA_SUCCESS;
    return n;
}

/* Removes n from its graph: its edges both ways, and the node. */
static void fc_node_destroy(struct CUgraphNode_st *n)
{
    struct CUgraph_st *g = n->g;
    for (size_t i = 0; i < g->n; i++) {
        struct CUgraphNode_st *m = g->nodes[i];
        for (size_t j = 0; j < m->ndeps;)
            if (m->deps[j] == n)
                memmove(&m->deps[j], &m->deps[j + 1], (--m->ndeps - j) * sizeof *m->deps);
            else
                j++;
    }
    memmove(&g->nodes[n->idx], &g->nodes[n->idx + 1], (g->n - n->idx - 1) * sizeof *g->nodes);
    g->n--;
    for (size_t i = n->idx; i < g->n; i++)
        g->nodes[i]->idx = i;
    fc_node_params_free(n);
    free(n->deps);
    n->magic = 0;
    free(n);
}

struct CUgraph_st *fc_graph_clone(const struct CUgraph_st *g)
{
    struct CUgraph_st *c = fc_graph_new();
    for (size_t i = 0; i < g->n; i++) {
        const struct CUgraphNode_st *o = g->nodes[i];
        CUresult r;
        struct CUgraphNode_st *n = fc_node_add(c, CU_GRAPH_NODE_TYPE_EMPTY, NULL, 0, &r);
        fc_node_params_copy(n, o);
        n->type = o->type;
        n->orig = (struct CUgraphNode_st *)o;
    }
    if (g->nconds) {
        c->conds = fc_xrealloc(NULL, g->nconds * sizeof *c->conds);
        memcpy(c->conds, g->conds, g->nconds * sizeof *c->conds);
        c->nconds = g->nconds;
    }
    /* edges once every node exists: a dependency may come later in the array */
    for (size_t i = 0; i < g->n; i++)
        for (size_t j = 0; j < g->nodes[i]->ndeps; j++)
            fc_dep_push(c->nodes[i], c->nodes[g->nodes[i]->deps[j]->idx]);
    return c;
}

/* Node dependencies are topologically earlier in the array only for captured graphs; any
 * graph's order comes from here. Returns 0 and the order (n entries), or -1 on a cycle. */
int fc_graph_topo(const struct CUgraph_st *g, size_t *order)
{
    size_t *indeg = calloc(g->n + 1, sizeof *indeg), head = 0, tail = 0;
    if (!indeg)
        fc_fatal("out of host memory for a graph");
    for (size_t i = 0; i < g->n; i++)
        if (!(indeg[i] = g->nodes[i]->ndeps))
            order[tail++] = i;
    while (head < tail) {
        const struct CUgraphNode_st *done = g->nodes[order[head++]];
        for (size_t i = 0; i < g->n; i++)
            if (fc_has_dep(g->nodes[i], done) && --indeg[i] == 0)
                order[tail++] = i;
    }
    free(indeg);
    return tail == g->n ? 0 : -1;
}

/* ---- parameters by type ------------------------------------------------------------- */

static CUresult fc_node_ctx(CUcontext given, fc_ctx **out)
{
    if (given) {
        if (!fc_ctx_valid(given) || !atomic_load(&given->alive))
            return CUDA_ERROR_INVALID_CONTEXT;
        *out = given;
        return CUDA_SUCCESS;
    }
    return fc_ctx_get(out);
}

CUresult fc_set_copy(struct CUgraphNode_st *n, const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    fc_ctx *c;
    CUresult r = fc_node_ctx(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!p || p->srcLOD || p->dstLOD || !p->WidthInBytes || !p->Height || !p->Depth)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->srcMemoryType == CU_MEMORYTYPE_ARRAY || p->dstMemoryType == CU_MEMORYTYPE_ARRAY)
        return fc_unsupported("CUDA arrays in graph copies");
    if ((p->Height > 1 || p->Depth > 1) &&
        (p->srcPitch < p->WidthInBytes || p->dstPitch < p->WidthInBytes))
        return CUDA_ERROR_INVALID_VALUE;
    const void *src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? p->srcHost
                                                              : (const void *)p->srcDevice;
    const void *dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? p->dstHost
                                                              : (const void *)p->dstDevice;
    if (!src || !dst)
        return CUDA_ERROR_INVALID_VALUE;
    n->u.copy.p = *p;
    n->u.copy.ctx = c;
    return CUDA_SUCCESS;
}

CUresult fc_set_memset(struct CUgraphNode_st *n, const CUDA_MEMSET_NODE_PARAMS *p,
                       CUcontext ctx)
{
    fc_ctx *c;
    CUresult r = fc_node_ctx(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
        !p->width || !p->height || !p->dst || p->dst % p->elementSize ||
        (p->height > 1 && p->pitch < p->width * p->elementSize))
        return CUDA_ERROR_INVALID_VALUE;
    fc_range rg;
    size_t span = (p->height - 1) * p->pitch + p->width * p->elementSize;
    if (fc_mem_lookup((uintptr_t)p->dst, &rg) != 0 ||
        span > rg.base + rg.size - (uintptr_t)p->dst)
        return CUDA_ERROR_INVALID_VALUE;
    n->u.set.p = *p;
    n->u.set.ctx = c;
    return CUDA_SUCCESS;
}

CUresult fc_set_host(struct CUgraphNode_st *n, const CUDA_HOST_NODE_PARAMS *p)
{
    if (!p || !p->fn)
        return CUDA_ERROR_INVALID_VALUE;
    n->u.host = *p;
    return CUDA_SUCCESS;
}

CUresult fc_set_event(struct CUgraphNode_st *n, CUevent ev)
{
    if (!fc_event_valid(ev))
        return CUDA_ERROR_INVALID_HANDLE;
    n->u.ev = ev;
    return CUDA_SUCCESS;
}

CUresult fc_set_child(struct CUgraphNode_st *n, CUgraph child, int move)
{
    if (!fc_graph_valid(child) || child == n->g)
        return CUDA_ERROR_INVALID_VALUE;
    fc_node_params_free(n);
    n->u.child = move ? child : fc_graph_clone(child);
    return CUDA_SUCCESS;
}

CUresult fc_set_alloc(struct CUgraphNode_st *n, CUDA_MEM_ALLOC_NODE_PARAMS *p, fc_ctx *c)
{
    if (!p || !p->bytesize || p->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = c ? CUDA_SUCCESS : fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (p->poolProps.location.id != c->dev)
        return CUDA_ERROR_INVALID_VALUE;
    fc_galloc *a = calloc(1, sizeof *a);
    if (!a)
        fc_fatal("out of host memory for a graph");
    if ((r = fc_mem_alloc_device(c, p->bytesize, &a->p)) != CUDA_SUCCESS) {
        free(a);
        return r;
    }
    atomic_store(&a->refs, 1);
    fc_range rg;
    if (fc_mem_lookup((uintptr_t)a->p, &rg) == 0)
        a->id = rg.id;
    p->dptr = a->p;
    n->u.alloc.p = *p;
    n->u.alloc.a = a;
    return CUDA_SUCCESS;
}

static CUresult fc_set_free(struct CUgraphNode_st *n, CUdeviceptr p)
{
    fc_range rg;
    if (!p || fc_mem_lookup((uintptr_t)p, &rg) != 0 || rg.base != (uintptr_t)p)
        return CUDA_ERROR_INVALID_VALUE;
    n->u.free = p;
    return CUDA_SUCCESS;
}

CUresult fc_set_kernel_v2(struct CUgraphNode_st *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    const void *func = p->func ? (const void *)p->func : (const void *)p->kern;
    fc_ctx *c;
    CUresult r = fc_node_ctx(p->func ? NULL : p->ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    return fc_node_set_kernel(n, func, grid, block, p->sharedMemBytes, p->kernelParams,
                              p->extra, c);
}

static CUDA_KERNEL_NODE_PARAMS fc_kernel_v1_to_v2(const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    return (CUDA_KERNEL_NODE_PARAMS){p->func, p->gridDimX, p->gridDimY, p->gridDimZ,
                                     p->blockDimX, p->blockDimY, p->blockDimZ,
                                     p->sharedMemBytes, p->kernelParams, p->extra, NULL, NULL};
}

static void fc_kernel_get(const struct CUgraphNode_st *n, CUDA_KERNEL_NODE_PARAMS *p)
{
    const fakecuda_launch *l = &n->u.k.launch;
    *p = (CUDA_KERNEL_NODE_PARAMS){(CUfunction)n->u.k.f, l->grid[0], l->grid[1], l->grid[2],
                                   l->block[0], l->block[1], l->block[2], l->shared_bytes,
                                   n->u.k.args ? n->u.k.args : n->u.k.raw, NULL,
                                   /* a library's kernel is its CUkernel too (fc_module.h);
                                    * NVIDIA's runtime finds its entry function by it */
                                   n->u.k.f->lib ? (CUkernel)n->u.k.f : NULL, n->u.k.ctx};
}

fc_cond *fc_cond_of(CUgraphConditionalHandle h)
{
    fc_cond *c = (fc_cond *)(uintptr_t)h;
    return c && c->magic == FC_COND_MAGIC ? c : NULL;
}

/* A new conditional node's parameters: its handle (made for this graph) and empty bodies. */
static CUresult fc_set_cond(struct CUgraphNode_st *n, CUDA_CONDITIONAL_NODE_PARAMS *p)
{
    fc_cond *c = fc_cond_of(p->handle);
    int mine = 0;
    for (size_t i = 0; c && i < n->g->nconds; i++)
        mine |= n->g->conds[i] == c;
    if (!mine || (p->ctx && p->ctx != c->ctx))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned max = p->type == CU_GRAPH_COND_TYPE_IF      ? 2
                   : p->type == CU_GRAPH_COND_TYPE_WHILE ? 1
                   : p->type == CU_GRAPH_COND_TYPE_SWITCH ? ~0u
                                                          : 0;
    if (!p->size || p->size > max)
        return CUDA_ERROR_INVALID_VALUE;
    n->u.cond.p = *p;
    fc_cond_bodies(n, NULL);
    p->phGraph_out = n->u.cond.body;
    return CUDA_SUCCESS;
}

/* The generic form (cuGraphAddNode, cuGraphNodeSetParams, cuGraphExecNodeSetParams). */
CUresult fc_set_generic(struct CUgraphNode_st *n, CUgraphNodeParams *p)
{
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        CUDA_KERNEL_NODE_PARAMS k;
        memcpy(&k, &p->kernel, sizeof k); /* v3 has v2's layout */
        return fc_set_kernel_v2(n, &k);
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
        if (p->memcpy.flags || p->memcpy.reserved)
            return CUDA_ERROR_INVALID_VALUE;
        return fc_set_copy(n, &p->memcpy.copyParams, p->memcpy.copyCtx);
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        CUDA_MEMSET_NODE_PARAMS m = {p->memset.dst, p->memset.pitch, p->memset.value,
                                     p->memset.elementSize, p->memset.width,
                                     p->memset.height};
        return fc_set_memset(n, &m, p->memset.ctx);
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
        CUDA_HOST_NODE_PARAMS h = {p->host.fn, p->host.userData};
        return fc_set_host(n, &h);
    }
    case CU_GRAPH_NODE_TYPE_GRAPH:
        return fc_set_child(n, p->graph.graph,
                            p->graph.ownership == CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE);
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        return fc_set_event(n, p->eventWait.event);
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        return fc_set_event(n, p->eventRecord.event);
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
        CUDA_MEM_ALLOC_NODE_PARAMS a = {p->alloc.poolProps, p->alloc.accessDescs,
                                        p->alloc.accessDescCount, p->alloc.bytesize, 0};
        CUresult r = fc_set_alloc(n, &a, NULL);
        if (r == CUDA_SUCCESS)
            p->alloc.dptr = a.dptr;
        return r;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE:
        return fc_set_free(n, p->free.dptr);
    case CU_GRAPH_NODE_TYPE_EMPTY:
        return CUDA_SUCCESS;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL:
        return fc_set_cond(n, &p->conditional);
    default:
        return fc_unsupported("graph nodes of this type (semaphores, memory operations)");
    }
}

/* ---- entry points -------------------------------------------------------------------- */

FC_EXPORT CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    FC_ENTER_INIT("cuGraphCreate");
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    *phGraph = fc_graph_new();
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    FC_ENTER_INIT("cuGraphDestroy");
    if (!fc_graph_valid(hGraph))
        return CUDA_ERROR_INVALID_VALUE;
    fc_graph_free(hGraph);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    FC_ENTER_INIT("cuGraphClone");
    if (!phGraphClone || !fc_graph_valid(originalGraph))
        return CUDA_ERROR_INVALID_VALUE;
    *phGraphClone = fc_graph_clone(originalGraph);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode,
                                                  CUgraph hClonedGraph)
{
    FC_ENTER_INIT("cuGraphNodeFindInClone");
    if (!phNode || !fc_node_valid(hOriginalNode) || !fc_graph_valid(hClonedGraph))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < hClonedGraph->n; i++)
        if (hClonedGraph->nodes[i]->orig == hOriginalNode) {
            *phNode = hClonedGraph->nodes[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

/* Adds a node of type t and sets its parameters with set(n, arg); on failure removes it. */
#define FC_ADD_NODE(ph, g, deps, ndeps, t, setcall)                                       \
    do {                                                                                  \
        if (!(ph) || !fc_graph_valid(g))                                                  \
            return CUDA_ERROR_INVALID_VALUE;                                              \
        CUresult r_;                                                                      \
        struct CUgraphNode_st *n = fc_node_add((g), (t), (deps), (ndeps), &r_);          \
        if (!n)                                                                           \
            return r_;                                                                    \
        if ((r_ = (setcall)) != CUDA_SUCCESS) {                                           \
            n->type = CU_GRAPH_NODE_TYPE_EMPTY;                                           \
            fc_node_destroy(n);                                                           \
            return r_;                                                                    \
        }                                                                                 \
        *(ph) = n;                                                                        \
        return CUDA_SUCCESS;                                                              \
    } while (0)

FC_EXPORT CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *ph, CUgraph g,
                                                   const CUgraphNode *deps, size_t ndeps,
                                                   const CUDA_KERNEL_NODE_PARAMS *p)
{
    FC_ENTER_INIT("cuGraphAddKernelNode_v2");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_KERNEL, fc_set_kernel_v2(n, p));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *ph, CUgraph g,
                                                const CUgraphNode *deps, size_t ndeps,
                                                const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    FC_ENTER_INIT("cuGraphAddKernelNode");
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS k = fc_kernel_v1_to_v2(p);
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_KERNEL, fc_set_kernel_v2(n, &k));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode *ph, CUgraph g,
                                                const CUgraphNode *deps, size_t ndeps,
                                                const CUDA_MEMCPY3D *p, CUcontext ctx)
{
    FC_ENTER_INIT("cuGraphAddMemcpyNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_MEMCPY, fc_set_copy(n, p, ctx));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode *ph, CUgraph g,
                                                const CUgraphNode *deps, size_t ndeps,
                                                const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    FC_ENTER_INIT("cuGraphAddMemsetNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_MEMSET, fc_set_memset(n, p, ctx));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode *ph, CUgraph g,
                                              const CUgraphNode *deps, size_t ndeps,
                                              const CUDA_HOST_NODE_PARAMS *p)
{
    FC_ENTER_INIT("cuGraphAddHostNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_HOST, fc_set_host(n, p));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode *ph, CUgraph g,
                                                    const CUgraphNode *deps, size_t ndeps,
                                                    CUgraph child)
{
    FC_ENTER_INIT("cuGraphAddChildGraphNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_GRAPH, fc_set_child(n, child, 0));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode *ph, CUgraph g,
                                               const CUgraphNode *deps, size_t ndeps)
{
    FC_ENTER_INIT("cuGraphAddEmptyNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_EMPTY, CUDA_SUCCESS);
}

FC_EXPORT CUresult CUDAAPI cuGraphAddEventRecordNode(CUgraphNode *ph, CUgraph g,
                                                     const CUgraphNode *deps, size_t ndeps,
                                                     CUevent ev)
{
    FC_ENTER_INIT("cuGraphAddEventRecordNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_EVENT_RECORD, fc_set_event(n, ev));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddEventWaitNode(CUgraphNode *ph, CUgraph g,
                                                   const CUgraphNode *deps, size_t ndeps,
                                                   CUevent ev)
{
    FC_ENTER_INIT("cuGraphAddEventWaitNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_WAIT_EVENT, fc_set_event(n, ev));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *ph, CUgraph g,
                                                  const CUgraphNode *deps, size_t ndeps,
                                                  CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    FC_ENTER_INIT("cuGraphAddMemAllocNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_MEM_ALLOC, fc_set_alloc(n, p, NULL));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode *ph, CUgraph g,
                                                 const CUgraphNode *deps, size_t ndeps,
                                                 CUdeviceptr dptr)
{
    FC_ENTER_INIT("cuGraphAddMemFreeNode");
    FC_ADD_NODE(ph, g, deps, ndeps, CU_GRAPH_NODE_TYPE_MEM_FREE, fc_set_free(n, dptr));
}

static int fc_edges_default(const CUgraphEdgeData *e, size_t n)
{
    static const CUgraphEdgeData zero;
    for (size_t i = 0; e && i < n; i++)
        if (memcmp(&e[i], &zero, sizeof zero) != 0)
            return 0;
    return 1;
}

FC_EXPORT CUresult CUDAAPI cuGraphAddNode_v2(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                                             const CUgraphEdgeData *edges, size_t ndeps,
                                             CUgraphNodeParams *p)
{
    FC_ENTER_INIT("cuGraphAddNode_v2");
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    /* Programmatic-launch edges are not simulated: only the default edge type. */
    if (!fc_edges_default(edges, ndeps))
        return fc_unsupported("graph edges with data");
    FC_ADD_NODE(ph, g, deps, ndeps, p->type, fc_set_generic(n, p));
}

FC_EXPORT CUresult CUDAAPI cuGraphAddNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                                          size_t ndeps, CUgraphNodeParams *p)
{
    FC_ENTER_INIT("cuGraphAddNode");
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    FC_ADD_NODE(ph, g, deps, ndeps, p->type, fc_set_generic(n, p));
}

FC_EXPORT CUresult CUDAAPI cuGraphDestroyNode(CUgraphNode hNode)
{
    FC_ENTER_INIT("cuGraphDestroyNode");
    if (!fc_node_valid(hNode))
        return CUDA_ERROR_INVALID_VALUE;
    fc_node_destroy(hNode);
    return CUDA_SUCCESS;
}

/* ---- queries ------------------------------------------------------------------------- */

/* The CUDA query convention: with out NULL, *count is set to the total; otherwise up to
 * *count entries are written and *count becomes how many were (the rest NULL-filled when the
 * caller asked for more). */
static CUresult fc_list(CUgraphNode *out, CUgraphEdgeData *edges, size_t *count,
                        struct CUgraphNode_st *const *v, size_t n)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    if (!out) {
        if (edges)
            return CUDA_ERROR_INVALID_VALUE;
        *count = n;
        return CUDA_SUCCESS;
    }
    for (size_t i = 0; i < *count; i++) {
        out[i] = i < n ? v[i] : NULL;
        if (edges)
            memset(&edges[i], 0, sizeof edges[i]);
    }
    if (*count > n)
        *count = n;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    FC_ENTER_INIT("cuGraphGetNodes");
    if (!fc_graph_valid(hGraph))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_list(nodes, NULL, numNodes, hGraph->nodes, hGraph->n);
}

/* Nodes of g selected by keep(node, arg), in g's order; the caller frees the array. */
static struct CUgraphNode_st **fc_select(const struct CUgraph_st *g, size_t *n,
                                         int (*keep)(const struct CUgraphNode_st *,
                                                     const struct CUgraphNode_st *),
                                         const struct CUgraphNode_st *arg)
{
    struct CUgraphNode_st **v = fc_xrealloc(NULL, g->n * sizeof *v);
    *n = 0;
    for (size_t i = 0; i < g->n; i++)
        if (keep(g->nodes[i], arg))
            v[(*n)++] = g->nodes[i];
    return v;
}

static int fc_is_root(const struct CUgraphNode_st *n, const struct CUgraphNode_st *unused)
{
    (void)unused;
    return n->ndeps == 0;
}

static int fc_is_dependent(const struct CUgraphNode_st *n, const struct CUgraphNode_st *of)
{
    return fc_has_dep(n, of);
}

FC_EXPORT CUresult CUDAAPI cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes,
                                               size_t *numRootNodes)
{
    FC_ENTER_INIT("cuGraphGetRootNodes");
    if (!fc_graph_valid(hGraph))
        return CUDA_ERROR_INVALID_VALUE;
    size_t n;
    struct CUgraphNode_st **v = fc_select(hGraph, &n, fc_is_root, NULL);
    CUresult r = fc_list(rootNodes, NULL, numRootNodes, v, n);
    free(v);
    return r;
}

static CUresult fc_get_edges(CUgraph g, CUgraphNode *from, CUgraphNode *to,
                             CUgraphEdgeData *edges, size_t *num)
{
    if (!fc_graph_valid(g) || !num || (!from != !to) || (edges && !from))
        return CUDA_ERROR_INVALID_VALUE;
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++)
        for (size_t j = 0; j < g->nodes[i]->ndeps; j++, k++)
            if (from && k < *num) {
                from[k] = g->nodes[i]->deps[j];
                to[k] = g->nodes[i];
                if (edges)
                    memset(&edges[k], 0, sizeof edges[k]);
            }
    if (from)
        for (size_t i = k; i < *num; i++)
            from[i] = to[i] = NULL;
    if (!from || k < *num)
        *num = k;
    return CUDA_SUCCESS;
}

FC_DEF_INIT(cuGraphGetEdges, (CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *num),
            fc_get_edges(g, from, to, NULL, num))
FC_DEF_INIT(cuGraphGetEdges_v2,
            (CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *e, size_t *num),
            fc_get_edges(g, from, to, e, num))

FC_EXPORT CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    FC_ENTER_INIT("cuGraphNodeGetType");
    if (!fc_node_valid(hNode) || !type)
        return CUDA_ERROR_INVALID_VALUE;
    *type = hNode->type;
    return CUDA_SUCCESS;
}

static CUresult fc_get_deps(CUgraphNode n, CUgraphNode *out, CUgraphEdgeData *edges,
                            size_t *count)
{
    if (!fc_node_valid(n))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_list(out, edges, count, n->deps, n->ndeps);
}

static CUresult fc_get_dependents(CUgraphNode n, CUgraphNode *out, CUgraphEdgeData *edges,
                                  size_t *count)
{
    if (!fc_node_valid(n))
        return CUDA_ERROR_INVALID_VALUE;
    size_t k;
    struct CUgraphNode_st **v = fc_select(n->g, &k, fc_is_dependent, n);
    CUresult r = fc_list(out, edges, count, v, k);
    free(v);
    return r;
}

FC_DEF_INIT(cuGraphNodeGetDependencies, (CUgraphNode h, CUgraphNode *out, size_t *num),
            fc_get_deps(h, out, NULL, num))
FC_DEF_INIT(cuGraphNodeGetDependencies_v2,
            (CUgraphNode h, CUgraphNode *out, CUgraphEdgeData *e, size_t *num),
            fc_get_deps(h, out, e, num))
FC_DEF_INIT(cuGraphNodeGetDependentNodes, (CUgraphNode h, CUgraphNode *out, size_t *num),
            fc_get_dependents(h, out, NULL, num))
FC_DEF_INIT(cuGraphNodeGetDependentNodes_v2,
            (CUgraphNode h, CUgraphNode *out, CUgraphEdgeData *e, size_t *num),
            fc_get_dependents(h, out, e, num))

/* Adds (add) or removes edges from[i] -> to[i]; all are checked before any is changed. */
static CUresult fc_edges_change(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
                                const CUgraphEdgeData *edges, size_t n, int add)
{
    if (!fc_graph_valid(g) || (n && (!from || !to)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_edges_default(edges, n))
        return fc_unsupported("graph edges with data");
    for (size_t i = 0; i < n; i++) {
        if (!fc_node_valid(from[i]) || !fc_node_valid(to[i]) || from[i]->g != g ||
            to[i]->g != g || from[i] == to[i] || fc_has_dep(to[i], from[i]) == add)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (from[j] == from[i] && to[j] == to[i])
                return CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; i < n; i++) {
        struct CUgraphNode_st *t = to[i];
        if (add) {
            fc_dep_push(t, from[i]);
            continue;
        }
        for (size_t j = 0; j < t->ndeps; j++)
            if (t->deps[j] == from[i]) {
                memmove(&t->deps[j], &t->deps[j + 1], (--t->ndeps - j) * sizeof *t->deps);
                break;
            }
    }
    return CUDA_SUCCESS;
}

typedef const CUgraphNode *fc_cnodes;
FC_DEF_INIT(cuGraphAddDependencies, (CUgraph g, fc_cnodes from, fc_cnodes to, size_t n),
            fc_edges_change(g, from, to, NULL, n, 1))
FC_DEF_INIT(cuGraphAddDependencies_v2,
            (CUgraph g, fc_cnodes from, fc_cnodes to, const CUgraphEdgeData *e, size_t n),
            fc_edges_change(g, from, to, e, n, 1))
FC_DEF_INIT(cuGraphRemoveDependencies, (CUgraph g, fc_cnodes from, fc_cnodes to, size_t n),
            fc_edges_change(g, from, to, NULL, n, 0))
FC_DEF_INIT(cuGraphRemoveDependencies_v2,
            (CUgraph g, fc_cnodes from, fc_cnodes to, const CUgraphEdgeData *e, size_t n),
            fc_edges_change(g, from, to, e, n, 0))

/* ---- node parameters ----------------------------------------------------------------- */

/* hNode if it is a valid node of type t, else NULL. */
static struct CUgraphNode_st *fc_typed(CUgraphNode hNode, CUgraphNodeType t)
{
    return fc_node_valid(hNode) && hNode->type == t ? hNode : NULL;
}

#define FC_NODE_OF(n, h, t)                         \
    struct CUgraphNode_st *n = fc_typed((h), (t));  \
    if (!n)                                         \
        return CUDA_ERROR_INVALID_VALUE

/* A query of one parameter field of a node of type t. */
#define FC_NODE_GETTER(name, t, ptype, field)                        \
    FC_EXPORT CUresult CUDAAPI name(CUgraphNode hNode, ptype *out)   \
    {                                                                \
        FC_ENTER_INIT(#name);                                        \
        FC_NODE_OF(n, hNode, t);                                     \
        if (!out)                                                    \
            return CUDA_ERROR_INVALID_VALUE;                         \
        *out = n->field;                                             \
        return CUDA_SUCCESS;                                         \
    }

FC_EXPORT CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
                                                         CUDA_KERNEL_NODE_PARAMS *p)
{
    FC_ENTER_INIT("cuGraphKernelNodeGetParams_v2");
    FC_NODE_OF(n, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    fc_kernel_get(n, p);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphKernelNodeGetParams(CUgraphNode hNode,
                                                      CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    FC_ENTER_INIT("cuGraphKernelNodeGetParams");
    FC_NODE_OF(n, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS k;
    fc_kernel_get(n, &k);
    memcpy(p, &k, sizeof *p); /* v1 is v2's beginning */
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
                                                         const CUDA_KERNEL_NODE_PARAMS *p)
{
    FC_ENTER_INIT("cuGraphKernelNodeSetParams_v2");
    FC_NODE_OF(n, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    return fc_set_kernel_v2(n, p);
}

FC_EXPORT CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode,
                                                      const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    FC_ENTER_INIT("cuGraphKernelNodeSetParams");
    FC_NODE_OF(n, hNode, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS k = fc_kernel_v1_to_v2(p);
    return fc_set_kernel_v2(n, &k);
}

FC_NODE_GETTER(cuGraphMemcpyNodeGetParams, CU_GRAPH_NODE_TYPE_MEMCPY, CUDA_MEMCPY3D, u.copy.p)

FC_EXPORT CUresult CUDAAPI cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *p)
{
    FC_ENTER_INIT("cuGraphMemcpyNodeSetParams");
    FC_NODE_OF(n, hNode, CU_GRAPH_NODE_TYPE_MEMCPY);
    return fc_set_copy(n, p, n->u.copy.ctx);
}

FC_NODE_GETTER(cuGraphMemsetNodeGetParams, CU_GRAPH_NODE_TYPE_MEMSET,
               CUDA_MEMSET_NODE_PARAMS, u.set.p)

FC_EXPORT CUresult CUDAAPI cuGraphMemsetNodeSetParams(CUgraphNode hNode,
                                                      const CUDA_MEMSET_NODE_PARAMS *p)
{
    FC_ENTER_INIT("cuGraphMemsetNodeSetParams");
    FC_NODE_OF(n, hNode, CU_GRAPH_NODE_TYPE_MEMSET);
    return fc_set_memset(n, p, n->u.set.ctx);
}

FC_NODE_GETTER(cuGraphHostNodeGetParams, CU_GRAPH_NODE_TYPE_HOST, CUDA_HOST_NODE_PARAMS, u.host)

FC_EXPORT CUresult CUDAAPI cuGraphHostNodeSetParams(CUgraphNode hNode,
                                                    const CUDA_HOST_NODE_PARAMS *p)
{
    FC_ENTER_INIT("cuGraphHostNodeSetParams");
    FC_NODE_OF(n, hNode, CU_GRAPH_NODE_TYPE_HOST);
    return fc_set_host(n, p);
}

FC_NODE_GETTER(cuGraphChildGraphNodeGetGraph, CU_GRAPH_NODE_TYPE_GRAPH, CUgraph, u.child)

#define FC_EVENT_ACCESSORS(type, Get, Set)                                                 \
    FC_EXPORT CUresult CUDAAPI Get(CUgraphNode hNode, CUevent *event_out)                 \
    {                                                                                      \
        FC_ENTER_INIT(#Get);                                                               \
        FC_NODE_OF(n, hNode, type);                                                        \
        if (!event_out)                                                                    \
            return CUDA_ERROR_INVALID_VALUE;                                               \
        *event_out = n->u.ev;                                                              \
        return CUDA_SUCCESS;                                                               \
    }                                                                                      \
    FC_EXPORT CUresult CUDAAPI Set(CUgraphNode hNode, CUevent event)                       \
    {                                                                                      \
        FC_ENTER_INIT(#Set);                                                               \
        FC_NODE_OF(n, hNode, type);                                                        \
        return fc_set_event(n, event);                                                     \
    }

FC_EVENT_ACCESSORS(CU_GRAPH_NODE_TYPE_EVENT_RECORD, cuGraphEventRecordNodeGetEvent,
                   cuGraphEventRecordNodeSetEvent)
FC_EVENT_ACCESSORS(CU_GRAPH_NODE_TYPE_WAIT_EVENT, cuGraphEventWaitNodeGetEvent,
                   cuGraphEventWaitNodeSetEvent)

FC_NODE_GETTER(cuGraphMemAllocNodeGetParams, CU_GRAPH_NODE_TYPE_MEM_ALLOC,
               CUDA_MEM_ALLOC_NODE_PARAMS, u.alloc.p)

FC_NODE_GETTER(cuGraphMemFreeNodeGetParams, CU_GRAPH_NODE_TYPE_MEM_FREE, CUdeviceptr, u.free)

FC_EXPORT CUresult CUDAAPI cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *p)
{
    FC_ENTER_INIT("cuGraphNodeSetParams");
    if (!fc_node_valid(hNode) || !p || p->type != hNode->type ||
        p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_set_generic(hNode, p);
}
