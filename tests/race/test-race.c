/* The tracer's threaded paths under ThreadSanitizer: many threads recording into their rings
 * while the writer drains them, GPU timing harvested from another thread, threads exiting. No
 * report from libcutrace is accepted (tsan.supp suppresses only the simulated CUDA stack).
 * Forks are tested in tests/faults, not here: ThreadSanitizer does not support fork in a
 * multi-threaded process (the child may deadlock inside the runtime). */
#include "fl.h"

/* Runs cmd under `cutrace run --stacks none` (plus opts) with the ThreadSanitizer build of
 * libcutrace; fails on a report or an exit status other than want. Returns 0 or 1.
 *
 * Why no stacks: libunwind's per-thread cache has a thread-specific-data destructor that locks
 * a mutex after ThreadSanitizer has torn down the exiting thread's state, which crashes inside
 * libtsan (gcc 12) whenever a thread that captured a stack exits. Stack capture runs on the
 * calling thread; what it shares with the writer (the intern tables) is also used by names. */
static int race_run(const char *name, char *const opts[], char *const cmd[], char *const extra,
                    int want)
{
    char dir[4096], lib[4096], so[4200], pre[4200];
    snprintf(dir, sizeof dir, "%s/%s", ctt_tmpdir(), name);
    snprintf(so, sizeof so, "CUTRACE_LIB=%s", ctt_path(lib, "tsan/lib/libcutrace.so"));
    /* libtsan first: its interceptors must come before libc's symbols. */
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", RACE_LIBTSAN);
    char opt[4200];
    snprintf(opt, sizeof opt, "TSAN_OPTIONS=halt_on_error=0 exitcode=66 second_deadlock_stack=1 "
             "suppressions=%s", RACE_SRC "/tsan.supp");
    char *env[] = {so, pre, opt, extra, NULL};
    char *o[16] = {"--stacks", "none"};
    for (size_t i = 0; opts && opts[i] && i < 13; i++)
        o[2 + i] = opts[i];
    ctt_proc p;
    ASSERT_INT(tr_run(&p, dir, o, cmd, env, 60), ==, 0);
    if (strstr(p.err, "ThreadSanitizer") || !p.exited || p.code != want) {
        ctt_fail_at(__FILE__, __LINE__, "%s: %s %d (expected exit %d); stderr:\n%.20000s",
                        name, p.exited ? "exit" : "signal", p.code, want, p.err);
        return 1;
    }
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    for (size_t f = 0; f < t.nfiles; f++) {
        ASSERT_INT(t.stats[f].complete, ==, 1);
        ASSERT_UINT(t.stats[f].lost, ==, 0);
    }
    printf("%s: %zu files, %zu records, no race reported\n", name, t.nfiles, t.n);
    ASSERT_UINT(t.n, >, 100);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(threads_workload_no_races)
{
    char prog[4096];
    char *opts[] = {"--gpu-timing", "all", NULL};
    char *cmd[] = {(char *)tr_workload(prog, "threads"), "--threads", "8", "--rounds", "4", NULL};
    return race_run("threads", opts, cmd, NULL, 0);
}

TEST_IMPL(stress_threads_no_races)
{
    char prog[4096];
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "stress", "32", "300", NULL};
    return race_run("stress", NULL, cmd, "FAKECUDA_INSTANT=1", 0);
}
