/* bench_calls: the cost of one CUDA call, for the tracer-overhead benchmark (run_bench.py).
 *
 *   bench_calls CALL N [BURST PAUSE_MS]      CALL: launch | memcpy | alloc | rtlaunch | graph | tsc |
 *                                            clock
 *
 * After setup and BURST warm-up calls, makes N calls in tight loops of BURST calls (default N),
 * sleeping PAUSE_MS between loops (each loop then starts with BURST/10 untimed calls), and prints
 *   "bench_calls: call=CALL n=N calls_made=C ns_per_call=X ns_per_call_median_burst=Y"
 * C: every call of CALL's function, timed or not (a baseline that recorded fewer than C calls
 * measured something other than recording them);
 * X: the loops' wall time / N (the pauses are not counted); Y: the median over loops of each
 * loop's time per call, which a preemption during one loop does not move. The pauses let a tracer's background
 * writer drain its buffers, so that what is measured is the cost of recording a call, not of
 * dropping it when a buffer is full. A call is:
 *   launch    cuLaunchKernel of a 1-parameter kernel, <<<1, 32>>>, on a non-blocking stream
 *   memcpy    cuMemcpyHtoDAsync of 256 bytes from pinned memory on that stream
 *   alloc     cuMemAlloc of 4096 bytes then cuMemFree (one pair counts as one "call")
 *   rtlaunch  cudaLaunchKernel of an nvcc-registered kernel (the runtime calls cuLaunchKernel)
 *   graph     cuGraphLaunch on that stream of a graph of one such launch (captured at setup)
 *   tsc       one read of the time-stamp counter (rdtsc), no CUDA call: what a clock read costs
 *   clock     one clock_gettime(CLOCK_MONOTONIC), no CUDA call       back to back, for comparison
 * Run it on the simulated CUDA in instant mode (FAKECUDA_INSTANT=1) so the driver costs next to
 * nothing and the figure is the cost of getting to it and back: what a tracer adds shows.
 *
 * Every result is checked (a failing call would measure an error path): the program exits 1
 * naming the call. Nothing here knows about tracing; the driver calls go through the PLT
 * (linked with -lcuda), the runtime call through libcudart's export, as in any program. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <x86intrin.h>

#include "fakecudart.h"
#include "wl_common.h"

__global__ void bench_rk(unsigned long long p)
{
    (void)p;
}

/* The driver-API kernel, as PTX: the simulation (and a real driver) loads it with no toolchain. */
static const char bench_ptx[] = ".version 8.0\n"
                                ".target sm_90\n"
                                ".address_size 64\n"
                                ".visible .entry bench_k(.param .u64 bench_k_param_0)\n"
                                "{\n"
                                "\tret;\n"
                                "}\n";

enum { CALL_LAUNCH, CALL_MEMCPY, CALL_ALLOC, CALL_RTLAUNCH, CALL_GRAPH, CALL_TSC, CALL_CLOCK, CALL_N };

typedef struct {
    CUfunction f;
    CUstream s;
    CUdeviceptr d;
    CUgraphExec g;
    void *h;
    unsigned long long arg;
    void *params[1];
    volatile unsigned long long sink; /* clock readings go here, so none is optimized away */
} bench_ctx;

static inline void bench_one(int call, bench_ctx *b)
{
    switch (call) {
    case CALL_LAUNCH:
        WL_CU(cuLaunchKernel(b->f, 1, 1, 1, 32, 1, 1, 0, b->s, b->params, NULL));
        break;
    case CALL_MEMCPY:
        WL_CU(cuMemcpyHtoDAsync(b->d, b->h, 256, b->s));
        break;
    case CALL_ALLOC: {
        CUdeviceptr p;
        WL_CU(cuMemAlloc(&p, 4096));
        WL_CU(cuMemFree(p));
        break;
    }
    case CALL_RTLAUNCH:
        WL_RT(cudaLaunchKernel((const void *)bench_rk, dim3(1), dim3(32), b->params, 0,
                               (cudaStream_t)b->s));
        break;
    case CALL_GRAPH:
        WL_CU(cuGraphLaunch(b->g, b->s));
        break;
    case CALL_TSC:
        b->sink = b->sink + __rdtsc();
        break;
    case CALL_CLOCK: {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        b->sink = b->sink + (unsigned long long)t.tv_nsec;
        break;
    }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    static const char *const names[CALL_N] = {"launch", "memcpy", "alloc", "rtlaunch", "graph",
                                              "tsc", "clock"};
    int call = -1;
    int args_ok = argc == 3 || argc == 5;
    long n = args_ok ? atol(argv[2]) : 0;
    long burst = argc == 5 ? atol(argv[3]) : n;
    double pause_ms = argc == 5 ? atof(argv[4]) : 0;
    for (int i = 0; args_ok && i < CALL_N; i++)
        if (!strcmp(argv[1], names[i]))
            call = i;
    if (call < 0 || n <= 0 || burst <= 0 || pause_ms < 0) {
        fprintf(stderr, "usage: bench_calls launch|memcpy|alloc|rtlaunch|graph|tsc|clock N "
                "[BURST PAUSE_MS] (N, BURST > 0; PAUSE_MS >= 0)\n");
        return 2;
    }
    fakecudart_require();
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.params[0] = &b.arg;
    /* The runtime makes device 0's primary context current; the driver calls use it. */
    WL_RT(cudaSetDevice(0));
    WL_RT(cudaFree(0));
    CUmodule mod;
    WL_CU(cuModuleLoadData(&mod, bench_ptx));
    WL_CU(cuModuleGetFunction(&b.f, mod, "bench_k"));
    WL_CU(cuStreamCreate(&b.s, CU_STREAM_NON_BLOCKING));
    WL_CU(cuMemAllocHost(&b.h, 256));
    WL_CU(cuMemAlloc(&b.d, 256));
    memset(b.h, 1, 256);
    CUgraph graph = NULL;
    if (call == CALL_GRAPH) {
        WL_CU(cuStreamBeginCapture_v2(b.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        WL_CU(cuLaunchKernel(b.f, 1, 1, 1, 32, 1, 1, 0, b.s, b.params, NULL));
        WL_CU(cuStreamEndCapture(b.s, &graph));
        WL_CU(cuGraphInstantiateWithFlags(&b.g, graph, 0));
    }

    long made = 0; /* calls of the function under test, for checking what a tracer recorded */
    for (long i = 0; i < burst; i++, made++)
        bench_one(call, &b);
    WL_CU(cuStreamSynchronize(b.s));
    long nbursts = (n + burst - 1) / burst;
    double *per_call = (double *)malloc(sizeof(double) * (size_t)nbursts);
    if (!per_call)
        WL_DIE("out of memory for %ld bursts", nbursts);
    double busy_ms = 0;
    for (long j = 0; j < nbursts; j++) {
        long k = n - j * burst < burst ? n - j * burst : burst;
        wl_sleep_ms(pause_ms);
        for (long i = 0; pause_ms > 0 && i < burst / 10; i++, made++) /* caches cooled */
            bench_one(call, &b);
        double t0 = wl_now_ms();
        for (long i = 0; i < k; i++)
            bench_one(call, &b);
        double dt = wl_now_ms() - t0;
        made += k;
        busy_ms += dt;
        per_call[j] = dt * 1e6 / k;
    }
    WL_CU(cuStreamSynchronize(b.s));
    qsort(per_call, (size_t)nbursts, sizeof(double), cmp_double);
    double median = nbursts % 2 ? per_call[nbursts / 2]
                                : (per_call[nbursts / 2 - 1] + per_call[nbursts / 2]) / 2;
    printf("bench_calls: call=%s n=%ld calls_made=%ld ns_per_call=%.2f "
           "ns_per_call_median_burst=%.2f\n", names[call], n, made, busy_ms * 1e6 / n, median);
    free(per_call);

    if (graph) {
        WL_CU(cuGraphExecDestroy(b.g));
        WL_CU(cuGraphDestroy(graph));
    }
    WL_CU(cuMemFree(b.d));
    WL_CU(cuMemFreeHost(b.h));
    WL_CU(cuStreamDestroy(b.s));
    WL_CU(cuModuleUnload(mod));
    return 0;
}
