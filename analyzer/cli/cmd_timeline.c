/* `cutrace timeline PATH... -o FILE.json`: the command line of the timeline (cta_timeline.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_cmd.h"
#include "cta_load.h"
#include "cta_timeline.h"

static const char usage[] =
    "usage: cutrace timeline [OPTIONS] PATH... -o FILE.json\n"
    "\n"
    "Writes a Chrome Trace Event / Perfetto timeline (open it in https://ui.perfetto.dev) of the\n"
    "traces in PATH (trace files or directories; PyTorch profiler traces too): host threads\n"
    "with their CUDA calls, one track per GPU stream, arrows from calls to their GPU work, NVTX\n"
    "ranges and marks on tracks per thread and domain, memory and bandwidth counters; every\n"
    "process and rank on one time axis.\n"
    "\n"
    "  -o, --output FILE  where to write the JSON (required; - for stdout)\n"
    "  --from MS          only events ending after MS milliseconds from the trace start\n"
    "  --to MS            only events starting before MS milliseconds from the trace start\n"
    "  --pid PID          only this process\n"
    "  --driver-calls     also the driver calls made inside runtime calls\n"
    "  --max-events N     stop after N events, with a warning saying where (default 2000000,\n"
    "                     about what ui.perfetto.dev opens comfortably; 0: no limit)\n"
    "\n"
    "Exit status: 0 done, 2 usage error, 3 unreadable input.\n";

int cta_cmd_timeline(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"from", required_argument, NULL, 'f'},
                                         {"to", required_argument, NULL, 't'},
                                         {"pid", required_argument, NULL, 'p'},
                                         {"max-events", required_argument, NULL, 'm'},
                                         {"driver-calls", no_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    double from = 0, to = 0;
    long pid = -1;
    unsigned long long max_events = CTA_TL_MAX_EVENTS;
    int c, driver_calls = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'f':
        case 't': {
            double v = strtod(optarg, &end);
            if (end == optarg || *end || v < 0)
                return cta_cli_usage_error("timeline", "--%s expects milliseconds >= 0, got '%s'",
                                          c == 'f' ? "from" : "to", optarg);
            if (c == 'f')
                from = v;
            else
                to = v;
            break;
        }
        case 'p':
            pid = strtol(optarg, &end, 10);
            if (end == optarg || *end || pid < 0)
                return cta_cli_usage_error("timeline", "--pid expects a process id, got '%s'", optarg);
            break;
        case 'd':
            driver_calls = 1;
            break;
        case 'm':
            max_events = strtoull(optarg, &end, 10);
            if (end == optarg || *end || *optarg == '-')
                return cta_cli_usage_error("timeline", "--max-events expects a count, got '%s'", optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return CTA_EXIT_OK;
        default:
            return cta_cli_usage_error("timeline", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!out)
        return cta_cli_usage_error("timeline", "expected -o FILE.json");
    if (optind >= argc)
        return cta_cli_usage_error("timeline", "expected at least one trace file or directory");
    if (to && to < from)
        return cta_cli_usage_error("timeline", "--to (%g) is before --from (%g)", to, from);
    /* the inputs first: nothing is created when they cannot be read */
    ct_reader *rd;
    int rc = cta_load_open("timeline", argv + optind, argc - optind, 0, &rd);
    if (rc != CTA_EXIT_OK)
        return rc;
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "cutrace timeline: error: %s: cannot create the output file: %m\n", out);
        ct_reader_close(rd);
        return CTA_EXIT_FAIL;
    }
    cta_timeline_opts o = {.from = from, .to = to, .pid = pid, .max_events = max_events,
                           .driver_calls = driver_calls};
    cta_timeline_result res;
    rc = cta_timeline_write(f, rd, &o, &res);
    ct_reader_close(rd);
    int werr = ferror(f);
    if (f != stdout && fclose(f) != 0)
        werr = 1;
    if (rc == CTA_EXIT_OK && werr) {
        fprintf(stderr, "cutrace timeline: error: %s: write failed\n", out);
        rc = CTA_EXIT_FAIL;
    } else if (rc == CTA_EXIT_OK && f != stdout) {
        fprintf(stderr, "cutrace timeline: wrote %llu events to %s (open it in https://ui.perfetto.dev)\n",
                (unsigned long long)res.events, out);
    }
    if (rc == CTA_EXIT_OK)
        cta_timeline_warnings(&res, out);
    return rc;
}
