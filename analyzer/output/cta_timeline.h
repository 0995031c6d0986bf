/* The timeline (`cutrace timeline`): a Chrome Trace Event / Perfetto JSON timeline, written
 * while the model reads the traces (it observes the joined calls, cta_observer), so memory stays
 * that of the model. Layout:
 *  - one process per traced process, named "HOST pid PID rank R", sorted by rank;
 *  - host threads (tid = OS tid) with their CUDA calls as complete ("X") events; a driver call
 *    made by a runtime call lies inside it and is left out unless --driver-calls; a call with a
 *    call stack has args "site" (as the summary names it: the Python line in user code, else the
 *    user's native frames) and "stack" (every frame, innermost first, up to CTA_FULL_STACK_FRAMES);
 *  - one thread track per device stream ("GPU D stream 0x..."), with kernels, copies and sets
 *    (args: grid, block, bytes, memory kinds, GB/s); those without a GPU interval (GPU timing
 *    off or 1 in N) as instant events on the calling thread when the call returned;
 *  - a flow ("s" at the call, "f" at the GPU work, id unique per process) from each call to its
 *    GPU work;
 *  - NVTX ranges (FORMAT.md 4.8) as complete events on tracks of their own per thread and domain
 *    ("NVTX DOMAIN (tid N)", next to the thread's CUDA calls): push/pop ranges nest as pushed;
 *    start/end ranges, which need not nest, go on the starting thread's "start/end" track, on a
 *    further row of it ("start/end 2", up to CTA_TL_NVTX_ROWS) when one overlaps a range already drawn,
 *    as complete events must nest (one overlapping CTA_TL_NVTX_ROWS others is left out and counted in
 *    a warning); named by their message, or by its normalized name when the tracer kept no more
 *    names; marks and unmatched pops and ends as instant events;
 *  - per sampled thread (THREAD_SAMPLE, format 1.10), a track "where the host was (tid N)"
 *    between the threads' own tracks and the NVTX tracks: complete events, each a run of
 *    samples that showed the same activity as the summary words it, over the time they stand
 *    for (cta_tl_samples.h);
 *  - counters ("C"): device memory in use per device, pinned host memory, copy bandwidth; from
 *    host samples (format 1.8, cta_host.h), the machine's busy and iowait cores, the process
 *    tree's read rate and each tree process's CPU in cores, each value at the start of the
 *    interval it measured (it holds until the next value of its track);
 *  - per process, an instant event at its last activity (the axis start if it has none) saying
 *    how it ended ("ended: exit status 3", as the summary's).
 * Times are microseconds from the earliest trace start (at most 3 decimals, trailing zeros
 * dropped); all processes share the axis. The JSON is kept small: one event per line, args only
 * where they say something (a call's result only when it failed; no correlation ids: the flows
 * link calls to their work), flow ids numbered from 1. Viewers handle a few million events at
 * most, so the timeline stops at max_events (the command's default CTA_TL_MAX_EVENTS) with a warning saying
 * where, rather than writing a file nothing can open. */
#ifndef CTA_TIMELINE_H
#define CTA_TIMELINE_H

#include <stdio.h>

#include "cttrace.h"

#define CTA_TL_MAX_EVENTS 2000000ull

typedef struct {
    double from, to;         /* the window: ms from the earliest trace start (to 0: no end) */
    long pid;                /* only this process; -1: all */
    uint64_t max_events;     /* 0: no limit */
    int driver_calls;        /* also driver calls nested in runtime calls */
} cta_timeline_opts;

/* What the writing found, for the command's messages (cta_timeline_warnings). */
typedef struct {
    uint64_t events, max_events;
    int stopped;                 /* it stopped at max_events */
    uint64_t stopped_ns, end_ns; /* where it stopped, the traces' end: from the axis start */
    uint64_t nvtx_crowded;       /* start/end ranges left out: every row was busy */
} cta_timeline_result;

/* Reads the traces of rd (cta_load_open) through the model and writes their timeline into f.
 * Returns a CTA_EXIT_* status (errors on stderr) and, when done, *res. */
int cta_timeline_write(FILE *f, ct_reader *rd, const cta_timeline_opts *o, cta_timeline_result *res);
/* The warnings of a timeline written into out, on stderr: where it stopped, NVTX ranges left out. */
void cta_timeline_warnings(const cta_timeline_result *res, const char *out);

#endif
