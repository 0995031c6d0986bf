/* Capture windows: when a windowed trace records (cutrace run --capture-range, --delay,
 * --duration; the variables CUTRACE_CAPTURE_RANGE, CUTRACE_DELAY, CUTRACE_DURATION).
 *
 * Contract: ctp_capture_gate is 0 while recording (always, when no option asks for windows).
 * The hot path reads it with one relaxed load (ctp_capture_paused): a thread finding it nonzero
 * records only the calls flagged CTP_FN_KEEP (allocations, frees, streams, names, the profiler
 * calls: ctp_trace.h) and no NVTX range or mark that began there (ctp_nvtx.c). Options are read
 * when libcutrace loads (the delay counts from then). A window opens and closes by a
 * compare-and-swap on the gate, with no lock: the thread whose swap started or stopped
 * recording writes the CAPTURE record (FORMAT.md 4.9), into its ring (ctp_capture_mark: the
 * profiler calls, NVTX ranges, the trace's first record) or, for the writer (the delay, the
 * duration, the trace's end), into the writer's own stream. Depends on the ring (ctp_emit.h),
 * the clock and the shared state (ctp_state.h: NVTX domain names) only. */
#ifndef CTP_CAPTURE_H
#define CTP_CAPTURE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cttrace.h"
#include "ctp_state.h"

extern _Atomic unsigned ctp_capture_gate;

static inline int ctp_capture_paused(void)
{
    return atomic_load_explicit(&ctp_capture_gate, memory_order_relaxed) != 0;
}

/* The options as the header's tracer_options shows them ("" when the trace is not windowed). */
const char *ctp_capture_options(void);

/* A record to write (op 0: none) into th's ring at the current time. */
void ctp_capture_mark(ctp_thread *th, ct_rec_capture r);
/* The first CAPTURE record of a windowed trace file (why CT_CAPTURE_BEGIN), into th's ring:
 * called for every newly registered thread, written once per file. */
void ctp_capture_begin(ctp_thread *th);
/* A new trace file (fork child, failed exec): its first record is still to write. */
void ctp_capture_new_file(void);

/* cuProfilerStart (op CT_CAPTURE_START) or cuProfilerStop returned, with --capture-range
 * cudaProfilerApi. */
ct_rec_capture ctp_capture_profiler(unsigned op);
/* With --capture-range nvtx:NAME: 1 if NVTX calls must tell pushes, pops, starts and ends. */
int ctp_capture_nvtx(void);
/* A push at level in domain dom (its message msg, len bytes) / the pop of that level; a start
 * returning id / the end of id. The outermost range named NAME (in DOMAIN) opens the window and
 * its end closes it. */
ct_rec_capture ctp_capture_push(unsigned dom, unsigned level, const char *msg, size_t len);
ct_rec_capture ctp_capture_pop(unsigned dom, unsigned level);
ct_rec_capture ctp_capture_start(unsigned dom, uint64_t id, const char *msg, size_t len);
ct_rec_capture ctp_capture_end(uint64_t id);

/* The writer, at each flush (now: CLOCK_MONOTONIC ns): the delay or duration elapsed (up to two
 * records into out; returns how many). ctp_capture_wait: ns until the next such deadline
 * (UINT64_MAX if none). ctp_capture_final: the trace ends while recording (its last record). */
int ctp_capture_timers(uint64_t now, ct_rec_capture out[2]);
uint64_t ctp_capture_wait(uint64_t now);
ct_rec_capture ctp_capture_final(void);

#endif
