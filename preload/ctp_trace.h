/* The tracer's hot path: what every generated wrapper calls (contract for preload/gen and the
 * category recorders).
 *
 * A wrapper does:
 *     ctp_call c; ctp_enter(&c, FN);            thread state, correlation id, entry time
 *     [category pre-hook, e.g. GPU start event]
 *     r = real(args);
 *     ctp_leave(&c, r);                        return time, result, the errno to hand back
 *     [category post-hook: LAUNCH / COPY / MEM / SYNC / STREAM detail, via ctp_emit]
 *     ctp_finish(&c);                          API record unless ctp_emit wrote it, errno back
 * When tracing is off for the thread (process not traced, thread over the memory budget, thread
 * exiting, or outside the capture windows for a call not flagged CTP_FN_KEEP: one relaxed load
 * of ctp_capture_gate) c.th is NULL and every hook returns at once, so the wrapper only forwards.
 *
 * A call goes to the thread's ring (ctp_ring.h) as one raw record: the API record, followed by
 * its detail (the trace format's own decoded struct, ct_rec_launch ..., copied as is) when the
 * call has one; the writer splits it and hands each part to its ct_enc_* encoder. One record
 * per call keeps a launch to one reservation and one run of words. The first call of a thread
 * registers it (may allocate); later calls do not allocate, lock or make system calls, except
 * one CPU-time reading (getrusage) when the thread comes back after a gap, and one futex wake
 * of the writer when the thread's ring passes half full (once per drain). For the thread sampler
 * (ctp_tsample.h) a call stores on entry the function it is in and clears it on return (relaxed
 * stores to the thread's own ctp_thread; a nested call leaves the outermost's). Functions here are
 * forced inline: the generated wrappers are one large file where the compiler would otherwise
 * call them, and each call would cost about as much as the work inside. A call also holds its
 * ring (ctp_ring.h: one load and store at its return, one store once its record is published;
 * from its GPU operation's submission when timed), so that the writer's low-water marks never
 * pass a record it has stamped and not published yet. */
#ifndef CTP_TRACE_H
#define CTP_TRACE_H

#include <errno.h>
#include <stdint.h>

#include "ctp_capture.h"
#include "ctp_clock.h"
#include "ctp_emit.h"
#include "ctp_real.h"
#include "ctp_session.h"
#include "ctp_stack.h"
#include "ctp_state.h"

CTP_HOT void ctp_enter(ctp_call *c, unsigned fn)
{
    ctp_thread *th = ctp_tls;
    if (__builtin_expect(th == 0 || th == &ctp_untraced, 0)) {
        th = th ? 0 : ctp_thread_slow();
        if (!th)
            ctp_session_untraced_call();
    }
    c->th = th;
    c->fn = fn;
    c->gpu_ev0 = 0;
    c->stack = 0;
    c->recorded = 0;
    c->unhold = CTP_UNHELD;
    if (!th)
        return;
    /* outside a capture window: only what the windows need (ctp_capture.h), no CPU reading */
    int paused = ctp_capture_paused();
    if (__builtin_expect(paused, 0) && !(ctp_fns[fn].flags & CTP_FN_KEEP)) {
        c->th = 0;
        return;
    }
    /* what the thread sampler reads: the call the thread is inside (the outermost) */
    c->outer_fn = atomic_load_explicit(&th->in_fn, memory_order_relaxed);
    if (!c->outer_fn)
        atomic_store_explicit(&th->in_fn, fn + 1, memory_order_relaxed);
    c->corr = th->corr_next++;
    c->parent = th->parent;
    if (ctp_fns[fn].flags & CTP_FN_RUNTIME)
        th->parent = c->corr;
    c->t0 = ctp_ticks();
    if (c->t0 - th->last_return >= ctp_opt.cpu_gap_ticks && !c->parent && !paused)
        ctp_record_cpu(th, c->t0);
}

/* Right after the real call, before anything of cutrace's can touch errno. In `all` stack
 * mode the call site is captured here for every call; in the default mode category hooks
 * capture it for the categories that want it (ctp_record.c). */
CTP_HOT void ctp_leave(ctp_call *c, uint32_t result)
{
    ctp_thread *th = c->th;
    if (!th)
        return;
    ctp_call_hold(c);
    c->t1 = ctp_ticks();
    if (!c->outer_fn)
        atomic_store_explicit(&th->in_fn, 0, memory_order_relaxed);
    c->err = *th->errp;
    c->result = result;
    if (__builtin_expect(ctp_opt.stacks == 2, 0))
        c->stack = ctp_stack_capture();
}

CTP_HOT void ctp_finish(ctp_call *c)
{
    ctp_thread *th = c->th;
    if (!th)
        return;
    if (!c->recorded) {
        unsigned n = c->stack ? 6 : c->parent ? 5 : 4;
        uint64_t *w = ctp_ring_reserve(&th->ring, n);
        if (w) {
            ctp_api_words(w, c, n, 0);
            ctp_publish(th, n);
        }
    }
    ctp_ring_unhold(&th->ring, c->unhold);
    if (ctp_fns[c->fn].flags & CTP_FN_RUNTIME)
        th->parent = c->parent;
    if (c->stack)
        atomic_store_explicit(&th->last_stack, c->stack, memory_order_relaxed);
    th->last_return = c->t1;
    *th->errp = c->err;
}

#endif
