/* Fixed-size duration distribution: count, sum, min, max, sum of squares (for stddev) and a
 * log-bucketed histogram for the median, so that per-name statistics cost a constant amount of
 * memory however many instances a trace holds.
 *
 * Histogram: values below 64 ns have one bucket each (exact); above, each power of two is split
 * into 32 equal buckets, and a quantile reports the mean of the values in its bucket. The
 * relative error of a reported quantile is therefore less than 1/32 (3.1%) of the true value
 * (and exact when the bucket holds one distinct value, as fixed-cost kernels do), and the result
 * is always within [min, max]. While a sketch holds at most CTA_SKETCH_EXACT values, it keeps them and
 * quantiles are exact (the common case in tests and for rare kernels).
 *
 * Memory: 64 bytes while it holds one value (a trace can name a million kernels once each), the
 * exact buffer (256 bytes) from the second value on, the histogram (~28 KB) instead of it past
 * CTA_SKETCH_EXACT. */
#ifndef CTA_SKETCH_H
#define CTA_SKETCH_H

#include <stdint.h>

#define CTA_SKETCH_EXACT 32
#define CTA_SKETCH_SUB 32                      /* buckets per power of two */
#define CTA_SKETCH_BUCKETS (64 + 58 * CTA_SKETCH_SUB)

typedef struct {
    uint64_t count, sum, min, max;
    double sumsq;
    uint64_t *exact; /* CTA_SKETCH_EXACT values, allocated at the second value */
    /* CTA_SKETCH_BUCKETS, allocated when the exact buffer overflows; count and sum side by side,
     * so that adding a value touches one cache line */
    struct cta_sketch_bin {
        uint64_t sum;
        uint32_t n;
    } *bins;
} cta_sketch;

void cta_sketch_init(cta_sketch *s);

static inline unsigned cta_sketch_bucket(uint64_t v)
{
    if (v < 64)
        return (unsigned)v;
    unsigned e = 63 - (unsigned)__builtin_clzll(v); /* >= 6 */
    unsigned m = (unsigned)(v >> (e - 5)) & (CTA_SKETCH_SUB - 1);
    return 64 + (e - 6) * CTA_SKETCH_SUB + m;
}

static inline void cta_sketch_bin(cta_sketch *s, uint64_t v)
{
    struct cta_sketch_bin *b = &s->bins[cta_sketch_bucket(v)];
    b->n++;
    b->sum += v;
}

/* Keeps v while the sketch is small, and builds the histogram when it outgrows that. */
void cta_sketch_hold(cta_sketch *s, uint64_t v);

/* Inline: several values per trace record, nearly all into an existing histogram. */
static inline void cta_sketch_add(cta_sketch *s, uint64_t v)
{
    if (s->bins)
        cta_sketch_bin(s, v);
    else
        cta_sketch_hold(s, v);
    s->count++;
    s->sum += v;
    s->sumsq += (double)v * (double)v;
    if (v < s->min)
        s->min = v;
    if (v > s->max)
        s->max = v;
}
/* q in [0,1]; 0 for an empty sketch. */
uint64_t cta_sketch_quantile(const cta_sketch *s, double q);
/* The same of the values whose bucket (cta_sketch_bucket) is in [first, last]; 0 if none. */
uint64_t cta_sketch_quantile_in(const cta_sketch *s, double q, unsigned first, unsigned last);
double cta_sketch_stddev(const cta_sketch *s);
/* The values' distribution as the histogram's buckets, whether the sketch still holds its
 * values or not: the count of bucket b (0..CTA_SKETCH_BUCKETS-1) and its bounds [lo, hi). */
uint64_t cta_sketch_bucket_count(const cta_sketch *s, unsigned b);
void cta_sketch_bucket_bounds(unsigned b, uint64_t *lo, uint64_t *hi);
void cta_sketch_free(cta_sketch *s);
/* Adds src's values to dst, as if each had been added to it after dst's own (partial models
 * merged, cta_model_merge). */
void cta_sketch_merge(cta_sketch *dst, const cta_sketch *src);

#endif
