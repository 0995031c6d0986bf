/* The trace of one process (see ct_session.h): options, the start of the trace, thread
 * registration, and the paths that end a trace (exit, fatal signals, _exit, exec) or restart
 * it (fork, a failed exec). The file is ct_output.c's, the background writer ct_writer.c's.
 *
 * A trace starts on the process's first traced CUDA call (so a process that never uses CUDA
 * writes nothing): options are read, the file is created, the writer thread starts and the
 * flushing signal handlers are installed where the disposition is SIG_DFL. If the file cannot
 * be created, one warning is printed and the process runs untraced. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ct_session.h"

#include "ct_clock.h"
#include "ct_device.h"
#include "ct_emit.h"
#include "ct_fns.h"
#include "ct_gpu.h"
#include "ct_maps.h"
#include "ct_output.h"
#include "ct_real.h"
#include "ct_shlib.h"
#include "ct_stack.h"
#include "ct_state.h"
#include "ct_wake.h"
#include "ct_writer.h"

/* The session's state; the registration lock and the buffer budget are shared with the writer
 * (ct_state.h). */
enum { CT_OFF = 0, CT_RUNNING = 1, CT_FAILED = 2, CT_ENDED = 3 };
static _Atomic int ct_state;
static pid_t ct_pid;                            /* the process whose trace this is */
static _Atomic uint64_t ct_thread_count;
static uint64_t ct_buffer_budget = 512ull << 20;
static pthread_key_t ct_exit_key;
static char ct_options_text[256];

/* ---- options ---- */

static void ct_read_options(void)
{
    const char *s = getenv("CUTRACE_STACKS");
    ct_opt.stacks = !s || !*s || !strcmp(s, "default") ? 1 : !strcmp(s, "all") ? 2 : 0;
    s = getenv("CUTRACE_GPU_TIMING");
    ct_opt.gpu_every = !s || !*s || !strcmp(s, "all") ? 1 : !strcmp(s, "off") ? 0
                                                         : (unsigned)strtoul(s, NULL, 10);
    s = getenv("CUTRACE_CPU_GAP_US");
    if (s && *s)
        ct_opt.cpu_gap_ns = strtoull(s, NULL, 10) * 1000;
    s = getenv("CUTRACE_BUFFER_MB");
    if (s && *s)
        ct_buffer_budget = strtoull(s, NULL, 10) << 20;
    s = getenv("CUTRACE_RING_KB");
    if (s && *s) {
        char *end;
        unsigned long long kb = strtoull(s, &end, 10);
        if (*end || kb < 4 || kb > 65536 || (kb & (kb - 1)))
            fprintf(stderr, "cutrace: warning: CUTRACE_RING_KB: expected a power of two from 4 "
                    "to 65536, found '%s'; rings keep %llu KiB\n", s,
                    (unsigned long long)(ct_ring_words / 128));
        else
            ct_ring_words = kb * 128;
    }
    snprintf(ct_options_text, sizeof ct_options_text,
             "stacks=%s gpu_timing=%u cpu_gap_us=%llu buffer_mb=%llu ring_kb=%llu",
             ct_opt.stacks == 2 ? "all" : ct_opt.stacks ? "default" : "none", ct_opt.gpu_every,
             (unsigned long long)(ct_opt.cpu_gap_ns / 1000),
             (unsigned long long)(ct_buffer_budget >> 20),
             (unsigned long long)(ct_ring_words / 128));
}

static void ct_session_retire(uint64_t ctx)
{
    if (atomic_load(&ct_state) == CT_RUNNING && ct_opt.gpu_every)
        ct_flush(0, 0, 0, ctx);
}

void ct_session_ctx_gone(uint64_t ctx)
{
    if (!ct_opt.gpu_every || !ctx)
        return;
    int saved = errno;
    ct_session_retire(ctx);
    errno = saved;
}

void ct_session_primary_gone(CUdevice dev)
{
    if (!ct_opt.gpu_every)
        return;
    int saved = errno, active = 0;
    unsigned flags;
    CUcontext ctx = NULL;
    /* The primary context's handle, without changing its reference count in the end. */
    if (CT_REAL(cuDevicePrimaryCtxGetState)(dev, &flags, &active) == CUDA_SUCCESS && active &&
        CT_REAL(cuDevicePrimaryCtxRetain)(&ctx, dev) == CUDA_SUCCESS) {
        CT_REAL(cuDevicePrimaryCtxRelease_v2)(dev);
        ct_session_retire((uint64_t)(uintptr_t)ctx);
    }
    errno = saved;
}

/* ---- the end of the process ---- */

/* The caller is to write this process's END: the trace runs, and this is its process (a vfork
 * child has a pid of its own: getpid is a system call, never cached; it shares the parent's
 * memory, so it must not touch the parent's trace). At most one caller gets 1. The state is
 * read first: processes that never traced (every _exit of a shell under `cutrace run`) make no
 * system call here. */
static int ct_end_claim(void)
{
    int expected = CT_RUNNING;
    return atomic_load(&ct_state) == CT_RUNNING && getpid() == ct_pid &&
           atomic_compare_exchange_strong(&ct_state, &expected, CT_ENDED);
}

/* The status exit() was given, modulo 256 as the parent sees it; -1 before exit. glibc hands
 * it to on_exit handlers only: the destructor that writes END (after every later exit handler
 * and library destructor, which may still call CUDA) learns it from here. */
static _Atomic int ct_exit_status = -1;

static void ct_on_exit(int status, void *arg)
{
    (void)arg;
    atomic_store(&ct_exit_status, status & 0xff);
}

/* on_exit handlers run in the reverse order of registration, and the C library registers the
 * one that runs library destructors (the loader's) before main: a handler registered when
 * libcutrace loads (before that) would run after the destructor. Registered when the trace
 * starts (in main or later, for nearly every program), it runs before. Once per process: a
 * forked child inherits it. The handler's code must stay mapped until exit: libcutrace is
 * linked -z nodelete. */
static void ct_watch_exit(void)
{
    static int registered;
    if (!registered)
        registered = on_exit(ct_on_exit, NULL) == 0;
}

void ct_exit_now(int status)
{
    if (!ct_end_claim())
        return;
    int saved = errno;
    ct_writer_end_anywhere(CT_END_EXIT_NOW, status & 0xff);
    errno = saved;
}

/* ---- signals ---- */

/* The signals whose default action ends the process, but for: SIGKILL (cannot be caught),
 * SIGXFSZ (a trace write past RLIMIT_FSIZE raises it in the writing thread, where the write
 * must just fail), SIGTRAP (debuggers) and the realtime signals (the C library's). */
static const int ct_fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV,
                                       SIGBUS, SIGFPE, SIGILL, SIGUSR1, SIGUSR2, SIGXCPU,
                                       SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGSYS, SIGPOLL,
                                       SIGPWR, SIGSTKFLT};

static void ct_on_signal(int sig)
{
    int saved = errno;
    if (ct_end_claim())
        ct_writer_end_anywhere(sig == SIGABRT ? CT_END_ABORT : CT_END_SIGNAL, sig);
    signal(sig, SIG_DFL);
    errno = saved;
    raise(sig); /* blocked until we return: then the default action, as without cutrace */
}

static void ct_install_signals(void)
{
    for (size_t i = 0; i < sizeof ct_fatal_signals / sizeof ct_fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(ct_fatal_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = ct_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(ct_fatal_signals[i], &sa, NULL);
    }
}

/* ---- fork, exec ---- */

/* What a new trace file starts from: no definition written yet, no writer; state OFF (the next
 * start opens the file). */
static void ct_new_file_state(void)
{
    ct_writer_new_file();
    ct_intern_rewind();
    ct_stack_rewind();
    ct_device_reset();
    ct_shlib_reset();
    atomic_store(&ct_state, CT_OFF);
}

/* The tables the child keeps (strings, stacks, ranges) are locked around fork so it gets them
 * consistent; their locks are held only briefly. ct_reg_mu is not: it is held while a trace
 * starts (file creation, clock calibration, 2 ms and more), and a prepare handler that waits
 * that long lets other threads register fork handlers of their own that glibc then does not run
 * in the child (a driver initializing meanwhile would not learn of the fork). What it protects
 * (threads, the session) the child discards, so the child re-initializes it. */
/* Lock order: the stack table's lock before the maps' (interning a new stack interns its
 * frames' strings under it). */
static void ct_fork_prepare(void)
{
    ct_stack_lock();
    ct_maps_lock_all();
}

static void ct_fork_parent(void)
{
    ct_maps_unlock_all();
    ct_stack_unlock();
}

/* The child has only the forking thread: it forgets the parent's buffers and writer (their
 * records belong to the parent's file) and starts its own trace on its first CUDA call. */
static void ct_fork_child(void)
{
    ct_maps_unlock_all();
    ct_stack_unlock();
    pthread_mutex_init(&ct_reg_mu, NULL);
    ct_tls = NULL;
    atomic_store(&ct_threads, NULL);
    atomic_store(&ct_thread_count, 0);
    ct_buffer_used = 0;
    ct_w = NULL; /* the parent's file stays the parent's: the descriptor is close-on-exec */
    ct_writer_fork_child();
    ct_shlib_fork_child();
    ct_new_file_state();
}

/* ---- threads ---- */

static void ct_thread_exit(void *arg)
{
    ct_thread *t = arg;
    ct_tls = &ct_untraced;
    prctl(PR_GET_NAME, t->name); /* the name it had at the end (set after its first call?) */
    atomic_store_explicit(&t->exited, 1, memory_order_release);
}

/* The fork handlers are in place from the moment libcutrace is loaded: a fork while another
 * thread starts the trace (holding ct_reg_mu) must not leave the child with that lock held. */
__attribute__((constructor)) static void ct_session_load(void)
{
    pthread_key_create(&ct_exit_key, ct_thread_exit);
    pthread_atfork(ct_fork_prepare, ct_fork_parent, ct_fork_child);
}

static int ct_session_start_locked(void)
{
    static int maps_ready;
    if (atomic_load(&ct_state) != CT_OFF)
        return atomic_load(&ct_state) == CT_RUNNING ? 0 : -1;
    ct_read_options();
    ct_time_init();
    ct_opt.cpu_gap_ticks = ct_ns_to_ticks(ct_opt.cpu_gap_ns);
    if (!maps_ready) {
        ct_maps_init();
        ct_intern_reserve(CT_NFNS); /* string id fn + 1 names API function fn */
        maps_ready = 1;
    }
    if (ct_open_output(ct_options_text) != 0 || ct_writer_start() != 0) {
        atomic_store(&ct_state, CT_FAILED);
        return -1;
    }
    ct_install_signals();
    ct_watch_exit();
    ct_pid = getpid();
    atomic_store(&ct_state, CT_RUNNING);
    return 0;
}

ct_thread *ct_thread_slow(void)
{
    int saved = errno;
    ct_real_load_all();
    ct_thread *t = NULL;
    pthread_mutex_lock(&ct_reg_mu);
    if (ct_session_start_locked() == 0 &&
        ct_buffer_used + ct_ring_words * 8 + CT_ENC_BYTES <= ct_buffer_budget) {
        t = calloc(1, sizeof *t);
        uint64_t *words = ct_ring_alloc();
        void *encbuf = malloc(CT_ENC_BYTES);
        ct_gpu_stash *gpu = ct_opt.gpu_every ? calloc(1, sizeof *gpu) : NULL;
        if (t && words && encbuf && (gpu || !ct_opt.gpu_every)) {
            t->gpu = gpu;
            t->ring.words = words;
            t->errp = &errno;
            t->ring.mask = ct_ring_words - 1;
            t->encbuf = encbuf;
            ct_enc_init(&t->enc, encbuf, CT_ENC_BYTES);
            t->tid = ct_gettid();
            t->enc_min_ts = UINT64_MAX;
            prctl(PR_GET_NAME, t->name);
            t->corr_next = (atomic_fetch_add(&ct_thread_count, 1) + 1) << 40 | 1;
            t->last_return = ct_ticks();
            t->cache_ctx = ~0ull;
            t->last_chunk = ct_now();
            t->next = atomic_load(&ct_threads);
            atomic_store(&ct_threads, t);
            ct_buffer_used += ct_ring_words * 8 + CT_ENC_BYTES;
            pthread_setspecific(ct_exit_key, t);
        } else {
            free(t);
            ct_ring_free(words);
            free(encbuf);
            free(gpu);
            t = NULL;
        }
    }
    pthread_mutex_unlock(&ct_reg_mu);
    ct_tls = t ? t : &ct_untraced;
    if (t)
        ct_shlib_scan(t);
    errno = saved;
    return t;
}

void ct_record_cpu(ct_thread *th, uint64_t now)
{
    struct rusage ru;
    int saved = errno; /* before the real call: the program's errno must reach it unchanged */
    int rc = getrusage(RUSAGE_THREAD, &ru);
    errno = saved;
    if (rc != 0)
        return;
    ct_rec_cpu r = {th->tid, (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u,
                    (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u};
    ct_push(th, CT_REC_CPU, 0, now, &r, sizeof r);
}

int ct_exec_begin(void)
{
    if (!ct_end_claim())
        return 0;
    int saved = errno;
    ct_writer_join();
    ct_flush_final_here(0, CT_END_DETACH, 0);
    errno = saved;
    return 1;
}

void ct_exec_failed(void)
{
    int saved = errno;
    pthread_mutex_lock(&ct_reg_mu);
    ct_close_output();
    ct_writer_continue();
    ct_new_file_state();
    uint64_t now = ct_now();
    for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
        t->announced = 0; /* their THREAD records go to the new file too */
        t->last_chunk = now;
    }
    ct_session_start_locked();
    pthread_mutex_unlock(&ct_reg_mu);
    errno = saved;
}

/* exit() or a return from main: stop the writer, flush everything, end the trace with the exit
 * status ct_on_exit saw (-1 if it has not run: the trace started before main). */
__attribute__((destructor)) static void ct_at_exit(void)
{
    if (!ct_end_claim())
        return;
    int saved = errno;
    ct_writer_join();
    ct_flush_final_here(0, CT_END_EXIT, atomic_load(&ct_exit_status));
    ct_close_output();
    errno = saved;
}
