/* Helpers shared by the trace format tests: writing small traces with known content, reading
 * them back whole with the warnings collected, and editing files byte by byte. */
#ifndef FMT_H
#define FMT_H

#include "ctt.h"
#include "cttrace.h"

/* A writer on path with this process's header and tracer version "test"; aborts on failure. */
ct_writer *fmt_writer(const char *path);
/* The same, and e over a 4 KiB buffer, for a test that encodes its records by hand (the buffer
 * is static: one such encoder at a time). */
ct_writer *fmt_writer_enc(const char *path, ct_enc *e);

/* Everything a reader delivered (unknown records' bytes copied). The reader stays open for
 * string lookups until fmt_free. */
typedef struct {
    ct_rec *recs;
    size_t n, cap;
    char warn[65536];  /* "PATH: msg\n" per warning */
    int nwarn;
    ct_reader *r;
    int rc;            /* last ct_reader_next result (0 = clean end) */
} fmt_log;

/* Opens and reads all; returns ct_reader_open's result (err gets its message). */
int fmt_read(fmt_log *l, const char *const *paths, size_t n, const ct_reader_opts *opts,
             char *err, size_t errlen);
int fmt_read1(fmt_log *l, const char *path);
void fmt_free(fmt_log *l);
/* Number of records of a type. */
size_t fmt_count(const fmt_log *l, uint32_t type);

/* The training-loop-like trace most tests use: one stream (tid 100), `nchunks` chunks of `per`
 * API records each. Record k (from 0) has start 1000k + 10, end 1000k + 510, corr k + 1,
 * result k % 3, function string 1 "cudaLaunchKernel" (defined in the first chunk, which thus
 * holds one more record). Chunk offsets go to chunk_off[] if not NULL; the last chunk ends at
 * the returned file size. */
uint64_t fmt_api_trace(const char *path, int nchunks, int per, uint64_t *chunk_off);
/* Checks that l holds exactly api records 0..n-1 of fmt_api_trace, in order; 0 or 1. */
int fmt_check_api(const fmt_log *l, int n);

/* Whole-file helpers. */
int fmt_truncate(const char *path, uint64_t size);
int fmt_copy(const char *from, const char *to, uint64_t size);
int fmt_poke(const char *path, uint64_t off, const void *bytes, size_t n);
int fmt_peek(const char *path, uint64_t off, void *bytes, size_t n);
/* Rewrites the file header's version and recomputes its CRC. */
int fmt_set_version(const char *path, unsigned major, unsigned minor);
/* Path of the cutrace command of this build (the sanitized one in the asan suite). */
const char *fmt_cutrace(char buf[4096]);

#endif
