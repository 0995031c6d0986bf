#include "wl_run.h"

/* Bad flags stop the program before any CUDA call, naming the flag. */
TEST_IMPL(train_loop_bad_flags)
{
    ctt_proc p;
    double ms;
    const char *odd[] = {"--batch-bytes", "100", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", odd, NULL, &ms), ==, 0);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "--batch-bytes: expected a positive multiple of 4096, found 100");
    ASSERT_STR(p.out, "");
    ctt_proc_free(&p);
    const char *mode[] = {"--memory", "managed", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", mode, NULL, &ms), ==, 0);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "--memory: expected pageable|pinned, found \"managed\"");
    ctt_proc_free(&p);
    const char *unknown[] = {"--epochs", "3", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", unknown, NULL, &ms), ==, 0);
    ASSERT_INT(p.code, ==, 2);
    ASSERT_CONTAINS(p.err, "usage: train_loop");
    ctt_proc_free(&p);
    return 0;
}
