/* Reading the Chrome-trace JSON the PyTorch profiler (Kineto) writes, `.json` or `.json.gz`
 * (zlib reads both; the content decides, never the name).
 *
 * Contract:
 * - Streaming: the file is read in fixed-size blocks and one trace event is held at a time, so
 *   memory is bounded by the longest event (its strings together at most CTA_KINETO_MAX_EVENT
 *   bytes) and the nesting depth (at most CTA_KINETO_MAX_DEPTH), never by the file's size.
 * - The text may be gzip-compressed, and that gzip inside gzip, and start with a UTF-8
 *   byte-order mark (cta_ksrc.h).
 * - Every object of the top-level `traceEvents` array (or of the top-level array: Chrome's
 *   array form, whose closing ']' may be missing) is handed to the callback, in file order,
 *   with the fields cutrace uses decoded (below); anything else in an event is skipped.
 *   `distributedInfo.rank` and the number of `deviceProperties` entries go to the meta data,
 *   final only when the read returns (Kineto may write them after the events).
 * - A document without a traceEvents array (`{}`, `null`) is refused: "PATH: a JSON document
 *   with no trace events: expected ..., found ...".
 * - The whole document must be valid JSON (RFC 8259): on the first violation the read stops
 *   with an error naming the file, the byte offset (in the decompressed text, for a gzip file)
 *   and what was expected against what was found. Events already delivered stay delivered.
 */
#ifndef CTA_KINETO_H
#define CTA_KINETO_H

#include <stddef.h>
#include <stdint.h>

#define CTA_KINETO_MAX_EVENT (16u << 20)
#define CTA_KINETO_MAX_DEPTH 64

/* A number field: has is 0 when absent, not a number, or beyond 2^53 in magnitude (HTA's
 * default then applies), and why says which; when has is 1, v converts to int64_t safely. */
enum { CTA_KNUM_ABSENT, CTA_KNUM_NOT_NUMBER, CTA_KNUM_HUGE };
typedef struct {
    double v;
    int has;
    int why; /* CTA_KNUM_*, when has is 0 */
} cta_knum;

/* One trace event. Strings are NUL-terminated, "" when absent, and valid only during the
 * callback. pid and tid are numbers or strings in Kineto (a kernel's tid may read "stream 7"):
 * the number when a number, else the string in pid_str / tid_str. */
typedef struct {
    const char *ph, *cat, *name, *pid_str, *tid_str;
    int has_cat, has_name;
    cta_knum ts, dur, pid, tid; /* ts, dur in microseconds, as written */
    /* args */
    cta_knum device, stream, correlation, external_id, bytes;
    int64_t grid[3], block[3]; /* 0 when absent */
    cta_knum shared_memory;    /* "shared memory": a kernel's dynamic shared memory, bytes */
    /* a [memory] instant event's: "Device Type" (0 CPU, 1 CUDA), "Device Id", "Addr", "Bytes"
     * (negative for a free), "Total Allocated" */
    cta_knum mem_dev_type, mem_dev_id, mem_addr, mem_bytes, mem_total;
    const char *arg_name;      /* "name" (a metadata event's: a process's or thread's name) */
} cta_kevent;

/* One entry of the document's deviceProperties (0 where absent). */
#define CTA_KINETO_MAX_DEVICES 16
typedef struct {
    int64_t id, sms, cc_major, cc_minor, warp_size, regs_per_sm, smem_per_sm, threads_per_sm;
    uint64_t mem_bytes;
    char name[128];
} cta_kdevice;

typedef struct {
    int64_t rank; /* distributedInfo.rank */
    int has_rank;
    int ndevices; /* entries of deviceProperties */
    cta_kdevice devices[CTA_KINETO_MAX_DEVICES]; /* the first of them */
    uint64_t events;
} cta_kmeta;

/* Return nonzero to stop the read (cta_kineto_read then returns that value). */
typedef int (*cta_kevent_fn)(void *ctx, const cta_kevent *e);

/* What a file is, by its content (after any layers of gzip, a UTF-8 byte-order mark and blanks):
 * CTA_KFILE_TRACE, a Kineto trace: an object whose first 64 KiB hold the key "traceEvents", or
 * Chrome's array form (first byte '['); CTA_KFILE_JSON, other JSON (an object without that key
 * early, a string, null, true, false), gzip holding something else, or UTF-16 text, which a
 * file named alone is read as, for the read to say what it is; CTA_KFILE_TIMELINE, a trace
 * object that holds CTA_TIMELINE_MARK before "traceEvents"; CTA_KFILE_OTHER, anything else
 * (a cutrace trace); -1 (errno set) if it cannot be opened. */
enum { CTA_KFILE_OTHER, CTA_KFILE_TRACE, CTA_KFILE_JSON, CTA_KFILE_TIMELINE };
int cta_kineto_sniff(const char *path);
/* What `cutrace timeline` writes before its events (Chrome's trace format keeps otherData for
 * such metadata): the sniff tells its output (CTA_KFILE_TIMELINE) from a PyTorch profiler trace,
 * whose events it would otherwise be read as, losing the copies' kinds and the stacks. */
#define CTA_TIMELINE_MARK "\"otherData\":{\"producer\":\"cutrace timeline\"}"

/* Reads the whole file: 0 when it was read to its end, the callback's nonzero value when it
 * stopped the read, -1 with the reason in err ("PATH: byte N: expected X, found Y", or the
 * system's or zlib's error) otherwise. meta is filled in every case. */
int cta_kineto_read(const char *path, cta_kevent_fn fn, void *ctx, cta_kmeta *meta, char *err,
                    size_t errlen);

#endif
