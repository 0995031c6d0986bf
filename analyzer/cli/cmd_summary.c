/* `cutrace summary PATH...`: the tables and diagnoses of cta_report.h, as text or --json. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_analysis.h"
#include "cta_cmd.h"
#include "cta_json_report.h"
#include "cta_kineto_report.h"
#include "cta_paths.h"

static const char usage[] =
    "usage: cutrace summary [OPTIONS] PATH...\n"
    "\n"
    "Tables (run, kernels, copies, CUDA API, VRAM, host-vs-GPU breakdown, ranks) and diagnoses\n"
    "of the traces in PATH (trace files, or directories holding them: every process and rank).\n"
    "PyTorch profiler (Kineto) traces, .json or .json.gz, are analysed the same way, and get\n"
    "HTA's breakdown too (analyzer/KINETO.md).\n"
    "\n"
    "  --json             one JSON document (schema: analyzer/JSON.md)\n"
    CTA_ANALYSIS_USAGE
    "\n"
    "Exit status: 0 done, 2 usage error, 3 unreadable input.\n";

int cta_cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'J'}, {"help", no_argument, NULL, 'h'}, CTA_ANALYSIS_LONGOPTS,
        {NULL, 0, NULL, 0}};
    int json = 0;
    cta_analysis_opts ao;
    cta_analysis_defaults(&ao);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h" CTA_ANALYSIS_SHORTOPTS, opts, NULL)) != -1) {
        int used = cta_analysis_option("summary", c, optarg, &ao);
        if (used == CTA_EXIT_USAGE)
            return used;
        if (used)
            continue;
        switch (c) {
        case 'J':
            json = 1;
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
    /* Kineto (PyTorch profiler) traces, recognised by content, take their own path */
    int kineto = cta_paths_kineto(argv + optind, argc - optind);
    if (kineto < 0)
        return cta_cli_usage_error("summary", "expected either cutrace traces or Kineto traces, "
                                              "found both");
    cta_kineto_hta *hta = NULL;
    if (kineto) {
        int rc = cta_kineto_hta_run("summary", argv + optind, argc - optind, &hta);
        if (rc != CTA_EXIT_OK)
            return rc;
        ao.ropt.hta = hta;
    }
    cta_analysis a;
    int rc = cta_analysis_run("summary", argv + optind, argc - optind, &ao, &a);
    if (rc != CTA_EXIT_OK) {
        cta_kineto_hta_free(hta);
        return rc;
    }
    if (json)
        cta_report_json(stdout, &a.m, a.dg, a.ndiag, &ao.ropt);
    else
        cta_report_text(stdout, &a.m, a.dg, a.ndiag, &ao.ropt);
    cta_analysis_free(&a);
    cta_kineto_hta_free(hta);
    return fflush(stdout) == 0 ? CTA_EXIT_OK : CTA_EXIT_FAIL;
}
