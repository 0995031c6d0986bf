/* The reader (FORMAT.md sections 3.3, 4 and 6): chunk loading, merging and the public API;
 * definitions are in ct_defs.c, record decoding in ct_decode.c (ct_read_internal.h).
 *
 * Per file: chunks are read in file order through a window buffer; each good chunk is
 * decompressed whole into a cursor, its definitions are registered, and the cursor joins a heap
 * ordered by the time of its next record. A record is delivered once its time is below the
 * file's low-water mark (the largest promised by any chunk read so far), so memory holds only
 * the chunks the writer's lag keeps open. Across files, a second heap picks the file whose next
 * record is earliest. Every size read from a file is checked before it is used. */
#define _GNU_SOURCE
#include "ct_read_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* Small enough that merging a thousand ranks stays cheap, large enough for few reads. */
#define CT__WINDOW_MIN (64u << 10)
#define CT__DEFAULT_MAX_PENDING ((size_t)256 << 20)
#define CT__CHUNK_HEADER_MAX 4096u

/* ---- per-file state ------------------------------------------------------------------------ */

void ct__warn(ct__infile *f, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (f->r->opts.warn)
        f->r->opts.warn(f->r->opts.warn_ctx, f->path, msg);
    else
        fprintf(stderr, "cutrace: warning: %s: %s\n", f->path, msg);
}

/* Pointer to len bytes at file offset off (the caller checked off + len <= size), or NULL with
 * the reader's error set. Valid until the next call. */
static const uint8_t *ct__infile_bytes(ct__infile *f, uint64_t off, size_t len)
{
    if (off >= f->win_off && off + len <= f->win_off + f->win_len)
        return f->win + (off - f->win_off);
    size_t least = f->headers_only ? CT__CHUNK_HEADER_MAX : CT__WINDOW_MIN;
    size_t want = len > least ? len : least;
    if (want > f->size - off)
        want = (size_t)(f->size - off);
    if (want > f->win_cap) {
        uint8_t *nw = realloc(f->win, want);
        if (!nw) {
            snprintf(f->r->err, sizeof f->r->err, "%s: out of memory reading %zu bytes",
                     f->path, want);
            return NULL;
        }
        f->win = nw;
        f->win_cap = want;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t n = pread(f->fd, f->win + got, want - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(f->r->err, sizeof f->r->err, "%s: read at offset %llu failed: %s",
                     f->path, (unsigned long long)(off + got),
                     n < 0 ? strerror(errno) : "file shrank while being read");
            f->win_len = 0;
            return NULL;
        }
        got += (size_t)n;
    }
    f->win_off = off;
    f->win_len = want;
    return f->win;
}

static inline int ct__cursor_before(const ct__cursor *a, const ct__cursor *b)
{
    return a->head_ts != b->head_ts ? a->head_ts < b->head_ts : a->seq < b->seq;
}

static void ct__infile_sift_down(ct__infile *f, size_t i)
{
    ct__cursor **h = f->heap;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < f->nheap && ct__cursor_before(h[l], h[m]))
            m = l;
        if (l + 1 < f->nheap && ct__cursor_before(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            break;
        ct__cursor *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    f->runner = f->nheap < 2 ? NULL
              : f->nheap > 2 && ct__cursor_before(h[2], h[1]) ? h[2] : h[1];
}

/* Restores heap order after the top cursor's time changed: nothing to do while it is still
 * before the runner-up (whose time cannot have changed: only the top is ever advanced). */
static inline void ct__infile_settle(ct__infile *f)
{
    if (!f->runner || ct__cursor_before(f->heap[0], f->runner))
        return;
    ct__infile_sift_down(f, 0);
}

static int ct__infile_push(ct__infile *f, ct__cursor *c)
{
    if (ct__reserve(&f->heap, &f->heap_cap, f->nheap, sizeof *f->heap) < 0)
        return CT_E_NOMEM;
    size_t i = f->nheap++;
    f->heap[i] = c;
    while (i > 0 && ct__cursor_before(f->heap[i], f->heap[(i - 1) / 2])) {
        ct__cursor *t = f->heap[i];
        f->heap[i] = f->heap[(i - 1) / 2];
        f->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
    ct__infile_sift_down(f, 0); /* only notes the runner-up: the heap is in order */
    return 0;
}

/* ---- chunk loading ------------------------------------------------------------------------ */

typedef enum { CT__HDR_OK, CT__HDR_BAD, CT__HDR_SHORT } ct__hdr_state;

/* Checks the chunk header at off and decodes it into *ci, *hsize and *pcrc (payload CRC). */
static ct__hdr_state ct__chunk_header(ct__infile *f, uint64_t off, ct_chunk_info *ci,
                                    uint32_t *hsize, uint32_t *pcrc, int *ioerr)
{
    uint64_t avail = f->size - off;
    if (avail < 8)
        return CT__HDR_SHORT;
    const uint8_t *h = ct__infile_bytes(f, off, 8);
    if (!h) {
        *ioerr = 1;
        return CT__HDR_BAD;
    }
    uint32_t hs = ct__rd16(h + 4);
    if (ct__rd32(h) != CT_CHUNK_MAGIC || hs < CT_CHUNK_HEADER_MIN || hs > CT__CHUNK_HEADER_MAX)
        return CT__HDR_BAD;
    if (avail < hs)
        return CT__HDR_SHORT;
    h = ct__infile_bytes(f, off, hs);
    if (!h) {
        *ioerr = 1;
        return CT__HDR_BAD;
    }
    if (ct__crc32c(h, hs - 4) != ct__rd32(h + hs - 4))
        return CT__HDR_BAD;
    memset(ci, 0, sizeof *ci);
    ci->flags = ct__rd16(h + 6);
    ci->payload_size = ct__rd32(h + 8);
    ci->raw_size = ct__rd32(h + 12);
    ci->seq = ct__rd64(h + 16);
    ci->tid = ct__rd32(h + 24);
    ci->nrecords = ct__rd32(h + 28);
    ci->ts_base = ct__rd64(h + 32);
    ci->corr_base = ct__rd64(h + 40);
    ci->t_min = ct__rd64(h + 48);
    ci->t_max = ct__rd64(h + 56);
    ci->low_water = ct__rd64(h + 64);
    ci->lost = ct__rd64(h + 72);
    ci->max_span = hs >= 96 ? ct__rd64(h + 84) : 0; /* 1.1 */
    ci->offset = off;
    *hsize = hs;
    *pcrc = ct__rd32(h + 80);
    /* A header whose sizes break the limits is treated as damaged, whatever its CRC says. */
    if (ci->raw_size > CT_CHUNK_RAW_MAX)
        return CT__HDR_BAD;
    if ((ci->flags & CT_CHUNK_RAW) ? ci->payload_size != ci->raw_size
                                   : ci->payload_size > ZSTD_COMPRESSBOUND(ci->raw_size))
        return CT__HDR_BAD;
    return CT__HDR_OK;
}

/* Searches forward from off + 1 for the next valid chunk header; returns its offset or the
 * file size if there is none. */
static uint64_t ct__resync(ct__infile *f, uint64_t off, int *ioerr)
{
    static const uint8_t magic[4] = {0x43, 0x54, 0x43, 0x4b};
    uint64_t pos = off + 1;
    while (pos + 4 <= f->size) {
        size_t len = f->size - pos > CT__WINDOW_MIN ? CT__WINDOW_MIN : (size_t)(f->size - pos);
        const uint8_t *w = ct__infile_bytes(f, pos, len);
        if (!w) {
            *ioerr = 1;
            return f->size;
        }
        const uint8_t *hit = memmem(w, len, magic, 4);
        if (!hit) {
            pos += len - 3; /* a magic may straddle the window edge */
            continue;
        }
        uint64_t cand = pos + (uint64_t)(hit - w);
        ct_chunk_info ci;
        uint32_t hs, pcrc;
        ct__hdr_state s = ct__chunk_header(f, cand, &ci, &hs, &pcrc, ioerr);
        if (*ioerr)
            return f->size;
        if (s == CT__HDR_OK || s == CT__HDR_SHORT)
            return cand;
        pos = cand + 1;
    }
    return f->size;
}

/* The longest span any chunk header of the file declares (st.max_span), so that a consumer
 * ordering intervals by their start knows from the first record how far back a later record can
 * reach. Reads only the headers (a read of 4 KiB at most per chunk, which holds many small
 * chunks; damage is skipped as ct__infile_load skips it, a torn chunk ends the walk), before anything
 * is delivered. 0, or CT_E_IO. */
static int ct__infile_spans(ct__infile *f)
{
    uint64_t off = f->pos;
    int ioerr = 0;
    while (off < f->size && !ioerr) {
        ct_chunk_info ci;
        uint32_t hs = 0, pcrc = 0;
        f->headers_only = 1;
        ct__hdr_state s = ct__chunk_header(f, off, &ci, &hs, &pcrc, &ioerr);
        f->headers_only = 0;
        if (ioerr || s == CT__HDR_SHORT || (s == CT__HDR_OK && hs + (uint64_t)ci.payload_size >
                                                                f->size - off))
            break; /* a torn chunk is not delivered: its span does not count */
        if (s == CT__HDR_BAD) {
            off = ct__resync(f, off, &ioerr);
            continue;
        }
        if (ci.max_span > f->st.max_span)
            f->st.max_span = ci.max_span;
        off += hs + (uint64_t)ci.payload_size;
    }
    return ioerr ? CT_E_IO : 0;
}

static void ct__infile_set_eof(ct__infile *f)
{
    f->eof = 1;
    f->low_water = UINT64_MAX;
}

static int ct__define_any(void *ctx, uint64_t type, const uint8_t *b, const uint8_t *be)
{
    int rc = ct__define(ctx, (uint32_t)type, b, be);
    return rc < 0 ? rc : 0;
}

/* Reads chunks from f->pos until one yields a cursor or the file ends. 0, or CT_E_* (I/O or
 * memory: the reader's error says what). */
static int ct__infile_load(ct__infile *f)
{
    ct_reader *r = f->r;
    while (!f->eof) {
        uint64_t off = f->pos;
        if (off >= f->size) {
            ct__infile_set_eof(f);
            break;
        }
        ct_chunk_info ci;
        uint32_t hs = 0, pcrc = 0;
        int ioerr = 0;
        ct__hdr_state s = ct__chunk_header(f, off, &ci, &hs, &pcrc, &ioerr);
        if (ioerr)
            return CT_E_IO;
        if (s == CT__HDR_SHORT ||
            (s == CT__HDR_OK && (uint64_t)hs + ci.payload_size > f->size - off)) {
            uint64_t n = f->size - off;
            ct__warn(f, "incomplete chunk at the end (%llu bytes at offset %llu) ignored: the "
                       "writer stopped while writing it",
                    (unsigned long long)n, (unsigned long long)off);
            f->st.torn_tail = n;
            f->st.skipped_bytes += n;
            ct__infile_set_eof(f);
            break;
        }
        if (s == CT__HDR_BAD) {
            uint64_t next = ct__resync(f, off, &ioerr);
            if (ioerr)
                return CT_E_IO;
            ct__warn(f, "damaged data at offsets %llu..%llu (%llu bytes) skipped%s",
                    (unsigned long long)off, (unsigned long long)next,
                    (unsigned long long)(next - off),
                    next == f->size ? " (up to the end of the file)" : "");
            f->st.skipped_bytes += next - off;
            f->pos = next;
            continue;
        }
        uint64_t total = hs + (uint64_t)ci.payload_size;
        f->pos = off + total;
        if (f->seq_started && ci.seq > f->next_seq) {
            ct__warn(f, "chunks %llu..%llu are missing",
                    (unsigned long long)f->next_seq, (unsigned long long)(ci.seq - 1));
            f->st.chunks_missing += ci.seq - f->next_seq;
        }
        if (!f->seq_started || ci.seq + 1 > f->next_seq)
            f->next_seq = ci.seq + 1;
        f->seq_started = 1;

        const uint8_t *payload = ct__infile_bytes(f, off + hs, ci.payload_size);
        if (!payload)
            return CT_E_IO;
        const char *damage = NULL;
        uint8_t *raw = NULL;
        if (ct__crc32c(payload, ci.payload_size) != pcrc)
            damage = "payload checksum mismatch";
        if (!damage) {
            raw = malloc(ci.raw_size ? ci.raw_size : 1);
            if (!raw) {
                snprintf(r->err, sizeof r->err, "%s: out of memory for a %u-byte chunk",
                         f->path, ci.raw_size);
                return CT_E_NOMEM;
            }
            if (ci.flags & CT_CHUNK_RAW) {
                memcpy(raw, payload, ci.raw_size);
            } else {
                size_t got = ZSTD_decompressDCtx(r->dctx, raw, ci.raw_size, payload,
                                                 ci.payload_size);
                if (ZSTD_isError(got) || got != ci.raw_size)
                    damage = "payload does not decompress to its recorded size";
            }
        }
        if (damage) {
            free(raw);
            ct__warn(f, "chunk %llu at offset %llu (%llu bytes) skipped: %s",
                    (unsigned long long)ci.seq, (unsigned long long)off,
                    (unsigned long long)total, damage);
            f->st.corrupt_chunks++;
            f->st.skipped_bytes += total;
            continue;
        }

        f->st.chunks++;
        ct__infile_lost(f, CT_LOSS_BUFFER_FULL, ci.lost); /* a chunk's count is its ring's drops */
        ci.ts_base += (uint64_t)f->offset;
        ci.t_min += (uint64_t)f->offset;
        ci.t_max += (uint64_t)f->offset;
        uint64_t lw = ci.low_water ? ci.low_water + (uint64_t)f->offset : 0;
        ci.low_water = lw;
        if (lw > f->low_water)
            f->low_water = lw;

        ct__cursor *c = calloc(1, sizeof *c);
        if (!c) {
            free(raw);
            return CT_E_NOMEM;
        }
        c->buf = raw;
        c->p = raw;
        c->end = raw + ci.raw_size;
        c->prev_ts = ci.ts_base;
        c->prev_corr = ci.corr_base;
        c->seq = ci.seq;
        c->tid = ci.tid;
        c->bytes = ci.raw_size;
        c->chunk = ci;
        c->chunk_pending = r->opts.file_order && r->opts.chunk_records;
        /* Definitions first, so that ids resolve whatever order records are delivered in.
         * Broken framing is left for ct_decode to report where it is met. */
        ct__scan_result sr;
        ct__scan_records(c->p, (size_t)(c->end - c->p), c->prev_ts, &sr,
                        1u << CT_REC_STRING | 1u << CT_REC_FRAME | 1u << CT_REC_STACK,
                        ct__define_any, f);
        int rc = sr.stop;
        /* Sorting holds every record decoded (ct_rec each, ~45 times a minimal record's 3
         * bytes): beyond the pending bound the chunk is delivered in stream order instead, and
         * its records that come late are counted as such. */
        if (rc == 0 && !sr.sorted && !r->opts.file_order) {
            if ((uint64_t)sr.nrecords * sizeof(ct_rec) <= r->opts.max_pending)
                rc = ct__cursor_sort(f, c, sr.nrecords);
            else
                ct__warn(f, "chunk %llu: %u records not in time order, too many to sort within "
                           "the reader's memory bound (%zu bytes); delivered in stored order",
                        (unsigned long long)ci.seq, sr.nrecords, r->opts.max_pending);
        }
        if (rc < 0) {
            ct__cursor_free(c);
            snprintf(r->err, sizeof r->err, "%s: out of memory", f->path);
            return rc;
        }
        if (!ct__cursor_peek(f, c)) {
            ct__cursor_free(c);
            continue;
        }
        f->pending += c->bytes;
        if (f->pending > f->st.peak_pending)
            f->st.peak_pending = f->pending;
        rc = ct__infile_push(f, c);
        if (rc < 0) {
            ct__cursor_free(c);
            return rc;
        }
        return 0;
    }
    return 0;
}

/* Whether the file's top cursor may deliver: every cursor that could hold an earlier record
 * is loaded (its time is below the writer's low-water mark, or there is nothing left to load),
 * or the reader's memory bound is reached. */
static inline int ct__infile_ready(const ct__infile *f)
{
    return f->heap[0]->head_ts < f->low_water || f->eof || f->r->opts.file_order ||
           f->pending > f->r->opts.max_pending;
}

static const ct__cursor *ct__infile_peek_load(ct__infile *f, int *rc)
{
    *rc = 0;
    for (;;) {
        if (f->nheap > 0) {
            if (ct__infile_ready(f))
                return f->heap[0];
        } else if (f->eof) {
            return NULL;
        }
        *rc = ct__infile_load(f);
        if (*rc < 0)
            return NULL;
    }
}

/* The cursor holding the file's next record in its order (its time is head_ts), or NULL at the
 * file's end; *rc < 0 on error. */
static inline const ct__cursor *ct__infile_peek(ct__infile *f, int *rc)
{
    if (f->nheap > 0 && ct__infile_ready(f)) {
        *rc = 0;
        return f->heap[0];
    }
    return ct__infile_peek_load(f, rc);
}

/* Delivers the record ct__infile_peek announced into *rec and advances: 1, or -1 if it was
 * malformed (skipped). An exhausted cursor is retired, not freed: rec may point into it. */
static int ct__infile_take(ct__infile *f, ct_rec *rec)
{
    if (f->retired) {
        ct__cursor_free(f->retired);
        f->retired = NULL;
    }
    ct__cursor *c = f->heap[0];
    int got = ct__cursor_take(f, c, rec);
    if (got > 0 && rec->type != CT_REC_CHUNK) {
        if (!f->r->opts.file_order) {
            if (rec->ts < f->last_ts)
                f->st.late_records++;
            else
                f->last_ts = rec->ts;
        }
        f->st.records++;
    }
    if (ct__cursor_peek(f, c)) {
        ct__infile_settle(f);
        return got;
    }
    f->pending -= c->bytes;
    f->retired = c;
    f->heap[0] = f->heap[--f->nheap];
    ct__infile_sift_down(f, 0);
    return got;
}

static void ct__infile_finish(ct__infile *f)
{
    if (f->finished)
        return;
    f->finished = 1;
    if (f->st.lost) {
        /* The reason matters to the reader of the warning: full buffers call for a bigger
         * budget, uncollected GPU timings for nothing (the process died with work in flight). */
        static const char *const why[CT_LOSS_STRINGS + 1] = {
            [CT_LOSS_OTHER] = "for another reason",
            [CT_LOSS_BUFFER_FULL] = "because its buffers were full",
            [CT_LOSS_GPU_TIMING] = "GPU timings not collected (operations still running when "
                                   "the process ended, or the event pool empty)",
            [CT_LOSS_WRITE] = "because a write failed",
            [CT_LOSS_STRINGS] = "because its string table was full",
        };
        char detail[512];
        size_t len = 0;
        for (size_t i = 0; i < sizeof why / sizeof *why; i++)
            if (f->lost_by[i] && len < sizeof detail)
                len += (size_t)snprintf(detail + len, sizeof detail - len, "%s%llu %s",
                                        len ? "; " : "", (unsigned long long)f->lost_by[i],
                                        why[i]);
        ct__warn(f, "%llu records were lost by the tracer: %s", (unsigned long long)f->st.lost,
                detail);
    }
    if (f->st.late_records)
        ct__warn(f, "%llu records were delivered out of time order (the writer's low-water "
                   "marks were wrong or the reader's buffer limit was reached)",
                (unsigned long long)f->st.late_records);
    if (!f->st.complete)
        ct__warn(f, "no end record: the process did not finish writing its trace (killed, or "
                   "the file is cut)");
}

/* ---- opening -------------------------------------------------------------------------------- */

static void ct__infile_free(ct__infile *f)
{
    for (size_t i = 0; i < f->nheap; i++)
        ct__cursor_free(f->heap[i]);
    if (f->retired)
        ct__cursor_free(f->retired);
    free(f->heap);
    if (f->fd >= 0)
        close(f->fd);
    free(f->win);
    ct__header_store_free(&f->hs);
    ct_hash_free(&f->str_ids);
    ct_hash_free(&f->frame_ids);
    ct_hash_free(&f->stack_ids);
    free(f->strs);
    free(f->frames);
    free(f->stacks);
    ct__arena_free(f->arena);
    free(f->path);
}

/* Opens f->path and reads its header; on error writes the message into err. */
static int ct__infile_open(ct__infile *f, char *err, size_t errlen)
{
    const char *path = f->path;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (f->fd < 0 || fstat(f->fd, &sb) < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return CT_E_IO;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file: expected a cutrace trace", path);
        return CT_E_NOT_TRACE;
    }
    f->size = (uint64_t)sb.st_size;
    if (f->size == 0) {
        snprintf(err, errlen, "%s: empty file (0 bytes): expected a cutrace trace", path);
        return CT_E_EMPTY;
    }
    const uint8_t *h = ct__infile_bytes(f, 0, f->size < 16 ? (size_t)f->size : 16);
    if (!h) {
        snprintf(err, errlen, "%s", f->r->err);
        return CT_E_IO;
    }
    if (f->size < CT_FILE_MAGIC_LEN || memcmp(h, CT_FILE_MAGIC, CT_FILE_MAGIC_LEN) != 0) {
        char found[64] = "";
        size_t n = f->size < 8 ? (size_t)f->size : 8;
        for (size_t i = 0; i < n; i++)
            snprintf(found + 3 * i, sizeof found - 3 * i, "%02x ", h[i]);
        if (n > 0)
            found[3 * n - 1] = 0;
        snprintf(err, errlen,
                 "%s: not a cutrace trace: expected magic 43 55 54 52 41 43 45 00 "
                 "(\"CUTRACE\\0\") at offset 0, found %s%s",
                 path, found, n < 8 ? " (file too short)" : "");
        return CT_E_NOT_TRACE;
    }
    if (f->size < 20) {
        snprintf(err, errlen, "%s: file header truncated: file has %llu bytes, a header "
                              "needs at least 20", path, (unsigned long long)f->size);
        return CT_E_CORRUPT;
    }
    unsigned major = ct__rd16(h + 8), minor = ct__rd16(h + 10);
    uint32_t body = ct__rd32(h + 12);
    if (major > CT_FORMAT_MAJOR || major == 0) {
        snprintf(err, errlen,
                 "%s: trace format %u.%u is %s than this cutrace reads (%d.%d)%s", path, major,
                 minor, major ? "newer" : "older", CT_FORMAT_MAJOR, CT_FORMAT_MINOR,
                 major ? "; use a newer cutrace" : "");
        return CT_E_VERSION;
    }
    if (body > CT_HEADER_BODY_MAX || 16 + (uint64_t)body + 4 > f->size) {
        snprintf(err, errlen, "%s: file header truncated or damaged: it declares %u bytes of "
                              "fields, the file has %llu bytes", path, body,
                 (unsigned long long)f->size);
        return CT_E_CORRUPT;
    }
    size_t hlen = 16 + (size_t)body + 4;
    h = ct__infile_bytes(f, 0, hlen);
    if (!h) {
        snprintf(err, errlen, "%s", f->r->err);
        return CT_E_IO;
    }
    if (ct__crc32c(h, hlen - 4) != ct__rd32(h + hlen - 4)) {
        snprintf(err, errlen, "%s: file header damaged: checksum mismatch", path);
        return CT_E_CORRUPT;
    }
    int rc = ct__header_parse(h, hlen, &f->hs);
    if (rc < 0) {
        snprintf(err, errlen, "%s: file header damaged: %s", path,
                 rc == CT_E_NOMEM ? "out of memory" : "malformed field");
        return rc;
    }
    f->pos = hlen;
    if (ct__infile_spans(f) < 0) {
        snprintf(err, errlen, "%s", f->r->err);
        return CT_E_IO;
    }
    return 0;
}

int ct_reader_open(ct_reader **rp, const char *const *paths, size_t n,
                   const ct_reader_opts *opts, char *err, size_t errlen)
{
    *rp = NULL;
    char dummy[8];
    if (!err) {
        err = dummy;
        errlen = sizeof dummy;
    }
    if (n == 0 || n > UINT32_MAX) {
        snprintf(err, errlen, "no trace file given");
        return CT_E_INVAL;
    }
    ct_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->files = calloc(n, sizeof *r->files)) ||
        !(r->heap = calloc(n, sizeof *r->heap)) || !(r->keys = calloc(n, sizeof *r->keys)) ||
        !(r->dctx = ZSTD_createDCtx())) {
        snprintf(err, errlen, "out of memory");
        if (r) {
            free(r->files);
            free(r->heap);
            free(r->keys);
        }
        free(r);
        return CT_E_NOMEM;
    }
    if (opts)
        r->opts = *opts;
    if (!r->opts.max_pending)
        r->opts.max_pending = CT__DEFAULT_MAX_PENDING;
    r->last = -1;
    r->runner = -1;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        ct__infile *f = &r->files[i];
        f->r = r;
        f->index = (uint32_t)i;
        f->fd = -1;
        r->n = i + 1;
        f->path = strdup(paths[i]);
        if (!f->path) {
            snprintf(err, errlen, "out of memory");
            rc = CT_E_NOMEM;
            break;
        }
        rc = ct__infile_open(f, err, errlen);
        if (rc < 0)
            break;
        const ct_header *h0 = &r->files[0].hs.h, *h = &f->hs.h;
        if (i > 0 && !(h->boot_id[0] && strcmp(h->boot_id, h0->boot_id) == 0))
            f->offset = (int64_t)(h->realtime_ns - h->monotonic_ns) -
                        (int64_t)(h0->realtime_ns - h0->monotonic_ns);
    }
    if (rc < 0) {
        ct_reader_close(r);
        return rc;
    }
    *rp = r;
    return 0;
}

/* ---- merging -------------------------------------------------------------------------------- */

static inline int ct__file_before(const ct_reader *r, uint32_t a, uint32_t b)
{
    if (!r->opts.file_order) {
        uint64_t ta = r->keys[a], tb = r->keys[b];
        if (ta != tb)
            return ta < tb;
    }
    return a < b;
}

static void ct__reader_sift_down(ct_reader *r, size_t i)
{
    uint32_t *h = r->heap;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->nheap && ct__file_before(r, h[l], h[m]))
            m = l;
        if (l + 1 < r->nheap && ct__file_before(r, h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            break;
        uint32_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    r->runner = r->nheap < 2 ? -1
              : (int64_t)(r->nheap > 2 && ct__file_before(r, h[2], h[1]) ? h[2] : h[1]);
}

int ct_reader_next(ct_reader *r, ct_rec *rec)
{
    int rc;
    if (!r->started) {
        r->started = 1;
        for (size_t i = 0; i < r->n; i++) {
            const ct__cursor *c = ct__infile_peek(&r->files[i], &rc);
            if (c) {
                r->keys[i] = c->head_ts;
                r->heap[r->nheap++] = (uint32_t)i;
            }
            else if (rc < 0)
                return rc;
            else
                ct__infile_finish(&r->files[i]);
        }
        for (size_t i = r->nheap / 2; i-- > 0;)
            ct__reader_sift_down(r, i);
    }
    for (;;) {
        /* The file last taken from is at the top of the heap: find its next record. */
        if (r->last >= 0) {
            ct__infile *f = &r->files[r->last];
            const ct__cursor *c = ct__infile_peek(f, &rc);
            if (c) {
                r->keys[r->last] = c->head_ts;
                if (r->runner >= 0 && !ct__file_before(r, r->heap[0], (uint32_t)r->runner))
                    ct__reader_sift_down(r, 0);
            } else {
                if (rc < 0)
                    return rc;
                ct__infile_finish(f);
                r->heap[0] = r->heap[--r->nheap];
                ct__reader_sift_down(r, 0);
            }
            r->last = -1;
        }
        if (r->nheap == 0)
            return 0;
        r->last = r->heap[0];
        if (ct__infile_take(&r->files[r->heap[0]], rec) > 0)
            return 1;
    }
}

/* ---- accessors ------------------------------------------------------------------------------ */

const char *ct_reader_error(const ct_reader *r) { return r->err; }
size_t ct_reader_nfiles(const ct_reader *r) { return r->n; }
const char *ct_reader_path(const ct_reader *r, uint32_t file)
{
    return file < r->n ? r->files[file].path : NULL;
}
const ct_header *ct_reader_header(const ct_reader *r, uint32_t file)
{
    return file < r->n ? &r->files[file].hs.h : NULL;
}
int64_t ct_reader_offset(const ct_reader *r, uint32_t file)
{
    return file < r->n ? r->files[file].offset : 0;
}
const ct_stats *ct_reader_stats(const ct_reader *r, uint32_t file)
{
    return file < r->n ? &r->files[file].st : NULL;
}

const char *ct_reader_string(const ct_reader *r, uint32_t file, uint32_t id)
{
    if (file >= r->n)
        return NULL;
    const ct__infile *f = &r->files[file];
    const uint32_t *ix = ct_hash_find(&f->str_ids, id);
    return ix ? f->strs[*ix].text : NULL;
}

const char *ct_reader_str(const ct_reader *r, uint32_t file, uint32_t id, char tmp[CT_STRTMP])
{
    if (id == 0)
        return "";
    const char *s = ct_reader_string(r, file, id);
    if (s)
        return s;
    snprintf(tmp, CT_STRTMP, "<string %u>", id);
    return tmp;
}

int ct_reader_frame(const ct_reader *r, uint32_t file, uint32_t id, ct_rec_frame *out)
{
    if (file >= r->n)
        return CT_E_INVAL;
    const ct__infile *f = &r->files[file];
    const uint32_t *ix = ct_hash_find(&f->frame_ids, id);
    if (!ix)
        return CT_E_INVAL;
    *out = f->frames[*ix];
    return 0;
}

int ct_reader_stack(const ct_reader *r, uint32_t file, uint32_t id, const uint32_t **frames,
                    uint32_t *n)
{
    if (file >= r->n)
        return CT_E_INVAL;
    const ct__infile *f = &r->files[file];
    const uint32_t *ix = ct_hash_find(&f->stack_ids, id);
    if (!ix)
        return CT_E_INVAL;
    *frames = f->stacks[*ix].frames;
    *n = f->stacks[*ix].n;
    return 0;
}

void ct_reader_close(ct_reader *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        ct__infile_free(&r->files[i]);
    free(r->files);
    free(r->heap);
    free(r->keys);
    ZSTD_freeDCtx(r->dctx);
    free(r);
}
