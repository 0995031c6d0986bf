/* The trace of one process (see ctp_session.h): options, the start of the trace, thread
 * registration, and the paths that end a trace (exit, fatal signals, _exit, exec) or restart
 * it (fork, a failed exec). The file is ctp_output.c's, the background writer ctp_writer.c's.
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

#include "ctp_session.h"

#include "ctp_capture.h"
#include "ctp_clock.h"
#include "ctp_device.h"
#include "ctp_emit.h"
#include "ctp_fns.h"
#include "ctp_gpu.h"
#include "ctp_host.h"
#include "ctp_loader.h"
#include "ctp_maps.h"
#include "ctp_output.h"
#include "ctp_pyexit.h"
#include "ctp_python.h"
#include "ctp_real.h"
#include "ctp_shlib.h"
#include "ctp_stack.h"
#include "ctp_state.h"
#include "ctp_tsample.h"
#include "ctp_wake.h"
#include "ctp_writer.h"

/* The session's state; the registration lock and the buffer budget are shared with the writer
 * (ctp_state.h). */
enum { CTP_OFF = 0, CTP_RUNNING = 1, CTP_FAILED = 2, CTP_ENDED = 3 };
static _Atomic int ctp_state;
static pid_t ctp_pid;                            /* the process whose trace this is */
static _Atomic uint64_t ctp_thread_count;
static uint64_t ctp_buffer_budget = 512ull << 20;
static pthread_key_t ctp_exit_key;
static char ctp_options_text[1408]; /* room for an NVTX capture range and its domain */

/* ---- options ---- */

/* " run=TOKEN": the `cutrace run` that started this process tree (CUTRACE_RUN; it counts the
 * traces of its own run by it). Only a token's own characters, at most 64. */
static const char *ctp_run_option(void)
{
    static char text[72];
    const char *s = getenv("CUTRACE_RUN");
    size_t n = s ? strspn(s, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._-") : 0;
    if (!n || s[n] || n > 64)
        return "";
    snprintf(text, sizeof text, " run=%s", s);
    return text;
}

static void ctp_read_options(void)
{
    const char *s = getenv("CUTRACE_STACKS");
    ctp_opt.stacks = !s || !*s || !strcmp(s, "default") ? 1 : !strcmp(s, "all") ? 2 : 0;
    s = getenv("CUTRACE_PYTHON_FRAMES");
    ctp_opt.python_frames = !s || strcmp(s, "0") != 0;
    s = getenv("CUTRACE_GPU_TIMING");
    ctp_opt.gpu_every = !s || !*s || !strcmp(s, "all") ? 1 : !strcmp(s, "off") ? 0
                                                         : (unsigned)strtoul(s, NULL, 10);
    s = getenv("CUTRACE_CPU_GAP_US");
    if (s && *s)
        ctp_opt.cpu_gap_ns = strtoull(s, NULL, 10) * 1000;
    s = getenv("CUTRACE_BUFFER_MB");
    if (s && *s)
        ctp_buffer_budget = strtoull(s, NULL, 10) << 20;
    s = getenv("CUTRACE_RING_KB");
    if (s && *s) {
        char *end;
        unsigned long long kb = strtoull(s, &end, 10);
        if (*end || kb < 4 || kb > 65536 || (kb & (kb - 1)))
            fprintf(stderr, "cutrace: warning: CUTRACE_RING_KB: expected a power of two from 4 "
                    "to 65536, found '%s'; rings keep %llu KiB\n", s,
                    (unsigned long long)(ctp_ring_words / 128));
        else
            ctp_ring_words = kb * 128;
    }
    s = getenv("CUTRACE_HOST_SAMPLE_MS");
    if (s && *s) {
        char *end;
        unsigned long long ms = strtoull(s, &end, 10);
        if (*end || ms > 3600000)
            fprintf(stderr, "cutrace: warning: CUTRACE_HOST_SAMPLE_MS: expected milliseconds "
                    "from 0 (off) to 3600000, found '%s'; sampling every %llu ms\n", s,
                    (unsigned long long)(ctp_opt.host_ns / 1000000));
        else
            ctp_opt.host_ns = ms * 1000000;
    }
    s = getenv("CUTRACE_THREAD_SAMPLE_US");
    if (s && *s) {
        char *end;
        unsigned long long us = strtoull(s, &end, 10);
        if (*end || (us && us < 100) || us > 1000000)
            fprintf(stderr, "cutrace: warning: CUTRACE_THREAD_SAMPLE_US: expected microseconds "
                    "from 100 to 1000000, or 0 (off), found '%s'; sampling every %llu us\n", s,
                    (unsigned long long)(ctp_opt.thread_sample_ns / 1000));
        else
            ctp_opt.thread_sample_ns = us * 1000;
    }
    s = getenv("CUTRACE_ON_FULL");
    ctp_opt.on_full_block = s && !strcmp(s, "block");
    if (s && *s && !ctp_opt.on_full_block && strcmp(s, "drop"))
        fprintf(stderr, "cutrace: warning: CUTRACE_ON_FULL: expected drop or block, found '%s'; "
                "drop\n", s);
    s = getenv("CUTRACE_HOST_CHILDREN");
    ctp_opt.host_scan = s && !strcmp(s, "scan");
    if (s && *s && !ctp_opt.host_scan && strcmp(s, "auto"))
        fprintf(stderr, "cutrace: warning: CUTRACE_HOST_CHILDREN: expected auto or scan, found "
                "'%s'; auto\n", s);
    snprintf(ctp_options_text, sizeof ctp_options_text,
             "stacks=%s gpu_timing=%u cpu_gap_us=%llu buffer_mb=%llu ring_kb=%llu host_sample_ms=%llu "
             "thread_sample_us=%llu%s%s%s%s%s",
             ctp_opt.stacks == 2 ? "all" : ctp_opt.stacks ? "default" : "none", ctp_opt.gpu_every,
             (unsigned long long)(ctp_opt.cpu_gap_ns / 1000),
             (unsigned long long)(ctp_buffer_budget >> 20),
             (unsigned long long)(ctp_ring_words / 128),
             (unsigned long long)(ctp_opt.host_ns / 1000000),
             (unsigned long long)(ctp_opt.thread_sample_ns / 1000),
             ctp_tsample_native(), ctp_opt.host_scan ? " host_children=scan" : "",
             ctp_opt.on_full_block ? " on_full=block" : "", ctp_run_option(),
             ctp_capture_options());
}

static void ctp_session_retire(uint64_t ctx)
{
    if (atomic_load(&ctp_state) == CTP_RUNNING && ctp_opt.gpu_every)
        ctp_flush(0, 0, 0, ctx);
}

void ctp_session_ctx_gone(uint64_t ctx)
{
    if (!ctp_opt.gpu_every || !ctx)
        return;
    int saved = errno;
    ctp_session_retire(ctx);
    errno = saved;
}

void ctp_session_primary_gone(CUdevice dev)
{
    if (!ctp_opt.gpu_every)
        return;
    int saved = errno, active = 0;
    unsigned flags;
    CUcontext ctx = NULL;
    /* The primary context's handle, without changing its reference count in the end. */
    if (CTP_REAL(cuDevicePrimaryCtxGetState)(dev, &flags, &active) == CUDA_SUCCESS && active &&
        CTP_REAL(cuDevicePrimaryCtxRetain)(&ctx, dev) == CUDA_SUCCESS) {
        CTP_REAL(cuDevicePrimaryCtxRelease_v2)(dev);
        ctp_session_retire((uint64_t)(uintptr_t)ctx);
    }
    errno = saved;
}

/* ---- the end of the process ---- */

/* The caller is to write this process's END: the trace runs, and this is its process (a vfork
 * child has a pid of its own: getpid is a system call, never cached; it shares the parent's
 * memory, so it must not touch the parent's trace). At most one caller gets 1. The state is
 * read first: processes that never traced (every _exit of a shell under `cutrace run`) make no
 * system call here. */
static int ctp_end_claim(void)
{
    int expected = CTP_RUNNING;
    return atomic_load(&ctp_state) == CTP_RUNNING && getpid() == ctp_pid &&
           atomic_compare_exchange_strong(&ctp_state, &expected, CTP_ENDED);
}

/* The status exit() was given, modulo 256 as the parent sees it; -1 before exit. glibc hands
 * it to on_exit handlers only: the destructor that writes END (after every later exit handler
 * and library destructor, which may still call CUDA) learns it from here. */
static _Atomic int ctp_exit_status = -1;

static void ctp_on_exit(int status, void *arg)
{
    (void)arg;
    atomic_store(&ctp_exit_status, status & 0xff);
}

/* on_exit handlers run in the reverse order of registration, and the C library registers the
 * one that runs library destructors (the loader's) before main: a handler registered when
 * libcutrace loads (before that) would run after the destructor. Registered when the trace
 * starts (in main or later, for nearly every program), it runs before. Once per process: a
 * forked child inherits it. The handler's code must stay mapped until exit: libcutrace is
 * linked -z nodelete. */
static void ctp_watch_exit(void)
{
    static int registered;
    if (!registered)
        registered = on_exit(ctp_on_exit, NULL) == 0;
}

void ctp_exit_now(int status)
{
    if (!ctp_end_claim())
        return;
    int saved = errno;
    ctp_writer_end_anywhere(CT_END_EXIT_NOW, status & 0xff);
    errno = saved;
}

/* ---- signals ---- */

/* The signals whose default action ends the process, but for: SIGKILL (cannot be caught),
 * SIGXFSZ (a trace write past RLIMIT_FSIZE raises it in the writing thread, where the write
 * must just fail), SIGTRAP (debuggers) and the realtime signals (the C library's). */
static const int ctp_fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV,
                                       SIGBUS, SIGFPE, SIGILL, SIGUSR1, SIGUSR2, SIGXCPU,
                                       SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGSYS, SIGPOLL,
                                       SIGPWR, SIGSTKFLT};

/* The process dies of sig now: through the tracer's handler, or through none (Python's exit
 * after an uncaught KeyboardInterrupt, ctp_pyexit.h). */
static void ctp_exit_by_signal(int sig)
{
    if (ctp_end_claim())
        ctp_writer_end_anywhere(sig == SIGABRT ? CT_END_ABORT : CT_END_SIGNAL, sig);
}

static void ctp_on_signal(int sig)
{
    int saved = errno;
    ctp_exit_by_signal(sig);
    signal(sig, SIG_DFL);
    errno = saved;
    raise(sig); /* blocked until we return: then the default action, as without cutrace */
}

static void ctp_install_signals(void)
{
    for (size_t i = 0; i < sizeof ctp_fatal_signals / sizeof ctp_fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(ctp_fatal_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = ctp_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(ctp_fatal_signals[i], &sa, NULL);
    }
}

/* ---- fork, exec ---- */

/* What a new trace file starts from: no definition written yet, no writer; state OFF (the next
 * start opens the file). */
static void ctp_new_file_state(void)
{
    ctp_writer_new_file();
    ctp_intern_rewind();
    ctp_stack_rewind();
    ctp_device_reset();
    ctp_shlib_reset();
    ctp_python_reset();
    ctp_capture_new_file();
    ctp_host_new_file();
    atomic_store(&ctp_state, CTP_OFF);
}

/* The tables the child keeps (strings, stacks, ranges) are locked around fork so it gets them
 * consistent; their locks are held only briefly. ctp_reg_mu is not: it is held while a trace
 * starts (file creation, clock calibration, 2 ms and more), and a prepare handler that waits
 * that long lets other threads register fork handlers of their own that glibc then does not run
 * in the child (a driver initializing meanwhile would not learn of the fork). What it protects
 * (threads, the session) the child discards, so the child re-initializes it. */
/* Lock order: the stack table's lock before the maps' (interning a new stack interns its
 * frames' strings under it). The tracer's walks of the loaded objects are waited for too
 * (ctp_loader.h), or a child could inherit the loader's lock held. */
static void ctp_fork_prepare(void)
{
    ctp_tsample_fork_prepare();
    ctp_stack_lock();
    ctp_maps_lock_all();
    ctp_loader_fork_prepare(); /* last: a walk may be under the stack table's lock */
}

static void ctp_fork_parent(void)
{
    ctp_loader_fork_parent();
    ctp_maps_unlock_all();
    ctp_stack_unlock();
}

/* The child has only the forking thread: it forgets the parent's buffers and writer (their
 * records belong to the parent's file) and starts its own trace on its first CUDA call. */
static void ctp_fork_child(void)
{
    ctp_loader_fork_child();
    ctp_maps_unlock_all();
    ctp_stack_unlock();
    pthread_mutex_init(&ctp_reg_mu, NULL);
    ctp_tls = NULL;
    atomic_store(&ctp_threads, NULL);
    atomic_store(&ctp_thread_count, 0);
    atomic_store(&ctp_untraced_calls, 0);
    ctp_buffer_used = 0;
    ctp_w = NULL; /* the parent's file stays the parent's: the descriptor is close-on-exec */
    ctp_writer_fork_child();
    ctp_host_fork_child();
    ctp_shlib_fork_child();
    ctp_python_fork_child();
    ctp_new_file_state();
}

/* ---- threads ---- */

static void ctp_thread_exit(void *arg)
{
    ctp_thread *t = arg;
    ctp_tls = &ctp_untraced;
    prctl(PR_GET_NAME, t->name); /* the name it had at the end (set after its first call?) */
    atomic_store_explicit(&t->exited, 1, memory_order_release);
}

/* The fork handlers are in place from the moment libcutrace is loaded: a fork while another
 * thread starts the trace (holding ctp_reg_mu) must not leave the child with that lock held. */
__attribute__((constructor)) static void ctp_session_load(void)
{
    pthread_key_create(&ctp_exit_key, ctp_thread_exit);
    pthread_atfork(ctp_fork_prepare, ctp_fork_parent, ctp_fork_child);
}

static int ctp_session_start_locked(void)
{
    static int maps_ready;
    if (atomic_load(&ctp_state) != CTP_OFF)
        return atomic_load(&ctp_state) == CTP_RUNNING ? 0 : -1;
    ctp_read_options();
    ctp_time_init();
    ctp_opt.cpu_gap_ticks = ctp_ns_to_ticks(ctp_opt.cpu_gap_ns);
    if (!maps_ready) {
        ctp_maps_init();
        ctp_intern_reserve(CTP_NFNS); /* string id fn + 1 names API function fn */
        maps_ready = 1;
    }
    if (ctp_open_output(ctp_options_text) != 0 || ctp_writer_start() != 0) {
        atomic_store(&ctp_state, CTP_FAILED);
        return -1;
    }
    ctp_install_signals();
    ctp_pyexit_watch(ctp_exit_by_signal);
    ctp_watch_exit();
    ctp_pid = getpid();
    atomic_store(&ctp_state, CTP_RUNNING);
    return 0;
}

void ctp_session_untraced_call(void)
{
    if (atomic_load_explicit(&ctp_state, memory_order_relaxed) == CTP_FAILED)
        atomic_fetch_add_explicit(&ctp_untraced_calls, 1, memory_order_relaxed);
}

int ctp_session_running(void)
{
    return atomic_load(&ctp_state) == CTP_RUNNING;
}

ctp_thread *ctp_thread_slow(void)
{
    int saved = errno;
    ctp_real_load_all();
    ctp_thread *t = NULL;
    pthread_mutex_lock(&ctp_reg_mu);
    if (ctp_session_start_locked() == 0 &&
        ctp_buffer_used + ctp_ring_words * 8 + CTP_ENC_BYTES <= ctp_buffer_budget) {
        t = calloc(1, sizeof *t);
        uint64_t *words = ctp_ring_alloc();
        void *encbuf = malloc(CTP_ENC_BYTES);
        ctp_gpu_stash *gpu = ctp_opt.gpu_every ? calloc(1, sizeof *gpu) : NULL;
        if (t && words && encbuf && (gpu || !ctp_opt.gpu_every)) {
            t->gpu = gpu;
            t->ring.words = words;
            t->errp = &errno;
            t->ring.mask = ctp_ring_words - 1;
            t->encbuf = encbuf;
            ct_enc_init(&t->enc, encbuf, CTP_ENC_BYTES);
            t->tid = ctp_gettid();
            t->enc_min_ts = UINT64_MAX;
            t->floor = UINT64_MAX;
            prctl(PR_GET_NAME, t->name);
            t->corr_next = (atomic_fetch_add(&ctp_thread_count, 1) + 1) << 40 | 1;
            t->last_return = ctp_ticks();
            t->cache_ctx = ~0ull;
            t->next = atomic_load(&ctp_threads);
            atomic_store(&ctp_threads, t);
            ctp_buffer_used += ctp_ring_words * 8 + CTP_ENC_BYTES;
            pthread_setspecific(ctp_exit_key, t);
        } else {
            free(t);
            ctp_ring_free(words);
            free(encbuf);
            free(gpu);
            t = NULL;
        }
    }
    pthread_mutex_unlock(&ctp_reg_mu);
    ctp_tls = t ? t : &ctp_untraced;
    if (t) {
        ctp_capture_begin(t);
        ctp_shlib_scan(t);
        atomic_store_explicit(&t->py_tstate, ctp_python_tstate(), memory_order_relaxed);
    }
    errno = saved;
    return t;
}

void ctp_record_cpu(ctp_thread *th, uint64_t since)
{
    struct rusage ru;
    uint64_t prev = ctp_ring_hold(&th->ring, since);
    uint64_t now = ctp_ticks();
    int saved = errno; /* before the real call: the program's errno must reach it unchanged */
    int rc = getrusage(RUSAGE_THREAD, &ru);
    errno = saved;
    if (rc == 0) {
        ct_rec_cpu r = {th->tid,
                        (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u,
                        (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u};
        ctp_push(th, CT_REC_CPU, 0, now, &r, sizeof r);
    }
    ctp_ring_unhold(&th->ring, prev);
}

int ctp_exec_begin(void)
{
    if (!ctp_end_claim())
        return 0;
    int saved = errno;
    ctp_writer_join();
    ctp_flush_final_here(0, CT_END_DETACH, 0);
    errno = saved;
    return 1;
}

void ctp_exec_failed(void)
{
    int saved = errno;
    pthread_mutex_lock(&ctp_reg_mu);
    ctp_close_output();
    ctp_writer_continue();
    ctp_new_file_state();
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        t->announced = 0; /* their THREAD records go to the new file too */
    ctp_session_start_locked();
    pthread_mutex_unlock(&ctp_reg_mu);
    if (ctp_tls && ctp_tls != &ctp_untraced) /* registered threads do not register again */
        ctp_capture_begin(ctp_tls);
    errno = saved;
}

/* exit() or a return from main: stop the writer, flush everything, end the trace with the exit
 * status ctp_on_exit saw (-1 if it has not run: the trace started before main). */
__attribute__((destructor)) static void ctp_at_exit(void)
{
    /* No trace file could be had: the count of what went untraced, which no file holds. */
    uint64_t untraced = atomic_load(&ctp_untraced_calls);
    int saved = errno;
    if (atomic_load(&ctp_state) == CTP_FAILED && untraced)
        fprintf(stderr, "cutrace: the program (pid %d) made %llu CUDA call%s, none traced: %s\n",
                (int)getpid(), (unsigned long long)untraced, untraced == 1 ? "" : "s",
                ctp_output_failure[0] ? ctp_output_failure : "the trace could not be started");
    errno = saved;
    if (!ctp_end_claim())
        return;
    ctp_writer_join();
    ctp_flush_final_here(0, CT_END_EXIT, atomic_load(&ctp_exit_status));
    ctp_close_output();
    errno = saved;
}
