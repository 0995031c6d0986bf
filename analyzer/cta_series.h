/* A time series in a fixed number of bins: bins start CTA_SERIES_MIN_NS wide and, when time runs
 * past the last bin, every pair of bins merges and the width doubles, so memory stays constant
 * however long the trace. Each bin keeps the sum of what was added (busy time) and the maximum
 * of what was noted (bytes in use). */
#ifndef CTA_SERIES_H
#define CTA_SERIES_H

#include <stdint.h>

#define CTA_SERIES_BINS 1024
#define CTA_SERIES_MIN_NS 1000000ull /* 1 ms */

typedef struct {
    uint64_t t0, width;
    uint32_t n;                     /* bins used */
    int started;
    uint64_t last;                  /* the last level noted */
    uint64_t sum[CTA_SERIES_BINS];
    uint64_t max[CTA_SERIES_BINS];
} cta_series;

void cta_series_init(cta_series *s);
/* Adds the interval [a, b) (its length, spread over the bins it covers) to the sums; at most
 * CTA_SERIES_BINS steps whatever its length. */
void cta_series_add_interval(cta_series *s, uint64_t a, uint64_t b);
/* Raises the maximum of t's bin to v (a level holding from t on: later bins start from it). */
void cta_series_note(cta_series *s, uint64_t t, uint64_t v);

#endif
