#include "ctt.h"

#include <signal.h>

TEST_IMPL(run_captures_output_and_status)
{
    ctt_proc p;
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    ASSERT_INT(ctt_run(&p, argv, NULL, 10), ==, 0);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 3);
    ASSERT_STR(p.out, "out\n");
    ASSERT_STR(p.err, "err\n");
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(run_reports_signal_and_env)
{
    ctt_proc p;
    char *argv[] = {"sh", "-c", "echo \"$CTT_X${HOME:-unset}\"; kill -TERM $$", NULL};
    char *env[] = {"CTT_X=set-", "HOME=", NULL};
    ASSERT_INT(ctt_run(&p, argv, env, 10), ==, 0);
    ASSERT_INT(p.exited, ==, 0);
    ASSERT_INT(p.code, ==, SIGTERM);
    ASSERT_STR(p.out, "set-unset\n");
    ctt_proc_free(&p);
    return 0;
}
