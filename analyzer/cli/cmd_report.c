/* `cutrace report [OPTIONS] PATH... -o FILE.html`: the command line of the report's page
 * (cta_html_report.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cta_analysis.h"
#include "cta_cmd.h"
#include "cta_html_report.h"
#include "cta_load.h"

static const char usage[] =
    "usage: cutrace report [OPTIONS] PATH... -o FILE.html\n"
    "\n"
    "One self-contained HTML page of the traces in PATH (trace files, or directories holding\n"
    "them; PyTorch profiler traces too): the run, a verdict, plots (GPU utilization over time\n"
    "with the idle time by cause, host state, VRAM, the breakdown, kernels, copies, ranks,\n"
    "NVTX steps), every diagnosis as a card and a zoomable overview of the busiest stretch.\n"
    "It holds the `cutrace summary --json` document of the same options and draws it with its\n"
    "own script: open it in any browser, offline; nothing is fetched.\n"
    "\n"
    "  -o, --output FILE  the page to write (replaced only once it is complete)\n"
    "  --title TEXT       the page's title [cutrace report]\n"
    CTA_ANALYSIS_USAGE
    "\n"
    "Without --series-bins each time series has at most 1024 bins, fewer with many devices\n"
    "(16384 in all); without --overview the overview has at most 3000 slices.\n"
    "\n"
    "Prints \"cutrace report: wrote FILE ...\" on stderr, nothing on stdout.\n"
    "Exit status: 0 done, 1 the page could not be written, 2 usage error, 3 unreadable input.\n";

int cta_cmd_report(int argc, char **argv)
{
    enum { OPT_TITLE = 'T' };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"title", required_argument, NULL, OPT_TITLE},
        {"help", no_argument, NULL, 'h'}, CTA_ANALYSIS_LONGOPTS, {NULL, 0, NULL, 0}};
    const char *out = NULL, *title = "cutrace report";
    cta_analysis_opts ao;
    cta_analysis_defaults(&ao);
    ao.overview = CTA_HTML_OVERVIEW_SLICES; /* the page always has one; --overview N changes N */
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:" CTA_ANALYSIS_SHORTOPTS, opts, NULL)) != -1) {
        int used = cta_analysis_option("report", c, optarg, &ao);
        if (used == CTA_EXIT_USAGE)
            return used;
        if (used)
            continue;
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case OPT_TITLE:
            title = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return CTA_EXIT_OK;
        case ':':
            return cta_cli_usage_error("report", "%s expects a value", argv[optind - 1]);
        default:
            return cta_cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!out || !*out)
        return cta_cli_usage_error("report", "expected -o FILE.html (the page to write)");
    if (optind >= argc)
        return cta_cli_usage_error("report", "expected at least one trace file or directory");
    cta_analysis a;
    int rc = cta_analysis_run("report", argv + optind, argc - optind, &ao, &a);
    if (rc != CTA_EXIT_OK)
        return rc;
    cta_html_page p = {.title = title};
    uint64_t start = cta_load_start(a.rd);
    p.timeline_offset_ns = a.m.t0 > start ? a.m.t0 - start : 0;
    if (!ao.ropt.series_bins)
        ao.ropt.series_bins = cta_html_series_bins(&a.m);
    char *json = cta_html_data(&a.m, a.dg, a.ndiag, &ao.ropt, &p.json_len);
    cta_analysis_free(&a);
    if (!json) {
        fprintf(stderr, "cutrace report: error: %s: out of memory\n", out);
        return CTA_EXIT_FAIL;
    }
    p.json = json;
    rc = cta_html_write(out, &p);
    if (rc == CTA_EXIT_OK) {
        struct stat st;
        fprintf(stderr, "cutrace report: wrote %s (%lld bytes; open it in a browser)\n", out,
                stat(out, &st) == 0 ? (long long)st.st_size : -1LL);
    }
    free(json);
    return rc;
}
