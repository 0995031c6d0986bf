/* A time series in a fixed number of bins: bins start CTA_SERIES_MIN_NS wide and, when time runs
 * past the last bin, every pair of bins merges and the width doubles, so memory stays constant
 * however long the trace. A series has `nch` channels of sums (time or amounts added per bin;
 * all channels share the bins) and, when made with a level, the maximum of what was noted per
 * bin (bytes in use). Its arrays are allocated at the first addition, so a device that never
 * had activity costs nothing. */
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
    uint32_t nch;
    int level;
    uint64_t *sum;                  /* channel c's bin i at sum[c * CTA_SERIES_BINS + i] */
    uint64_t *max;                  /* NULL without a level */
} cta_series;

void cta_series_init(cta_series *s, uint32_t nch, int level);
void cta_series_free(cta_series *s);
static inline const uint64_t *cta_series_ch(const cta_series *s, uint32_t ch)
{
    return s->sum + (uint64_t)ch * CTA_SERIES_BINS;
}
/* Adds the interval [a, b) to channel ch: its length (times w, rounded per bin, when w is not
 * 1) spread over the bins it covers; at most CTA_SERIES_BINS steps whatever its length. */
void cta_series_add_interval(cta_series *s, uint32_t ch, uint64_t a, uint64_t b, double w);
/* Raises the maximum of t's bin to v (a level holding from t on: later bins start from it). */
void cta_series_note(cta_series *s, uint64_t t, uint64_t v);
/* The bin holding t (t0 <= t; the series started), for walking channels over a span. */
uint32_t cta_series_bin(const cta_series *s, uint64_t t);

#endif
