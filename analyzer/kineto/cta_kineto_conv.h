/* Kineto (PyTorch profiler) traces as cutrace traces: each Kineto file is converted into a
 * temporary cutrace trace file (the format library's writer, FORMAT.md) holding the records
 * cutrace's tracer would have written for the same run, so that every command that reads traces
 * (summary, timeline, report, export) runs its own analysis on them unchanged (analyzer/KINETO.md
 * says what maps to what, and what a Kineto trace does not hold).
 *
 * Contract:
 * - Memory is bounded whatever the file's size: the reader holds one event at a time
 *   (cta_kineto.h), and the events are put in the order the trace format needs by an external
 *   merge sort whose memory is CTA_KCONV_SORT_BYTES per sort (two at most at once) plus a few
 *   KiB per sorted run spilled to a temporary file; beyond that only the distinct names (kernel,
 *   function and operator names), the threads and the correlation groups of one correlation id
 *   (a CUDA graph launch's kernels) are held.
 * - The temporary files live in $TMPDIR (default /tmp): the sort's runs are unlinked as soon as
 *   they are created; the converted trace when the process exits (atexit), whether the command
 *   succeeded or not, or is ended by SIGINT, SIGTERM, SIGHUP or SIGPIPE (a handler removes them
 *   and lets the signal end the process, where the program had left the default action).
 * - A converted trace's header says where it came from: tracer_version "kineto" and
 *   tracer_options "source=kineto gpu_timing=1" (FORMAT.md 3.1), exe the Kineto file's path. */
#ifndef CTA_KINETO_CONV_H
#define CTA_KINETO_CONV_H

#include <stddef.h>

#include "cttrace.h"
#include "cta_kineto.h"

#define CTA_KCONV_SORT_BYTES (8u << 20)

/* What the conversion of one file found, for the statement of what is missing. */
typedef struct {
    uint64_t kernels, copies, sets, runtime, syncs, ranges, steps;
    uint64_t copies_kind_unknown; /* copies whose name does not say pinned or pageable */
    uint64_t memory_events;       /* [memory] events of device memory (MEM records) */
    uint64_t gpu_without_call;    /* GPU work whose runtime call is not in the trace */
    uint64_t python_functions;
} cta_kconv_stats;

/* Converts the Kineto trace `path` into a new cutrace trace file in $TMPDIR, whose name goes to
 * out (removed at exit). Returns 0, or -1 with "PATH: ..." in err. */
int cta_kineto_convert(const char *path, char *out, size_t outlen, cta_kmeta *meta,
                       cta_kconv_stats *st, char *err, size_t errlen);

/* The `cta_load_open` of Kineto inputs: paths are Kineto files or directories of them (HTA's
 * trace_dir, cta_kineto_files); kineto is cta_kineto_inputs' answer (-1: mixed, an error).
 * Converts each file once per process (a second pass, as the overview's, reuses it) and opens
 * the converted traces; the reader's warnings name the Kineto file, and the missing END record
 * (a Kineto trace never has one) is not warned about. Returns a CTA_EXIT_* status. */
int cta_kineto_open(const char *cmd, char *const *paths, int npaths, int kineto, ct_reader **rd);

/* The Kineto file a converted trace came from (by its header), NULL for a cutrace trace. */
const char *cta_kineto_source(const ct_reader *rd, uint32_t file);
/* The file to name for trace `file` of rd: the Kineto file it was converted from, else its
 * own path. */
const char *cta_kineto_display_path(const ct_reader *rd, uint32_t file);
/* The conversion's counts of that file (NULL for a cutrace trace, and for one whose header
 * says "kineto" that this command did not convert). */
const cta_kconv_stats *cta_kineto_source_stats(const ct_reader *rd, uint32_t file);

/* What the analysis says of a Kineto trace with no GPU activity (no kernel, gpu_memcpy or
 * gpu_memset event): there is nothing to measure, not a zero. */
extern const char cta_kineto_no_gpu[];

/* What a Kineto trace does not hold, as one sentence (the text summary's "not in it: ..."). */
extern const char cta_kineto_lacks[];

#endif
