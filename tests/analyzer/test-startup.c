/* Start-up apart from the steady state (issue 28, item 3; analyzer/features/cta_startup.h). On
 * tracegen's loop begun with an algorithm search of known length (--autotune-ms: trials of
 * kernels no iteration runs, the host computing between them, synchronizations in
 * cudnnFindConvolutionForwardAlgorithmEx), with a regular, a bursty and an irregular loader:
 * the steady state begins where tracegen's own clock says the loop began, within the longest
 * GPU operation of the trace (the steady state begins as the start-up's last GPU work ends,
 * which the host's clock bounds only to that); the search is a start-up finding whose saving
 * is its host's work, no more than the start-up's idle time, and the steady state's findings
 * come first and hold none of it. A loop whose iterations never repeat has no steady state to
 * find: the whole run is steady and nothing is set apart; unless NVTX ranges tell its steps,
 * the search in the first of them (as PyTorch's): the steady state begins at the second. */
#include "an_helpers.h"

#include <math.h>
#include <stdlib.h>

#define TUNE_MS 400.0

/* The longest GPU operation of the trace: how far the host's clock bounds the GPU's work. */
static double longest_op(const tj *s)
{
    double m = 0;
    const tj *k = tj_get(s, "kernels");
    for (size_t i = 0; i < k->n; i++)
        if (tj_num(k->v[i], "max_ns") > m)
            m = tj_num(k->v[i], "max_ns");
    return m;
}

/* tracegen ARGS into a trace named name: its summary (with every finding), its device's
 * startup[] entry in *su and tracegen's figure `key` (ns from the trace's start) in *t; NULL
 * after saying what failed. */
static tj *traced(const char *name, const char *args, const char *key, double *t, const tj **su)
{
    char dir[4096], *out, want[64];
    if (!an_gen_out(dir, name, args, &out))
        return NULL;
    snprintf(want, sizeof want, "%s=", key);
    const char *at = strstr(out, want);
    *t = at ? strtod(at + strlen(want), NULL) : -1;
    free(out);
    tj *s = an_summary(dir, "--min-saving 0");
    *su = s ? tj_at(tj_get(s, "startup"), 0) : NULL;
    if (!at || !*su) {
        ctt_fail_at(__FILE__, __LINE__, "tracegen %s: no %s, or no startup[] in the summary", args, key);
        tj_free(s);
        return NULL;
    }
    return s;
}

static int autotuned(const char *shape)
{
    char args[256], name[64];
    snprintf(args, sizeof args,
             "--iters 30 --kernels 12 --loader-ms 4 --workers 0 --autotune-ms %.0f --shape %s",
             TUNE_MS, shape);
    snprintf(name, sizeof name, "tune-%s", shape);
    double end;
    const tj *su;
    tj *s = traced(name, args, "startup_end_ns", &end, &su);
    ASSERT(s);
    ASSERT_STR(tj_str(su, "found"), "sequence");
    double from = tj_num(su, "steady_from_ns"), tol = longest_op(s);
    ASSERT(tol > 0);
    if (fabs(from - end) > tol) {
        ctt_fail_at(__FILE__, __LINE__, "%s: the steady state begins at %.0f ns, the loop at %.0f "
                    "ns by tracegen's clock (within %.0f ns, the longest GPU operation)", shape, from,
                    end, tol);
        tj_free(s);
        return 1;
    }
    ASSERT(tj_num(su, "autotune_syncs") >= 40);
    ASSERT(tj_num(su, "trial_kernels") >= 40);
    const tj *t = an_diag(s, "startup-autotuning");
    ASSERT(t);
    ASSERT_STR(tj_str(t, "phase"), "startup");
    double save = tj_num(t, "estimated_saving_ns");
    /* the host's search is idle time of the start-up; the start-up holds at most that and the
     * trials' GPU time and calls */
    ASSERT(save >= 0.95 * TUNE_MS * 1e6);
    ASSERT(save <= tj_num(su, "startup_ns"));
    /* the steady state's findings lead, and none holds the search; all together claim no more
     * than the device's window */
    const tj *dg = tj_get(s, "diagnoses");
    ASSERT_STR(tj_str(dg->v[0], "phase"), "steady");
    double claimed = 0;
    for (size_t i = 0; i < dg->n; i++) {
        claimed += tj_num(dg->v[i], "estimated_saving_ns");
        if (!strcmp(tj_str(dg->v[i], "phase"), "steady"))
            ASSERT(tj_num(dg->v[i], "estimated_saving_ns") < 0.5 * TUNE_MS * 1e6);
    }
    ASSERT(claimed <= tj_num(tj_at(tj_get(s, "breakdown"), 0), "window_ns"));
    ASSERT(!an_diag(s, "excessive-sync"));
    tj_free(s);
    return 0;
}

TEST_IMPL(startup_autotuning_apart_from_the_steady_state)
{
    ASSERT(!autotuned("regular"));
    ASSERT(!autotuned("bursty"));
    ASSERT(!autotuned("irregular"));
    return 0;
}

TEST_IMPL(startup_none_without_repetition)
{
    char dir[4096];
    ASSERT(an_gen(dir, "distinct", "--iters 30 --kernels 12 --loader-ms 4 --workers 0 "
                                   "--autotune-ms 100 --distinct-kernels"));
    tj *s = an_summary(dir, "--min-saving 0");
    ASSERT(s);
    const tj *su = tj_at(tj_get(s, "startup"), 0);
    ASSERT(su);
    ASSERT_STR(tj_str(su, "found"), "none");
    ASSERT(!an_diag(s, "startup-autotuning"));
    tj_free(s);
    /* a loop from its first GPU work: repeating, nothing to set apart */
    ASSERT(an_gen(dir, "plain", "--iters 30 --kernels 12 --loader-ms 4 --workers 0"));
    ASSERT((s = an_summary(dir, "--min-saving 0")));
    su = tj_at(tj_get(s, "startup"), 0);
    ASSERT_STR(tj_str(su, "found"), "sequence");
    ASSERT_INT((int)tj_num(su, "period_ops"), ==, 14);
    ASSERT(tj_get(su, "steady_from_ns")->type == TJ_NULL);
    tj_free(s);
    return 0;
}

TEST_IMPL(startup_found_by_nvtx_steps)
{
    double step1;
    const tj *su;
    tj *s = traced("nvtx", "--iters 30 --kernels 12 --loader-ms 4 --workers 0 --autotune-ms 400 "
                           "--nvtx-steps --distinct-kernels", "step1_ns", &step1, &su);
    ASSERT(s);
    ASSERT_STR(tj_str(su, "found"), "nvtx");
    ASSERT_STR(tj_str(su, "nvtx_range"), "step");
    ASSERT(fabs(tj_num(su, "steady_from_ns") - step1) <= longest_op(s));
    const tj *t = an_diag(s, "startup-autotuning");
    ASSERT(t);
    ASSERT(tj_num(t, "estimated_saving_ns") >= 0.95 * TUNE_MS * 1e6);
    tj_free(s);
    return 0;
}

/* The host activity of the findings drawn from args' trace (tracegen --samples-ms: the search
 * in warm_up, the step's own work in compute_metrics, the loader in load_batch): a steady
 * state's finding lists only what the host did in the steady state's gaps, the start-up's the
 * search first; the breakdown's host cause, of the whole run, both. 0, or 1 after saying why. */
static int activity_apart(const char *name, const char *args)
{
    char dir[4096];
    if (!an_gen(dir, name, args))
        return 1;
    tj *s = an_summary(dir, "--min-saving 0");
    ASSERT(s);
    const tj *dg = tj_get(s, "diagnoses");
    int steady = 0, startup = 0;
    for (size_t i = 0; i < dg->n; i++) {
        const tj *ha = tj_get(dg->v[i], "host_activity");
        int up = !strcmp(tj_str(dg->v[i], "phase"), "startup");
        for (size_t k = 0; ha && k < ha->n; k++) {
            const char *site = tj_str(ha->v[k], "site");
            /* (a start-up told by NVTX steps is the first step: its own work too) */
            if (up ? k == 0 && !strstr(site, "warm_up") : !!strstr(site, "warm_up")) {
                ctt_fail_at(__FILE__, __LINE__, "%s: %s (%s) lists '%s' (%.0f%%)", name,
                            tj_str(dg->v[i], "id"), up ? "start-up" : "steady state", site,
                            100 * tj_num(ha->v[k], "share"));
                tj_free(s);
                return 1;
            }
            steady += !up;
            startup += up;
        }
    }
    /* the search holds most of the start-up's host time, the step's work the steady state's */
    ASSERT(startup >= 1 && steady >= 1);
    const tj *t = an_diag(s, "startup-autotuning");
    ASSERT(t);
    ASSERT(tj_num(t, "host_samples") >= 0.9 * TUNE_MS);
    const tj *host = tj_get(tj_get(tj_get(tj_at(tj_get(s, "breakdown"), 0), "gaps"), "host"),
                            "host_activity");
    int whole_tune = 0, whole_step = 0;
    for (size_t k = 0; host && k < host->n; k++) {
        whole_tune += !!strstr(tj_str(host->v[k], "site"), "warm_up");
        whole_step += !!strstr(tj_str(host->v[k], "site"), "compute_metrics");
    }
    ASSERT(whole_tune && whole_step);
    tj_free(s);
    return 0;
}

/* check(name, args) on tracegen's args with each loader shape (--shape), the trace named
 * prefix-SHAPE: 0, or 1 after the first that failed. */
static int each_shape(const char *prefix, const char *args, int (*check)(const char *, const char *))
{
    static const char *const shapes[] = {"regular", "bursty", "irregular"};
    for (int i = 0; i < 3; i++) {
        char a[512], name[64];
        snprintf(a, sizeof a, "%s --shape %s", args, shapes[i]);
        snprintf(name, sizeof name, "%s-%s", prefix, shapes[i]);
        if (check(name, a))
            return 1;
    }
    return 0;
}

/* check on tracegen's loop begun with a search of TUNE_MS and extra's options: with each
 * loader shape, a short run, and the steps told by NVTX ranges (the search in the first). */
static int loop_shapes(const char *prefix, const char *extra, int (*check)(const char *, const char *))
{
    char args[512], name[64];
    snprintf(args, sizeof args, "--iters 30 --kernels 12 --loader-ms 4 --workers 0 --autotune-ms %.0f "
             "%s", TUNE_MS, extra);
    if (each_shape(prefix, args, check))
        return 1;
    snprintf(name, sizeof name, "%s-short", prefix);
    snprintf(args, sizeof args, "--iters 6 --kernels 12 --loader-ms 4 --workers 0 --autotune-ms %.0f "
             "%s", TUNE_MS, extra);
    if (check(name, args))
        return 1;
    snprintf(name, sizeof name, "%s-nvtx", prefix);
    snprintf(args, sizeof args, "--iters 30 --kernels 12 --loader-ms 4 --workers 0 --autotune-ms %.0f "
             "%s --nvtx-steps --distinct-kernels", TUNE_MS, extra);
    return check(name, args);
}

TEST_IMPL(startup_host_activity_apart)
{
    return loop_shapes("act", "--host-us 3000 --samples-ms 1", activity_apart);
}

/* A start-up longer than the window the period is searched in (10,000 trial kernels of a
 * search, then the loop): the steady state is found where the loop begins, whatever the loader's
 * shape, and the trials are the start-up's. */
static int long_startup(const char *name, const char *args)
{
    double end;
    const tj *su;
    tj *s = traced(name, args, "startup_end_ns", &end, &su);
    ASSERT(s);
    if (strcmp(tj_str(su, "found"), "sequence") ||
        fabs(tj_num(su, "steady_from_ns") - end) > longest_op(s)) {
        ctt_fail_at(__FILE__, __LINE__, "%s: found %s, the steady state at %.0f ns, the loop at "
                    "%.0f by tracegen's clock (%.0f operations looked at)", name,
                    tj_str(su, "found"), tj_num(su, "steady_from_ns"), end, tj_num(su, "ops"));
        tj_free(s);
        return 1;
    }
    ASSERT_INT((int)tj_num(su, "period_ops"), ==, 14);
    ASSERT(tj_num(su, "trial_kernels") >= 10000);
    ASSERT(an_diag(s, "startup-autotuning"));
    ASSERT_STR(tj_str(tj_at(tj_get(s, "diagnoses"), 0), "phase"), "steady");
    tj_free(s);
    return 0;
}

TEST_IMPL(startup_found_after_a_long_startup)
{
    return each_shape("long", "--iters 400 --kernels 12 --loader-ms 1 --workers 0 --autotune-ms 2000 "
                      "--autotune-trials 10000", long_startup);
}

/* tracegen --lib-load-ms: cuDNN's engines mapped (the host's loading, then the cuInit of the
 * library's own runtime, then SHLIB kind 5) and cuBLAS's handle made before its first call, in
 * the start-up: each library's loading is the host's time tracegen spent on it, whatever the
 * shape of the loop, its length, or whether NVTX ranges tell its steps. 0, or 1 after saying
 * why. */
static int libraries_loaded(const char *name, const char *args)
{
    char dir[4096], *out;
    if (!an_gen_out(dir, name, args, &out))
        return 1;
    const char *a = strstr(out, "cudnn_load_ns="), *b = strstr(out, "cublas_handle_ns=");
    double dnn_ns = a ? strtod(a + 14, NULL) : -1, blas_ns = b ? strtod(b + 17, NULL) : -1;
    free(out);
    ASSERT(dnn_ns > 0 && blas_ns > 0);
    tj *s = an_summary(dir, "--min-saving 0");
    ASSERT(s);
    const tj *su = tj_at(tj_get(s, "startup"), 0), *libs = tj_get(su, "libraries");
    const tj *dnn = tj_find(libs, "name", "cuDNN"), *blas = tj_find(libs, "name", "cuBLAS");
    if (!dnn || !blas || fabs(tj_num(dnn, "host_ns") - dnn_ns) > 1e6 ||
        fabs(tj_num(blas, "host_ns") - blas_ns) > 1e6) {
        ctt_fail_at(__FILE__, __LINE__, "%s: cuDNN's loading %.0f ns (tracegen's %.0f), cuBLAS's "
                    "%.0f ns (%.0f)", name, dnn ? tj_num(dnn, "host_ns") : -1, dnn_ns,
                    blas ? tj_num(blas, "host_ns") : -1, blas_ns);
        tj_free(s);
        return 1;
    }
    ASSERT_INT((int)tj_num(dnn, "objects"), ==, 2);
    ASSERT(tj_num(dnn, "seen_ns") < tj_num(su, "steady_from_ns"));
    tj_free(s);
    return 0;
}

TEST_IMPL(startup_library_loading)
{
    return loop_shapes("libs", "--lib-load-ms 150", libraries_loaded);
}
