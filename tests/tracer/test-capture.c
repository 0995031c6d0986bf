/* Capture windows (cutrace run --capture-range, --delay, --duration; the CUTRACE_* variables of
 * bare LD_PRELOAD use), checked against what tests/workloads/capture_steps does: which kernels
 * it launches in each phase (distinct names), when it opened and closed each window (its own
 * CLOCK_MONOTONIC readings around the calls), the memory it allocated before the first window.
 * The program's output and exit status are those of an untraced run; the summary counts the
 * windows only but VRAM throughout. */
#include "an_helpers.h"
#include "tr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CAP_EARLY 1073745145ull   /* capture_steps: allocated at t=0, live to the end */
#define CAP_SCRATCH 268435459ull  /* allocated and freed in window 1 */
#define CAP_WIN1 "win1_kernel(int*)"
#define CAP_WIN2 "win2_kernel(int*)"
#define CAP_OUT "outside_kernel(int*)"
/* Each kernel runs 2 ms on the simulated GPU, so the breakdown has busy and idle time. */
#define CAP_KERNEL_NS "FAKECUDA_KERNEL_NS=kernel=2000000"
/* How far a recorded time may be from the program's own reading around the same call (the
 * tracer's tick conversion, ctp_clock.c). */
#define CAP_CLOCK_TOL 1000
/* How far a --delay or --duration may end from its time: libcutrace loads a few ms before main
 * begins, and the writer thread, which ends them, wakes on time but may be scheduled late on a
 * loaded machine. The phases around are 100 ms away. */
#define CAP_SLACK 30e6

typedef struct {
    tr_trace t;
    unsigned long long start, open[2], close[2]; /* the program's start and window times */
    char dir[4096];
} cap_run;

/* capture_steps --window WINDOW, traced with the cutrace run options opts (or, bare, with env
 * alone through LD_PRELOAD), into a fresh directory; its output and exit status must be an
 * untraced run's. */
static int cap_trace(cap_run *c, const char *name, const char *window, char *const opts[],
                     char *const env[], int bare)
{
    char prog[4096], times[4096], fake[4096], llp[4200];
    snprintf(c->dir, sizeof c->dir, "%s/%s", ctt_tmpdir(), name);
    snprintf(times, sizeof times, "%s/%s.times", ctt_tmpdir(), name);
    char *cmd[] = {(char *)tr_workload(prog, "capture_steps"), "--window", (char *)window,
                   "--times", times, NULL};
    char *envs[8] = {CAP_KERNEL_NS};
    int n = 1;
    for (int i = 0; env && env[i] && n < 7; i++)
        envs[n++] = env[i];
    ctt_proc plain, p;
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *plain_env[] = {llp, CAP_KERNEL_NS, NULL};
    ASSERT_INT(ctt_run(&plain, cmd, plain_env, 60), ==, 0);
    ASSERT_INT(bare ? tr_run_preloaded(&p, c->dir, cmd, envs, 60) : tr_run(&p, c->dir, opts, cmd, envs, 60),
               ==, 0);
    TR_ASSERT_EXIT(plain, 0);
    TR_ASSERT_EXIT(p, plain.code);
    ASSERT_STR(p.out, plain.out);
    ctt_proc_free(&plain);
    ctt_proc_free(&p);
    char *text = ctt_read_file(times, NULL);
    ASSERT(text != NULL);
    ASSERT_INT(sscanf(text, "%llu %llu %llu %llu %llu", &c->start, &c->open[0], &c->close[0],
                      &c->open[1], &c->close[1]), ==, 5);
    free(text);
    ASSERT_INT(tr_load(&c->t, c->dir), ==, 0);
    ASSERT_UINT(c->t.nfiles, ==, 1);
    return 0;
}

/* The kernels the trace holds are exactly those launched in the recorded phases. */
static int cap_kernels(const cap_run *c, size_t win1, size_t win2, size_t outside)
{
    ASSERT_UINT(tr_count(&c->t, CT_REC_LAUNCH, CAP_WIN1), ==, win1);
    ASSERT_UINT(tr_count(&c->t, CT_REC_LAUNCH, CAP_WIN2), ==, win2);
    ASSERT_UINT(tr_count(&c->t, CT_REC_LAUNCH, CAP_OUT), ==, outside);
    ASSERT_UINT(tr_count(&c->t, CT_REC_LAUNCH, NULL), ==, win1 + win2 + outside);
    return 0;
}

/* The trace's nth CAPTURE record in time order, or NULL. */
static const ct_rec *cap_nth(const cap_run *c, size_t nth)
{
    for (size_t i = 0; i < c->t.n; i++)
        if (c->t.v[i].r.type == CT_REC_CAPTURE && nth-- == 0)
            return &c->t.v[i].r;
    return NULL;
}

/* The CAPTURE records, in time order: the trace's first says it is windowed (why 6, recording
 * off), then a start and a stop per window of the program's, each inside the program's reading
 * around the call, with reason why. */
static int cap_windows(const cap_run *c, unsigned why)
{
    const ct_rec *v[8];
    size_t n = 0;
    for (size_t i = 0; i < c->t.n && n < 8; i++)
        if (c->t.v[i].r.type == CT_REC_CAPTURE)
            v[n++] = &c->t.v[i].r;
    ASSERT_UINT(n, ==, 5);
    ASSERT_UINT(v[0]->u.capture.why, ==, CT_CAPTURE_BEGIN);
    ASSERT_UINT(v[0]->u.capture.op, ==, CT_CAPTURE_STOP);
    for (int w = 0; w < 2; w++) {
        const ct_rec *a = v[1 + 2 * w], *b = v[2 + 2 * w];
        ASSERT_UINT(a->u.capture.op, ==, CT_CAPTURE_START);
        ASSERT_UINT(b->u.capture.op, ==, CT_CAPTURE_STOP);
        ASSERT_UINT(a->u.capture.why, ==, why);
        ASSERT_UINT(b->u.capture.why, ==, why);
        ASSERT_UINT(a->ts + CAP_CLOCK_TOL, >=, c->open[w]);
        ASSERT_UINT(b->ts, <=, c->close[w] + CAP_CLOCK_TOL);
        ASSERT_UINT(a->ts, <, b->ts);
    }
    return 0;
}

/* The summary: 2 windows totalling those of the CAPTURE records (each inside the program's
 * readings around its calls: cap_windows); VRAM's peak is early + scratch (early was allocated
 * before the first window); the breakdown's window is the windows' time between the device's
 * first and last GPU activity (from the GPU records), not the run. */
static int cap_summary(const cap_run *c)
{
    uint64_t first = UINT64_MAX, last = 0;
    for (size_t i = 0; i < c->t.n; i++) {
        const ct_rec *r = &c->t.v[i].r;
        if (r->type != CT_REC_GPU)
            continue;
        first = r->u.gpu.start < first ? r->u.gpu.start : first;
        last = r->ts > last ? r->ts : last;
    }
    ASSERT(last > first);
    uint64_t in = 0, windows_ns = 0;
    for (size_t w = 0; w < 2; w++) {
        uint64_t open = cap_nth(c, 1 + 2 * w)->ts, close = cap_nth(c, 2 + 2 * w)->ts;
        uint64_t a = open > first ? open : first, b = close < last ? close : last;
        in += b > a ? b - a : 0;
        windows_ns += close - open;
    }
    tj *s = an_summary(c->dir, NULL);
    ASSERT(s != NULL);
    ASSERT_NEAR(tj_num(s, "processes.0.capture.windows"), 2, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.capture.total_ns"), (double)windows_ns, 0);
    ASSERT_NEAR(tj_num(s, "vram.0.peak_bytes"), (double)(CAP_EARLY + CAP_SCRATCH), 0);
    ASSERT_NEAR(tj_num(s, "breakdown.0.window_ns"), (double)in, 0);
    ASSERT_NEAR(tj_num(s, "breakdown.0.gpu_busy_ns") + tj_num(s, "breakdown.0.gpu_idle_ns"),
                (double)in, 0);
    /* the 350 ms between the windows are in the run's span but not in the breakdown */
    ASSERT(tj_num(s, "breakdown.0.window_ns") < (double)(last - first) - 300e6);
    tj_free(s);
    return 0;
}

/* The timeline marks where recording started and stopped: as many lines as CAPTURE records,
 * each naming why. */
static int cap_timeline(const cap_run *c, const char *why)
{
    tj *tl = an_timeline(c->dir);
    ASSERT(tl != NULL);
    const tj *ev = tj_get(tl, "traceEvents");
    char starts[96], stops[96];
    snprintf(starts, sizeof starts, "recording starts: %s", why);
    snprintf(stops, sizeof stops, "recording stops: %s", why);
    int n[3] = {0, 0, 0}, all = 0;
    for (size_t i = 0; ev && i < ev->n; i++) {
        const char *cat = tj_str(ev->v[i], "cat"), *name = tj_str(ev->v[i], "name");
        if (!cat || strcmp(cat, "capture"))
            continue;
        all++;
        n[0] += !strcmp(name, starts);
        n[1] += !strcmp(name, stops);
        n[2] += !strcmp(name, "recording stops: the trace began");
    }
    tj_free(tl);
    ASSERT_INT(n[0], ==, 2);
    ASSERT_INT(n[1], ==, 2);
    ASSERT_INT(n[2], ==, 1);
    ASSERT_INT(all, ==, 5);
    return 0;
}

/* The early allocation, made before the first window, is in the trace (its MEM record). */
static int cap_early_alloc(const cap_run *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->t.n; i++) {
        const ct_rec *r = &c->t.v[i].r;
        n += r->type == CT_REC_MEM && r->u.mem.op == CT_MEM_ALLOC && r->u.mem.size == CAP_EARLY &&
             r->ts < c->open[0];
    }
    ASSERT_UINT(n, ==, 1);
    return 0;
}

TEST_IMPL(capture_profiler_api_two_windows)
{
    cap_run c;
    char *opts[] = {"--capture-range", "cudaProfilerApi", NULL};
    if (cap_trace(&c, "profiler", "profiler", opts, NULL, 0) || cap_kernels(&c, 4, 4, 0) ||
        cap_windows(&c, CT_CAPTURE_PROFILER) || cap_early_alloc(&c) ||
        cap_summary(&c) || cap_timeline(&c, "cudaProfilerStart/Stop"))
        return 1;
    /* no NVTX, CPU or synchronization outside: every SYNC is inside a window */
    for (size_t i = 0; i < c.t.n; i++) {
        const ct_rec *r = &c.t.v[i].r;
        if (r->type == CT_REC_SYNC)
            ASSERT((r->ts >= c.open[0] && r->ts <= c.close[0]) ||
                   (r->ts >= c.open[1] && r->ts <= c.close[1]));
    }
    tr_free(&c.t);
    return 0;
}

/* The outermost range "capture" decides (a nested one of the same name does not close the
 * window); push/pop and start/end both open one; another name does not. Ranges begun outside a
 * window and ended in one (a start/end, a push/pop) are not recorded, not even as unmatched. */
TEST_IMPL(capture_nvtx_range)
{
    cap_run c;
    char *opts[] = {"--capture-range", "nvtx:capture", NULL};
    if (cap_trace(&c, "nvtx", "nvtx", opts, NULL, 0) || cap_kernels(&c, 4, 4, 0) ||
        cap_windows(&c, CT_CAPTURE_NVTX) || cap_early_alloc(&c) ||
        cap_summary(&c))
        return 1;
    ASSERT_UINT(tr_count(&c.t, CT_REC_NVTX_RANGE, "capture"), ==, 3);
    ASSERT_UINT(tr_count(&c.t, CT_REC_NVTX_RANGE, "other"), ==, 0);
    ASSERT_UINT(tr_count(&c.t, CT_REC_NVTX_RANGE, NULL), ==, 3);
    for (size_t i = 0; i < c.t.n; i++)
        if (c.t.v[i].r.type == CT_REC_NVTX_RANGE)
            ASSERT_UINT(c.t.v[i].r.u.nvtx_range.flags & CT_NVTX_UNMATCHED, ==, 0);
    tr_free(&c.t);
    return 0;
}

/* nvtx:NAME@DOMAIN: only the domain's range opens a window, not the default domain's range of
 * the same name around the kernels between the windows. */
TEST_IMPL(capture_nvtx_domain)
{
    cap_run c;
    char *opts[] = {"--capture-range", "nvtx:capture@trainer", NULL};
    if (cap_trace(&c, "domain", "nvtx-domain", opts, NULL, 0) || cap_kernels(&c, 4, 4, 0) ||
        cap_windows(&c, CT_CAPTURE_NVTX) || cap_summary(&c))
        return 1;
    /* the domain's 3 (2 windows, 1 nested), not the default domain's outside; the marks made
     * in the windows, not the one between them */
    ASSERT_UINT(tr_count(&c.t, CT_REC_NVTX_RANGE, NULL), ==, 3);
    ASSERT_UINT(tr_count(&c.t, CT_REC_NVTX_MARK, "opened"), ==, 2);
    ASSERT_UINT(tr_count(&c.t, CT_REC_NVTX_MARK, NULL), ==, 2);
    tr_free(&c.t);
    return 0;
}

/* Bare LD_PRELOAD, CUTRACE_CAPTURE_RANGE: the same windows. */
TEST_IMPL(capture_variable_without_cutrace_run)
{
    cap_run c;
    char *env[] = {"CUTRACE_CAPTURE_RANGE=cudaProfilerApi", NULL};
    if (cap_trace(&c, "bare", "profiler", NULL, env, 1) || cap_kernels(&c, 4, 4, 0) ||
        cap_windows(&c, CT_CAPTURE_PROFILER))
        return 1;
    tr_free(&c.t);
    return 0;
}

/* The CAPTURE records of a run with one window: the trace's first (recording off), then a
 * start and a stop with reasons why_start and why_stop. */
static int cap_timed(const cap_run *c, unsigned why_start, unsigned why_stop)
{
    ASSERT(cap_nth(c, 2) != NULL && cap_nth(c, 3) == NULL);
    ASSERT_UINT(cap_nth(c, 0)->u.capture.why, ==, CT_CAPTURE_BEGIN);
    ASSERT_UINT(cap_nth(c, 1)->u.capture.op, ==, CT_CAPTURE_START);
    ASSERT_UINT(cap_nth(c, 1)->u.capture.why, ==, why_start);
    ASSERT_UINT(cap_nth(c, 2)->u.capture.op, ==, CT_CAPTURE_STOP);
    ASSERT_UINT(cap_nth(c, 2)->u.capture.why, ==, why_stop);
    return 0;
}

/* --delay 0.3 --duration 0.3: recording from 300 to 600 ms after the process started holds the
 * two kernels of t=400 and window 2's (t=450), nothing of t=0, 50 or 800. */
TEST_IMPL(capture_delay_and_duration)
{
    cap_run c;
    char *opts[] = {"--delay", "0.3", "--duration", "0.3", NULL};
    if (cap_trace(&c, "timed", "none", opts, NULL, 0) || cap_kernels(&c, 0, 4, 2) ||
        cap_early_alloc(&c))
        return 1;
    /* the delay counts from when libcutrace loaded, a few ms before main began; the duration
     * from the start (the writer wakes for both) */
    if (cap_timed(&c, CT_CAPTURE_DELAY, CT_CAPTURE_DURATION))
        return 1;
    const ct_rec *a = cap_nth(&c, 1), *b = cap_nth(&c, 2);
    ASSERT_NEAR((double)a->ts, (double)(c.start + 300000000), CAP_SLACK);
    ASSERT_NEAR((double)(b->ts - a->ts), 300000000.0, CAP_SLACK);
    tr_free(&c.t);
    return 0;
}

/* --delay 0.25 with cudaProfilerApi: window 1 (before the delay) is not recorded, window 2 is. */
TEST_IMPL(capture_delay_then_range)
{
    cap_run c;
    char *opts[] = {"--capture-range", "cudaProfilerApi", "--delay", "0.25", NULL};
    if (cap_trace(&c, "delayed", "profiler", opts, NULL, 0) || cap_kernels(&c, 0, 4, 0) ||
        cap_timed(&c, CT_CAPTURE_PROFILER, CT_CAPTURE_PROFILER))
        return 1;
    ASSERT_UINT(cap_nth(&c, 1)->ts + CAP_CLOCK_TOL, >=, c.open[1]);
    ASSERT_UINT(cap_nth(&c, 2)->ts, <=, c.close[1] + CAP_CLOCK_TOL);
    tr_free(&c.t);
    return 0;
}

/* Bad values: exit 2 naming the option, what was expected and what was found. */
TEST_IMPL(capture_bad_values)
{
    static const char *const bad[][3] = {
        {"--capture-range", "nvtx:", "--capture-range: expected cudaProfilerApi or nvtx:NAME[@DOMAIN], found 'nvtx:'"},
        {"--capture-range", "profiler", "found 'profiler'"},
        {"--capture-range", "nvtx:step@", "found 'nvtx:step@'"},
        {"--delay", "soon", "--delay: expected seconds (a number >= 0), found 'soon'"},
        {"--delay", "-1", "found '-1'"},
        {"--duration", "0", "--duration: expected seconds (a number > 0), found '0'"},
        {"--duration", "1s", "found '1s'"},
    };
    char cutrace[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[] = {(char *)ctt_path(cutrace, "bin/cutrace"), "run", (char *)bad[i][0],
                        (char *)bad[i][1], "--", "true", NULL};
        ctt_proc p;
        ASSERT_INT(ctt_run(&p, argv, NULL, 30), ==, 0);
        TR_ASSERT_EXIT(p, 2);
        ASSERT_CONTAINS(p.err, bad[i][2]);
        ctt_proc_free(&p);
    }
    return 0;
}
