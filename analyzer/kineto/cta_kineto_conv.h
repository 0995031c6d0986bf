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

/* What the conversion of one file found, for the statement of what is missing. */
typedef struct {
    uint64_t kernels, copies, sets, runtime, syncs, ranges, steps;
    uint64_t copies_kind_unknown; /* copies whose name does not say pinned or pageable */
    uint64_t memory_events;       /* [memory] events of device memory (MEM records) */
    uint64_t gpu_without_call;    /* GPU work whose runtime call is not in the trace */
    uint64_t python_functions;
} cta_kconv_stats;

/* Converts the Kineto trace `path` into a new cutrace trace file in $TMPDIR, whose name goes to
 * out. Returns 0, or -1 with "PATH: ..." in err. */
int cta_kineto_convert(const char *path, char *out, size_t outlen, cta_kmeta *meta,
                       cta_kconv_stats *st, char *err, size_t errlen);

/* What the analysis says of a Kineto trace with no GPU activity (no kernel, gpu_memcpy or
 * gpu_memset event): there is nothing to measure, not a zero. */
extern const char cta_kineto_no_gpu[];

/* What a Kineto trace does not hold, as one sentence (the text summary's "not in it: ..."). */
extern const char cta_kineto_lacks[];

#endif
