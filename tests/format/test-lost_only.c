#include "fmt.h"

/* A stream that dropped records and has nothing else to say still reports the drops: an empty
 * chunk carrying only its `lost` count. An empty encoder with nothing lost writes nothing. */
TEST_IMPL(lost_only_chunk)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    uint64_t before = ct_writer_bytes(w);
    ct_chunk_info none = {.tid = 5};
    ASSERT_INT(ct_writer_chunk(w, &e, &none, 1), ==, 0);
    ASSERT_UINT(ct_writer_bytes(w), ==, before);
    ct_chunk_info ci = {.tid = 5, .lost = 1234, .low_water = 77};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_UINT(ct_writer_bytes(w), ==, before + CT_CHUNK_HEADER_SIZE);
    ASSERT_UINT(ci.seq, ==, 0);
    ASSERT_INT(ci.nrecords, ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(l.n, ==, 0);
    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_UINT(st->chunks, ==, 1);
    ASSERT_UINT(st->lost, ==, 1234);
    ASSERT_CONTAINS(l.warn, "1234 records were lost by the tracer");
    fmt_free(&l);

    /* In file order with chunk records, the chunk itself is delivered. */
    const char *paths[] = {path};
    char err[512];
    ct_reader_opts o = {.file_order = 1, .chunk_records = 1};
    ASSERT_INT(fmt_read(&l, paths, 1, &o, err, sizeof err), ==, 0);
    ASSERT_INT(l.n, ==, 1);
    ASSERT_UINT(l.recs[0].type, ==, CT_REC_CHUNK);
    ASSERT_UINT(l.recs[0].u.chunk.lost, ==, 1234);
    ASSERT_UINT(l.recs[0].u.chunk.low_water, ==, 77);
    ASSERT_UINT(l.recs[0].u.chunk.offset, ==, before);
    ASSERT_UINT(l.recs[0].tid, ==, 5);
    fmt_free(&l);
    return 0;
}
