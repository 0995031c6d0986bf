/* The recorder's side of the rings: how a traced call's record is written into its thread's ring
 * (ctp_ring.h) and published, and how the writer is told when a ring fills (ctp_wake.h).
 *
 * Contract: called only by the thread that owns th's ring, on the hot path: no lock, no
 * allocation, no system call but the doorbell's futex wake once per drain. A full ring drops
 * the record and counts it. Forced inline: the generated wrappers are one large file where the
 * compiler would otherwise call them, and each call would cost about as much as the work inside. */
#ifndef CTP_EMIT_H
#define CTP_EMIT_H

#include <assert.h>
#include <string.h>

#include "ctp_clock.h"
#include "ctp_ring.h"
#include "ctp_state.h"
#include "ctp_wake.h"

#define CTP_HOT static inline __attribute__((always_inline))

CTP_HOT void ctp_publish(ctp_thread *th, unsigned n)
{
    if (__builtin_expect(ctp_ring_commit(&th->ring, n), 0))
        ctp_writer_pressure();
}

/* The call's stamps from now on are held (ctp_ring.h) until ctp_finish has published them: its
 * return time, and a GPU operation's submission (its GPU record may end before the call
 * returns). Once per call; c->t0 precedes every such stamp. */
CTP_HOT void ctp_call_hold(ctp_call *c)
{
    if (c->unhold == CTP_UNHELD)
        c->unhold = ctp_ring_hold(&c->th->ring, c->t0);
}

/* The API words of c's record: n words in all, detail of wire type dtype (0: none). */
CTP_HOT void ctp_api_words(uint64_t *w, const ctp_call *c, unsigned n, unsigned dtype)
{
    w[0] = ctp_raw_w0(CTP_RAW_API, n, c->fn, c->result);
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
CTP_HOT void ctp_push(ctp_thread *th, unsigned type, unsigned fn, uint64_t ts, const void *payload,
                    size_t len)
{
    unsigned n = 2 + (unsigned)((len + 7) / 8);
    uint64_t *w = ctp_ring_reserve(&th->ring, n);
    if (!w)
        return;
    w[0] = ctp_raw_w0(type, n, fn, 0);
    w[1] = ts;
    w[n - 1] = 0;
    memcpy(w + 2, payload, len);
    ctp_publish(th, n);
}

/* ctp_push of a record stamped now, outside the hold of a call (a thread's first call, a device
 * or library seen): held like a call's. */
CTP_HOT void ctp_push_now(ctp_thread *th, unsigned type, const void *payload, size_t len)
{
    uint64_t prev = ctp_ring_hold(&th->ring, th->last_return);
    ctp_push(th, type, 0, ctp_ticks(), payload, len);
    ctp_ring_unhold(&th->ring, prev);
}

/* Reserves the call's record with room for a detail of wire type `type` (the matching ct_rec_*
 * struct, len bytes), at the call's return time, and returns where the detail goes (8-byte
 * aligned) for the hook to fill in place; ctp_emit_end publishes it. At most once per call. NULL
 * when the ring is full (the record is dropped and counted; ctp_finish then tries the API record
 * alone). Filled in place, the detail is written once instead of built on the stack and copied. */
CTP_HOT void *ctp_emit_begin(ctp_call *c, unsigned type, size_t len)
{
    assert(!c->recorded && type != 0);
    unsigned n = 6 + (unsigned)((len + 7) / 8);
    uint64_t *w = ctp_ring_reserve(&c->th->ring, n);
    if (!w)
        return NULL;
    ctp_api_words(w, c, n, type);
    c->recorded = (int)n;
    return w + 6;
}

CTP_HOT void ctp_emit_end(ctp_call *c)
{
    ctp_publish(c->th, (unsigned)c->recorded);
}

/* The same for a detail already built elsewhere. */
CTP_HOT void ctp_emit(ctp_call *c, unsigned type, const void *payload, size_t len)
{
    void *d = ctp_emit_begin(c, type, len);
    if (d) {
        memcpy(d, payload, len);
        ctp_emit_end(c);
    }
}

#endif
