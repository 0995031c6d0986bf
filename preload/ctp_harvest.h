/* The writer's side of GPU timing (ctp_gpu.h has the whole design): pending operations, their
 * conversion to GPU records through per-context anchors, events given back to the threads'
 * stashes, and the LOSS records of operations that could not be timed.
 *
 * Contract: called only by whoever holds the flush (ctp_writer.c; never from a signal handler
 * but for ctp_gpu_pending), one at a time; the state here is that caller's alone. */
#ifndef CTP_HARVEST_H
#define CTP_HARVEST_H

#include <stdint.h>

#include "ctp_gpu.h"
#include "ctp_state.h"

void ctp_gpu_collect(ctp_thread *owner, const ctp_gpu_pend *p);
/* Converts every completed pending operation into a GPU record in e (sorted by GPU end),
 * lowering *min_ts to the earliest ts written; returns the CPU submit time of the oldest still
 * pending (UINT64_MAX if none). final: give up on what is not complete (counted as lost).
 * retire: a context about to be destroyed (ctp_gpu_ctx_gone), 0 if none. full: writes e out as a
 * chunk when it fills (a burst can harvest more than one encoder holds). */
uint64_t ctp_gpu_harvest(ct_enc *e, int final, uint64_t *min_ts, uint64_t retire,
                        void (*full)(void));
/* GPU timings lost so far that no per-operation LOSS record reports. */
uint64_t ctp_gpu_lost(void);
/* Operations collected and not harvested yet (async-signal-safe: a read). */
uint64_t ctp_gpu_pending(void);
/* A thread's stash is no longer used: its events are destroyed as they come back. */
void ctp_gpu_thread_dead(ctp_thread *t);
/* Forgets everything (forked child). */
void ctp_gpu_reset(void);

#endif
