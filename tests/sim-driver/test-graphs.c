/* CUDA graphs executed by the simulation (fc_gnode.c, fc_gexec.c, fc_graph.c): graphs built
 * node by node and by stream capture of every operation type run their kernels (host
 * implementations), copies, memsets, host functions and child graphs in dependency order on
 * each launch; FAKECUDA_TRUTH counts each launch's kernels exactly; exec updates take effect on
 * the next launch; invalid use fails with the documented CUresult. Results are checked against
 * the same steps computed on the CPU. */
#define _GNU_SOURCE
#include "sd.h"

#include "fakecuda.h"

#include <stdlib.h>
#include <unistd.h>

/* x = 2x + a for each of the first n elements: the order of two steps shows in the result. */
__attribute__((visibility("default"))) void fakecuda_kernel_g_step(void **params,
                                                                   const fakecuda_launch *l)
{
    (void)l;
    float *x = *(float **)params[0];
    float a = *(float *)params[1];
    int n = *(int *)params[2];
    for (int i = 0; i < n; i++)
        x[i] = 2 * x[i] + a;
}

static const char g_image[] = "fakecuda-module 1\nkernel g_step 8 4 4\n";

static CUfunction sd_kernel_image(const char *image, const char *name)
{
    CUmodule m;
    CUfunction f;
    if (cuModuleLoadData(&m, image) != CUDA_SUCCESS ||
        cuModuleGetFunction(&f, m, name) != CUDA_SUCCESS)
        return NULL;
    return f;
}

typedef struct {
    const float *watch; /* device memory, host-addressable in the simulation */
    float seen[8];
    int calls;
} observer;

static void CUDA_CB observe(void *p)
{
    observer *o = p;
    if (o->calls < 8)
        o->seen[o->calls] = o->watch[0];
    o->calls++;
}

static CUDA_KERNEL_NODE_PARAMS step_params(CUfunction f, void **args)
{
    return (CUDA_KERNEL_NODE_PARAMS){.func = f, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                                     .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
                                     .kernelParams = args};
}

static CUDA_MEMCPY3D copy_1d(const void *src, void *dst, size_t n)
{
    return (CUDA_MEMCPY3D){.srcMemoryType = CU_MEMORYTYPE_UNIFIED,
                           .srcDevice = (CUdeviceptr)(uintptr_t)src,
                           .dstMemoryType = CU_MEMORYTYPE_UNIFIED,
                           .dstDevice = (CUdeviceptr)(uintptr_t)dst,
                           .WidthInBytes = n, .Height = 1, .Depth = 1};
}

/* Counts FAKECUDA_TRUTH lines of this thread for graph launch `launch` of kind `kind`. */
static int truth_count(const char *path, unsigned long long launch, const char *kind)
{
    char *text = ctt_read_file(path, NULL);
    int n = 0;
    char want[32];
    snprintf(want, sizeof want, "graph=%llu", launch);
    for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save)) {
        unsigned tid;
        char k[16], g[32] = "";
        if (sscanf(l, "%*d %u %*u %15s %*u %*d %*d %*d %*d %31s", &tid, k, g) >= 2 &&
            tid == (unsigned)gettid() && !strcmp(k, kind) && !strcmp(g, want))
            n++;
    }
    free(text);
    return n;
}

#define N 64

TEST_IMPL(graph_built_node_by_node_runs_in_dependency_order)
{
    char truth[4096];
    snprintf(truth, sizeof truth, "%s/truth", ctt_tmpdir());
    sd_env("FAKECUDA_TRUTH", truth);
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction f = sd_kernel_image(g_image, "g_step");
    ASSERT(f);
    float *h, out[N];
    CK(cuMemAllocHost_v2((void **)&h, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    CUdeviceptr d, e;
    CK(cuMemAlloc_v2(&d, N * sizeof(float)));
    CK(cuMemAlloc_v2(&e, N * sizeof(int)));
    int n = N;
    float a1 = 1, a2 = 3, a3 = 5;
    void *args1[] = {&d, &a1, &n}, *args2[] = {&d, &a2, &n}, *args3[] = {&d, &a3, &n};
    observer obs = {(const float *)(uintptr_t)d, {0}, 0};

    CUgraph g, child;
    CK(cuGraphCreate(&g, 0));
    CK(cuGraphCreate(&child, 0));
    CUgraphNode ck, cpy_in, k1, k2, ch, host, cpy_out, set, join;
    CUDA_KERNEL_NODE_PARAMS p3 = step_params(f, args3);
    CK(cuGraphAddKernelNode_v2(&ck, child, NULL, 0, &p3));
    CUDA_MEMCPY3D in = copy_1d(h, (void *)(uintptr_t)d, N * sizeof(float));
    CK(cuGraphAddMemcpyNode(&cpy_in, g, NULL, 0, &in, NULL));
    /* k2 is made first; an edge added afterwards puts k1 before it */
    CUDA_KERNEL_NODE_PARAMS p1 = step_params(f, args1), p2 = step_params(f, args2);
    CK(cuGraphAddKernelNode_v2(&k2, g, NULL, 0, &p2));
    CK(cuGraphAddKernelNode_v2(&k1, g, &cpy_in, 1, &p1));
    CK(cuGraphAddDependencies(g, &k1, &k2, 1));
    a1 = a2 = a3 = 1000; /* after the nodes are made: must not be seen */
    CK(cuGraphAddChildGraphNode(&ch, g, &k2, 1, child));
    CUDA_HOST_NODE_PARAMS hp = {observe, &obs};
    CK(cuGraphAddHostNode(&host, g, &ch, 1, &hp));
    CUDA_MEMCPY3D outp = copy_1d((void *)(uintptr_t)d, out, N * sizeof(float));
    CK(cuGraphAddMemcpyNode(&cpy_out, g, &host, 1, &outp, NULL));
    CUDA_MEMSET_NODE_PARAMS sp = {e, 0, 7, 4, N, 1};
    CK(cuGraphAddMemsetNode(&set, g, NULL, 0, &sp, NULL));
    CUgraphNode ends[] = {set, cpy_out};
    CK(cuGraphAddEmptyNode(&join, g, ends, 2));

    size_t count = 0;
    CK(cuGraphGetNodes(g, NULL, &count));
    ASSERT_INT(count, ==, 8);
    CUgraphNode roots[4];
    count = 4;
    CK(cuGraphGetRootNodes(g, roots, &count));
    ASSERT_INT(count, ==, 2);
    ASSERT(roots[0] == cpy_in && roots[1] == set);
    CK(cuGraphGetEdges(g, NULL, NULL, &count));
    ASSERT_INT(count, ==, 7);
    CUgraphNode deps[4];
    count = 4;
    CK(cuGraphNodeGetDependencies(k2, deps, &count));
    ASSERT_INT(count, ==, 1);
    ASSERT(deps[0] == k1);
    count = 4;
    CK(cuGraphNodeGetDependentNodes(k2, deps, &count));
    ASSERT_INT(count, ==, 1);
    ASSERT(deps[0] == ch);
    CUgraphNodeType t;
    CK(cuGraphNodeGetType(ch, &t));
    ASSERT_INT(t, ==, CU_GRAPH_NODE_TYPE_GRAPH);
    CK(cuGraphNodeGetType(join, &t));
    ASSERT_INT(t, ==, CU_GRAPH_NODE_TYPE_EMPTY);
    CUDA_KERNEL_NODE_PARAMS got;
    CK(cuGraphKernelNodeGetParams_v2(k1, &got));
    ASSERT(got.func == f && got.blockDimX == 32);
    ASSERT_NEAR(*(float *)got.kernelParams[1], 1, 0);

    CUgraphExec x;
    CK(cuGraphInstantiateWithFlags(&x, g, 0));
    CK(cuGraphDestroy(child)); /* the node holds its own copy */
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    const int launches = 3;
    for (int i = 0; i < launches; i++)
        CK(cuGraphLaunch(x, s));
    CK(cuStreamSynchronize(s));

    /* the CPU's account: each launch restarts from h */
    float want[N];
    for (int i = 0; i < N; i++)
        want[i] = 2 * (2 * (2 * h[i] + 1) + 3) + 5;
    for (int i = 0; i < N; i++)
        ASSERT_NEAR(out[i], want[i], 0);
    ASSERT_INT(obs.calls, ==, launches);
    for (int i = 0; i < launches; i++)
        ASSERT_NEAR(obs.seen[i], want[0], 0); /* the host node saw the kernels' effect */
    int ev[N];
    CK(cuMemcpyDtoH_v2(ev, e, sizeof ev));
    ASSERT_INT(ev[N - 1], ==, 7);
    /* ground truth: three kernels, two copies, one memset per launch, none beyond */
    for (int i = 1; i <= launches; i++) {
        ASSERT_INT(truth_count(truth, (unsigned long long)i, "kernel"), ==, 3);
        ASSERT_INT(truth_count(truth, (unsigned long long)i, "copy"), ==, 2);
        ASSERT_INT(truth_count(truth, (unsigned long long)i, "set"), ==, 1);
    }
    ASSERT_INT(truth_count(truth, launches + 1, "kernel"), ==, 0);
    CK(cuGraphExecDestroy(x));
    CK(cuGraphDestroy(g));
    return 0;
}

TEST_IMPL(graph_exec_updates_and_invalid_use)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction f = sd_kernel_image(g_image, "g_step");
    ASSERT(f);
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, sizeof(float)));
    float *x = (float *)(uintptr_t)d, a = 1;
    int n = 1;
    void *args[] = {&d, &a, &n};
    CUgraph g;
    CK(cuGraphCreate(&g, 0));
    CUgraphNode k;
    CUDA_KERNEL_NODE_PARAMS p = step_params(f, args);
    CK(cuGraphAddKernelNode_v2(&k, g, NULL, 0, &p));
    CUgraphExec ex;
    CK(cuGraphInstantiateWithFlags(&ex, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    cuuint64_t flags;
    CK(cuGraphExecGetFlags(ex, &flags));
    ASSERT_INT(flags, ==, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    float want = 0;
    CK(cuMemsetD32_v2(d, 0, 1));
    CK(cuCtxSynchronize());

    /* launch; new exec params; the graph's own change (no effect); a whole-graph update */
    float steps[] = {1, 10, 10, 100};
    CK(cuGraphLaunch(ex, s));
    a = 10;
    CK(cuGraphExecKernelNodeSetParams_v2(ex, k, &p));
    CK(cuGraphLaunch(ex, s));
    a = 100;
    CK(cuGraphKernelNodeSetParams_v2(k, &p));
    CK(cuGraphLaunch(ex, s));
    CUgraphExecUpdateResultInfo info;
    CK(cuGraphExecUpdate_v2(ex, g, &info));
    ASSERT_INT(info.result, ==, CU_GRAPH_EXEC_UPDATE_SUCCESS);
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    for (int i = 0; i < 4; i++)
        want = 2 * want + steps[i];
    ASSERT_NEAR(x[0], want, 0);

    /* a disabled kernel node runs as an empty one, until enabled again */
    unsigned on;
    CK(cuGraphNodeSetEnabled(ex, k, 0));
    CK(cuGraphNodeGetEnabled(ex, k, &on));
    ASSERT_INT(on, ==, 0);
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    ASSERT_NEAR(x[0], want, 0);
    CK(cuGraphNodeSetEnabled(ex, k, 1));
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    want = 2 * want + 100;
    ASSERT_NEAR(x[0], want, 0);

    /* updates that cannot apply */
    CUgraph g2;
    CK(cuGraphCreate(&g2, 0));
    CUgraphNode k2a, k2b;
    CK(cuGraphAddKernelNode_v2(&k2a, g2, NULL, 0, &p));
    CK(cuGraphAddKernelNode_v2(&k2b, g2, &k2a, 1, &p));
    ASSERT_INT(cuGraphExecUpdate_v2(ex, g2, &info), ==, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    ASSERT_INT(info.result, ==, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    CUgraph g3;
    CK(cuGraphCreate(&g3, 0));
    CUgraphNode e3;
    CK(cuGraphAddEmptyNode(&e3, g3, NULL, 0));
    ASSERT_INT(cuGraphExecUpdate_v2(ex, g3, &info), ==, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    ASSERT_INT(info.result, ==, CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
    ASSERT(info.errorNode == e3);

    /* invalid construction and use */
    CUgraphNode dup[] = {k2a, k2a}, bad;
    ASSERT_INT(cuGraphAddEmptyNode(&bad, g2, dup, 2), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuGraphAddEmptyNode(&bad, g2, &k, 1), ==, CUDA_ERROR_INVALID_VALUE);
    CUDA_KERNEL_NODE_PARAMS zero_block = p;
    zero_block.blockDimX = 0;
    ASSERT_INT(cuGraphAddKernelNode_v2(&bad, g2, NULL, 0, &zero_block), ==,
               CUDA_ERROR_INVALID_VALUE);
    CUDA_MEMSET_NODE_PARAMS odd = {d, 0, 0, 3, 1, 1};
    ASSERT_INT(cuGraphAddMemsetNode(&bad, g2, NULL, 0, &odd, NULL), ==, CUDA_ERROR_INVALID_VALUE);
    size_t count;
    CK(cuGraphGetNodes(g2, NULL, &count));
    ASSERT_INT(count, ==, 2); /* failed additions leave nothing behind */
    ASSERT_INT(cuGraphRemoveDependencies(g2, &k2b, &k2a, 1), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuGraphAddDependencies(g2, &k2a, &k2b, 1), ==, CUDA_ERROR_INVALID_VALUE);
    CUDA_MEMSET_NODE_PARAMS mp;
    ASSERT_INT(cuGraphMemsetNodeGetParams(k2a, &mp), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuGraphExecKernelNodeSetParams_v2(ex, k2a, &p), ==, CUDA_ERROR_INVALID_VALUE);
    /* a cycle: instantiation fails, saying why */
    CK(cuGraphAddDependencies(g2, &k2b, &k2a, 1));
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = {0};
    CUgraphExec bad_exec;
    ASSERT_INT(cuGraphInstantiateWithParams(&bad_exec, g2, &ip), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(ip.result_out, ==, CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE);
    CK(cuGraphRemoveDependencies(g2, &k2b, &k2a, 1));
    CK(cuGraphInstantiateWithParams(&bad_exec, g2, &ip));
    ASSERT_INT(ip.result_out, ==, CUDA_GRAPH_INSTANTIATE_SUCCESS);
    /* node types the simulation does not run */
    CUgraphNodeParams memop = {.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP};
    ASSERT_INT(cuGraphAddNode(&bad, g2, NULL, 0, &memop), ==, CUDA_ERROR_NOT_SUPPORTED);
    CK(cuGraphExecDestroy(bad_exec));
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    CK(cuGraphDestroy(g2));
    CK(cuGraphDestroy(g3));
    return 0;
}

TEST_IMPL(capture_of_every_operation_type)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction f = sd_kernel_image(g_image, "g_step");
    ASSERT(f);
    float *h, out[N];
    CK(cuMemAllocHost_v2((void **)&h, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        h[i] = (float)(N - i);
    CUdeviceptr d, e;
    CK(cuMemAlloc_v2(&d, N * sizeof(float)));
    CK(cuMemAlloc_v2(&e, N * sizeof(float)));
    CK(cuMemsetD32_v2(d, 0, N));
    CK(cuCtxSynchronize());
    CUstream s, s2;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent fork, join;
    CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    int n = N;
    float a1 = 1, a2 = 2;
    void *args1[] = {&d, &a1, &n}, *args2[] = {&e, &a2, &n};
    observer obs = {(const float *)(uintptr_t)e, {0}, 0};

    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemcpyHtoDAsync_v2(d, h, N * sizeof(float), s));
    CK(cuMemsetD32Async(e, 0x3f800000u /* 1.0f */, N, s));
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args1, NULL));
    CK(cuEventRecord(fork, s));
    CK(cuStreamWaitEvent(s2, fork, 0)); /* s2 joins the capture after the kernel */
    CUstreamCaptureStatus st;
    CK(cuStreamIsCapturing(s2, &st));
    ASSERT_INT(st, ==, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s2, args2, NULL));
    CK(cuEventRecord(join, s2));
    CK(cuStreamWaitEvent(s, join, 0));
    cuuint64_t id;
    CUgraph cg;
    const CUgraphNode *cdeps;
    size_t ncdeps;
    CK(cuStreamGetCaptureInfo_v2(s, &st, &id, &cg, &cdeps, &ncdeps));
    ASSERT_INT(st, ==, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    ASSERT(cg != NULL);
    ASSERT_INT(ncdeps, ==, 2); /* both kernels */
    CUgraphNodeType t;
    CK(cuGraphNodeGetType(cdeps[0], &t));
    ASSERT_INT(t, ==, CU_GRAPH_NODE_TYPE_KERNEL);
    CK(cuLaunchHostFunc(s, observe, &obs));
    CK(cuMemcpyDtoHAsync_v2(out, d, N * sizeof(float), s));
    a1 = a2 = 1000; /* after capture: must not be seen */
    /* nothing ran during the capture */
    ASSERT_NEAR(((float *)(uintptr_t)d)[0], 0, 0);
    ASSERT_INT(obs.calls, ==, 0);
    CUgraph g;
    CK(cuStreamEndCapture(s, &g));
    ASSERT(g == cg);
    CK(cuStreamIsCapturing(s2, &st));
    ASSERT_INT(st, ==, CU_STREAM_CAPTURE_STATUS_NONE);

    size_t count = 0;
    CK(cuGraphGetNodes(g, NULL, &count));
    ASSERT_INT(count, ==, 6);
    CUgraphNode nodes[6];
    CK(cuGraphGetNodes(g, nodes, &count));
    CUgraphNodeType want_types[] = {CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMSET,
                                    CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_KERNEL,
                                    CU_GRAPH_NODE_TYPE_HOST, CU_GRAPH_NODE_TYPE_MEMCPY};
    size_t want_deps[] = {0, 1, 1, 1, 2, 1};
    for (int i = 0; i < 6; i++) {
        CK(cuGraphNodeGetType(nodes[i], &t));
        ASSERT_INT(t, ==, want_types[i]);
        CK(cuGraphNodeGetDependencies(nodes[i], NULL, &count));
        ASSERT_INT(count, ==, want_deps[i]);
    }
    CUgraphNode dep;
    count = 1;
    CK(cuGraphNodeGetDependencies(nodes[3], &dep, &count));
    ASSERT(dep == nodes[2]); /* the fork point */

    CUgraphExec x;
    CK(cuGraphInstantiateWithFlags(&x, g, 0));
    for (int i = 0; i < 2; i++)
        CK(cuGraphLaunch(x, s));
    CK(cuStreamSynchronize(s));
    for (int i = 0; i < N; i++)
        ASSERT_NEAR(out[i], 2 * h[i] + 1, 0);
    ASSERT_INT(obs.calls, ==, 2);
    ASSERT_NEAR(obs.seen[0], 2 * 1.0f + 2, 0); /* the host function ran after s2's kernel */

    /* cuStreamUpdateCaptureDependencies and cuStreamBeginCaptureToGraph */
    CUgraph g2;
    CK(cuGraphCreate(&g2, 0));
    CUgraphNode first;
    CK(cuGraphAddEmptyNode(&first, g2, NULL, 0));
    CK(cuStreamBeginCaptureToGraph(s, g2, &first, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args1, NULL));
    CK(cuStreamUpdateCaptureDependencies(s, NULL, 0, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args1, NULL));
    CUevent ext;
    CK(cuEventCreate(&ext, 0));
    CK(cuEventRecordWithFlags(ext, s, CU_EVENT_RECORD_EXTERNAL));
    CUgraph g2_end;
    CK(cuStreamEndCapture(s, &g2_end));
    ASSERT(g2_end == g2);
    CK(cuGraphGetNodes(g2, NULL, &count));
    ASSERT_INT(count, ==, 4);
    CK(cuGraphGetRootNodes(g2, NULL, &count));
    ASSERT_INT(count, ==, 2); /* the empty node and the kernel after the reset */
    count = 4;
    CK(cuGraphGetNodes(g2, nodes, &count));
    CK(cuGraphNodeGetType(nodes[3], &t));
    ASSERT_INT(t, ==, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    /* a graph launched into a capture is a child graph node */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuGraphLaunch(x, s));
    CUgraph g3;
    CK(cuStreamEndCapture(s, &g3));
    ASSERT_INT(obs.calls, ==, 2); /* not run */
    CK(cuGraphGetNodes(g3, nodes, &count));
    ASSERT_INT(count, ==, 1);
    CK(cuGraphNodeGetType(nodes[0], &t));
    ASSERT_INT(t, ==, CU_GRAPH_NODE_TYPE_GRAPH);
    CUgraphExec x3;
    CK(cuGraphInstantiateWithFlags(&x3, g3, 0));
    memset(out, 0, sizeof out);
    CK(cuGraphLaunch(x3, s));
    CK(cuStreamSynchronize(s));
    ASSERT_INT(obs.calls, ==, 3);
    ASSERT_NEAR(out[N - 1], 2 * h[N - 1] + 1, 0);
    CK(cuGraphExecDestroy(x3));
    CK(cuGraphDestroy(g3));
    /* stream-ordered allocation and free in a capture: allocation and free nodes, the
     * address fixed at capture and usable at every launch */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUdeviceptr tmp = 0;
    CK(cuMemAllocAsync(&tmp, N * sizeof(int), s));
    ASSERT(tmp != 0);
    CK(cuMemsetD32Async(tmp, 42, N, s));
    int got[N];
    CK(cuMemcpyDtoHAsync_v2(got, tmp, sizeof got, s));
    CK(cuMemFreeAsync(tmp, s));
    CUgraph g4;
    CK(cuStreamEndCapture(s, &g4));
    count = 4;
    CK(cuGraphGetNodes(g4, nodes, &count));
    ASSERT_INT(count, ==, 4);
    CUgraphNodeType alloc_types[] = {CU_GRAPH_NODE_TYPE_MEM_ALLOC, CU_GRAPH_NODE_TYPE_MEMSET,
                                     CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEM_FREE};
    for (int i = 0; i < 4; i++) {
        CK(cuGraphNodeGetType(nodes[i], &t));
        ASSERT_INT(t, ==, alloc_types[i]);
    }
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    CK(cuGraphMemAllocNodeGetParams(nodes[0], &ap));
    ASSERT(ap.dptr == tmp);
    ASSERT_INT(ap.bytesize, ==, N * sizeof(int));
    CUgraphExec x4;
    CK(cuGraphInstantiateWithFlags(&x4, g4, 0));
    for (int i = 0; i < 2; i++) {
        memset(got, 0, sizeof got);
        CK(cuGraphLaunch(x4, s));
        CK(cuStreamSynchronize(s));
        ASSERT_INT(got[N - 1], ==, 42);
    }
    CK(cuGraphExecDestroy(x4));
    CK(cuGraphDestroy(g4));
    /* a forked stream whose work the origin never waits for: not joined */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuEventRecord(fork, s));
    CK(cuStreamWaitEvent(s2, fork, 0));
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s2, args2, NULL));
    ASSERT_INT(cuStreamEndCapture(s, &g2_end), ==, CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
    ASSERT(g2_end == NULL);
    CK(cuStreamIsCapturing(s2, &st));
    ASSERT_INT(st, ==, CU_STREAM_CAPTURE_STATUS_NONE);
    /* ending on a stream that only joined is an error */
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuEventRecord(fork, s));
    CK(cuStreamWaitEvent(s2, fork, 0));
    ASSERT_INT(cuStreamEndCapture(s2, &g2_end), ==, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
    ASSERT_INT(cuStreamEndCapture(s, &g2_end), ==, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CK(cuGraphExecDestroy(x));
    CK(cuGraphDestroy(g));
    CK(cuGraphDestroy(g2));
    return 0;
}

/* (int *counter, int limit, handle): counts, and keeps the handle's value "counter < limit",
 * as a while loop's body kernel does with cudaGraphSetConditional. */
__attribute__((visibility("default"))) void fakecuda_kernel_g_count(void **params,
                                                                    const fakecuda_launch *l)
{
    (void)l;
    int *counter = *(int **)params[0];
    int limit = *(int *)params[1];
    ++*counter;
    fakecuda_graph_set_conditional(*(unsigned long long *)params[2], *counter < limit);
}

/* (handle, value): sets the handle, as an if node's deciding kernel does. */
__attribute__((visibility("default"))) void fakecuda_kernel_g_decide(void **params,
                                                                     const fakecuda_launch *l)
{
    (void)l;
    fakecuda_graph_set_conditional(*(unsigned long long *)params[0], *(unsigned *)params[1]);
}

static CUresult add_cond(CUgraphNode *n, CUgraph g, const CUgraphNode *dep,
                         CUgraphConditionalHandle h, CUgraphConditionalNodeType type,
                         unsigned size, CUgraph **bodies)
{
    CUgraphNodeParams p = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL};
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    CUresult r = cuGraphAddNode(n, g, dep, dep ? 1 : 0, &p);
    *bodies = p.conditional.phGraph_out;
    return r;
}

/* The while/if graph below, launched twice (the second time taking the else branch), on a
 * driver set up by the caller. */
static int conditional_graph(const char *truth);

TEST_IMPL(conditional_while_and_if_nodes)
{
    char truth[4096];
    snprintf(truth, sizeof truth, "%s/truth", ctt_tmpdir());
    sd_env("FAKECUDA_TRUTH", truth);
    ASSERT_INT(sd_init(), ==, 0);
    return conditional_graph(truth);
}

/* The same in instant mode, where every operation runs inline in the launching call. */
TEST_IMPL(conditional_nodes_in_instant_mode)
{
    char truth[4096];
    snprintf(truth, sizeof truth, "%s/truth", ctt_tmpdir());
    sd_env("FAKECUDA_TRUTH", truth);
    sd_env("FAKECUDA_INSTANT", "1");
    ASSERT_INT(sd_init(), ==, 0);
    return conditional_graph(truth);
}

static int conditional_graph(const char *truth)
{
    CUfunction count = sd_kernel_image("fakecuda-module 1\nkernel g_count 8 4 8\n", "g_count");
    CUfunction decide = sd_kernel_image("fakecuda-module 1\nkernel g_decide 8 4\n", "g_decide");
    ASSERT(count && decide);
    CUcontext ctx;
    CK(cuCtxGetCurrent(&ctx));
    CUdeviceptr cnt, flag;
    CK(cuMemAlloc_v2(&cnt, sizeof(int)));
    CK(cuMemAlloc_v2(&flag, sizeof(int)));
    const int *counter = (const int *)(uintptr_t)cnt, *branch = (const int *)(uintptr_t)flag;

    /* while: reset the counter, then count to 5 (the handle starts at 1 each launch) */
    CUgraph g, *body;
    CK(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle wh, ih;
    CK(cuGraphConditionalHandleCreate(&wh, g, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CK(cuGraphConditionalHandleCreate(&ih, g, ctx, 0, 0));
    CUgraphNode reset, loop, dec, choose, k;
    CUDA_MEMSET_NODE_PARAMS zero = {cnt, 0, 0, 4, 1, 1};
    CK(cuGraphAddMemsetNode(&reset, g, NULL, 0, &zero, NULL));
    CK(add_cond(&loop, g, &reset, wh, CU_GRAPH_COND_TYPE_WHILE, 1, &body));
    int limit = 5;
    void *cargs[] = {&cnt, &limit, &wh};
    CUDA_KERNEL_NODE_PARAMS kp = step_params(count, cargs);
    CK(cuGraphAddKernelNode_v2(&k, body[0], NULL, 0, &kp));
    /* if/else: a kernel decides which of two memsets runs */
    unsigned v = 1;
    void *dargs[] = {&ih, &v};
    CUDA_KERNEL_NODE_PARAMS dp = step_params(decide, dargs);
    CK(cuGraphAddKernelNode_v2(&dec, g, &loop, 1, &dp));
    CK(add_cond(&choose, g, &dec, ih, CU_GRAPH_COND_TYPE_IF, 2, &body));
    CUDA_MEMSET_NODE_PARAMS one = {flag, 0, 1, 4, 1, 1}, two = {flag, 0, 2, 4, 1, 1};
    CK(cuGraphAddMemsetNode(&k, body[0], NULL, 0, &one, NULL));
    CK(cuGraphAddMemsetNode(&k, body[1], NULL, 0, &two, NULL));
    CUgraphNodeType t;
    CK(cuGraphNodeGetType(loop, &t));
    ASSERT_INT(t, ==, CU_GRAPH_NODE_TYPE_CONDITIONAL);

    CUgraphExec x;
    CK(cuGraphInstantiateWithFlags(&x, g, 0));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuGraphLaunch(x, s));
    CK(cuStreamSynchronize(s));
    ASSERT_INT(*counter, ==, 5);
    ASSERT_INT(*branch, ==, 1);
    /* the else branch, through the executable graph's kernel parameters */
    v = 0;
    CK(cuGraphExecKernelNodeSetParams_v2(x, dec, &dp));
    CK(cuGraphLaunch(x, s));
    CK(cuStreamSynchronize(s));
    ASSERT_INT(*counter, ==, 5); /* reset, and counted again from the default */
    ASSERT_INT(*branch, ==, 2);
    /* per launch: five loop kernels and the deciding one; the reset and one branch's memset */
    for (unsigned long long i = 1; i <= 2; i++) {
        ASSERT_INT(truth_count(truth, i, "kernel"), ==, 6);
        ASSERT_INT(truth_count(truth, i, "set"), ==, 2);
    }
    /* a host node is not allowed in a body */
    CUgraph g2;
    CK(cuGraphCreate(&g2, 0));
    CUgraphConditionalHandle h2;
    CK(cuGraphConditionalHandleCreate(&h2, g2, ctx, 0, 0));
    CK(add_cond(&loop, g2, NULL, h2, CU_GRAPH_COND_TYPE_WHILE, 1, &body));
    observer obs = {(const float *)(uintptr_t)cnt, {0}, 0};
    CUDA_HOST_NODE_PARAMS hp = {observe, &obs};
    CK(cuGraphAddHostNode(&k, body[0], NULL, 0, &hp));
    CUgraphExec bad;
    ASSERT_INT(cuGraphInstantiateWithFlags(&bad, g2, 0), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(add_cond(&loop, g2, NULL, wh, CU_GRAPH_COND_TYPE_WHILE, 1, &body), ==,
               CUDA_ERROR_INVALID_VALUE); /* another graph's handle */
    ASSERT_INT(add_cond(&loop, g2, NULL, h2, CU_GRAPH_COND_TYPE_WHILE, 2, &body), ==,
               CUDA_ERROR_INVALID_VALUE);
    CK(cuGraphExecDestroy(x));
    CK(cuGraphDestroy(g));
    CK(cuGraphDestroy(g2));
    return 0;
}
