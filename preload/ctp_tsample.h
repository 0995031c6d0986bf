/* The thread sampler (FORMAT.md 4.12): every CUTRACE_THREAD_SAMPLE_US (5000 us; 0 off), on a
 * thread of its own ("cutrace-sample", every signal blocked), it reads what each thread of the
 * process that has made a traced call (ctp_threads) is doing, and appends a THREAD_SAMPLE record
 * per thread to a ring of its own, which the writer drains into its stream: the thread's
 * scheduler state letter, the traced call it is inside (ctp_thread.in_fn, a relaxed load), and
 * its stack: its Python frames, read from its Python thread state with process_vm_readv
 * (ctp_python_sample; never a fault, a sample read inconsistently is flagged and has no stack),
 * or where no Python runs on it, a native stack: where it ran (ctp_perf, perf_event user-stack
 * samples) when the kernel permits, else the stack of its last call that captured one
 * (ctp_thread.last_stack).
 *
 * Never a signal to the program's threads, never a stop: a sampled thread does not know. The
 * stacks it interns (ctp_stack_intern) take the stack table's lock only for a stack never seen
 * before, as a program thread does; in the steady state the sampler takes no lock a traced call
 * takes. Its own cost (tests/bench: bench_tsample), on a virtual machine where a system call
 * after a sleep costs 10 to 20 us: where perf_event is usable, the thread's state and whether it
 * ran come from its ring with plain loads (its /proc stat is read only when a sleep begins, for
 * S or D), and a Python thread that ran costs one process_vm_readv; without it, one pread of
 * /proc stat per thread, and for a Python thread a schedstat pread (whether it ran) and the read.
 *
 * Contract: the writer starts it with its own thread (ctp_tsample_start) and stops it before its
 * own end (ctp_tsample_stop, which waits for it); the writer alone reads the ring. A forked
 * child has no sampler until its writer starts, and reads none of its parent's perf rings.
 * Depends on ctp_state, ctp_clock, ctp_emit (the ring), ctp_python, ctp_perf and ctp_stack. */
#ifndef CTP_TSAMPLE_H
#define CTP_TSAMPLE_H

#include "ctp_ring.h"

/* Starts the sampler thread when sampling is on (ctp_opt.thread_sample_ns); call with every
 * signal blocked. -1 if it could not start (the trace goes on without samples). */
int ctp_tsample_start(void);
/* The tracer's option word saying where native samples come from (" native_samples=perf", or
 * " native_samples=STEP:ERRNO:perf_event_paranoid=N" saying why perf_event cannot be used);
 * "" when sampling is off. Probes perf_event once (ctp_perf_probe) on the calling thread. */
const char *ctp_tsample_native(void);
/* Stops the sampler thread (if running) and waits for it. */
void ctp_tsample_stop(void);
/* In a forked child (the writer's fork handler): no sampler runs; the parent's samples are the
 * parent's. */
void ctp_tsample_fork_child(void);
/* The ring the samples are in (raw records of kind CT_REC_THREAD_SAMPLE, a ct_rec_thread_sample
 * each); empty words when sampling is off. */
ctp_ring *ctp_tsample_ring(void);

#endif
