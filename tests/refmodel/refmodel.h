/* refmodel: a second, brute-force implementation of what `cutrace summary` computes, for the
 * differential tests (tests/refmodel/test-*.c). It shares no code with the analyzer: it uses the
 * format library only to decode records (in file order, no time-ordered merge), holds every
 * record it needs in memory and sorts everything. Definitions it follows (analyzer/README.md
 * "The breakdown", analyzer/JSON.md, the comments of analyzer/ct_model.h), stated here as the
 * reference computes them:
 *
 *  - t0 is the earliest activity of any process: the start (or time, for point records) of any
 *    record of type API or later, start clamped to the record's time.
 *  - Per process (file) and device, the window runs from the first GPU start to the last GPU
 *    end of that device; busy is the measure of the union of its closed GPU intervals [start,
 *    end] (start clamped to end; devices >= 16 share slot 15).
 *  - A gap is a maximal stretch of the window outside the union; a zero-length GPU interval is
 *    a point of the union and so splits a stretch in two. Gaps have positive length.
 *  - Every instant of a gap is, first that applies: blocked (inside a SYNC record's interval of
 *    any thread, kind other than stream-waits-event), in_api (inside a top-level API call,
 *    parent 0, of any thread), else outside CUDA on the thread with the latest API call event
 *    at or before it (ties: ends of calls, then begins, then ends of zero-length calls):
 *    unknown without a CPU rate for that thread, else computing at that rate (clamped to 0..1)
 *    and waiting the rest. A thread's rate from its readings R1, R2 (consecutive in time, R2
 *    later with more CPU time) is (cpu2 - cpu1) / (t2 - t1) from t1 until the next such t1.
 *    A gap's computing time is its time-weighted rate, rounded to the nearest nanosecond once
 *    per gap; waiting is the rest of its time with a known rate.
 *  - A gap's cause, first that applies: data-loading (a host-to-device copy starts at its end
 *    and compute + wait + unknown >= half of it); after-sync (a SYNC record of kind other than
 *    implicit-in-a-copy or stream-waits-event returns inside it, its ends included, so that a
 *    return at an instant two gaps share counts for both); after-sync-copy (such an implicit SYNC record, or a
 *    top-level synchronous copy or set call ends inside it); launch (in_api >= half); host.
 *  - Kernel, copy and API tables: GPU records joined by correlation id to the LAUNCH or COPY
 *    record of the same file; every API record, nested ones included. */
#ifndef REFMODEL_H
#define REFMODEL_H

#include <stddef.h>
#include <stdint.h>

enum { RM_IN_API, RM_BLOCKED, RM_COMPUTE, RM_WAIT, RM_UNKNOWN, RM_NSPLIT };
enum { RM_GAP_STARVE, RM_GAP_SYNC, RM_GAP_SYNCCPY, RM_GAP_LAUNCH, RM_GAP_HOST, RM_NGAP };
#define RM_TOP 10
extern const char *const rm_split_names[RM_NSPLIT]; /* the JSON's idle_*_ns keys */
extern const char *const rm_gap_names[RM_NGAP];     /* the JSON's cause names */

typedef struct {
    uint64_t start, len; /* start relative to t0 */
    int cause;
    uint64_t split[RM_NSPLIT];
} rm_gap;

typedef struct {
    uint32_t pid;
    int device;
    uint64_t window_start, window, busy; /* window_start relative to t0 */
    uint64_t split[RM_NSPLIT];
    uint64_t gap_count[RM_NGAP], gap_ns[RM_NGAP];
    rm_gap top[RM_TOP];                  /* longest first; ties: earliest first */
    int ntop;
} rm_breakdown;

/* Durations of one table row: every value, sorted, for exact medians. */
typedef struct {
    char *name;
    uint64_t n, total, min, max, failures, bytes;
    uint64_t *v;
    size_t cap;
} rm_stat;

typedef struct {
    uint64_t t0;
    rm_breakdown *bd;
    size_t nbd;
    rm_stat *kernels, *api, *copies; /* copies: name is "OP/HOSTKIND" as the JSON's op, host_kind */
    size_t nkernels, napi, ncopies;
} rm_result;

/* Reads the trace files (a directory: its *.cutrace files) and computes the reference. NULL
 * with the reason in err when nothing can be read. */
rm_result *rm_compute(const char *path, char *err, size_t errlen);
void rm_free(rm_result *r);
/* The two middle values of a row (the same one for an odd count; 0 for an empty row). */
void rm_middle(const rm_stat *s, uint64_t *lo, uint64_t *hi);

/* Compares `cutrace summary --json` (parsed) with the reference: the breakdown of every process
 * and device (exactly, for processes whose late_points is 0), and the kernel, copy and API
 * tables (counts, totals, minima, maxima and failures exactly; medians within the sketch's
 * documented error, analyzer/ct_sketch.h). Prints each difference to stderr after `what`;
 * returns their number. */
struct tj;
int rm_diff(const rm_result *r, const struct tj *summary, const char *what);
/* cutrace summary --json [extra] on path against the reference: the number of differences, or
 * -1 (with the reason printed) when either cannot read it. *out (if given) keeps the reference
 * (rm_free it). */
int rm_check(const char *path, const char *extra, const char *what, rm_result **out);

#endif
