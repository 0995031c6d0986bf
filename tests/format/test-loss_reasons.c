#include "fmt.h"

/* The lost-records warning names why they were lost: a chunk's `lost` count is buffer drops,
 * a LOSS record says its own reason (unknown reasons read as "another reason"; a failed write's
 * why tells the program's closing of the tracer's descriptors apart). A trace whose
 * only loss is GPU timing must not blame full buffers. */
TEST_IMPL(loss_warning_names_the_reason)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/gpu.ct", ctt_tmpdir());
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    ct_rec_loss gpu = {CT_LOSS_GPU_TIMING, 7, 0, 0, 0};
    ASSERT_INT(ct_enc_loss(&e, 1000, &gpu), ==, 0);
    ct_chunk_info ci = {.tid = 5};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);

    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->lost, ==, 7);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->lost_full, ==, 0);
    ASSERT_CONTAINS(l.warn, "7 records were lost by the tracer: 7 GPU timings not collected "
                            "(operations still running when the process ended, or the event "
                            "pool empty)");
    ASSERT_INT(strstr(l.warn, "buffers were full") == NULL, ==, 1);
    fmt_free(&l);

    /* Every reason at once, in enum order, summed. */
    snprintf(path, sizeof path, "%s/all.ct", ctt_tmpdir());
    w = fmt_writer_enc(path, &e);
    ct_rec_loss write = {CT_LOSS_WRITE, 3, 5, 0, 0}, strings = {CT_LOSS_STRINGS, 2, 0, 0, 0},
                odd = {99, 1, 0, 0, 0}, fds = {CT_LOSS_WRITE, 4, 0, 0, CT_WRITE_LOST_FD};
    ASSERT_INT(ct_enc_loss(&e, 1000, &gpu), ==, 0);
    ASSERT_INT(ct_enc_loss(&e, 1001, &write), ==, 0);
    ASSERT_INT(ct_enc_loss(&e, 1001, &fds), ==, 0);
    ASSERT_INT(ct_enc_loss(&e, 1002, &strings), ==, 0);
    ASSERT_INT(ct_enc_loss(&e, 1003, &odd), ==, 0);
    ct_chunk_info drops = {.tid = 5, .lost = 40};
    ASSERT_INT(ct_writer_chunk(w, &e, &drops, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->lost, ==, 57);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->lost_full, ==, 40); /* the chunk's drops: buffers full */
    ASSERT_UINT(ct_reader_stats(l.r, 0)->lost_fd, ==, 4);
    ASSERT_CONTAINS(l.warn, "57 records were lost by the tracer: 1 for another reason; "
                            "40 because its buffers were full; 7 GPU timings not collected");
    ASSERT_CONTAINS(l.warn, "pool empty); 3 because a write failed; 2 because its string "
                            "table was full; 4 because the program closed the tracer's file "
                            "descriptors and none was left to reopen the trace with");
    fmt_free(&l);
    /* the summary says which of them the writer lost by not keeping up and which while the
     * program had left it no descriptor, and so does its JSON */
    char bin[4096];
    char *argv[] = {(char *)fmt_cutrace(bin), "summary", path, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 30), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "trace damage: 57 records lost (40 of them because the tracer's "
                           "buffers were full: its writer did not keep up; 4 while the program "
                           "had closed the trace's descriptor and none was left to reopen it "
                           "with), ");
    ctt_proc_free(&p);
    char *jargv[] = {bin, "summary", "--json", path, NULL};
    ASSERT_INT(ctt_run(&p, jargv, NULL, 30), ==, 0);
    ASSERT_CONTAINS(p.out, "\"lost_records\": 57,\n");
    ASSERT_CONTAINS(p.out, "\"lost_buffer_full\": 40,\n");
    ASSERT_CONTAINS(p.out, "\"lost_descriptors\": 4,\n");
    ctt_proc_free(&p);
    return 0;
}
