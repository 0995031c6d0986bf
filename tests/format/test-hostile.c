#include "fmt.h"

#include <stdlib.h>

/* Records whose framing is sound (so the chunk's checksums pass) but whose contents lie: sizes
 * and counts beyond the record, values too wide for their fields, endless varints. Each is
 * skipped and counted; the records around them are read; nothing is read out of bounds (the
 * ASan build of this test checks that). */
TEST_IMPL(hostile_record_contents_are_skipped)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    static const struct {
        uint32_t type;
        size_t len;
        uint8_t body[16];
    } bad[] = {
        {CT_REC_STRING, 5, {7, 0xc0, 0x84, 0x3d, 'x'}},           /* 1,000,000-byte string */
        {CT_REC_STRING, 4, {8, 0xff, 0xff, 0x03}},                /* over CT_STRING_MAX */
        {CT_REC_STACK, 5, {9, 0x80, 0x80, 0x04, 1}},              /* 65536 frames */
        {CT_REC_STACK, 4, {10, 3, 1, 2}},                         /* 3 frames, 2 present */
        {CT_REC_FRAME, 3, {0, 1, 2}},                             /* id 0 */
        {CT_REC_API, 6, {1, 0xff, 0xff, 0xff, 0xff, 0x1f}},       /* function > 2^32 */
        {CT_REC_LAUNCH, 12, {0, 1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
        {CT_REC_CPU, 11, {1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}},
        {CT_REC_STREAM, 11, {0, 1, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f}}, /* > int32 */
        {CT_REC_END, 3, {1, 0xff, 0xff}},                         /* varint runs off the end */
    };
    ct_rec_api good = {.start = 0, .function = 0, .corr = 1};
    ASSERT_INT(ct_enc_api(&e, 10, &good), ==, 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ASSERT_INT(ct_enc_raw(&e, bad[i].type, 100 + i, bad[i].body, bad[i].len), ==, 0);
    good.corr = 2;
    ASSERT_INT(ct_enc_api(&e, 1000, &good), ==, 0);
    ct_chunk_info ci = {.tid = 1};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ct_writer_close(w);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(l.n, ==, 2);
    ASSERT_UINT(l.recs[0].ts, ==, 10);
    ASSERT_UINT(l.recs[1].ts, ==, 1000); /* the time chain survived the bad records */
    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_UINT(st->bad_records, ==, sizeof bad / sizeof bad[0]);
    ASSERT(ct_reader_string(l.r, 0, 7) == NULL);
    const uint32_t *frames;
    uint32_t n;
    ASSERT_INT(ct_reader_stack(l.r, 0, 9, &frames, &n), ==, CT_E_INVAL);
    fmt_free(&l);
    return 0;
}

/* Random damage anywhere after the file header — bytes flipped, runs zeroed, the file cut —
 * never crashes the reader or makes it deliver more than was written. */
TEST_IMPL(random_damage_never_crashes)
{
    char full[4096], bad[4096];
    snprintf(full, sizeof full, "%s/full.ct", ctt_tmpdir());
    snprintf(bad, sizeof bad, "%s/bad.ct", ctt_tmpdir());
    uint64_t off[6];
    uint64_t size = fmt_api_trace(full, 6, 40, off);
    size_t len;
    uint8_t *orig = (uint8_t *)ctt_read_file(full, &len);
    ASSERT(orig && len == size);
    uint8_t *copy = malloc(len);
    unsigned seed = 12345;
    for (int iter = 0; iter < 400; iter++) {
        memcpy(copy, orig, len);
        uint64_t n = len;
        int edits = 1 + (int)(rand_r(&seed) % 4);
        for (int k = 0; k < edits; k++) {
            uint64_t at = off[0] + (uint64_t)rand_r(&seed) % (len - off[0]);
            switch (rand_r(&seed) % 3) {
            case 0: copy[at] ^= (uint8_t)(1 + rand_r(&seed) % 255); break;
            case 1: memset(copy + at, 0, (size_t)(len - at < 16 ? len - at : 16)); break;
            default: n = at; break;
            }
        }
        FILE *fp = fopen(bad, "wb");
        ASSERT(fp != NULL);
        ASSERT_UINT(fwrite(copy, 1, n, fp), ==, n);
        fclose(fp);
        fmt_log l;
        ASSERT_INT(fmt_read1(&l, bad), ==, 0);
        ASSERT_INT(l.rc, ==, 0);
        ASSERT_UINT(fmt_count(&l, CT_REC_API), <=, 240);
        for (size_t i = 0; i < l.n; i++)
            if (l.recs[i].type == CT_REC_API)
                ASSERT_UINT(l.recs[i].u.api.corr, <=, 240);
        fmt_free(&l);
    }
    free(copy);
    free(orig);
    return 0;
}
