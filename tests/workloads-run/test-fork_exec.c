#include "wl_run.h"

#include <stdlib.h>

/* Three jobs (two forked children and the parent) each in its own process, the exec'd
 * train_loop's own report, and every child exiting 0. */
TEST_IMPL(fork_exec)
{
    ctt_proc p;
    double ms;
    ASSERT_INT(wl_run(&p, "fork_exec", NULL, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    long pids[3];
    for (int i = 0; i < 3; i++) {
        char line[64];
        snprintf(line, sizeof line, "fork_exec: job %d ", i);
        pids[i] = (long)wl_num(p.out, line, "pid");
        ASSERT(pids[i] > 0);
        const char *l = strstr(p.out, line);
        ASSERT(l && strstr(l, "verify=ok") && strstr(l, "verify=ok") < strchr(l, '\n'));
    }
    ASSERT(pids[0] != pids[1] && pids[1] != pids[2] && pids[0] != pids[2]);
    ASSERT_CONTAINS(p.out, "train_loop: iters=3 loader=sleep loader_ms=5");
    ASSERT_INT(wl_num(p.out, "train_loop: totals ", "kernels"), ==, 3 * 13);
    ASSERT_INT(wl_num(p.out, "fork_exec: children=", "children"), ==, 4);
    ASSERT_INT(wl_num(p.out, "fork_exec: children=", "failed"), ==, 0);
    ctt_proc_free(&p);
    return 0;
}
