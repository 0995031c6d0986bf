/* The dynamic loader's lock across fork (see ctp_loader.h). */
#define _GNU_SOURCE
#include "ctp_loader.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "ctp_clock.h"

/* A walk lasts microseconds (a first unwinding through a large library, or the driver's dlopen,
 * milliseconds; more on a busy machine): a fork that waited this long waits on a thread that
 * waits on it, and goes on as without the tracer. */
#define CTP_LOADER_WAIT_NS 1000000000ull
/* How often a fork and a thread kept out of the loader look again (forks are rare). */
#define CTP_LOADER_POLL (&(struct timespec){0, 20000})

static _Atomic uint32_t ctp_ld_inside; /* threads between enter and leave */
static _Atomic uint32_t ctp_ld_forks;  /* forks between their prepare and parent handlers */
/* A thread's own nesting (the sampler's unwinding walks the objects list too): only the
 * outermost enter counts, or a nested one would wait for a fork that waits for the outer. */
static __thread unsigned ctp_ld_depth __attribute__((tls_model("initial-exec")));

/* Sequentially consistent on both sides (Dekker's pattern): a thread that sees no fork under
 * way is counted before the forking thread reads the count. */
void ctp_loader_enter(void)
{
    if (ctp_ld_depth++)
        return;
    for (;;) {
        atomic_fetch_add(&ctp_ld_inside, 1);
        if (__builtin_expect(!atomic_load(&ctp_ld_forks), 1))
            return;
        atomic_fetch_sub(&ctp_ld_inside, 1);
        int saved = errno;
        while (atomic_load(&ctp_ld_forks))
            nanosleep(CTP_LOADER_POLL, NULL);
        errno = saved;
    }
}

void ctp_loader_leave(void)
{
    if (--ctp_ld_depth)
        return;
    atomic_fetch_sub_explicit(&ctp_ld_inside, 1, memory_order_release);
}

int ctp_loader_walk(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    ctp_loader_enter();
    int rc = dl_iterate_phdr(fn, arg);
    ctp_loader_leave();
    return rc;
}

void ctp_loader_fork_prepare(void)
{
    int saved = errno;
    atomic_fetch_add(&ctp_ld_forks, 1);
    uint64_t until = ctp_now() + CTP_LOADER_WAIT_NS;
    while (atomic_load(&ctp_ld_inside) && ctp_now() < until)
        nanosleep(CTP_LOADER_POLL, NULL);
    errno = saved;
}

void ctp_loader_fork_parent(void)
{
    atomic_fetch_sub(&ctp_ld_forks, 1);
}

/* The child has only the forking thread, which was in no walk (its depth is 0). */
void ctp_loader_fork_child(void)
{
    atomic_store(&ctp_ld_inside, 0);
    atomic_store(&ctp_ld_forks, 0);
}
