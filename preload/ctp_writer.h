/* The background writer: one thread (all signals blocked) that wakes every 50 ms (every 5 to
 * 20 ms while rings fill quickly, at once when the doorbell rings, ctp_wake.h), snapshots every
 * ring's head, writes the strings interned so far (so every record it then drains has its
 * definitions earlier in the file), drains each ring into that thread's encoder, harvests GPU
 * timings (ctp_harvest.h), and writes a thread's chunk once its oldest record is 25 ms old (or
 * its buffer is half full): every record is in the file within 100 ms of its call's return. One flush runs at a time (whoever holds it owns the encoders); the final flush
 * of a fatal signal is handed to the writer, or done raw by the caller with async-signal-safe
 * code when the writer does not finish in time.
 *
 * Contract: the session (ctp_session.c) starts, stops and resets it, under its registration lock
 * or at the end of the process; it reads the rings of ctp_threads (ctp_state.h) and writes
 * through ctp_output.h. It starts and stops the thread sampler with its own thread and drains
 * the sampler's ring into its stream (ctp_tsample.h). It calls no recorder and no session
 * function. */
#ifndef CTP_WRITER_H
#define CTP_WRITER_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp_state.h"

#define CTP_ENC_BYTES (1u << 20)   /* encoded records per thread between chunks */
/* Words per thread ring (CUTRACE_RING_KB): 1 MiB, ~8,700 launches between drains. */
extern uint64_t ctp_ring_words;

static inline uint32_t ctp_gettid(void) { return (uint32_t)syscall(SYS_gettid); }

/* Ring memory, its pages faulted in now: a first touch costs microseconds here (more on a
 * virtual machine), far more than a call the ring records, and would otherwise fall on the
 * traced calls, one page in every ~30 launches. */
uint64_t *ctp_ring_alloc(void);
void ctp_ring_free(uint64_t *words);

/* How a flush runs. NOLOCK: a fatal signal interrupted a thread that may hold a tracer lock, so
 * never block on one (definitions that cannot be had now stay unwritten). SIGNAL: in the
 * handler itself: additionally no allocation, compression or CUDA call (raw chunks; pending GPU
 * timings are counted as lost). */
enum { CTP_FL_FINAL = 1, CTP_FL_NOLOCK = 2, CTP_FL_SIGNAL = 4 };
/* One flush of every thread (fl: CTP_FL_*). CTP_FL_FINAL: drain everything and end the trace
 * with END (how, code). retire: a context about to be destroyed, whose GPU timings are
 * collected now (0: none). */
void ctp_flush(unsigned fl, unsigned how, int code, uint64_t retire);
/* The final flush on a program's thread (exit, exec, _exit, a fatal signal). A trace write past
 * RLIMIT_FSIZE raises SIGXFSZ in the writing thread, and its default action would kill the
 * program (the writer thread blocks every signal; this one may not): it is blocked meanwhile,
 * and one that the flush's writes raised is taken back. fl: CTP_FL_* besides CTP_FL_FINAL.
 * Async-signal-safe when fl has CTP_FL_SIGNAL. */
void ctp_flush_final_here(unsigned fl, unsigned how, int code);
/* The final flush from where no lock may be awaited (a fatal-signal handler, _exit, which may
 * run in one): the writer does it (it may harvest GPU timings and compress, which a handler may
 * not); if it has not finished within CTP_FINAL_WAIT_NS (it waits on something the interrupted
 * thread holds), the caller flushes raw itself. code: 0-255. Async-signal-safe. */
void ctp_writer_end_anywhere(unsigned how, int code);

/* Starts the writer thread (its buffers first); -1 if it cannot run (after a warning when the
 * thread could not be created). */
int ctp_writer_start(void);
/* Stops the writer thread and waits for it (its last flush is the caller's to do). */
void ctp_writer_join(void);
/* What a new trace file starts from: no definition written yet, nothing to end. */
void ctp_writer_new_file(void);
/* A forked child: the parent's pending GPU timings and losses are the parent's. */
void ctp_writer_fork_child(void);
/* A failed exec goes on into a new file: losses already reported stay reported. */
void ctp_writer_continue(void);

#endif
