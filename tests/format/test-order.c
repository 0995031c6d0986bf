#include "fmt.h"

/* A tracer's file: a CPU stream, and GPU activity harvested two flush periods late. With honest
 * low-water marks the reader delivers everything in time order while holding only the few
 * chunks the lag keeps open, however long the trace. */
#define FMT_ROUNDS 200
#define FMT_PER 100
#define FMT_PERIOD 100000u

static uint64_t fmt_lagged_trace(const char *path, int honest, uint64_t *max_chunk)
{
    ct_writer *w = fmt_writer(path);
    static uint8_t cb[1 << 16], gb[1 << 16];
    ct_enc cpu, gpu;
    ct_enc_init(&cpu, cb, sizeof cb);
    ct_enc_init(&gpu, gb, sizeof gb);
    uint64_t total = 0;
    *max_chunk = 0;
    for (uint64_t r = 0; r < FMT_ROUNDS + 2; r++) {
        for (uint64_t k = 0; r < FMT_ROUNDS && k < FMT_PER; k++) {
            uint64_t t = r * FMT_PERIOD + k * 1000;
            ct_rec_api a = {.start = t, .function = 0, .corr = r * FMT_PER + k + 1};
            if (ct_enc_api(&cpu, t + 400, &a) != 0)
                return 0;
        }
        /* The harvester now emits the GPU work of round r - 2: GPU end 600 ns after the call. */
        for (uint64_t k = 0; r >= 2 && k < FMT_PER; k++) {
            uint64_t t = (r - 2) * FMT_PERIOD + k * 1000;
            ct_rec_gpu g = {.start = t + 450, .corr = (r - 2) * FMT_PER + k + 1};
            if (ct_enc_gpu(&gpu, t + 1000, &g) != 0)
                return 0;
        }
        /* Oldest work whose record is not written before this round: round r - 2's GPU. */
        uint64_t lw = honest && r >= 2 ? (r - 2) * FMT_PERIOD : 0;
        ct_enc *e[2] = {&cpu, &gpu};
        for (int s = 0; s < 2; s++) {
            if (e[s]->len > *max_chunk)
                *max_chunk = e[s]->len;
            total += e[s]->len;
            ct_chunk_info ci = {.tid = s ? 2u : 1u, .flags = s ? CT_CHUNK_GPU : 0, .low_water = lw};
            if (ct_writer_chunk(w, e[s], &ci, 1) != 0)
                return 0;
        }
    }
    ct_writer_close(w);
    return total;
}

TEST_IMPL(time_order_with_late_gpu_records_bounded_memory)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    uint64_t max_chunk;
    uint64_t total = fmt_lagged_trace(path, 1, &max_chunk);
    ASSERT_UINT(total, >, 0);
    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(l.n, ==, 2 * FMT_ROUNDS * FMT_PER);
    for (size_t i = 1; i < l.n; i++)
        ASSERT_UINT(l.recs[i].ts, >=, l.recs[i - 1].ts);
    ASSERT_UINT(fmt_count(&l, CT_REC_GPU), ==, FMT_ROUNDS * FMT_PER);
    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_UINT(st->late_records, ==, 0);
    /* The lag spans about three rounds of two streams: a handful of chunks, not the trace. */
    ASSERT_UINT(st->peak_pending, <=, 8 * max_chunk);
    ASSERT_UINT(st->peak_pending * 20, <, total);
    fmt_free(&l);
    return 0;
}

/* A writer whose low-water marks promise nothing (0) and a reader allowed almost no buffer:
 * every record is still delivered, the ones that arrive behind the merge are counted as late
 * and reported once. */
TEST_IMPL(weak_low_water_degrades_to_late_records)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    uint64_t max_chunk;
    ASSERT_UINT(fmt_lagged_trace(path, 0, &max_chunk), >, 0);
    fmt_log l;
    char err[1024];
    const char *paths[] = {path};
    ct_reader_opts o = {.max_pending = 1};
    ASSERT_INT(fmt_read(&l, paths, 1, &o, err, sizeof err), ==, 0);
    ASSERT_INT(l.n, ==, 2 * FMT_ROUNDS * FMT_PER);
    const ct_stats *st = ct_reader_stats(l.r, 0);
    ASSERT_UINT(st->late_records, >=, (FMT_ROUNDS - 2) * FMT_PER);
    ASSERT_UINT(st->peak_pending, <=, 2 * max_chunk);
    ASSERT_CONTAINS(l.warn, "records were delivered out of time order");
    fmt_free(&l);

    /* With the default buffer the same file is read in order (it all fits). */
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_UINT(ct_reader_stats(l.r, 0)->late_records, ==, 0);
    for (size_t i = 1; i < l.n; i++)
        ASSERT_UINT(l.recs[i].ts, >=, l.recs[i - 1].ts);
    fmt_free(&l);
    return 0;
}

/* Records of one chunk out of time order (a harvester that did not sort its batch) are
 * delivered sorted, each with the correlation id it was written with. */
TEST_IMPL(unsorted_chunk_is_sorted)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    ct_enc e;
    ct_writer *w = fmt_writer_enc(path, &e);
    static const uint64_t ends[] = {5000, 3000, 4000, 1000, 3000, 9000};
    for (size_t i = 0; i < 6; i++) {
        ct_rec_gpu g = {.start = ends[i] - 500, .corr = 100 + i};
        ASSERT_INT(ct_enc_gpu(&e, ends[i], &g), ==, 0);
    }
    ct_chunk_info ci = {.tid = 3};
    ASSERT_INT(ct_writer_chunk(w, &e, &ci, 1), ==, 0);
    ASSERT_UINT(ci.t_min, ==, 1000);
    ASSERT_UINT(ci.t_max, ==, 9000);
    ct_writer_close(w);
    fmt_log l;
    ASSERT_INT(fmt_read1(&l, path), ==, 0);
    ASSERT_INT(l.n, ==, 6);
    static const uint64_t corr[] = {103, 101, 104, 102, 100, 105}; /* ties keep file order */
    for (size_t i = 0; i < 6; i++) {
        ASSERT_UINT(l.recs[i].u.gpu.corr, ==, corr[i]);
        ASSERT_UINT(l.recs[i].ts, ==, ends[corr[i] - 100]);
        ASSERT_UINT(l.recs[i].u.gpu.start, ==, l.recs[i].ts - 500);
    }
    fmt_free(&l);
    return 0;
}
