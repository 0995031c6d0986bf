#include "fmt.h"

#include <stdlib.h>
#include <string.h>

/* Texts longer than a STRING record holds (CT_STRING_MAX) are stored cut, not dropped: their
 * first bytes, never part of a UTF-8 character, then the marker naming their length. */

/* len bytes of 'a' with the UTF-8 character ch placed at byte offset at (if ch). */
static char *fill(size_t len, const char *ch, size_t at)
{
    char *s = malloc(len);
    if (!s)
        abort();
    memset(s, 'a', len);
    if (ch)
        memcpy(s + at, ch, strlen(ch));
    return s;
}

/* The stored text of id reads as `keep` bytes of the original then the marker for `full`. */
static int check_cut(const fmt_log *l, uint32_t id, const char *orig, size_t keep, size_t full)
{
    const char *got = ct_reader_string(l->r, 0, id);
    ASSERT(got != NULL);
    char mark[CT_STRING_CUT_MAX];
    snprintf(mark, sizeof mark, CT_STRING_CUT_FMT, full);
    ASSERT_UINT(strlen(got), ==, keep + strlen(mark));
    ASSERT_UINT(strlen(got), <=, CT_STRING_MAX);
    ASSERT(memcmp(got, orig, keep) == 0);
    ASSERT_STR(got + keep, mark);
    uint64_t n = 0;
    ASSERT_UINT(ct_string_cut_at(got, strlen(got), &n), ==, keep);
    ASSERT_UINT(n, ==, full);
    return 0;
}

TEST_IMPL(long_strings_cut_with_their_length)
{
    static const char euro[] = "\xe2\x82\xac", clef[] = "\xf0\x9d\x84\x9e"; /* 3 and 4 bytes */
    /* 27 bytes of marker for a 5-digit length: 65508 bytes kept of 65536 */
    const size_t keep5 = CT_STRING_MAX - (sizeof "...[truncated, 65536 bytes]" - 1);
    char *whole = fill(CT_STRING_MAX, NULL, 0);
    char *over = fill(CT_STRING_MAX + 1, NULL, 0);
    /* a character whose first byte is the last that fits, and one whose last byte would be */
    char *straddle3 = fill(70000, euro, keep5 - 1);
    char *straddle4 = fill(70000, clef, keep5 - 3);
    char *before = fill(70000, euro, keep5 - 3); /* ends right where the cut is: kept whole */

    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    static uint8_t buf[1 << 19];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    ct_writer *w = fmt_writer(path);
    ASSERT_INT(ct_enc_string(&e, 10, 1, whole, CT_STRING_MAX), ==, 0);
    ASSERT_INT(ct_enc_string(&e, 10, 2, over, CT_STRING_MAX + 1), ==, 0);
    ASSERT_INT(ct_enc_string(&e, 10, 3, straddle3, 70000), ==, 0);
    ASSERT_INT(ct_enc_string(&e, 10, 4, straddle4, 70000), ==, 0);
    ASSERT_INT(ct_enc_string(&e, 10, 5, before, 70000), ==, 0);
    ct_rec_launch k = {.corr = 1, .function = 3};
    ASSERT_INT(ct_enc_launch(&e, 20, &k), ==, 0);
    ct_chunk_info ci = {.tid = 1};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_UINT(fmt_count(&l, CT_REC_LAUNCH), ==, 1);
    const char *got = ct_reader_string(l.r, 0, 1);
    ASSERT(got != NULL);
    ASSERT_UINT(strlen(got), ==, CT_STRING_MAX);
    ASSERT(memcmp(got, whole, CT_STRING_MAX) == 0);
    uint64_t n = 0;
    ASSERT_UINT(ct_string_cut_at(got, CT_STRING_MAX, &n), ==, CT_STRING_MAX);
    if (check_cut(&l, 2, over, keep5, CT_STRING_MAX + 1) || check_cut(&l, 3, straddle3, keep5 - 1, 70000) ||
        check_cut(&l, 4, straddle4, keep5 - 3, 70000) || check_cut(&l, 5, before, keep5, 70000))
        return 1;

    /* Cut again shorter (an output's cell), a cut text keeps the length it had. */
    const char *cut = ct_reader_string(l.r, 0, 3);
    char mark[CT_STRING_CUT_MAX];
    ASSERT_UINT(ct_string_cut(cut, strlen(cut), 100, mark), ==, 100 - strlen(mark));
    ASSERT_STR(mark, "...[truncated, 70000 bytes]");
    ASSERT_UINT(ct_string_cut("short", 5, 100, mark), ==, 5);
    ASSERT_STR(mark, "");
    /* Only a marker naming more than is left is one. */
    ASSERT_UINT(ct_string_cut_at("x...[truncated, 3 bytes]", 24, &n), ==, 24);
    ASSERT_UINT(ct_string_cut_at("x...[truncated, 30 bytes]", 25, &n), ==, 1);
    ASSERT_UINT(n, ==, 30);
    ASSERT_UINT(ct_string_cut_at("...[truncated, bytes]", 21, &n), ==, 21);
    fmt_free(&l);
    free(whole);
    free(over);
    free(straddle3);
    free(straddle4);
    free(before);
    return 0;
}
