/* Hostile traces (the list): sizes and counts that claim gigabytes, string ids out of
 * range, timestamps going backwards, a million distinct kernel names, a trace of zero-length
 * chunks, deep stacks. Each is read in-process (this suite is built with ASan/UBSan) and by every
 * cutrace command in both builds: clear warnings or errors naming the file, memory bounded (the
 * plain build's resident size), no crash. */
#include "rb.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "ct_wire.h"
#include "fz.h"

/* A small well-formed trace: the kernel "k" launched n times (API + LAUNCH + GPU each). */
static int rb_small(rb_trace *t, int n)
{
    ASSERT_INT(ct_enc_string(&t->e, 1, 1, "cudaLaunchKernel", 16), ==, 0);
    ASSERT_INT(ct_enc_string(&t->e, 1, 2, "k", 1), ==, 0);
    for (int i = 0; i < n; i++) {
        uint64_t ts = 1000000 + (uint64_t)i * 100000;
        ct_rec_api a = {.start = ts - 5000, .function = 1, .corr = (uint64_t)i + 1};
        ct_rec_launch l = {.corr = (uint64_t)i + 1, .function = 2, .grid = {1, 1, 1},
                           .block = {32, 1, 1}, .stream = 7};
        ct_rec_gpu g = {.start = ts + 1000, .corr = (uint64_t)i + 1, .kind = CT_GPU_KERNEL,
                        .stream = 7};
        ASSERT_INT(ct_enc_launch(&t->e, ts, &l), ==, 0);
        ASSERT_INT(ct_enc_api(&t->e, ts, &a), ==, 0);
        ASSERT_INT(ct_enc_gpu(&t->e, ts + 50000, &g), ==, 0);
    }
    return 0;
}

static const char *rb_tmp(char buf[4096], const char *name)
{
    snprintf(buf, 4096, "%s/%s", ctt_tmpdir(), name);
    return buf;
}

/* Writes image with its checksums recomputed, as a hostile writer would. */
static int rb_spit_fixed(const char *path, uint8_t *img, size_t len)
{
    fz_fix_checksums(img, len);
    return rb_spit(path, img, len);
}

TEST_IMPL(hostile_sizes_claim_gigabytes)
{
    char good[4096], bad[4096];
    rb_trace t;
    rb_open(&t, rb_tmp(good, "good.cutrace"));
    if (rb_small(&t, 10))
        return 1;
    ASSERT_INT(rb_chunk(&t, 0), ==, 0);
    if (rb_small(&t, 10))
        return 1;
    ASSERT_INT(rb_close(&t, 99000000), ==, 0);
    size_t len;
    uint8_t *img = rb_slurp(good, &len);
    uint32_t hdr = 16 + ct__rd32(img + 12) + 4;
    uint32_t hs = ct__rd16(img + hdr + 4), psize = ct__rd32(img + hdr + 8);
    uint32_t second = hdr + hs + psize;
    ASSERT_UINT(ct__rd32(img + second), ==, CT_CHUNK_MAGIC);
    uint8_t *w = malloc(len);

    /* The file header claims 4 GiB of fields: refused before anything is allocated. */
    memcpy(w, img, len);
    ct__le32(w + 12, 0xFFFFFF00u);
    ASSERT_INT(rb_spit(rb_tmp(bad, "header.cutrace"), w, len), ==, 0);
    if (rb_all_commands(bad, 3, 64, "declares 4294967040 bytes of fields"))
        return 1;

    /* The first chunk claims a 64 MiB payload once decompressed (its zstd frame holds far less),
     * then 4 GiB, then a stored payload of 4 GiB: skipped with a warning; the second is read. */
    static const struct { uint32_t raw, payload; uint16_t flags; const char *warn; } lies[] = {
        {CT_CHUNK_RAW_MAX, 0, 0, "does not decompress to its recorded size"},
        {0xFFFFFFF0u, 0, 0, "damaged data at offsets"},
        {0xFFFFFFF0u, 0xFFFFFFF0u, CT_CHUNK_RAW, "damaged data at offsets"},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        memcpy(w, img, len);
        ct__le32(w + hdr + 12, lies[i].raw);
        if (lies[i].payload)
            ct__le32(w + hdr + 8, lies[i].payload);
        ct__le16(w + hdr + 6, (uint16_t)(ct__rd16(w + hdr + 6) | lies[i].flags));
        ASSERT_INT(rb_spit_fixed(rb_tmp(bad, "chunk.cutrace"), w, len), ==, 0);
        if (rb_all_commands(bad, 0, 64, lies[i].warn))
            return 1;
        ct_stats st;
        ASSERT_INT(rb_read(bad, CT_REC_LAUNCH, &st, NULL, 0), ==, 10); /* the second chunk's */
        ASSERT_UINT(st.peak_pending, <, 1u << 20);
    }
    free(w);
    free(img);

    /* Records whose values claim the impossible behind valid checksums: a copy and an
     * allocation of 2^64-1 bytes, a loss of 2^64-1 records, a 2^32-1 cubed grid, devices and
     * ordinals far out of range, a device with no SMs, clock or bus. */
    rb_open(&t, rb_tmp(bad, "values.cutrace"));
    if (rb_small(&t, 3))
        return 1;
    ct_rec_device dev = {.device = 0xFFFFFFFFu, .name = 2, .mem_bytes = UINT64_MAX};
    ASSERT_INT(ct_enc_device(&t.e, 2000000, &dev), ==, 0);
    dev.device = 0;
    ASSERT_INT(ct_enc_device(&t.e, 2000000, &dev), ==, 0);
    for (uint32_t d = 0; d < 3; d++) {
        uint32_t devno = d == 0 ? 0 : d == 1 ? 17 : 0xFFFFFFFFu;
        uint64_t ts = 3000000 + d * 1000000, corr = 100 + d * 10;
        ct_rec_api a = {.start = ts - 1000, .function = 1, .corr = corr};
        ct_rec_copy c = {.corr = corr, .dir = CT_DIR_HTOD, .bytes = UINT64_MAX,
                         .src_kind = CT_MEMKIND_PAGEABLE, .dst_kind = CT_MEMKIND_DEVICE,
                         .device = devno, .peer_device = 0xFFFFFFFFu};
        ASSERT_INT(ct_enc_copy(&t.e, ts, &c), ==, 0);
        ASSERT_INT(ct_enc_api(&t.e, ts, &a), ==, 0);
        ct_rec_gpu g = {.start = ts, .corr = corr, .device = devno, .kind = CT_GPU_MEMCPY};
        ASSERT_INT(ct_enc_gpu(&t.e, ts + 10, &g), ==, 0);
        a.corr = c.corr = ++corr;
        ct_rec_mem m = {.op = CT_MEM_ALLOC, .kind = CT_ALLOC_DEVICE, .corr = corr,
                        .address = 0x1000, .size = UINT64_MAX, .device = devno};
        ASSERT_INT(ct_enc_mem(&t.e, ts + 20, &m), ==, 0);
        ASSERT_INT(ct_enc_api(&t.e, ts + 20, &a), ==, 0);
        a.corr = ++corr;
        m.corr = corr;
        m.address = 0x2000;
        ASSERT_INT(ct_enc_mem(&t.e, ts + 30, &m), ==, 0);
        ASSERT_INT(ct_enc_api(&t.e, ts + 30, &a), ==, 0);
        a.corr = ++corr;
        ct_rec_launch l = {.corr = corr, .function = 2, .grid = {~0u, ~0u, ~0u},
                           .block = {~0u, ~0u, ~0u}, .shared_bytes = ~0u, .device = devno};
        ASSERT_INT(ct_enc_launch(&t.e, ts + 40, &l), ==, 0);
        ASSERT_INT(ct_enc_api(&t.e, ts + 40, &a), ==, 0);
        g.corr = corr;
        g.kind = CT_GPU_KERNEL;
        ASSERT_INT(ct_enc_gpu(&t.e, ts + 50, &g), ==, 0);
        ct_rec_sync s = {.start = ts + 60, .corr = ++corr, .kind = 99};
        ASSERT_INT(ct_enc_sync(&t.e, ts + 70, &s), ==, 0);
    }
    ct_rec_loss loss = {CT_LOSS_BUFFER_FULL, UINT64_MAX, 5, 0, 0};
    ASSERT_INT(ct_enc_loss(&t.e, 9000000, &loss), ==, 0);
    ct_rec_cpu cpu = {1000, UINT64_MAX, UINT64_MAX};
    ASSERT_INT(ct_enc_cpu(&t.e, 9000001, &cpu), ==, 0);
    ASSERT_INT(rb_close(&t, 9900000), ==, 0);
    return rb_all_commands(bad, 0, 64, "records were lost");
}

/* Every kind of reference to a string, frame or stack that was never defined. */
TEST_IMPL(hostile_string_ids_out_of_range)
{
    char path[4096];
    rb_trace t;
    rb_open(&t, rb_tmp(path, "ids.cutrace"));
    ASSERT_INT(ct_enc_string(&t.e, 1, 1, "cudaLaunchKernel", 16), ==, 0);
    ASSERT_INT(ct_enc_string(&t.e, 1, 2, "known_kernel", 12), ==, 0);
    ct_rec_frame fr = {1000, 31337, 0xFFFFFFFFu, 0x40, CT_FRAME_NATIVE, 0};
    ASSERT_INT(ct_enc_frame(&t.e, 1, &fr), ==, 0);
    uint32_t frames[] = {1000, 2000, 0xFFFFFFFFu};
    ASSERT_INT(ct_enc_stack(&t.e, 1, 5, frames, 3), ==, 0);
    ct_rec_thread th = {1000, 999, 0};
    ASSERT_INT(ct_enc_thread(&t.e, 2, &th), ==, 0);
    ct_rec_device dev = {.device = 0, .name = 77, .sm_count = 132, .clock_khz = 1980000};
    ASSERT_INT(ct_enc_device(&t.e, 2, &dev), ==, 0);
    for (uint32_t i = 0; i < 4; i++) {
        uint64_t ts = 1000000 + i * 1000000, corr = i + 1;
        ct_rec_api a = {.start = ts - 1000, .function = i ? 1 : 0xFFFFFFFFu, .corr = corr};
        ct_rec_launch l = {.corr = corr, .function = i & 1 ? 123456 : 2,
                           .symbol = 0xFFFFFFFEu, .grid = {1, 1, 1}, .block = {1, 1, 1}};
        ASSERT_INT(ct_enc_launch(&t.e, ts, &l), ==, 0);
        ASSERT_INT(ct_enc_api(&t.e, ts, &a), ==, 0);
        ct_rec_gpu g = {.start = ts + 10, .corr = corr, .kind = CT_GPU_KERNEL};
        ASSERT_INT(ct_enc_gpu(&t.e, ts + 500, &g), ==, 0);
        ct_rec_mem m = {.op = CT_MEM_ALLOC, .kind = CT_ALLOC_DEVICE, .corr = 100 + corr,
                        .address = 0x10000 * corr, .size = 1 << 20, .stack = i & 1 ? 5 : 4242};
        a.corr = m.corr;
        a.function = 1;
        ASSERT_INT(ct_enc_mem(&t.e, ts + 600, &m), ==, 0);
        ASSERT_INT(ct_enc_api(&t.e, ts + 600, &a), ==, 0);
    }
    ASSERT_INT(rb_close(&t, 9000000), ==, 0);

    ct_stats st;
    ASSERT_INT(rb_read(path, CT_REC_LAUNCH, &st, NULL, 0), ==, 4);
    ASSERT_UINT(st.bad_records, ==, 0);
    if (rb_all_commands(path, 0, 64, NULL))
        return 1;
    ctt_proc p;
    char *dump[] = {"dump", path, NULL};
    if (rb_cutrace(&p, 0, dump, 0, NULL))
        return 1;
    ASSERT_CONTAINS(p.out, "fn=<string 4294967295>#4294967295");
    ASSERT_CONTAINS(p.out, "kernel=<string 123456>#123456");
    ASSERT_CONTAINS(p.out, "name=<string 999>#999");
    ASSERT_CONTAINS(p.out, "function=<string 31337>#31337 module=<string 4294967295>");
    ctt_proc_free(&p);
    char *sum[] = {"summary", path, NULL};
    if (rb_cutrace(&p, 0, sum, 0, NULL))
        return 1;
    ASSERT_CONTAINS(p.out, "<string 123456>");
    ASSERT_CONTAINS(p.out, "known_kernel");
    ctt_proc_free(&p);
    return 0;
}

/* Times that go backwards inside a chunk and from chunk to chunk, and a low-water mark that
 * lies: the reader sorts what it can, delivers everything, counts and reports the rest. */
static int rb_backwards(const char *path, int analyzer_hostile)
{
    rb_trace t;
    rb_open(&t, path);
    ASSERT_INT(ct_enc_string(&t.e, 5000000000u, 1, "cudaMemcpy", 10), ==, 0);
    uint64_t corr = 1;
    for (int i = 5; i >= 1; i--) {
        ct_rec_api a = {.start = (uint64_t)i * 1000000000u - 1000, .function = 1, .corr = corr++};
        ASSERT_INT(ct_enc_api(&t.e, (uint64_t)i * 1000000000u, &a), ==, 0);
    }
    ASSERT_INT(rb_chunk(&t, 0), ==, 0);
    for (int i = 0; i < 3; i++) {
        ct_rec_api a = {.start = 100 + (uint64_t)i, .function = 1, .corr = corr++};
        ASSERT_INT(ct_enc_api(&t.e, 200 + (uint64_t)i, &a), ==, 0);
    }
    ASSERT_INT(rb_chunk(&t, 10000000000u), ==, 0); /* promises nothing earlier follows: a lie */
    ct_rec_api a = {.start = 50, .function = 1, .corr = corr++};
    ASSERT_INT(ct_enc_api(&t.e, 60, &a), ==, 0);
    if (analyzer_hostile) {
        /* A call that ends before it starts, a GPU interval and a sync likewise, a call
         * lasting 2^63 ns, and times at the very end of the clock. */
        a = (ct_rec_api){.start = 7000000000u, .function = 1, .corr = corr++};
        ASSERT_INT(ct_enc_api(&t.e, 3000, &a), ==, 0);
        ct_rec_gpu g = {.start = 9000000000u, .corr = a.corr, .kind = CT_GPU_KERNEL};
        ASSERT_INT(ct_enc_gpu(&t.e, 4000, &g), ==, 0);
        ct_rec_sync s = {.start = 8000000000u, .corr = corr++, .kind = CT_SYNC_DEVICE};
        ASSERT_INT(ct_enc_sync(&t.e, 5000, &s), ==, 0);
        a = (ct_rec_api){.start = 6000, .function = 1, .corr = corr++};
        ASSERT_INT(ct_enc_api(&t.e, 6000 + (1ull << 63), &a), ==, 0);
        a = (ct_rec_api){.start = UINT64_MAX - 10, .function = 1, .corr = corr++};
        ASSERT_INT(ct_enc_api(&t.e, UINT64_MAX - 5, &a), ==, 0);
    }
    ASSERT_INT(rb_close(&t, 70), ==, 0);
    return 0;
}

TEST_IMPL(hostile_timestamps_backwards)
{
    char path[4096], warn[8192];
    if (rb_backwards(rb_tmp(path, "back.cutrace"), 0))
        return 1;
    ct_stats st;
    ASSERT_INT(rb_read(path, CT_REC_API, &st, warn, sizeof warn), ==, 9);
    ASSERT_UINT(st.late_records, >=, 2); /* the lie: 60 and 70 arrive after 5 s */
    ASSERT_CONTAINS(warn, "records were delivered out of time order");
    /* dump shows them in file order; the other commands see them late, still exit 0 */
    return rb_all_commands(path, 0, 64, NULL);
}

/* The same with intervals that end before they start and last 2^63 ns: the analyzer's
 * time-bucketed sweep must not size itself by them. */
TEST_IMPL(hostile_timestamps_analyzer)
{
    char path[4096];
    if (rb_backwards(rb_tmp(path, "back2.cutrace"), 1))
        return 1;
    ASSERT_INT(rb_read(path, CT_REC_API, NULL, NULL, 0), ==, 12);
    return rb_all_commands(path, 0, 64, NULL);
}

/* A first call claiming 2^62 ns: the chunk header declares that span (FORMAT.md 3.2), so the
 * analyzer's sweep would lag forever from the first record. 1.5 M separate calls follow (3 M
 * sweep points): past 1 M queued points the sweep stops lagging, so memory stays bounded (and,
 * every record being in order, nothing is applied late). */
TEST_IMPL(hostile_declared_span)
{
    char path[4096];
    rb_trace t;
    rb_open(&t, rb_tmp(path, "span.cutrace"));
    RB_ENC(&t, ct_enc_string(&t.e, 1, 1, "cudaStreamQuery", 15));
    const uint64_t t0 = 1ull << 62;
    ct_rec_api a = {.start = 1000, .function = 1, .corr = 1};
    RB_ENC(&t, ct_enc_api(&t.e, t0, &a));
    for (uint64_t i = 0; i < 1500000; i++) {
        a = (ct_rec_api){.start = t0 + 1000 * i + 100, .function = 1, .corr = i + 2};
        RB_ENC(&t, ct_enc_api(&t.e, t0 + 1000 * i + 600, &a));
    }
    ASSERT_INT(rb_close(&t, t0 + 1000 * 1500000 + 5000), ==, 0);
    ctt_proc p;
    long rss;
    char *sum[] = {"summary", path, NULL};
    if (rb_cutrace(&p, 0, sum, 0, &rss))
        return 1;
    ASSERT_CONTAINS(p.out, "1500003 records");
    ctt_proc_free(&p);
    printf("summary with a declared span of 2^62 ns and 1.5 M calls: %ld KiB resident\n", rss);
    ASSERT_INT(rss, <, 160 * 1024);
    if (rb_cutrace(&p, 1, sum, 0, NULL)) /* and clean under the sanitizers */
        return 1;
    ctt_proc_free(&p);
    return 0;
}

/* One API call, launch and GPU interval for each of n distinct kernel names. */
static int rb_many_names(const char *path, uint32_t n)
{
    rb_trace t;
    rb_open(&t, path);
    RB_ENC(&t, ct_enc_string(&t.e, 1, 1, "cudaLaunchKernel", 16));
    for (uint32_t i = 0; i < n; i++) {
        char name[64];
        int len = snprintf(name, sizeof name, "void kernel_%07u<float>(float*, int)", i);
        uint64_t ts = 1000000 + (uint64_t)i * 2000;
        ct_rec_api a = {.start = ts - 500, .function = 1, .corr = i + 1};
        ct_rec_launch l = {.corr = i + 1, .function = i + 2, .grid = {i, 1, 1},
                           .block = {128, 1, 1}};
        ct_rec_gpu g = {.start = ts + 100, .corr = i + 1, .kind = CT_GPU_KERNEL};
        RB_ENC(&t, ct_enc_string(&t.e, ts - 500, i + 2, name, (size_t)len));
        RB_ENC(&t, ct_enc_launch(&t.e, ts, &l));
        RB_ENC(&t, ct_enc_api(&t.e, ts, &a));
        RB_ENC(&t, ct_enc_gpu(&t.e, ts + 1000, &g));
    }
    ASSERT_INT(rb_close(&t, 1000000 + (uint64_t)n * 2000 + 5000), ==, 0);
    return 0;
}

TEST_IMPL(hostile_million_kernel_names)
{
    char path[4096];
    const uint32_t n = 1000000;
    if (rb_many_names(rb_tmp(path, "names.cutrace"), n))
        return 1;
    ct_stats st;
    ASSERT_INT(rb_read(path, CT_REC_LAUNCH, &st, NULL, 0), ==, n);
    ctt_proc p;
    long rss;
    char *sum[] = {"summary", "--top", "5", path, NULL};
    if (rb_cutrace(&p, 0, sum, 0, &rss))
        return 1;
    ASSERT_CONTAINS(p.out, "kernel_");
    ctt_proc_free(&p);
    /* The analyzer keeps statistics per distinct name (cta_model.h): ~290 bytes each today. */
    printf("summary of %u kernel names: %ld KiB resident\n", n, rss);
    ASSERT_INT(rss, <, 1024 * 1024);
    char *dump[] = {"dump", path, NULL};
    if (rb_cutrace(&p, 0, dump, 0, &rss))
        return 1;
    ctt_proc_free(&p);
    printf("dump: %ld KiB resident\n", rss);
    /* dump streams records; it keeps only the string table (~80 bytes a name with its index) */
    ASSERT_INT(rss, <, 128 * 1024);
    char *tl[] = {"timeline", "-o", "/dev/null", path, NULL};
    if (rb_cutrace(&p, 0, tl, 0, &rss))
        return 1;
    ctt_proc_free(&p);
    printf("timeline: %ld KiB resident\n", rss);
    ASSERT_INT(rss, <, 1024 * 1024);
    return 0;
}

/* A file header and then raw chunks built by hand, for what the writer never writes. */
typedef struct {
    FILE *f;
    uint64_t seq;
    uint8_t *out;
} rb_raw;

static int rb_raw_open(rb_raw *w, const char *path)
{
    static char scratch[1 << 16];
    static uint8_t hdr[1 << 17];
    ct_header h;
    ASSERT_INT(ct_header_collect(&h, "test", "robust", scratch, sizeof scratch), ==, 0);
    ssize_t n = ct_header_encode(&h, hdr, sizeof hdr);
    ASSERT_INT(n, >, 0);
    w->f = fopen(path, "wb");
    ASSERT(w->f != NULL);
    ASSERT_UINT(fwrite(hdr, 1, (size_t)n, w->f), ==, (size_t)n);
    w->seq = 0;
    w->out = malloc(ct_chunk_bound(1 << 20));
    ASSERT(w->out != NULL);
    return 0;
}

/* A stored chunk of e's records (possibly none) with this lost count. */
static int rb_raw_chunk(rb_raw *w, ct_enc *e, uint64_t lost)
{
    ct_chunk_info ci = {.tid = 1, .lost = lost, .seq = w->seq++};
    ct_enc_chunk_info(e, &ci);
    ssize_t n = ct_chunk_build(NULL, &ci, e->buf, e->len, w->out, ct_chunk_bound(1 << 20));
    ASSERT_INT(n, >, 0);
    ASSERT_UINT(fwrite(w->out, 1, (size_t)n, w->f), ==, (size_t)n);
    ct_enc_restart(e);
    return 0;
}

/* A zstd chunk of the records raw[0..len) (up to CT_CHUNK_RAW_MAX), which must compress to
 * less than max_file bytes: what a small hostile file can make a reader decode. */
static int rb_zchunk(rb_raw *w, const uint8_t *raw, size_t len, size_t max_file)
{
    size_t cap = ct_chunk_bound(len);
    uint8_t *out = malloc(cap);
    ct_zctx *z = ct_zctx_new(1);
    ASSERT(out && z);
    /* A low-water mark above every record: nothing waits for later chunks. */
    ct_chunk_info ci = {.tid = 1, .seq = w->seq++, .ts_base = 1ull << 40,
                        .low_water = 1ull << 50};
    ssize_t n = ct_chunk_build(z, &ci, raw, len, out, cap);
    ASSERT_INT(n, >, 0);
    ASSERT_UINT((size_t)n, <, max_file);
    ASSERT_UINT(fwrite(out, 1, (size_t)n, w->f), ==, (size_t)n);
    ct_zctx_free(z);
    free(out);
    return 0;
}

TEST_IMPL(hostile_zero_length_chunks)
{
    char path[4096], only[4096];
    static uint8_t buf[1 << 20];
    ct_enc e;
    const int n = 100000;
    /* Only empty chunks (and some that report losses): no records, no end. */
    rb_raw w;
    if (rb_raw_open(&w, rb_tmp(only, "empty.cutrace")))
        return 1;
    ct_enc_init(&e, buf, sizeof buf);
    for (int i = 0; i < n; i++)
        if (rb_raw_chunk(&w, &e, i % 1000 == 0))
            return 1;
    ASSERT_INT(fclose(w.f), ==, 0);
    free(w.out);
    ct_stats st;
    char warn[4096];
    ASSERT_INT(rb_read(only, 0, &st, warn, sizeof warn), ==, 0);
    ASSERT_UINT(st.chunks, ==, n);
    ASSERT_UINT(st.lost, ==, n / 1000);
    ASSERT_CONTAINS(warn, "no end record");
    if (rb_all_commands(only, 0, 64, "no end record"))
        return 1;
    /* Empty chunks between the records of a complete trace. */
    if (rb_raw_open(&w, rb_tmp(path, "sparse.cutrace")))
        return 1;
    ct_enc_init(&e, buf, sizeof buf);
    ASSERT_INT(ct_enc_string(&e, 1, 1, "cudaFree", 8), ==, 0);
    for (int i = 0; i < n; i++) {
        if (i % 1000 == 0) {
            ct_rec_api a = {.start = (uint64_t)i * 1000, .function = 1, .corr = (uint64_t)i + 1};
            ASSERT_INT(ct_enc_api(&e, (uint64_t)i * 1000 + 10, &a), ==, 0);
        }
        if (rb_raw_chunk(&w, &e, 0))
            return 1;
    }
    ct_rec_end end = {CT_END_EXIT, 0, 101, 0};
    ASSERT_INT(ct_enc_end(&e, (uint64_t)n * 1000, &end), ==, 0);
    if (rb_raw_chunk(&w, &e, 0))
        return 1;
    ASSERT_INT(fclose(w.f), ==, 0);
    free(w.out);
    ASSERT_INT(rb_read(path, CT_REC_API, &st, warn, sizeof warn), ==, n / 1000);
    ASSERT_INT(st.complete, ==, 1);
    ASSERT_UINT(st.chunks, ==, n + 1);
    return rb_all_commands(path, 0, 64, NULL);
}

/* Stacks of the largest depth the format allows (and one deeper) with 4 KiB frame names,
 * holding allocations through a peak and an out-of-memory; and API calls nested 10000 deep. */
TEST_IMPL(hostile_deep_stacks)
{
    char path[4096];
    rb_trace t;
    rb_open(&t, rb_tmp(path, "deep.cutrace"));
    static char name[4096];
    RB_ENC(&t, ct_enc_string(&t.e, 1, 1, "cudaMalloc", 10));
    for (uint32_t f = 0; f < CT_STACK_MAX + 1; f++) {
        memset(name, 'a' + f % 26, sizeof name);
        snprintf(name, 32, "frame_%u", f);
        name[strlen(name)] = '_';
        RB_ENC(&t, ct_enc_string(&t.e, 1, 100 + f, name, sizeof name));
        ct_rec_frame fr = {f + 1, 100 + f, 100 + f, f * 16, CT_FRAME_NATIVE, 0};
        RB_ENC(&t, ct_enc_frame(&t.e, 1, &fr));
    }
    static uint32_t frames[CT_STACK_MAX + 1];
    for (uint32_t s = 0; s < 64; s++) {
        for (uint32_t k = 0; k < CT_STACK_MAX; k++)
            frames[k] = (k + s) % CT_STACK_MAX + 1;
        RB_ENC(&t, ct_enc_stack(&t.e, 2, s + 1, frames, CT_STACK_MAX));
    }
    for (uint32_t k = 0; k <= CT_STACK_MAX; k++)
        frames[k] = k + 1;
    /* One frame too many: the encoder refuses it, so it is written as raw bytes. */
    ASSERT_INT(ct_enc_stack(&t.e, 2, 65, frames, CT_STACK_MAX + 1), ==, CT_E_INVAL);
    uint64_t corr = 1;
    for (uint32_t s = 0; s < 66; s++) {
        uint64_t ts = 1000000 + s * 1000;
        ct_rec_mem m = {.op = CT_MEM_ALLOC, .kind = CT_ALLOC_DEVICE, .corr = corr,
                        .address = (s + 1) << 30, .size = 1ull << 30, .stack = s + 1,
                        .result = s == 65 ? 2 : 0};
        ct_rec_api a = {.start = ts - 100, .function = 1, .corr = corr++,
                        .result = m.result};
        RB_ENC(&t, ct_enc_mem(&t.e, ts, &m));
        RB_ENC(&t, ct_enc_api(&t.e, ts, &a));
    }
    const uint64_t depth = 10000, base = 2000000;
    for (uint64_t i = depth; i-- > 0;) {
        ct_rec_api a = {.start = base + i, .function = 1, .corr = corr + i,
                        .parent = i ? corr + i - 1 : 0};
        RB_ENC(&t, ct_enc_api(&t.e, base + 2 * depth - i, &a));
    }
    ASSERT_INT(rb_close(&t, 3000000), ==, 0);
    ct_stats st;
    ASSERT_INT(rb_read(path, CT_REC_API, &st, NULL, 0), ==, 66 + depth);
    ASSERT_UINT(st.bad_records, ==, 0);
    if (rb_all_commands(path, 0, 128, NULL))
        return 1;
    ctt_proc p;
    char *sum[] = {"summary", path, NULL};
    if (rb_cutrace(&p, 0, sum, 0, NULL))
        return 1;
    ASSERT_CONTAINS(p.out, "frame_1_");
    ctt_proc_free(&p);
    return 0;
}

/* A zstd bomb: 2 KiB of file that decompresses to a 64 MiB chunk (the format's limit) of 22
 * million 3-byte records whose times go backwards, so a time-ordered reader must sort them. The
 * sort must stay within the reader's pending-memory bound (its records are delivered in stream
 * order and counted late beyond it), not take 136 bytes per record. */
TEST_IMPL(hostile_unsorted_decompression_bomb)
{
    char path[4096];
    rb_raw w;
    if (rb_raw_open(&w, rb_tmp(path, "bomb.cutrace")))
        return 1;
    size_t raw_len = CT_CHUNK_RAW_MAX - CT_CHUNK_RAW_MAX % 3;
    uint8_t *raw = malloc(raw_len);
    ASSERT(raw != NULL);
    for (size_t i = 0; i < raw_len; i += 3) {
        raw[i] = CT_REC_CPU; /* type */
        raw[i + 1] = 1;      /* len: just the dts */
        raw[i + 2] = 1;      /* dts = -1 (zigzag) */
    }
    if (rb_zchunk(&w, raw, raw_len, 1u << 20))
        return 1;
    ASSERT_INT(fclose(w.f), ==, 0);
    free(raw);
    free(w.out);
    ctt_proc p;
    long rss;
    char *sum[] = {"summary", path, NULL};
    if (rb_cutrace(&p, 0, sum, 0, &rss))
        return 1;
    printf("summary: %ld KiB resident\n", rss);
    ASSERT_CONTAINS(p.err, "records not in time order, too many to sort");
    ctt_proc_free(&p);
    /* The chunk (64 MiB), its records kept for sorting (within the 256 MiB pending bound) and
     * the output buffer; nothing per record beyond that. */
    ASSERT_INT(rss, <, 400 * 1024);
    return 0;
}

/* Ten chunks of 64 MiB, each a thousand distinct 64 KiB strings, in a file of a few KiB: the
 * reader keeps definitions up to CT_DEFS_MAX and ignores the rest with a warning. */
TEST_IMPL(hostile_definitions_bomb)
{
    char path[4096];
    rb_raw w;
    if (rb_raw_open(&w, rb_tmp(path, "defs.cutrace")))
        return 1;
    static char text[CT_STRING_MAX];
    memset(text, 'n', sizeof text);
    uint8_t *raw = malloc(CT_CHUNK_RAW_MAX);
    ASSERT(raw != NULL);
    uint32_t id = 1;
    for (int chunk = 0; chunk < 10; chunk++) {
        ct_enc e;
        ct_enc_init(&e, raw, CT_CHUNK_RAW_MAX);
        while (ct_enc_string(&e, 1, id, text, sizeof text) == 0)
            id++;
        if (rb_zchunk(&w, raw, e.len, 1u << 20))
            return 1;
    }
    ASSERT_INT(fclose(w.f), ==, 0);
    free(raw);
    free(w.out);
    struct stat st;
    ASSERT_INT(stat(path, &st), ==, 0);
    printf("%u strings of %u bytes in a file of %lld bytes\n", id - 1, CT_STRING_MAX,
           (long long)st.st_size);
    ctt_proc p;
    long rss;
    char *sum[] = {"summary", path, NULL};
    if (rb_cutrace(&p, 0, sum, 0, &rss))
        return 1;
    printf("summary: %ld KiB resident\n", rss);
    ASSERT_CONTAINS(p.err, "bytes of string, frame and stack definitions: the rest are ignored");
    ctt_proc_free(&p);
    /* The definitions' bound, two decoded chunks (the one just finished is freed after the
     * next is decoded), 32 MiB for the rest; without the bound this took 789 MB. */
    ASSERT_INT(rss, <, (CT_DEFS_MAX >> 10) + (2 * CT_CHUNK_RAW_MAX >> 10) + 32 * 1024);
    return 0;
}
