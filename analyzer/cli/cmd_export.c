/* `cutrace export --sqlite OUT.sqlite | --csv DIR PATH...`: the command line of the export
 * (cta_export.h). */
#include <getopt.h>
#include <stdio.h>

#include "cta_analysis.h"
#include "cta_cmd.h"
#include "cta_export.h"
#include "cta_load.h"

static const char usage[] =
    "usage: cutrace export (--sqlite FILE.sqlite | --csv DIR) [OPTIONS] PATH...\n"
    "\n"
    "Writes the traces in PATH (trace files or directories; PyTorch profiler traces too) as\n"
    "tables: kernels, copies, sets, CUDA API calls and NVTX events in the tables of Nsight\n"
    "Systems' SQLite export (CUPTI_ACTIVITY_KIND_KERNEL, ..._MEMCPY, ..._MEMSET, ..._RUNTIME,\n"
    "NVTX_EVENTS, StringIds),\n"
    "and cutrace's own: CUTRACE_PROCESSES, CUTRACE_ALLOCATIONS (with call sites),\n"
    "CUTRACE_BREAKDOWN, CUTRACE_DIAGNOSES. Times in ns from the earliest trace start.\n"
    "\n"
    "  --sqlite FILE      one SQLite database (replaced once complete), with views\n"
    "                     CUTRACE_TOP_KERNELS, CUTRACE_COPIES_BY_KIND, CUTRACE_API_SUMMARY,\n"
    "                     CUTRACE_GPU_GAPS\n"
    "  --csv DIR          gzip-compressed CSV, DIR/TABLE/trace-N.csv.gz per table and trace\n"
    "                     (DIR/TABLE/all.csv.gz for StringIds and the ENUM tables), and\n"
    "                     DIR/schema.sql (column names and types); RFC 4180 with CRLF, a\n"
    "                     text starting with = + - @ tab CR or ' quoted with a ' before it\n"
    "                     (no spreadsheet formula; analyzer/SQLITE.md)\n"
    "  --min-saving PCT   diagnoses whose estimated saving is at least PCT% of the window [1]\n"
    "  --util-window MS   window of the low-utilization diagnosis (as cutrace summary's)\n"
    CTA_JOBS_USAGE
    "\n"
    "Exit status: 0 done, 1 the output could not be written, 2 usage error, 3 unreadable input.\n";

int cta_cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {{"sqlite", required_argument, NULL, 's'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         CTA_ANALYSIS_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
    const char *sqlite = NULL, *csv = NULL;
    cta_analysis_opts ao;
    cta_analysis_defaults(&ao);
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h" CTA_ANALYSIS_SHORTOPTS, opts, NULL)) != -1) {
        /* the diagnoses' options only: the others shape the summary's tables and JSON */
        if (c == CTA_OPT_MIN_SAVING || c == CTA_OPT_UTIL_WINDOW || c == CTA_OPT_JOBS || c == 'j') {
            if (cta_analysis_option("export", c, optarg, &ao) == CTA_EXIT_USAGE)
                return CTA_EXIT_USAGE;
        } else if (c == 's') {
            sqlite = optarg;
        } else if (c == 'c') {
            csv = optarg;
        } else if (c == 'h') {
            fputs(usage, stdout);
            return CTA_EXIT_OK;
        } else if (c > 0 && c < 32) {
            return cta_cli_usage_error("export", "of summary's options, export takes --min-saving, "
                                                 "--util-window and --jobs only (the others shape its "
                                                 "tables)");
        } else {
            return cta_cli_usage_error("export", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!sqlite == !csv)
        return cta_cli_usage_error("export", "expected one of --sqlite FILE or --csv DIR");
    if (optind >= argc)
        return cta_cli_usage_error("export", "expected at least one trace file or directory");
    ct_reader *rd;
    int rc = cta_load_open("export", argv + optind, argc - optind, 1, &rd);
    if (rc != CTA_EXIT_OK)
        return rc;
    cta_tables *t = sqlite ? cta_tables_sqlite(sqlite) : cta_tables_csv(csv);
    if (!t) {
        ct_reader_close(rd);
        return CTA_EXIT_FAIL;
    }
    uint64_t rows;
    rc = cta_export_write(t, rd, &ao.dopt, ao.jobs, &rows);
    if (rc == CTA_EXIT_OK)
        fprintf(stderr, "cutrace export: wrote %llu rows to %s\n", (unsigned long long)rows,
                sqlite ? sqlite : csv);
    ct_reader_close(rd);
    return rc;
}
