#include "cta_sketch.h"
#include "cta_map.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cta_sketch_init(cta_sketch *s)
{
    memset(s, 0, sizeof *s);
    s->min = UINT64_MAX;
}

void cta_sketch_hold(cta_sketch *s, uint64_t v)
{
    if (s->count == 0)
        return; /* a first value is min */
    if (s->count < CTA_SKETCH_EXACT) {
        if (!s->exact) {
            /* a second value: the first is min */
            s->exact = cta_xmalloc(CTA_SKETCH_EXACT * sizeof *s->exact, "a distribution sketch");
            s->exact[0] = s->min;
        }
        s->exact[s->count] = v;
        return;
    }
    s->bins = cta_xmalloc_written(CTA_SKETCH_BUCKETS * sizeof *s->bins, "a distribution sketch");
    for (unsigned i = 0; i < CTA_SKETCH_EXACT; i++)
        cta_sketch_bin(s, s->exact[i]);
    free(s->exact);
    s->exact = NULL;
    cta_sketch_bin(s, v);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t cta_sketch_quantile(const cta_sketch *s, double q)
{
    return cta_sketch_quantile_in(s, q, 0, CTA_SKETCH_BUCKETS - 1);
}

uint64_t cta_sketch_quantile_in(const cta_sketch *s, double q, unsigned first, unsigned last)
{
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    if (!s->bins) {
        uint64_t v[CTA_SKETCH_EXACT];
        size_t n = 0;
        for (uint64_t i = 0; i < s->count; i++) {
            uint64_t x = s->count == 1 ? s->min : s->exact[i];
            unsigned b = cta_sketch_bucket(x);
            if (b >= first && b <= last)
                v[n++] = x;
        }
        if (n == 0)
            return 0;
        qsort(v, n, sizeof *v, cmp_u64);
        /* median of an even count: the mean of the two middle values, as nsys reports */
        double pos = q * (double)(n - 1);
        size_t lo = (size_t)pos, hi = lo + 1 < n ? lo + 1 : lo;
        double frac = pos - (double)lo;
        return (uint64_t)llround((double)v[lo] * (1 - frac) + (double)v[hi] * frac);
    }
    uint64_t n = 0, seen = 0;
    for (unsigned b = first; b <= last && b < CTA_SKETCH_BUCKETS; b++)
        n += s->bins[b].n;
    if (n == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)(n - 1));
    for (unsigned b = first; b <= last && b < CTA_SKETCH_BUCKETS; b++) {
        seen += s->bins[b].n;
        if (seen > rank) {
            uint64_t v = s->bins[b].sum / s->bins[b].n;
            return v < s->min ? s->min : v > s->max ? s->max : v;
        }
    }
    assert(0 && "histogram holds fewer values than its count");
    return s->max;
}

uint64_t cta_sketch_bucket_count(const cta_sketch *s, unsigned b)
{
    if (s->bins)
        return s->bins[b].n;
    uint64_t n = 0;
    for (uint64_t i = 0; i < s->count; i++)
        n += cta_sketch_bucket(s->count == 1 ? s->min : s->exact[i]) == b;
    return n;
}

void cta_sketch_bucket_bounds(unsigned b, uint64_t *lo, uint64_t *hi)
{
    if (b < 64) {
        *lo = b;
        *hi = b + 1ull;
        return;
    }
    unsigned e = (b - 64) / CTA_SKETCH_SUB + 6, m = (b - 64) % CTA_SKETCH_SUB;
    *lo = (uint64_t)(CTA_SKETCH_SUB + m) << (e - 5);
    *hi = (uint64_t)(CTA_SKETCH_SUB + m + 1) << (e - 5);
}

double cta_sketch_stddev(const cta_sketch *s)
{
    if (s->count < 2)
        return 0;
    double n = (double)s->count, mean = (double)s->sum / n;
    double var = (s->sumsq - n * mean * mean) / (n - 1);
    return var > 0 ? sqrt(var) : 0;
}

void cta_sketch_free(cta_sketch *s)
{
    free(s->exact);
    free(s->bins);
    s->exact = NULL;
    s->bins = NULL;
}

/* The values a sketch still holds (no histogram yet). */
static uint64_t held(const cta_sketch *s, uint64_t i) { return s->count == 1 ? s->min : s->exact[i]; }

void cta_sketch_merge(cta_sketch *dst, const cta_sketch *src)
{
    if (!src->count)
        return;
    if (!src->bins) {
        for (uint64_t i = 0; i < src->count; i++)
            cta_sketch_add(dst, held(src, i));
        return;
    }
    if (!dst->bins) {
        dst->bins = cta_xmalloc_written(CTA_SKETCH_BUCKETS * sizeof *dst->bins,
                                        "a distribution sketch");
        for (uint64_t i = 0; i < dst->count; i++)
            cta_sketch_bin(dst, held(dst, i));
        free(dst->exact);
        dst->exact = NULL;
    }
    for (unsigned i = 0; i < CTA_SKETCH_BUCKETS; i++) {
        dst->bins[i].n += src->bins[i].n;
        dst->bins[i].sum += src->bins[i].sum;
    }
    dst->count += src->count;
    dst->sum += src->sum;
    dst->sumsq += src->sumsq;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}
