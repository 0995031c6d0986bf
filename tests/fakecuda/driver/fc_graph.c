/* Stream capture and graphs, as far as a tracer can observe them (CUDA programming guide,
 * "Creating a Graph Using Stream Capture"): a stream in capture adds the kernels launched on it
 * to a graph instead of running them; cuStreamEndCapture returns the graph; an instantiated
 * graph's launch runs its kernels, in order, on the launch stream. The rules a capture can be
 * broken by are simulated, since a tracer must not break them:
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
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph. Only kernels are captured (the other
 * operations on a capturing stream run as usual); cuGraphGetNodes counts them. */
#define _GNU_SOURCE
#include "fc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    fakecuda_host_kernel fn;
    fakecuda_launch launch;
    int64_t dur_ns;
} fc_node;

struct CUgraph_st {
    fc_node *nodes;
    size_t n, cap;
};

struct CUgraphExec_st {
    fc_node *nodes;
    size_t n;
};

/* One capture sequence (its origin stream's). */
struct fc_capture {
    struct CUgraph_st *graph;
    CUstreamCaptureMode mode;
    pid_t tid;              /* the thread that began it */
    unsigned long long id;
    int invalidated;
    struct fc_capture *next;
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

int fc_capture_add(fc_stream *s, const fc_op *op)
{
    if (!atomic_load(&fc_ncaptures))
        return 0;
    pthread_mutex_lock(&fc_cap_lock);
    struct fc_capture *c = s->capture;
    if (c && op) {
        struct CUgraph_st *g = c->graph;
        if (g->n == g->cap) {
            g->cap = g->cap ? 2 * g->cap : 8;
            g->nodes = realloc(g->nodes, g->cap * sizeof *g->nodes);
            if (!g->nodes)
                fc_fatal("out of host memory for a graph");
        }
        /* No host implementation runs for a graph's kernels: its arguments are not kept. */
        g->nodes[g->n++] = (fc_node){NULL, op->u.kernel.launch, op->dur_ns};
    }
    pthread_mutex_unlock(&fc_cap_lock);
    return c != NULL;
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

static CUresult fc_begin_capture(CUstream h, int pt, CUstreamCaptureMode mode)
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
    struct fc_capture *c = calloc(1, sizeof *c);
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (!c || !g)
        fc_fatal("out of host memory for a capture");
    pthread_mutex_lock(&fc_cap_lock);
    if (s->capture) {
        pthread_mutex_unlock(&fc_cap_lock);
        free(c);
        free(g);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    *c = (struct fc_capture){g, mode, gettid(), ++fc_capture_ids, 0, fc_captures};
    fc_captures = c;
    s->capture = c;
    atomic_fetch_add(&fc_ncaptures, 1);
    pthread_mutex_unlock(&fc_cap_lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
    FC_ENTER("cuStreamBeginCapture");
    return fc_begin_capture(hStream, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
    FC_ENTER("cuStreamBeginCapture_ptsz");
    return fc_begin_capture(hStream, 1, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    FC_ENTER("cuStreamBeginCapture_v2");
    return fc_begin_capture(hStream, 0, mode);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream,
                                                        CUstreamCaptureMode mode)
{
    FC_ENTER("cuStreamBeginCapture_v2_ptsz");
    return fc_begin_capture(hStream, 1, mode);
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
    s->capture = NULL;
    atomic_fetch_sub(&fc_ncaptures, 1);
    pthread_mutex_unlock(&fc_cap_lock);
    *out = NULL;
    if (c->invalidated) {
        free(c->graph->nodes);
        free(c->graph);
        free(c);
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
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

FC_EXPORT CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    FC_ENTER_INIT("cuGraphGetNodes");
    if (!hGraph || !numNodes || nodes)
        return nodes ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    *numNodes = hGraph->n;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    FC_ENTER_INIT("cuGraphDestroy");
    if (!hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    free(hGraph->nodes);
    free(hGraph);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                       unsigned long long flags)
{
    FC_ENTER_INIT("cuGraphInstantiateWithFlags");
    if (!phGraphExec || !hGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    if (!x || (hGraph->n && !(x->nodes = malloc(hGraph->n * sizeof *x->nodes))))
        fc_fatal("out of host memory for a graph");
    if (hGraph->n)
        memcpy(x->nodes, hGraph->nodes, hGraph->n * sizeof *x->nodes);
    x->n = hGraph->n;
    *phGraphExec = x;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    FC_ENTER_INIT("cuGraphExecDestroy");
    if (!hGraphExec)
        return CUDA_ERROR_INVALID_VALUE;
    free(hGraphExec->nodes);
    free(hGraphExec);
    return CUDA_SUCCESS;
}

static CUresult fc_graph_launch(CUgraphExec x, CUstream h, int pt)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!x)
        return CUDA_ERROR_INVALID_VALUE;
    fc_stream *s;
    CUresult r = fc_stream_resolve(h, pt, &s);
    if (r != CUDA_SUCCESS)
        return r;
    for (size_t i = 0; i < x->n; i++) {
        fc_op *op = fc_op_new(FC_OP_KERNEL);
        op->u.kernel.fn = x->nodes[i].fn;
        op->u.kernel.launch = x->nodes[i].launch;
        op->dur_ns = x->nodes[i].dur_ns;
        fc_submit(s, op);
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_ENTER("cuGraphLaunch");
    return fc_graph_launch(hGraphExec, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    FC_ENTER("cuGraphLaunch_ptsz");
    return fc_graph_launch(hGraphExec, hStream, 1);
}
