/* HTA's temporal breakdown (idle / compute / non-compute GPU time of a rank) of one Kineto
 * trace, with Holistic Trace Analysis 0.5.0's definitions (analyzer/KINETO.md lists them; the
 * tests check the figures against HTA's own on real traces).
 *
 * Contract: feed every event of one file (cta_hta_event is a cta_kevent_fn), then
 * cta_hta_result. Memory: one 32-byte record per event with a stream, and one entry per
 * correlation id of the other events (HTA's last-step filter needs them until the end). */
#ifndef CTA_HTA_H
#define CTA_HTA_H

#include <stdint.h>

#include "cta_kineto.h"

typedef struct cta_hta cta_hta;

typedef struct {
    uint64_t kernels; /* the events the breakdown covers (after the last-step filter) */
    int64_t kernel_us, idle_us, compute_us, non_compute_us;
    int last_step_dropped; /* HTA's filter applied (two or more ProfilerStep names) */
} cta_hta_res;

cta_hta *cta_hta_new(void);
/* ctx is the cta_hta; returns 0 (out of memory aborts, the analyzer's policy: cta_map.h). */
int cta_hta_event(void *ctx, const cta_kevent *e);
/* The distinct names containing "ProfilerStep" seen, counted to 2, and the first one (rule 3:
 * HTA counts them over every trace of its directory, the ranks of one job, together). */
int cta_hta_step_names(const cta_hta *h, const char **first);
/* The breakdown, once all events are in; drop_last_step: apply rule 3's filter (-1: when this
 * trace alone has two step names). kernels 0 (and no figures) when the trace has none. Call
 * once. */
void cta_hta_result(cta_hta *h, int drop_last_step, cta_hta_res *out);
void cta_hta_free(cta_hta *h);

/* HTA's kernel kinds: compute (1) or not (0: NCCL, memory, synchronisation and the like). */
int cta_hta_is_compute(const char *name);

#endif
