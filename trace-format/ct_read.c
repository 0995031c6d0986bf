/* The reader (FORMAT.md sections 3.3, 4 and 6): delivering each file's records, merging files
 * and the public API; loading a file's chunks is in ct_chunkload.c, definitions in ct_defs.c,
 * record decoding in ct_decode.c, a file's warnings and cursor heap in ct_infile.c
 * (ct_read_internal.h).
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
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define CT__DEFAULT_MAX_PENDING ((size_t)256 << 20)

/* ---- per-file state ------------------------------------------------------------------------ */

/* Restores heap order after the top cursor's time changed: nothing to do while it is still
 * before the runner-up (whose time cannot have changed: only the top is ever advanced). */
static inline void ct__infile_settle(ct__infile *f)
{
    if (!f->runner || ct__cursor_before(f->heap[0], f->runner))
        return;
    ct__infile_sift_down(f, 0);
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
        static const char *const why[CT__LOST_FD + 1] = {
            [CT_LOSS_OTHER] = "for another reason",
            [CT_LOSS_BUFFER_FULL] = "because its buffers were full",
            [CT_LOSS_GPU_TIMING] = ("GPU timings not collected (operations still running when "
                                    "the process ended, or the event pool empty)"),
            [CT_LOSS_WRITE] = "because a write failed",
            [CT_LOSS_STRINGS] = "because its string table was full",
            [CT__LOST_FD] = ("because the program closed the tracer's file descriptors and "
                             "none was left to reopen the trace with"),
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

static void ct__infile_release_window(ct__infile *f)
{
    free(f->win);
    f->win = NULL;
    f->win_cap = f->win_len = 0;
    f->win_off = 0;
}

/* What decoding the file holds (its chunks, window, descriptor and decompression context), once
 * its records are all delivered; its header, definitions and statistics stay. */
static void ct__infile_release(ct__infile *f)
{
    for (size_t i = 0; i < f->nheap; i++)
        ct__cursor_free(f->heap[i]);
    f->nheap = 0;
    if (f->retired)
        ct__cursor_free(f->retired);
    f->retired = NULL;
    free(f->heap);
    f->heap = NULL;
    f->heap_cap = 0;
    f->runner = NULL;
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    ct__infile_release_window(f);
    ZSTD_freeDCtx(f->dctx);
    f->dctx = NULL;
}

static void ct__infile_free(ct__infile *f)
{
    ct__infile_release(f);
    free(f->own_err);
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
        snprintf(err, errlen, "%s", f->err);
        return CT_E_IO;
    }
    if (f->size < CT_FILE_MAGIC_LEN || memcmp(h, CT_FILE_MAGIC, CT_FILE_MAGIC_LEN) != 0) {
        char found[64] = "";
        size_t n = f->size < 16 ? (size_t)f->size : 16, text = 0;
        while (text < n && ((h[text] >= 0x20 && h[text] < 0x7f) || h[text] == '\t' ||
                            h[text] == '\n' || h[text] == '\r'))
            text++;
        /* text tells what the file is better than its bytes' values; a magic's beginning is a
         * cut trace */
        if (text == n && (n >= CT_FILE_MAGIC_LEN || memcmp(h, CT_FILE_MAGIC, n) != 0)) {
            for (size_t i = 0; i < n; i++)
                found[i] = h[i] < 0x20 ? ' ' : (char)h[i];
            found[n] = 0;
            snprintf(err, errlen, "%s: not a cutrace trace: a text file (it begins \"%s\"); a "
                     "trace begins with the bytes \"CUTRACE\\0\"", path, found);
            return CT_E_NOT_TRACE;
        }
        n = n < 8 ? n : 8;
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
        snprintf(err, errlen, "%s", f->err);
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
    if (!f->r->opts.defer_spans && ct__infile_spans(f) < 0) {
        snprintf(err, errlen, "%s", f->err);
        return CT_E_IO;
    }
    /* The header is parsed (and the spans known): until the file's records are read, it holds
     * nothing but them (a thousand ranks open at once) */
    ct__infile_release_window(f);
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
        f->err = r->err;
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
        /* every file's span before the first record (ct_reader_opts.defer_spans) */
        for (size_t i = 0; i < r->n; i++)
            if ((rc = ct__infile_spans(&r->files[i])) < 0)
                return rc;
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

/* ---- one file on its own -------------------------------------------------------------------- */

/* The file's own error text and decompression context, for reading it apart from the others. */
static int ct__infile_own(ct__infile *f)
{
    if (f->own_err)
        return 0;
    if (!(f->own_err = calloc(1, CT__ERR_LEN)) || !(f->dctx = ZSTD_createDCtx())) {
        free(f->own_err);
        f->own_err = NULL;
        return CT_E_NOMEM;
    }
    f->err = f->own_err;
    return 0;
}

int ct_reader_spans_in(ct_reader *r, uint32_t file)
{
    if (file >= r->n)
        return CT_E_INVAL;
    ct__infile *f = &r->files[file];
    if (f->spans_known)
        return 0;
    int rc = ct__infile_own(f);
    return rc < 0 ? rc : ct__infile_spans(f);
}

int ct_reader_next_in(ct_reader *r, uint32_t file, ct_rec *rec)
{
    if (file >= r->n)
        return CT_E_INVAL;
    ct__infile *f = &r->files[file];
    if (f->finished)
        return 0;
    int rc = ct__infile_own(f);
    if (rc < 0 || (rc = ct__infile_spans(f)) < 0)
        return rc;
    for (;;) {
        if (!ct__infile_peek(f, &rc)) {
            if (rc < 0)
                return rc;
            ct__infile_finish(f);
            ct__infile_release(f);
            return 0;
        }
        if (ct__infile_take(f, rec) > 0)
            return 1;
    }
}

const char *ct_reader_error_in(const ct_reader *r, uint32_t file)
{
    return file < r->n ? r->files[file].err : r->err;
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
