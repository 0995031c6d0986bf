/* tracestat: what a trace costs on disk, for the trace-size benchmark (run_bench.py).
 *
 *   tracestat FILE...
 *
 * Reads the files through the format library in file order with chunk boundaries and prints
 *   tracestat: files=N file_bytes=B records=R raw_bytes=U payload_bytes=P chunks=C lost=L
 *   tracestat: TYPE=COUNT ...                  (records per type, e.g. api=... launch=...)
 * file_bytes: the files' sizes; raw_bytes: the chunks' decoded payloads (the records as encoded,
 * before zstd); payload_bytes: the payloads as stored; lost: records the tracer reported lost.
 * Exit status 1 if a file cannot be read. */
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cttrace.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("usage: tracestat FILE...\n", stderr);
        return 2;
    }
    uint64_t file_bytes = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        file_bytes += (uint64_t)st.st_size;
    }
    ct_reader_opts o = {.file_order = 1, .chunk_records = 1};
    ct_reader *r;
    char err[512];
    if (ct_reader_open(&r, (const char *const *)argv + 1, (size_t)argc - 1, &o, err, sizeof err)) {
        fprintf(stderr, "tracestat: %s\n", err);
        return 1;
    }
    uint64_t by_type[CT_REC_TYPE_LIMIT] = {0}, records = 0, raw = 0, payload = 0, chunks = 0,
             other = 0;
    ct_rec rec;
    int rc;
    while ((rc = ct_reader_next(r, &rec)) == 1) {
        if (rec.type == CT_REC_CHUNK) {
            chunks++;
            raw += rec.u.chunk.raw_size;
            payload += rec.u.chunk.payload_size;
            continue;
        }
        records++;
        if (rec.type < CT_REC_TYPE_LIMIT)
            by_type[rec.type]++;
        else
            other++;
    }
    if (rc < 0) {
        fprintf(stderr, "tracestat: %s\n", ct_reader_error(r));
        ct_reader_close(r);
        return 1;
    }
    uint64_t lost = 0;
    for (int i = 0; i + 1 < argc; i++)
        lost += ct_reader_stats(r, (uint32_t)i)->lost;
    ct_reader_close(r);
    printf("tracestat: files=%d file_bytes=%llu records=%llu raw_bytes=%llu payload_bytes=%llu "
           "chunks=%llu lost=%llu\n", argc - 1, (unsigned long long)file_bytes,
           (unsigned long long)records, (unsigned long long)raw, (unsigned long long)payload,
           (unsigned long long)chunks, (unsigned long long)lost);
    printf("tracestat:");
    for (uint32_t t = 1; t < CT_REC_TYPE_LIMIT; t++)
        if (by_type[t])
            printf(" %s=%llu", ct_rec_type_name(t), (unsigned long long)by_type[t]);
    printf(" other=%llu\n", (unsigned long long)other);
    return 0;
}
