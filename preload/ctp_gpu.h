/* GPU timing of kernels, copies and sets (CUTRACE_GPU_TIMING = all | off | N for 1 in N).
 *
 * Around a timed operation the calling thread records two CUDA events on the operation's
 * stream, in the current context (ctp_gpu_begin before the real call, ctp_gpu_end after), unless
 * the stream is being captured into a graph or its capture status cannot be read. The pair goes
 * through the thread's ring to the writer, which keeps it pending until the end event
 * completes, then converts the events to the host's CLOCK_MONOTONIC: per context, anchor events
 * are recorded back to back on a private idle non-blocking stream, and the host time of the one
 * whose record call was shortest is the middle of that call; a GPU time is the anchor's host
 * time plus cuEventElapsedTime(anchor, event). preload/README.md states the accuracy. Anchors
 * are renewed every second so the float milliseconds never lose more than a fraction of a
 * microsecond (a renewal whose calls were all slow is refused and retried, ctp_harvest.c);
 * durations come from the event pair (exact to the event resolution), except
 * that an operation never starts before the host submitted it: on an idle stream the start
 * event completes at once, and a host delay before the operation is not GPU time.
 *
 * Harvesting (ctp_harvest.c) runs at every writer pass and right after a synchronization returns.
 *
 * Events come from a per-thread stash (a ring the writer refills with harvested events), so
 * after warm-up the hot path creates none; a thread has at most CTP_GPU_MAX_EVENTS, and one
 * whose stash runs low near that limit wakes the writer to refill it (once per refill). An
 * operation that should have been timed and was not (no event, an event the driver refused,
 * still running at the end, its context gone, no time from the driver) gets a LOSS record of its
 * own (reason GPU timing, count 1, its correlation id and why), written with the GPU records.
 * The tracer's own CUDA calls go to the real driver and are never recorded. */
#ifndef CTP_GPU_H
#define CTP_GPU_H

#include <cuda.h>
#include "ctp_emit.h"
#include "ctp_state.h"

#define CTP_GPU_STASH 4096u       /* free events per thread (power of two) */
#define CTP_GPU_MAX_EVENTS 16384u /* events one thread may have at once */

/* Per-thread event stash: a ring the writer fills (head) and the thread empties (tail). */
typedef struct ctp_gpu_stash {
    CUevent ev[CTP_GPU_STASH];
    uint64_t ctx[CTP_GPU_STASH];
    _Atomic uint64_t head, tail;
    uint32_t created;            /* thread-private */
    uint32_t count;              /* thread-private: operations since the last timed one */
    uint32_t pressed;            /* thread-private: the writer was woken to refill */
    _Atomic uint32_t destroyed;  /* of those created, destroyed by the writer (stash full) */
} ctp_gpu_stash;

/* What the thread hands the writer for one timed operation (raw kind CTP_RAW_GPU_PEND). kind 0:
 * the events are only returned (the operation failed or could not be timed: then why says why,
 * enum ct_gpu_lost, 0 when it failed). */
typedef struct {
    uint64_t corr;
    CUevent ev0, ev1;
    uint64_t stream, ctx;
    uint64_t submit;             /* host time between the start event and the operation */
    uint64_t done_by;            /* host time by which the operation had completed (its call
                                  * returned only then), 0 if the call did not wait for it */
    uint64_t ev1_host;           /* host time right after the end event was enqueued */
    uint32_t device, kind, why;
} ctp_gpu_pend;

/* The hooks around a kernel, copy or set. ctp_gpu_begin runs for every one of them: it reads the
 * stream's capture status (c->captured), which the LAUNCH and COPY records carry, then times the
 * operation if timing is on, the status was read and the stream is not capturing. */
void ctp_gpu_begin_timed(ctp_call *c, uint64_t stream);
void ctp_gpu_end_timed(ctp_call *c, CUresult r, unsigned kind, uint32_t device, int waited);
CTP_HOT void ctp_gpu_begin(ctp_call *c, uint64_t stream)
{
    if (c->th)
        ctp_gpu_begin_timed(c, stream);
}
/* The LAUNCH / COPY flag saying that no GPU record and no LOSS will follow for this call. */
CTP_HOT uint32_t ctp_gpu_untimed(const ctp_call *c, CUresult r, uint32_t flag)
{
    return r != CUDA_SUCCESS || (!c->gpu_ev0 && !c->gpu_why) ? flag : 0;
}
/* waited: the call returned only once the operation had completed. The end event, recorded
 * after the return, then completes when the host gets to it; the operation itself had ended by
 * the return, and the GPU record says so. */
CTP_HOT void ctp_gpu_end(ctp_call *c, CUresult r, unsigned kind, uint32_t device, int waited)
{
    if (c->gpu_ev0 || c->gpu_why)
        ctp_gpu_end_timed(c, r, kind, device, waited);
}

#endif
