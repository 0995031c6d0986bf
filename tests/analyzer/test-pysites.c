/* py_sites (tests/workloads/py_sites.py): a Python training loop calling the driver through ctypes
 * (issue 14). The pageable copy and the per-step synchronization must be reported at the exact
 * file:line of the user's code, read from the script's `# cutrace: <what>` markers. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "an_helpers.h"
#include "tr_confine.h"

/* The line of the script whose comment is "# cutrace: <what>", 0 if none. */
static int marker_line(const char *what)
{
    char path[4096];
    return an_marker_line(ctt_path(path, "tests/workloads/py_sites"), what);
}

/* The CPythons of the machine whose frames the tracer reads (3.8 to 3.13): the system's, the
 * PyTorch virtual environment's and pyenv's; the ones not installed are left out. Before 3.11 a
 * code object has no qualified name: a frame is named by its function's plain name. */
static const struct {
    const char *path;
    int qualname;
} interpreters[] = {
    {"/usr/bin/python3.11", 1},
    {"~/.cache/cutrace/venv/bin/python3", 1},
    {"/root/.pyenv/versions/3.8.18/bin/python3.8", 0},
    {"/root/.pyenv/versions/3.9.18/bin/python3.9", 0},
    {"/root/.pyenv/versions/3.10.13/bin/python3.10", 0},
    {"/root/.pyenv/versions/3.11.7/bin/python3.11", 1},
    {"/root/.pyenv/versions/3.12.1/bin/python3.12", 1},
    {"/root/.pyenv/versions/3.13.0/bin/python3.13", 1},
};
/* Whether the interpreter every_python_check runs now names frames by qualified name. */
static int qualnames = 1;

/* Every diagnosis `id` of the summary (one per traced process) has one site, the marked line,
 * with the 10 calls of the loop. */
static int site_at_marker(const tj *s, const char *id, const char *marker, int procs)
{
    char want[128];
    int line = marker_line(marker);
    ASSERT_INT(line, >, 0);
    snprintf(want, sizeof want, "py_sites:%d in train_step", line);
    const tj *all = tj_get(s, "diagnoses");
    if (an_diag_count(s, id) != procs) {
        /* what was found instead, for a run that cannot be repeated (beside CPU hogs) */
        for (size_t i = 0; all && i < all->n; i++)
            fprintf(stderr, "found %s: %s\n", tj_str(all->v[i], "id"),
                    tj_str(all->v[i], "message"));
        ASSERT_INT(an_diag_count(s, id), ==, procs);
    }
    for (size_t i = 0; i < all->n; i++) {
        const tj *d = all->v[i];
        if (strcmp(tj_str(d, "id"), id) != 0)
            continue;
        ASSERT_STR(tj_str(d, "sites.0.stack"), want);
        ASSERT_INT(tj_num(d, "sites.0.count"), ==, 10);
        ASSERT(!tj_path(d, "sites.1"));
    }
    return 0;
}

/* The STACKs of one trace file that have Python frames, one line each: those frames as
 * "function:line", innermost first, separated by spaces, whatever native frames lie between
 * them; read from `cutrace dump`. NULL if it cannot be dumped. The calls' stacks: thread samples'
 * (where a thread was, FORMAT.md 4.12) are left out. */
static char *python_stacks(const char *file)
{
    ctt_proc p;
    if (an_run(&p, "dump {}", file) != 0)
        return NULL;
    static char names[4096][80]; /* Python frame id -> "function:line", "" for a native frame */
    static unsigned char sampled[1 << 16];
    memset(names, 0, sizeof names);
    an_sampled_stacks(p.out, sampled, sizeof sampled);
    size_t cap = 1 << 16, len = 0;
    char *text = calloc(1, cap);
    for (char *line = strtok(p.out, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned id, no;
        char fn[64];
        const char *f = strstr(line, " frame "), *st = strstr(line, " stack "), *l = strstr(line, " line=");
        if (f && strstr(line, " kind=1 ") && l && sscanf(l, " line=%u", &no) == 1 &&
            sscanf(strstr(f, " id="), " id=%u function=\"%63[^\"]", &id, fn) == 2 && id < 4096)
            snprintf(names[id], sizeof names[id], "%s:%u", fn, no);
        unsigned sid;
        if (!st || !strstr(st, " frames=") || (sscanf(strstr(st, " id="), " id=%u", &sid) == 1 &&
                                               sid < sizeof sampled && sampled[sid]))
            continue;
        char seq[2048] = "";
        for (char *q = strstr(st, " frames=") + 8; *q;) {
            unsigned fid = (unsigned)strtoul(q, &q, 10);
            if (fid < 4096 && names[fid][0] && strlen(seq) + strlen(names[fid]) + 2 < sizeof seq)
                strcat(strcat(seq, *seq ? " " : ""), names[fid]);
            if (*q != ',')
                break;
            q++;
        }
        if (!*seq)
            continue;
        if (len + strlen(seq) + 2 > cap)
            text = realloc(text, cap *= 2);
        len += (size_t)sprintf(text + len, "%s\n", seq);
    }
    ctt_proc_free(&p);
    return text;
}

/* Whether a line of python_stacks is want: exactly, or when want ends with '*' beginning with
 * what precedes it. */
static int stack_matches(const char *line, size_t n, const char *want)
{
    size_t w = strlen(want);
    if (w && want[w - 1] == '*')
        return n >= w - 1 && !strncmp(line, want, w - 1);
    return n == w && !strncmp(line, want, n);
}

/* The Python stacks of a trace file are exactly the patterns of want (NULL-terminated; see
 * stack_matches): each is seen, and no stack matches none (a frame left over from a function
 * that returned or unwound would). Returns 0, or 1 after saying what differs. */
static int python_stacks_are(const char *file, const char *const want[])
{
    char *text = python_stacks(file);
    ASSERT(text);
    int bad = 0;
    for (const char *l = text; *l; l = strchr(l, '\n') + 1) {
        size_t n = strcspn(l, "\n");
        int known = 0;
        for (int i = 0; want[i] && !known; i++)
            known = stack_matches(l, n, want[i]);
        if (!known) {
            fprintf(stderr, "%s: unexpected Python stack: %.*s\n", file, (int)n, l);
            bad = 1;
        }
    }
    for (int i = 0; want[i]; i++) {
        int seen = 0;
        for (const char *l = text; *l && !seen; l = strchr(l, '\n') + 1)
            seen = stack_matches(l, strcspn(l, "\n"), want[i]);
        if (!seen) {
            fprintf(stderr, "%s: expected a Python stack %s, found:\n%s", file, want[i], text);
            bad = 1;
        }
    }
    free(text);
    return bad;
}

/* The trace files (*.cutrace) of dir, up to max; their number. */
static int trace_files(const char *dir, char files[][4096], int max)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 8 && !strcmp(e->d_name + len - 8, ".cutrace") && n < max &&
            snprintf(files[n], 4096, "%s/%s", dir, e->d_name) < 4096)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

/* "function:line" of a marked line, in static storage (one of 8 in turn), for building the
 * expected stacks. */
static const char *at(const char *function, const char *marker)
{
    static char buf[8][128];
    static int next;
    char *b = buf[next++ % 8];
    const char *dot = qualnames ? NULL : strrchr(function, '.'); /* co_name: the last part */
    snprintf(b, sizeof buf[0], "%s:%d", dot ? dot + 1 : function, marker_line(marker));
    return b;
}

/* The Python stacks of train's calls (its allocation, its steps' copy and synchronization, its
 * free) when train's callers are outer (as python_stacks gives them; may end with '*'), written
 * in b, pointed at by want (NULL-terminated). */
static const char *const *train_stacks(char b[4][1024], const char *outer, const char *want[5])
{
    snprintf(b[0], 1024, "%s %s", at("train", "alloc"), outer);
    snprintf(b[1], 1024, "%s %s %s", at("train_step", "pageable-copy"), at("train", "step"), outer);
    snprintf(b[2], 1024, "%s %s %s", at("train_step", "step-sync"), at("train", "step"), outer);
    snprintf(b[3], 1024, "%s %s", at("train", "free"), outer);
    for (int i = 0; i < 4; i++)
        want[i] = b[i];
    want[4] = NULL;
    return want;
}

/* Traces py_sites under one interpreter and checks both diagnoses name the marked lines. */
static int python_sites(const char *python, int n, const char *extra)
{
    char dir[4096], script[4096], args[8300], name[32], *out;
    int procs = strstr(extra, "--fork") ? 2 : 1;
    snprintf(name, sizeof name, "pysites-%d", n);
    /* 8 MiB copies: each step's gap after its synchronization is excessive-sync's while the
     * host spends at least half of it in CUDA (the next copy's staging), and its Python between
     * the calls, about as long as a 1 MiB copy's staging, made it a data-loading gap whenever
     * the host was slowed or descheduled there (beside CPU-bound processes) */
    snprintf(args, sizeof args, "%s %s --steps 10 --mib 8%s", python,
             ctt_path(script, "tests/workloads/py_sites"), extra);
    ASSERT(an_trace_workload(dir, name, args, NULL, &out));
    ASSERT_CONTAINS(out, "py_sites: steps=10");
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(site_at_marker(s, "pageable-memcpy", "pageable-copy", procs), ==, 0);
    ASSERT_INT(site_at_marker(s, "excessive-sync", "step-sync", procs), ==, 0);
    if (strstr(extra, "--callback")) {
        /* the callback's frame after the allocating one (up to 3.10 each Python frame has its
         * own evaluation loop, so native frames lie between them) */
        char want[160];
        const char *text = tj_str(s, "vram.0.peak_holders.0.stack");
        snprintf(want, sizeof want, "train (py_sites:%d) <- ", marker_line("alloc"));
        ASSERT_CONTAINS(text, want);
        text = strstr(text, want);
        snprintf(want, sizeof want, "<- %s (py_sites:%d) <- ",
                 qualnames ? "main.<locals>.compare" : "compare", marker_line("callback"));
        ASSERT_CONTAINS(text, want);
        char outer[512], files[2][4096], b[4][1024];
        const char *tw[5];
        snprintf(outer, sizeof outer, "%s %s %s", at("main.<locals>.compare", "callback"),
                 at("main", "qsort"), at("<module>", "module"));
        ASSERT_INT(trace_files(dir, files, 2), ==, 1);
        ASSERT_INT(python_stacks_are(files[0], train_stacks(b, outer, tw)), ==, 0);
    }
    tj_free(s);
    return 0;
}

/* Runs check under every interpreter installed: 0, or 1 after the first that failed; *verified
 * counts those that passed. */
static int each_python(int (*check)(const char *python, int n), int *verified)
{
    for (size_t i = 0; i < sizeof interpreters / sizeof interpreters[0]; i++) {
        char path[4096];
        const char *home = getenv("HOME");
        const char *want = interpreters[i].path;
        if (want[0] == '~')
            snprintf(path, sizeof path, "%s%s", home ? home : "", want + 1);
        else
            snprintf(path, sizeof path, "%s", want);
        if (access(path, X_OK) != 0)
            continue;
        qualnames = interpreters[i].qualname;
        int wrong = check(path, (int)i);
        qualnames = 1;
        if (wrong) {
            fprintf(stderr, "python call sites: wrong under %s\n", path);
            return 1;
        }
        fprintf(stderr, "python call sites: verified under %s\n", path);
        (*verified)++;
    }
    return 0;
}

/* Runs check under every interpreter installed; skips when there is none. With favour, in a
 * cgroup favoured over other work on the machine (tr_confine.h), where one can be made, and with
 * the machine alone (listed TEST_ALONE): the diagnoses whose sites the checks read are drawn
 * from the program's timing (a gap after a synchronization is excessive-sync's only while the
 * host is not mostly away from CUDA in it: beside CPU-bound processes a descheduled host made
 * it a data-loading gap, and excessive-sync went missing). A check of stacks alone needs
 * neither. */
static int every_python_check(int (*check)(const char *python, int n), int favour)
{
    tr_cgroup g;
    if (favour)
        tr_cgroup_favour(&g);
    int verified = 0;
    int rc = each_python(check, &verified);
    if (favour)
        tr_cgroup_leave(&g);
    if (!rc && !verified)
        ctt_skip("no CPython 3.8 to 3.13 is installed");
    return rc;
}

static const char *sites_extra; /* python_sites's mode for every_python */

static int python_sites_mode(const char *python, int n)
{
    return python_sites(python, n, sites_extra);
}

static int every_python(const char *extra)
{
    sites_extra = extra;
    return every_python_check(python_sites_mode, 1);
}

TEST_IMPL(python_call_sites_main_thread)
{
    return every_python("");
}

TEST_IMPL(python_call_sites_in_a_thread)
{
    return every_python(" --thread");
}

TEST_IMPL(python_call_sites_across_fork)
{
    return every_python(" --fork");
}

/* A CPython whose frames the tracer cannot read (before 3.8) is reported once, and its call
 * sites stay native: never a guessed Python line. */
TEST_IMPL(python_unknown_version_reported_once)
{
    static const char *const old[] = {
        "/root/.pyenv/versions/3.7.16/bin/python3.7",
        "/root/.pyenv/versions/3.6.15/bin/python3.6",
    };
    int tried = 0;
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
        if (access(old[i], X_OK) != 0)
            continue;
        char dir[4096], script[4096], args[8300], name[32], *out, *err;
        snprintf(name, sizeof name, "pyold-%zu", i);
        snprintf(args, sizeof args, "%s %s --steps 10 --thread", old[i],
                 ctt_path(script, "tests/workloads/py_sites"));
        ASSERT(an_trace_workload_err(dir, name, args, NULL, &out, &err));
        free(out);
        const char *w = strstr(err, "cutrace cannot read its frames");
        ASSERT(w);
        ASSERT(!strstr(w + 1, "cutrace cannot read its frames"));
        free(err);
        tj *s = an_summary(dir, NULL);
        ASSERT(s);
        const tj *d = an_diag(s, "pageable-memcpy");
        ASSERT(d);
        ASSERT(!strstr(tj_str(d, "sites.0.stack"), "py_sites"));
        ASSERT_CONTAINS(tj_str(d, "sites.0.stack"), "ffi_call");
        tj_free(s);
        tried++;
    }
    if (!tried)
        ctt_skip("no CPython older than 3.8 is installed");
    return 0;
}

TEST_IMPL(python_call_sites_through_a_c_callback)
{
    return every_python(" --callback");
}

/* Runs py_sites with args under python untraced, then traced into dir: both must end the same
 * way (exit status, stdout, stderr). p gets the traced run. Returns 0, or 1 after a message. */
static int same_traced(ctt_proc *p, char dir[4096], const char *python, int n, const char *args)
{
    char script[4096], cmd[8300], name[32], unused[4096];
    ctt_proc plain;
    static int runs; /* a fresh directory for each run */
    snprintf(name, sizeof name, "pysites-%d-%d", n, runs++);
    snprintf(cmd, sizeof cmd, "%s %s --steps 10%s", python, ctt_path(script, "tests/workloads/py_sites"), args);
    ASSERT_INT(an_run_workload(&plain, unused, name, cmd, NULL, 0), ==, 0);
    ASSERT_INT(an_run_workload(p, dir, name, cmd, NULL, 1), ==, 0);
    ASSERT_INT(p->exited, ==, plain.exited);
    ASSERT_INT(p->code, ==, plain.code);
    ASSERT_STR(p->out, plain.out);
    ASSERT_STR(p->err, plain.err);
    ctt_proc_free(&plain);
    return 0;
}

/* The outer frames of train's calls from main: "main:L <module>:L". */
static const char *from_main(char buf[256])
{
    snprintf(buf, 256, "%s %s", at("main", "train"), at("<module>", "module"));
    return buf;
}

/* The sites of excessive-sync are checked by python_sites alone: which gaps the analyzer puts
 * after the synchronizations depends on the machine's load (a loaded host ends the copies
 * before the tracer times them, and the gaps then count as before batch copies), so here the
 * step-sync calls are checked in the stacks, not in that diagnosis. */

/* --exception: a frame unwound by an exception, in Python or through qsort's C frames from a
 * callback, leaves nothing behind: every later stack is as before it, the calls made in the
 * `try:`, the `finally:`, the handler and the callback each name their own line, the diagnoses keep their one site, and the uncaught exception at the end exits 1 with
 * the same traceback traced and untraced. */
static int exception_sites(const char *python, int n)
{
    ctt_proc p;
    char dir[4096], files[2][4096], outer[256], b[4][1024], e[4][1024];
    ASSERT_INT(same_traced(&p, dir, python, n, " --exception"), ==, 0);
    ASSERT(p.exited && p.code == 1);
    ASSERT_CONTAINS(p.out, "py_sites: steps=10\n");
    ASSERT_CONTAINS(p.err, "py_sites: the callback raised StepFailed\n");
    ASSERT_CONTAINS(p.err, "StepFailed: py_sites: the last step failed\n");
    ctt_proc_free(&p);
    ASSERT_INT(trace_files(dir, files, 2), ==, 1);
    from_main(outer);
    const char *tw[5], *const *t = train_stacks(b, outer, tw);
    snprintf(e[0], sizeof e[0], "%s %s %s", at("failing_step", "in-try"), at("train", "fail"), outer);
    snprintf(e[1], sizeof e[1], "%s %s %s", at("failing_step", "in-finally"), at("train", "fail"), outer);
    snprintf(e[2], sizeof e[2], "%s %s", at("train", "in-except"), outer);
    snprintf(e[3], sizeof e[3], "%s %s %s %s", at("sort_raising.<locals>.compare", "in-callback"),
             at("sort_raising", "raising-qsort"), at("train", "sort"), outer);
    const char *want[] = {t[0], t[1], t[2], t[3], e[0], e[1], e[2], e[3], NULL};
    ASSERT_INT(python_stacks_are(files[0], want), ==, 0);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(site_at_marker(s, "pageable-memcpy", "pageable-copy", 1), ==, 0);
    tj_free(s);
    return 0;
}

/* --atexit: the calls of an atexit handler, made while the interpreter finalizes, name the
 * handler's lines (it is the only Python frame: the interpreter calls it from C). */
static int atexit_sites(const char *python, int n)
{
    ctt_proc p;
    char dir[4096], files[2][4096], outer[256], b[4][1024], e[2][128];
    ASSERT_INT(same_traced(&p, dir, python, n, " --atexit"), ==, 0);
    ASSERT(p.exited && p.code == 0);
    ASSERT_STR(p.out, "py_sites: steps=10\npy_sites: at exit\n");
    ctt_proc_free(&p);
    ASSERT_INT(trace_files(dir, files, 2), ==, 1);
    const char *tw[5], *const *t = train_stacks(b, from_main(outer), tw);
    snprintf(e[0], sizeof e[0], "%s", at("at_exit", "atexit-alloc"));
    snprintf(e[1], sizeof e[1], "%s", at("at_exit", "atexit-free"));
    const char *want[] = {t[0], t[1], t[2], t[3], e[0], e[1], NULL};
    ASSERT_INT(python_stacks_are(files[0], want), ==, 0);
    return 0;
}

/* --daemon, 20 times: a daemon thread still calling CUDA while the interpreter finalizes
 * neither crashes nor hangs the process (the runs end as the untraced one did), and its calls
 * name its line under threading's frames. On a loaded machine 20 runs under each of the 8
 * interpreters outlast the runner's time limit (the sanitizer build: 120 s, 5 interpreters
 * done), so an interpreter's runs stop once they have had their share of half the limit,
 * after DAEMON_MIN_RUNS at least (how many were made is printed). The sanitizer build
 * (analyzer-asan) is there for the analyzer's memory, which a few traces exercise as well as 20:
 * the race is hunted in the plain suite, and the sanitizer build's 20 runs took 33 s. */
#ifdef __SANITIZE_ADDRESS__
#define DAEMON_RUNS DAEMON_MIN_RUNS
#else
#define DAEMON_RUNS 20
#endif
#define DAEMON_MIN_RUNS 3
static int daemon_sites(const char *python, int n)
{
    const char *limit = getenv("CT_TEST_TIMEOUT"); /* tests/harness/runner.c's, 120 s unless set */
    double share = (limit ? atof(limit) : 120) / 2 / (sizeof interpreters / sizeof interpreters[0]);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int run = 0; run < DAEMON_RUNS; run++) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        double spent = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        if (run >= DAEMON_MIN_RUNS && spent > share) {
            fprintf(stderr, "%s: %d runs of --daemon in its %.1f s\n", python, run, share);
            break;
        }
        ctt_proc p;
        char dir[4096], files[2][4096], outer[256], b[4][1024], d[128];
        ASSERT_INT(same_traced(&p, dir, python, n, " --daemon"), ==, 0);
        ASSERT(p.exited && p.code == 0);
        ASSERT_STR(p.out, "py_sites: steps=10\n");
        ctt_proc_free(&p);
        ASSERT_INT(trace_files(dir, files, 2), ==, 1);
        const char *tw[5], *const *t = train_stacks(b, from_main(outer), tw);
        snprintf(d, sizeof d, "%s %s:*", at("daemon_loop", "daemon-sync"), qualnames ? "Thread.run" : "run");
        const char *want[] = {t[0], t[1], t[2], t[3], d, NULL};
        ASSERT_INT(python_stacks_are(files[0], want), ==, 0);
    }
    return 0;
}

/* --pool: two workers forked by multiprocessing (the 'fork' start method, before the parent
 * used CUDA) and the parent each write their own trace, whose stacks are their own: the
 * workers' under pool_worker (then multiprocessing's frames and the parent's at the fork), the
 * parent's under main. */
static int pool_sites(const char *python, int n)
{
    ctt_proc p;
    char dir[4096], files[4][4096], outer[256], b[4][1024], wb[4][1024], wouter[128];
    ASSERT_INT(same_traced(&p, dir, python, n, " --pool"), ==, 0);
    ASSERT(p.exited && p.code == 0);
    ASSERT_STR(p.out, "py_sites: pool workers=2\npy_sites: steps=10\n");
    ctt_proc_free(&p);
    ASSERT_INT(trace_files(dir, files, 4), ==, 3);
    const char *pw[5], *const *parent = train_stacks(b, from_main(outer), pw);
    snprintf(wouter, sizeof wouter, "%s *", at("pool_worker", "pool-train"));
    const char *ww[5], *const *worker = train_stacks(wb, wouter, ww);
    int parents = 0, workers = 0;
    for (int i = 0; i < 3; i++) {
        char *text = python_stacks(files[i]);
        ASSERT(text);
        int is_worker = strstr(text, " pool_worker:") != NULL;
        free(text);
        ASSERT_INT(python_stacks_are(files[i], is_worker ? worker : parent), ==, 0);
        workers += is_worker;
        parents += !is_worker;
    }
    ASSERT_INT(workers, ==, 2);
    ASSERT_INT(parents, ==, 1);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(site_at_marker(s, "pageable-memcpy", "pageable-copy", 3), ==, 0);
    tj_free(s);
    return 0;
}

TEST_IMPL(python_call_sites_exception_through_a_frame)
{
    return every_python_check(exception_sites, 1);
}

TEST_IMPL(python_call_sites_at_exit)
{
    return every_python_check(atexit_sites, 0);
}

TEST_IMPL(python_daemon_thread_at_exit)
{
    return every_python_check(daemon_sites, 0);
}

TEST_IMPL(python_call_sites_in_forked_pool)
{
    return every_python_check(pool_sites, 1);
}

/* The user's script in a directory whose path has "lib/python3" in it (a project's
 * lib/python3_tools/): it is the user's, not the standard library, since it is not under the lib
 * directory of the interpreter's prefixes recorded in the trace (PYTHON record). */
TEST_IMPL(python_user_code_under_a_lib_python3_directory)
{
    char dir[4096], src[4096], copy[4200], args[8400], *out;
    snprintf(copy, sizeof copy, "%s/proj/lib/python3_tools", ctt_tmpdir());
    char *mk[] = {"mkdir", "-p", copy, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, mk, NULL, 10), ==, 0);
    ctt_proc_free(&p);
    strcat(copy, "/py_sites");
    char *cp[] = {"cp", (char *)ctt_path(src, "tests/workloads/py_sites"), copy, NULL};
    ASSERT_INT(ctt_run(&p, cp, NULL, 10), ==, 0);
    ctt_proc_free(&p);
    if (access("/usr/bin/python3.11", X_OK) != 0)
        ctt_skip("/usr/bin/python3.11 is not installed");
    snprintf(args, sizeof args, "/usr/bin/python3.11 %s --steps 10", copy);
    ASSERT(an_trace_workload(dir, "pylib", args, NULL, &out));
    ASSERT_CONTAINS(out, "py_sites: steps=10");
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(site_at_marker(s, "pageable-memcpy", "pageable-copy", 1), ==, 0);
    tj_free(s);
    return 0;
}

/* --runtime: the loop through the CUDA runtime (here the simulated libcudart.so.13) by ctypes:
 * the pageable-copy diagnosis names the copy's line, and every Python stack of the trace is one
 * of the runtime loop's marked lines (the driver calls the runtime makes inside them carry the
 * same Python frames). */
static int runtime_sites(const char *python, int n)
{
    ctt_proc p;
    char dir[4096], files[2][4096], outer[256], b[4][1024], want[128];
    ASSERT_INT(same_traced(&p, dir, python, n, " --runtime"), ==, 0);
    ASSERT(p.exited && p.code == 0);
    ASSERT_STR(p.out, "py_sites: steps=10\n");
    ctt_proc_free(&p);
    ASSERT_INT(trace_files(dir, files, 2), ==, 1);
    snprintf(outer, sizeof outer, "%s %s", at("main", "rt-main"), at("<module>", "module"));
    snprintf(b[0], sizeof b[0], "%s %s", at("runtime_train", "rt-alloc"), outer);
    snprintf(b[1], sizeof b[1], "%s %s %s", at("runtime_step", "rt-copy"), at("runtime_train", "rt-step"), outer);
    snprintf(b[2], sizeof b[2], "%s %s %s", at("runtime_step", "rt-sync"), at("runtime_train", "rt-step"), outer);
    snprintf(b[3], sizeof b[3], "%s %s", at("runtime_train", "rt-free"), outer);
    const char *stacks[] = {b[0], b[1], b[2], b[3], NULL};
    ASSERT_INT(python_stacks_are(files[0], stacks), ==, 0);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *d = an_diag(s, "pageable-memcpy");
    ASSERT(d);
    snprintf(want, sizeof want, "py_sites:%d in runtime_step", marker_line("rt-copy"));
    ASSERT_STR(tj_str(d, "sites.0.stack"), want);
    ASSERT_STR(tj_str(d, "sites.0.call"), "cudaMemcpy");
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 10);
    tj_free(s);
    return 0;
}

TEST_IMPL(python_call_sites_through_the_runtime)
{
    return every_python_check(runtime_sites, 1);
}
