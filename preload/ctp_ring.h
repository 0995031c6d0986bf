/* Per-thread record rings: the only thing the hot path touches.
 *
 * Each traced thread owns one single-producer single-consumer ring of 64-bit words. The thread
 * (producer) appends raw fixed-layout records and publishes them with a release store of
 * `head`; the background writer (consumer) reads up to an acquired `head`, encodes, and
 * releases the space with a release store of `tail`. A record never wraps: when it does not fit
 * before the end of the ring, a PAD record fills the rest. A full ring drops the record and
 * counts it in `dropped` (read by the writer, reported as loss), unless the program chose to
 * wait for the writer instead (ctp_ring_wait, out of line: only a full ring calls it). Nothing
 * else here allocates, locks or makes a system call; ctp_ring_commit tells the caller when the
 * ring passed a quarter full, so that it wakes the consumer before the ring overflows (a loop of
 * back-to-back calls fills 1 MiB in under a millisecond, far sooner than a periodic writer
 * comes by).
 *
 * The hold: a producer that has read a time stamp it has not published yet (a call between its
 * return time and its record's commit; a GPU operation between its submission, which bounds
 * its GPU record's time, and the commit) says so in `hold`, with a time no later than that
 * stamp, stored before the stamp is read. The writer reads `hold` before `head`, and never
 * promises a time (low-water mark) past a hold it saw: a producer descheduled between reading
 * its clock and publishing (for hundreds of milliseconds on a loaded machine) cannot then
 * deliver a record older than what the writer promised.
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
    _Atomic uint64_t hold;         /* ticks <= every unpublished stamp of the producer, 0: none */
    uint64_t tail_cache;           /* producer's last view of tail (avoids a shared read) */
    uint64_t pressed_at;           /* head when the producer last reported the ring filling, 0 never */
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

/* Words the record at w occupies (a PAD: the rest of the ring). */
static inline uint64_t ctp_raw_len(const uint64_t *w)
{
    return ctp_raw_kind(w[0]) == CTP_RAW_PAD ? ctp_raw_aux(w[0]) : ctp_raw_nwords(w[0]);
}

/* A full ring (its tail below `tail`): waits until the consumer has freed up to `tail` when the
 * program asked to wait rather than lose records (CUTRACE_ON_FULL=block) and a consumer runs;
 * 1 if it did, 0 to drop. Keeps errno. */
int ctp_ring_wait(ctp_ring *r, uint64_t tail);

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
        if (head + pad + n - r->tail_cache > cap && ctp_ring_wait(r, head + pad + n - cap))
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

/* Publishes the n reserved words. Returns 1 when the ring is now more than a quarter full and
 * the consumer has not been told so since it drained past the last telling (at most once per
 * drain, however far the drain's record-by-record tail moves meanwhile), else 0. A quarter: a
 * consumer woken may run only milliseconds later on a busy machine (up to 11 ms measured), and
 * one thread fills 1 MiB in ~5 ms at 2.5 M calls/s. Below that mark of the producer's cached view
 * this costs one compare; above it, one read of `tail`, which the consumer writes as it drains. */
static inline int ctp_ring_commit(ctp_ring *r, unsigned n)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed) + n;
    atomic_store_explicit(&r->head, head, memory_order_release);
    uint64_t mark = (r->mask + 1) / 4;
    if (__builtin_expect(head - r->tail_cache <= mark, 1))
        return 0;
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (head - r->tail_cache <= mark || r->pressed_at > r->tail_cache)
        return 0;
    r->pressed_at = head;
    return 1;
}

/* Takes the hold (see the top) with `since`, a time no later than any stamp the producer reads
 * after this call, unless it already holds one (an earlier, so also valid, time); returns what
 * to give ctp_ring_unhold once the stamps are published. A relaxed store: the compiler fence
 * keeps the clock reads that follow after it; that the CPU makes it visible within
 * microseconds is the margin the writer leaves (CTP_LW_MARGIN_NS). */
static inline uint64_t ctp_ring_hold(ctp_ring *r, uint64_t since)
{
    uint64_t prev = atomic_load_explicit(&r->hold, memory_order_relaxed);
    if (!prev)
        atomic_store_explicit(&r->hold, since ? since : 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    return prev;
}

/* After the commit of every stamp held: releases the hold (to what ctp_ring_hold returned). */
static inline void ctp_ring_unhold(ctp_ring *r, uint64_t prev)
{
    atomic_store_explicit(&r->hold, prev, memory_order_release);
}

#endif
