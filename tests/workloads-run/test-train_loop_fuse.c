#include "wl_run.h"

#include <string.h>

/* --fuse (launch-bound's fix in diag_pairs.txt) launches one kernel a step and trains the same
 * model: the same losses as the 5*L+3 kernels, and the CPU's; it refuses the flags that act
 * per kernel. */
TEST_IMPL(train_loop_fuse)
{
    ctt_proc p, q;
    double ms;
    const char *fused[] = {"--iters", "6", "--loader-ms", "0", "--layers", "4", "--verify", "--fuse",
                           NULL};
    ASSERT_INT(wl_run(&p, "train_loop", fused, NULL, &ms), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "train_loop: verify=ok");
    ASSERT_INT(wl_num(p.out, "train_loop: per_iter ", "kernels"), ==, 1);
    ASSERT_INT(wl_num(p.out, "train_loop: totals ", "kernels"), ==, 6);
    fused[7] = NULL;
    ASSERT_INT(wl_run(&q, "train_loop", fused, NULL, &ms), ==, 0);
    ASSERT_INT(q.code, ==, 0);
    ASSERT_INT(wl_num(q.out, "train_loop: totals ", "kernels"), ==, 6 * 23);
    const char *lp = strstr(p.out, "train_loop: loss_first="), *lq = strstr(q.out, "train_loop: loss_first=");
    ASSERT(lp && lq);
    ASSERT_INT(strcspn(lp, "\n"), ==, strcspn(lq, "\n"));
    ASSERT(!strncmp(lp, lq, strcspn(lp, "\n")));
    ctt_proc_free(&p);
    ctt_proc_free(&q);
    const char *both[] = {"--fuse", "--prefetch", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", both, NULL, &ms), ==, 0);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "--fuse: expected without --prefetch");
    ctt_proc_free(&p);
    return 0;
}
