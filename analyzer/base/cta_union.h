/* The measure of a union of intervals fed roughly in order of their end (records come in time
 * order, and a GPU record's time is its end). The union is kept as disjoint segments sorted by
 * time; segments that end more than `lag` before the latest end seen are folded into the total
 * and dropped (also the oldest beyond CTA_UNION_MAX_SEGS), so memory grows with the segments of
 * the last lag, not with the trace. An
 * interval reaching back past a dropped segment is still counted, but the time it shares with
 * dropped segments is counted again (as the breakdown's sweep applies its late points). */
#ifndef CTA_UNION_H
#define CTA_UNION_H

#include <stddef.h>
#include <stdint.h>

#define CTA_UNION_MAX_SEGS (1u << 20)

typedef struct {
    uint64_t (*seg)[2];  /* [start, end) from head to n-1: sorted, disjoint, not touching */
    size_t head, n, cap;
    uint64_t done;       /* measure of the dropped segments */
    uint64_t latest;     /* the latest end seen */
} cta_union;

void cta_union_add(cta_union *u, uint64_t a, uint64_t b, uint64_t lag);
uint64_t cta_union_len(const cta_union *u);
void cta_union_free(cta_union *u);

#endif
