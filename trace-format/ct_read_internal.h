/* Internals shared by the reader's three parts (FORMAT.md sections 3.3, 4 and 6):
 *   ct_defs.c    the arena and the STRING/FRAME/STACK definition tables (ids -> index: ct_hash)
 *   ct_decode.c  one chunk's records: decoding a record, a cursor's peek/take, sorting a chunk
 *   ct_read.c    chunk loading, the per-file and cross-file merges and the public reader API
 * A ct_fin is one file being read; a ct_cursor one decompressed chunk of it. Everything here
 * belongs to the library: nothing outside trace-format/ includes this header. */
#ifndef CT_READ_INTERNAL_H
#define CT_READ_INTERNAL_H

#include "cttrace.h"
#include "ct_header.h"
#include "ct_wire.h"
#include "ct_records.h"
#include "ct_hash.h"

#include <zstd.h>

/* ---- the definition tables ---------------------------------------------------------------- */

/* Memory that never moves, for definition texts and frame lists. */
typedef struct ct_block {
    struct ct_block *next;
    size_t used, cap;
    _Alignas(8) uint8_t data[];
} ct_block;

typedef struct {
    const char *text;
    uint32_t len;
} ct_str_def;

typedef struct {
    const uint32_t *frames;
    uint32_t n;
} ct_stack_def;

/* ---- per-file state ------------------------------------------------------------------------ */

/* Both structures begin with what is read for every record delivered, so that it shares a
 * cache line or two: between two records the analyzer's model runs over enough memory to evict
 * them, and the merge's loads depend on one another. */
typedef struct {
    const uint8_t *p, *end;
    uint64_t head_ts;          /* time of the next record (set by ct_cursor_peek) */
    uint64_t prev_ts, prev_corr;
    /* what ct_cursor_peek parsed of the record at pk_at, so ct_decode does not parse it again */
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
} ct_cursor;

typedef struct {
    ct_cursor **heap;
    size_t nheap;
    /* the earlier of heap[1] and heap[2] (NULL if neither): while the top stays before it, taking
     * from the top leaves the heap in order, and most records come in runs from one cursor */
    const ct_cursor *runner;
    uint64_t low_water;
    ct_cursor *retired;        /* exhausted, freed once its last record is no longer exposed */
    uint64_t last_ts;
    ct_reader *r;
    size_t pending;
    int eof, finished;
    uint32_t index;
    ct_stats st;
    size_t heap_cap;
    char *path;
    int fd;
    int headers_only;          /* reading chunk headers alone (ct_fin_spans): 4 KiB read-ahead */
    uint64_t size, pos;
    ct_header_store hs;
    int64_t offset;
    uint8_t *win;              /* bytes [win_off, win_off + win_len) of the file */
    size_t win_cap, win_len;
    uint64_t win_off;
    uint64_t next_seq;
    int seq_started;
    ct_hash str_ids, frame_ids, stack_ids; /* definition id -> index in strs, frames, stacks */
    ct_str_def *strs;
    ct_rec_frame *frames;
    ct_stack_def *stacks;
    size_t nstrs, strs_cap, nframes, frames_cap, nstacks, stacks_cap;
    ct_block *arena;
    uint64_t def_bytes;        /* memory held by definitions, against CT_DEFS_MAX */
    uint64_t lost_by[CT_LOSS_STRINGS + 1]; /* st.lost by enum ct_loss_reason (unknown: OTHER) */
} ct_fin;

struct ct_reader {
    ct_fin *files;
    uint32_t *heap;            /* files with a record ready, earliest first */
    uint64_t *keys;            /* per file: time of its next record (saves pointer chasing) */
    size_t nheap;
    int64_t runner;            /* the earlier of heap[1] and heap[2], -1 if neither (ct_fin's) */
    int64_t last;              /* file whose record was delivered last, -1 if none */
    int started;
    ct_reader_opts opts;
    size_t n;
    ZSTD_DCtx *dctx;           /* shared: files are decoded one chunk at a time */
    char err[1024];
};

/* Decodes one field into d->member by its kind (ct_records.h), from the body [b, be) of a record
 * at r->ts in cursor c, noting a malformed value in `bad`. */
#define CT_DEC_u32(m) d->m = ct_get_u32v(&b, be, &bad);
#define CT_DEC_uv(m) d->m = ct_get_uv(&b, be, &bad);
#define CT_DEC_sv32(m)                                                                     \
    {                                                                                      \
        int64_t v_ = ct_get_sv(&b, be, &bad);                                              \
        if (v_ < INT32_MIN || v_ > INT32_MAX)                                              \
            bad = 1;                                                                       \
        d->m = (int32_t)v_;                                                                \
    }
#define CT_DEC_dur(m) d->m = r->ts - ct_get_uv(&b, be, &bad);
#define CT_DEC_dcorr(m) d->m = ct_get_corr(c, &b, be, &bad);
#define CT_DEC_parent(m)                                                                   \
    {                                                                                      \
        uint64_t z_ = ct_get_uv(&b, be, &bad);                                             \
        d->m = z_ ? d->corr - (uint64_t)ct_unzigzag(z_) : 0;                               \
    }
#define CT_DEC_uuid16(m)                                                                   \
    memset(d->m, 0, 16);                                                                   \
    if (be - b >= 16) {                                                                    \
        memcpy(d->m, b, 16);                                                               \
        b += 16;                                                                           \
    } else {                                                                               \
        b = be; /* an older writer stopped here: the rest reads as 0 */                    \
    }
#define CT_DEC_FIELD(name, kind, member, unit, dump, style, at) CT_DEC_##kind(member)

/* ct_defs.c */
void *ct_arena_alloc(ct_block **head, size_t n);
void ct_arena_free(ct_block *b);
/* Grows an array to hold n + 1 elements. */
int ct_reserve(void *arrp, size_t *cap, size_t n, size_t elem);
/* Registers a STRING, FRAME or STACK definition (body after dts). A redefinition keeps the
 * first. Returns 0, or 1 if the body is malformed, or CT_E_NOMEM. */
int ct_define(ct_fin *f, uint32_t type, const uint8_t *b, const uint8_t *be);

/* ct_decode.c */
/* Counts a malformed record and skips the rest of the cursor's chunk, with a warning. */
void ct_malformed_rest(ct_fin *f, ct_cursor *c, const char *why);
/* Decodes the cursor's next record into *r: 1, 0 when the chunk is exhausted (or its framing
 * broken), -1 when the record was malformed (counted and skipped). */
int ct_decode(ct_fin *f, ct_cursor *c, ct_rec *r);
void ct_cursor_free(ct_cursor *c);
/* Sets head_ts to the time of the cursor's next record without decoding it: 1, or 0 if it has
 * none left. */
int ct_cursor_peek(ct_fin *f, ct_cursor *c);
/* Delivers the record ct_cursor_peek announced into *r: 1, or -1 if it was malformed. */
int ct_cursor_take(ct_fin *f, ct_cursor *c, ct_rec *r);
/* A chunk whose records are not in time order is decoded whole and sorted (stably: the index
 * of each record breaks ties). n: its well-framed records (ct_scan_records), an upper bound on
 * what decodes. */
int ct_cursor_sort(ct_fin *f, ct_cursor *c, size_t n);

/* ct_read.c */
void ct_warn(ct_fin *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline void ct_fin_lost(ct_fin *f, uint32_t reason, uint64_t count)
{
    f->st.lost += count;
    f->lost_by[reason <= CT_LOSS_STRINGS ? reason : CT_LOSS_OTHER] += count;
}

#endif
