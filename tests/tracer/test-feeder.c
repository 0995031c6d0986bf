/* The thread the GPU waits for (cta_sweep.last_tid): the last to feed it (a launch, copy, set or
 * synchronization), not any thread that called CUDA. train_loop --pin-thread has a second thread
 * call cudaHostAlloc every millisecond while the main thread's loader computes, as PyTorch's
 * pin-memory thread allocates pinned buffers: the idle time's host split is the main thread's,
 * computing as much as the loader's own CPU clock says (when the sleeping allocator's rate stood
 * for it, 7.7 ms of 88 ms were called computing). Beside CPU hogs the loader computes less of its
 * time, and its clock says so. */
#include "an_helpers.h"
#include "tjson.h"
#include "tr.h"

#include <stdlib.h>

#define ITERS 8

TEST_IMPL(host_split_of_the_thread_the_gpu_waits_for)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/feeder", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--loader", "compute", "--loader-ms",
                   "30", "--iters", "8", "--pin-thread", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    const char *line = strstr(p.out, "train_loop: pin_thread allocs=");
    ASSERT(line);
    long long allocs = 0;
    double cpu_ms = 0;
    ASSERT_INT(sscanf(line, "train_loop: pin_thread allocs=%lld loader_cpu_ms_total=%lf", &allocs,
                      &cpu_ms), ==, 2);
    ASSERT(allocs > ITERS);
    tj *s = an_summary(out, NULL);
    ASSERT(s);
    /* the first loader runs before the thread's second CPU reading: computing or waiting, unknown */
    double compute = tj_num(s, "breakdown.0.idle_host_compute_ns") / 1e6;
    printf("loader CPU %.1f ms (%lld allocations beside it); idle computing %.1f ms\n", cpu_ms,
           allocs, compute);
    ASSERT(compute >= 0.75 * cpu_ms * (ITERS - 1) / ITERS);
    ASSERT(compute <= 1.15 * cpu_ms);
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}
