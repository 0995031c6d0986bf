/* Executable graphs: instantiation, updates (whole-graph and per node), launches.
 *
 * A launch submits every node, in a topological order of the graph (child graphs expanded in
 * place, in their own topological order), as operations of the launch stream: kernels run
 * their host implementations with the node's arguments, copies and memsets move and set bytes
 * with the cost model of fc_copy.c, host nodes call their function, event record and wait
 * nodes record and wait as cuEventRecord and cuStreamWaitEvent do. Independent branches
 * therefore run one after another, never overlapping: a graph's modelled time is the sum of its
 * nodes' (a GPU may overlap branches; the simulation does not). Empty, memory-allocation and
 * memory-free nodes, and nodes disabled with cuGraphNodeSetEnabled, do nothing when run (the allocation lives with the graph, fc_gnode.c).
 * A conditional node is one operation of the stream that, when it starts (its dependencies
 * done), reads its handle's value and runs the chosen body inline, node after node in
 * topological order with their modelled durations (a while body again while the value is
 * nonzero); kernels in a body set the value through fakecuda_graph_set_conditional
 * (fakecuda.h), the host-side equivalent of cudaGraphSetConditional. A handle made with
 * CU_GRAPH_COND_ASSIGN_DEFAULT takes its default value when each launch begins, in stream order.
 * FAKECUDA_TRUTH logs each kernel, copy and memset node with the launching thread's id, its
 * position in the launch (from 1) and " graph=L", L counting the thread's graph launches from 1;
 * graph nodes take no index from the thread's own kernels, copies and sets. Nodes run inside a
 * conditional body have INDEX 0 (how many run is known only then). */
#define _GNU_SOURCE
#include "fc_graph.h"
#include "fc_module.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fc_exec_valid(const struct CUgraphExec_st *x)
{
    return x && x->magic == FC_GEXEC_MAGIC;
}

/* Whether g and its child graphs are acyclic and conditional bodies hold only the node types
 * CUDA allows there (kernels, empty nodes, child graphs, memsets, copies, conditionals). */
static int fc_graph_ok(const struct CUgraph_st *g, int in_body)
{
    size_t *order = malloc((g->n + 1) * sizeof *order);
    if (!order)
        fc_fatal("out of host memory for a graph");
    int ok = fc_graph_topo(g, order) == 0;
    free(order);
    for (size_t i = 0; ok && i < g->n; i++) {
        const struct CUgraphNode_st *n = g->nodes[i];
        switch (n->type) {
        case CU_GRAPH_NODE_TYPE_GRAPH:
            ok = fc_graph_ok(n->u.child, in_body);
            break;
        case CU_GRAPH_NODE_TYPE_CONDITIONAL:
            for (unsigned b = 0; ok && b < n->u.cond.p.size; b++)
                ok = fc_graph_ok(n->u.cond.body[b], 1);
            break;
        case CU_GRAPH_NODE_TYPE_KERNEL:
        case CU_GRAPH_NODE_TYPE_EMPTY:
        case CU_GRAPH_NODE_TYPE_MEMSET:
        case CU_GRAPH_NODE_TYPE_MEMCPY:
            break;
        default:
            ok = !in_body;
        }
    }
    return ok;
}

static CUresult fc_instantiate(CUgraphExec *out, CUgraph g, unsigned long long flags,
                               CUgraphInstantiateResult *res)
{
    if (res)
        *res = CUDA_GRAPH_INSTANTIATE_ERROR;
    if (!out || !g || g->magic != FC_GRAPH_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    /* Device launch and node priorities are not simulated; the others change nothing here. */
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
                                      CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD))
        return CUDA_ERROR_INVALID_VALUE;
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_graph_ok(g, 0)) {
        if (res)
            *res = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    if (!x)
        fc_fatal("out of host memory for a graph");
    x->magic = FC_GEXEC_MAGIC;
    x->g = fc_graph_clone(g);
    x->src = g;
    x->nsrc = g->n;
    x->flags = flags;
    x->ctx = c;
    *out = x;
    if (res)
        *res = CUDA_GRAPH_INSTANTIATE_SUCCESS;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                       unsigned long long flags)
{
    FC_ENTER_INIT("cuGraphInstantiateWithFlags");
    return fc_instantiate(phGraphExec, hGraph, flags, NULL);
}

/* The CUDA 10 form (and its _v2 alias): an error node and a log the simulation leaves empty. */
static CUresult fc_instantiate_v1(CUgraphExec *x, CUgraph g, CUgraphNode *err, char *log,
                                  size_t logsize)
{
    if (err)
        *err = NULL;
    if (log && logsize)
        log[0] = 0;
    return fc_instantiate(x, g, 0, NULL);
}

FC_DEF_INIT(cuGraphInstantiate,
            (CUgraphExec *x, CUgraph g, CUgraphNode *err, char *log, size_t logsize),
            fc_instantiate_v1(x, g, err, log, logsize))
FC_DEF_INIT(cuGraphInstantiate_v2,
            (CUgraphExec *x, CUgraph g, CUgraphNode *err, char *log, size_t logsize),
            fc_instantiate_v1(x, g, err, log, logsize))

static CUresult fc_instantiate_params(CUgraphExec *x, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = NULL;
    return fc_instantiate(x, g, p->flags, &p->result_out);
}

FC_DEF_INIT(cuGraphInstantiateWithParams,
            (CUgraphExec *x, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
            fc_instantiate_params(x, g, p))
FC_DEF_INIT(cuGraphInstantiateWithParams_ptsz,
            (CUgraphExec *x, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p),
            fc_instantiate_params(x, g, p))

FC_EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    FC_ENTER_INIT("cuGraphExecDestroy");
    if (!fc_exec_valid(hGraphExec))
        return CUDA_ERROR_INVALID_VALUE;
    fc_graph_free(hGraphExec->g);
    hGraphExec->magic = 0;
    free(hGraphExec);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
    FC_ENTER_INIT("cuGraphExecGetFlags");
    if (!fc_exec_valid(hGraphExec) || !flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = hGraphExec->flags;
    return CUDA_SUCCESS;
}

/* An upload makes a later launch cheaper on a GPU; here there is nothing to upload. */
static CUresult fc_upload(CUgraphExec x, CUstream h, int pt)
{
    if (!fc_exec_valid(x))
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream *s;
    return fc_stream_resolve(h, pt, &s);
}

FC_DEF_INIT(cuGraphUpload, (CUgraphExec x, CUstream h), fc_upload(x, h, 0))
FC_DEF_INIT(cuGraphUpload_ptsz, (CUgraphExec x, CUstream h), fc_upload(x, h, 1))

/* ---- launch --------------------------------------------------------------------------- */

static __thread uint64_t fc_graph_launches; /* this thread's, for FAKECUDA_TRUTH */

typedef struct {
    fc_stream *s;
    uint64_t launch; /* FAKECUDA_TRUTH: the thread's graph launch; 0 when not logging */
    uint64_t logged;  /* kernels, copies and sets submitted so far */
    uint32_t tid;
    int inline_run;   /* inside a conditional node's op: run each op now, on s's worker */
    int64_t t;        /* ... the end of the last one */
} fc_run;

static void fc_run_submit(fc_run *run, fc_op *op)
{
    if (run->launch && op->kind != FC_OP_HOSTFN && op->kind != FC_OP_DEVICE) {
        op->truth_graph = run->launch;
        op->truth_tid = run->tid;
        op->truth_idx = run->inline_run ? 0 : ++run->logged;
    }
    if (!run->inline_run || fc_g.instant) { /* instant mode runs every op inline anyway */
        fc_submit(run->s, op);
        return;
    }
    run->t = fc_op_run_at(run->s, op, run->t);
    fc_op_free(op);
}

/* A conditional node's op: its own copy of the node (bodies and all), and how to log. */
typedef struct {
    struct CUgraphNode_st node;
    uint64_t launch;
    uint32_t tid;
} fc_cond_run;

static void fc_run_graph(fc_run *run, const struct CUgraph_st *g);

static int64_t fc_cond_exec(void *arg, fc_stream *s, int64_t start)
{
    fc_cond_run *c = arg;
    const CUDA_CONDITIONAL_NODE_PARAMS *p = &c->node.u.cond.p;
    fc_cond *h = fc_cond_of(p->handle);
    fc_run run = {s, c->launch, 0, c->tid, 1, start};
    if (p->type == CU_GRAPH_COND_TYPE_WHILE) {
        while (atomic_load(&h->value))
            fc_run_graph(&run, c->node.u.cond.body[0]);
    } else {
        unsigned v = atomic_load(&h->value);
        unsigned b = p->type == CU_GRAPH_COND_TYPE_IF ? (v ? 0 : 1) : v;
        if (b < p->size)
            fc_run_graph(&run, c->node.u.cond.body[b]);
    }
    return run.t;
}

static void fc_cond_release(void *arg)
{
    fc_cond_run *c = arg;
    fc_node_params_free(&c->node);
    free(c);
}

/* A launch's first operation when the graph has handles with default values. */
static int64_t fc_cond_defaults(void *arg, fc_stream *s, int64_t start)
{
    (void)s;
    const struct CUgraph_st *g = arg;
    for (size_t i = 0; i < g->nconds; i++)
        if (g->conds[i]->flags & CU_GRAPH_COND_ASSIGN_DEFAULT)
            atomic_store(&g->conds[i]->value, g->conds[i]->dflt);
    return start;
}

static void fc_graph_release(void *arg)
{
    fc_graph_free(arg);
}

static void fc_run_node(fc_run *run, const struct CUgraphNode_st *n)
{
    fc_op *op;
    if (n->disabled)
        return; /* runs as an empty node */
    switch (n->type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
        const struct CUfunc_st *f = n->u.k.f;
        const fakecuda_launch *l = &n->u.k.launch;
        op = fc_op_new(FC_OP_KERNEL);
        op->u.kernel.fn = f->host;
        op->u.kernel.f = n->u.k.f;
        op->u.kernel.launch = *l;
        /* each launch gets its own copy: a later update must not change a queued launch */
        op->u.kernel.params = n->u.k.args ? fc_kernel_args_copy(f, n->u.k.args) : n->u.k.raw;
        if (n->u.k.args)
            op->staging = op->u.kernel.params;
        op->dur_ns = fc_kernel_ns(f->ns_override, l->grid[0], l->grid[1], l->grid[2],
                                  l->block[0], l->block[1], l->block[2],
                                  fc_ctx_dev(n->u.k.ctx)->d);
        fc_run_submit(run, op);
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
        const CUDA_MEMCPY3D *p = &n->u.copy.p;
        for (size_t z = 0; z < p->Depth; z++) {
            op = fc_op_new(FC_OP_COPY2D);
            op->u.copy2d.p = fc_copy3d_slice(p, z);
            const CUDA_MEMCPY2D *q = &op->u.copy2d.p;
            uintptr_t src = q->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)q->srcHost
                                                                   : (uintptr_t)q->srcDevice;
            uintptr_t dst = q->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)q->dstHost
                                                                   : (uintptr_t)q->dstDevice;
            fc_copy_model(op, n->u.copy.ctx, src, dst, q->WidthInBytes * q->Height);
            fc_run_submit(run, op);
        }
        break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
        const CUDA_MEMSET_NODE_PARAMS *p = &n->u.set.p;
        op = fc_op_new(FC_OP_MEMSET);
        op->u.memset.dst = (char *)(uintptr_t)p->dst;
        op->u.memset.value = p->value;
        op->u.memset.elem = p->elementSize;
        op->u.memset.count = p->width;
        op->u.memset.pitch = p->pitch;
        op->u.memset.height = p->height;
        op->dur_ns = FC_COPY_LATENCY_NS +
                     fc_bytes_ns(p->width * p->elementSize * p->height,
                                 fc_dev_mem_bw(fc_ctx_dev(n->u.set.ctx)->d));
        fc_run_submit(run, op);
        break;
    }
    case CU_GRAPH_NODE_TYPE_HOST:
        op = fc_op_new(FC_OP_HOSTFN);
        op->u.hostfn.fn = n->u.host.fn;
        op->u.hostfn.user = n->u.host.userData;
        fc_run_submit(run, op);
        break;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        fc_event_record_on(run->s, n->u.ev);
        break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        fc_stream_wait_event_on(run->s, n->u.ev);
        break;
    case CU_GRAPH_NODE_TYPE_GRAPH:
        fc_run_graph(run, n->u.child);
        break;
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: {
        fc_cond_run *c = calloc(1, sizeof *c);
        if (!c)
            fc_fatal("out of host memory for a graph launch");
        c->node.type = CU_GRAPH_NODE_TYPE_EMPTY;
        fc_node_params_copy(&c->node, n);
        c->node.type = n->type;
        c->launch = run->launch;
        c->tid = run->tid;
        if (fc_g.instant) { /* now: an op would be the thread's one instant op, reused inside */
            fc_cond_exec(c, run->s, fc_now_ns());
            fc_cond_release(c);
            break;
        }
        op = fc_op_new(FC_OP_DEVICE);
        op->u.device.run = fc_cond_exec;
        op->u.device.arg = c;
        op->u.device.release = fc_cond_release;
        fc_run_submit(run, op);
        break;
    }
    default: /* empty, memory allocation and free: nothing to run */
        break;
    }
}

static void fc_run_graph(fc_run *run, const struct CUgraph_st *g)
{
    size_t *order = malloc((g->n + 1) * sizeof *order);
    if (!order)
        fc_fatal("out of host memory for a graph launch");
    fc_graph_topo(g, order); /* acyclic: checked at instantiation */
    for (size_t i = 0; i < g->n; i++)
        fc_run_node(run, g->nodes[order[i]]);
    free(order);
}

static CUresult fc_graph_launch(CUgraphExec x, CUstream h, int pt)
{
    if (!fc_exec_valid(x))
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS || (r = fc_capture_legacy_check(s)) != CUDA_SUCCESS)
        return r;
    if (s->ctx != x->ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fc_capture_graph(s, x->g))
        return CUDA_SUCCESS;
    fc_run run = {s, 0, 0, 0, 0, 0};
    if (fc_g.truth_fd >= 0) {
        run.launch = ++fc_graph_launches;
        run.tid = (uint32_t)gettid();
    }
    if (x->g->nconds) {
        struct CUgraph_st *handles = fc_graph_new(); /* a carrier of the handle list */
        handles->conds = malloc(x->g->nconds * sizeof *handles->conds);
        if (!handles->conds)
            fc_fatal("out of host memory for a graph launch");
        memcpy(handles->conds, x->g->conds, x->g->nconds * sizeof *handles->conds);
        handles->nconds = x->g->nconds;
        fc_op *op = fc_op_new(FC_OP_DEVICE);
        op->u.device.run = fc_cond_defaults;
        op->u.device.arg = handles;
        op->u.device.release = fc_graph_release;
        fc_submit(s, op);
    }
    fc_run_graph(&run, x->g);
    return CUDA_SUCCESS;
}

FC_DEF_INIT(cuGraphLaunch, (CUgraphExec x, CUstream h), fc_graph_launch(x, h, 0))
FC_DEF_INIT(cuGraphLaunch_ptsz, (CUgraphExec x, CUstream h), fc_graph_launch(x, h, 1))

/* ---- updates -------------------------------------------------------------------------- */

/* The executable graph's copy of hNode (a node of the graph x was instantiated from) if it
 * has type t. */
static struct CUgraphNode_st *fc_exec_node(CUgraphExec x, CUgraphNode hNode, CUgraphNodeType t)
{
    if (!fc_exec_valid(x) || !fc_node_valid(hNode) || hNode->g != x->src ||
        hNode->idx >= x->nsrc || hNode->type != t)
        return NULL;
    struct CUgraphNode_st *n = x->g->nodes[hNode->idx];
    return n->type == t ? n : NULL;
}

#define FC_EXEC_NODE_OF(n, x, h, t)                              \
    struct CUgraphNode_st *n = fc_exec_node((x), (h), (t));      \
    if (!n)                                                      \
        return CUDA_ERROR_INVALID_VALUE

#define FC_EXEC_UNPAREN(...) __VA_ARGS__
/* cuGraphExec*SetParams: call on the executable graph's copy n of node h, of type t. */
#define FC_EXEC_SETTER(name, t, params, call)                                             \
    FC_EXPORT CUresult CUDAAPI name(CUgraphExec x, CUgraphNode h, FC_EXEC_UNPAREN params) \
    {                                                                                     \
        FC_ENTER_INIT(#name);                                                             \
        FC_EXEC_NODE_OF(n, x, h, t);                                                      \
        return call;                                                                      \
    }

FC_EXEC_SETTER(cuGraphExecKernelNodeSetParams_v2, CU_GRAPH_NODE_TYPE_KERNEL,
               (const CUDA_KERNEL_NODE_PARAMS *p), fc_set_kernel_v2(n, p))

FC_EXPORT CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode h,
                                                          const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    FC_ENTER_INIT("cuGraphExecKernelNodeSetParams");
    FC_EXEC_NODE_OF(n, x, h, CU_GRAPH_NODE_TYPE_KERNEL);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS k = {p->func, p->gridDimX, p->gridDimY, p->gridDimZ,
                                 p->blockDimX, p->blockDimY, p->blockDimZ, p->sharedMemBytes,
                                 p->kernelParams, p->extra, NULL, NULL};
    return fc_set_kernel_v2(n, &k);
}

FC_EXEC_SETTER(cuGraphExecMemcpyNodeSetParams, CU_GRAPH_NODE_TYPE_MEMCPY,
               (const CUDA_MEMCPY3D *p, CUcontext ctx), fc_set_copy(n, p, ctx))

FC_EXEC_SETTER(cuGraphExecMemsetNodeSetParams, CU_GRAPH_NODE_TYPE_MEMSET,
               (const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx), fc_set_memset(n, p, ctx))

FC_EXEC_SETTER(cuGraphExecHostNodeSetParams, CU_GRAPH_NODE_TYPE_HOST,
               (const CUDA_HOST_NODE_PARAMS *p), fc_set_host(n, p))

FC_EXEC_SETTER(cuGraphExecChildGraphNodeSetParams, CU_GRAPH_NODE_TYPE_GRAPH,
               (CUgraph child), fc_set_child(n, child, 0))

FC_EXEC_SETTER(cuGraphExecEventRecordNodeSetEvent, CU_GRAPH_NODE_TYPE_EVENT_RECORD,
               (CUevent ev), fc_set_event(n, ev))

FC_EXEC_SETTER(cuGraphExecEventWaitNodeSetEvent, CU_GRAPH_NODE_TYPE_WAIT_EVENT,
               (CUevent ev), fc_set_event(n, ev))

FC_EXPORT CUresult CUDAAPI cuGraphExecNodeSetParams(CUgraphExec x, CUgraphNode h,
                                                    CUgraphNodeParams *p)
{
    FC_ENTER_INIT("cuGraphExecNodeSetParams");
    if (!p || !fc_node_valid(h))
        return CUDA_ERROR_INVALID_VALUE;
    FC_EXEC_NODE_OF(n, x, h, h->type);
    /* "memory nodes ... cannot be updated" (cuda.h) */
    if (p->type != n->type || p->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
        p->type == CU_GRAPH_NODE_TYPE_MEM_FREE)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_set_generic(n, p);
}

static CUresult fc_node_enabled(CUgraphExec x, CUgraphNode h, unsigned *get, unsigned set)
{
    /* "only kernel, memset and memcpy nodes are supported" (cuda.h) */
    struct CUgraphNode_st *n = NULL;
    if (fc_node_valid(h) && (h->type == CU_GRAPH_NODE_TYPE_KERNEL ||
                             h->type == CU_GRAPH_NODE_TYPE_MEMSET ||
                             h->type == CU_GRAPH_NODE_TYPE_MEMCPY))
        n = fc_exec_node(x, h, h->type);
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    if (get)
        *get = !n->disabled;
    else
        n->disabled = !set;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphNodeSetEnabled(CUgraphExec x, CUgraphNode h, unsigned int on)
{
    FC_ENTER_INIT("cuGraphNodeSetEnabled");
    return fc_node_enabled(x, h, NULL, on);
}

FC_EXPORT CUresult CUDAAPI cuGraphNodeGetEnabled(CUgraphExec x, CUgraphNode h, unsigned int *on)
{
    FC_ENTER_INIT("cuGraphNodeGetEnabled");
    if (!on)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_node_enabled(x, h, on, 0);
}

static int fc_same_deps(const struct CUgraphNode_st *a, const struct CUgraphNode_st *b)
{
    if (a->ndeps != b->ndeps)
        return 0;
    for (size_t i = 0; i < a->ndeps; i++) {
        size_t j = 0;
        while (j < b->ndeps && b->deps[j]->idx != a->deps[i]->idx)
            j++;
        if (j == b->ndeps)
            return 0;
    }
    return 1;
}

/* Takes g's node parameters into x when g has x's topology (nodes paired by position, as the
 * graph x came from and a graph built the same way have them). */
static CUresult fc_exec_update(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    if (!fc_exec_valid(x) || !g || g->magic != FC_GRAPH_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphExecUpdateResultInfo res = {CU_GRAPH_EXEC_UPDATE_SUCCESS, NULL, NULL};
    if (g->n != x->g->n)
        res.result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (size_t i = 0; i < g->n && res.result == CU_GRAPH_EXEC_UPDATE_SUCCESS; i++) {
        const struct CUgraphNode_st *a = g->nodes[i], *b = x->g->nodes[i];
        if (a->type != b->type)
            res.result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        else if (!fc_same_deps(a, b))
            res.result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        else if ((a->type == CU_GRAPH_NODE_TYPE_MEM_ALLOC &&
                  a->u.alloc.a != b->u.alloc.a) ||
                 (a->type == CU_GRAPH_NODE_TYPE_MEM_FREE && a->u.free != b->u.free))
            res.result = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
        else if (a->type == CU_GRAPH_NODE_TYPE_KERNEL && a->u.k.ctx != b->u.k.ctx)
            res.result = CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
        if (res.result != CU_GRAPH_EXEC_UPDATE_SUCCESS)
            res.errorNode = (CUgraphNode)a;
    }
    if (info)
        *info = res;
    if (res.result != CU_GRAPH_EXEC_UPDATE_SUCCESS)
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    for (size_t i = 0; i < g->n; i++)
        fc_node_params_copy(x->g->nodes[i], g->nodes[i]);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g,
                                                CUgraphExecUpdateResultInfo *info)
{
    FC_ENTER_INIT("cuGraphExecUpdate_v2");
    return fc_exec_update(x, g, info);
}

FC_EXPORT CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec x, CUgraph g, CUgraphNode *errNode,
                                             CUgraphExecUpdateResult *result)
{
    FC_ENTER_INIT("cuGraphExecUpdate");
    CUgraphExecUpdateResultInfo info;
    CUresult r = fc_exec_update(x, g, &info);
    if (errNode)
        *errNode = r == CUDA_ERROR_INVALID_VALUE ? NULL : info.errorNode;
    if (result)
        *result = r == CUDA_ERROR_INVALID_VALUE ? CU_GRAPH_EXEC_UPDATE_ERROR : info.result;
    return r;
}

/* ---- conditional handles --------------------------------------------------------------- */

FC_EXPORT CUresult CUDAAPI cuGraphConditionalHandleCreate(CUgraphConditionalHandle *pHandle_out,
                                                          CUgraph hGraph, CUcontext ctx,
                                                          unsigned int defaultLaunchValue,
                                                          unsigned int flags)
{
    FC_ENTER_INIT("cuGraphConditionalHandleCreate");
    if (!pHandle_out || !hGraph || hGraph->magic != FC_GRAPH_MAGIC ||
        (flags & ~(unsigned)CU_GRAPH_COND_ASSIGN_DEFAULT) || !fc_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_VALUE;
    fc_cond *c = calloc(1, sizeof *c);
    fc_cond **v = realloc(hGraph->conds, (hGraph->nconds + 1) * sizeof *v);
    if (!c || !v)
        fc_fatal("out of host memory for a conditional handle");
    *c = (fc_cond){FC_COND_MAGIC, defaultLaunchValue, defaultLaunchValue, flags, ctx};
    hGraph->conds = v;
    hGraph->conds[hGraph->nconds++] = c;
    *pHandle_out = (CUgraphConditionalHandle)(uintptr_t)c;
    return CUDA_SUCCESS;
}

FC_EXPORT void fakecuda_graph_set_conditional(unsigned long long handle, unsigned int value)
{
    fc_cond *c = fc_cond_of(handle);
    if (!c)
        fc_fatal("fakecuda_graph_set_conditional: expected a conditional handle, found %#llx",
                 handle);
    atomic_store(&c->value, value);
}
