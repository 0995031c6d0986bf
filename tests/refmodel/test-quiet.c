/* After a second with no records, a record without breakdown points (a stream's creation), then
 * a call of one thread and a longer call of another thread that began first: every point is
 * within the sweep's lag, so none may be counted late, and the breakdown must be exact. */
#include "an_helpers.h"
#include "cttrace.h"
#include "refmodel.h"

#define MS 1000000ull

static int api(ct_enc *e, uint64_t start, uint64_t end, uint32_t fn, uint64_t corr)
{
    ct_rec_api a = {.start = start, .function = fn, .corr = corr};
    return ct_enc_api(e, end, &a);
}

static int launch(ct_enc *main, ct_enc *gpu, uint64_t start, uint64_t end, uint64_t corr,
                  uint64_t gs, uint64_t ge)
{
    ct_rec_launch l = {.corr = corr, .function = 2};
    ct_rec_gpu g = {.start = gs, .corr = corr, .kind = CT_GPU_KERNEL};
    return api(main, start, end, 1, corr) || ct_enc_launch(main, end, &l) ||
           ct_enc_gpu(gpu, ge, &g);
}

TEST_IMPL(quiet_then_overlapping_threads)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s", ctt_tmpdir());
    snprintf(path, sizeof path, "%s/quiet.cutrace", dir);
    const uint64_t t0 = 10000 * MS, T = t0 + 1000 * MS;
    ct_header h = {.hostname = "quiet", .pid = 7, .boot_id = "b", .monotonic_ns = t0,
                   .realtime_ns = t0};
    ct_writer *w;
    ASSERT_INT(ct_writer_open(&w, path, &h, NULL), ==, 0);
    static uint8_t ba[1 << 16], bb[1 << 16], bg[1 << 16];
    ct_enc a, b, g;
    ct_enc_init(&a, ba, sizeof ba);
    ct_enc_init(&b, bb, sizeof bb);
    ct_enc_init(&g, bg, sizeof bg);
    ASSERT_INT(ct_enc_string(&a, t0, 1, "cuLaunchKernel", 14), ==, 0);
    ASSERT_INT(ct_enc_string(&a, t0, 2, "k", 1), ==, 0);
    ASSERT_INT(ct_enc_string(&a, t0, 3, "cuStreamQuery", 13), ==, 0);
    ASSERT_INT(launch(&a, &g, t0, t0 + 10000, 1, t0 + 20000, t0 + MS), ==, 0);
    /* a second later: a stream is created (no point), then thread 8's launch [T+5, T+6] ms
     * and thread 9's call [T+1, T+7] ms, delivered after it */
    ct_rec_stream st = {.stream = 0x10};
    ASSERT_INT(ct_enc_stream(&a, T, &st), ==, 0);
    ASSERT_INT(launch(&a, &g, T + 5 * MS, T + 6 * MS, 2, T + 6 * MS, T + 8 * MS), ==, 0);
    ASSERT_INT(api(&b, T + 1 * MS, T + 7 * MS, 3, 3), ==, 0);
    ASSERT_INT(launch(&a, &g, T + 19 * MS, T + 19 * MS + 5000, 4, T + 20 * MS, T + 21 * MS), ==, 0);
    ct_rec_end end = {.how = CT_END_EXIT};
    ASSERT_INT(ct_enc_end(&a, T + 22 * MS, &end), ==, 0);
    ct_chunk_info ia = {.tid = 8, .low_water = t0}, ib = {.tid = 9, .low_water = t0},
                  ig = {.tid = 100, .flags = CT_CHUNK_GPU, .low_water = t0};
    ASSERT_INT(ct_writer_chunk(w, &a, &ia, 1), ==, 0);
    ASSERT_INT(ct_writer_chunk(w, &b, &ib, 1), ==, 0);
    ASSERT_INT(ct_writer_chunk(w, &g, &ig, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);
    tj *s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.late_points"), ==, 0);
    tj_free(s);
    ASSERT_INT(rm_check(path, NULL, "quiet then overlapping threads", NULL), ==, 0);
    return 0;
}
