#include "fmt.h"

/* A writer killed while writing its last chunk: for every length from the start of that chunk
 * to one byte short of the whole file, everything before the chunk is read and the cut chunk
 * is reported as a warning, not an error. */
TEST_IMPL(truncated_at_every_offset_of_last_chunk)
{
    char full[4096], cut[4096];
    snprintf(full, sizeof full, "%s/full.ct", ctt_tmpdir());
    snprintf(cut, sizeof cut, "%s/cut.ct", ctt_tmpdir());
    uint64_t off[3];
    uint64_t size = fmt_api_trace(full, 3, 50, off);
    ASSERT_UINT(size - off[2], >, 100); /* a chunk worth cutting */
    for (uint64_t len = off[2]; len < size; len++) {
        ASSERT_INT(fmt_copy(full, cut, len), ==, 0);
        fmt_log l;
        ASSERT_INT(fmt_read1(&l, cut), ==, 0);
        ASSERT_INT(l.rc, ==, 0);
        if (fmt_check_api(&l, 100) != 0) {
            ctt_fail_at(__FILE__, __LINE__, "file cut at %llu of %llu",
                            (unsigned long long)len, (unsigned long long)size);
            return 1;
        }
        const ct_stats *st = ct_reader_stats(l.r, 0);
        ASSERT_UINT(st->chunks, ==, 2);
        ASSERT_UINT(st->torn_tail, ==, len - off[2]);
        if (len > off[2])
            ASSERT_CONTAINS(l.warn, "incomplete chunk at the end");
        ASSERT_CONTAINS(l.warn, "no end record");
        fmt_free(&l);
    }
    /* And the whole file reads whole. */
    fmt_log l;
    ASSERT_INT(fmt_read1(&l, full), ==, 0);
    ASSERT_INT(fmt_check_api(&l, 150), ==, 0);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->torn_tail, ==, 0);
    fmt_free(&l);
    return 0;
}
