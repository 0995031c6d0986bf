#define _GNU_SOURCE
#include "fmt.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

/* The library's CRC32C, internal to it but linked in with the archive. */
uint32_t ct__crc32c(const void *buf, size_t len);

ct_writer *fmt_writer(const char *path)
{
    static char scratch[1 << 16];
    ct_header h;
    if (ct_header_collect(&h, "test", "FMT=1", scratch, sizeof scratch) != 0)
        abort();
    ct_writer *w;
    ct_writer_opts o = {0};
    if (ct_writer_open(&w, path, &h, &o) != 0) {
        fprintf(stderr, "fmt_writer: cannot create %s\n", path);
        abort();
    }
    return w;
}

ct_writer *fmt_writer_enc(const char *path, ct_enc *e)
{
    static uint8_t buf[4096];
    ct_enc_init(e, buf, sizeof buf);
    return fmt_writer(path);
}

static void fmt_warn(void *ctx, const char *path, const char *msg)
{
    fmt_log *l = ctx;
    size_t used = strlen(l->warn);
    snprintf(l->warn + used, sizeof l->warn - used, "%s: %s\n", path, msg);
    l->nwarn++;
}

int fmt_read(fmt_log *l, const char *const *paths, size_t n, const ct_reader_opts *opts,
             char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    ct_reader_opts o = opts ? *opts : (ct_reader_opts){0};
    o.warn = fmt_warn;
    o.warn_ctx = l;
    int rc = ct_reader_open(&l->r, paths, n, &o, err, errlen);
    if (rc < 0)
        return rc;
    ct_rec rec;
    while ((l->rc = ct_reader_next(l->r, &rec)) > 0) {
        if (l->n == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 1024;
            l->recs = realloc(l->recs, l->cap * sizeof *l->recs);
            if (!l->recs)
                abort();
        }
        /* Unknown records' bytes live only until the next call: keep a copy. */
        if (rec.type == CT_REC_UNKNOWN) {
            uint8_t *copy = malloc(rec.u.unknown.len + 1);
            if (!copy)
                abort();
            memcpy(copy, rec.u.unknown.bytes, rec.u.unknown.len);
            rec.u.unknown.bytes = copy;
        }
        l->recs[l->n++] = rec;
    }
    return 0;
}

int fmt_read1(fmt_log *l, const char *path)
{
    char err[1024];
    int rc = fmt_read(l, &path, 1, NULL, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "fmt_read1: %s\n", err);
    return rc;
}

void fmt_free(fmt_log *l)
{
    ct_reader_close(l->r);
    for (size_t i = 0; i < l->n; i++)
        if (l->recs[i].type == CT_REC_UNKNOWN)
            free((void *)l->recs[i].u.unknown.bytes);
    free(l->recs);
    l->r = NULL;
    l->recs = NULL;
}

size_t fmt_count(const fmt_log *l, uint32_t type)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->recs[i].type == type;
    return n;
}

uint64_t fmt_api_trace(const char *path, int nchunks, int per, uint64_t *chunk_off)
{
    ct_writer *w = fmt_writer(path);
    static uint8_t buf[1 << 20];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    int k = 0;
    for (int c = 0; c < nchunks; c++) {
        if (chunk_off)
            chunk_off[c] = ct_writer_bytes(w);
        if (c == 0 && ct_enc_string(&e, 5, 1, "cudaLaunchKernel", 16) != 0)
            abort();
        for (int i = 0; i < per; i++, k++) {
            ct_rec_api a = {.start = 1000u * k + 10, .function = 1, .result = (uint32_t)(k % 3),
                            .corr = (uint64_t)k + 1};
            if (ct_enc_api(&e, 1000u * k + 510, &a) != 0)
                abort();
        }
        ct_chunk_info ci = {.tid = 100, .low_water = 1000u * (uint64_t)k};
        if (ct_writer_chunk(w, &e, &ci, 1) != 0)
            abort();
    }
    uint64_t size = ct_writer_bytes(w);
    if (ct_writer_close(w) != 0)
        abort();
    return size;
}

int fmt_check_api(const fmt_log *l, int n)
{
    int k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const ct_rec *r = &l->recs[i];
        if (r->type != CT_REC_API)
            continue;
        ASSERT_INT(k, <, n);
        ASSERT_UINT(r->ts, ==, 1000u * k + 510);
        ASSERT_UINT(r->u.api.start, ==, 1000u * k + 10);
        ASSERT_UINT(r->u.api.corr, ==, (uint64_t)k + 1);
        ASSERT_UINT(r->u.api.result, ==, (uint32_t)(k % 3));
        ASSERT_UINT(r->tid, ==, 100);
        ASSERT_STR(ct_reader_string(l->r, r->file, r->u.api.function), "cudaLaunchKernel");
        k++;
    }
    ASSERT_INT(k, ==, n);
    return 0;
}

int fmt_truncate(const char *path, uint64_t size) { return truncate(path, (off_t)size); }

int fmt_copy(const char *from, const char *to, uint64_t size)
{
    size_t len;
    char *data = ctt_read_file(from, &len);
    if (!data)
        return -1;
    if (size > len)
        size = len;
    int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0 && write(fd, data, size) == (ssize_t)size;
    if (fd >= 0)
        close(fd);
    free(data);
    return ok ? 0 : -1;
}

int fmt_poke(const char *path, uint64_t off, const void *bytes, size_t n)
{
    int fd = open(path, O_WRONLY);
    int ok = fd >= 0 && pwrite(fd, bytes, n, (off_t)off) == (ssize_t)n;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

int fmt_peek(const char *path, uint64_t off, void *bytes, size_t n)
{
    int fd = open(path, O_RDONLY);
    int ok = fd >= 0 && pread(fd, bytes, n, (off_t)off) == (ssize_t)n;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

int fmt_set_version(const char *path, unsigned major, unsigned minor)
{
    uint8_t pre[16];
    if (fmt_peek(path, 0, pre, 16) != 0)
        return -1;
    pre[8] = (uint8_t)major;
    pre[9] = (uint8_t)(major >> 8);
    pre[10] = (uint8_t)minor;
    pre[11] = (uint8_t)(minor >> 8);
    uint32_t body = pre[12] | pre[13] << 8 | pre[14] << 16 | (uint32_t)pre[15] << 24;
    size_t hlen = 16 + body;
    uint8_t *h = malloc(hlen);
    if (!h || fmt_peek(path, 0, h, hlen) != 0) {
        free(h);
        return -1;
    }
    memcpy(h, pre, 16);
    uint32_t crc = ct__crc32c(h, hlen);
    uint8_t c[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24)};
    int rc = fmt_poke(path, 0, h, 16) || fmt_poke(path, hlen, c, 4);
    free(h);
    return rc ? -1 : 0;
}

const char *fmt_cutrace(char buf[4096])
{
#ifdef __SANITIZE_ADDRESS__
    return ctt_path(buf, "asan/bin/cutrace");
#else
    return ctt_path(buf, "bin/cutrace");
#endif
}
