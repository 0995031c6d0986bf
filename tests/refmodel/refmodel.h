/* refmodel: a second, brute-force implementation of what `cutrace summary` computes, for the
 * differential tests (tests/refmodel/test-*.c). It shares no code with the analyzer: it uses the
 * format library only to decode records (in file order, no time-ordered merge), holds every
 * record it needs in memory and sorts everything. Definitions it follows (analyzer/README.md
 * "The breakdown", analyzer/JSON.md, the comments of analyzer/model/cta_model.h), stated here as the
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
 *  - Kernel and copy tables: every LAUNCH / COPY record is an instance (a copy of its bytes),
 *    but for those flagged captured (enqueued into a graph being captured: nothing ran),
 *    timed when a GPU record of the same file carries its correlation id; the GPU statistics
 *    are of those GPU records. A kernel's launch call time is the host time of the API record
 *    with the LAUNCH record's correlation id; its configuration is that of its earliest LAUNCH.
 *    A GPU record flagged end-bounded (CT_GPU_END_BOUND) makes its instance timed but bounded:
 *    a row's statistics (and its bytes for bandwidth) are of its exact instances, or where it
 *    has none, of its bounded ones (upper_bounds); Time % is of the sum of the rows' totals so
 *    taken. The busy time only bounded intervals cover is the measure of the union of all
 *    intervals outside the union of the exact ones.
 *    Kernel names are shown demangled (libstdc++'s __cxa_demangle on names starting "_Z").
 *    A copy row's peak (for peak_pct) is its earliest copy's device's: the memory's (clock x bus
 *    width x 2) for device-to-device copies and sets, else the host link's (PCIe lanes x the
 *    published per-lane rate of its generation), from the device's DEVICE record; copies on
 *    devices without one (or with a link of unknown rate) are passed over.
 *    With --variants, the same per kernel name and configuration ("<<<(gx,gy,gz),(bx,by,bz)>>>
 *    NAME").
 *  - API table: every API record, nested ones included, under the name the user wrote (nvcc's
 *    __cudaLaunchKernel and __cudaLaunchKernel_ptsz are cudaLaunchKernel); its layer from the
 *    record's driver flag; each row's time share of its layer's total.
 *  - A device's operations: the LAUNCH and COPY records naming it (host-to-host copies
 *    excluded), untimed those without a GPU record. A device with untimed operations has no
 *    breakdown figures (complete false): the missing work would count as idle. */
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
    uint64_t ops, untimed;               /* LAUNCH / COPY records on it, those never timed */
    uint64_t window_start, window, busy; /* window_start relative to t0; only when !untimed */
    uint64_t bounded_ops, busy_bounded;  /* end-bounded GPU records; busy time only they cover */
    uint64_t split[RM_NSPLIT];
    uint64_t gap_count[RM_NGAP], gap_ns[RM_NGAP];
    rm_gap top[RM_TOP];                  /* longest first; ties: earliest first */
    int ntop;
} rm_breakdown;

/* One table row. Durations: every value (n of them: timed instances, API calls), for exact
 * medians. Kernels and copies: instances / copies recorded (timed or not) and their bytes,
 * bytes of the timed ones. Kernels: launch call time, the earliest launch's configuration
 * (first_ts; config_tie when another configuration was launched at that instant too). */
typedef struct rm_stat {
    char *name;
    uint64_t n, total, min, max, failures, bytes;
    uint64_t *v;
    size_t cap;
    uint64_t recorded, timed_bytes, launch_ns, first_ts;
    uint32_t grid[3], block[3];
    int vary, config_tie;
    double peak_bps;  /* copies: the peak of the earliest copy's device with a known one ... */
    uint64_t peak_ts; /* ... (that copy's time; peak_tie: another peak at that instant too) */
    int peak_tie;
    int driver; /* API rows: 1 driver layer, 0 runtime */
    struct rm_stat *bnd; /* kernels, copies: the end-bounded instances' row (NULL: none); the
                          * fields above are of the exact ones */
} rm_stat;

/* One process's device, for processes[].devices: operations, and the peaks of its DEVICE
 * record (bytes/s; 0 when it has none or the link's rate is not known). */
typedef struct {
    uint32_t pid;
    int device;
    uint64_t ops, timed;
    int have_prop;
    double mem_peak, link_peak;
} rm_devops;

typedef struct {
    uint64_t t0;
    rm_breakdown *bd;
    size_t nbd;
    rm_stat *kernels, *api, *copies; /* copies: name is "OP/HOSTKIND" as the JSON's op, host_kind */
    rm_stat *variants;               /* kernels per launch configuration, named as --variants */
    size_t nkernels, napi, ncopies, nvariants;
    uint64_t kernel_ns, variant_ns;  /* the kernel and variant rows' shown totals, summed */
    uint64_t layer_ns[2];            /* API host time per layer */
    rm_devops *devs;
    size_t ndevs;
} rm_result;

/* Reads the trace files (a directory: its *.cutrace files) and computes the reference. NULL
 * with the reason in err when nothing can be read. */
rm_result *rm_compute(const char *path, char *err, size_t errlen);
void rm_free(rm_result *r);
/* The values a kernel or copy row's statistics are of: its exact ones, else its bounds. */
const rm_stat *rm_shown(const rm_stat *s);
/* A kernel or copy row's timed instances, exact and end-bounded. */
static inline uint64_t rm_timed(const rm_stat *s) { return s->n + (s->bnd ? s->bnd->n : 0); }
/* A kernel row's total: its exact values' sum plus each end-bounded instance at their mean
 * (nearest ns, halves up); with no exact value, the bounds' sum. */
uint64_t rm_kernel_total(const rm_stat *s);
/* The two middle values of a row (the same one for an odd count; 0 for an empty row). */
void rm_middle(const rm_stat *s, uint64_t *lo, uint64_t *hi);

/* Compares `cutrace summary --json` (parsed) with the reference: the breakdown of every process
 * and device (operations, untimed operations and completeness always; the figures exactly, for
 * complete entries of processes whose late_points is 0), each device's operation counts, and
 * every field of the kernel, copy and API tables (and of kernel_variants when the JSON has it) (counts, bytes, totals, minima, maxima,
 * failures, configurations and layers exactly; medians within the sketch's documented error,
 * analyzer/base/cta_sketch.h; averages, shares, rates and standard deviations to the JSON's 6
 * significant digits, the deviation also within the rounding of its one-pass formula; null
 * statistics where nothing was timed; kernel and API rows in JSON.md's order). Prints each difference to stderr after `what`; returns
 * their number. */
struct tj;
int rm_diff(const rm_result *r, const struct tj *summary, const char *what);
/* cutrace summary --json [extra] on path against the reference: the number of differences, or
 * -1 (with the reason printed) when either cannot read it. *out (if given) keeps the reference
 * (rm_free it). */
int rm_check(const char *path, const char *extra, const char *what, rm_result **out);

#endif
