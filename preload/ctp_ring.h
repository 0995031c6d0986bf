/* Per-thread record rings: the only thing the hot path touches.
 *
 * Each traced thread owns one single-producer single-consumer ring of 64-bit words. The thread
 * (producer) appends raw fixed-layout records and publishes them with a release store of
 * `head`; the background writer (consumer) reads up to an acquired `head`, encodes, and
 * releases the space with a release store of `tail`. A record never wraps: when it does not fit
 * before the end of the ring, a PAD record fills the rest. A full ring drops the record and
 * counts it in `dropped` (read by the writer, reported as loss). Nothing here allocates, locks
 * or makes a system call; ctp_ring_commit tells the caller when the ring passed half full, so
 * that it wakes the consumer before the ring overflows (a loop of back-to-back calls fills 1 MiB
 * in under a millisecond, far sooner than a periodic writer comes by).
 *
 * Raw record layout: word 0 = kind (8 bits) | nwords (8 bits, including word 0) | fn (16 bits) |
 * aux (32 bits); word 1 = ts; then the payload, whose layout the kind defines (ctp_raw.h). */
#ifndef CTP_RING_H
#define CTP_RING_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    uint64_t *words;
    uint64_t mask;                 /* capacity in words - 1 (capacity is a power of two) */
    _Atomic uint64_t head;         /* producer position, in words, ever increasing */
    _Atomic uint64_t tail;         /* consumer position */
    _Atomic uint64_t dropped;      /* records dropped because the ring was full */
    uint64_t tail_cache;           /* producer's last view of tail (avoids a shared read) */
    uint64_t pressed_at;           /* tail + 1 when the producer last reported half full, 0 never */
} ctp_ring;

enum { CTP_RAW_PAD = 0 };

static inline uint64_t ctp_raw_w0(unsigned kind, unsigned nwords, unsigned fn, uint32_t aux)
{
    return (uint64_t)kind | (uint64_t)nwords << 8 | (uint64_t)fn << 16 | (uint64_t)aux << 32;
}
static inline unsigned ctp_raw_kind(uint64_t w0) { return (unsigned)(w0 & 0xff); }
static inline unsigned ctp_raw_nwords(uint64_t w0) { return (unsigned)((w0 >> 8) & 0xff); }
static inline unsigned ctp_raw_fn(uint64_t w0) { return (unsigned)((w0 >> 16) & 0xffff); }
static inline uint32_t ctp_raw_aux(uint64_t w0) { return (uint32_t)(w0 >> 32); }

/* Space for n contiguous words (n <= 255), or NULL if the ring is full (the drop is counted).
 * The caller fills the words then calls ctp_ring_commit(r, n). */
static inline uint64_t *ctp_ring_reserve(ctp_ring *r, unsigned n)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t cap = r->mask + 1;
    uint64_t off = head & r->mask;
    uint64_t pad = off + n > cap ? cap - off : 0;
    if (head + pad + n - r->tail_cache > cap) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (head + pad + n - r->tail_cache > cap) {
            atomic_store_explicit(&r->dropped,
                                  atomic_load_explicit(&r->dropped, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            return 0;
        }
    }
    if (pad) {
        r->words[off] = ctp_raw_w0(CTP_RAW_PAD, 0, 0, (uint32_t)pad);
        atomic_store_explicit(&r->head, head + pad, memory_order_release);
        off = 0;
    }
    return r->words + off;
}

/* Publishes the n reserved words. Returns 1 when the ring is now more than half full and the
 * consumer has not been told so since it last freed space (at most once per drain), else 0.
 * Below half of the producer's cached view this costs one compare; above it, one read of
 * `tail`, which the consumer writes only when it drains. */
static inline int ctp_ring_commit(ctp_ring *r, unsigned n)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed) + n;
    atomic_store_explicit(&r->head, head, memory_order_release);
    uint64_t half = (r->mask + 1) / 2;
    if (__builtin_expect(head - r->tail_cache <= half, 1))
        return 0;
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - r->tail_cache <= half || r->pressed_at == r->tail_cache + 1)
        return 0;
    r->pressed_at = r->tail_cache + 1;
    return 1;
}

#endif
