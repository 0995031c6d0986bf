#include "fmt.h"

/* A damaged chunk header cannot be trusted for the chunk's length: the reader searches for the
 * next valid chunk header, reports the skipped byte range and the missing sequence number, and
 * reads on. Garbage appended after the last chunk is reported the same way. */
TEST_IMPL(corrupt_chunk_header_resynchronizes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    uint64_t off[4];
    uint64_t size = fmt_api_trace(path, 4, 40, off);
    uint8_t b;
    ASSERT_INT(fmt_peek(path, off[1] + 8, &b, 1), ==, 0); /* payload_size */
    b ^= 0x01;
    ASSERT_INT(fmt_poke(path, off[1] + 8, &b, 1), ==, 0);
    static const char junk[] = "CTCK not a chunk header at all, just bytes";
    ASSERT_INT(fmt_poke(path, size, junk, sizeof junk), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_UINT(fmt_count(&l, CT_REC_API), ==, 120);
    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_UINT(st->chunks, ==, 3);
    ASSERT_UINT(st->chunks_missing, ==, 1);
    ASSERT_UINT(st->skipped_bytes, ==, (off[2] - off[1]) + sizeof junk);
    char want[256];
    snprintf(want, sizeof want, "damaged data at offsets %llu..%llu (%llu bytes) skipped\n",
             (unsigned long long)off[1], (unsigned long long)off[2],
             (unsigned long long)(off[2] - off[1]));
    ASSERT_CONTAINS(l.warn, want);
    ASSERT_CONTAINS(l.warn, "chunks 1..1 are missing");
    ASSERT_CONTAINS(l.warn, "skipped (up to the end of the file)");
    /* The records of chunks 0, 2 and 3, in order. */
    uint64_t prev = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (l.recs[i].type != CT_REC_API)
            continue;
        uint64_t k = l.recs[i].u.api.corr - 1;
        ASSERT(k < 40 || k >= 80);
        ASSERT_UINT(l.recs[i].ts, ==, 1000 * k + 510);
        ASSERT_UINT(l.recs[i].ts, >, prev);
        prev = l.recs[i].ts;
    }
    fmt_free(&l);
    return 0;
}
