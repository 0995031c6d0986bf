#include "fmt.h"

/* A string definition lost with a damaged chunk leaves its id unresolved: records using it are
 * still delivered and the id reads as "<string N>". */
TEST_IMPL(lost_string_definition)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    ASSERT_INT(ct_enc_string(&e, 10, 17, "cudaMalloc", 10), ==, 0);
    ASSERT_INT(ct_enc_string(&e, 10, 18, "cudaFree", 8), ==, 0);
    ct_chunk_info ci = {.tid = 1};
    uint64_t first = ct_writer_bytes(w);
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_INT(ct_enc_string(&e, 15, 18, "cudaFree", 8), ==, 0); /* defined again: kept once */
    ct_rec_api a = {.start = 20, .function = 17, .corr = 1};
    ASSERT_INT(ct_enc_api(&e, 30, &a), ==, 0);
    a = (ct_rec_api){.start = 40, .function = 18, .corr = 2};
    ASSERT_INT(ct_enc_api(&e, 50, &a), ==, 0);
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ct_writer_close(w);
    uint8_t b;
    ASSERT_INT(fmt_peek(path, first + CT_CHUNK_HEADER_SIZE + 2, &b, 1), ==, 0);
    b ^= 0xff;
    ASSERT_INT(fmt_poke(path, first + CT_CHUNK_HEADER_SIZE + 2, &b, 1), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_UINT(fmt_count(&l, CT_REC_API), ==, 2);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->corrupt_chunks, ==, 1);
    char tmp[CT_STRTMP];
    ASSERT(ct_reader_string(l.r, 0, 17) == NULL);
    ASSERT_STR(ct_reader_str(l.r, 0, 17, tmp), "<string 17>");
    ASSERT_STR(ct_reader_str(l.r, 0, 18, tmp), "cudaFree");
    ASSERT_STR(ct_reader_str(l.r, 0, 0, tmp), "");
    fmt_free(&l);
    return 0;
}
