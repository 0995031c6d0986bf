/* Diagnoses hold when the fix is applied: each pair of tests/workloads/diag_pairs.txt (train_loop
 * with a problem, and with the fix its diagnosis recommends) is traced REPS times, interleaved,
 * then SHAPED_REPS times with its loader bursty and again irregular (train_loop --shape, with the
 * pair's arguments for its shaped variants: a loader where it has none), which must hold alike.
 * Each figure is taken from its least disturbed run, as other work on the machine only adds
 * time (the simulated GPU runs on the same 2 cores; a host woken late from a synchronization
 * leaves the GPU idle after it, which is real but not the program's doing), to the loops and
 * to the idle time or staging the estimates count alike: the fixed variant's fastest run does
 * not get the diagnosis (on a loaded machine, not for more than its runs' spread: below), the
 * problem variant's fastest run and most of its others do; the
 * smallest of the problem variant's estimates is within 0.5x-2x of the measured difference
 * between the variants' loop times (train_loop's own loop_ms, the minimum of the runs). The
 * fastest problem run's own estimate is not used: a loaded batch's fastest run can still carry
 * late wake-ups and slow staging.
 * How far the fastest run of a variant may still be from an undisturbed one is read from the
 * runs themselves: by no more than its median run is from it (on an idle machine the runs agree
 * to a few ms; two CPU-bound processes beside the test spread them by hundreds), so the measured
 * difference is known within [-that of the problem variant, +that of the fixed one], and the
 * 0.5x-2x applies to that range, widened to take in the difference of the medians: a run can
 * also be faster than the others, by what the problem itself costs (a pageable copy's first
 * touch of its 16 MB: the ASan suite's fastest pageable run took 244 ms against a median of 307,
 * the pinned ones 238 and 253, and the estimate of 52.5 ms was the medians' 54). The runs are made in a cgroup favoured over the rest of the
 * machine where one can be made (tr_confine.h): other work then takes a core only when the
 * workload leaves one idle, and the spread stays small on a busy machine too. make bench reports
 * the same pairs against a tighter goal (tests/bench/bench_pairs.py), on a machine left idle. */
#include "an_helpers.h"
#include "tr_confine.h"

#include <stdio.h>
#include <stdlib.h>

#define REPS 5
/* 5 runs a variant in the shaped ones too (39 s on the idle machine; 28 s with 3): with 3, a
 * bursty async-memcpy-pageable fix measured 13.9 ms where the others measured 36 to 83, its
 * estimate 44 out of 0.5x-2x */
#define SHAPED_REPS 5
/* The shaped variants in the plain suite: the ASan build (analyzer-asan) is there for the
 * analyzer's memory, and running them again under it took most of a minute. */
#ifdef __SANITIZE_ADDRESS__
#define SHAPES 0
#else
#define SHAPES 1
#endif


static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double loop_ms(const char *out)
{
    const char *p = out ? strstr(out, "loop_ms=") : NULL;
    return p ? atof(p + 8) : -1;
}

/* One pair: id, env ("-" none, or space-separated NAME=value), common, problem and fixed
 * arguments, in shape `shape` (train_loop --shape, with the pair's arguments for its shaped
 * variants, f[5]; NULL: as it is). */
static int check_pair(char *f[6], const char *shape)
{
    char *env[8] = {NULL}, *save = NULL, envs[512];
    snprintf(envs, sizeof envs, "%s", f[1]);
    int ne = 0;
    for (char *t = strcmp(envs, "-") ? strtok_r(envs, " ", &save) : NULL; t && ne < 7;
         t = strtok_r(NULL, " ", &save))
        env[ne++] = t;
    char common[600];
    if (shape)
        snprintf(common, sizeof common, "%s %s --shape %s", f[2], strcmp(f[5], "-") ? f[5] : "",
                 shape);
    else
        snprintf(common, sizeof common, "%s", f[2]);
    const int reps = shape ? SHAPED_REPS : REPS;
    double best[2] = {1e300, 1e300}, runs[2][REPS], est = 1e300, workers = -1;
    int fired = 0, fastest_fired = 0;
    char fixed_msg[700] = "";
    double fixed_save = 0;
    for (int r = 0; r < reps; r++)
        for (int v = 0; v < 2; v++) {
            char args[1024], name[128], dir[4096], *out;
            snprintf(args, sizeof args, "train_loop %s %s", common, strcmp(f[3 + v], "-") ? f[3 + v] : "");
            snprintf(name, sizeof name, "%s-%s-%d-%d", f[0], shape ? shape : "regular", v, r);
            ASSERT(an_trace_workload(dir, name, args, env, &out));
            double ms = loop_ms(out);
            free(out);
            ASSERT(ms > 0);
            runs[v][r] = ms;
            int fastest = ms < best[v];
            if (fastest)
                best[v] = ms;
            tj *s = an_summary(dir, NULL);
            ASSERT(s);
            const tj *d = an_diag(s, f[0]);
            if (v == 1 && fastest) {
                snprintf(fixed_msg, sizeof fixed_msg, "%s", d ? tj_str(d, "message") : "");
                fixed_save = d ? tj_num(d, "estimated_saving_ns") / 1e6 : 0;
            }
            if (v == 0) {
                if (!d) {
                    const tj *all = tj_get(s, "diagnoses");
                    fprintf(stderr, "%s did not fire on %s; it got:", f[0], args);
                    for (size_t i = 0; all && i < all->n; i++)
                        fprintf(stderr, " %s", tj_str(all->v[i], "id"));
                    fprintf(stderr, "\n");
                }
                fired += d != NULL;
                if (fastest) {
                    fastest_fired = d != NULL;
                    /* the starvation pair's fix is one loader one batch ahead (--prefetch): the
                     * message must recommend that, not more workers than the fix has */
                    workers = d ? tj_num(d, "evidence.loader_workers") : -1;
                }
                if (d && tj_num(d, "estimated_saving_ns") / 1e6 < est)
                    est = tj_num(d, "estimated_saving_ns") / 1e6;
                /* one copy's saving is not offered twice to be added up: pageable-memcpy on
                 * Async copies says that async-memcpy-pageable's saving includes its own */
                const tj *pg = an_diag(s, "pageable-memcpy");
                if (pg && tj_num(pg, "evidence.async_copies") > 0)
                    ASSERT_CONTAINS(tj_str(pg, "message"), "do not add the two");
                if (pg && !strcmp(f[0], "pageable-memcpy"))
                    ASSERT_INT(tj_num(pg, "evidence.async_copies"), ==, 0);
            }
            tj_free(s);
        }
    /* the problem variant is diagnosed in its fastest run and in most others */
    ASSERT(fastest_fired);
    ASSERT_INT(2 * fired, >, reps);
    /* (shaped, a burst of 4 batches' loading outlasts a step: more workers are rightly asked) */
    if (!strcmp(f[0], "dataloader-starvation") && !shape)
        ASSERT_INT(workers, ==, 1);
    double spread[2];
    for (int v = 0; v < 2; v++) {
        qsort(runs[v], (size_t)reps, sizeof runs[v][0], dbl_cmp);
        spread[v] = runs[v][reps / 2] - runs[v][0];
    }
    /* the fixed variant's fastest run gets the diagnosis only for what the disturbance of its
     * runs accounts for (a host woken late after each step's synchronization, on a loaded
     * machine, leaves the GPU idle as a synchronization per kernel would): no more than its
     * slowest run took beyond it, or, as a late wake-up that every run pays alike is no spread
     * (12 syncs 90 us late each beside two CPU hogs: 1.08 ms, against runs 0.90 ms apart), a
     * tenth of what the problem variant was told */
    if (*fixed_msg)
        fprintf(stderr, "%s on the fixed variant's fastest run (its runs %.2f to %.2f ms): %s\n",
                f[0], runs[1][0], runs[1][reps - 1], fixed_msg);
    ASSERT(fixed_save <= runs[1][reps - 1] - runs[1][0] || fixed_save <= 0.1 * est);
    double measured = best[0] - best[1], lo = measured - spread[0], hi = measured + spread[1];
    double medians = runs[0][reps / 2] - runs[1][reps / 2];
    lo = medians < lo ? medians : lo;
    hi = medians > hi ? medians : hi;
    fprintf(stderr, "%s (%s): estimate %.2f ms, measured %.2f ms in [%.2f, %.2f] (loops %.2f vs "
            "%.2f ms, medians %.2f vs %.2f)\n", f[0], shape ? shape : "regular", est, measured,
            lo, hi, best[0], best[1], runs[0][reps / 2], runs[1][reps / 2]);
    ASSERT(hi > 0);
    ASSERT(est >= 0.5 * lo && est <= 2 * hi);
    return 0;
}

/* Every pair of the file: 0, or 1 after the first that failed. */
static int check_pairs(FILE *fp)
{
    char line[1024];
    int pairs = 0;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = 0;
        if (!*line || *line == '#')
            continue;
        char *f[6], *save = NULL, *t = strtok_r(line, "|", &save);
        int n = 0;
        for (; t && n < 6; t = strtok_r(NULL, "|", &save))
            f[n++] = t;
        if (n != 6)
            fprintf(stderr, "%s: expected 6 fields separated by |, found %d\n", AN_PAIRS, n);
        ASSERT_INT(n, ==, 6);
        /* as written, then with its loader bursty and irregular (SHAPED_REPS runs) */
        if (check_pair(f, NULL) || (SHAPES && (check_pair(f, "bursty") || check_pair(f, "irregular"))))
            return 1;
        pairs++;
    }
    ASSERT(pairs >= 3);
    return 0;
}

TEST_IMPL(diag_pairs_price_their_fix)
{
    FILE *fp = fopen(AN_PAIRS, "r");
    ASSERT(fp);
    tr_cgroup g;
    tr_cgroup_favour(&g);
    int rc = check_pairs(fp);
    tr_cgroup_leave(&g);
    fclose(fp);
    return rc;
}

/* The training loop made correct by pinning its batch, with its 4-byte loss read back into
 * pageable memory and then a stream synchronization: pinning the readback would save nothing
 * (the host waits for the same kernels either way), so it is not diagnosed. */
static int readback_not_diagnosed(const char *timing)
{
    char dir[4096], *out, mode[64];
    snprintf(mode, sizeof mode, "CUTRACE_GPU_TIMING=%s", timing);
    char *env[] = {mode, NULL};
    ASSERT(an_trace_workload(dir, timing, "train_loop --iters 20 --loader-ms 2 --memory pinned "
                             "--readback pageable", env, &out));
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *d2h = NULL, *c = tj_get(s, "copies");
    for (size_t i = 0; c && i < c->n; i++)
        if (!strcmp(tj_str(c->v[i], "op"), "D2H"))
            d2h = c->v[i];
    ASSERT(d2h);
    ASSERT_STR(tj_str(d2h, "host_kind"), "pageable");
    if (!strcmp(timing, "all")) /* the table counts the timed copies */
        ASSERT_INT(tj_num(d2h, "count"), ==, 20);
    ASSERT(an_diag(s, "async-memcpy-pageable") == NULL);
    ASSERT(an_diag(s, "pageable-memcpy") == NULL);
    tj_free(s);
    return 0;
}

/* every readback timed, and one operation in 3 timed (the others re-costed from their bytes) */
TEST_IMPL(diag_small_pageable_readback_not_diagnosed)
{
    ASSERT_INT(readback_not_diagnosed("all"), ==, 0);
    ASSERT_INT(readback_not_diagnosed("3"), ==, 0);
    return 0;
}
