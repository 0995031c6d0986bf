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

_Atomic uint32_t ctp_wake_seq;

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
