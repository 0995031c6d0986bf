/* libFuzzer target: the trace format reader over a whole file image (see fz.h). Each input is
 * read as is and with its checksums repaired, through a memfd so the reader sees a real file. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fz.h"

static int fz_fd = -1;
static char fz_path[64];

static void fz_load(const uint8_t *data, size_t size)
{
    if (ftruncate(fz_fd, 0) != 0 || pwrite(fz_fd, data, size, 0) != (ssize_t)size)
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
    if (fz_fd < 0)
        abort();
    snprintf(fz_path, sizeof fz_path, "/proc/self/fd/%d", fz_fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_load(data, size);
    fz_read_all(fz_path);
    uint8_t *fixed = malloc(size ? size : 1);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    fz_fix_checksums(fixed, size);
    fz_load(fixed, size);
    fz_read_all(fz_path);
    free(fixed);
    return 0;
}
