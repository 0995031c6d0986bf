/* `cutrace dump`: every record of one or more traces (files, or directories of them, as for the
 * other commands) as one line of text, for debugging the tracer and the format. By default each
 * file in turn, in file order, with a line per chunk;
 * --time-order merges the files in time order as the other commands see them. The lines are
 * output/cta_dump.c's. */
#include "cta_cmd.h"
#include "cta_dump.h"
#include "cta_paths.h"

#include <stdio.h>
#include <string.h>

static const char *const cta_dump_usage =
    "usage: cutrace dump [--time-order] PATH...\n"
    "  Prints the file header, then every chunk and record, one per line. A PATH is a trace\n"
    "  file or a directory of them (every trace below it, sorted by path).\n"
    "  --time-order  records of all files merged in time order, without chunk lines\n"
    "exit status: 0 ok (damage is reported as warnings on stderr), 2 usage, 3 unreadable input\n";

int cta_cmd_dump(int argc, char **argv)
{
    ct_reader_opts opts = {.file_order = 1, .chunk_records = 1};
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "--time-order")) {
            opts.file_order = 0;
            opts.chunk_records = 0;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(cta_dump_usage, stdout);
            return CTA_EXIT_OK;
        } else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            return cta_cli_usage_error("dump", "unknown option '%s'", argv[i]);
        }
    }
    if (i >= argc)
        return cta_cli_usage_error("dump", "no trace file given");
    char **files;
    size_t nf;
    if (cta_paths_expand("dump", argv + i, argc - i, &files, &nf) != 0)
        return CTA_EXIT_INPUT;
    ct_reader *r;
    int rc = cta_cli_open(&r, files, nf, &opts);
    cta_paths_free(files);
    if (rc != CTA_EXIT_OK)
        return rc;
    rc = cta_dump_trace(stdout, r, opts.file_order);
    ct_reader_close(r);
    if (fflush(stdout) != 0)
        rc = CTA_EXIT_FAIL;
    return rc;
}
