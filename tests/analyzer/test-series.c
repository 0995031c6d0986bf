/* The JSON's time series (breakdown[].series, vram[].curve) against ground truth: the busy time
 * of each bin against the union of the simulation's true intervals (FAKECUDA_TRUTH), each bin's
 * busy and idle time against its length, each channel's sum against the breakdown's totals, and
 * --series-bins merging neighbours without losing anything. */
#include "an_helpers.h"

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

/* The true intervals, sorted and merged into their union; returns how many (0: unreadable).
 * *copies gets the copies' intervals (*ncopies of them). */
static size_t truth_union(const char *path, se_iv **out, se_iv **copies, size_t *ncopies)
{
    se_iv *v = NULL, x, *c = NULL;
    size_t n = 0, cap = 0, nc = 0, ccap = 0;
    char kind[8];
    FILE *f = fopen(path, "r");
    while (f && fscanf(f, "%*u %*u %*u %7s %*u %lld %lld %*d %*d", kind, &x.start, &x.end) == 3) {
        if (n == cap)
            v = realloc(v, (cap = cap ? 2 * cap : 512) * sizeof *v);
        v[n++] = x;
        if (strcmp(kind, "copy"))
            continue;
        if (nc == ccap)
            c = realloc(c, (ccap = ccap ? 2 * ccap : 64) * sizeof *c);
        c[nc++] = x;
    }
    if (f)
        fclose(f);
    *copies = c;
    *ncopies = nc;
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
    *out = v;
    return m;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The simulation's clock less the summary's axis: at each of the longest gaps, the true end of
 * work nearest its start (the gaps lie tens of ms apart, the first guess is within a ms); the
 * median of those. */
static double axis_offset(const tj *b, const se_iv *u, size_t nu)
{
    double guess = (double)u[0].start - tj_num(b, "window_start_ns"), d[16];
    size_t n = 0;
    for (size_t g = 0; g < tj_len(b, "longest_gaps") && n < 16; g++) {
        double at = tj_num(tj_at(tj_get(b, "longest_gaps"), g), "start_ns") + guess, best = 1e18;
        for (size_t i = 0; i < nu; i++)
            if (fabs((double)u[i].end - at) < fabs(best - at))
                best = (double)u[i].end;
        d[n++] = best - (at - guess);
    }
    qsort(d, n, sizeof *d, dbl_cmp);
    return n ? d[n / 2] : guess;
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
    se_iv *u, *cp;
    size_t ncp, nu = truth_union(truth, &u, &cp, &ncp);
    ASSERT(nu > 0);

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
     * busy time is the true union's within the records' error: each interval's ends within the
     * anchor's error, and the axis's offset from the simulation's clock, taken at the starts of
     * the longest gaps (each the end of a step's last operation, a readback timed exactly; a
     * first or last record can start at its call's entry or end at its return, tens of us off,
     * which would shift every bin by as much). An end-bounded record (a copy begun on an idle
     * stream whose call returned once it was done: it starts at the call's entry and ends at its
     * return) holds more than its operation: a bin near a copy may exceed the truth by the busy
     * time only such records cover, the whole run by no more */
    double bounded = tj_num(b, "gpu_busy_bounded_ns");
    double truth_total = 0;
    for (size_t i = 0; i < nu; i++)
        truth_total += (double)(u[i].end - u[i].start);
    double excess = tj_num(b, "gpu_busy_ns") - truth_total;
    if (excess < -(double)nu * 2 * SE_GPU_TOL_NS || excess > bounded + (double)nu * 2 * SE_GPU_TOL_NS)
        return ctt_fail_at(__FILE__, __LINE__, "busy %.0f ns, the simulation's %.0f, end-bounded %.0f",
                           tj_num(b, "gpu_busy_ns"), truth_total, bounded), 1;
    double off = axis_offset(b, u, nu);
    double start = tj_num(se, "start_ns") + off;
    double wlo = tj_num(b, "window_start_ns") + off, whi = wlo + tj_num(b, "window_ns");
    size_t k = 0, checked = 0;
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
        double tb = 0;
        long long edges = 0;
        while (k > 0 && (double)u[k - 1].end > lo)
            k--;
        for (; k < nu && (double)u[k].start < hi; k++) {
            double a = (double)u[k].start > lo ? (double)u[k].start : lo;
            double e = (double)u[k].end < hi ? (double)u[k].end : hi;
            if (e > a) {
                tb += e - a;
                edges += 2;
            }
        }
        int has_copy = 0;
        for (size_t c = 0; c < ncp && !has_copy; c++)
            has_copy = (double)cp[c].start - bounded < hi && (double)cp[c].end + bounded > lo;
        double tol = (double)(edges + 2) * SE_GPU_TOL_NS;
        if (busy < tb - tol || busy > tb + tol + (has_copy ? bounded : 0))
            return ctt_fail_at(__FILE__, __LINE__, "bin %zu [%.0f, %.0f): busy %.0f ns, the simulation's %.0f",
                               i, lo, hi, busy, tb), 1;
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
    free(cp);
    return 0;
}
