/* One chunk's records (see ct_read_internal.h): decoding a record's body into a ct_rec, a
 * cursor's peek (time only) and take, and the sorting of a chunk whose records are out of
 * time order. */
#include "ct_read_internal.h"

#include <stdlib.h>

/* ---- record decoding ------------------------------------------------------------------------ */

void ct__malformed_rest(ct__infile *f, ct__cursor *c, const char *why)
{
    ct__warn(f, "chunk %llu: %s at byte %zu of %zu; rest of the chunk skipped",
            (unsigned long long)c->seq, why, (size_t)(c->p - c->buf),
            (size_t)(c->end - c->buf));
    f->st.bad_records++;
    c->p = c->end;
}

static inline uint64_t ct__get_corr(ct__cursor *c, const uint8_t **b, const uint8_t *be, int *bad)
{
    c->prev_corr += (uint64_t)ct__get_sv(b, be, bad);
    return c->prev_corr;
}

/* What decoding a record of a type does besides its fields; type is a constant, so this folds
 * away in every case but LOSS's and END's. */
static inline void ct__decoded(ct__infile *f, const ct_rec *r, uint32_t type)
{
    if (type == CT_REC_LOSS)
        ct__infile_lost(f, r->u.loss.reason, r->u.loss.why, r->u.loss.count);
    else if (type == CT_REC_END)
        f->st.complete = 1;
}

int ct_decode(ct__infile *f, ct__cursor *c, ct_rec *r)
{
    if (c->p < c->end) {
        int bad = 0;
        uint64_t type;
        const uint8_t *b, *be;
        if (c->pk_at == c->p) {
            type = c->pk_type;
            b = c->pk_body;
            be = c->pk_end;
            bad = c->pk_bad;
            r->ts = c->head_ts;
        } else {
            const uint8_t *p = c->p, *end = c->end;
            type = ct__get_uv(&p, end, &bad);
            uint64_t len = ct__get_uv(&p, end, &bad);
            if (bad || type == 0 || len > (uint64_t)(end - p)) {
                ct__malformed_rest(f, c, type == 0 ? "record type 0" : "record overruns the chunk");
                return 0;
            }
            b = p;
            be = p + len;
            r->ts = c->prev_ts + (uint64_t)ct__get_sv(&b, be, &bad);
        }
        c->p = be;
        c->prev_ts = r->ts;
        r->tid = c->tid;
        r->file = f->index;
        r->pad_ = 0;
        r->type = (uint32_t)type;
        const uint32_t *ix;
        switch (type) {
#define CT__DEC_CASE(TYPE, member, FIELDS)                                                   \
        case CT_REC_##TYPE: {                                                                \
            ct_rec_##member *d = &r->u.member;                                               \
            FIELDS(CT__DEC_FIELD)                                                             \
            if (!bad)                                                                        \
                ct__decoded(f, r, CT_REC_##TYPE);                                             \
            break;                                                                           \
        }
        CT_EVENT_RECORDS(CT__DEC_CASE)
        case CT_REC_STRING:
            r->u.string.id = ct__get_u32v(&b, be, &bad);
            ix = ct_hash_find(&f->str_ids, r->u.string.id);
            if (ix) {
                r->u.string.text = f->strs[*ix].text;
                r->u.string.len = f->strs[*ix].len;
            } else {
                bad = 1; /* ct__define refused it */
            }
            break;
        case CT_REC_FRAME:
            r->u.frame.id = ct__get_u32v(&b, be, &bad);
            ix = ct_hash_find(&f->frame_ids, r->u.frame.id);
            if (ix)
                r->u.frame = f->frames[*ix];
            else
                bad = 1;
            break;
        case CT_REC_STACK:
            r->u.stack.id = ct__get_u32v(&b, be, &bad);
            ix = ct_hash_find(&f->stack_ids, r->u.stack.id);
            if (ix) {
                r->u.stack.frames = f->stacks[*ix].frames;
                r->u.stack.nframes = f->stacks[*ix].n;
            } else {
                bad = 1;
            }
            break;
        default:
            r->type = CT_REC_UNKNOWN;
            r->u.unknown.type = type > UINT32_MAX ? UINT32_MAX : (uint32_t)type;
            r->u.unknown.len = (uint32_t)(be - b);
            r->u.unknown.bytes = b;
            f->st.unknown_records++;
            break;
        }
        if (bad) {
            f->st.bad_records++;
            return -1;
        }
        return 1;
    }
    return 0;
}

/* ---- cursors ---------------------------------------------------------------------------------- */

void ct__cursor_free(ct__cursor *c)
{
    free(c->buf);
    free(c->sorted);
    free(c);
}

int ct__cursor_peek(ct__infile *f, ct__cursor *c)
{
    if (c->chunk_pending) {
        c->head_ts = c->chunk.t_min;
        return 1;
    }
    if (c->sorted) {
        if (c->isorted == c->nsorted)
            return 0;
        c->head_ts = c->sorted[c->isorted].ts;
        return 1;
    }
    if (c->p >= c->end)
        return 0;
    int bad = 0;
    const uint8_t *p = c->p, *end = c->end;
    uint64_t type = ct__get_uv(&p, end, &bad);
    uint64_t len = ct__get_uv(&p, end, &bad);
    if (bad || type == 0 || len > (uint64_t)(end - p)) {
        ct__malformed_rest(f, c, type == 0 ? "record type 0" : "record overruns the chunk");
        return 0;
    }
    c->pk_at = c->p;
    c->pk_end = p + len;
    c->pk_type = (uint32_t)type;
    c->head_ts = c->prev_ts + (uint64_t)ct__get_sv(&p, p + len, &bad);
    c->pk_body = p;
    c->pk_bad = bad;
    return 1;
}

int ct__cursor_take(ct__infile *f, ct__cursor *c, ct_rec *r)
{
    if (c->chunk_pending) {
        c->chunk_pending = 0;
        memset(r, 0, sizeof *r);
        r->type = CT_REC_CHUNK;
        r->ts = c->chunk.t_min;
        r->tid = c->tid;
        r->file = f->index;
        r->u.chunk = c->chunk;
        return 1;
    }
    if (c->sorted) {
        *r = c->sorted[c->isorted++];
        return 1;
    }
    return ct_decode(f, c, r) > 0 ? 1 : -1;
}


static int ct__rec_cmp(const void *a, const void *b)
{
    const ct_rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->pad_ < y->pad_ ? -1 : x->pad_ > y->pad_;
}

int ct__cursor_sort(ct__infile *f, ct__cursor *c, size_t n)
{
    ct_rec *recs = malloc((n ? n : 1) * sizeof *recs);
    if (!recs)
        return CT_E_NOMEM;
    size_t got_n = 0;
    while (got_n < n) {
        int got = ct_decode(f, c, &recs[got_n]);
        if (got == 0)
            break;
        if (got < 0)
            continue;
        recs[got_n].pad_ = (uint32_t)got_n;
        got_n++;
    }
    qsort(recs, got_n, sizeof *recs, ct__rec_cmp);
    for (size_t i = 0; i < got_n; i++)
        recs[i].pad_ = 0;
    c->sorted = recs;
    c->nsorted = got_n;
    c->bytes += n * sizeof *recs;
    return 0;
}

