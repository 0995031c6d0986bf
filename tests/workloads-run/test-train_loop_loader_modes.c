#include "wl_run.h"

/* --loader compute burns the loader's time on the CPU; --loader sleep does not. */
TEST_IMPL(train_loop_loader_modes)
{
    const char *modes[] = {"compute", "sleep"};
    double cpu[2];
    for (int m = 0; m < 2; m++) {
        ctt_proc p;
        double ms, before = wl_children_cpu_s();
        const char *args[] = {"--iters", "5", "--loader-ms", "40", "--loader", modes[m],
                              "--layers", "1", "--batch-bytes", "65536", "--verify", NULL};
        ASSERT_INT(wl_run(&p, "train_loop", args, NULL, &ms), ==, 0);
        cpu[m] = wl_children_cpu_s() - before;
        ASSERT_STR(p.err, "");
        ASSERT_INT(p.code, ==, 0);
        ASSERT_CONTAINS(p.out, "train_loop: verify=ok");
        ASSERT_INT(wl_num(p.out, "train_loop: totals ", "kernels"), ==, 5 * 8);
        double loader = wl_num(p.out, "train_loop: loader", "loader_ms_total");
        ASSERT_INT(loader, >=, 200);
        ASSERT_INT(loader, <, 1000); /* late wake-ups on a loaded machine, not more */
        ASSERT_INT(ms, >=, 200);
        ctt_proc_free(&p);
    }
    /* 200 ms of busy loop against 200 ms of sleep: even on a loaded machine, where the loop
     * gets only a share of a CPU, it costs several times what sleeping does. */
    ASSERT_INT(cpu[0] * 1000, >, 3000 * cpu[1]);
    return 0;
}
