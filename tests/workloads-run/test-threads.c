#include "wl_run.h"

/* 8 threads on 8 streams: every result right, every count as designed. */
TEST_IMPL(threads)
{
    ctt_proc p;
    double ms;
    ASSERT_INT(wl_run(&p, "threads", NULL, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "threads: verify=ok mismatches=0");
    const char *t = "threads: totals ";
    ASSERT_INT(wl_num(p.out, t, "h2d"), ==, 80);
    ASSERT_INT(wl_num(p.out, t, "d2h"), ==, 80);
    ASSERT_INT(wl_num(p.out, t, "h2d_bytes"), ==, 80LL * 262144);
    ASSERT_INT(wl_num(p.out, t, "kernels"), ==, 320);
    ASSERT_INT(wl_num(p.out, t, "stream_syncs"), ==, 80);
    ctt_proc_free(&p);
    return 0;
}
