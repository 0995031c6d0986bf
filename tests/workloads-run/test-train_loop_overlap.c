#include "wl_run.h"

/* --prefetch overlaps the 10 ms loader with 12 ms of GPU work per step only when the loss comes
 * back into pinned memory: into pageable memory the copy returns when the step is done, so the
 * loader waits for the GPU. 10 iterations: pageable >= 10 x (10 + 12) ms = 220 ms; pinned about
 * 10 x 12 ms plus the first batch, under 0.85 x pageable. */
TEST_IMPL(train_loop_overlap)
{
    const char *memory[] = {"pageable", "pinned"};
    double loop[2];
    for (int m = 0; m < 2; m++) {
        ctt_proc p;
        double ms;
        const char *args[] = {"--iters", "10", "--loader-ms", "10", "--prefetch", "--memory",
                              memory[m], "--verify", NULL};
        const char *env[] = {"FAKECUDA_KERNEL_NS=forward_linear=1000000,backward_linear=1000000",
                             NULL};
        ASSERT_INT(wl_run(&p, "train_loop", args, env, &ms), ==, 0);
        ASSERT_STR(p.err, "");
        ASSERT_INT(p.code, ==, 0);
        ASSERT_CONTAINS(p.out, "train_loop: verify=ok");
        loop[m] = wl_num(p.out, "train_loop: loader", "loop_ms");
        ctt_proc_free(&p);
    }
    ASSERT_INT(loop[0], >=, 220);
    ASSERT_INT(loop[1], >=, 120);
    ASSERT_INT(loop[1], <, 0.85 * loop[0]);
    return 0;
}
