/* Loading one input file's chunks (FORMAT.md sections 3.3 and 6), the reader's per-chunk work:
 * reading through the file's window, checking each chunk header (and resynchronizing past
 * damage), decompressing the payload into a cursor, registering its definitions, and pushing the
 * cursor onto the file's heap. Delivering records and merging files, the per-record work, stay
 * in ct_read.c (ct_read_internal.h). */
#define _GNU_SOURCE
#include "ct_read_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

/* Small enough that merging a thousand ranks stays cheap, large enough for few reads. */
#define CT__WINDOW_MIN (64u << 10)
#define CT__CHUNK_HEADER_MAX 4096u

const uint8_t *ct__infile_bytes(ct__infile *f, uint64_t off, size_t len)
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
            snprintf(f->err, CT__ERR_LEN, "%s: out of memory reading %zu bytes",
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
            snprintf(f->err, CT__ERR_LEN, "%s: read at offset %llu failed: %s",
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
    uint32_t hs = ct__rd16(h + CT__CHUNK_AT(header_size));
    if (ct__rd32(h + CT__CHUNK_AT(magic)) != CT_CHUNK_MAGIC || hs < CT_CHUNK_HEADER_MIN ||
        hs > CT__CHUNK_HEADER_MAX)
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
#define CT__GET_info(name, bits)                                                            \
    ci->name = CT__CHUNK_AT(name) + bits / 8 <= hs - 4 ? ct__rd##bits(h + CT__CHUNK_AT(name)) : 0;
#define CT__GET_frame(name, bits)
#define CT__GET(name, bits, from) CT__GET_##from(name, bits)
    CT__CHUNK_FIELDS(CT__GET)
    ci->offset = off;
    *hsize = hs;
    *pcrc = ct__rd32(h + CT__CHUNK_AT(payload_crc));
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
int ct__infile_spans(ct__infile *f)
{
    if (f->spans_known)
        return 0;
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
    f->spans_known = !ioerr;
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
int ct__infile_load(ct__infile *f)
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
                snprintf(f->err, CT__ERR_LEN, "%s: out of memory for a %u-byte chunk",
                         f->path, ci.raw_size);
                return CT_E_NOMEM;
            }
            if (ci.flags & CT_CHUNK_RAW) {
                memcpy(raw, payload, ci.raw_size);
            } else {
                size_t got = ZSTD_decompressDCtx(f->dctx ? f->dctx : r->dctx, raw, ci.raw_size, payload,
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
        ct__infile_lost(f, CT_LOSS_BUFFER_FULL, 0, ci.lost); /* a chunk's count is its ring's drops */
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
            snprintf(f->err, CT__ERR_LEN, "%s: out of memory", f->path);
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
