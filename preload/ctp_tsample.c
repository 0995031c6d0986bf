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
#include "ctp_fds.h"
#include "ctp_host.h"
#include "ctp_perf.h"
#include "ctp_python.h"
#include "ctp_stack.h"
#include "ctp_state.h"
#include "ctp_wake.h"

#define CTP_TS_RING_WORDS (1u << 15) /* 256 KiB, 6,500 samples: a writer period of 300 threads */
#define CTP_TS_FDS 512               /* /proc files kept open; past them, opened per read */

/* Only its ring is used: ctp_push appends to it as a traced thread's call does to its own. */
static ctp_thread ctp_ts_self;
static pthread_t ctp_ts_pthread;
static int ctp_ts_running;
static _Atomic uint32_t ctp_ts_stop;
static unsigned ctp_ts_fds;
/* perf_event sampling: 1 usable (ctp_perf_probe), 0 not (ctp_ts_perf_why says why), -1 not
 * probed yet */
static int ctp_ts_perf = -1;
static char ctp_ts_perf_why[96];

ctp_ring *ctp_tsample_ring(void)
{
    return &ctp_ts_self.ring;
}

#define CTP_TS_FRAMELESS 50

/* What the sampler keeps of a thread between samples (ctp_thread.sampled). */
typedef struct ctp_ts_thread {
    int stat_fd, sched_fd;       /* its /proc stat and schedstat, -1 if not open */
    uint64_t run_ns;             /* schedstat: its time on a CPU, at the last sample */
    uint64_t run_now;            /* ... at this one (while its frames are being read) */
    uint32_t in_fn;              /* the traced call it was inside at the last sample (0 none) */
    uint64_t last_return;        /* ... and its ctp_thread.last_return then */
    uint32_t stack, flags;       /* the last sample's Python stack and flags */
    uint32_t letter;             /* the letter its stat gave its last sleep read (S, D) */
    int letter_read;             /* ... read during the sleep it is in now */
    ctp_perf perf;               /* its perf_event ring (perf.fd -1: none) */
    int native;                  /* ... sampling its native stacks (a thread without Python) */
    /* Reads of its Python frames in a row that found none: a thread with a Python thread state
     * that runs no Python (PyTorch's autograd threads, running the backward pass's cuDNN
     * autotuning, had only "(no stack)"); at CTP_TS_FRAMELESS it is sampled as one without
     * (at 3, a Python thread churning its frames, read at 200 us, was taken for one). */
    int empty;
    int n;                       /* ... its Python frames' count, and their keys */
    uint64_t keys[CTP_PY_MAX];
    ctp_py_hint hint;            /* what the last sample read of its frames */
} ctp_ts_thread;
static ctp_ts_thread ctp_ts_gone; /* an exited thread's: its files closed, nothing kept */

/* The state letter in a /proc stat line ("tid (comm) S ..."; comm may hold ')' and spaces). */
static uint32_t ctp_ts_state_of(const char *buf, ssize_t n)
{
    for (ssize_t i = n - 1; i > 0; i--)
        if (buf[i] == ')')
            return i + 2 < n && buf[i + 1] == ' ' ? (uint32_t)(unsigned char)buf[i + 2] : 0;
    return 0;
}

/* Reads the /proc file `what` of thread tid of this process, or of process tid when worker
 * (a loader worker's), into buf (kept open while the budget of descriptors allows: a
 * descriptor stays the process's it was opened on, whatever later takes its pid); its length,
 * or -1. */
static ssize_t ctp_ts_read(uint32_t tid, int worker, int *fd, const char *what, char *buf,
                           size_t len)
{
    if (*fd < 0) {
        char path[64];
        snprintf(path, sizeof path, worker ? "/proc/%u/%s" : "/proc/self/task/%u/%s", tid, what);
        int f = ctp_fd_open(path, 0);
        if (f < 0)
            return -1;
        if (ctp_ts_fds >= CTP_TS_FDS) {
            ssize_t n = pread(f, buf, len, 0);
            ctp_fd_drop(f);
            return n;
        }
        *fd = f;
        ctp_ts_fds++;
    }
    return pread(*fd, buf, len, 0);
}

/* A sampled thread's state, nothing read yet (NULL if no memory). */
static ctp_ts_thread *ctp_ts_new(void)
{
    ctp_ts_thread *s = calloc(1, sizeof *s);
    if (s) {
        s->stat_fd = s->sched_fd = s->perf.fd = -1;
        s->run_ns = UINT64_MAX;
    }
    return s;
}

/* Closes what a thread's state holds open; frees it (free: in a forked child, where the
 * parent's states are the parent's, they are only closed). */
static void ctp_ts_forget(ctp_ts_thread *s, int free_it)
{
    if (!s)
        return;
    for (int k = 0; k < 2; k++) {
        int fd = k ? s->sched_fd : s->stat_fd;
        if (fd >= 0) {
            ctp_fd_drop(fd);
            ctp_ts_fds--;
        }
    }
    ctp_perf_close(&s->perf);
    if (free_it)
        free(s);
}

static ctp_ts_thread *ctp_ts_of(ctp_thread *t)
{
    if (!t->sampled && (t->sampled = ctp_ts_new())) {
        int python = atomic_load_explicit(&t->py_tstate, memory_order_relaxed) != 0;
        t->sampled->native = !python;
        if (ctp_ts_perf != 1 || ctp_perf_open(&t->sampled->perf, t->tid, !python) != 0)
            t->sampled->perf.fd = -1;
    }
    return t->sampled;
}

/* A thread's Python frames. A thread that has not run since the last sample read them (its
 * perf_event switches say it went to sleep and no record since, or without them its time on a
 * CPU, schedstat's first field, unchanged, unless it is running), or has stayed inside one
 * traced call, has the frames it had: a thread that waits (in a sleep, on a lock, for I/O, in
 * a synchronization) costs no read of its memory. A ring that has shown no switch yet says
 * nothing: a compute loop that has not left its CPU since the ring opened has no records (read
 * as not running, pyphases' compute phase was half lost on an idle machine). 1 if they are to
 * be read (the round reads every thread's together: ctp_ts_python_got), else r has the last
 * ones. */
static int ctp_ts_python_due(ctp_thread *t, ctp_ts_thread *s, const ctp_perf_seen *pr,
                             ct_rec_thread_sample *r)
{
    char buf[128];
    unsigned long long run = UINT64_MAX;
    s->run_now = UINT64_MAX;
    /* Inside the traced call it was in at the last sample, no traced call having returned since
     * (a return sets last_return): it has run no Python since, its frames are those read. */
    uint64_t ret = __atomic_load_n(&t->last_return, __ATOMIC_RELAXED);
    int same_call = r->function && r->function == s->in_fn && ret == s->last_return;
    s->in_fn = r->function;
    s->last_return = ret;
    if ((same_call || (s->perf.fd >= 0 && pr->state == 'S' && !pr->ran && !pr->lost)) &&
        s->run_ns != UINT64_MAX) {
        r->stack = s->stack;
        r->flags |= s->flags;
        return 0;
    }
    ssize_t n = r->state == 'R' || s->perf.fd >= 0
                    ? -1 : ctp_ts_read(t->tid, 0, &s->sched_fd, "schedstat", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = 0;
        if (sscanf(buf, "%llu", &run) != 1)
            run = UINT64_MAX;
    }
    if (run != UINT64_MAX && run == s->run_ns) {
        r->stack = s->stack;
        r->flags |= s->flags;
        return 0;
    }
    s->run_now = s->perf.fd >= 0 ? 0 : run;
    return 1;
}

/* What the read of a thread's frames (f) says, in process pid (0: this one); the same frames
 * as last time are the same stack, not looked up again. */
static void ctp_ts_python_got(ctp_ts_thread *s, uint32_t pid, const ctp_py_frames *f,
                              ct_rec_thread_sample *r)
{
    int got = f->n;
    s->empty = got ? 0 : s->empty + 1;
    s->run_ns = got < 0 ? UINT64_MAX : s->run_now;
    s->flags = got < 0 ? CT_TS_READ_FAILED : CT_TS_PYTHON;
    if (got < 0 || got != s->n || memcmp(f->keys, s->keys, (size_t)got * sizeof *f->keys)) {
        s->stack = got < 0 ? 0 : ctp_stack_intern(pid, f->keys, f->code_at, got);
        s->n = got;
        memcpy(s->keys, f->keys, (size_t)(got < 0 ? 0 : got) * sizeof *f->keys);
    }
    r->stack = s->stack;
    r->flags |= s->flags;
}

/* The samples of a round, appended in order once the Python frames due are read, together
 * (ctp_python_sample_many; tstate 0: none due). */
#define CTP_TS_BATCH 32
static struct ctp_ts_pending {
    ctp_ts_thread *s;
    uint64_t ts;
    ct_rec_thread_sample r;
} ctp_ts_pend[CTP_TS_BATCH];
static uint64_t ctp_ts_tstates[CTP_TS_BATCH];
static ctp_py_hint *ctp_ts_hints[CTP_TS_BATCH];
static ctp_py_frames ctp_ts_frames[CTP_TS_BATCH];
static int ctp_ts_npend;

static void ctp_ts_flush(void)
{
    ctp_python_sample_many(ctp_ts_npend, ctp_ts_tstates, ctp_ts_hints, ctp_ts_frames);
    for (int i = 0; i < ctp_ts_npend; i++) {
        struct ctp_ts_pending *q = &ctp_ts_pend[i];
        if (ctp_ts_tstates[i])
            ctp_ts_python_got(q->s, 0, &ctp_ts_frames[i], &q->r);
        ctp_push(&ctp_ts_self, CT_REC_THREAD_SAMPLE, 0, q->ts, &q->r, sizeof q->r);
    }
    ctp_ts_npend = 0;
}

static void ctp_ts_sample(ctp_thread *t, ctp_ts_thread *s)
{
    uint64_t ts = ctp_ticks();
    char buf[512];
    ct_rec_thread_sample r = {t->tid, 0, atomic_load_explicit(&t->in_fn, memory_order_relaxed),
                              0, s->perf.fd >= 0 ? CT_TS_PERF : 0};
    uint64_t tstate = atomic_load_explicit(&t->py_tstate, memory_order_relaxed);
    if (s->empty >= CTP_TS_FRAMELESS) {
        tstate = 0;
        if (!s->native && s->perf.fd >= 0) { /* its ring again, now with stacks */
            ctp_perf_close(&s->perf);
            if (ctp_perf_open(&s->perf, t->tid, 1) != 0)
                s->perf.fd = -1;
            s->native = 1;
        }
    }
    ctp_perf_seen pr;
    ctp_perf_read(&s->perf, !tstate, &pr);
    /* The stat file (the costliest read) only when the switches do not tell: running or
     * preempted is R; a sleep is S or D: one that began since the previous sample has the
     * letter of the thread's last sleep, and one that lasts to the next sample is read once
     * (a thread that sleeps briefly between computations, many times a period, costs no read). */
    if (pr.state == 'R') {
        r.state = 'R';
    } else if (pr.state == 'S' && (pr.slept || s->letter_read)) {
        r.state = s->letter ? s->letter : 'S';
        s->letter_read &= !pr.slept;
    } else {
        ssize_t n = ctp_ts_read(t->tid, 0, &s->stat_fd, "stat", buf, sizeof buf);
        r.state = n > 0 ? ctp_ts_state_of(buf, n) : 0;
        s->letter = r.state == 'R' ? s->letter : r.state; /* a sleep's letter */
        s->letter_read = pr.state == 'S';
    }
    if (!r.state)
        r.flags |= CT_TS_NO_STATE;
    int due = tstate && ctp_ts_python_due(t, s, &pr, &r);
    if (!tstate && !r.function && (r.stack = pr.stack))
        r.flags |= CT_TS_NATIVE_PERF; /* inside a CUDA call: that call's stack */
    else if (!tstate && (r.stack = atomic_load_explicit(&t->last_stack, memory_order_relaxed)))
        r.flags |= CT_TS_NATIVE_LAST;
    if (ctp_ts_npend == CTP_TS_BATCH)
        ctp_ts_flush();
    ctp_ts_pend[ctp_ts_npend] = (struct ctp_ts_pending){s, ts, r};
    ctp_ts_tstates[ctp_ts_npend] = due ? tstate : 0;
    ctp_ts_hints[ctp_ts_npend++] = &s->hint;
}

/* ---- loader workers ----
 *
 * A child forked without exec by a thread running Python (a DataLoader worker) runs the
 * parent's Python on its one thread, on the forking thread's thread state, at the same address;
 * it never calls CUDA, so it is in no ctp_threads. The fork handlers tell the parent's sampler
 * of it through a table in memory shared with the children (MAP_SHARED, made when the sampler
 * first starts, inherited by every child forked after): the prepare handler keeps the forking
 * thread's state, and the child claims a slot and writes its pid, its parent's and that state
 * (atomics and plain stores: async-signal-safe). A process's workers are the slots naming it
 * as parent (a worker that starts a trace samples its own); its sampler frees a slot at its
 * worker's end. With every slot taken, further workers are not sampled. */
#define CTP_TS_WORKERS 256
/* Workers are sampled at most this often (or at the period, if longer): a worker costs a pread
 * of its stat and, running, reads of its memory that race with it, about what a thread without
 * perf_event costs; at 5 ms, two CPU-bound workers doubled the sampler's time. Their samples
 * stand for the time since their previous one, so fewer of them bias no share. */
#define CTP_TS_WORKER_NS 20000000ull
typedef struct {
    _Atomic uint32_t used; /* 1: claimed */
    _Atomic uint32_t pid;  /* the worker, once ppid and tstate are written (0 before) */
    uint32_t ppid;
    uint64_t tstate;
} ctp_ts_slot;
static ctp_ts_slot *ctp_ts_table;
static ctp_ts_thread *ctp_ts_worker[CTP_TS_WORKERS]; /* the sampler's state of each slot's worker */
static uint32_t ctp_ts_pid;           /* this process (its workers' ppid) */
static uint64_t ctp_ts_startcode;     /* where its code starts: a child that exec'd has another */
static __thread uint64_t ctp_ts_fork_tstate; /* the forking thread's state, for its child */

/* From a /proc stat line (NUL-terminated, ctp_host_parse_stat): the state letter (0 if the
 * line is not one), ppid, CPU time (utime + stime, clock ticks) and startcode. */
static uint32_t ctp_ts_stat(const char *buf, uint32_t *ppid, uint64_t *cpu, uint64_t *code)
{
    ctp_hstat st;
    if (ctp_host_parse_stat(buf, &st) != 0)
        return 0;
    *ppid = (uint32_t)st.f[HS_PPID];
    *cpu = st.f[HS_UTIME] + st.f[HS_STIME];
    *code = st.f[HS_STARTCODE];
    return (uint32_t)(unsigned char)st.state;
}

/* One sample of worker pid (its thread state tstate; s the sampler's state of it): its state
 * letter from its stat, and its Python frames when it may have moved since the last read (it
 * runs, its state changed, its CPU time grew, or they could not be read). -1 at its end: gone
 * or a zombie, no longer this process's child (its pid taken by another), or another program
 * (it exec'd). A worker that ran less than a clock tick between two samples while asleep at
 * both keeps its frames: a worker waiting for its next index wakes, loads and sleeps where it
 * slept. */
static int ctp_ts_worker_sample(uint32_t pid, uint64_t tstate, ctp_ts_thread *s)
{
    uint64_t ts = ctp_ticks(), cpu, code;
    char buf[512];
    uint32_t ppid;
    ssize_t n = ctp_ts_read(pid, 1, &s->stat_fd, "stat", buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    uint32_t state = ctp_ts_stat(buf, &ppid, &cpu, &code);
    if (!state || state == 'Z' || state == 'X' || ppid != ctp_ts_pid || code != ctp_ts_startcode)
        return -1;
    ct_rec_thread_sample r = {pid, state, 0, 0, CT_TS_WORKER};
    uint32_t was = s->letter;
    s->letter = state;
    if (state == 'R' || state != was || cpu != s->run_ns) {
        static ctp_py_frames f;
        f.n = ctp_python_sample(pid, tstate, &s->hint, f.keys, f.code_at, CTP_PY_MAX);
        s->run_now = cpu;
        ctp_ts_python_got(s, pid, &f, &r);
    } else {
        r.stack = s->stack;
        r.flags |= s->flags;
    }
    ctp_push(&ctp_ts_self, CT_REC_THREAD_SAMPLE, 0, ts, &r, sizeof r);
    return 0;
}

static void ctp_ts_workers_round(void)
{
    static uint64_t next;
    uint64_t now = ctp_now();
    if (!ctp_ts_table || now < next)
        return;
    next = now + (ctp_opt.thread_sample_ns > CTP_TS_WORKER_NS ? ctp_opt.thread_sample_ns
                                                               : CTP_TS_WORKER_NS);
    for (int i = 0; i < CTP_TS_WORKERS; i++) {
        ctp_ts_slot *w = &ctp_ts_table[i];
        uint32_t pid = atomic_load_explicit(&w->pid, memory_order_acquire);
        if (!pid || w->ppid != ctp_ts_pid ||
            (!ctp_ts_worker[i] && !(ctp_ts_worker[i] = ctp_ts_new())))
            continue;
        if (ctp_ts_worker_sample(pid, w->tstate, ctp_ts_worker[i]) != 0) {
            ctp_ts_forget(ctp_ts_worker[i], 1);
            ctp_ts_worker[i] = NULL;
            atomic_store_explicit(&w->pid, 0, memory_order_relaxed);
            atomic_store_explicit(&w->used, 0, memory_order_release);
        }
    }
}

void ctp_tsample_fork_prepare(void)
{
    ctp_ts_fork_tstate = ctp_ts_running ? ctp_python_tstate() : 0;
}

/* In the child: its slot in the parent's table, if its forking thread ran Python. */
static void ctp_ts_worker_claim(void)
{
    for (int i = 0; ctp_ts_fork_tstate && ctp_ts_table && i < CTP_TS_WORKERS; i++) {
        ctp_ts_slot *w = &ctp_ts_table[i];
        uint32_t free_slot = 0;
        if (atomic_compare_exchange_strong(&w->used, &free_slot, 1)) {
            w->ppid = ctp_ts_pid;
            w->tstate = ctp_ts_fork_tstate;
            atomic_store_explicit(&w->pid, (uint32_t)getpid(), memory_order_release);
            return;
        }
    }
}

/* This process's pid and startcode, and the table its workers will write (once). */
static int ctp_ts_workers_start(void)
{
    char buf[512];
    uint32_t ppid;
    uint64_t cpu;
    int fd = -1;
    ctp_ts_pid = (uint32_t)getpid();
    ssize_t n = ctp_ts_read(ctp_ts_pid, 1, &fd, "stat", buf, sizeof buf - 1);
    if (fd >= 0) {
        ctp_fd_drop(fd);
        ctp_ts_fds--;
    }
    if (n <= 0)
        return -1;
    buf[n] = 0;
    if (!ctp_ts_stat(buf, &ppid, &cpu, &ctp_ts_startcode))
        return -1;
    if (!ctp_ts_table) {
        void *t = mmap(NULL, CTP_TS_WORKERS * sizeof *ctp_ts_table, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (t == MAP_FAILED)
            return -1;
        ctp_ts_table = t;
    }
    return 0;
}

/* The round's samples are stamped as they are taken and appended later (in batches, after
 * their Python frames): held from the round's start (ctp_ring.h). */
static void ctp_ts_round(void)
{
    uint64_t held = ctp_ring_hold(&ctp_ts_self.ring, ctp_ticks());
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next) {
        ctp_ts_thread *s = t->sampled;
        if (s == &ctp_ts_gone)
            continue;
        if (atomic_load_explicit(&t->exited, memory_order_acquire)) {
            ctp_ts_forget(s, 1);
            t->sampled = &ctp_ts_gone;
            continue;
        }
        if ((s = ctp_ts_of(t)))
            ctp_ts_sample(t, s);
    }
    ctp_ts_flush();
    ctp_ts_workers_round();
    ctp_ring_unhold(&ctp_ts_self.ring, held);
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

const char *ctp_tsample_native(void)
{
    static char text[128];
    if (!ctp_opt.thread_sample_ns)
        return "";
    if (ctp_ts_perf < 0)
        ctp_ts_perf = ctp_perf_probe(ctp_ts_perf_why, sizeof ctp_ts_perf_why);
    snprintf(text, sizeof text, " native_samples=%s", ctp_ts_perf ? "perf" : ctp_ts_perf_why);
    return text;
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
    if (ctp_ts_perf < 0)
        ctp_ts_perf = ctp_perf_probe(ctp_ts_perf_why, sizeof ctp_ts_perf_why);
    if (ctp_ts_workers_start() != 0)
        fprintf(stderr, "cutrace: warning: cannot read /proc/self/stat or map the loader workers' "
                        "table; loader workers are not sampled\n");
    atomic_store(&ctp_ts_stop, 0);
    if (pthread_create(&ctp_ts_pthread, NULL, ctp_ts_main, NULL) != 0) {
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
    pthread_join(ctp_ts_pthread, NULL);
    ctp_ts_running = 0;
}

void ctp_tsample_fork_child(void)
{
    if (ctp_ts_running)
        ctp_ts_worker_claim();
    /* the parent's workers are the parent's to sample */
    for (int i = 0; i < CTP_TS_WORKERS; i++) {
        ctp_ts_forget(ctp_ts_worker[i], 0);
        ctp_ts_worker[i] = NULL;
    }
    /* the parent's rings are the parent's threads': this process must not read them */
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        if (t->sampled && t->sampled != &ctp_ts_gone)
            ctp_perf_close(&t->sampled->perf);
    ctp_ts_running = 0;
    ctp_ts_fds = 0;
    ctp_ring *r = &ctp_ts_self.ring;
    atomic_store(&r->head, 0);
    atomic_store(&r->tail, 0);
    atomic_store(&r->dropped, 0);
    r->tail_cache = r->pressed_at = 0;
}
