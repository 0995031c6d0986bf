/* Stream capture (CUDA programming guide, "Creating a Graph Using Stream Capture"): an operation
 * on a capturing stream (kernel, copy, memset, host function, graph launch, stream-ordered
 * allocation and free; an event record with
 * CU_EVENT_RECORD_EXTERNAL; a wait for an event recorded outside the capture) becomes a node
 * of the capture's graph, depending on the stream's capture dependencies, which it then
 * replaces. Other streams join a capture by waiting for an event recorded in it (taking the
 * event's dependencies: fork and join). cuStreamEndCapture on the stream that began it returns
 * the graph and ends every stream's part in it (CUDA_ERROR_STREAM_CAPTURE_UNJOINED, and no graph,
 * when a stream that joined has work its origin does not wait for). The rules a capture can be broken by are
 * simulated, since a tracer must not break them:
 *   - an event recorded into a capturing stream belongs to the capture: querying or
 *     synchronizing it fails (CUDA_ERROR_CAPTURED_EVENT) and invalidates the capture;
 *   - while a blocking stream captures, the legacy stream of its context is unusable: a launch
 *     or event record there fails (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) and invalidates the
 *     capture; cuStreamIsCapturing on it fails harmlessly;
 *   - "potentially unsafe" calls (event and stream queries and synchronizations, here) fail
 *     (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and invalidate the captures they conflict with,
 *     per the calling thread's mode (cuThreadExchangeStreamCaptureMode): global, a capture of
 *     its own not begun relaxed or any other thread's capture begun in global mode;
 *     thread-local, its own only; relaxed, none.
 * An invalidated capture ends with cuStreamEndCapture returning
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph. */
#define _GNU_SOURCE
#include "fc_graph.h"
#include "fc_module.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One capture sequence. */
struct fc_capture {
    struct CUgraph_st *graph;
    CUstreamCaptureMode mode;
    pid_t tid;              /* the thread that began it */
    unsigned long long id;
    int invalidated;
    struct fc_capture *next;
    fc_stream *origin;      /* the stream it was begun on */
    int user_graph;         /* cuStreamBeginCaptureToGraph: the graph is the caller's */
};

static pthread_mutex_t fc_cap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fc_capture *fc_captures; /* active sequences */
static _Atomic int fc_ncaptures;       /* how many: the fast path reads only this */
static unsigned long long fc_capture_ids;

static void fc_invalidate(struct fc_capture *c)
{
    c->invalidated = 1;
}

/* Whether a blocking stream of c's context captures; invalidates those if invalidate. Called
 * with fc_cap_lock held. */
static int fc_blocking_capture(fc_ctx *ctx, int invalidate)
{
    int found = 0;
    pthread_mutex_lock(&ctx->lock);
    for (fc_stream *t = ctx->streams; t; t = t->ctx_next)
        if (t->capture && !(t->flags & CU_STREAM_NON_BLOCKING)) {
            found = 1;
            if (invalidate)
                fc_invalidate(t->capture);
        }
    pthread_mutex_unlock(&ctx->lock);
    return found;
}

CUresult fc_capture_status(fc_stream *s, CUstreamCaptureStatus *st, cuuint64_t *id)
{
    *st = CU_STREAM_CAPTURE_STATUS_NONE;
    if (id)
        *id = 0;
    if (!atomic_load(&fc_ncaptures))
        return CUDA_SUCCESS;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fc_cap_lock);
    struct fc_capture *c = s->capture;
    if (c) {
        *st = c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                             : CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (id)
            *id = c->id;
    } else if (s->legacy && fc_blocking_capture(s->ctx, 0)) {
        r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT; /* "the blocking stream capture is not
                                                  * invalidated" (cuda.h) */
    }
    pthread_mutex_unlock(&fc_cap_lock);
    return r;
}

CUresult fc_capture_legacy_check(fc_stream *s)
{
    if (!atomic_load(&fc_ncaptures) || !s->legacy)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&fc_cap_lock);
    int found = fc_blocking_capture(s->ctx, 1);
    pthread_mutex_unlock(&fc_cap_lock);
    return found ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
}

static void fc_nodeset_reserve(fc_nodeset *ns, size_t n)
{
    if (n <= ns->cap)
        return;
    ns->cap = n < 8 ? 8 : 2 * n;
    ns->v = realloc(ns->v, ns->cap * sizeof *ns->v);
    ns->e = realloc(ns->e, ns->cap * sizeof *ns->e);
    if (!ns->v || !ns->e)
        fc_fatal("out of host memory for capture dependencies");
}

static void fc_nodeset_set(fc_nodeset *ns, struct CUgraphNode_st *const *v, size_t n)
{
    fc_nodeset_reserve(ns, n);
    if (n)
        memcpy(ns->v, v, n * sizeof *v);
    if (ns->cap)
        memset(ns->e, 0, ns->cap * sizeof *ns->e);
    ns->n = n;
}

static void fc_nodeset_add(fc_nodeset *ns, struct CUgraphNode_st *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < ns->n && ns->v[j] != v[i])
            j++;
        if (j < ns->n)
            continue;
        fc_nodeset_reserve(ns, ns->n + 1);
        memset(&ns->e[ns->n], 0, sizeof *ns->e);
        ns->v[ns->n++] = v[i];
    }
}

void fc_nodeset_free(fc_nodeset *ns)
{
    free(ns->v);
    free(ns->e);
    memset(ns, 0, sizeof *ns);
}

/* A node of type t in s's capture after s's capture dependencies, which it becomes. Called
 * with fc_cap_lock held, s capturing. */
static struct CUgraphNode_st *fc_capture_node(fc_stream *s, CUgraphNodeType t)
{
    CUresult r;
    struct CUgraphNode_st *n = fc_node_add(s->capture->graph, t, s->capdeps.v, s->capdeps.n, &r);
    if (!n)
        fc_fatal("a capture's dependencies are not nodes of its graph");
    fc_nodeset_set(&s->capdeps, &n, 1);
    return n;
}

/* A 1D copy (dst, src, n) as a graph copy node's parameters: addresses are unified. */
static CUDA_MEMCPY3D fc_copy_1d_params(const fc_op *op)
{
    return (CUDA_MEMCPY3D){.srcMemoryType = CU_MEMORYTYPE_UNIFIED,
                           .srcDevice = (CUdeviceptr)(uintptr_t)op->u.copy.src,
                           .dstMemoryType = CU_MEMORYTYPE_UNIFIED,
                           .dstDevice = (CUdeviceptr)(uintptr_t)op->u.copy.dst,
                           .WidthInBytes = op->u.copy.n, .Height = 1, .Depth = 1};
}

static CUDA_MEMCPY3D fc_copy_2d_params(const CUDA_MEMCPY2D *p)
{
    return (CUDA_MEMCPY3D){
        .srcXInBytes = p->srcXInBytes, .srcY = p->srcY, .srcMemoryType = p->srcMemoryType,
        .srcHost = p->srcHost, .srcDevice = p->srcDevice, .srcPitch = p->srcPitch,
        .srcHeight = p->Height + p->srcY, .dstXInBytes = p->dstXInBytes, .dstY = p->dstY,
        .dstMemoryType = p->dstMemoryType, .dstHost = p->dstHost, .dstDevice = p->dstDevice,
        .dstPitch = p->dstPitch, .dstHeight = p->Height + p->dstY,
        .WidthInBytes = p->WidthInBytes, .Height = p->Height, .Depth = 1};
}

int fc_capture_add(fc_stream *s, const fc_op *op)
{
    if (!atomic_load(&fc_ncaptures))
        return 0;
    if (op->kind != FC_OP_KERNEL && op->kind != FC_OP_COPY && op->kind != FC_OP_COPY2D &&
        op->kind != FC_OP_MEMSET && op->kind != FC_OP_HOSTFN && op->kind != FC_OP_FREE)
        return 0;
    pthread_mutex_lock(&fc_cap_lock);
    if (!s->capture) {
        pthread_mutex_unlock(&fc_cap_lock);
        return 0;
    }
    struct CUgraphNode_st *n;
    switch (op->kind) {
    case FC_OP_KERNEL: {
        const struct CUfunc_st *f = op->u.kernel.f;
        n = fc_capture_node(s, CU_GRAPH_NODE_TYPE_KERNEL);
        n->u.k.f = op->u.kernel.f;
        n->u.k.launch = op->u.kernel.launch;
        n->u.k.ctx = s->ctx;
        /* the launch's arguments are copied (fc_launch); a graph keeps its own */
        n->u.k.args = fc_kernel_args_copy(f, op->u.kernel.params);
        n->u.k.raw = f->nparams < 0 ? op->u.kernel.params : NULL;
        break;
    }
    case FC_OP_COPY:
        n = fc_capture_node(s, CU_GRAPH_NODE_TYPE_MEMCPY);
        n->u.copy.p = fc_copy_1d_params(op);
        n->u.copy.ctx = s->ctx;
        break;
    case FC_OP_COPY2D:
        n = fc_capture_node(s, CU_GRAPH_NODE_TYPE_MEMCPY);
        n->u.copy.p = fc_copy_2d_params(&op->u.copy2d.p);
        n->u.copy.ctx = s->ctx;
        break;
    case FC_OP_MEMSET:
        n = fc_capture_node(s, CU_GRAPH_NODE_TYPE_MEMSET);
        n->u.set.p = (CUDA_MEMSET_NODE_PARAMS){
            (CUdeviceptr)(uintptr_t)op->u.memset.dst, op->u.memset.pitch, op->u.memset.value,
            op->u.memset.elem, op->u.memset.count, op->u.memset.height};
        n->u.set.ctx = s->ctx;
        break;
    case FC_OP_FREE:
        fc_capture_node(s, CU_GRAPH_NODE_TYPE_MEM_FREE)->u.free = (CUdeviceptr)op->u.free.p;
        break;
    default:
        n = fc_capture_node(s, CU_GRAPH_NODE_TYPE_HOST);
        n->u.host = (CUDA_HOST_NODE_PARAMS){op->u.hostfn.fn, op->u.hostfn.user};
        break;
    }
    pthread_mutex_unlock(&fc_cap_lock);
    return 1;
}

int fc_capture_alloc(fc_stream *s, size_t bytesize, CUdeviceptr *dptr, CUresult *r)
{
    if (!atomic_load(&fc_ncaptures))
        return 0;
    pthread_mutex_lock(&fc_cap_lock);
    int capturing = s->capture != NULL;
    if (capturing) {
        CUDA_MEM_ALLOC_NODE_PARAMS p = {.bytesize = bytesize};
        p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.poolProps.location = (CUmemLocation){CU_MEM_LOCATION_TYPE_DEVICE, s->ctx->dev};
        struct CUgraphNode_st made = {.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC};
        if ((*r = fc_set_alloc(&made, &p, s->ctx)) == CUDA_SUCCESS) {
            fc_capture_node(s, CU_GRAPH_NODE_TYPE_MEM_ALLOC)->u = made.u;
            *dptr = p.dptr;
        }
    }
    pthread_mutex_unlock(&fc_cap_lock);
    return capturing;
}

int fc_capture_graph(fc_stream *s, const struct CUgraph_st *g)
{
    if (!atomic_load(&fc_ncaptures))
        return 0;
    pthread_mutex_lock(&fc_cap_lock);
    int capturing = s->capture != NULL;
    if (capturing)
        fc_capture_node(s, CU_GRAPH_NODE_TYPE_GRAPH)->u.child = fc_graph_clone(g);
    pthread_mutex_unlock(&fc_cap_lock);
    return capturing;
}

int fc_capture_event_record(fc_stream *s, struct CUevent_st *ev, unsigned flags)
{
    if (!atomic_load(&fc_ncaptures))
        return 0;
    pthread_mutex_lock(&fc_cap_lock);
    struct fc_capture *c = s->capture;
    if (c && (flags & CU_EVENT_RECORD_EXTERNAL)) {
        fc_capture_node(s, CU_GRAPH_NODE_TYPE_EVENT_RECORD)->u.ev = ev;
    } else if (c) {
        pthread_mutex_lock(&ev->m);
        ev->captured = 1;
        ev->cap_id = c->id;
        fc_nodeset_set(&ev->cap_deps, s->capdeps.v, s->capdeps.n);
        if (ev->s != s) {
            fc_stream_ref(s);
            if (ev->s)
                fc_stream_unref(ev->s);
            ev->s = s;
        }
        pthread_mutex_unlock(&ev->m);
    }
    pthread_mutex_unlock(&fc_cap_lock);
    return c != NULL;
}

int fc_capture_event_wait(fc_stream *s, struct CUevent_st *ev, CUresult *r)
{
    if (!atomic_load(&fc_ncaptures))
        return 0;
    int handled = 0;
    *r = CUDA_SUCCESS;
    pthread_mutex_lock(&fc_cap_lock);
    struct fc_capture *c = NULL;
    pthread_mutex_lock(&ev->m);
    if (ev->captured)
        for (c = fc_captures; c && c->id != ev->cap_id; c = c->next)
            ;
    if (c) {
        handled = 1;
        if (s->capture && s->capture != c) {
            *r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
        } else if (s->legacy) {
            *r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        } else if (!s->capture) { /* fork: s joins the capture */
            s->capture = c;
            fc_nodeset_set(&s->capdeps, ev->cap_deps.v, ev->cap_deps.n);
        } else { /* join */
            fc_nodeset_add(&s->capdeps, ev->cap_deps.v, ev->cap_deps.n);
        }
    }
    pthread_mutex_unlock(&ev->m);
    if (!handled && s->capture) {
        /* an event from outside the capture: the graph waits for it when it runs */
        fc_capture_node(s, CU_GRAPH_NODE_TYPE_WAIT_EVENT)->u.ev = ev;
        handled = 1;
    }
    pthread_mutex_unlock(&fc_cap_lock);
    return handled;
}

void fc_capture_event_used(fc_stream *s)
{
    pthread_mutex_lock(&fc_cap_lock);
    if (s && s->capture)
        fc_invalidate(s->capture);
    pthread_mutex_unlock(&fc_cap_lock);
}

CUresult fc_capture_unsafe(void)
{
    if (!atomic_load(&fc_ncaptures) || fc_capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    pid_t me = gettid();
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fc_cap_lock);
    for (struct fc_capture *c = fc_captures; c; c = c->next) {
        int own = c->tid == me && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
        int other = c->tid != me && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
                    fc_capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
        if (own || other) {
            fc_invalidate(c);
            r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    pthread_mutex_unlock(&fc_cap_lock);
    return r;
}

/* Begins a capture on s into g (NULL: a new graph) after deps. */
static CUresult fc_begin_capture(CUstream h, int pt, CUstreamCaptureMode mode,
                                 struct CUgraph_st *g, const CUgraphNode *deps,
                                 const CUgraphEdgeData *edges, size_t ndeps)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (s->legacy)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (g && (g->magic != FC_GRAPH_MAGIC || (ndeps && !deps)))
        return CUDA_ERROR_INVALID_VALUE;
    static const CUgraphEdgeData zero;
    for (size_t i = 0; g && i < ndeps; i++)
        if (!fc_node_valid(deps[i]) || deps[i]->g != g ||
            (edges && memcmp(&edges[i], &zero, sizeof zero) != 0))
            return CUDA_ERROR_INVALID_VALUE;
    struct fc_capture *c = calloc(1, sizeof *c);
    if (!c)
        fc_fatal("out of host memory for a capture");
    pthread_mutex_lock(&fc_cap_lock);
    if (s->capture) {
        pthread_mutex_unlock(&fc_cap_lock);
        free(c);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    *c = (struct fc_capture){g ? g : fc_graph_new(), mode, gettid(), ++fc_capture_ids, 0,
                             fc_captures, s, g != NULL};
    fc_captures = c;
    s->capture = c;
    fc_nodeset_set(&s->capdeps, g ? deps : NULL, g ? ndeps : 0);
    atomic_fetch_add(&fc_ncaptures, 1);
    pthread_mutex_unlock(&fc_cap_lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
    FC_ENTER("cuStreamBeginCapture");
    return fc_begin_capture(hStream, 0, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
    FC_ENTER("cuStreamBeginCapture_ptsz");
    return fc_begin_capture(hStream, 1, CU_STREAM_CAPTURE_MODE_GLOBAL, NULL, NULL, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    FC_ENTER("cuStreamBeginCapture_v2");
    return fc_begin_capture(hStream, 0, mode, NULL, NULL, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream,
                                                        CUstreamCaptureMode mode)
{
    FC_ENTER("cuStreamBeginCapture_v2_ptsz");
    return fc_begin_capture(hStream, 1, mode, NULL, NULL, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                                       const CUgraphNode *deps,
                                                       const CUgraphEdgeData *edges,
                                                       size_t ndeps, CUstreamCaptureMode mode)
{
    FC_ENTER("cuStreamBeginCaptureToGraph");
    if (!hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_begin_capture(hStream, 0, mode, hGraph, deps, edges, ndeps);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                            const CUgraphNode *deps,
                                                            const CUgraphEdgeData *edges,
                                                            size_t ndeps,
                                                            CUstreamCaptureMode mode)
{
    FC_ENTER("cuStreamBeginCaptureToGraph_ptsz");
    if (!hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_begin_capture(hStream, 1, mode, hGraph, deps, edges, ndeps);
}

/* Marks n and its ancestors in seen (by node index). */
static void fc_mark_ancestors(const struct CUgraphNode_st *n, char *seen)
{
    if (seen[n->idx])
        return;
    seen[n->idx] = 1;
    for (size_t i = 0; i < n->ndeps; i++)
        fc_mark_ancestors(n->deps[i], seen);
}

/* Whether every stream that joined c has joined back into its origin: each one's last work
 * precedes the origin's. Called with fc_cap_lock held. */
static int fc_capture_joined(struct fc_capture *c)
{
    char *seen = calloc(c->graph->n + 1, 1);
    if (!seen)
        fc_fatal("out of host memory for a capture");
    for (size_t i = 0; i < c->origin->capdeps.n; i++)
        fc_mark_ancestors(c->origin->capdeps.v[i], seen);
    int joined = 1;
    fc_ctx *ctx = c->origin->ctx;
    pthread_mutex_lock(&ctx->lock);
    for (fc_stream *t = ctx->streams; t && joined; t = t->ctx_next)
        for (size_t i = 0; t->capture == c && i < t->capdeps.n; i++)
            joined &= seen[t->capdeps.v[i]->idx];
    pthread_mutex_unlock(&ctx->lock);
    free(seen);
    return joined;
}

/* Ends every stream's part in c (its context's streams). Called with fc_cap_lock held. */
static void fc_capture_detach(struct fc_capture *c)
{
    fc_ctx *ctx = c->origin->ctx;
    pthread_mutex_lock(&ctx->lock);
    for (fc_stream *t = ctx->streams; t; t = t->ctx_next)
        if (t->capture == c) {
            t->capture = NULL;
            t->capdeps.n = 0;
        }
    pthread_mutex_unlock(&ctx->lock);
    c->origin->capture = NULL;
    c->origin->capdeps.n = 0;
}

static CUresult fc_end_capture(CUstream h, int pt, CUgraph *out)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fc_cap_lock);
    struct fc_capture *c = s->capture;
    if (!c) {
        pthread_mutex_unlock(&fc_cap_lock);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (c->origin != s) { /* a stream that joined, not the one that began it */
        fc_invalidate(c);
        pthread_mutex_unlock(&fc_cap_lock);
        return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    }
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && c->tid != gettid()) {
        fc_invalidate(c);
        pthread_mutex_unlock(&fc_cap_lock);
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    }
    for (struct fc_capture **p = &fc_captures; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    int joined = c->invalidated || fc_capture_joined(c);
    fc_capture_detach(c);
    atomic_fetch_sub(&fc_ncaptures, 1);
    pthread_mutex_unlock(&fc_cap_lock);
    *out = NULL;
    if (c->invalidated || !joined) {
        if (!c->user_graph)
            fc_graph_free(c->graph);
        free(c);
        return joined ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
                      : CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
    }
    *out = c->graph;
    free(c);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    FC_ENTER("cuStreamEndCapture");
    return fc_end_capture(hStream, 0, phGraph);
}

FC_EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    FC_ENTER("cuStreamEndCapture_ptsz");
    return fc_end_capture(hStream, 1, phGraph);
}

CUresult fc_capture_deps(fc_stream *s, CUgraph *graph, const CUgraphNode **deps,
                         const CUgraphEdgeData **edges, size_t *ndeps)
{
    if ((deps || edges) && !ndeps)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fc_cap_lock);
    struct fc_capture *c = s->capture;
    if (graph)
        *graph = c ? c->graph : NULL;
    if (deps)
        *deps = c ? (const CUgraphNode *)s->capdeps.v : NULL;
    if (edges)
        *edges = c ? s->capdeps.e : NULL;
    if (ndeps)
        *ndeps = c ? s->capdeps.n : 0;
    pthread_mutex_unlock(&fc_cap_lock);
    return CUDA_SUCCESS;
}

static CUresult fc_update_deps(CUstream h, int pt, CUgraphNode *deps,
                               const CUgraphEdgeData *edges, size_t n, unsigned flags)
{
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if ((n && !deps) || flags > CU_STREAM_SET_CAPTURE_DEPENDENCIES)
        return CUDA_ERROR_INVALID_VALUE;
    static const CUgraphEdgeData zero;
    pthread_mutex_lock(&fc_cap_lock);
    struct fc_capture *c = s->capture;
    r = c ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
    for (size_t i = 0; r == CUDA_SUCCESS && i < n; i++)
        if (!fc_node_valid(deps[i]) || deps[i]->g != c->graph ||
            (edges && memcmp(&edges[i], &zero, sizeof zero) != 0))
            r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && flags == CU_STREAM_SET_CAPTURE_DEPENDENCIES)
        fc_nodeset_set(&s->capdeps, deps, n);
    else if (r == CUDA_SUCCESS)
        fc_nodeset_add(&s->capdeps, deps, n);
    pthread_mutex_unlock(&fc_cap_lock);
    return r;
}

FC_DEF(cuStreamUpdateCaptureDependencies,
       (CUstream h, CUgraphNode *deps, size_t n, unsigned int flags),
       fc_update_deps(h, 0, deps, NULL, n, flags))
FC_DEF(cuStreamUpdateCaptureDependencies_ptsz,
       (CUstream h, CUgraphNode *deps, size_t n, unsigned int flags),
       fc_update_deps(h, 1, deps, NULL, n, flags))
FC_DEF(cuStreamUpdateCaptureDependencies_v2,
       (CUstream h, CUgraphNode *deps, const CUgraphEdgeData *e, size_t n, unsigned int flags),
       fc_update_deps(h, 0, deps, e, n, flags))
FC_DEF(cuStreamUpdateCaptureDependencies_v2_ptsz,
       (CUstream h, CUgraphNode *deps, const CUgraphEdgeData *e, size_t n, unsigned int flags),
       fc_update_deps(h, 1, deps, e, n, flags))
