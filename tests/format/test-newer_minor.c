#include "fmt.h"

/* A file from a newer minor version: record types this reader does not know (a reserved one and
 * a two-byte type), and known records with fields appended or missing. Unknown records are
 * delivered as CT_REC_UNKNOWN and skipped by content; the time and correlation chains run on
 * through them; extra fields are ignored and missing ones read as 0. */
TEST_IMPL(newer_minor_unknown_types_and_fields)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    ASSERT_INT(ct_enc_string(&e, 100, 1, "cuMemAlloc", 10), ==, 0);
    ct_rec_api a = {.start = 150, .function = 1, .corr = 41};
    ASSERT_INT(ct_enc_api(&e, 200, &a), ==, 0);
    static const uint8_t nvtx[] = {1, 2, 3, 4};
    ASSERT_INT(ct_enc_raw(&e, CT_REC_GRAPH_LAUNCH, 300, nvtx, sizeof nvtx), ==, 0);
    ASSERT_INT(ct_enc_raw(&e, 200, 400, nvtx, 2), ==, 0);
    /* An API record with two more fields than version 1.0 has: dur 100, function 1, result 2,
     * dcorr +1 (zigzag 2), parent corr-41 (zigzag of 1 = 2), flags 1, then 0x7f, 0x80 0x01. */
    static const uint8_t longer[] = {100, 1, 2, 2, 2, 1, 0x7f, 0x80, 0x01};
    ASSERT_INT(ct_enc_raw(&e, CT_REC_API, 500, longer, sizeof longer), ==, 0);
    /* An API record with only dur and function: result, corr delta, parent, flags read 0. */
    static const uint8_t shorter[] = {50, 1};
    ASSERT_INT(ct_enc_raw(&e, CT_REC_API, 600, shorter, sizeof shorter), ==, 0);
    e.prev_corr = 42; /* what the reader's chain holds after the records above */
    a = (ct_rec_api){.start = 650, .function = 1, .corr = 43, .result = 9};
    ASSERT_INT(ct_enc_api(&e, 700, &a), ==, 0);
    ct_rec_end end = {CT_END_EXIT, 0, 7, 0};
    ASSERT_INT(ct_enc_end(&e, 800, &end), ==, 0);
    ct_chunk_info ci = {.tid = 9};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);
    ASSERT_INT(fmt_set_version(path, CT_FORMAT_MAJOR, CT_FORMAT_MINOR + 7), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(l.rc, ==, 0);
    ASSERT_INT(l.nwarn, ==, 0);
    ASSERT_INT(ct_reader_header(l.r, 0)->minor, ==, CT_FORMAT_MINOR + 7);
    ASSERT_INT(l.n, ==, 8);
    static const uint32_t types[] = {CT_REC_STRING, CT_REC_API, CT_REC_UNKNOWN, CT_REC_UNKNOWN,
                                     CT_REC_API,    CT_REC_API, CT_REC_API,     CT_REC_END};
    for (size_t i = 0; i < 8; i++) {
        ASSERT_UINT(l.recs[i].type, ==, types[i]);
        ASSERT_UINT(l.recs[i].ts, ==, 100 * (i + 1));
    }
    ASSERT_UINT(l.recs[2].u.unknown.type, ==, CT_REC_GRAPH_LAUNCH);
    ASSERT_UINT(l.recs[2].u.unknown.len, ==, 4);
    ASSERT_UINT(l.recs[2].u.unknown.bytes[3], ==, 4);
    ASSERT_UINT(l.recs[3].u.unknown.type, ==, 200);
    const ct_rec_api *x = &l.recs[4].u.api;
    ASSERT_UINT(x->start, ==, 400);
    ASSERT_UINT(x->result, ==, 2);
    ASSERT_UINT(x->corr, ==, 42);
    ASSERT_UINT(x->parent, ==, 41);
    ASSERT_UINT(x->flags, ==, CT_API_DRIVER);
    const ct_rec_api *y = &l.recs[5].u.api;
    ASSERT_UINT(y->start, ==, 550);
    ASSERT_UINT(y->result, ==, 0);
    ASSERT_UINT(y->corr, ==, 42);
    ASSERT_UINT(y->parent, ==, 0);
    ASSERT_UINT(l.recs[6].u.api.corr, ==, 43);
    ASSERT_UINT(l.recs[6].u.api.result, ==, 9);
    ASSERT_STR(ct_reader_string(l.r, 0, l.recs[6].u.api.function), "cuMemAlloc");
    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_UINT(st->unknown_records, ==, 2);
    ASSERT_UINT(st->bad_records, ==, 0);
    ASSERT_INT(st->complete, ==, 1);
    fmt_free(&l);
    return 0;
}
