/* The JSON's time series (breakdown[].series, vram[].curve) against ground truth: the busy time
 * of each bin at least the union of the simulation's true intervals (FAKECUDA_TRUTH) and at most
 * that of the trace's GPU records (which enclose the true ones), each bin's busy and idle time
 * against its length, each channel's sum against the breakdown's totals, and --series-bins
 * merging neighbours without losing anything. */
#include "an_helpers.h"
#include "an_records.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A GPU record encloses the true interval within the anchor's error (tests/tracer/test-truth.c) */
#define SE_GPU_TOL_NS 5000

typedef struct {
    long long start, end;
} se_iv;

static int iv_cmp(const void *a, const void *b)
{
    const se_iv *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorts v and merges it into its union, in place; returns how many intervals that leaves. */
static size_t merge(se_iv *v, size_t n)
{
    qsort(v, n, sizeof *v, iv_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && v[i].start <= v[m - 1].end) {
            if (v[i].end > v[m - 1].end)
                v[m - 1].end = v[i].end;
        } else {
            v[m++] = v[i];
        }
    }
    return m;
}

/* The true intervals' union; returns how many (0: unreadable). */
static size_t truth_union(const char *path, se_iv **out)
{
    se_iv *v = NULL, x;
    size_t n = 0, cap = 0;
    FILE *f = fopen(path, "r");
    while (f && fscanf(f, "%*u %*u %*u %*s %*u %lld %lld %*d %*d", &x.start, &x.end) == 2) {
        if (n == cap)
            v = realloc(v, (cap = cap ? 2 * cap : 512) * sizeof *v);
        v[n++] = x;
    }
    if (f)
        fclose(f);
    *out = v;
    return merge(v, n);
}

typedef struct {
    se_iv *v;
    size_t n, cap;
} se_recs;

static int gpu_rec(const ct_reader *r, const ct_rec *rec, void *ctx)
{
    (void)r;
    se_recs *g = ctx;
    if (rec->type != CT_REC_GPU)
        return 0;
    if (g->n == g->cap)
        g->v = realloc(g->v, (g->cap = g->cap ? 2 * g->cap : 512) * sizeof *g->v);
    g->v[g->n++] = (se_iv){(long long)rec->u.gpu.start, (long long)rec->ts};
    return 0;
}

/* Of the union u, the time inside [lo, hi) and (through *edges) the ends of its pieces there. */
static double union_in(const se_iv *u, size_t nu, double lo, double hi, long long *edges)
{
    double t = 0;
    *edges = 0;
    for (size_t k = 0; k < nu && (double)u[k].start < hi; k++) {
        double a = (double)u[k].start > lo ? (double)u[k].start : lo;
        double e = (double)u[k].end < hi ? (double)u[k].end : hi;
        if (e > a) {
            t += e - a;
            *edges += 2;
        }
    }
    return t;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The true end of work nearest at (u sorted by start, their ends too: it is a union). */
static double nearest_end(const se_iv *u, size_t nu, double at)
{
    size_t lo = 0, hi = nu;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((double)u[mid].end < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == nu || (lo > 0 && at - (double)u[lo - 1].end < (double)u[lo].end - at))
        lo--;
    return (double)u[lo].end;
}

/* The simulation's clock less the summary's axis. Each of the longest gaps starts where a step's
 * last operation truly ended (a readback, timed exactly): the offset is the one that puts the
 * most gap starts on a true end, tried against every true end for the longest gap's start (the
 * first record is no anchor: a first synchronous copy on a loaded machine is recorded as its
 * whole call, tens of ms before the truth's start); then the median of those gaps' offsets.
 * *placed: how many gaps start on a true end at it, of *gaps. */
static double axis_offset(const tj *b, const se_iv *u, size_t nu, size_t *placed, size_t *gaps_out)
{
    const tj *gaps = tj_get(b, "longest_gaps");
    size_t ng = tj_len(gaps, "") < 16 ? tj_len(gaps, "") : 16;
    double starts[16], d[16], best = 0;
    size_t best_hits = 0, n = 0;
    for (size_t g = 0; g < ng; g++)
        starts[g] = tj_num(tj_at(gaps, g), "start_ns");
    for (size_t i = 0; ng && i < nu; i++) {
        double off = (double)u[i].end - starts[0];
        size_t hits = 0;
        for (size_t g = 0; g < ng; g++)
            hits += fabs(nearest_end(u, nu, starts[g] + off) - (starts[g] + off)) <= SE_GPU_TOL_NS;
        if (hits > best_hits) {
            best_hits = hits;
            best = off;
        }
    }
    for (size_t g = 0; g < ng; g++) {
        double at = starts[g] + best, e = nearest_end(u, nu, at);
        if (fabs(e - at) <= SE_GPU_TOL_NS)
            d[n++] = e - starts[g];
    }
    *placed = n;
    *gaps_out = ng;
    qsort(d, n, sizeof *d, dbl_cmp);
    return n ? d[n / 2] : best;
}

static double sum_of(const tj *a)
{
    double s = 0;
    for (size_t i = 0; i < tj_len(a, ""); i++)
        s += tj_num(tj_at(a, i), "");
    return s;
}

static const char *const causes[] = {"data-loading", "after-sync", "after-sync-copy", "launch", "host"};
static const char *const hosts[] = {"in_api", "blocked", "compute", "wait", "unknown"};
static const char *const host_totals[] = {"idle_in_api_ns", "idle_blocked_ns", "idle_host_compute_ns",
                                          "idle_host_wait_ns", "idle_host_unknown_ns"};

TEST_IMPL(utilization_series_against_truth)
{
    char dir[4096], truth[4096], env0[4200], *out;
    snprintf(truth, sizeof truth, "%s/truth", ctt_tmpdir());
    snprintf(env0, sizeof env0, "FAKECUDA_TRUTH=%s", truth);
    char *env[] = {env0, "FAKECUDA_KERNEL_NS=*=200000", NULL};
    /* over 1.024 s, so the 1 ms bins have doubled at least once while gaps were pending; pinned
     * memory and async copies, so that few records are end-bounded (their recorded ends are
     * only bounds: busy may exceed the truth by as much) */
    ASSERT(an_trace_workload(dir, "series",
                             "train_loop --iters 45 --loader-ms 20 --memory pinned --readback pinned --copy async",
                             env, &out));
    free(out);
    se_iv *u;
    size_t nu = truth_union(truth, &u);
    ASSERT(nu > 0);
    /* the records are on the truth's clock (CLOCK_MONOTONIC) */
    se_recs g = {0};
    ASSERT_INT(an_each_record(dir, gpu_rec, &g), ==, 0);
    size_t nr = merge(g.v, g.n);
    ASSERT(nr > 0);

    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *b = tj_path(s, "breakdown.0");
    const tj *se = tj_get(b, "series");
    ASSERT(se != NULL);
    size_t n = tj_len(se, "busy_ns");
    double w = tj_num(se, "bin_ns");
    ASSERT(w >= 2e6); /* coarsened */
    ASSERT(n > 100 && n <= 1024);

    /* every channel adds up to its total: busy and the gaps' causes exactly; compute and wait
     * are split per bin from the CPU time, rounded there */
    ASSERT_INT(sum_of(tj_get(se, "busy_ns")), ==, tj_num(b, "gpu_busy_ns"));
    for (int c = 0; c < 5; c++) {
        ASSERT_UINT(tj_len(tj_get(se, "idle_by_cause"), causes[c]), ==, n);
        ASSERT_INT(sum_of(tj_get(tj_get(se, "idle_by_cause"), causes[c])), ==,
                   tj_num(tj_get(tj_get(b, "gaps"), causes[c]), "total_ns"));
        double got = sum_of(tj_get(tj_get(se, "idle_by_host"), hosts[c])), want = tj_num(b, host_totals[c]);
        if (got < want - (double)n || got > want + (double)n)
            return ctt_fail_at(__FILE__, __LINE__, "idle_by_host.%s sums to %.0f, breakdown %s %.0f",
                               hosts[c], got, host_totals[c], want), 1;
    }
    ASSERT(tj_num(tj_get(tj_get(b, "gaps"), "data-loading"), "total_ns") > 40 * 20e6);

    /* per bin: busy and idle fill a bin inside the window, and the two idle views agree; the
     * busy time is at least the true union's and at most the records' (to the anchor's error at
     * each end of their pieces in the bin), the bins placed on the simulation's clock by the
     * axis's offset taken at the starts of the longest gaps (each the end of a step's last
     * operation, a readback timed exactly). A record may hold much more than its operation:
     * one that starts on an idle stream starts with the tracer's event, before the host
     * submitted the work, by as long as the host took (on a loaded machine, as long as it was
     * descheduled), and an end-bounded one (a copy whose call returned once it was done) ends at
     * the call's return; so it is the records, not a margin over the truth, that bound busy
     * from above. Over the run likewise */
    double truth_total = 0, rec_total = 0;
    for (size_t i = 0; i < nu; i++)
        truth_total += (double)(u[i].end - u[i].start);
    for (size_t i = 0; i < nr; i++)
        rec_total += (double)(g.v[i].end - g.v[i].start);
    double busy_all = tj_num(b, "gpu_busy_ns");
    if (busy_all < truth_total - (double)nu * 2 * SE_GPU_TOL_NS || busy_all > rec_total)
        return ctt_fail_at(__FILE__, __LINE__, "busy %.0f ns, the simulation's %.0f, the records' %.0f",
                           busy_all, truth_total, rec_total), 1;
    size_t placed, ngaps;
    double off = axis_offset(b, u, nu, &placed, &ngaps);
    ASSERT_UINT(2 * placed, >, ngaps);
    double start = tj_num(se, "start_ns") + off;
    double wlo = tj_num(b, "window_start_ns") + off, whi = wlo + tj_num(b, "window_ns");
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        double lo = start + (double)i * w, hi = lo + w;
        double busy = tj_num(tj_at(tj_get(se, "busy_ns"), i), ""), cause = 0, host = 0;
        for (int c = 0; c < 5; c++) {
            cause += tj_num(tj_at(tj_get(tj_get(se, "idle_by_cause"), causes[c]), i), "");
            host += tj_num(tj_at(tj_get(tj_get(se, "idle_by_host"), hosts[c]), i), "");
        }
        ASSERT_INT(cause, ==, host);
        if (lo > wlo + SE_GPU_TOL_NS && hi < whi - SE_GPU_TOL_NS) {
            ASSERT_INT(busy + cause, ==, w);
            checked++;
        }
        long long edges, redges;
        double tb = union_in(u, nu, lo, hi, &edges), rb = union_in(g.v, nr, lo, hi, &redges);
        if (busy < tb - (double)(edges + 2) * SE_GPU_TOL_NS || busy > rb + (double)(redges + 2) * SE_GPU_TOL_NS)
            return ctt_fail_at(__FILE__, __LINE__, "bin %zu [%.0f, %.0f): busy %.0f ns, the simulation's "
                               "%.0f, the records' %.0f", i, lo, hi, busy, tb, rb), 1;
    }
    ASSERT(checked > n / 2);

    /* merged into at most 64 bins: the same sums, neighbours added (the curve: their maximum) */
    tj *m = an_summary(dir, "--series-bins 64");
    ASSERT(m);
    const tj *ms = tj_path(m, "breakdown.0.series");
    size_t mn = tj_len(ms, "busy_ns");
    ASSERT(mn <= 64 && mn >= 32);
    double f = tj_num(ms, "bin_ns") / w;
    ASSERT(f >= 2 && f == (double)(long long)f);
    ASSERT_INT(tj_num(ms, "start_ns"), ==, tj_num(se, "start_ns"));
    for (size_t i = 0; i < mn; i++) {
        double want = 0;
        for (size_t j = i * (size_t)f; j < (i + 1) * (size_t)f && j < n; j++)
            want += tj_num(tj_at(tj_get(tj_get(se, "idle_by_cause"), "data-loading"), j), "");
        ASSERT_INT(tj_num(tj_at(tj_get(tj_get(ms, "idle_by_cause"), "data-loading"), i), ""), ==, want);
    }
    const tj *c0 = tj_path(s, "vram.0.curve"), *c1 = tj_path(m, "vram.0.curve");
    ASSERT(tj_len(c1, "max_bytes") <= 64);
    double peak = 0, mpeak = 0;
    for (size_t i = 0; i < tj_len(c0, "max_bytes"); i++)
        peak = tj_num(tj_at(tj_get(c0, "max_bytes"), i), "") > peak ? tj_num(tj_at(tj_get(c0, "max_bytes"), i), "") : peak;
    for (size_t i = 0; i < tj_len(c1, "max_bytes"); i++)
        mpeak = tj_num(tj_at(tj_get(c1, "max_bytes"), i), "") > mpeak ? tj_num(tj_at(tj_get(c1, "max_bytes"), i), "") : mpeak;
    ASSERT_INT(peak, ==, tj_num(s, "vram.0.peak_bytes"));
    ASSERT_INT(mpeak, ==, peak);
    tj_free(m);
    tj_free(s);
    free(u);
    free(g.v);
    return 0;
}
