#include "fmt.h"

#include <stdio.h>
#include <stdlib.h>

#include "ct_wire.h"

/* Chunk headers declare how far before its ts a record of the chunk begins (FORMAT.md 3.2,
 * max_span), and the reader knows the file's largest before it delivers anything: written by
 * the encoder from interval durations and the spacing of the stream's CPU readings (across
 * chunks), read from the headers alone, past a damaged header, up to a torn chunk, and absent
 * (0) in chunk headers of format 1.0. */

/* Three chunks of one stream; their spans are 2000 (a GPU interval), 30000 (a CPU reading 30000
 * after the previous chunk's) and 100. Chunk offsets go to off[3]; returns the file size. */
static uint64_t span_trace(const char *path, uint64_t off[3])
{
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    ct_rec_api a = {.start = 9500, .function = 0, .corr = 1};
    ct_rec_gpu g = {.start = 8000, .corr = 1, .kind = CT_GPU_KERNEL};
    ct_rec_cpu c = {.tid = 100, .user_ns = 5};
    ct_rec_sync s = {.start = 33000, .corr = 2, .kind = CT_SYNC_DEVICE};
    ct_rec_api b = {.start = 49900, .corr = 3};
    ct_chunk_info ci = {.tid = 100, .low_water = 1};
    int rc = 0;
    off[0] = ct_writer_bytes(w);
    rc |= ct_enc_api(&e, 10000, &a) | ct_enc_gpu(&e, 10000, &g) | ct_enc_cpu(&e, 10000, &c);
    rc |= ct_writer_chunk(w, &e, &ci, 1);
    off[1] = ct_writer_bytes(w);
    rc |= ct_enc_sync(&e, 40000, &s) | ct_enc_cpu(&e, 40000, &c);
    rc |= ct_writer_chunk(w, &e, &ci, 1);
    off[2] = ct_writer_bytes(w);
    rc |= ct_enc_api(&e, 50000, &b);
    rc |= ct_writer_chunk(w, &e, &ci, 1);
    uint64_t size = ct_writer_bytes(w);
    rc |= ct_writer_close(w);
    return rc ? 0 : size;
}

static void span_quiet(void *ctx, const char *path, const char *msg)
{
    (void)ctx, (void)path, (void)msg;
}

/* The file's max_span as the reader knows it on opening (no record read). */
static uint64_t span_at_open(const char *path)
{
    ct_reader *r;
    char err[512];
    const char *paths[] = {path};
    ct_reader_opts o = {.warn = span_quiet}; /* damage warnings are other tests' */
    int rc = ct_reader_open(&r, paths, 1, &o, err, sizeof err);
    if (rc < 0)
        return UINT64_MAX;
    uint64_t s = ct_reader_stats(r, 0)->max_span;
    ct_reader_close(r);
    return s;
}

/* Rewrites every chunk header of src as format 1.0 wrote it (88 bytes, no max_span). */
static int span_to_v10(const char *src, const char *dst, uint64_t first, uint64_t size)
{
    uint8_t *in = malloc(size), *out = malloc(size);
    ASSERT(in && out);
    ASSERT_INT(fmt_peek(src, 0, in, size), ==, 0);
    memcpy(out, in, first);
    uint64_t o = first;
    for (uint64_t i = first; i < size;) {
        uint32_t hs = ct__rd16(in + i + 4), ps = ct__rd32(in + i + 8);
        ASSERT_INT(hs, ==, 96);
        memcpy(out + o, in + i, 84);
        ct__le16(out + o + 4, 88);
        ct__le32(out + o + 84, ct__crc32c(out + o, 84));
        memcpy(out + o + 88, in + i + hs, ps);
        o += 88 + ps;
        i += hs + ps;
    }
    FILE *f = fopen(dst, "wb");
    ASSERT(f && fwrite(out, 1, o, f) == o && fclose(f) == 0);
    free(in);
    free(out);
    return 0;
}

/* The trace of span_trace as TMPDIR/span.ct (path) and with format 1.0's chunk headers as
 * TMPDIR/span-old.ct (old), and TMPDIR/span-NAME.ct in other for a copy to damage: its size. */
static uint64_t span_files(char path[4096], char old[4096], char other[4096], const char *name,
                           uint64_t off[3])
{
    snprintf(path, 4096, "%s/span.ct", ctt_tmpdir());
    snprintf(old, 4096, "%s/span-old.ct", ctt_tmpdir());
    snprintf(other, 4096, "%s/span-%s.ct", ctt_tmpdir(), name);
    uint64_t size = span_trace(path, off);
    if (size == 0 || span_to_v10(path, old, off[0], size) != 0)
        return 0;
    return size;
}

TEST_IMPL(chunk_max_span)
{
    char path[4096], cut[4096], old[4096];
    uint64_t off[3];
    uint64_t size = span_files(path, old, cut, "cut", off);
    ASSERT(size > 0);

    /* each chunk's own span, as the reader decodes its header */
    ct_reader_opts o = {.file_order = 1, .chunk_records = 1};
    fmt_log l;
    const char *paths[] = {path};
    ASSERT_INT(fmt_read(&l, paths, 1, &o, NULL, 0), ==, 0);
    uint64_t want[3] = {2000, 30000, 100};
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.recs[i].type == CT_REC_CHUNK) {
            ASSERT(k < 3);
            ASSERT_UINT(l.recs[i].u.chunk.max_span, ==, want[k]);
            k++;
        }
    ASSERT_UINT(k, ==, 3);
    fmt_free(&l);

    ASSERT_UINT(span_at_open(path), ==, 30000);
    /* a damaged header: that chunk is skipped, the walk resynchronizes on the next */
    uint8_t bad = 0xff;
    ASSERT_INT(fmt_copy(path, cut, size), ==, 0);
    ASSERT_INT(fmt_poke(cut, off[1] + 20, &bad, 1), ==, 0);
    ASSERT_UINT(span_at_open(cut), ==, 2000);
    /* killed while writing chunk 1 (or a file still being written): what is complete counts */
    for (uint64_t len = off[1]; len < off[2]; len += 7) {
        ASSERT_INT(fmt_copy(path, cut, len), ==, 0);
        ASSERT_UINT(span_at_open(cut), ==, 2000);
    }
    /* format 1.0's 88-byte chunk headers: no span declared, every record still read */
    ASSERT_UINT(span_at_open(old), ==, 0);
    ASSERT_INT(fmt_read1(&l, old), ==, 0);
    ASSERT_UINT(fmt_count(&l, CT_REC_API), ==, 2);
    ASSERT_UINT(fmt_count(&l, CT_REC_SYNC), ==, 1);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->chunks, ==, 3);
    fmt_free(&l);
    return 0;
}

/* Reads path file by file (ct_reader_next_in) into *st. defer: with the walk for max_span
 * deferred (ct_reader_opts.defer_spans), the span unknown (0) after the open; 1: walked by
 * ct_reader_spans_in, 2: by the first ct_reader_next_in, and known from then on. */
static int span_read_in(const char *path, int defer, ct_stats *st)
{
    ct_reader *r;
    char err[512];
    const char *paths[] = {path};
    ct_reader_opts o = {.warn = span_quiet, .defer_spans = defer > 0};
    ASSERT_INT(ct_reader_open(&r, paths, 1, &o, err, sizeof err), ==, 0);
    uint64_t at_open = ct_reader_stats(r, 0)->max_span;
    if (defer != 2)
        ASSERT_INT(ct_reader_spans_in(r, 0), ==, 0);
    ct_rec rec;
    int got = ct_reader_next_in(r, 0, &rec);
    ASSERT_INT(got, ==, 1);
    uint64_t first = ct_reader_stats(r, 0)->max_span;
    ASSERT_UINT(at_open, ==, defer ? 0 : first);
    while ((got = ct_reader_next_in(r, 0, &rec)) > 0)
        ;
    ASSERT_INT(got, ==, 0);
    *st = *ct_reader_stats(r, 0);
    ASSERT_UINT(st->max_span, ==, first);
    ct_reader_close(r);
    return 0;
}

/* The same file's statistics read the two ways are the same, field by field. */
static int span_same_stats(const ct_stats *a, const ct_stats *b)
{
    ASSERT_UINT(a->max_span, ==, b->max_span);
    ASSERT_UINT(a->chunks, ==, b->chunks);
    ASSERT_UINT(a->records, ==, b->records);
    ASSERT_UINT(a->lost, ==, b->lost);
    ASSERT_UINT(a->chunks_missing, ==, b->chunks_missing);
    ASSERT_UINT(a->corrupt_chunks, ==, b->corrupt_chunks);
    ASSERT_UINT(a->skipped_bytes, ==, b->skipped_bytes);
    ASSERT_UINT(a->torn_tail, ==, b->torn_tail);
    ASSERT_UINT(a->unknown_records, ==, b->unknown_records);
    ASSERT_UINT(a->bad_records, ==, b->bad_records);
    ASSERT_UINT(a->late_records, ==, b->late_records);
    ASSERT_UINT(a->peak_pending, ==, b->peak_pending);
    ASSERT_INT(a->complete, ==, b->complete);
    ASSERT_UINT(a->nvtx_unnamed, ==, b->nvtx_unnamed);
    return 0;
}

/* With the walk for max_span deferred to the first read of each file (what `cutrace summary -j`
 * opens with), every file ends with the statistics an eager open gives, the damaged and torn
 * ones included; a merged reading walks every file before its first record; an I/O error of a
 * deferred walk comes from the read, naming the file. */
TEST_IMPL(deferred_span_walk_matches_open)
{
    char path[4096], bad[4096], torn[4096], old[4096];
    uint64_t off[3];
    uint64_t size = span_files(path, old, bad, "bad", off);
    ASSERT(size > 0);
    snprintf(torn, sizeof torn, "%s/span-torn.ct", ctt_tmpdir());
    uint8_t ff = 0xff;
    ASSERT_INT(fmt_copy(path, bad, size), ==, 0);
    ASSERT_INT(fmt_poke(bad, off[1] + 20, &ff, 1), ==, 0);
    ASSERT_INT(fmt_copy(path, torn, off[2] + 5), ==, 0);
    const char *files[] = {path, bad, torn, old};
    const uint64_t want[] = {30000, 2000, 30000, 0};
    for (size_t i = 0; i < 4; i++) {
        ct_stats eager, deferred;
        ASSERT_INT(span_read_in(files[i], 0, &eager), ==, 0);
        ASSERT_UINT(eager.max_span, ==, want[i]);
        for (int defer = 1; defer <= 2; defer++) {
            ASSERT_INT(span_read_in(files[i], defer, &deferred), ==, 0);
            ASSERT_INT(span_same_stats(&eager, &deferred), ==, 0);
        }
    }

    /* merged: every file's span is known with the first record of any */
    ct_reader *r;
    char err[512];
    const char *two[] = {bad, path};
    ct_reader_opts q = {.warn = span_quiet, .defer_spans = 1};
    ASSERT_INT(ct_reader_open(&r, two, 2, &q, err, sizeof err), ==, 0);
    ct_rec rec;
    ASSERT_INT(ct_reader_next(r, &rec), ==, 1);
    ASSERT_UINT(ct_reader_stats(r, 0)->max_span, ==, 2000);
    ASSERT_UINT(ct_reader_stats(r, 1)->max_span, ==, 30000);
    ct_reader_close(r);

    /* the file shrinks after the open: the deferred walk fails in the read, not the open */
    const char *one[] = {torn};
    ASSERT_INT(ct_reader_open(&r, one, 1, &q, err, sizeof err), ==, 0);
    ASSERT_INT(fmt_truncate(torn, off[0]), ==, 0);
    ASSERT_INT(ct_reader_next_in(r, 0, &rec), ==, CT_E_IO);
    ASSERT_CONTAINS(ct_reader_error_in(r, 0), torn);
    ASSERT_CONTAINS(ct_reader_error_in(r, 0), "shrank");
    ct_reader_close(r);
    return 0;
}
