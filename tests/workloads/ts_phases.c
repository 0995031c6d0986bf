/* ts_phases: a C thread that spends known phases in known functions, timed on its own clock,
 * for the thread sampler's checks (issue 28, item 2; tests/tracer/test-tsample.c):
 *
 *   ts_phases ROUNDS
 *
 * Each round, on the main thread: copy_phase() repeats a 32 MiB pageable cudaMemcpy to the
 * device for 60 ms (the thread is inside cudaMemcpy nearly all of it); spin_phase() spins on
 * the clock for 120 ms without calling CUDA (running: state R); sleep_phase() sleeps 80 ms in
 * nanosleep (state S). No Python: a sample's stack is the native stack of the thread's last
 * CUDA call, the copy in copy_phase. stdout: per phase "ts_phases: phase NAME START END"
 * (CLOCK_MONOTONIC ns, the trace's clock), then "ts_phases: rounds=N ok"; exits 0. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#include "wl_common.h"

#define BYTES (32u << 20)

__attribute__((noinline)) static void copy_phase(void *dst, const void *src, double ms)
{
    uint64_t end = wl_now_ns() + (uint64_t)(ms * 1e6);
    while (wl_now_ns() < end)
        WL_RT(cudaMemcpy(dst, src, BYTES, cudaMemcpyHostToDevice));
}

__attribute__((noinline)) static unsigned spin_phase(double ms)
{
    uint64_t end = wl_now_ns() + (uint64_t)(ms * 1e6);
    volatile unsigned x = 0;
    while (wl_now_ns() < end)
        x++;
    return x;
}

__attribute__((noinline)) static void sleep_phase(double ms)
{
    wl_sleep_ms(ms);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        WL_DIE("usage: ts_phases ROUNDS");
    long long rounds = wl_parse_count("ROUNDS", argv[1]);
    void *dst, *src = calloc(1, BYTES);
    if (!src)
        WL_DIE("expected %u bytes of host memory, found none", BYTES);
    WL_RT(cudaMalloc(&dst, BYTES));
    for (long long r = 0; r < rounds; r++) {
        uint64_t t0 = wl_now_ns();
        copy_phase(dst, src, 60);
        wl_phase("ts_phases", "copy", t0);
        t0 = wl_now_ns();
        spin_phase(120);
        wl_phase("ts_phases", "spin", t0);
        t0 = wl_now_ns();
        sleep_phase(80);
        wl_phase("ts_phases", "sleep", t0);
    }
    WL_RT(cudaFree(dst));
    free(src);
    printf("ts_phases: rounds=%lld ok\n", rounds);
    return 0;
}
