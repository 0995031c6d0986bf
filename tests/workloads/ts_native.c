/* ts_native: a C thread that computes in two named native functions between CUDA calls, timed on
 * its own clock, for the thread sampler's native stacks (issue 28, item 2: perf_event user-stack
 * sampling; tests/tracer/test-tsample.c, test-hostact.c):
 *
 *   ts_native ROUNDS
 *
 * Each round, on the main thread: a 1 MiB cudaMemcpy to the device, ts_hash_rows() computes for
 * 90 ms, another copy, ts_sort_keys() computes for 60 ms. Both are plain arithmetic loops that
 * read the clock once per 4096 steps (nearly every instant is in the function itself, not in
 * the clock's code). No Python: where perf_event sampling is permitted, a sample's stack is the
 * native stack of the thread where it ran, innermost first. stdout: per phase "ts_native: phase
 * NAME START END" (hash or sort; CLOCK_MONOTONIC ns, the trace's clock), then
 * "ts_native: rounds=N ok"; exits 0. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#include "wl_common.h"

#define BYTES (1u << 20)

__attribute__((noinline)) uint64_t ts_hash_rows(double ms)
{
    uint64_t end = wl_now_ns() + (uint64_t)(ms * 1e6), h = 1469598103934665603ull;
    do
        for (unsigned i = 0; i < 4096; i++)
            h = (h ^ i) * 1099511628211ull;
    while (wl_now_ns() < end);
    return h;
}

__attribute__((noinline)) uint64_t ts_sort_keys(double ms)
{
    uint64_t end = wl_now_ns() + (uint64_t)(ms * 1e6), x = 88172645463325252ull;
    do
        for (unsigned i = 0; i < 4096; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
    while (wl_now_ns() < end);
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        WL_DIE("usage: ts_native ROUNDS");
    static char src[BYTES];
    long long rounds = wl_parse_count("ROUNDS", argv[1]);
    uint64_t sum = 0;
    void *dst;
    WL_RT(cudaMalloc(&dst, BYTES));
    for (long long r = 0; r < rounds; r++) {
        WL_RT(cudaMemcpy(dst, src, BYTES, cudaMemcpyHostToDevice));
        uint64_t t0 = wl_now_ns();
        sum += ts_hash_rows(90);
        wl_phase("ts_native", "hash", t0);
        WL_RT(cudaMemcpy(dst, src, BYTES, cudaMemcpyHostToDevice));
        t0 = wl_now_ns();
        sum += ts_sort_keys(60);
        wl_phase("ts_native", "sort", t0);
    }
    WL_RT(cudaFree(dst));
    printf("ts_native: rounds=%lld ok (%llu)\n", rounds, (unsigned long long)(sum & 1));
    return 0;
}
