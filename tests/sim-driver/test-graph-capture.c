/* Stream capture (fc_graph.c): kernels launched on a capturing stream become nodes of its graph
 * and run only when the instantiated graph is launched; what breaks a capture on a GPU breaks it
 * here: a query by another thread in global mode (not in relaxed mode), a query of a captured
 * event, and use of the legacy stream while a blocking stream captures. */
#include "sd.h"

#include <pthread.h>
#include <stdint.h>

typedef struct {
    CUevent e;
    CUstreamCaptureMode mode;
    CUresult r;
} query_arg;

static void *query_thread(void *p)
{
    query_arg *q = p;
    CUstreamCaptureMode m = q->mode;
    q->r = cuThreadExchangeStreamCaptureMode(&m);
    if (q->r == CUDA_SUCCESS)
        q->r = cuEventQuery(q->e);
    return NULL;
}

/* cuEventQuery(e) from a new thread in mode while s captures 3 kernels: the capture's end. */
static CUresult capture_with_query(CUstream s, CUfunction f, CUevent e, CUstreamCaptureMode mode,
                                   CUresult *query, CUgraph *g)
{
    if (cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS)
        return CUDA_ERROR_UNKNOWN;
    for (int i = 0; i < 3; i++)
        if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL) != CUDA_SUCCESS)
            return CUDA_ERROR_UNKNOWN;
    query_arg q = {e, mode, CUDA_ERROR_UNKNOWN};
    pthread_t t;
    if (pthread_create(&t, NULL, query_thread, &q) != 0 || pthread_join(t, NULL) != 0)
        return CUDA_ERROR_UNKNOWN;
    *query = q.r;
    return cuStreamEndCapture(s, g);
}

TEST_IMPL(stream_capture_and_graphs)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUmodule m;
    CUfunction f;
    CK(cuModuleLoadData(&m, "fakecuda-module 1\nkernel k\n"));
    CK(cuModuleGetFunction(&f, m, "k"));
    CUstream s, o;
    CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    CK(cuStreamCreate(&o, CU_STREAM_NON_BLOCKING));
    CUevent done, a, b;
    CK(cuEventCreate(&done, 0));
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CK(cuEventRecord(done, o));
    CK(cuEventSynchronize(done));

    /* Status while capturing; the legacy stream cannot say (and the capture survives that). */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    CK(cuStreamGetCaptureInfo(s, &st, &id));
    ASSERT_INT(st, ==, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    ASSERT_UINT(id, >, 0);
    ASSERT_INT(cuStreamIsCapturing(NULL, &st), ==, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUgraph g;
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphDestroy(g));

    /* Another thread's query in global mode invalidates the capture; in relaxed mode not. */
    CUresult query;
    ASSERT_INT(capture_with_query(s, f, done, CU_STREAM_CAPTURE_MODE_GLOBAL, &query, &g), ==,
               CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    ASSERT_INT(query, ==, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    ASSERT(g == NULL);
    CK(capture_with_query(s, f, done, CU_STREAM_CAPTURE_MODE_RELAXED, &query, &g));
    CK(query);
    size_t nodes = 0;
    CK(cuGraphGetNodes(g, NULL, &nodes));
    ASSERT_UINT(nodes, ==, 3);

    /* The graph's launch runs its 3 kernels of 5 us each (2 us + 3 us for one wave). */
    CUgraphExec x;
    CK(cuGraphInstantiateWithFlags(&x, g, 0));
    sd_gate gate;
    ASSERT_INT(sd_gate_close(&gate, o), ==, 0);
    CK(cuEventRecord(a, o));
    CK(cuGraphLaunch(x, o));
    CK(cuEventRecord(b, o));
    sd_gate_open(&gate);
    CK(cuEventSynchronize(b));
    ASSERT_NEAR(sd_elapsed_ns(a, b), 15000, 1);
    CK(cuGraphExecDestroy(x));
    CK(cuGraphDestroy(g));

    /* An event recorded into the capture belongs to it: querying it breaks the capture. */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuEventRecord(a, s));
    ASSERT_INT(cuEventQuery(a), ==, CUDA_ERROR_CAPTURED_EVENT);
    ASSERT_INT(cuStreamEndCapture(s, &g), ==, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

    /* The legacy stream is unusable while a blocking stream captures. */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ASSERT_INT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), ==,
               CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    ASSERT_INT(cuStreamEndCapture(s, &g), ==, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CK(cuStreamSynchronize(s));
    return 0;
}
