#include "wl_run.h"

/* The check is not vacuous: without host kernels nothing computes the losses, and --verify
 * says so (while the program still runs through every call). */
TEST_IMPL(train_loop_without_host_kernels)
{
    ctt_proc p;
    double ms;
    const char *args[] = {"--iters", "3", "--loader-ms", "1", "--verify", NULL};
    const char *env[] = {"FAKECUDA_HOST_KERNELS=", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", args, env, &ms), ==, 0);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.out, "train_loop: verify=FAILED");
    ASSERT_INT(wl_num(p.out, "train_loop: totals ", "kernels"), ==, 3 * 33);
    ctt_proc_free(&p);
    return 0;
}
