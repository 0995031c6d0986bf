/* Fixed-size duration distribution: count, sum, min, max, sum of squares (for stddev) and a
 * log-bucketed histogram for the median, so that per-name statistics cost a constant amount of
 * memory however many instances a trace holds.
 *
 * Histogram: values below 64 ns have one bucket each (exact); above, each power of two is split
 * into 32 equal buckets, and a quantile reports the mean of the values in its bucket. The
 * relative error of a reported quantile is therefore less than 1/32 (3.1%) of the true value
 * (and exact when the bucket holds one distinct value, as fixed-cost kernels do), and the result
 * is always within [min, max]. While a sketch holds at most CT_SKETCH_EXACT values, it keeps them and
 * quantiles are exact (the common case in tests and for rare kernels).
 *
 * Memory: 64 bytes while it holds one value (a trace can name a million kernels once each), the
 * exact buffer (256 bytes) from the second value on, the histogram (~28 KB) instead of it past
 * CT_SKETCH_EXACT. */
#ifndef CT_SKETCH_H
#define CT_SKETCH_H

#include <stdint.h>

#define CT_SKETCH_EXACT 32
#define CT_SKETCH_SUB 32                      /* buckets per power of two */
#define CT_SKETCH_BUCKETS (64 + 58 * CT_SKETCH_SUB)

typedef struct {
    uint64_t count, sum, min, max;
    double sumsq;
    uint64_t *exact; /* CT_SKETCH_EXACT values, allocated at the second value */
    uint32_t *hist; /* CT_SKETCH_BUCKETS counts, allocated when the exact buffer overflows */
    uint64_t *hsum; /* sum of the values in each bucket */
} ct_sketch;

void ct_sketch_init(ct_sketch *s);
void ct_sketch_add(ct_sketch *s, uint64_t v);
/* q in [0,1]; 0 for an empty sketch. */
uint64_t ct_sketch_quantile(const ct_sketch *s, double q);
double ct_sketch_stddev(const ct_sketch *s);
void ct_sketch_free(ct_sketch *s);

#endif
