#include "fmt.h"

/* Three files (two streams each) merge in time order on one axis: files with the same boot id
 * share the monotonic clock; a file from another boot is shifted by the difference of the
 * clock pairs in the headers. */
static int fmt_merge_file(const char *path, const char *boot, uint64_t real, uint64_t mono, int f)
{
    ct_header h = {.hostname = "node", .pid = 10 + (uint32_t)f, .boot_id = boot,
                   .realtime_ns = real, .monotonic_ns = mono, .tracer_version = "test"};
    ct_writer *w;
    ASSERT_INT(ct_writer_open(&w, path, &h, NULL), ==, 0);
    static uint8_t b0[1 << 16], b1[1 << 16];
    ct_enc e[2];
    ct_enc_init(&e[0], b0, sizeof b0);
    ct_enc_init(&e[1], b1, sizeof b1);
    for (int c = 0; c < 4; c++) {
        for (int s = 0; s < 2; s++) {
            for (int k = 0; k < 25; k++) {
                uint64_t ts = 1000000 + (uint64_t)c * 100000 + (uint64_t)k * 1000 +
                              (uint64_t)f * 7 + (uint64_t)s * 3;
                ct_rec_gpu g = {.start = ts - 100, .corr = (uint64_t)(f * 1000 + c * 100 + k),
                                .device = (uint32_t)s};
                ASSERT_INT(ct_enc_gpu(&e[s], ts, &g), ==, 0);
            }
            if (c == 3 && s == 1) {
                ct_rec_end end = {CT_END_EXIT, 0, 200, 0};
                ASSERT_INT(ct_enc_end(&e[s], 1400000, &end), ==, 0);
            }
            ct_chunk_info ci = {.tid = 100 + (uint32_t)s, .low_water = 1000000 + (uint64_t)c * 100000};
            ASSERT_INT(ct_writer_chunk(w, &e[s], &ci, 1), ==, 0);
        }
    }
    ASSERT_INT(ct_writer_close(w), ==, 0);
    return 0;
}

TEST_IMPL(merge_files_in_time_order)
{
    char p[3][4096];
    const char *paths[3];
    const uint64_t real0 = 1700000000000000000ull;
    for (int f = 0; f < 3; f++) {
        snprintf(p[f], sizeof p[f], "%s/rank%d.ct", ctt_tmpdir(), f);
        paths[f] = p[f];
    }
    /* File 1 shares file 0's boot: its (inconsistent) clock pair must be ignored. File 2 is
     * another host whose monotonic clock reads 6000 ns less than file 0's at the same instant. */
    if (fmt_merge_file(p[0], "boot-a", real0, 1000, 0) ||
        fmt_merge_file(p[1], "boot-a", real0 + 999999, 1000, 1) ||
        fmt_merge_file(p[2], "boot-b", real0 + 5000, 0, 2))
        return 1;
    fmt_log l;
    char err[1024];
    ASSERT_INT(fmt_read(&l, paths, 3, NULL, err, sizeof err), ==, 0);
    ASSERT_INT(l.rc, ==, 0);
    ASSERT_INT(l.nwarn, ==, 0);
    ASSERT_INT(ct_reader_offset(l.r, 0), ==, 0);
    ASSERT_INT(ct_reader_offset(l.r, 1), ==, 0);
    ASSERT_INT(ct_reader_offset(l.r, 2), ==, 6000);
    ASSERT_INT(l.n, ==, 3 * (200 + 1));
    size_t per_file[3] = {0, 0, 0};
    for (size_t i = 0; i < l.n; i++) {
        const ct_rec *r = &l.recs[i];
        if (i > 0) {
            ASSERT_UINT(r->ts, >=, l.recs[i - 1].ts);
            if (r->ts == l.recs[i - 1].ts) /* ties go to the lower file */
                ASSERT_UINT(r->file, >=, l.recs[i - 1].file);
        }
        ASSERT_UINT(r->file, <, 3);
        per_file[r->file]++;
        if (r->type != CT_REC_GPU)
            continue;
        uint64_t c = (r->u.gpu.corr % 1000) / 100, k = r->u.gpu.corr % 100;
        uint64_t want = 1000000 + c * 100000 + k * 1000 + r->file * 7 + (r->tid - 100) * 3 +
                        (r->file == 2 ? 6000 : 0);
        ASSERT_UINT(r->ts, ==, want);
        ASSERT_UINT(r->u.gpu.start, ==, want - 100);
        ASSERT_UINT(r->u.gpu.corr / 1000, ==, r->file);
    }
    for (int f = 0; f < 3; f++) {
        ASSERT_UINT(per_file[f], ==, 201);
        ASSERT_UINT(ct_reader_stats(l.r, (uint32_t)f)->late_records, ==, 0);
        ASSERT_UINT(ct_reader_header(l.r, (uint32_t)f)->pid, ==, 10 + (uint32_t)f);
    }
    fmt_free(&l);
    return 0;
}
