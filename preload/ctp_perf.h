/* perf_event user-stack sampling of the traced threads, for the thread sampler (issue 28, item
 * 2; ctp_tsample.h). Where the kernel permits it (perf_event_paranoid <= 2, or CAP_PERFMON; not
 * under a seccomp profile that refuses perf_event_open), each sampled thread gets one event of its
 * own: its task clock (PERF_COUNT_SW_TASK_CLOCK, user mode only), which every period of the
 * thread's CPU time copies its user registers and the top CTP_PERF_STACK bytes of its stack into a
 * ring the sampler maps, and which also records each switch of the thread on and off a CPU
 * (context_switch). Nothing reaches the program: no signal (no fasync, no F_SETSIG), no stop; the
 * kernel's work is done in the sampled thread's timer interrupt and scheduler.
 *
 * The sampler reads the ring with plain loads (ctp_perf_read): from the switch records, the
 * thread's state now (on a CPU or preempted: running; switched off otherwise: asleep) and whether
 * it ran since the previous read, with no system call; from the newest sample, its native stack,
 * unwound with libunwind's remote interface over the copy (registers and the stack's top from
 * the sample; the DWARF unwind tables of the loaded objects found as local unwinding finds
 * them; any memory outside the copy, the live stack above it too, read with process_vm_readv on
 * the process itself: a read-only segment's a cached line at a time while no object is
 * unloaded, the rest a page at a time for one unwinding) and interned with ctp_stack_intern.
 *
 * Contract: one caller (the sampler thread). Depends on ctp_stack (interning), ctp_state
 * (options: the period). */
#ifndef CTP_PERF_H
#define CTP_PERF_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a sampled thread's stack copied per sample, and data pages of its ring. */
#define CTP_PERF_STACK 4096
#define CTP_PERF_PAGES 8
/* A thread's newest sample is unwound at most this often while it stays on CPUs: an unwinding
 * costs the sampler 50 to 500 us (naming its new frames: dladdr), more than a period's budget,
 * and PyTorch's autograd thread has one every period; the reads between give the stack last
 * unwound, which stands for the time since, as a loader worker's sample does (ctp_tsample.h).
 * A thread that slept since has its next sample unwound, whatever its age, and so has one whose
 * newest sample lies outside the innermost function of the stack had (one unwinding a period at
 * most: without it a thread switching functions was said to be in the old one for up to 10 ms
 * after, 7 points off its own clock once idle in thread_samples_native_perf). 10 ms, not 20:
 * beside two CPU hogs a native thread switching between two functions was said to be in one
 * 6 points less than its own clock said at 20 ms (thread_samples_native_perf, tolerance 5). */
#define CTP_PERF_UNWIND_NS 10000000ull

typedef struct ctp_perf {
    int fd;                 /* -1: not open */
    unsigned char *base;    /* the ring's mapping: its control page, then the data */
    uint32_t state;         /* 'R' on a CPU or preempted, 'S' switched off; 0 unknown */
    uint32_t stack;         /* its newest sample's native stack (interned), 0 none */
    uint64_t stack_at;      /* ... when it was taken (CLOCK_MONOTONIC ns) */
    uint64_t slept_at;      /* when it last switched off a CPU asleep */
    uint64_t fn_lo, fn_hi;  /* the extent of that stack's innermost function (0 0: not known) */
} ctp_perf;

/* What one read of a thread's ring said. */
typedef struct ctp_perf_seen {
    uint32_t state;   /* as ctp_perf.state, after the records read */
    int ran;          /* it was on a CPU since the previous read (or it is now) */
    int slept;        /* it was switched off asleep since the previous read */
    int lost;         /* records were lost: state and ran unknown */
    uint32_t stack;   /* where it last ran (its newest sample's native stack, or one at
                       * most CTP_PERF_UNWIND_NS older), unless it went to sleep since; 0 none */
} ctp_perf_seen;

/* Whether this process may sample its threads so: 1, or 0 with why (what failed, its errno,
 * perf_event_paranoid) in why[0..len). Tried once on the calling thread: an event opened and
 * mapped as ctp_perf_open does, then closed. errno kept. */
int ctp_perf_probe(char *why, size_t len);
/* Opens thread tid's event and ring: 0, or -1 (p->fd -1: that thread has no native samples).
 * Without stacks (a Python thread: its frames are read otherwise), its switches only: no timer,
 * no sample. */
int ctp_perf_open(ctp_perf *p, uint32_t tid, int stacks);
void ctp_perf_close(ctp_perf *p);
/* Reads what the thread's ring gained since the previous read, and frees that room; with stack,
 * unwinds its newest sample when due (CTP_PERF_UNWIND_NS; r->stack). */
void ctp_perf_read(ctp_perf *p, int stack, ctp_perf_seen *r);

#endif
