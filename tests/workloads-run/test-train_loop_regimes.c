#include "wl_run.h"

/* The same binary starves the GPU or keeps it busy.
 * Starved (6 iterations, 1 layer): the 50 ms loader dwarfs 0.1 ms of GPU work per iteration
 * (8 kernels, 1 copy), so the host hardly waits for the GPU: less than half the loader time,
 * which leaves room for a loaded machine, where each simulated operation finishes late by the
 * scheduler's delay in waking its stream's thread.
 * Fed: forward_linear and backward_linear take 1 ms each (12 ms of GPU per iteration with L = 6)
 * against a 2 ms prefetched loader, so the host spends most of the loop waiting in
 * cudaStreamSynchronize and the loop takes at least the GPU's 20 x 12 ms: most of it but the
 * time the loop's thread waited for a CPU (its own schedstat reading; beside two CPU hogs the
 * wait was 141 ms of a 296 ms loop). */
TEST_IMPL(train_loop_regimes)
{
    ctt_proc p;
    double ms;
    const char *starved[] = {"--iters", "6", "--layers", "1", "--memory", "pinned", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", starved, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.code, ==, 0);
    double loader = wl_num(p.out, "train_loop: loader", "loader_ms_total");
    double wait = wl_num(p.out, "train_loop: loader", "sync_wait_ms_total");
    double loop = wl_num(p.out, "train_loop: loader", "loop_ms");
    ASSERT_INT(loader, >=, 300);
    ASSERT_INT(loop, >=, loader);
    ASSERT_INT(wait, <, 0.5 * loader);
    ctt_proc_free(&p);

    const char *fed[] = {"--iters", "20", "--loader-ms", "2", "--memory", "pinned",
                         "--prefetch", "--verify", NULL};
    const char *env[] = {"FAKECUDA_KERNEL_NS=forward_linear=1000000,backward_linear=1000000",
                         NULL};
    ASSERT_INT(wl_run(&p, "train_loop", fed, env, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "train_loop: verify=ok");
    loader = wl_num(p.out, "train_loop: loader", "loader_ms_total");
    wait = wl_num(p.out, "train_loop: loader", "sync_wait_ms_total");
    loop = wl_num(p.out, "train_loop: loader", "loop_ms");
    ASSERT_INT(loop, >=, 20 * 12);
    ASSERT_INT(loader, >=, 40);
    double runq = wl_num(p.out, "train_loop: loader", "loop_runq_ms");
    ASSERT_INT(loader, <, 0.5 * loop);
    ASSERT_INT(wait, >, 0.5 * (loop - runq));
    ctt_proc_free(&p);
    return 0;
}
