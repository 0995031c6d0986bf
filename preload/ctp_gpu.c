/* GPU timing, the calling thread's side (see ctp_gpu.h; the writer's side is ctp_harvest.c). */
#include "ctp_gpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctp_clock.h"
#include "ctp_fns.h"
#include "ctp_real.h"
#include "ctp_wake.h"

/* The stash's consumer side. The writer may also take every entry (ctp_harvest.c, when a
 * context is destroyed), so the tail moves by compare-and-swap: an entry belongs to whoever
 * advanced the tail past it. */
static CUevent ctp_gpu_take(ctp_thread *th, uint64_t ctx)
{
    ctp_gpu_stash *s = th->gpu;
    uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
    uint64_t left = atomic_load_explicit(&s->head, memory_order_acquire) - tail;
    /* Running low while near the creation limit (a burst faster than the writer's period):
     * wake the writer to harvest and refill now, once per refill. */
    if (left < CTP_GPU_STASH / 4 && s->created > CTP_GPU_MAX_EVENTS / 2 && !s->pressed) {
        s->pressed = 1;
        ctp_writer_pressure();
    } else if (left >= CTP_GPU_STASH / 2) {
        s->pressed = 0;
    }
    for (int tries = 0; tries < 4; tries++) {
        if (tail == atomic_load_explicit(&s->head, memory_order_acquire))
            break;
        CUevent e = s->ev[tail & (CTP_GPU_STASH - 1)];
        uint64_t ectx = s->ctx[tail & (CTP_GPU_STASH - 1)];
        if (!atomic_compare_exchange_strong_explicit(&s->tail, &tail, tail + 1,
                                                     memory_order_acq_rel, memory_order_acquire))
            continue; /* the writer took it: tail now holds the new tail */
        tail++;
        if (ectx == ctx)
            return e;
        /* An event of another context cannot go on this stream: hand it back. */
        ctp_gpu_pend back = {.ev0 = e, .ctx = ectx};
        ctp_push(th, CTP_RAW_GPU_PEND, 0, ctp_ticks(), &back, sizeof back);
    }
    CUevent e = NULL;
    if (s->created - atomic_load_explicit(&s->destroyed, memory_order_relaxed) <
            CTP_GPU_MAX_EVENTS &&
        CTP_REAL(cuEventCreate)(&e, CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
        s->created++;
        return e;
    }
    return NULL;
}

static void ctp_gpu_start(ctp_call *c, uint64_t stream)
{
    ctp_thread *th = c->th;
    /* Work enqueued on a capturing stream becomes a graph node and never executes here: it is
     * marked, and never gets an event (recording one into the capture would add a node to the
     * program's graph). A status that cannot be read is not timed either: on the legacy stream
     * while a blocking stream captures, cuStreamIsCapturing fails (STREAM_CAPTURE_IMPLICIT)
     * without harm, but an event record there would invalidate that capture. */
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    /* No real driver (one warning said so): the program's calls fail; nothing to time. */
    __typeof__(&cuStreamIsCapturing) is_capturing = CTP_REAL(cuStreamIsCapturing);
    CUresult q = is_capturing ? is_capturing((CUstream)(uintptr_t)stream, &cs) : CUDA_ERROR_NOT_FOUND;
    c->captured = q == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE ? CT_LAUNCH_CAPTURED : 0;
    c->gpu_why = 0;
    if (!th->gpu || q != CUDA_SUCCESS || c->captured)
        return;
    if (ctp_opt.gpu_every > 1 && ++th->gpu->count % ctp_opt.gpu_every != 0)
        return;
    CUcontext ctx = NULL;
    if (CTP_REAL(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS || !ctx)
        return;
    CUevent e = ctp_gpu_take(th, (uint64_t)(uintptr_t)ctx);
    if (!e) {
        c->gpu_why = CT_GPU_LOST_NO_EVENT;
        return;
    }
    c->gpu_stream = stream;
    c->gpu_ctx = (uint64_t)(uintptr_t)ctx;
    ctp_call_hold(c); /* the GPU record's end is no earlier than gpu_submit, read below */
    if (CTP_REAL(cuEventRecord)(e, (CUstream)(uintptr_t)stream) != CUDA_SUCCESS) {
        ctp_gpu_pend back = {.ev0 = e, .ctx = c->gpu_ctx};
        ctp_push(th, CTP_RAW_GPU_PEND, 0, c->t0, &back, sizeof back);
        c->gpu_why = CT_GPU_LOST_RECORD_FAILED;
        return;
    }
    c->gpu_ev0 = e;
    c->gpu_submit = ctp_now();
}

void ctp_gpu_begin_timed(ctp_call *c, uint64_t stream)
{
    /* Before the real call: what the driver leaves in errno here must not reach the program. */
    int saved = errno;
    ctp_gpu_start(c, stream);
    errno = saved;
}

void ctp_gpu_end_timed(ctp_call *c, CUresult r, unsigned kind, uint32_t device, int waited)
{
    ctp_gpu_pend p = {c->corr, c->gpu_ev0, NULL, c->gpu_stream, c->gpu_ctx, c->gpu_submit,
                     waited ? ctp_now() : 0, 0, device, 0, 0};
    /* A call that failed enqueued nothing: nothing to time, nothing lost. */
    if (r == CUDA_SUCCESS && c->gpu_why)
        p.why = c->gpu_why;
    else if (r == CUDA_SUCCESS) {
        p.ev1 = ctp_gpu_take(c->th, c->gpu_ctx);
        if (!p.ev1)
            p.why = CT_GPU_LOST_NO_EVENT;
        else if (CTP_REAL(cuEventRecord)(p.ev1, (CUstream)(uintptr_t)c->gpu_stream) !=
                 CUDA_SUCCESS)
            p.why = CT_GPU_LOST_RECORD_FAILED;
        else {
            p.kind = kind;
            p.ev1_host = ctp_now();
        }
    }
    ctp_push(c->th, CTP_RAW_GPU_PEND, c->fn, c->t1, &p, sizeof p);
}
