/* Record encoder (FORMAT.md section 4). Hot path: each function checks room for the record's
 * largest encoding once, then writes varints with no further checks, no allocation and no
 * system call. The body length precedes the body; it is written as one byte and the body is
 * moved only in the rare case it turns out to be 128 bytes or longer. */
#include "cttrace.h"
#include "ct_wire.h"
#include "ct_records.h"

#include <assert.h>

void ct_enc_init(ct_enc *e, void *buf, size_t cap)
{
    memset(e, 0, sizeof *e);
    e->buf = buf;
    e->cap = cap;
}

void ct_enc_restart(ct_enc *e)
{
    e->len = 0;
    e->nrecords = 0;
    e->max_span = 0;
    e->ts_base = e->prev_ts;
    e->corr_base = e->prev_corr;
}

void ct_enc_chunk_info(const ct_enc *e, ct_chunk_info *info)
{
    info->ts_base = e->ts_base;
    info->corr_base = e->corr_base;
    info->max_span = e->max_span;
}

/* The chunk header's max_span (FORMAT.md 3.2): how far before its ts a record reaches. */
static inline void ct__span(ct_enc *e, uint64_t span)
{
    if (span > e->max_span)
        e->max_span = span;
}

/* Writes the type, a one-byte length placeholder (*lenp) and dts. Returns NULL, writing
 * nothing, if a body of max_body bytes (dts excluded) might not fit. Bodies are below 2 MiB, so
 * the length needs at most 3 bytes. */
static uint8_t *ct__rec_open(ct_enc *e, uint32_t type, uint64_t ts, size_t max_body,
                             uint8_t **lenp)
{
    if (e->cap - e->len < CT__UV_MAX * 2 + 3 + max_body)
        return NULL;
    uint8_t *p = ct__put_uv(e->buf + e->len, type);
    *lenp = p++;
    return ct__put_sv(p, (int64_t)(ts - e->prev_ts));
}

/* Fills in the length (moving the body if it needs more than one byte) and commits. */
static int ct__rec_commit(ct_enc *e, uint8_t *lenp, uint8_t *p, uint64_t ts)
{
    size_t blen = (size_t)(p - (lenp + 1));
    assert(blen < (1u << 21));
    if (blen < 0x80) {
        *lenp = (uint8_t)blen;
    } else {
        uint8_t tmp[3];
        size_t k = (size_t)(ct__put_uv(tmp, blen) - tmp);
        memmove(lenp + k, lenp + 1, blen);
        memcpy(lenp, tmp, k);
        p += k - 1;
    }
    e->len = (size_t)(p - e->buf);
    e->prev_ts = ts;
    e->nrecords++;
    return 0;
}

/* max_body in bytes, dts excluded; CT__VARINTS(n): n varint fields. */
#define CT__VARINTS(n) ((size_t)CT__UV_MAX * (n))
#define CT__BEGIN(e, type, ts, max_body)                                                    \
    uint8_t *lenp_;                                                                        \
    uint8_t *p = ct__rec_open(e, type, ts, max_body, &lenp_);                              \
    if (!p)                                                                                \
        return CT_E_FULL
#define CT__END(e, ts) return ct__rec_commit(e, lenp_, p, ts)

static inline uint8_t *ct__put_corr(ct_enc *e, uint8_t *p, uint64_t corr)
{
    p = ct__put_sv(p, (int64_t)(corr - e->prev_corr));
    e->prev_corr = corr;
    return p;
}

int ct_enc_string(ct_enc *e, uint64_t ts, uint32_t id, const char *text, size_t len)
{
    char mark[CT_STRING_CUT_MAX];
    size_t keep = ct_string_cut(text, len, CT_STRING_MAX, mark), nmark = strlen(mark);
    CT__BEGIN(e, CT_REC_STRING, ts, CT__VARINTS(2) + keep + nmark);
    p = ct__put_uv(p, id);
    p = ct__put_uv(p, keep + nmark);
    memcpy(p, text, keep);
    memcpy(p + keep, mark, nmark);
    p += keep + nmark;
    CT__END(e, ts);
}

int ct_enc_stack(ct_enc *e, uint64_t ts, uint32_t id, const uint32_t *frames, uint32_t n)
{
    if (n > CT_STACK_MAX)
        return CT_E_INVAL;
    CT__BEGIN(e, CT_REC_STACK, ts, CT__VARINTS(2) + (size_t)n * 5); /* u32 frame ids: 5 bytes */
    p = ct__put_uv(p, id);
    p = ct__put_uv(p, n);
    for (uint32_t i = 0; i < n; i++)
        p = ct__put_uv(p, frames[i]);
    CT__END(e, ts);
}

/* Start of an interval ending at `end`: a start after the end (clock misuse) records 0. */
static inline uint64_t ct__dur(uint64_t end, uint64_t start) { return end >= start ? end - start : 0; }

/* One field of *r (a record at ts) by its kind (ct_records.h), and its largest encoding. */
#define CT__ENC_u32(m) p = ct__put_uv(p, r->m);
#define CT__ENC_uv(m) p = ct__put_uv(p, r->m);
#define CT__ENC_sv32(m) p = ct__put_sv(p, r->m);
#define CT__ENC_dur(m)                                                                      \
    p = ct__put_uv(p, ct__dur(ts, r->m));                                                    \
    ct__span(e, ct__dur(ts, r->m));
#define CT__ENC_since(m) p = ct__put_uv(p, ct__dur(ts, r->m));
#define CT__ENC_dcorr(m) p = ct__put_corr(e, p, r->m);
#define CT__ENC_parent(m) p = ct__put_uv(p, r->m ? ct__zigzag((int64_t)(r->corr - r->m)) : 0);
#define CT__ENC_uuid16(m)                                                                   \
    memcpy(p, r->m, 16);                                                                   \
    p += 16;
#define CT__ENC_FIELD(name, kind, member, unit, dump, style, at) CT__ENC_##kind(member)
#define CT__MAX_u32 CT__UV_MAX
#define CT__MAX_uv CT__UV_MAX
#define CT__MAX_sv32 CT__UV_MAX
#define CT__MAX_dur CT__UV_MAX
#define CT__MAX_since CT__UV_MAX
#define CT__MAX_dcorr CT__UV_MAX
#define CT__MAX_parent CT__UV_MAX
#define CT__MAX_uuid16 16
#define CT__MAX_FIELD(name, kind, member, unit, dump, style, at) + CT__MAX_##kind

/* What a record type's encoding does besides its fields; type is a constant, so this folds
 * away in every encoder but CPU's. */
static inline void ct__enc_after(ct_enc *e, uint32_t type, uint64_t ts)
{
    if (type != CT_REC_CPU)
        return;
    /* the analyzer applies a thread's CPU rate from its previous reading on */
    if (e->cpu_prev_ts && ts > e->cpu_prev_ts)
        ct__span(e, ts - e->cpu_prev_ts);
    e->cpu_prev_ts = ts;
}

/* ct_enc_frame, ct_enc_thread, ... ct_enc_end: one per fixed-layout record type. */
#define CT__ENC_FN(TYPE, member, FIELDS)                                                     \
    int ct_enc_##member(ct_enc *e, uint64_t ts, const ct_rec_##member *r)                   \
    {                                                                                       \
        CT__BEGIN(e, CT_REC_##TYPE, ts, (size_t)(0 FIELDS(CT__MAX_FIELD)));                   \
        FIELDS(CT__ENC_FIELD)                                                                \
        ct__enc_after(e, CT_REC_##TYPE, ts);                                                 \
        CT__END(e, ts);                                                                      \
    }
CT_RECORDS(CT__ENC_FN)

int ct_enc_raw(ct_enc *e, uint32_t type, uint64_t ts, const void *body, size_t len)
{
    if (type == 0 || len > CT_REC_MAX_BYTES)
        return CT_E_INVAL;
    CT__BEGIN(e, type, ts, len);
    memcpy(p, body, len);
    p += len;
    CT__END(e, ts);
}

int ct_enc_fixed(ct_enc *e, uint32_t type, uint64_t ts, const void *body)
{
    switch (type) {
#define CT__ENC_CASE(TYPE, member, FIELDS)                                                  \
    case CT_REC_##TYPE: return ct_enc_##member(e, ts, body);
    CT_RECORDS(CT__ENC_CASE)
    default: return CT_E_INVAL;
    }
}

int ct_enc_rec(ct_enc *e, const ct_rec *r)
{
    switch (r->type) {
    case CT_REC_STRING: return ct_enc_string(e, r->ts, r->u.string.id, r->u.string.text, r->u.string.len);
    case CT_REC_STACK: return ct_enc_stack(e, r->ts, r->u.stack.id, r->u.stack.frames, r->u.stack.nframes);
    case CT_REC_UNKNOWN:
        return ct_enc_raw(e, r->u.unknown.type, r->ts, r->u.unknown.bytes, r->u.unknown.len);
    default: return ct_enc_fixed(e, r->type, r->ts, &r->u);
    }
}
