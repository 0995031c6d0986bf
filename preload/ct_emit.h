/* The recorder's side of the rings: how a traced call's record is written into its thread's ring
 * (ct_ring.h) and published, and how the writer is told when a ring fills (ct_wake.h).
 *
 * Contract: called only by the thread that owns th's ring, on the hot path: no lock, no
 * allocation, no system call but the doorbell's futex wake once per drain. A full ring drops
 * the record and counts it. Forced inline: the generated wrappers are one large file where the
 * compiler would otherwise call them, and each call would cost about as much as the work inside. */
#ifndef CT_EMIT_H
#define CT_EMIT_H

#include <assert.h>
#include <string.h>

#include "ct_ring.h"
#include "ct_state.h"
#include "ct_wake.h"

#define CT_HOT static inline __attribute__((always_inline))

CT_HOT void ct_publish(ct_thread *th, unsigned n)
{
    if (__builtin_expect(ct_ring_commit(&th->ring, n), 0))
        ct_writer_pressure();
}

/* The API words of c's record: n words in all, detail of wire type dtype (0: none). */
CT_HOT void ct_api_words(uint64_t *w, const ct_call *c, unsigned n, unsigned dtype)
{
    w[0] = ct_raw_w0(CT_RAW_API, n, c->fn, c->result);
    w[1] = c->t1;
    w[2] = c->t0;
    w[3] = c->corr;
    if (n > 4)
        w[4] = c->parent;
    if (n > 5)
        w[5] = c->stack | (uint64_t)dtype << 32;
}

/* Appends a record of raw kind `type` (a wire record type for detail records) whose payload is
 * `len` bytes (the matching ct_rec_* struct), ordered at ts. Dropped and counted if the ring is
 * full. */
CT_HOT void ct_push(ct_thread *th, unsigned type, unsigned fn, uint64_t ts, const void *payload,
                    size_t len)
{
    unsigned n = 2 + (unsigned)((len + 7) / 8);
    uint64_t *w = ct_ring_reserve(&th->ring, n);
    if (!w)
        return;
    w[0] = ct_raw_w0(type, n, fn, 0);
    w[1] = ts;
    w[n - 1] = 0;
    memcpy(w + 2, payload, len);
    ct_publish(th, n);
}

/* Reserves the call's record with room for a detail of wire type `type` (the matching ct_rec_*
 * struct, len bytes), at the call's return time, and returns where the detail goes (8-byte
 * aligned) for the hook to fill in place; ct_emit_end publishes it. At most once per call. NULL
 * when the ring is full (the record is dropped and counted; ct_finish then tries the API record
 * alone). Filled in place, the detail is written once instead of built on the stack and copied. */
CT_HOT void *ct_emit_begin(ct_call *c, unsigned type, size_t len)
{
    assert(!c->recorded && type != 0);
    unsigned n = 6 + (unsigned)((len + 7) / 8);
    uint64_t *w = ct_ring_reserve(&c->th->ring, n);
    if (!w)
        return NULL;
    ct_api_words(w, c, n, type);
    c->recorded = (int)n;
    return w + 6;
}

CT_HOT void ct_emit_end(ct_call *c)
{
    ct_publish(c->th, (unsigned)c->recorded);
}

/* The same for a detail already built elsewhere. */
CT_HOT void ct_emit(ct_call *c, unsigned type, const void *payload, size_t len)
{
    void *d = ct_emit_begin(c, type, len);
    if (d) {
        memcpy(d, payload, len);
        ct_emit_end(c);
    }
}

#endif
