#include "cta_series.h"

#include <stdlib.h>
#include <string.h>

#include "cta_map.h"

void cta_series_init(cta_series *s, uint32_t nch, int level)
{
    memset(s, 0, sizeof *s);
    s->width = CTA_SERIES_MIN_NS;
    s->nch = nch;
    s->level = level;
}

void cta_series_free(cta_series *s)
{
    free(s->sum);
    free(s->max);
    s->sum = s->max = NULL;
}

static void coarsen(cta_series *s)
{
    for (uint32_t c = 0; c < s->nch; c++) {
        uint64_t *v = s->sum + (uint64_t)c * CTA_SERIES_BINS;
        for (uint32_t i = 0; i < CTA_SERIES_BINS / 2; i++)
            v[i] = v[2 * i] + v[2 * i + 1];
        memset(v + CTA_SERIES_BINS / 2, 0, CTA_SERIES_BINS / 2 * sizeof *v);
    }
    if (s->max) {
        for (uint32_t i = 0; i < CTA_SERIES_BINS / 2; i++) {
            uint64_t a = s->max[2 * i], b = s->max[2 * i + 1];
            s->max[i] = a > b ? a : b;
        }
        memset(s->max + CTA_SERIES_BINS / 2, 0, CTA_SERIES_BINS / 2 * sizeof *s->max);
    }
    s->n = (s->n + 1) / 2;
    s->width *= 2;
}

uint32_t cta_series_bin(const cta_series *s, uint64_t t)
{
    uint64_t i = t > s->t0 ? (t - s->t0) / s->width : 0;
    return i < CTA_SERIES_BINS ? (uint32_t)i : CTA_SERIES_BINS - 1;
}

/* Bin index for t (>= t0), coarsening until it fits; bins up to it are in use. */
static uint32_t bin(cta_series *s, uint64_t t)
{
    if (!s->started) {
        s->started = 1;
        s->t0 = t - t % CTA_SERIES_MIN_NS;
        if (s->nch)
            s->sum = cta_xmalloc_written((size_t)s->nch * CTA_SERIES_BINS * sizeof *s->sum,
                                         "a time series");
        if (s->level)
            s->max = cta_xmalloc_written(CTA_SERIES_BINS * sizeof *s->max, "a time series");
    }
    if (t < s->t0)
        t = s->t0; /* a late point lands in the first bin */
    while ((t - s->t0) / s->width >= CTA_SERIES_BINS)
        coarsen(s);
    uint32_t i = (uint32_t)((t - s->t0) / s->width);
    if (i + 1 > s->n) {
        /* a level carries over into bins nothing was noted in */
        for (uint32_t k = s->n; s->max && k <= i; k++)
            s->max[k] = s->last;
        s->n = i + 1;
    }
    return i;
}

void cta_series_add_interval(cta_series *s, uint32_t ch, uint64_t a, uint64_t b, double w)
{
    if (a >= b)
        return;
    /* coarsen for the interval's end first, so the walk visits at most CTA_SERIES_BINS bins
     * however long the interval (a damaged trace's can last 2^63 ns) */
    bin(s, a);
    bin(s, b - 1);
    uint32_t i = bin(s, a);
    if (a < s->t0)
        a = s->t0;
    uint64_t *v = s->sum + (uint64_t)ch * CTA_SERIES_BINS;
    for (; a < b; i++) {
        /* the bin's end, which lies past the clock's end for the last bins of a long series */
        uint64_t end = s->width > (UINT64_MAX - s->t0) / (i + 1) ? UINT64_MAX
                                                                  : s->t0 + (uint64_t)(i + 1) * s->width;
        uint64_t e = b < end ? b : end;
        v[i] += w == 1 ? e - a : (uint64_t)((double)(e - a) * w + 0.5);
        a = e;
    }
}

void cta_series_note(cta_series *s, uint64_t t, uint64_t v)
{
    uint32_t i = bin(s, t);
    if (v > s->max[i])
        s->max[i] = v;
    s->last = v;
}
