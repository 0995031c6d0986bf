/* The ways a traced program dies or is interrupted: SIGKILL at random points (the trace stays
 * readable and holds everything older than the flush interval), SIGTERM and SIGINT caught by
 * the program's own handler (installed before or after CUDA starts), abort() and a segfault.
 * The program's output and end are those of an untraced run. */
#define _GNU_SOURCE
#include "fl.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What cutrace promises a SIGKILL loses at most: records younger than this (the writer wakes
 * every 100 ms and writes a thread's records within 500 ms; the rest is margin for a loaded
 * machine). */
#define FL_FLUSH_MS 1000

static double fl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

TEST_IMPL(sigkill_at_random_points)
{
    char victim[4096], out[4096], dir[4096];
    unsigned seed = (unsigned)time(NULL);
    printf("seed %u\n", seed);
    for (int round = 0; round < 5; round++) {
        snprintf(dir, sizeof dir, "%s/kill%d", ctt_tmpdir(), round);
        snprintf(out, sizeof out, "%s/kill%d.out", ctt_tmpdir(), round);
        char *cmd[] = {(char *)fl_victim(victim), "steps", "1000", "10", NULL};
        pid_t pid = fl_spawn_traced(cmd, dir, out);
        ASSERT(pid > 0);
        int delay_ms = 200 + (int)(rand_r(&seed) % 1800);
        usleep((useconds_t)delay_ms * 1000);
        double killed_at = fl_now_ms();
        ASSERT_INT(kill(pid, SIGKILL), ==, 0);
        int st;
        ASSERT_INT(waitpid(pid, &st, 0), ==, pid);
        ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
        /* Steps the program finished long enough before the kill. */
        char *text = ctt_read_file(out, NULL);
        ASSERT(text != NULL);
        long old_steps = 0, all_steps = 0;
        for (const char *l = strstr(text, "victim: step "); l; l = strstr(l + 1, "victim: step ")) {
            all_steps++;
            const char *t = strstr(l, "t_ms=");
            if (t && strtod(t + 5, NULL) < killed_at - FL_FLUSH_MS)
                old_steps++;
        }
        free(text);
        tr_trace t;
        ASSERT_INT(tr_load(&t, dir), ==, 0); /* readable, whatever was cut */
        ASSERT_UINT(t.nfiles, ==, 1);
        ASSERT_INT(t.stats[0].complete, ==, 0);
        size_t syncs = fl_count(&t, 0, "cudaStreamSynchronize");
        printf("round %d: killed after %d ms, %ld steps done, %ld older than %d ms, %zu in the "
               "trace\n", round, delay_ms, all_steps, old_steps, FL_FLUSH_MS, syncs);
        ASSERT_UINT(syncs, >=, (size_t)old_steps);
        ASSERT_UINT(syncs, <=, (size_t)all_steps + 1);
        tr_free(&t);
    }
    return 0;
}

/* victim MODE 3 ARG traced and untraced: same output and end; the trace is complete and holds
 * `syncs` synchronizations. Returns the END record's how, or -1 after failing. */
static int fl_handled(const char *mode, const char *arg, size_t syncs, int *how, int *code)
{
    char victim[4096], dir[4096];
    snprintf(dir, sizeof dir, "%s/%s-%s", ctt_tmpdir(), mode, arg);
    char *cmd[] = {(char *)fl_victim(victim), (char *)mode, "3", (char *)arg, NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), ==, syncs);
    ASSERT_UINT(fl_count(&t, 0, "cudaMemcpy"), ==, 2 * syncs);
    const ct_rec *end = fl_end(&t, 0);
    ASSERT(end != NULL);
    *how = (int)end->u.end.how;
    *code = end->u.end.code;
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

TEST_IMPL(program_signal_handlers_kept)
{
    static const char *const cases[][2] = {
        {"handler", "term"}, {"handler", "int"}, {"late-handler", "term"}, {"late-handler", "int"}};
    for (size_t i = 0; i < 4; i++) {
        int how, code;
        if (fl_handled(cases[i][0], cases[i][1], 4, &how, &code))
            return 1;
        ASSERT_INT(how, ==, CT_END_EXIT); /* the program caught it and went on to exit 0 */
        ASSERT_INT(code, ==, 0);
    }
    return 0;
}

TEST_IMPL(abort_and_segfault)
{
    int how, code;
    if (fl_handled("abort", "", 3, &how, &code))
        return 1;
    ASSERT_INT(how, ==, CT_END_ABORT);
    ASSERT_INT(code, ==, SIGABRT);
    if (fl_handled("segv", "", 3, &how, &code))
        return 1;
    ASSERT_INT(how, ==, CT_END_SIGNAL);
    ASSERT_INT(code, ==, SIGSEGV);
    return 0;
}
