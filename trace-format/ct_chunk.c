/* Chunk framing (FORMAT.md 3.2) and the file writer. ct_chunk_build and ct_writer_chunk
 * allocate nothing; with compression off they make only async-signal-safe calls (the CRC, memcpy,
 * write, and for the reserve fallocate, getrlimit, ftruncate), so a signal handler can flush
 * through them. */
#define _GNU_SOURCE
#include "cttrace.h"
#include "ct_header.h"
#include "ct_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

_Static_assert(sizeof(struct ct__chunk_layout) == CT_CHUNK_HEADER_SIZE,
               "CT_CHUNK_HEADER_SIZE is the size of the header CT__CHUNK_FIELDS lists");

struct ct_zctx {
    ZSTD_CCtx *cctx;
    int level;
};

ct_zctx *ct_zctx_new(int level)
{
    ct_zctx *z = malloc(sizeof *z);
    if (!z)
        return NULL;
    z->cctx = ZSTD_createCCtx();
    z->level = level ? level : CT_ZLEVEL_DEFAULT;
    if (!z->cctx) {
        free(z);
        return NULL;
    }
    return z;
}

void ct_zctx_free(ct_zctx *z)
{
    if (!z)
        return;
    ZSTD_freeCCtx(z->cctx);
    free(z);
}

size_t ct_chunk_bound(size_t raw_len)
{
    size_t zb = ZSTD_COMPRESSBOUND(raw_len);
    return CT_CHUNK_HEADER_SIZE + (zb > raw_len ? zb : raw_len);
}

ssize_t ct_chunk_build(ct_zctx *z, ct_chunk_info *info, const void *raw, size_t raw_len,
                       void *out, size_t out_cap)
{
    if (raw_len > CT_CHUNK_RAW_MAX || out_cap < ct_chunk_bound(raw_len))
        return CT_E_INVAL;
    ct__scan_result sr;
    if (ct__scan_records(raw, raw_len, info->ts_base, &sr, 0, NULL, NULL) != raw_len)
        return CT_E_INVAL;
    uint8_t *o = out, *payload = o + CT_CHUNK_HEADER_SIZE;
    size_t psize = raw_len;
    int stored_raw = 1;
    if (z && raw_len > 0) {
        size_t r = ZSTD_compressCCtx(z->cctx, payload, out_cap - CT_CHUNK_HEADER_SIZE, raw,
                                     raw_len, z->level);
        if (ZSTD_isError(r))
            return CT_E_ZSTD;
        /* Incompressible records are stored as they are: smaller, and faster to read. */
        if (r < raw_len) {
            psize = r;
            stored_raw = 0;
        }
    }
    if (stored_raw) {
        memcpy(payload, raw, raw_len);
        info->flags |= CT_CHUNK_RAW;
    } else {
        info->flags &= (uint16_t)~CT_CHUNK_RAW;
    }
    info->t_min = sr.t_min;
    info->t_max = sr.t_max;
    info->nrecords = sr.nrecords;
    info->raw_size = (uint32_t)raw_len;
    info->payload_size = (uint32_t)psize;

    ct__le32(o + CT__CHUNK_AT(magic), CT_CHUNK_MAGIC);
    ct__le16(o + CT__CHUNK_AT(header_size), CT_CHUNK_HEADER_SIZE);
#define CT__PUT_info(name, bits) ct__le##bits(o + CT__CHUNK_AT(name), info->name);
#define CT__PUT_frame(name, bits)
#define CT__PUT(name, bits, from) CT__PUT_##from(name, bits)
    CT__CHUNK_FIELDS(CT__PUT)
    ct__le32(o + CT__CHUNK_AT(payload_crc), ct__crc32c(payload, psize));
    ct__le32(o + CT__CHUNK_AT(header_crc), ct__crc32c(o, CT__CHUNK_AT(header_crc)));
    return (ssize_t)(CT_CHUNK_HEADER_SIZE + psize);
}

struct ct_writer {
    int fd;
    int (*fd_check)(void *arg, int fd);
    void *fd_check_arg;
    ct_zctx *z;
    uint8_t *out;
    size_t out_cap, max_raw;
    uint64_t seq, bytes;
    size_t reserve;    /* ct_writer_opts.reserve */
    uint64_t held;     /* the file is allocated up to here (UINT64_MAX: it cannot be) */
    int spend;         /* a chunk was refused for room: the next one may use the reserve */
};

static int ct__write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return CT_E_IO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int ct_writer_open_fd(ct_writer **wp, int fd, const ct_header *h, const ct_writer_opts *o)
{
    *wp = NULL;
    ct_writer *w = calloc(1, sizeof *w);
    size_t hcap = ct__header_bound(h);
    uint8_t *hbuf = malloc(hcap);
    int rc = CT_E_NOMEM;
    if (!w || !hbuf)
        goto fail;
    w->fd = fd;
    if (o) {
        w->fd_check = o->fd_check;
        w->fd_check_arg = o->fd_check_arg;
        w->reserve = o->reserve;
    }
    w->max_raw = o && o->max_chunk_raw ? o->max_chunk_raw : (4u << 20);
    if (w->max_raw > CT_CHUNK_RAW_MAX) {
        rc = CT_E_INVAL;
        goto fail;
    }
    w->out_cap = ct_chunk_bound(w->max_raw);
    w->out = malloc(w->out_cap);
    w->z = ct_zctx_new(o ? o->zlevel : 0);
    if (!w->out || !w->z)
        goto fail;
    ssize_t n = ct_header_encode(h, hbuf, hcap);
    if (n < 0) {
        rc = (int)n;
        goto fail;
    }
    rc = ct__write_all(fd, hbuf, (size_t)n);
    if (rc < 0)
        goto fail;
    w->bytes = (uint64_t)n;
    free(hbuf);
    *wp = w;
    return 0;
fail:
    free(hbuf);
    if (w) {
        ct_zctx_free(w->z);
        free(w->out);
        free(w);
    }
    close(fd);
    return rc;
}

int ct_writer_open(ct_writer **w, const char *path, const ct_header *h, const ct_writer_opts *o)
{
    *w = NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return CT_E_IO;
    return ct_writer_open_fd(w, fd, h, o);
}

/* Whether n bytes may be written with the reserve still free after them: under the soft
 * RLIMIT_FSIZE (else errno EFBIG), and allocated (else ENOSPC or EDQUOT from fallocate). The
 * allocation goes ahead in steps of 16 reserves, so that a busy writer seldom asks, and near a
 * full disk exactly what is needed. A file system that cannot allocate ahead (EOPNOTSUPP) is
 * written as it comes. -1 refuses the chunk, and lets the next one use the reserve. */
static int ct__writer_room(ct_writer *w, size_t n)
{
    if (!w->reserve || w->spend) {
        w->spend = 0;
        return 0;
    }
    uint64_t need = w->bytes + n + w->reserve, step = 16 * (uint64_t)w->reserve;
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur) {
        errno = EFBIG;
        w->spend = 1;
        return -1;
    }
    if (need <= w->held || w->held == UINT64_MAX)
        return 0;
    if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->bytes, (off_t)(need + step - w->bytes)) == 0) {
        w->held = need + step;
    } else if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->bytes, (off_t)(need - w->bytes)) == 0) {
        w->held = need;
    } else if (errno == ENOSPC || errno == EDQUOT) {
        w->spend = 1;
        return -1;
    } else {
        w->held = UINT64_MAX;
    }
    return 0;
}

int ct_writer_chunk(ct_writer *w, ct_enc *e, ct_chunk_info *info, int compress)
{
    if (e->len > w->max_raw)
        return CT_E_INVAL;
    if (e->len == 0 && info->lost == 0)
        return 0;
    info->seq = w->seq++;
    ct_enc_chunk_info(e, info);
    ssize_t n = ct_chunk_build(compress ? w->z : NULL, info, e->buf, e->len, w->out, w->out_cap);
    ct_enc_restart(e);
    if (n < 0)
        return (int)n;
    /* checked after compressing, as close to the write as it can be; a descriptor closed
     * between the check and the write (EBADF: a program closing every descriptor it did not
     * open, preempted there) is checked again, and the chunk written through what replaces it */
    for (int tries = 0;; tries++) {
        int fd = w->fd;
        if (w->fd_check && (w->fd = w->fd_check(w->fd_check_arg, w->fd)) < 0) {
            w->seq--; /* nothing written: the next chunk takes its number */
            return CT_E_IO;
        }
        if (w->fd != fd)
            w->held = w->bytes; /* another file now, or reopened: what it holds is not known */
        if (ct__writer_room(w, (size_t)n) != 0) {
            w->seq--;
            return CT_E_IO;
        }
        int rc = ct__write_all(w->fd, w->out, (size_t)n);
        if (rc == 0) {
            w->bytes += (uint64_t)n;
            return 0;
        }
        if (errno == EBADF && w->fd_check && tries < 2)
            continue;
        /* A write cut short (a full disk without the reserve) leaves part of a chunk: the file
         * goes back to its last whole one, which frees that part for what comes next. */
        int err = errno;
        if (ftruncate(w->fd, (off_t)w->bytes) == 0)
            lseek(w->fd, (off_t)w->bytes, SEEK_SET);
        w->seq--;
        errno = err;
        return rc;
    }
}

uint64_t ct_writer_bytes(const ct_writer *w) { return w->bytes; }

int ct_writer_close(ct_writer *w)
{
    if (!w)
        return 0;
    /* The space held past the end is given back: a hole punched there frees it on tmpfs, a
     * truncation to the same size on ext4 (which punches nothing past the end). */
    if (w->held != UINT64_MAX && w->held > w->bytes &&
        fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)w->bytes,
                  (off_t)(w->held - w->bytes)) == 0)
        (void)!ftruncate(w->fd, (off_t)w->bytes);
    int rc = close(w->fd) == 0 ? 0 : CT_E_IO;
    ct_zctx_free(w->z);
    free(w->out);
    free(w);
    return rc;
}
