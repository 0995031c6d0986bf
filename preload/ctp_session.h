/* The trace of one process (ctp_session.c): when it starts (a thread's first traced call), the
 * thread registration, and the paths that end a trace or start a new one (exit, fatal signals,
 * fork, exec, _exit, a context's destruction).
 *
 * Contract: the session owns the lifecycle. It reads the options, opens the output
 * (ctp_output.c), starts and stops the writer (ctp_writer.c), registers threads into ctp_threads
 * (ctp_state.h) and resets every module's per-file state in a forked child. Only the wrappers
 * (ctp_trace.h, the generated code) and the exec/_exit interposers (ctp_exec.c) call it; it
 * calls no recorder hook. */
#ifndef CTP_SESSION_H
#define CTP_SESSION_H

#include <stdint.h>
#include <cuda.h>

#include "ctp_state.h"

/* Registers the calling thread (starting the trace on first use); NULL if it is not traced.
 * The only slow path of ctp_enter: may lock and allocate. */
ctp_thread *ctp_thread_slow(void);
/* Counts a call that goes untraced, where no trace could be had at all (the exit message says
 * how many: ctp_untraced_calls); a thread over the buffer budget is told by the trace's LOSS
 * records, and its calls do not share one counter's cache line. */
void ctp_session_untraced_call(void);
/* 1 while a trace runs: NVTX calls (ctp_nvtx.c) register their thread only then, since a
 * process that never uses CUDA writes no trace. */
int ctp_session_running(void);
/* Appends th's CPU times (getrusage), stamped as it reads them: the thread came back to CUDA
 * after a gap (at `since`, ticks: the stamp is held from then, ctp_ring.h). errno is kept. */
void ctp_record_cpu(ctp_thread *th, uint64_t since);

/* Before a context is destroyed (cuCtxDestroy; cuDevicePrimaryCtxReset or Release for the
 * device's primary context): its events die with it, so its pending timings are collected first: the calling
 * thread flushes every ring (with GPU timing on) and harvests, waiting for that context's timed operations (as the
 * destruction itself does); that context's events in stashes and its anchor are destroyed. */
void ctp_session_ctx_gone(uint64_t ctx);
void ctp_session_primary_gone(CUdevice dev);

/* Before an exec: stops the writer and ends the trace (every record written, END with how
 * CT_END_DETACH). Returns 1 if it did, 0 if this process has no running trace or is a vfork
 * child (which shares the parent's memory and must do nothing but exec or _exit). errno is
 * preserved. */
int ctp_exec_begin(void);
/* The exec that ctp_exec_begin prepared for returned (failed): trace on, into a new file.
 * errno is preserved. */
void ctp_exec_failed(void);
/* Before _exit(status): ends the trace (END immediate exit, status & 0xff) if this process has
 * a running trace and is not a vfork child. Async-signal-safe; errno is preserved. */
void ctp_exit_now(int status);

#endif
