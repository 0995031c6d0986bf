/* Internals shared by the reader's parts (FORMAT.md sections 3.3, 4 and 6), each using only
 * those listed above it (no two call each other):
 *   ct_infile.c     a file's warnings and the order of the heap of its chunks' cursors
 *   ct_defs.c       the arena and the STRING/FRAME/STACK definition tables (ids -> index: ct_hash)
 *   ct_decode.c     one chunk's records: decoding a record, a cursor's peek/take, sorting a chunk
 *   ct_chunkload.c  chunk loading: reading, checking and decompressing chunks, resynchronizing
 *   ct_read.c       the per-file and cross-file merges and the public reader API
 * A ct__infile is one file being read; a ct__cursor one decompressed chunk of it. Everything here
 * belongs to the library: nothing outside trace-format/ includes this header. */
#ifndef CT__READ_INTERNAL_H
#define CT__READ_INTERNAL_H

#include "cttrace.h"
#include "ct_header.h"
#include "ct_wire.h"
#include "ct_records.h"
#include "ct_hash.h"

#include <zstd.h>

/* ---- the definition tables ---------------------------------------------------------------- */

/* Memory that never moves, for definition texts and frame lists. */
typedef struct ct__block {
    struct ct__block *next;
    size_t used, cap;
    _Alignas(8) uint8_t data[];
} ct__block;

typedef struct {
    const char *text;
    uint32_t len;
} ct__str_def;

typedef struct {
    const uint32_t *frames;
    uint32_t n;
} ct__stack_def;

/* ---- per-file state ------------------------------------------------------------------------ */

/* Both structures begin with what is read for every record delivered, so that it shares a
 * cache line or two: between two records the analyzer's model runs over enough memory to evict
 * them, and the merge's loads depend on one another. */
typedef struct {
    const uint8_t *p, *end;
    uint64_t head_ts;          /* time of the next record (set by ct__cursor_peek) */
    uint64_t prev_ts, prev_corr;
    /* what ct__cursor_peek parsed of the record at pk_at, so ct_decode does not parse it again */
    const uint8_t *pk_at, *pk_body, *pk_end;
    uint32_t pk_type;
    int pk_bad;
    uint32_t tid;
    int chunk_pending;
    ct_rec *sorted;            /* records of a chunk not in time order, sorted */
    size_t nsorted, isorted;
    uint64_t seq;
    uint8_t *buf;              /* decoded payload */
    size_t bytes;              /* counted against max_pending */
    ct_chunk_info chunk;       /* delivered first when chunk_pending */
} ct__cursor;

typedef struct {
    ct__cursor **heap;
    size_t nheap;
    /* the earlier of heap[1] and heap[2] (NULL if neither): while the top stays before it, taking
     * from the top leaves the heap in order, and most records come in runs from one cursor */
    const ct__cursor *runner;
    uint64_t low_water;
    ct__cursor *retired;        /* exhausted, freed once its last record is no longer exposed */
    uint64_t last_ts;
    ct_reader *r;
    size_t pending;
    int eof, finished;
    uint32_t index;
    ct_stats st;
    size_t heap_cap;
    char *path;
    int fd;
    int headers_only;          /* reading chunk headers alone (ct__infile_spans): 4 KiB read-ahead */
    int spans_known;           /* st.max_span is final (ct__infile_spans has walked the file) */
    uint64_t size, pos;
    ct__header_store hs;
    int64_t offset;
    uint8_t *win;              /* bytes [win_off, win_off + win_len) of the file */
    size_t win_cap, win_len;
    uint64_t win_off;
    uint64_t next_seq;
    int seq_started;
    ct_hash str_ids, frame_ids, stack_ids; /* definition id -> index in strs, frames, stacks */
    ct__str_def *strs;
    ct_rec_frame *frames;
    ct__stack_def *stacks;
    size_t nstrs, strs_cap, nframes, frames_cap, nstacks, stacks_cap;
    ct__block *arena;
    uint64_t def_bytes;        /* memory held by definitions, against CT_DEFS_MAX */
    /* st.lost by enum ct_loss_reason (unknown: OTHER), then CT_LOSS_WRITE's CT_WRITE_LOST_FD */
    uint64_t lost_by[CT_LOSS_STRINGS + 2];
    /* Read on its own (ct_reader_next_in): its own decompression context and error text, so
     * that distinct files are read at once; NULL: the reader's (merged reading). */
    ZSTD_DCtx *dctx;
    char *err;                 /* the error text in use: own_err or the reader's */
    char *own_err;
} ct__infile;

#define CT__ERR_LEN 1024

struct ct_reader {
    ct__infile *files;
    uint32_t *heap;            /* files with a record ready, earliest first */
    uint64_t *keys;            /* per file: time of its next record (saves pointer chasing) */
    size_t nheap;
    int64_t runner;            /* the earlier of heap[1] and heap[2], -1 if neither (ct__infile's) */
    int64_t last;              /* file whose record was delivered last, -1 if none */
    int started;
    ct_reader_opts opts;
    size_t n;
    ZSTD_DCtx *dctx;           /* shared: files are decoded one chunk at a time */
    char err[CT__ERR_LEN];
};

/* Decodes one field into d->member by its kind (ct_records.h), from the body [b, be) of a record
 * at r->ts in cursor c, noting a malformed value in `bad`. */
#define CT__DEC_u32(m) d->m = ct__get_u32v(&b, be, &bad);
#define CT__DEC_uv(m) d->m = ct__get_uv(&b, be, &bad);
#define CT__DEC_sv32(m)                                                                     \
    {                                                                                      \
        int64_t v_ = ct__get_sv(&b, be, &bad);                                              \
        if (v_ < INT32_MIN || v_ > INT32_MAX)                                              \
            bad = 1;                                                                       \
        d->m = (int32_t)v_;                                                                \
    }
#define CT__DEC_dur(m) d->m = r->ts - ct__get_uv(&b, be, &bad);
#define CT__DEC_since CT__DEC_dur
#define CT__DEC_dcorr(m) d->m = ct__get_corr(c, &b, be, &bad);
#define CT__DEC_parent(m)                                                                   \
    {                                                                                      \
        uint64_t z_ = ct__get_uv(&b, be, &bad);                                             \
        d->m = z_ ? d->corr - (uint64_t)ct__unzigzag(z_) : 0;                               \
    }
#define CT__DEC_uuid16(m)                                                                   \
    memset(d->m, 0, 16);                                                                   \
    if (be - b >= 16) {                                                                    \
        memcpy(d->m, b, 16);                                                               \
        b += 16;                                                                           \
    } else {                                                                               \
        b = be; /* an older writer stopped here: the rest reads as 0 */                    \
    }
#define CT__DEC_FIELD(name, kind, member, unit, dump, style, at) CT__DEC_##kind(member)

/* ct_defs.c */
void *ct__arena_alloc(ct__block **head, size_t n);
void ct__arena_free(ct__block *b);
/* Grows an array to hold n + 1 elements. */
int ct__reserve(void *arrp, size_t *cap, size_t n, size_t elem);
/* Registers a STRING, FRAME or STACK definition (body after dts). A redefinition keeps the
 * first. Returns 0, or 1 if the body is malformed, or CT_E_NOMEM. */
int ct__define(ct__infile *f, uint32_t type, const uint8_t *b, const uint8_t *be);

/* ct_decode.c */
/* Counts a malformed record and skips the rest of the cursor's chunk, with a warning. */
void ct__malformed_rest(ct__infile *f, ct__cursor *c, const char *why);
/* Decodes the cursor's next record into *r: 1, 0 when the chunk is exhausted (or its framing
 * broken), -1 when the record was malformed (counted and skipped). */
int ct_decode(ct__infile *f, ct__cursor *c, ct_rec *r);
void ct__cursor_free(ct__cursor *c);
/* Sets head_ts to the time of the cursor's next record without decoding it: 1, or 0 if it has
 * none left. */
int ct__cursor_peek(ct__infile *f, ct__cursor *c);
/* Delivers the record ct__cursor_peek announced into *r: 1, or -1 if it was malformed. */
int ct__cursor_take(ct__infile *f, ct__cursor *c, ct_rec *r);
/* A chunk whose records are not in time order is decoded whole and sorted (stably: the index
 * of each record breaks ties). n: its well-framed records (ct__scan_records), an upper bound on
 * what decodes. */
int ct__cursor_sort(ct__infile *f, ct__cursor *c, size_t n);

/* ct_infile.c */
/* A warning about the file, through the reader's callback. */
void ct__warn(ct__infile *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CT__LOST_FD (CT_LOSS_STRINGS + 1) /* lost_by's slot of CT_WRITE_LOST_FD */

/* count records lost for reason (enum ct_loss_reason), why as the LOSS record has it. */
static inline void ct__infile_lost(ct__infile *f, uint32_t reason, uint32_t why, uint64_t count)
{
    if (reason == CT_LOSS_NVTX_NAMES) { /* the records are there, named by their group */
        f->st.nvtx_unnamed += count;
        return;
    }
    f->st.lost += count;
    if (reason == CT_LOSS_BUFFER_FULL)
        f->st.lost_full += count;
    if (reason == CT_LOSS_WRITE && why == CT_WRITE_LOST_FD) {
        f->st.lost_fd += count;
        f->lost_by[CT__LOST_FD] += count;
    } else
        f->lost_by[reason <= CT_LOSS_STRINGS ? reason : CT_LOSS_OTHER] += count;
}

/* Heap order of a file's cursors: by the time of their next record, then by chunk. */
static inline int ct__cursor_before(const ct__cursor *a, const ct__cursor *b)
{
    return a->head_ts != b->head_ts ? a->head_ts < b->head_ts : a->seq < b->seq;
}
/* Restores the heap below index i and notes the runner-up (f->runner). */
void ct__infile_sift_down(ct__infile *f, size_t i);

/* Chunk loading (ct_chunkload.c). */
/* Pointer to len bytes at file offset off (the caller checked off + len <= size), or NULL with
 * the reader's error set. Valid until the next call. */
const uint8_t *ct__infile_bytes(ct__infile *f, uint64_t off, size_t len);
/* Walks the chunk headers once for st.max_span (later calls return 0 at once): 0, or CT_E_IO
 * with f->err set. */
int ct__infile_spans(ct__infile *f);
/* Reads the next chunk of the file onto its heap (or notes the end): 0, or a CT_E_* error. */
int ct__infile_load(ct__infile *f);

#endif
