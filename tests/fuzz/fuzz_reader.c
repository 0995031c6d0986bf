/* libFuzzer target: the trace format reader over a whole file image (see fz.h). Each input is
 * read as is and with its checksums repaired, through a memfd so the reader sees a real file. */
#include "fz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_input_open("fuzz-trace");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_read_all(fz_input(data, size, 0));
    fz_read_all(fz_input(data, size, 1));
    return 0;
}
