#include "cta_analysis.h"

#include <stdio.h>
#include <stdlib.h>

#include "cta_cli.h"
#include "cta_feature.h"
#include "cta_load.h"

void cta_analysis_defaults(cta_analysis_opts *o)
{
    *o = (cta_analysis_opts){.dopt = {.min_saving_pct = 1.0}, .ropt = {.top = 25},
                             .jobs = cta_load_default_jobs()};
    o->ropt.diag = &o->dopt;
}

static int parse_num(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && *end == 0 && *out >= 0;
}

int cta_analysis_option(const char *cmd, int c, const char *arg, cta_analysis_opts *o)
{
    double x;
    switch (c) {
    case CTA_OPT_MIN_SAVING:
        if (!parse_num(arg, &x) || x > 100)
            return cta_cli_usage_error(cmd, "--min-saving expects a percentage 0..100, got '%s'", arg);
        o->dopt.min_saving_pct = x;
        return 1;
    case CTA_OPT_TOP:
        if (!parse_num(arg, &x))
            return cta_cli_usage_error(cmd, "--top expects a row count, got '%s'", arg);
        o->ropt.top = (int)x;
        return 1;
    case CTA_OPT_VARIANTS:
        o->ropt.variants = 1;
        return 1;
    case CTA_OPT_UTIL_WINDOW:
        if (!parse_num(arg, &x) || x <= 0)
            return cta_cli_usage_error(cmd, "--util-window expects milliseconds > 0, got '%s'", arg);
        o->dopt.util_window_ns = (uint64_t)(x * 1e6);
        return 1;
    case CTA_OPT_SERIES_BINS:
        if (!parse_num(arg, &x) || x < 1 || x != (uint32_t)x)
            return cta_cli_usage_error(cmd, "--series-bins expects a whole number of bins >= 1, got '%s'", arg);
        o->ropt.series_bins = (uint32_t)x;
        return 1;
    case CTA_OPT_OVERVIEW:
        /* a million slices are far more than a page draws, and bound the memory (~60 MB) */
        if (!parse_num(arg, &x) || x < 1 || x > 1000000 || x != (uint32_t)x)
            return cta_cli_usage_error(cmd, "--overview expects a slice count 1..1000000, got '%s'", arg);
        o->overview = (uint32_t)x;
        return 1;
    case CTA_OPT_JOBS:
    case 'j':
        if (!parse_num(arg, &x) || x < 1 || x > CTA_MAX_JOBS || x != (int)x)
            return cta_cli_usage_error(cmd, "-j/--jobs expects a number of jobs 1..%d, got '%s'",
                                       CTA_MAX_JOBS, arg);
        o->jobs = (int)x;
        return 1;
    }
    return 0;
}

/* The features' second pass (cta_feature.h: what the first could not join, as a GPU record
 * that came before the call it belongs to) over the same files, one file after another: a
 * record joins only records of its own file, so the order across files is no matter, and one
 * file's decoding is held at a time. */
static int feature_pass2(const char *cmd, char *const *paths, int npaths, uint64_t types,
                         cta_model *m)
{
    ct_reader *rd;
    int rc = cta_load_open(cmd, paths, npaths, 1, &rd);
    if (rc != CTA_EXIT_OK)
        return rc;
    ct_rec r;
    int got = 0;
    uint32_t f = 0;
    for (; f < ct_reader_nfiles(rd) && got >= 0; f++)
        while ((got = ct_reader_next_in(rd, f, &r)) > 0)
            if (r.type < 64 && (types >> r.type & 1)) /* a damaged record's type may be any */
                cta_feature_pass2_record(m, &r);
    if (got < 0)
        fprintf(stderr, "cutrace %s: error: %s\n", cmd, ct_reader_error_in(rd, f - 1));
    ct_reader_close(rd);
    if (got < 0)
        return CTA_EXIT_INPUT;
    cta_feature_pass2_finish(m);
    return CTA_EXIT_OK;
}

/* The overview's slices, collected per file (cta_file_observers) and merged in file order. */
static void *overview_begin(void *ctx, uint32_t file, const cta_model *m, cta_observer *obs)
{
    (void)file, (void)m;
    cta_overview *part = cta_overview_part(ctx);
    *obs = cta_overview_observer(part);
    return part;
}

static int overview_end(void *ctx, uint32_t file, void *state, const cta_model *m, const cta_model *part)
{
    (void)file, (void)part;
    if (m)
        cta_overview_merge(ctx, state, m);
    cta_overview_free(state);
    return 0;
}

int cta_analysis_run(const char *cmd, char *const *paths, int npaths, cta_analysis_opts *o,
                     cta_analysis *a)
{
    *a = (cta_analysis){0};
    if (o->overview && !(a->ov = cta_overview_find(cmd, paths, npaths, o->overview, o->jobs)))
        return CTA_EXIT_INPUT;
    cta_file_observers fo = {.ctx = a->ov, .begin = overview_begin, .end = overview_end};
    int rc = cta_load_open(cmd, paths, npaths, 1, &a->rd);
    if (rc == CTA_EXIT_OK) {
        rc = cta_load_run_jobs(cmd, a->rd, a->ov ? &fo : NULL, o->ropt.variants, o->jobs, &a->m);
        if (rc != CTA_EXIT_OK)
            ct_reader_close(a->rd);
    }
    if (rc != CTA_EXIT_OK) {
        cta_overview_free(a->ov);
        return rc;
    }
    o->ropt.overview = a->ov;
    uint64_t types = cta_feature_pass2_types(&a->m);
    if (types && (rc = feature_pass2(cmd, paths, npaths, types, &a->m)) != CTA_EXIT_OK) {
        cta_analysis_free(a);
        return rc;
    }
    a->ndiag = cta_diagnose(&a->m, &o->dopt, &a->dg);
    return CTA_EXIT_OK;
}

void cta_analysis_free(cta_analysis *a)
{
    free(a->dg);
    cta_overview_free(a->ov);
    cta_load_close(a->rd, &a->m);
}
