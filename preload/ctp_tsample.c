/* The thread sampler (see ctp_tsample.h). */
#define _GNU_SOURCE
#include "ctp_tsample.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ctp_clock.h"
#include "ctp_emit.h"
#include "ctp_python.h"
#include "ctp_stack.h"
#include "ctp_state.h"
#include "ctp_wake.h"

#define CTP_TS_RING_WORDS (1u << 15) /* 256 KiB: ~65 thread-seconds of samples at 2 ms */
#define CTP_TS_FDS 256               /* /proc stat files kept open; past them, opened per read */

/* Only its ring is used: ctp_push appends to it as a traced thread's call does to its own. */
static ctp_thread ctp_ts_self;
static pthread_t ctp_ts_thread;
static int ctp_ts_running;
static _Atomic uint32_t ctp_ts_stop;
static unsigned ctp_ts_fds;
static uint32_t ctp_ts_perf;        /* CT_TS_PERF_PERMITTED, or 0 */

ctp_ring *ctp_tsample_ring(void)
{
    return &ctp_ts_self.ring;
}

/* The state letter in a /proc stat line ("tid (comm) S ..."; comm may hold ')' and spaces). */
static uint32_t ctp_ts_state_of(const char *buf, ssize_t n)
{
    for (ssize_t i = n - 1; i > 0; i--)
        if (buf[i] == ')')
            return i + 2 < n && buf[i + 1] == ' ' ? (uint32_t)(unsigned char)buf[i + 2] : 0;
    return 0;
}

static uint32_t ctp_ts_state(ctp_thread *t)
{
    char buf[512];
    if (t->stat_fd == 0) {
        snprintf(buf, sizeof buf, "/proc/self/task/%u/stat", t->tid);
        int fd = open(buf, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && ctp_ts_fds >= CTP_TS_FDS) {
            ssize_t n = pread(fd, buf, sizeof buf, 0);
            close(fd);
            return n > 0 ? ctp_ts_state_of(buf, n) : 0;
        }
        t->stat_fd = fd >= 0 ? fd + 1 : -1;
        ctp_ts_fds += fd >= 0;
    }
    ssize_t n = t->stat_fd > 0 ? pread(t->stat_fd - 1, buf, sizeof buf, 0) : -1;
    return n > 0 ? ctp_ts_state_of(buf, n) : 0;
}

static void ctp_ts_sample(ctp_thread *t)
{
    uint64_t ts = ctp_ticks();
    ct_rec_thread_sample r = {t->tid, 0, atomic_load_explicit(&t->in_fn, memory_order_relaxed),
                              0, ctp_ts_perf};
    r.state = ctp_ts_state(t);
    if (!r.state)
        r.flags |= CT_TS_NO_STATE;
    uint64_t tstate = atomic_load_explicit(&t->py_tstate, memory_order_relaxed);
    if (tstate) {
        uint64_t keys[CTP_PY_MAX], code_at[CTP_PY_MAX];
        int n = ctp_python_sample(tstate, keys, code_at, CTP_PY_MAX);
        if (n < 0) {
            r.flags |= CT_TS_READ_FAILED;
        } else {
            r.flags |= CT_TS_PYTHON;
            r.stack = ctp_stack_intern(keys, code_at, n);
        }
    } else if ((r.stack = atomic_load_explicit(&t->last_stack, memory_order_relaxed))) {
        r.flags |= CT_TS_NATIVE_LAST;
    }
    ctp_push(&ctp_ts_self, CT_REC_THREAD_SAMPLE, 0, ts, &r, sizeof r);
}

static void ctp_ts_round(void)
{
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next) {
        if (t->stat_fd < 0)
            continue;
        if (atomic_load_explicit(&t->exited, memory_order_acquire)) {
            if (t->stat_fd > 0) {
                close(t->stat_fd - 1);
                ctp_ts_fds--;
            }
            t->stat_fd = -1;
            continue;
        }
        ctp_ts_sample(t);
    }
}

/* Rounds on a fixed grid of the period; a round that comes late (the sampler descheduled)
 * starts the grid again from now rather than catching up in a burst. */
static void *ctp_ts_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "cutrace-sample");
    uint64_t period = ctp_opt.thread_sample_ns, next = ctp_now() + period;
    while (!atomic_load(&ctp_ts_stop)) {
        uint64_t now = ctp_now();
        if (now < next) {
            ctp_futex_wait(&ctp_ts_stop, 0, next - now);
            continue;
        }
        ctp_ts_round();
        next += period;
        if (next <= now)
            next = now + period;
    }
    return NULL;
}

/* perf_event_open's user-stack sampling of another thread needs perf_event_paranoid <= 2 (or
 * CAP_PERFMON); cutrace does not use it yet: the samples say it could. */
static uint32_t ctp_ts_perf_permitted(void)
{
    char buf[16] = "";
    int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    return n > 0 && atoi(buf) <= 2 ? CT_TS_PERF_PERMITTED : 0;
}

int ctp_tsample_start(void)
{
    if (!ctp_opt.thread_sample_ns || ctp_ts_running)
        return 0;
    if (!ctp_ts_self.ring.words) {
        void *w = mmap(NULL, CTP_TS_RING_WORDS * 8, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (w == MAP_FAILED)
            return -1;
        ctp_ts_self.ring.words = w;
        ctp_ts_self.ring.mask = CTP_TS_RING_WORDS - 1;
    }
    ctp_ts_perf = ctp_ts_perf_permitted();
    atomic_store(&ctp_ts_stop, 0);
    if (pthread_create(&ctp_ts_thread, NULL, ctp_ts_main, NULL) != 0) {
        fprintf(stderr, "cutrace: warning: cannot start the thread sampler; no thread samples\n");
        return -1;
    }
    ctp_ts_running = 1;
    return 0;
}

void ctp_tsample_stop(void)
{
    if (!ctp_ts_running)
        return;
    atomic_store(&ctp_ts_stop, 1);
    ctp_futex_wake(&ctp_ts_stop);
    pthread_join(ctp_ts_thread, NULL);
    ctp_ts_running = 0;
}

void ctp_tsample_fork_child(void)
{
    ctp_ts_running = 0;
    ctp_ts_fds = 0;
    ctp_ring *r = &ctp_ts_self.ring;
    atomic_store(&r->head, 0);
    atomic_store(&r->tail, 0);
    atomic_store(&r->dropped, 0);
    r->tail_cache = r->pressed_at = 0;
}
