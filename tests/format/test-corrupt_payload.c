#include "fmt.h"

/* A chunk damaged in the middle of a file is skipped with a warning naming it; the chunks
 * around it are read. */
TEST_IMPL(corrupt_chunk_payload_in_middle)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    uint64_t off[3];
    fmt_api_trace(path, 3, 50, off);
    uint8_t b;
    uint64_t at = off[1] + CT_CHUNK_HEADER_SIZE + 7;
    ASSERT_INT(fmt_peek(path, at, &b, 1), ==, 0);
    b ^= 0x40;
    ASSERT_INT(fmt_poke(path, at, &b, 1), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(l.rc, ==, 0);
    ASSERT_UINT(fmt_count(&l, CT_REC_API), ==, 100);
    uint64_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (l.recs[i].type != CT_REC_API)
            continue;
        uint64_t want = k < 50 ? k : k + 50; /* records 50..99 were in the damaged chunk */
        ASSERT_UINT(l.recs[i].u.api.corr, ==, want + 1);
        ASSERT_UINT(l.recs[i].ts, ==, 1000 * want + 510);
        k++;
    }
    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_UINT(st->corrupt_chunks, ==, 1);
    ASSERT_UINT(st->chunks, ==, 2);
    ASSERT_UINT(st->skipped_bytes, ==, off[2] - off[1]);
    char want[256];
    snprintf(want, sizeof want, "chunk 1 at offset %llu (%llu bytes) skipped: payload checksum",
             (unsigned long long)off[1], (unsigned long long)(off[2] - off[1]));
    ASSERT_CONTAINS(l.warn, want);
    fmt_free(&l);
    return 0;
}
