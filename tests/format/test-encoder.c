#include "fmt.h"

/* The encoder fills a caller's buffer and refuses, leaving it unchanged, a record that may not
 * fit; oversized strings and stacks are refused outright. */
TEST_IMPL(encoder_full_buffer_and_limits)
{
    static uint8_t buf[256];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    int n = 0;
    for (;; n++) {
        ct_rec_api a = {.start = 1000u * n, .function = 1, .corr = (uint64_t)n + 1};
        size_t before = e.len;
        uint64_t ts = e.prev_ts, corr = e.prev_corr;
        int rc = ct_enc_api(&e, 1000u * n + 200, &a);
        if (rc == CT_E_FULL) {
            ASSERT_UINT(e.len, ==, before);
            ASSERT_UINT(e.prev_ts, ==, ts);
            ASSERT_UINT(e.prev_corr, ==, corr);
            break;
        }
        ASSERT_INT(rc, ==, 0);
    }
    ASSERT_INT(e.nrecords, ==, n);
    /* Delta encoding: 12 bytes for this call (type, length, 2-byte time and duration deltas, one
     * byte for each other field); room is kept for the worst case (93). */
    ASSERT_UINT(e.len, ==, 12u * (unsigned)n);
    ASSERT_UINT(e.len, <=, sizeof buf);
    ASSERT_UINT(sizeof buf - e.len, <, 2 * 10 + 3 + 70);

    static char big[CT_STRING_MAX + 1];
    static uint8_t large[1 << 18];
    ct_enc_init(&e, large, sizeof large);
    ASSERT_INT(ct_enc_string(&e, 1, 1, big, sizeof big), ==, 0); /* cut (test-long_strings) */
    ASSERT_INT(ct_enc_string(&e, 1, 1, big, CT_STRING_MAX), ==, 0);
    static uint32_t frames[CT_STACK_MAX + 1];
    ASSERT_INT(ct_enc_stack(&e, 1, 1, frames, CT_STACK_MAX + 1), ==, CT_E_INVAL);
    ASSERT_INT(ct_enc_stack(&e, 1, 1, frames, CT_STACK_MAX), ==, 0);
    ASSERT_INT(ct_enc_raw(&e, 0, 1, "", 0), ==, CT_E_INVAL);
    ASSERT_INT(e.nrecords, ==, 3);

    /* A chunk built from the encoder's bytes describes them. */
    static uint8_t out[1 << 18];
    ct_chunk_info ci = {.tid = 1};
    ct_enc_chunk_info(&e, &ci);
    ssize_t sz = ct_chunk_build(NULL, &ci, e.buf, e.len, out, sizeof out);
    ASSERT_INT(sz, ==, (ssize_t)(CT_CHUNK_HEADER_SIZE + e.len));
    ASSERT_INT(ci.nrecords, ==, 3);
    ASSERT_INT(ci.flags & CT_CHUNK_RAW, ==, CT_CHUNK_RAW);
    /* Broken record framing is refused rather than written. */
    ASSERT_INT(ct_chunk_build(NULL, &ci, e.buf, e.len - 1, out, sizeof out), ==, CT_E_INVAL);
    return 0;
}
