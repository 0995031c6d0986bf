/* graph_steps: a training loop run as a CUDA graph, the way torch.compile's "reduce-overhead"
 * mode and inference servers run one: each step's kernels are captured from a stream into a
 * graph (stream capture, driver API cuStreamBeginCapture_v2 / cuStreamEndCapture) and the
 * graph's exec is launched (cuGraphLaunch).
 *
 *   graph_steps [--steps N] [--reinstantiate] [--mode global|thread-local|relaxed]
 *
 * Sequence and what a correct trace shows (N steps, 20 by default):
 *   cudaStreamCreate (blocking); init_kernel x1 executed on the stream (not captured);
 *   fixed (default): capture once: forward_kernel x2, backward_kernel x2, sgd_kernel x1 launched
 *     into the capturing stream (5 captured launches, none executed at capture), EndCapture,
 *     cuGraphInstantiateWithFlags once; then N cuGraphLaunch on the stream, each executing those
 *     5 kernels in order; cuStreamSynchronize; cuGraphExecDestroy, cuGraphDestroy;
 *   --reinstantiate: every step captures, instantiates, launches and destroys its graph and exec
 *     again (the anti-pattern: N captures, N instantiations, 5N captured launches);
 *   either way the simulation executes 1 + 5N kernels, 5 per graph launch; the capture mode is
 *     the one given (global by default).
 * stdout: "graph_steps: steps=N nodes=5 instantiations=I launches=N mode=MODE" and
 * "graph_steps: ms=T" (the loop's wall time, on stderr so that the outputs of runs compare). */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <string.h>

#include "wl_common.h"

__global__ void init_kernel(float *w) { if (w) w[threadIdx.x] = 1.0f; }
__global__ void forward_kernel(float *w) { if (w) w[threadIdx.x] *= 2.0f; }
__global__ void backward_kernel(float *w) { if (w) w[threadIdx.x] *= 0.5f; }
__global__ void sgd_kernel(float *w) { if (w) w[threadIdx.x] -= 0.0f; }

#define NODES 5

static void capture_step(cudaStream_t s, CUstreamCaptureMode mode, CUgraph *g)
{
    WL_CU(cuStreamBeginCapture_v2((CUstream)s, mode));
    forward_kernel<<<64, 128, 0, s>>>(NULL);
    forward_kernel<<<64, 128, 0, s>>>(NULL);
    backward_kernel<<<64, 128, 0, s>>>(NULL);
    backward_kernel<<<64, 128, 0, s>>>(NULL);
    sgd_kernel<<<32, 256, 0, s>>>(NULL);
    WL_RT(cudaGetLastError());
    WL_CU(cuStreamEndCapture((CUstream)s, g));
}

int main(int argc, char **argv)
{
    long long steps = 20;
    int reinstantiate = 0;
    const char *mode_name = "global";
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = wl_parse_count("--steps", argv[++i]);
        } else if (!strcmp(argv[i], "--reinstantiate")) {
            reinstantiate = 1;
        } else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            mode_name = argv[++i];
            if (!strcmp(mode_name, "global"))
                mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
            else if (!strcmp(mode_name, "thread-local"))
                mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
            else if (!strcmp(mode_name, "relaxed"))
                mode = CU_STREAM_CAPTURE_MODE_RELAXED;
            else
                WL_DIE("--mode: expected global, thread-local or relaxed, found \"%s\"", mode_name);
        } else {
            WL_DIE("usage: graph_steps [--steps N] [--reinstantiate] "
                   "[--mode global|thread-local|relaxed] (found \"%s\")", argv[i]);
        }
    }
    cudaStream_t s;
    WL_RT(cudaStreamCreate(&s));
    init_kernel<<<1, 32, 0, s>>>(NULL);
    WL_RT(cudaGetLastError());

    CUgraph g = NULL;
    CUgraphExec x = NULL;
    long long instantiations = 0;
    double t0 = wl_now_ms();
    for (long long i = 0; i < steps; i++) {
        if (reinstantiate || i == 0) {
            capture_step(s, mode, &g);
            WL_CU(cuGraphInstantiateWithFlags(&x, g, 0));
            instantiations++;
        }
        WL_CU(cuGraphLaunch(x, (CUstream)s));
        if (reinstantiate) {
            WL_CU(cuGraphExecDestroy(x));
            WL_CU(cuGraphDestroy(g));
        }
    }
    WL_RT(cudaStreamSynchronize(s));
    double ms = wl_now_ms() - t0;
    if (!reinstantiate) {
        WL_CU(cuGraphExecDestroy(x));
        WL_CU(cuGraphDestroy(g));
    }
    WL_RT(cudaStreamDestroy(s));
    printf("graph_steps: steps=%lld nodes=%d instantiations=%lld launches=%lld mode=%s\n", steps,
           NODES, instantiations, steps, mode_name);
    fprintf(stderr, "graph_steps: ms=%.3f\n", ms);
    return 0;
}
