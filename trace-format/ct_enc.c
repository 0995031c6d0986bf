/* Record encoder (FORMAT.md section 4). Hot path: each function checks room for the record's
 * largest encoding once, then writes varints with no further checks, no allocation and no
 * system call. The body length precedes the body; it is written as one byte and the body is
 * moved only in the rare case it turns out to be 128 bytes or longer. */
#include "cttrace.h"
#include "ct_wire.h"

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
static inline void ct_span(ct_enc *e, uint64_t span)
{
    if (span > e->max_span)
        e->max_span = span;
}

/* Writes the type, a one-byte length placeholder (*lenp) and dts. Returns NULL, writing
 * nothing, if a body of max_body bytes (dts excluded) might not fit. Bodies are below 2 MiB, so
 * the length needs at most 3 bytes. */
static uint8_t *ct_rec_open(ct_enc *e, uint32_t type, uint64_t ts, size_t max_body,
                             uint8_t **lenp)
{
    if (e->cap - e->len < CT_UV_MAX * 2 + 3 + max_body)
        return NULL;
    uint8_t *p = ct_put_uv(e->buf + e->len, type);
    *lenp = p++;
    return ct_put_sv(p, (int64_t)(ts - e->prev_ts));
}

/* Fills in the length (moving the body if it needs more than one byte) and commits. */
static int ct_rec_commit(ct_enc *e, uint8_t *lenp, uint8_t *p, uint64_t ts)
{
    size_t blen = (size_t)(p - (lenp + 1));
    assert(blen < (1u << 21));
    if (blen < 0x80) {
        *lenp = (uint8_t)blen;
    } else {
        uint8_t tmp[3];
        size_t k = (size_t)(ct_put_uv(tmp, blen) - tmp);
        memmove(lenp + k, lenp + 1, blen);
        memcpy(lenp, tmp, k);
        p += k - 1;
    }
    e->len = (size_t)(p - e->buf);
    e->prev_ts = ts;
    e->nrecords++;
    return 0;
}

/* max_body in bytes, dts excluded; CT_F(n): n varint fields. */
#define CT_F(n) ((size_t)CT_UV_MAX * (n))
#define CT_BEGIN(e, type, ts, max_body)                                                    \
    uint8_t *lenp_;                                                                        \
    uint8_t *p = ct_rec_open(e, type, ts, max_body, &lenp_);                              \
    if (!p)                                                                                \
        return CT_E_FULL
#define CT_END(e, ts) return ct_rec_commit(e, lenp_, p, ts)

static inline uint8_t *ct_put_corr(ct_enc *e, uint8_t *p, uint64_t corr)
{
    p = ct_put_sv(p, (int64_t)(corr - e->prev_corr));
    e->prev_corr = corr;
    return p;
}

int ct_enc_string(ct_enc *e, uint64_t ts, uint32_t id, const char *text, size_t len)
{
    if (len > CT_STRING_MAX)
        return CT_E_INVAL;
    CT_BEGIN(e, CT_REC_STRING, ts, CT_F(2) + len);
    p = ct_put_uv(p, id);
    p = ct_put_uv(p, len);
    memcpy(p, text, len);
    p += len;
    CT_END(e, ts);
}

int ct_enc_frame(ct_enc *e, uint64_t ts, const ct_rec_frame *r)
{
    CT_BEGIN(e, CT_REC_FRAME, ts, CT_F(4));
    p = ct_put_uv(p, r->id);
    p = ct_put_uv(p, r->function);
    p = ct_put_uv(p, r->module);
    p = ct_put_uv(p, r->offset);
    CT_END(e, ts);
}

int ct_enc_stack(ct_enc *e, uint64_t ts, uint32_t id, const uint32_t *frames, uint32_t n)
{
    if (n > CT_STACK_MAX)
        return CT_E_INVAL;
    CT_BEGIN(e, CT_REC_STACK, ts, CT_F(2) + (size_t)n * 5); /* u32 frame ids: 5 bytes */
    p = ct_put_uv(p, id);
    p = ct_put_uv(p, n);
    for (uint32_t i = 0; i < n; i++)
        p = ct_put_uv(p, frames[i]);
    CT_END(e, ts);
}

int ct_enc_thread(ct_enc *e, uint64_t ts, const ct_rec_thread *r)
{
    CT_BEGIN(e, CT_REC_THREAD, ts, CT_F(3));
    p = ct_put_uv(p, r->tid);
    p = ct_put_uv(p, r->name);
    p = ct_put_uv(p, r->flags);
    CT_END(e, ts);
}

int ct_enc_device(ct_enc *e, uint64_t ts, const ct_rec_device *r)
{
    CT_BEGIN(e, CT_REC_DEVICE, ts, CT_F(22) + 16);
    p = ct_put_uv(p, r->device);
    p = ct_put_uv(p, r->name);
    memcpy(p, r->uuid, 16);
    p += 16;
    const uint64_t v[] = {r->cc_major,      r->cc_minor,        r->sm_count,
                          r->clock_khz,     r->mem_clock_khz,   r->mem_bus_bits,
                          r->mem_bytes,     r->l2_bytes,        r->max_threads_per_sm,
                          r->regs_per_sm,   r->smem_per_sm,     r->warp_size,
                          r->async_engines, r->concurrent_kernels, r->link_kind,
                          r->link_gen,      r->link_width,      r->pci_domain,
                          r->pci_bus,       r->pci_device};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        p = ct_put_uv(p, v[i]);
    CT_END(e, ts);
}

int ct_enc_stream(ct_enc *e, uint64_t ts, const ct_rec_stream *r)
{
    CT_BEGIN(e, CT_REC_STREAM, ts, CT_F(6));
    p = ct_put_uv(p, r->op);
    p = ct_put_uv(p, r->stream);
    p = ct_put_uv(p, r->context);
    p = ct_put_uv(p, r->device);
    p = ct_put_uv(p, r->flags);
    p = ct_put_sv(p, r->priority);
    CT_END(e, ts);
}

/* Start of an interval ending at `end`: a start after the end (clock misuse) records 0. */
static inline uint64_t ct_dur(uint64_t end, uint64_t start) { return end >= start ? end - start : 0; }

int ct_enc_api(ct_enc *e, uint64_t end, const ct_rec_api *r)
{
    CT_BEGIN(e, CT_REC_API, end, CT_F(7));
    p = ct_put_uv(p, ct_dur(end, r->start));
    p = ct_put_uv(p, r->function);
    p = ct_put_uv(p, r->result);
    p = ct_put_corr(e, p, r->corr);
    p = ct_put_uv(p, r->parent ? ct_zigzag((int64_t)(r->corr - r->parent)) : 0);
    p = ct_put_uv(p, r->flags);
    p = ct_put_uv(p, r->stack);
    ct_span(e, ct_dur(end, r->start));
    CT_END(e, end);
}

int ct_enc_launch(ct_enc *e, uint64_t ts, const ct_rec_launch *r)
{
    CT_BEGIN(e, CT_REC_LAUNCH, ts, CT_F(14));
    p = ct_put_corr(e, p, r->corr);
    p = ct_put_uv(p, r->function);
    p = ct_put_uv(p, r->symbol);
    for (int i = 0; i < 3; i++)
        p = ct_put_uv(p, r->grid[i]);
    for (int i = 0; i < 3; i++)
        p = ct_put_uv(p, r->block[i]);
    p = ct_put_uv(p, r->shared_bytes);
    p = ct_put_uv(p, r->stream);
    p = ct_put_uv(p, r->context);
    p = ct_put_uv(p, r->device);
    p = ct_put_uv(p, r->flags);
    CT_END(e, ts);
}

int ct_enc_copy(ct_enc *e, uint64_t ts, const ct_rec_copy *r)
{
    CT_BEGIN(e, CT_REC_COPY, ts, CT_F(10));
    p = ct_put_corr(e, p, r->corr);
    p = ct_put_uv(p, r->op);
    p = ct_put_uv(p, r->dir);
    p = ct_put_uv(p, r->bytes);
    p = ct_put_uv(p, r->src_kind);
    p = ct_put_uv(p, r->dst_kind);
    p = ct_put_uv(p, r->flags);
    p = ct_put_uv(p, r->stream);
    p = ct_put_uv(p, r->device);
    p = ct_put_uv(p, r->peer_device);
    CT_END(e, ts);
}

int ct_enc_gpu(ct_enc *e, uint64_t end, const ct_rec_gpu *r)
{
    CT_BEGIN(e, CT_REC_GPU, end, CT_F(6));
    p = ct_put_uv(p, ct_dur(end, r->start));
    p = ct_put_corr(e, p, r->corr);
    p = ct_put_uv(p, r->device);
    p = ct_put_uv(p, r->kind);
    p = ct_put_uv(p, r->stream);
    p = ct_put_uv(p, r->flags);
    ct_span(e, ct_dur(end, r->start));
    CT_END(e, end);
}

int ct_enc_mem(ct_enc *e, uint64_t ts, const ct_rec_mem *r)
{
    CT_BEGIN(e, CT_REC_MEM, ts, CT_F(10));
    p = ct_put_uv(p, r->op);
    p = ct_put_uv(p, r->kind);
    p = ct_put_corr(e, p, r->corr);
    p = ct_put_uv(p, r->address);
    p = ct_put_uv(p, r->size);
    p = ct_put_uv(p, r->device);
    p = ct_put_uv(p, r->result);
    p = ct_put_uv(p, r->stack);
    p = ct_put_uv(p, r->stream);
    p = ct_put_uv(p, r->handle);
    CT_END(e, ts);
}

int ct_enc_sync(ct_enc *e, uint64_t end, const ct_rec_sync *r)
{
    CT_BEGIN(e, CT_REC_SYNC, end, CT_F(4));
    p = ct_put_uv(p, ct_dur(end, r->start));
    p = ct_put_corr(e, p, r->corr);
    p = ct_put_uv(p, r->kind);
    p = ct_put_uv(p, r->object);
    ct_span(e, ct_dur(end, r->start));
    CT_END(e, end);
}

int ct_enc_cpu(ct_enc *e, uint64_t ts, const ct_rec_cpu *r)
{
    CT_BEGIN(e, CT_REC_CPU, ts, CT_F(3));
    p = ct_put_uv(p, r->tid);
    p = ct_put_uv(p, r->user_ns);
    p = ct_put_uv(p, r->sys_ns);
    /* the analyzer applies a thread's CPU rate from its previous reading on */
    if (e->cpu_prev_ts && ts > e->cpu_prev_ts)
        ct_span(e, ts - e->cpu_prev_ts);
    e->cpu_prev_ts = ts;
    CT_END(e, ts);
}

int ct_enc_loss(ct_enc *e, uint64_t ts, const ct_rec_loss *r)
{
    CT_BEGIN(e, CT_REC_LOSS, ts, CT_F(5));
    p = ct_put_uv(p, r->reason);
    p = ct_put_uv(p, r->count);
    p = ct_put_uv(p, r->tid);
    p = ct_put_uv(p, r->corr);
    p = ct_put_uv(p, r->why);
    CT_END(e, ts);
}

int ct_enc_end(ct_enc *e, uint64_t ts, const ct_rec_end *r)
{
    CT_BEGIN(e, CT_REC_END, ts, CT_F(4));
    p = ct_put_uv(p, r->how);
    p = ct_put_sv(p, r->code);
    p = ct_put_uv(p, r->records);
    p = ct_put_uv(p, r->lost);
    CT_END(e, ts);
}

int ct_enc_raw(ct_enc *e, uint32_t type, uint64_t ts, const void *body, size_t len)
{
    if (type == 0 || len > CT_REC_MAX_BYTES)
        return CT_E_INVAL;
    CT_BEGIN(e, type, ts, len);
    memcpy(p, body, len);
    p += len;
    CT_END(e, ts);
}

int ct_enc_rec(ct_enc *e, const ct_rec *r)
{
    switch (r->type) {
    case CT_REC_STRING: return ct_enc_string(e, r->ts, r->u.string.id, r->u.string.text, r->u.string.len);
    case CT_REC_FRAME: return ct_enc_frame(e, r->ts, &r->u.frame);
    case CT_REC_STACK: return ct_enc_stack(e, r->ts, r->u.stack.id, r->u.stack.frames, r->u.stack.nframes);
    case CT_REC_THREAD: return ct_enc_thread(e, r->ts, &r->u.thread);
    case CT_REC_DEVICE: return ct_enc_device(e, r->ts, &r->u.device);
    case CT_REC_STREAM: return ct_enc_stream(e, r->ts, &r->u.stream);
    case CT_REC_API: return ct_enc_api(e, r->ts, &r->u.api);
    case CT_REC_LAUNCH: return ct_enc_launch(e, r->ts, &r->u.launch);
    case CT_REC_COPY: return ct_enc_copy(e, r->ts, &r->u.copy);
    case CT_REC_GPU: return ct_enc_gpu(e, r->ts, &r->u.gpu);
    case CT_REC_MEM: return ct_enc_mem(e, r->ts, &r->u.mem);
    case CT_REC_SYNC: return ct_enc_sync(e, r->ts, &r->u.sync);
    case CT_REC_CPU: return ct_enc_cpu(e, r->ts, &r->u.cpu);
    case CT_REC_LOSS: return ct_enc_loss(e, r->ts, &r->u.loss);
    case CT_REC_END: return ct_enc_end(e, r->ts, &r->u.end);
    case CT_REC_UNKNOWN:
        return ct_enc_raw(e, r->u.unknown.type, r->ts, r->u.unknown.bytes, r->u.unknown.len);
    default: return CT_E_INVAL;
    }
}
