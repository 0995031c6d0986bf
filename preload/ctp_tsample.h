/* The thread sampler (FORMAT.md 4.12): every CUTRACE_THREAD_SAMPLE_US (5000 us; 0 off), on a
 * thread of its own ("cutrace-sample", every signal blocked), it reads what each thread of the
 * process that has made a traced call (ctp_threads) is doing, and each loader worker's (a child
 * forked without exec by a thread running Python, which never calls CUDA: its one thread), and
 * appends a THREAD_SAMPLE record per thread to a ring of its own, which the writer drains into
 * its stream: the thread's scheduler state letter, the traced call it is inside
 * (ctp_thread.in_fn, a relaxed load), and its stack: its Python frames, read from its Python
 * thread state with process_vm_readv (ctp_python_sample; never a fault, a sample read
 * inconsistently is flagged and has no stack), or where no Python runs on it, a native stack:
 * where it ran (ctp_perf, perf_event user-stack samples) when the kernel permits, else the
 * stack of its last call that captured one (ctp_thread.last_stack).
 *
 * Never a signal to the program's threads, never a stop: a sampled thread does not know. The
 * stacks it interns (ctp_stack_intern) take the stack table's lock only for a stack never seen
 * before, as a program thread does; in the steady state the sampler takes no lock a traced call
 * takes. Its own cost (tests/bench: bench_tsample), on a virtual machine where a system call
 * after a sleep costs 10 to 20 us: where perf_event is usable, the thread's state and whether it
 * ran come from its ring with plain loads (its /proc stat is read only when a sleep begins, for
 * S or D), and a Python thread that ran costs one process_vm_readv; without it, one pread of
 * /proc stat per thread, and for a Python thread a schedstat pread (whether it ran) and the read.
 * A thread without Python sampled with perf_event costs, while it runs, an unwinding of its
 * newest sample every 10 ms (CTP_PERF_UNWIND_NS), or sooner when it left the innermost function
 * of the stack last unwound (which the samples between repeat), its unwind tables read through
 * a cache of lines, and the naming of each frame
 * never met before (dladdr, or its module's symbol table, loaded once).
 * A loader worker, sampled at most every 20 ms, costs a pread of its /proc/PID/stat (its state,
 * whether it ran) and, when it ran, process_vm_readv of its memory (ctp_python_sample on its
 * pid): no signal, no stop,
 * nothing added to it (no thread, no file). Its samples' tid is its pid, flagged CT_TS_WORKER;
 * its end (its stat unreadable or a zombie's, it no longer this process's child, its code
 * another program's: exec) ends its sampling.
 * On PyTorch's imagenet example with 2 DataLoader workers (the measure, whose goal is
 * 1%; a 2-vCPU guest at load 3-4, 5 interleaved runs) the sampler costs 1.55% of a core
 * [1.16..2.44], 3.65% [2.53..3.99] before the unwinding was cached and spaced; with 48 batches
 * instead of 12, 1.86% [1.55..2.31] (3.31% before): not a start-up cost. Counters around its
 * phases (which add system calls of their own) share it out: waking every 5 ms a fifth (a
 * thread that only sleeps 5 ms at a time pays 0.54-0.82% here), reading the Python threads
 * that ran a quarter (about two process_vm_readv a read: the _PyCFrame moves in a third of
 * them), the autograd thread's unwinding a fifth to a third (most of it naming frames met for
 * the first time: dladdr, or once 55 ms loading libtriton.so's symbol table), the workers a
 * sixth: system calls of 3-12 us each, no hot spot left. At a 10 ms period: 1.30% [1.15..1.59].
 *
 * Contract: the writer starts it with its own thread (ctp_tsample_start) and stops it before its
 * own end (ctp_tsample_stop, which waits for it); the writer alone reads the ring. A forked
 * child has no sampler until its writer starts, and reads none of its parent's perf rings.
 * The session's fork handlers call ctp_tsample_fork_prepare (on the forking thread: it keeps
 * that thread's Python state) and, in the child, ctp_tsample_fork_child, which tells the
 * parent's sampler of the child through a table shared with it (async-signal-safe: a slot
 * claimed with an atomic, three stores) when the parent samples and the forking thread ran
 * Python. The hot path (a traced call) does nothing for the workers.
 * Depends on ctp_state, ctp_clock, ctp_emit (the ring), ctp_python, ctp_perf, ctp_stack and
 * ctp_host (its /proc stat parser). */
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
/* The session's fork prepare handler, on the forking thread: keeps its Python thread state
 * (ctp_python_tstate) when the sampler runs, for the child to announce. */
void ctp_tsample_fork_prepare(void);
/* In a forked child (the writer's fork handler): tells the parent's sampler of this child (a
 * loader worker, when the forking thread ran Python); no sampler runs here; the parent's samples
 * and workers are the parent's. */
void ctp_tsample_fork_child(void);
/* The ring the samples are in (raw records of kind CT_REC_THREAD_SAMPLE, a ct_rec_thread_sample
 * each); empty words when sampling is off. */
ctp_ring *ctp_tsample_ring(void);

#endif
