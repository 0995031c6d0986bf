/* capture: a CUDA graph captured from a stream while other GPU work is being timed, the way
 * PyTorch's CUDA graphs do it (global capture mode, the default), for the tracer suite.
 *
 *   capture MODULE_FILE
 *
 * MODULE_FILE holds an image with the kernels "slow" and "step" (no parameters). Sequence:
 * primary context; a blocking stream `cap` (so the legacy stream is unusable while it captures)
 * and a non-blocking stream `other`; "slow" on `other` (its duration set by the caller, so its
 * timing is still pending during the capture); cuStreamBeginCapture(cap, GLOBAL); 3 "step" on
 * `cap` (captured, not run); 1 "step" on `other` (runs); 300 ms of sleep (tracer harvests happen
 * meanwhile); cuStreamEndCapture, which must succeed with a graph of 3 nodes; instantiate; 2
 * launches of the graph on `cap`; synchronize; 1 "step" on `other`, not waited for, then the
 * primary context's last release (its events go with it).
 *
 * stdout: "capture: nodes=N graph_launches=2 end=RESULT" (RESULT the CUresult of
 * cuStreamEndCapture); exit status 0 if the capture succeeded with 3 nodes. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                         \
            fprintf(stderr, "capture: %s failed: %d\n", #call, (int)r_);                 \
            return 2;                                                                     \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capture MODULE_FILE\n");
        return 2;
    }
    static char image[4096];
    FILE *f = fopen(argv[1], "r");
    size_t n = f ? fread(image, 1, sizeof image - 1, f) : 0;
    if (!f || !n) {
        fprintf(stderr, "capture: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(f);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction slow, step;
    CUstream cap, other;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, image));
    CHECK(cuModuleGetFunction(&slow, mod, "slow"));
    CHECK(cuModuleGetFunction(&step, mod, "step"));
    CHECK(cuStreamCreate(&cap, CU_STREAM_DEFAULT));
    CHECK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));

    CHECK(cuLaunchKernel(slow, 1, 1, 1, 32, 1, 1, 0, other, NULL, NULL));
    CHECK(cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (int i = 0; i < 3; i++)
        CHECK(cuLaunchKernel(step, 1, 1, 1, 32, 1, 1, 0, cap, NULL, NULL));
    CHECK(cuLaunchKernel(step, 1, 1, 1, 32, 1, 1, 0, other, NULL, NULL));
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    CUgraph graph = NULL;
    CUresult end = cuStreamEndCapture(cap, &graph);
    size_t nodes = 0;
    if (end == CUDA_SUCCESS) {
        CUgraphExec exec;
        CHECK(cuGraphGetNodes(graph, NULL, &nodes));
        CHECK(cuGraphInstantiate(&exec, graph, 0));
        CHECK(cuGraphLaunch(exec, cap));
        CHECK(cuGraphLaunch(exec, cap));
        CHECK(cuStreamSynchronize(cap));
        CHECK(cuGraphExecDestroy(exec));
        CHECK(cuGraphDestroy(graph));
    }
    CHECK(cuStreamSynchronize(other));
    CHECK(cuLaunchKernel(step, 1, 1, 1, 32, 1, 1, 0, other, NULL, NULL));
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("capture: nodes=%zu graph_launches=2 end=%d\n", nodes, (int)end);
    return end == CUDA_SUCCESS && nodes == 3 ? 0 : 1;
}
