/* The tracer's hot path: what every generated wrapper calls (contract for preload/gen and the
 * category recorders).
 *
 * A wrapper does:
 *     ct_call c; ct_enter(&c, FN);            thread state, correlation id, entry time
 *     [category pre-hook, e.g. GPU start event]
 *     r = real(args);
 *     ct_leave(&c, r);                        return time, result, the errno to hand back
 *     [category post-hook: LAUNCH / COPY / MEM / SYNC / STREAM detail, via ct_emit]
 *     ct_finish(&c);                          API record unless ct_emit wrote it, errno back
 * When tracing is off for the thread (process not traced, thread over the memory budget, thread
 * exiting) c.th is NULL and every hook returns at once, so the wrapper only forwards.
 *
 * A call goes to the thread's ring (ct_ring.h) as one raw record: the API record, followed by
 * its detail (the trace format's own decoded struct, ct_rec_launch ..., copied as is) when the
 * call has one; the writer splits it and hands each part to its ct_enc_* encoder. One record
 * per call keeps a launch to one reservation and one run of words. The first call of a thread
 * registers it (may allocate); later calls do not allocate, lock or make system calls, except
 * one CPU-time reading (getrusage) when the thread comes back after a gap, and one futex wake
 * of the writer when the thread's ring passes half full (once per drain). Functions here are
 * forced inline: the generated wrappers are one large file where the compiler would otherwise
 * call them, and each call would cost about as much as the work inside. */
#ifndef CT_TRACE_H
#define CT_TRACE_H

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cttrace.h"
#include "ct_real.h"
#include "ct_ring.h"

/* Raw kinds beyond the wire record types (which are used as raw kinds for detail records). */
enum {
    CT_RAW_API = 100,     /* API record: aux = result; words: ts, start, corr[, parent[, stack
                           * | detail type << 32[, detail]]] (parent is present, maybe 0,
                           * whenever stack is; stack, maybe 0, whenever a detail is) */
    CT_RAW_GPU_PEND = 101 /* GPU timing to harvest: payload ct_gpu_pend */
};

typedef struct ct_thread {
    ct_ring ring;
    int *errp;                   /* the thread's errno (its address never changes) */
    uint64_t corr_next;          /* next correlation id (thread index in the high bits) */
    uint64_t parent;             /* correlation id of the runtime call in progress, or 0 */
    uint64_t last_return;        /* ct_ticks of the last return to the program */
    uint32_t tid;
    uint32_t cache_dev;          /* device of cache_ctx */
    uint64_t cache_ctx;          /* last current context seen by this thread */
    struct ct_gpu_stash *gpu;    /* GPU-timing events (ct_gpu.h), NULL when timing is off */
    /* Writer-private from here. */
    ct_enc enc;
    void *encbuf;
    uint64_t enc_min_ts;         /* earliest ts in enc (UINT64_MAX when empty) */
    uint64_t lost_reported;
    char name[16];               /* thread name at registration, then at exit */
    uint64_t last_chunk;         /* when this thread's last chunk was written */
    uint64_t snap;               /* ring head at the start of the current flush */
    int snap_exited;             /* exited, read just before snap */
    int announced;               /* THREAD record written */
    int dead;                    /* exited, drained, buffers freed */
    _Atomic int exited;          /* set by the thread's exit; the writer then retires it */
    struct ct_thread *next;
} ct_thread;

typedef struct {
    ct_thread *th;
    unsigned fn;
    int err;                      /* errno to hand back to the program */
    uint32_t result;              /* what the real call returned */
    int recorded;                 /* words of the record ct_emit_begin reserved, 0 if none */
    uint64_t t0, t1, corr, parent; /* t0, t1: ct_ticks */
    void *gpu_ev0;                /* start event of GPU timing, NULL if not timed */
    uint64_t gpu_stream, gpu_ctx; /* where gpu_ev0 was recorded */
    uint64_t gpu_submit;          /* host time after gpu_ev0 was recorded */
    uint32_t captured;            /* CT_LAUNCH_CAPTURED: the stream was capturing (set by
                                   * ct_gpu_begin, read only by the hooks of calls that have it) */
    uint32_t gpu_why;             /* enum ct_gpu_lost: why it could not be timed, 0 if it was
                                   * or was not to be (set by ct_gpu_begin, like captured) */
    uint32_t stack;               /* call-site stack id for the API record, 0 if none */
} ct_call;

extern __thread ct_thread *ct_tls __attribute__((tls_model("initial-exec")));
/* ct_tls of a thread that is not traced (process untraced, over the memory budget, exiting). */
extern ct_thread ct_untraced;
/* Registers the calling thread (starting the trace on first use); NULL if it is not traced. */
ct_thread *ct_thread_slow(void);

/* Options (ct_session.c). */
typedef struct {
    int stacks;                   /* 0 none, 1 default (alloc/copy/sync), 2 all */
    unsigned gpu_every;           /* 0 off, 1 all, N: 1 in N */
    uint64_t cpu_gap_ns;          /* read thread CPU time after this long outside CUDA */
    uint64_t cpu_gap_ticks;       /* the same in ct_ticks units */
} ct_options;
extern ct_options ct_opt;

static inline uint64_t ct_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Hot-path time stamps: the TSC where the kernel itself keeps time with it (invariant TSC,
 * clocksource "tsc"), about half the cost of clock_gettime; else CLOCK_MONOTONIC ns. Ring
 * records carry ticks; the writer converts them to CLOCK_MONOTONIC ns (ct_ticks_to_ns in
 * ct_session.c) against calibration pairs it takes at every flush. */
extern int ct_use_tsc;
static inline uint64_t ct_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(ct_use_tsc, 1))
        return __builtin_ia32_rdtsc();
#endif
    return ct_now();
}

void ct_record_cpu(ct_thread *th, uint64_t now);
uint32_t ct_stack_capture(void); /* ct_stack.h */

/* The ring passed half full: wakes the writer now instead of at its next period (ct_session.c).
 * One futex wake, at most once per drain of the ring (a 1 MiB ring holds ~7,700 launches, so
 * its cost is spread over thousands of records); errno is kept. */
void ct_writer_pressure(void);

#define CT_HOT static inline __attribute__((always_inline))

CT_HOT void ct_publish(ct_thread *th, unsigned n)
{
    if (__builtin_expect(ct_ring_commit(&th->ring, n), 0))
        ct_writer_pressure();
}

CT_HOT void ct_enter(ct_call *c, unsigned fn)
{
    ct_thread *th = ct_tls;
    if (__builtin_expect(th == 0 || th == &ct_untraced, 0))
        th = th ? 0 : ct_thread_slow();
    c->th = th;
    c->fn = fn;
    c->gpu_ev0 = 0;
    c->stack = 0;
    c->recorded = 0;
    if (!th)
        return;
    c->corr = th->corr_next++;
    c->parent = th->parent;
    if (ct_fns[fn].flags & CT_FN_RUNTIME)
        th->parent = c->corr;
    c->t0 = ct_ticks();
    if (c->t0 - th->last_return >= ct_opt.cpu_gap_ticks && !c->parent)
        ct_record_cpu(th, c->t0);
}

/* Right after the real call, before anything of cutrace's can touch errno. In `all` stack
 * mode the call site is captured here for every call; in the default mode category hooks
 * capture it for the categories that want it (ct_record.c). */
CT_HOT void ct_leave(ct_call *c, uint32_t result)
{
    ct_thread *th = c->th;
    if (!th)
        return;
    c->t1 = ct_ticks();
    c->err = *th->errp;
    c->result = result;
    if (__builtin_expect(ct_opt.stacks == 2, 0))
        c->stack = ct_stack_capture();
}

/* The API words of c's record: n words in all, detail of wire type dtype (0: none). */
CT_HOT void ct_api_words(uint64_t *w, const ct_call *c, unsigned n, unsigned dtype)
{
    w[0] = ct_raw_w0(CT_RAW_API, n, c->fn, c->result);
    w[1] = c->t1;
    w[2] = c->t0;
    w[3] = c->corr;
    if (n > 4)
        w[4] = c->parent;
    if (n > 5)
        w[5] = c->stack | (uint64_t)dtype << 32;
}

CT_HOT void ct_finish(ct_call *c)
{
    ct_thread *th = c->th;
    if (!th)
        return;
    if (!c->recorded) {
        unsigned n = c->stack ? 6 : c->parent ? 5 : 4;
        uint64_t *w = ct_ring_reserve(&th->ring, n);
        if (w) {
            ct_api_words(w, c, n, 0);
            ct_publish(th, n);
        }
    }
    if (ct_fns[c->fn].flags & CT_FN_RUNTIME)
        th->parent = c->parent;
    th->last_return = c->t1;
    *th->errp = c->err;
}

/* Appends a record of raw kind `type` (a wire record type for detail records) whose payload is
 * `len` bytes (the matching ct_rec_* struct), ordered at ts. Dropped and counted if the ring is
 * full. */
CT_HOT void ct_push(ct_thread *th, unsigned type, unsigned fn, uint64_t ts, const void *payload,
                    size_t len)
{
    unsigned n = 2 + (unsigned)((len + 7) / 8);
    uint64_t *w = ct_ring_reserve(&th->ring, n);
    if (!w)
        return;
    w[0] = ct_raw_w0(type, n, fn, 0);
    w[1] = ts;
    w[n - 1] = 0;
    memcpy(w + 2, payload, len);
    ct_publish(th, n);
}

/* Reserves the call's record with room for a detail of wire type `type` (the matching ct_rec_*
 * struct, len bytes), at the call's return time, and returns where the detail goes (8-byte
 * aligned) for the hook to fill in place; ct_emit_end publishes it. At most once per call. NULL
 * when the ring is full (the record is dropped and counted; ct_finish then tries the API record
 * alone). Filled in place, the detail is written once instead of built on the stack and copied. */
CT_HOT void *ct_emit_begin(ct_call *c, unsigned type, size_t len)
{
    assert(!c->recorded && type != 0);
    unsigned n = 6 + (unsigned)((len + 7) / 8);
    uint64_t *w = ct_ring_reserve(&c->th->ring, n);
    if (!w)
        return NULL;
    ct_api_words(w, c, n, type);
    c->recorded = (int)n;
    return w + 6;
}

CT_HOT void ct_emit_end(ct_call *c)
{
    ct_publish(c->th, (unsigned)c->recorded);
}

/* The same for a detail already built elsewhere. */
CT_HOT void ct_emit(ct_call *c, unsigned type, const void *payload, size_t len)
{
    void *d = ct_emit_begin(c, type, len);
    if (d) {
        memcpy(d, payload, len);
        ct_emit_end(c);
    }
}

#endif
