/* libFuzzer target: the Kineto JSON reader and HTA's breakdown over whatever bytes come (plain
 * JSON or gzip: zlib decides, as for a file), seeded with the Kineto traces of HTA's tests
 * decompressed and a few hand-written documents (tests/fuzz/build.mk). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cta_hta.h"
#include "cta_kineto.h"

static int fz_fd = -1;
static char fz_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_fd = memfd_create("fuzz-kineto", MFD_CLOEXEC);
    if (fz_fd < 0)
        abort();
    snprintf(fz_path, sizeof fz_path, "/proc/self/fd/%d", fz_fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (ftruncate(fz_fd, 0) != 0 || pwrite(fz_fd, data, size, 0) != (ssize_t)size)
        abort();
    cta_hta *h = cta_hta_new();
    cta_kmeta meta;
    char err[512];
    int rc = cta_kineto_read(fz_path, cta_hta_event, h, &meta, err, sizeof err);
    if (rc != 0 && rc != -1)
        abort();
    cta_hta_res res;
    cta_hta_result(h, -1, &res);
    /* HTA's identities: the parts add up to the span, none negative but through rounding */
    if (res.kernels && (res.idle_us + res.compute_us + res.non_compute_us != res.kernel_us ||
                        res.compute_us > res.kernel_us))
        abort();
    cta_hta_free(h);
    return 0;
}
