/* `cutrace summary PATH...`: the tables and diagnoses of cta_report.h, as text or --json. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_cli.h"
#include "cta_diag.h"
#include "cta_load.h"
#include "cta_report.h"

static const char usage[] =
    "usage: cutrace summary [OPTIONS] PATH...\n"
    "\n"
    "Tables (run, kernels, copies, CUDA API, VRAM, host-vs-GPU breakdown, ranks) and diagnoses\n"
    "of the traces in PATH (trace files, or directories holding them: every process and rank).\n"
    "\n"
    "  --json             one JSON document (schema: analyzer/JSON.md)\n"
    "  --min-saving PCT   report a diagnosis only if its estimated saving is at least PCT% of\n"
    "                     the window [1]\n"
    "  --top N            rows per text table, 0 for all [25]\n"
    "  --variants         also a table per kernel grid/block configuration\n"
    "  --util-window MS   window of the low-utilization analysis [the largest of 10 ms,\n"
    "                     window/100 and 4 periods of the loop]\n"
    "\n"
    "Exit status: 0 done, 2 usage error, 3 unreadable input.\n";

/* The GPU records of the kernels that cuBLAS GEMM calls launched, in a second pass over the
 * same files (cta_gemm.h: a kernel's GPU record may come before the call it nests in). */
static int gemm_gpu_pass(char *const *paths, int npaths, cta_model *m)
{
    ct_reader *rd;
    int rc = cta_load_open("summary", paths, npaths, &rd);
    if (rc != CTA_EXIT_OK)
        return rc;
    ct_rec r;
    int got;
    while ((got = ct_reader_next(rd, &r)) > 0)
        if (r.type == CT_REC_GPU)
            cta_gemm_gpu(m->gemm, r.file, &r.u.gpu, r.ts);
    if (got < 0)
        fprintf(stderr, "cutrace summary: error: %s\n", ct_reader_error(rd));
    ct_reader_close(rd);
    return got < 0 ? CTA_EXIT_INPUT : CTA_EXIT_OK;
}

static const ct_rec_device *gemm_device(void *ctx, uint32_t file, uint32_t device, const char **name)
{
    const cta_model *m = ctx;
    if (file >= m->nprocs || device >= CTA_MAX_DEV || !m->procs[file].dev[device].have_prop)
        return NULL;
    *name = m->procs[file].dev[device].name;
    return &m->procs[file].dev[device].prop;
}

static int parse_num(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end != s && *end == 0 && *out >= 0;
}

int cta_cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},         {"min-saving", required_argument, NULL, 'm'},
        {"top", required_argument, NULL, 't'},    {"variants", no_argument, NULL, 'v'},
        {"util-window", required_argument, NULL, 'u'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int json = 0;
    cta_diag_opts dopt = {.min_saving_pct = 1.0};
    cta_report_opts ropt = {.top = 25, .diag = &dopt};
    double x;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = 1;
            break;
        case 'm':
            if (!parse_num(optarg, &x) || x > 100)
                return cta_cli_usage_error("summary", "--min-saving expects a percentage 0..100, got '%s'", optarg);
            dopt.min_saving_pct = x;
            break;
        case 't':
            if (!parse_num(optarg, &x))
                return cta_cli_usage_error("summary", "--top expects a row count, got '%s'", optarg);
            ropt.top = (int)x;
            break;
        case 'v':
            ropt.variants = 1;
            break;
        case 'u':
            if (!parse_num(optarg, &x) || x <= 0)
                return cta_cli_usage_error("summary", "--util-window expects milliseconds > 0, got '%s'", optarg);
            dopt.util_window_ns = (uint64_t)(x * 1e6);
            break;
        case 'h':
            fputs(usage, stdout);
            return CTA_EXIT_OK;
        default:
            return cta_cli_usage_error("summary", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cta_cli_usage_error("summary", "expected at least one trace file or directory");
    ct_reader *rd;
    cta_model m;
    int rc = cta_load("summary", argv + optind, argc - optind, NULL, ropt.variants, &rd, &m);
    if (rc != CTA_EXIT_OK)
        return rc;
    cta_gemm_row *gemm = NULL;
    if (m.gemm) {
        if ((rc = gemm_gpu_pass(argv + optind, argc - optind, &m)) != CTA_EXIT_OK) {
            cta_load_close(rd, &m);
            return rc;
        }
        ropt.ngemm = cta_gemm_rows(m.gemm, gemm_device, &m, &gemm);
        ropt.gemm = gemm;
    }
    cta_diag *dg;
    int n = cta_diagnose(&m, &dopt, &dg);
    if (json)
        cta_report_json(stdout, &m, dg, n, &ropt);
    else
        cta_report_text(stdout, &m, dg, n, &ropt);
    free(dg);
    free(gemm);
    cta_load_close(rd, &m);
    return fflush(stdout) == 0 ? CTA_EXIT_OK : CTA_EXIT_FAIL;
}
