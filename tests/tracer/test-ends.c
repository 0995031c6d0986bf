/* How a traced process ended, as it happened: the END record (how, code), `cutrace summary`'s
 * "ended:" line and its JSON `end`/`end_code`, for every way a process ends, each traced under
 * `cutrace run` and with a bare LD_PRELOAD of libcutrace; the program's own exit status or
 * signal is the one it has untraced (dies and ends.py state theirs). */
#include "tr.h"

#include <signal.h>
#include <stdlib.h>

enum { ENDS_RUN = 0, ENDS_PRELOAD = 1 };

/* Runs cmd traced into dir, by `cutrace run` or by LD_PRELOAD alone. */
static int ends_run(ctt_proc *p, const char *dir, char *const cmd[], int mode)
{
    return mode == ENDS_RUN ? tr_run(p, dir, NULL, cmd, NULL, 60)
                            : tr_run_preloaded(p, dir, cmd, NULL, 60);
}

typedef struct {
    unsigned how;          /* END how; 0: no END record */
    int code;              /* END code */
    const char *text;      /* the summary's "ended: " text */
    const char *json;      /* the JSON's "end", NULL: none */
    size_t launches;       /* LAUNCH records the trace must hold */
    size_t memsets;        /* cuMemsetD8_v2 API records it must hold */
} ends_want;

/* The single trace in dir ends as w says. */
static int ends_check(const char *dir, const ends_want *w)
{
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1);
    ASSERT_INT(t.stats[0].complete, ==, w->how != 0);
    const ct_rec *end = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_END)
            end = &t.v[i].r;
    if (w->how) {
        ASSERT(end != NULL);
        ASSERT_UINT(end->u.end.how, ==, w->how);
        ASSERT_INT(end->u.end.code, ==, w->code);
        /* every call made before the end is in the trace */
        ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, w->launches);
        ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemsetD8_v2"), ==, w->memsets);
    } else {
        ASSERT(end == NULL);
    }
    tr_free(&t);
    char *summary[] = {"summary", (char *)dir, NULL}, line[200];
    char *text = tr_analyze(summary);
    ASSERT(text != NULL);
    snprintf(line, sizeof line, ", ended: %s, ", w->text);
    ASSERT_CONTAINS(text, line);
    free(text);
    /* the timeline: an instant event of the process, with the same words */
    char *timeline[] = {"timeline", (char *)dir, "-o", "-", NULL};
    text = tr_analyze(timeline);
    ASSERT(text != NULL);
    snprintf(line, sizeof line, "\"s\":\"p\",\"name\":\"ended: %s\"}", w->text);
    ASSERT_CONTAINS(text, line);
    free(text);
    char *jargs[] = {"summary", "--json", (char *)dir, NULL}, key[100];
    char *json = tr_analyze(jargs);
    ASSERT(json != NULL);
    if (w->json) {
        ASSERT_CONTAINS(json, "\"complete\": true,");
        snprintf(key, sizeof key, "\"end\": \"%s\",", w->json);
        ASSERT_CONTAINS(json, key);
        snprintf(key, sizeof key, "\"end_code\": %d,", w->code);
        ASSERT_CONTAINS(json, key);
    } else {
        ASSERT_CONTAINS(json, "\"complete\": false,");
        ASSERT(!strstr(json, "\"end\":"));
    }
    free(json);
    return 0;
}

/* dies --how HOW --steps 2 (4 launches of its steps, 3 in flight), traced both ways: the
 * program ends with exited/status as untraced and the trace as w says. */
static int ends_dies(const char *how, int exited, int status, const ends_want *w)
{
    for (int mode = ENDS_RUN; mode <= ENDS_PRELOAD; mode++) {
        char prog[4096], dir[4096];
        snprintf(dir, sizeof dir, "%s/%s-%s", ctt_tmpdir(), how, mode ? "preload" : "run");
        char *cmd[] = {(char *)tr_workload(prog, "dies"), "--how", (char *)how, "--steps", "2",
                       "--step-ms", "10", NULL};
        ctt_proc p;
        ASSERT_INT(ends_run(&p, dir, cmd, mode), ==, 0);
        printf("dies --how %s (%s): %s %d\n", how, mode ? "LD_PRELOAD" : "cutrace run",
               p.exited ? "exit status" : "signal", p.code);
        ASSERT_INT(p.exited, ==, exited);
        ASSERT_INT(p.code, ==, status);
        ASSERT_CONTAINS(p.out, "with work in flight");
        if (ends_check(dir, w))
            return 1;
        ctt_proc_free(&p);
    }
    return 0;
}

TEST_IMPL(ends_exit_status)
{
    const ends_want ex = {CT_END_EXIT, 3, "exit status 3", "exit", 7, 0};
    const ends_want ret = {CT_END_EXIT, 5, "exit status 5", "exit", 7, 0};
    return ends_dies("exit", 1, 3, &ex) || ends_dies("return", 1, 5, &ret);
}

TEST_IMPL(ends_immediate_exit)
{
    const ends_want ex = {CT_END_EXIT_NOW, 7,
                          "_exit status 7 (exit handlers and destructors did not run)", "_exit", 7, 0};
    const ends_want ex2 = {CT_END_EXIT_NOW, 8,
                           "_exit status 8 (exit handlers and destructors did not run)", "_exit", 7, 0};
    return ends_dies("_exit", 1, 7, &ex) || ends_dies("_Exit", 1, 8, &ex2);
}

TEST_IMPL(ends_signal_abort_exec_kill)
{
    const ends_want term = {CT_END_SIGNAL, SIGTERM, "killed by signal 15 (SIGTERM)", "signal", 7, 0};
    const ends_want ab = {CT_END_ABORT, SIGABRT, "abort (SIGABRT)", "abort", 7, 0};
    const ends_want ex = {CT_END_DETACH, 0,
                          "exec (the program replaced its image; the tracer detached)", "detached",
                          7, 0};
    const ends_want kill = {0, 0, "no END record: killed (SIGKILL, as the OOM killer sends) or "
                            "the machine stopped", NULL, 0, 0};
    const ends_want pipe = {CT_END_SIGNAL, SIGPIPE, "killed by signal 13 (SIGPIPE)", "signal", 7, 0};
    return ends_dies("term", 0, SIGTERM, &term) || ends_dies("pipe", 0, SIGPIPE, &pipe) ||
           ends_dies("abort", 0, SIGABRT, &ab) ||
           ends_dies("exec", 1, 11, &ex) || ends_dies("kill", 0, SIGKILL, &kill);
}

/* python3 ends.py (the driver through ctypes): sys.exit(4) runs the interpreter's finalization
 * then exit(4); os._exit(6) calls the C library's _exit through its dynamic symbol; an uncaught
 * KeyboardInterrupt (Ctrl-C) finalizes, then dies of SIGINT through no handler of the tracer's
 * (status -2: that signal). */
TEST_IMPL(ends_python)
{
    static const struct { const char *how; int status; ends_want w; } cases[] = {
        {"sys.exit", 4, {CT_END_EXIT, 4, "exit status 4", "exit", 0, 1}},
        {"os._exit", 6, {CT_END_EXIT_NOW, 6,
                         "_exit status 6 (exit handlers and destructors did not run)", "_exit", 0,
                         1}},
        {"KeyboardInterrupt", -SIGINT, {CT_END_SIGNAL, SIGINT, "killed by signal 2 (SIGINT)",
                                        "signal", 0, 1}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int mode = ENDS_RUN; mode <= ENDS_PRELOAD; mode++) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/py%zu-%d", ctt_tmpdir(), i, mode);
            char *cmd[] = {"python3", TR_ENDS_PY, (char *)cases[i].how, NULL};
            ctt_proc p;
            ASSERT_INT(ends_run(&p, dir, cmd, mode), ==, 0);
            printf("ends.py %s (%s): %s %d\n", cases[i].how, mode ? "LD_PRELOAD" : "cutrace run",
                   p.exited ? "exit status" : "signal", p.code);
            if (cases[i].status < 0) {
                ASSERT(!p.exited);
                ASSERT_INT(p.code, ==, -cases[i].status);
            } else {
                TR_ASSERT_EXIT(p, cases[i].status);
            }
            ASSERT_STR(p.out, "ends.py: cuda ok\n");
            if (ends_check(dir, &cases[i].w))
                return 1;
            ctt_proc_free(&p);
        }
    return 0;
}

/* _exit where only async-signal-safe code may run, and where nothing may be written: a fork
 * child that never used CUDA and a vfork child (sharing the parent's memory) leave by _exit
 * without touching the parent's trace, which goes on to its END; a signal handler's _exit ends
 * the trace. */
TEST_IMPL(ends_immediate_exit_in_children_and_handlers)
{
    char prog[4096], dir[4096];
    snprintf(dir, sizeof dir, "%s/children", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "children", NULL};
    ctt_proc p;
    ASSERT_INT(ends_run(&p, dir, cmd, ENDS_PRELOAD), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_STR(p.out, "probe: mode=children fork=3 vfork=127\n");
    const ends_want parent = {CT_END_EXIT, 0, "exit status 0", "exit", 0, 20};
    if (ends_check(dir, &parent))
        return 1;
    ctt_proc_free(&p);
    snprintf(dir, sizeof dir, "%s/sigexit", ctt_tmpdir());
    char *cmd2[] = {prog, "sigexit", NULL};
    ASSERT_INT(ends_run(&p, dir, cmd2, ENDS_RUN), ==, 0);
    TR_ASSERT_EXIT(p, 9);
    const ends_want handler = {CT_END_EXIT_NOW, 9,
                               "_exit status 9 (exit handlers and destructors did not run)",
                               "_exit", 0, 10};
    if (ends_check(dir, &handler))
        return 1;
    ctt_proc_free(&p);
    return 0;
}

/* exit(12) from a thread other than main, main blocked in pthread_join: the status is 12 and
 * both threads' calls are in the trace. */
TEST_IMPL(ends_exit_from_another_thread)
{
    char prog[4096], dir[4096];
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "threadexit", NULL};
    const ends_want w = {CT_END_EXIT, 12, "exit status 12", "exit", 0, 20};
    for (int mode = ENDS_RUN; mode <= ENDS_PRELOAD; mode++) {
        snprintf(dir, sizeof dir, "%s/threadexit%d", ctt_tmpdir(), mode);
        ctt_proc p;
        ASSERT_INT(ends_run(&p, dir, cmd, mode), ==, 0);
        TR_ASSERT_EXIT(p, 12);
        if (ends_check(dir, &w))
            return 1;
        ctt_proc_free(&p);
    }
    return 0;
}
