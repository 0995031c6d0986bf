/* cutrace timeline's NVTX tracks, on a trace of tests/workloads/nvtx_ranges (NVIDIA's nvtx3
 * headers, libcutrace as the injection library), checked against what the workload does and
 * measured itself: each worker thread's 20 outer ranges inside the times it took around them,
 * middle and inner nested in them at depths 1 and 2, on a track per thread and domain; the
 * range handed to another thread on its starting thread's start/end track with both threads;
 * the unbalanced pop and the end of the range begun before the trace as instant events; the
 * domain's registered string with its named category and payload; 10,000 PyTorch-style names,
 * those past the tracer's bound shown by their normalized name; and on every track complete
 * events that nest, as the Trace Event format requires. */
#define _GNU_SOURCE
#include "an_helpers.h"

#include <glob.h>
#include <math.h>
#include <stdlib.h>

#include "cttrace.h"

#define NVTX_THREADS 4
#define NVTX_ROUNDS 20
#define NVTX_NAMES 10000
#define NVTX_RELAYS 2000
#define NVTX_BOUND 1024 /* distinct messages a trace keeps (FORMAT.md 4.8) */
/* the tracer's clock conversion may be this far (ns) from the program's own readings
 * (tests/tracer/test-nvtx.c says why) */
#define NVTX_CLOCK_TOL 1000
#define ATEN_GROUP "aten::add, seq = #, sizes = [[#, #]]"

typedef struct {
    int64_t start, end; /* ns from the timeline's origin */
    const tj *e;
} span;

static int64_t ns_of(double us) { return (int64_t)llround(us * 1000); }

/* The timeline's origin: the trace file's start (one file). */
static int trace_start(const char *dir, uint64_t *start)
{
    char pat[4200], err[256];
    snprintf(pat, sizeof pat, "%s/*.cutrace", dir);
    glob_t g;
    ASSERT_INT(glob(pat, 0, NULL, &g), ==, 0);
    ASSERT_UINT(g.gl_pathc, ==, 1);
    ct_reader *r;
    const char *paths[] = {g.gl_pathv[0]};
    ASSERT_INT(ct_reader_open(&r, paths, 1, NULL, err, sizeof err), ==, 0);
    *start = ct_reader_header(r, 0)->monotonic_ns;
    ct_reader_close(r);
    globfree(&g);
    return 0;
}

/* The track (tid) named `name` in process 1, or -1. */
static double track(const tj *ev, const char *name)
{
    for (size_t i = 0; i < ev->n; i++)
        if (!strcmp(tj_str(ev->v[i], "ph"), "M") && !strcmp(tj_str(ev->v[i], "name"), "thread_name") &&
            !strcmp(tj_str(ev->v[i], "args.name"), name))
            return tj_num(ev->v[i], "tid");
    return -1;
}

/* The NVTX events of phase ph on track tid named name (NULL: any), in time order. */
static size_t events(const tj *ev, double tid, const char *ph, const char *name, span *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const tj *e = ev->v[i];
        const char *cat = tj_str(e, "cat");
        if (strcmp(tj_str(e, "ph"), ph) || !cat || strcmp(cat, "nvtx") || tj_num(e, "tid") != tid ||
            (name && strcmp(tj_str(e, "name"), name)))
            continue;
        if (n < max) {
            int64_t s = ns_of(tj_num(e, "ts"));
            out[n] = (span){s, s + (strcmp(ph, "X") ? 0 : ns_of(tj_num(e, "dur"))), e};
        }
        n++;
    }
    for (size_t i = 1; i < n && i < max; i++) /* insertion sort: nearly sorted already */
        for (size_t j = i; j > 0 && out[j].start < out[j - 1].start; j--) {
            span x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

static int by_start(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* the enclosing one first */
}

/* Complete events on one track nest: none starts inside another and ends after it. */
static int nested(const tj *ev, double tid)
{
    size_t n = 0, cap = 16;
    span *v = malloc(cap * sizeof *v), *stack = NULL;
    for (size_t i = 0; i < ev->n; i++) {
        const tj *e = ev->v[i];
        if (strcmp(tj_str(e, "ph"), "X") || tj_num(e, "tid") != tid)
            continue;
        if (n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        int64_t s = ns_of(tj_num(e, "ts"));
        v[n++] = (span){s, s + ns_of(tj_num(e, "dur")), e};
    }
    qsort(v, n, sizeof *v, by_start);
    stack = malloc((n + 1) * sizeof *stack);
    size_t depth = 0;
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        while (depth && stack[depth - 1].end <= v[i].start)
            depth--;
        if (depth && v[i].end > stack[depth - 1].end) {
            ctt_fail_at(__FILE__, __LINE__, "track %.0f: \"%s\" [%lld, %lld] overlaps \"%s\" [%lld, %lld] without nesting",
                        tid, tj_str(v[i].e, "name"), (long long)v[i].start, (long long)v[i].end,
                        tj_str(stack[depth - 1].e, "name"), (long long)stack[depth - 1].start,
                        (long long)stack[depth - 1].end);
            bad = 1;
        }
        stack[depth++] = v[i];
    }
    free(v);
    free(stack);
    return bad;
}

/* One worker: its 20 outer ranges within the times it measured around them (rounds in order),
 * middle and inner inside them at depths 1 and 2. */
static int worker_ranges(const tj *ev, unsigned tid, const uint64_t before[], const uint64_t after[],
                         uint64_t origin)
{
    char name[64];
    snprintf(name, sizeof name, "NVTX (tid %u)", tid);
    double tr = track(ev, name);
    ASSERT(tr >= 0);
    static const char *const level[3] = {"outer", "middle", "inner"};
    span s[3][NVTX_ROUNDS + 1];
    for (int d = 0; d < 3; d++)
        ASSERT_UINT(events(ev, tr, "X", level[d], s[d], NVTX_ROUNDS + 1), ==, NVTX_ROUNDS);
    for (int r = 0; r < NVTX_ROUNDS; r++) {
        ASSERT_INT(s[0][r].start, >=, (int64_t)(before[r] - origin) - NVTX_CLOCK_TOL);
        ASSERT_INT(s[0][r].end, <=, (int64_t)(after[r] - origin) + NVTX_CLOCK_TOL);
        for (int d = 0; d < 3; d++) {
            ASSERT_INT(tj_num(s[d][r].e, "args.depth"), ==, d);
            ASSERT_STR(tj_str(s[d][r].e, "args.domain"), "(default)");
            if (d) {
                ASSERT_INT(s[d][r].start, >=, s[d - 1][r].start);
                ASSERT_INT(s[d][r].end, <=, s[d - 1][r].end);
            }
        }
    }
    return nested(ev, tr);
}

/* `cutrace timeline DIR -o TL EXTRA`, parsed (NULL after a message); *crowded (if given) gets
 * the count its warning gives of start/end ranges left out, 0 without the warning. */
static tj *timeline_json(const char *dir, const char *tl, const char *extra, unsigned long long *crowded)
{
    char args[4400], err[256];
    snprintf(args, sizeof args, "timeline {} -o %s %s", tl, extra);
    ctt_proc p;
    if (an_run(&p, args, dir) != 0 || !p.exited || p.code != 0) {
        ctt_fail_at(__FILE__, __LINE__, "cutrace %s: expected exit status 0, found %d: %s", args,
                    p.code, p.err ? p.err : "");
        return NULL;
    }
    const char *warn = strstr(p.err, "warning: ");
    if (crowded && (!warn || sscanf(warn, "warning: %llu NVTX start/end ranges are not in", crowded) != 1))
        *crowded = 0;
    ctt_proc_free(&p);
    char *text = ctt_read_file(tl, NULL);
    tj *j = text ? tj_parse(text, err, sizeof err) : NULL;
    if (!j)
        ctt_fail_at(__FILE__, __LINE__, "%s: expected the timeline's JSON, found %s", tl,
                    text ? err : "no file");
    free(text);
    return j;
}

TEST_IMPL(timeline_nvtx_tracks)
{
    char dir[4096], times[4200], args[4300], *out;
    snprintf(times, sizeof times, "%s/nvtx-times.txt", ctt_tmpdir());
    snprintf(args, sizeof args, "nvtx_ranges %s", times);
    ASSERT(an_trace_workload(dir, "nvtx", args, NULL, &out));
    ASSERT_STR(out, "nvtx_ranges: threads=4 rounds=20 names=10000\n");
    free(out);
    uint64_t origin;
    if (trace_start(dir, &origin))
        return 1;
    char tl[4200];
    snprintf(tl, sizeof tl, "%s/nvtx.json", ctt_tmpdir());
    /* the relay's 2000 ranges, open at once as far as its thread outpaces the main thread, may
     * fill the start/end rows of their thread: those left out are counted in the warning */
    unsigned long long crowded;
    tj *j = timeline_json(dir, tl, "", &crowded);
    ASSERT(j);
    const tj *ev = tj_get(j, "traceEvents");
    ASSERT(ev);

    /* the workers, against their own clocks */
    unsigned tids[NVTX_THREADS];
    uint64_t before[NVTX_THREADS][NVTX_ROUNDS], after[NVTX_THREADS][NVTX_ROUNDS];
    int rounds[NVTX_THREADS] = {0}, nthreads = 0;
    FILE *f = fopen(times, "r");
    ASSERT(f);
    unsigned tid;
    unsigned long long b, a;
    while (fscanf(f, "%u %llu %llu", &tid, &b, &a) == 3) {
        int k = 0;
        while (k < nthreads && tids[k] != tid)
            k++;
        if (k == nthreads) {
            ASSERT_INT(nthreads, <, NVTX_THREADS);
            tids[nthreads++] = tid;
        }
        ASSERT_INT(rounds[k], <, NVTX_ROUNDS);
        before[k][rounds[k]] = b;
        after[k][rounds[k]++] = a;
    }
    fclose(f);
    ASSERT_INT(nthreads, ==, NVTX_THREADS);
    for (int k = 0; k < NVTX_THREADS; k++)
        if (worker_ranges(ev, tids[k], before[k], after[k], origin))
            return 1;

    /* the main thread: the handoff ended by another thread, on the main thread's track */
    const tj *proc = NULL;
    for (size_t i = 0; i < ev->n && !proc; i++)
        if (!strcmp(tj_str(ev->v[i], "name"), "process_name"))
            proc = ev->v[i];
    ASSERT(proc);
    const char *pidtext = strstr(tj_str(proc, "args.name"), " pid ");
    ASSERT(pidtext);
    unsigned main_tid = (unsigned)atoi(pidtext + 5);
    char name[96];
    snprintf(name, sizeof name, "NVTX start/end (tid %u)", main_tid);
    double se = track(ev, name);
    ASSERT(se >= 0);
    span one[2];
    ASSERT_UINT(events(ev, se, "X", "handoff", one, 2), ==, 1);
    ASSERT_INT(tj_num(one[0].e, "args.start_tid"), ==, main_tid);
    ASSERT(tj_num(one[0].e, "args.end_tid") > 0 && tj_num(one[0].e, "args.end_tid") != main_tid);
    /* "before-cuda" began before the trace did: its end is the one the trace cannot match */
    ASSERT_UINT(events(ev, se, "i", "nvtxRangeEnd of a range the trace did not see start (unmatched)", one, 2), ==, 1);

    /* the pop with nothing pushed, the marks and the PyTorch-style names on its push/pop track */
    snprintf(name, sizeof name, "NVTX (tid %u)", main_tid);
    double pp = track(ev, name);
    ASSERT(pp >= 0);
    ASSERT_UINT(events(ev, pp, "i", "nvtxRangePop with nothing pushed (unmatched)", one, 2), ==, 1);
    ASSERT_UINT(events(ev, pp, "i", "mark-a", one, 2), ==, 1);
    ASSERT_UINT(events(ev, pp, "i", "wide-\u00e9\u4e2d", one, 2), ==, 1);
    ASSERT_UINT(events(ev, pp, "i", "mark-ex", one, 2), ==, 1);
    ASSERT_INT(tj_num(one[0].e, "args.category"), ==, 3);
    ASSERT_INT(tj_num(one[0].e, "args.payload"), ==, 42);
    ASSERT_STR(tj_str(one[0].e, "args.color"), "#00ff00");
    span *all = malloc((NVTX_NAMES + 1) * sizeof *all);
    size_t n_all = events(ev, pp, "X", NULL, all, NVTX_NAMES + 1);
    ASSERT_UINT(n_all, ==, NVTX_NAMES);
    size_t named = 0;
    for (size_t i = 0; i < n_all; i++) {
        const tj *e = all[i].e;
        ASSERT_INT(tj_num(e, "args.depth"), ==, 0);
        if (!strcmp(tj_str(e, "name"), ATEN_GROUP)) {
            ASSERT(tj_str(e, "args.unnamed"));
            continue;
        }
        /* named ones come first, in the program's order, grouped by their normalized name */
        char want[96];
        snprintf(want, sizeof want, "aten::add, seq = %zu, sizes = [[3, 4]]", 1000 + i);
        ASSERT_STR(tj_str(e, "name"), want);
        ASSERT_STR(tj_str(e, "args.group"), ATEN_GROUP);
        ASSERT_UINT(named++, ==, i);
    }
    free(all);
    ASSERT_UINT(named, >, 0);
    ASSERT_UINT(named, <, NVTX_BOUND);
    if (nested(ev, pp) || nested(ev, se))
        return 1;

    /* the domain: its own track; the registered string, its category by name, the payload */
    snprintf(name, sizeof name, "NVTX cutrace-test (tid %u)", main_tid);
    double dom = track(ev, name);
    ASSERT(dom >= 0);
    ASSERT_UINT(events(ev, dom, "X", "registered-phase", one, 2), ==, 1);
    ASSERT_STR(tj_str(one[0].e, "args.domain"), "cutrace-test");
    ASSERT_STR(tj_str(one[0].e, "args.category"), "io");
    ASSERT_INT(tj_num(one[0].e, "args.payload"), ==, -5);

    /* the relay: every range drawn (on rows that nest) or counted in the warning */
    size_t relays = 0, rows = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const tj *e = ev->v[i];
        if (!strcmp(tj_str(e, "ph"), "M") && !strcmp(tj_str(e, "name"), "thread_name") &&
            strstr(tj_str(e, "args.name"), "NVTX start/end") && tj_num(e, "tid") != se) {
            rows++;
            if (nested(ev, tj_num(e, "tid")))
                return 1;
            span *r = malloc((NVTX_RELAYS + 1) * sizeof *r);
            size_t k = events(ev, tj_num(e, "tid"), "X", "relay", r, NVTX_RELAYS + 1);
            relays += k;
            for (size_t x = 0; x < k && x < NVTX_RELAYS; x++)
                ASSERT_INT(tj_num(r[x].e, "args.end_tid"), ==, main_tid);
            free(r);
        }
    }
    ASSERT(crowded ? rows == 256 : rows <= 256);
    ASSERT_UINT(relays + crowded, ==, NVTX_RELAYS);

    /* --to before the PyTorch-style names: the workers' ranges, none of those names */
    tj_free(j);
    int64_t last = 0;
    for (int k = 0; k < NVTX_THREADS; k++)
        if ((int64_t)(after[k][NVTX_ROUNDS - 1] - origin) > last)
            last = (int64_t)(after[k][NVTX_ROUNDS - 1] - origin);
    snprintf(args, sizeof args, "--to %.6f", (double)last / 1e6);
    j = timeline_json(dir, tl, args, NULL);
    ASSERT(j);
    ev = tj_get(j, "traceEvents");
    size_t outer = 0, aten = 0;
    for (size_t i = 0; i < ev->n; i++) {
        outer += !strcmp(tj_str(ev->v[i], "name"), "outer");
        aten += !strncmp(tj_str(ev->v[i], "name"), "aten::", 6);
    }
    ASSERT_UINT(outer, ==, NVTX_THREADS * NVTX_ROUNDS);
    ASSERT_UINT(aten, ==, 0);
    tj_free(j);
    /* --max-events counts NVTX events too (the process's end marker comes on top); --pid of
     * another process leaves everything out */
    static const char *const limits[] = {"--max-events 100", "--pid 1"};
    for (int k = 0; k < 2; k++) {
        j = timeline_json(dir, tl, limits[k], NULL);
        ASSERT(j);
        ev = tj_get(j, "traceEvents");
        size_t shown = 0, nvtx = 0;
        for (size_t i = 0; i < ev->n; i++) {
            shown += strcmp(tj_str(ev->v[i], "ph"), "M") != 0;
            nvtx += tj_str(ev->v[i], "cat") && !strcmp(tj_str(ev->v[i], "cat"), "nvtx");
        }
        ASSERT_UINT(shown, <=, k ? 0 : 101);
        ASSERT_UINT(nvtx, <=, shown);
        tj_free(j);
    }
    return 0;
}
