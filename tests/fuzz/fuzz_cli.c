/* libFuzzer target: every cutrace command that parses a trace (fz_commands: dump in file and
 * time order, summary as text and JSON, with the report's overview and merged series, timeline, export
 * to SQLite and CSV) over a whole file image with its checksums
 * repaired (the reader's own target covers the checksum paths). The analyzer is linked whole,
 * its main() renamed cta_main by the build, so inputs take the real command-line path.
 * Run with -close_fd_mask=3: the commands' output and warnings are not the fuzzer's. */
#include <stdio.h>
#include <stdlib.h>

#include "fz.h"

int cta_main(int argc, char **argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_input_open("fuzz-trace");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_input(data, size, 1);
    for (size_t c = 0; fz_commands[c]; c++) {
        char *argv[17];
        argv[0] = "cutrace";
        int argc = 1 + fz_argv(c, path, argv + 1);
        int rc = cta_main(argc, argv);
        fz_scratch_remove();
        /* 0 (read, damage warned about) or 3 (unreadable); anything else is a bug. */
        if (rc != 0 && rc != 3) {
            fprintf(stderr, "fuzz_cli: cutrace %s exited %d\n", fz_commands[c][0], rc);
            abort();
        }
    }
    return 0;
}
