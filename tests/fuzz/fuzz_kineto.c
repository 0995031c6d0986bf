/* libFuzzer target: the Kineto JSON reader and HTA's breakdown over whatever bytes come (plain
 * JSON or gzip: zlib decides, as for a file), then the conversion into a cutrace trace, which
 * the format library must read without an error and the model must take (cutrace's own
 * analysis of Kineto traces, analyzer/KINETO.md), seeded with the Kineto traces of HTA's tests
 * decompressed and a few hand-written documents (tests/fuzz/build.mk). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cta_cli.h"
#include "cta_hta.h"
#include "cta_kineto.h"
#include "cta_kineto_conv.h"
#include "cta_load.h"
#include "fz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_input_open("fuzz-kineto");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_input(data, size, 0);
    cta_hta *h = cta_hta_new();
    cta_kmeta meta;
    char err[512];
    int rc = cta_kineto_read(path, cta_hta_event, h, &meta, err, sizeof err);
    if (rc != 0 && rc != -1)
        abort();
    cta_hta_res res;
    cta_hta_result(h, -1, &res);
    /* HTA's identities: the parts add up to the span, none negative but through rounding */
    if (res.kernels && (res.idle_us + res.compute_us + res.non_compute_us != res.kernel_us ||
                        res.compute_us > res.kernel_us))
        abort();
    cta_hta_free(h);
    if (rc != 0)
        return 0;
    char conv[4096];
    if (cta_kineto_convert(path, conv, sizeof conv, &meta, NULL, err, sizeof err) != 0)
        abort(); /* the document was read above: only the disk can fail */
    ct_reader *rd;
    const char *paths[] = {conv};
    if (ct_reader_open(&rd, paths, 1, NULL, err, sizeof err) != 0)
        abort();
    unlink(conv);
    cta_model m;
    if (cta_load_run("fuzz", rd, NULL, 0, &m) != CTA_EXIT_OK)
        abort();
    if (ct_reader_stats(rd, 0)->bad_records || ct_reader_stats(rd, 0)->corrupt_chunks ||
        ct_reader_stats(rd, 0)->late_records)
        abort(); /* the writer's records are well formed and in time order */
    cta_load_close(rd, &m);
    return 0;
}
