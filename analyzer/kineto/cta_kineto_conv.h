/* Kineto (PyTorch profiler) traces as cutrace traces: each Kineto file is converted into a
 * temporary cutrace trace file (the format library's writer, FORMAT.md) holding the records
 * cutrace's tracer would have written for the same run, so that every command that reads traces
 * (summary, timeline, report, export) runs its own analysis on them unchanged (analyzer/KINETO.md
 * says what maps to what, and what a Kineto trace does not hold).
 *
 * Contract:
 * - Memory is bounded whatever the file's size: the reader holds one event at a time
 *   (cta_kineto.h), and the events are put in the order the trace format needs by an external
 *   merge sort whose memory is CTA_KSORT_BYTES per sort (two at most at once) plus a few
 *   KiB per sorted run spilled to a temporary file; beyond that only the distinct names (kernel,
 *   function and operator names), the threads and the correlation groups of one correlation id
 *   (a CUDA graph launch's kernels) are held.
 * - The converted trace is a new file in $TMPDIR (default /tmp); the sort's runs there too,
 *   unlinked as soon as they are created (cta_ksort.h). Removing the converted trace is the
 *   caller's (cta_kineto_open.h does it for the commands).
 * - A converted trace's header says where it came from: tracer_version "kineto" and
 *   tracer_options "source=kineto gpu_timing=1" (FORMAT.md 3.1), exe the Kineto file's path. */
#ifndef CTA_KINETO_CONV_H
#define CTA_KINETO_CONV_H

#include <stddef.h>

#include "cttrace.h"
#include "cta_kineto.h"

/* Why an event of a kind the conversion reads was dropped: D(id, JSON key, words). Times are
 * microseconds; beyond 2^52 us (142 years) nanoseconds would not fit in 64 bits. */
#define CTA_KDROPS(D)                                                                             \
    D(TS_MISSING, "ts_missing", "ts missing")                                                     \
    D(TS_NOT_NUMBER, "ts_not_a_number", "ts not a number")                                        \
    D(TS_NEGATIVE, "ts_negative", "ts negative")                                                  \
    D(TS_RANGE, "ts_out_of_range", "ts out of range (beyond 2^52 us)")                            \
    D(DUR_MISSING, "dur_missing", "dur missing")                                                  \
    D(DUR_NOT_NUMBER, "dur_not_a_number", "dur not a number")                                     \
    D(DUR_NEGATIVE, "dur_negative", "dur negative")                                               \
    D(DUR_RANGE, "dur_out_of_range", "dur out of range (ending beyond 2^52 us)")                  \
    D(PID_TID, "pid_or_tid_missing", "pid or tid missing or not a number")                        \
    D(TID_NEGATIVE, "tid_negative", "tid negative")                                               \
    D(MEMORY_FIELDS, "memory_fields_missing", "[memory] without a numeric Device Type, Addr or Bytes") \
    D(CORRELATION, "correlation_missing", "cuda_sync without a correlation")
#define CTA_KDROP_ENUM_(id, key, words) CTA_KDROP_##id,
enum { CTA_KDROPS(CTA_KDROP_ENUM_) CTA_KDROP_N };
#undef CTA_KDROP_ENUM_
extern const char *const cta_kdrop_key[CTA_KDROP_N], *const cta_kdrop_words[CTA_KDROP_N];

/* What the conversion of one file found, for the statement of what is missing. */
typedef struct {
    uint64_t kernels, copies, sets, runtime, syncs, ranges, steps;
    uint64_t copies_kind_unknown; /* copies whose name does not say pinned or pageable */
    uint64_t memory_events;       /* [memory] events of device memory (MEM records) */
    uint64_t gpu_without_call;    /* GPU work whose runtime call is not in the trace */
    uint64_t python_functions;
    uint64_t events;                /* objects of its traceEvents */
    uint64_t dropped[CTA_KDROP_N];  /* events of the kinds read, dropped: each for its first fault */
    uint64_t dropped_events;        /* their sum */
    uint64_t dropped_gpu;           /* of them, kernel, gpu_memcpy and gpu_memset events */
} cta_kconv_stats;

/* "12 dur not a number, 1 ts negative": the nonzero counts of st->dropped, into buf. */
const char *cta_kconv_dropped_text(const cta_kconv_stats *st, char *buf, size_t len);

/* Converts the Kineto trace `path` into a new cutrace trace file in $TMPDIR, whose name goes to
 * out. Returns 0, or -1 with "PATH: ..." in err. */
int cta_kineto_convert(const char *path, char *out, size_t outlen, cta_kmeta *meta,
                       cta_kconv_stats *st, char *err, size_t errlen);

/* What the analysis says of a Kineto trace with no GPU activity (no kernel, gpu_memcpy or
 * gpu_memset event): there is nothing to measure, not a zero; and of one whose GPU events were
 * all dropped (st->dropped_gpu of them: cta_kconv_dropped_text says why). */
extern const char cta_kineto_no_gpu[], cta_kineto_gpu_dropped[];

/* What a Kineto trace does not hold, as one sentence (the text summary's "not in it: ..."). */
extern const char cta_kineto_lacks[];

#endif
