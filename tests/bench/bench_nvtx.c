/* bench_nvtx: the cost of an NVTX push/pop pair (run_bench.py, section 8; issue 15).
 *
 * bench_nvtx N BURST PAUSE_MS [dynamic]: one cudaFree(NULL) (a trace starts with the first CUDA
 * call), then N nvtxRangePushA/nvtxRangePop pairs in bursts of BURST separated by PAUSE_MS
 * (longer than cutrace's writer period, so that a traced run is measured recording, not
 * dropping), timed with CLOCK_MONOTONIC around each burst. The name is "step", or with
 * `dynamic` a PyTorch emit_nvtx-style name with a sequence number, built before the timed loop
 * (a new text per pair: what the tracer copies, not what the program formats). Prints
 * "bench_nvtx: pairs=N ns_per_pair=X". */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_nvtx N BURST PAUSE_MS [dynamic]\n");
        return 2;
    }
    long n = atol(argv[1]), burst = atol(argv[2]), pause_ms = atol(argv[3]);
    int dynamic = argc > 4 && strcmp(argv[4], "dynamic") == 0;
    if (n <= 0 || burst <= 0 || cudaFree(NULL) != cudaSuccess)
        return 1;
    char (*names)[64] = malloc((size_t)burst * sizeof *names);
    if (!names)
        return 1;
    double total = 0;
    for (long done = 0; done < n;) {
        long k = n - done < burst ? n - done : burst;
        for (long i = 0; i < k; i++)
            snprintf(names[i], sizeof names[i], dynamic ? "aten::add, seq = %ld, sizes = [[3, 4]]"
                                                        : "step", done + i);
        double t0 = now_ns();
        for (long i = 0; i < k; i++) {
            nvtxRangePushA(names[i]);
            nvtxRangePop();
        }
        total += now_ns() - t0;
        done += k;
        if (done < n && pause_ms > 0) {
            struct timespec p = {pause_ms / 1000, (pause_ms % 1000) * 1000000};
            nanosleep(&p, NULL);
        }
    }
    free(names);
    printf("bench_nvtx: pairs=%ld ns_per_pair=%.1f\n", n, total / (double)n);
    return 0;
}
