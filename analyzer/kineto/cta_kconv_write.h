/* The Kineto conversion's last pass (cta_kineto_conv.h): the records of the sort by time written
 * as a cutrace trace, each thread's in its own stream, the GPU's in a stream of the process.
 *
 * Contract: the trace's string, thread and device definitions come first (at the time of the
 * first record); then the records in time order. A stream's chunk is written when it is full and
 * every CTA_KCONV_FLUSH_EVERY records all are, so that the chunks' low-water marks move and the
 * reader holds a bounded window. The header says where the trace came from (cta_kineto_conv.h). */
#ifndef CTA_KCONV_WRITE_H
#define CTA_KCONV_WRITE_H

#include <string.h>

#include "cta_kineto.h"
#include "cta_ksort.h"
#include "cta_map.h"
#include "cttrace.h"

#define CTA_KCONV_FLUSH_EVERY 65536

/* cta_kit.kind of the records in the sort by time */
enum {
    CTA_KR_API = 1, CTA_KR_LAUNCH, CTA_KR_COPY, CTA_KR_SYNC, CTA_KR_GPU, CTA_KR_NVTX_BEGIN,
    CTA_KR_NVTX_RANGE, CTA_KR_MEM,
};

typedef struct {
    uint32_t tid, name;
} cta_kthread;

/* What the trace is made of: the conversion fills it, the writer writes it. */
typedef struct {
    const char *path;      /* the Kineto file */
    cta_ksort by_time;     /* the records */
    cta_map names;         /* string id - 1 */
    uint32_t pid;
    uint32_t proc_name;    /* string id of the process's name (process_name metadata) */
    cta_kthread *threads;
    size_t nthreads, threads_cap;
    uint32_t devices_used; /* bit per device with GPU work */
} cta_ktrace;

/* The string id of s in t (interned now if new; ids start at 1, as the trace's STRING records,
 * which keep a text too long for them cut, with its length). */
static inline uint32_t cta_ktrace_str_id(cta_ktrace *t, const char *s)
{
    return cta_map_get(&t->names, s, strlen(s), NULL) + 1;
}

/* Writes t's sort by time (its adding over) into fd, which it closes. Returns 0, or -1 (errno
 * set when the system said why). */
int cta_kconv_write(cta_ktrace *t, int fd, const cta_kmeta *meta);

#endif
