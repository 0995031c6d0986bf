#include "wl_run.h"

/* The brief's own numbers: 20 iterations with a 5 ms loader take at least 100 ms, and every
 * loss the simulation computed (through the host kernels) matches the CPU's. */
TEST_IMPL(train_loop_counts)
{
    ctt_proc p;
    double ms;
    const char *args[] = {"--iters", "20", "--loader-ms", "5", "--verify", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", args, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "train_loop: verify=ok");
    const char *t = "train_loop: totals ";
    ASSERT_INT(wl_num(p.out, t, "h2d"), ==, 20);
    ASSERT_INT(wl_num(p.out, t, "h2d_bytes"), ==, 20LL * 4194304);
    ASSERT_INT(wl_num(p.out, t, "kernels"), ==, 20 * 33);
    ASSERT_INT(wl_num(p.out, t, "d2h"), ==, 20);
    ASSERT_INT(wl_num(p.out, t, "d2h_bytes"), ==, 80);
    ASSERT_INT(wl_num(p.out, t, "stream_syncs"), ==, 20);
    ASSERT_INT(wl_num(p.out, t, "event_records"), ==, 0);
    ASSERT_INT(wl_num(p.out, "train_loop: per_iter ", "kernels"), ==, 33);
    /* 6 model buffers + 1 batch: (3*6*1024 + 7*1024 + 1024 + 1) floats + 4 MiB */
    ASSERT_INT(wl_num(p.out, "train_loop: device_allocs", "device_allocs"), ==, 7);
    ASSERT_INT(wl_num(p.out, "train_loop: device_allocs", "device_bytes"), ==,
               (26624 + 1) * 4 + 4194304);
    ASSERT(wl_num(p.out, "train_loop: loader", "loader_ms_total") >= 100);
    ASSERT(wl_num(p.out, "train_loop: loader", "wall_ms") >= 100);
    ASSERT(ms >= 100);
    /* Training makes progress: the loss falls. */
    ASSERT(wl_num(p.out, "train_loop: loss", "loss_last") <
           wl_num(p.out, "train_loop: loss", "loss_first"));
    ctt_proc_free(&p);
    return 0;
}
