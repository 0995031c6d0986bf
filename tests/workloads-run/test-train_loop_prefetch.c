#include "wl_run.h"

/* Double buffering: batch 0 before the loop, then one prefetch per iteration but the last;
 * events order the two streams, and results still verify (a copy racing the loader would not). */
TEST_IMPL(train_loop_prefetch)
{
    ctt_proc p;
    double ms;
    const char *args[] = {"--iters", "10", "--loader-ms", "5", "--prefetch", "--memory",
                          "pinned", "--layers", "2", "--verify", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", args, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "memory=pinned prefetch=1 layers=2");
    ASSERT_CONTAINS(p.out, "train_loop: verify=ok");
    const char *t = "train_loop: totals ";
    ASSERT_INT(wl_num(p.out, t, "h2d"), ==, 10);
    ASSERT_INT(wl_num(p.out, t, "kernels"), ==, 10 * 13);
    ASSERT_INT(wl_num(p.out, t, "d2h"), ==, 10);
    ASSERT_INT(wl_num(p.out, t, "event_records"), ==, 1 + 10 + 9);
    ASSERT_INT(wl_num(p.out, t, "event_waits"), ==, 10 + 9);
    ASSERT_INT(wl_num(p.out, "train_loop: device_allocs", "device_allocs"), ==, 8);
    /* 10 batches of 5 ms are loaded in all, one of them before the loop. */
    ASSERT(wl_num(p.out, "train_loop: loader", "loader_ms_total") >= 50);
    ASSERT(ms >= 50);
    ctt_proc_free(&p);
    return 0;
}
