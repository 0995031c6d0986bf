/* The analysis `summary` and `report` share: the options both take (CTA_ANALYSIS_LONGOPTS,
 * CTA_ANALYSIS_USAGE, cta_analysis_option), and the pass that turns trace files into a finished
 * model (with its features' second pass, cta_feature.h) and its diagnoses (cta_analysis_run).
 * One place, so that a report shows the numbers `summary --json` prints with the same options. */
#ifndef CTA_ANALYSIS_H
#define CTA_ANALYSIS_H

#include <getopt.h>

#include "cta_diag.h"
#include "cta_overview.h"
#include "cta_report.h"

typedef struct {
    cta_diag_opts dopt;
    cta_report_opts ropt; /* ropt.diag points at dopt (cta_analysis_defaults) */
    uint32_t overview;    /* slices of the JSON's overview (cta_overview.h), 0: none */
    int jobs;             /* files modelled at once (cta_load_run_jobs) */
} cta_analysis_opts;

void cta_analysis_defaults(cta_analysis_opts *o);

/* getopt_long entries for the shared options; their codes are below 32 so no command's own
 * short letters collide with them. */
enum { CTA_OPT_MIN_SAVING = 1, CTA_OPT_TOP, CTA_OPT_VARIANTS, CTA_OPT_UTIL_WINDOW, CTA_OPT_SERIES_BINS,
       CTA_OPT_OVERVIEW, CTA_OPT_JOBS };
#define CTA_ANALYSIS_LONGOPTS                                                  \
    {"min-saving", required_argument, NULL, CTA_OPT_MIN_SAVING},               \
    {"top", required_argument, NULL, CTA_OPT_TOP},                             \
    {"variants", no_argument, NULL, CTA_OPT_VARIANTS},                         \
    {"util-window", required_argument, NULL, CTA_OPT_UTIL_WINDOW},             \
    {"series-bins", required_argument, NULL, CTA_OPT_SERIES_BINS},             \
    {"overview", required_argument, NULL, CTA_OPT_OVERVIEW},                   \
    {"jobs", required_argument, NULL, CTA_OPT_JOBS}
/* -j N is --jobs N: a command's short options include CTA_ANALYSIS_SHORTOPTS */
#define CTA_ANALYSIS_SHORTOPTS "j:"
#define CTA_ANALYSIS_USAGE                                                                          \
    "  --min-saving PCT   report a diagnosis only if its estimated saving is at least PCT% of\n"   \
    "                     the window [1]\n"                                                         \
    "  --top N            rows per text table, 0 for all [25]\n"                                   \
    "  --variants         also a table per kernel grid/block configuration\n"                      \
    "  --util-window MS   window of the low-utilization analysis [the largest of 10 ms,\n"         \
    "                     window/100 and 4 periods of the loop]\n"                                \
    "  --series-bins N    JSON time series (utilization, memory in use) in at most N bins,\n"   \
    "                     merging neighbours [1024: as kept]\n"                                  \
    "  --overview N       JSON: the busiest stretch of the run as at most N slices (at\n"       \
    "                     most 1000000; a timeline overview; one more pass over the traces)\n"\
    CTA_JOBS_USAGE
#define CTA_JOBS_USAGE                                                                              \
    "  -j, --jobs N       read and model N trace files at once [all processors online]; the\n"  \
    "                     output is the same for any N\n"

#define CTA_MAX_JOBS 1024
/* Applies getopt_long's answer c (with arg) if it is a shared option: returns 1 when applied,
 * 0 when c is not one of them, CTA_EXIT_USAGE after printing what was wrong with arg. */
int cta_analysis_option(const char *cmd, int c, const char *arg, cta_analysis_opts *o);

typedef struct {
    ct_reader *rd;
    cta_model m;
    cta_diag *dg;
    int ndiag;
    cta_overview *ov;     /* with opts' overview, else NULL */
} cta_analysis;

/* Reads the traces in paths into a->m (with the features' second pass over them when a feature
 * asks for one: cta_feature_pass2_types) and diagnoses it. With o->overview, first finds the run's
 * busiest stretch (a pass over the records) and collects its slices in the model's pass
 * (o->ropt.overview is set to them). Returns CTA_EXIT_OK (free a with
 * cta_analysis_free) or CTA_EXIT_INPUT after printing why (nothing to free). */
int cta_analysis_run(const char *cmd, char *const *paths, int npaths, cta_analysis_opts *o,
                     cta_analysis *a);
void cta_analysis_free(cta_analysis *a);

#endif
