/* The writer's doorbell: how the recording threads wake the background writer (ctp_writer.c)
 * before its period ends. The writer sleeps on a futex word that wakers bump: unlike a condition
 * variable, a futex wake is async-signal-safe, so a fatal-signal handler can ring it too.
 *
 * Contract: every function here is async-signal-safe and takes no lock; ctp_writer_pressure keeps
 * errno (it runs inside a traced call, before errno is handed back). The doorbell also rings
 * the other way: a thread whose ring is full waits here for the writer's next flush
 * (ctp_ring_wait, ctp_ring.h), when the program asked for that. */
#ifndef CTP_WAKE_H
#define CTP_WAKE_H

#include <stdatomic.h>
#include <stdint.h>

/* Bumped by every wake; the writer waits while it is unchanged. */
extern _Atomic uint32_t ctp_wake_seq;

void ctp_futex_wake(_Atomic uint32_t *word);
/* Sleeps while *word == val, at most ns (a wake or a signal may end it earlier). */
void ctp_futex_wait(_Atomic uint32_t *word, uint32_t val, uint64_t ns);
/* Wakes the writer now. */
void ctp_writer_wake(void);
/* The ring passed a quarter full: wakes the writer now instead of at its next period.
 * One futex wake, at most once per drain of the ring (a 1 MiB ring holds ~7,700 launches, so
 * its cost is spread over thousands of records); errno is kept. */
void ctp_writer_pressure(void);

/* Threads whose ring is full may wait for the writer to drain it (ctp_ring_wait): set by the
 * writer when it starts with CUTRACE_ON_FULL=block, cleared when it stops or the trace ends. */
extern _Atomic int ctp_room_open;
/* The writer finished a flush: wakes the threads waiting for room in their rings. */
void ctp_writer_drained(void);

/* A synchronization returned: GPU work up to it is complete, so the writer should harvest its
 * timings now rather than at its next period (rate-limited: at most every 10 ms). */
void ctp_writer_nudge(void);

#endif
