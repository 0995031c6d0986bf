/* The writer's doorbell (see ctp_wake.h). */
#define _GNU_SOURCE
#include "ctp_wake.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ctp_clock.h"
#include "ctp_ring.h"

_Atomic uint32_t ctp_wake_seq;
_Atomic int ctp_room_open;
/* Bumped at the end of every flush; threads waiting for room in a full ring sleep on it. */
static _Atomic uint32_t ctp_drained_seq;
static _Atomic uint32_t ctp_room_waiters;
/* A wait gives up (the record is lost, and counted) after this long without a flush: one stuck
 * on a lock the waiting thread holds, or an end under way. */
#define CTP_ROOM_STALL_NS 2000000000ull
#define CTP_ROOM_POLL_NS 5000000ull

void ctp_futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void ctp_futex_wait(_Atomic uint32_t *word, uint32_t val, uint64_t ns)
{
    struct timespec rel = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &rel, NULL, 0);
}

void ctp_writer_wake(void)
{
    atomic_fetch_add(&ctp_wake_seq, 1);
    ctp_futex_wake(&ctp_wake_seq);
}

void ctp_writer_pressure(void)
{
    int saved = errno;
    ctp_writer_wake();
    errno = saved;
}

void ctp_writer_nudge(void)
{
    static _Atomic uint64_t last;
    uint64_t now = ctp_now(), prev = atomic_load_explicit(&last, memory_order_relaxed);
    if (now - prev < 10000000 || !atomic_compare_exchange_strong(&last, &prev, now))
        return;
    ctp_writer_wake();
}

void ctp_writer_drained(void)
{
    atomic_fetch_add(&ctp_drained_seq, 1);
    if (atomic_load(&ctp_room_waiters))
        ctp_futex_wake(&ctp_drained_seq);
}

/* Waits while the writer runs, waking it each time: it drains every ring at each flush. */
int ctp_ring_wait(ctp_ring *r, uint64_t tail)
{
    if (!atomic_load(&ctp_room_open))
        return 0;
    int saved = errno, room;
    atomic_fetch_add(&ctp_room_waiters, 1);
    uint32_t seen = atomic_load(&ctp_drained_seq);
    uint64_t since = ctp_now();
    while (!(room = atomic_load_explicit(&r->tail, memory_order_acquire) >= tail) &&
           atomic_load(&ctp_room_open)) {
        uint32_t seq = atomic_load(&ctp_drained_seq);
        uint64_t now = ctp_now();
        if (seq != seen)
            seen = seq, since = now;
        else if (now - since > CTP_ROOM_STALL_NS)
            break;
        ctp_writer_wake();
        ctp_futex_wait(&ctp_drained_seq, seq, CTP_ROOM_POLL_NS);
    }
    atomic_fetch_sub(&ctp_room_waiters, 1);
    errno = saved;
    return room;
}
