#include "cta_series.h"

#include <string.h>

void cta_series_init(cta_series *s)
{
    memset(s, 0, sizeof *s);
    s->width = CTA_SERIES_MIN_NS;
}

static void coarsen(cta_series *s)
{
    for (uint32_t i = 0; i < CTA_SERIES_BINS / 2; i++) {
        s->sum[i] = s->sum[2 * i] + s->sum[2 * i + 1];
        uint64_t a = s->max[2 * i], b = s->max[2 * i + 1];
        s->max[i] = a > b ? a : b;
    }
    memset(s->sum + CTA_SERIES_BINS / 2, 0, sizeof s->sum / 2);
    memset(s->max + CTA_SERIES_BINS / 2, 0, sizeof s->max / 2);
    s->n = (s->n + 1) / 2;
    s->width *= 2;
}

/* Bin index for t (>= t0), coarsening until it fits; bins up to it are in use. */
static uint32_t bin(cta_series *s, uint64_t t)
{
    if (!s->started) {
        s->started = 1;
        s->t0 = t - t % CTA_SERIES_MIN_NS;
    }
    if (t < s->t0)
        t = s->t0; /* a late point lands in the first bin */
    while ((t - s->t0) / s->width >= CTA_SERIES_BINS)
        coarsen(s);
    uint32_t i = (uint32_t)((t - s->t0) / s->width);
    if (i + 1 > s->n) {
        /* a level carries over into bins nothing was noted in */
        for (uint32_t k = s->n; k <= i; k++)
            s->max[k] = s->last;
        s->n = i + 1;
    }
    return i;
}

void cta_series_add_interval(cta_series *s, uint64_t a, uint64_t b)
{
    if (a >= b)
        return;
    /* coarsen for the interval's end first, so the walk visits at most CTA_SERIES_BINS bins
     * however long the interval (a damaged trace's can last 2^63 ns) */
    bin(s, a);
    bin(s, b - 1);
    while (a < b) {
        uint32_t i = bin(s, a);
        /* the bin's end, which lies past the clock's end for the last bins of a long series */
        uint64_t end = s->width > (UINT64_MAX - s->t0) / (i + 1) ? UINT64_MAX
                                                                  : s->t0 + (uint64_t)(i + 1) * s->width;
        uint64_t e = b < end ? b : end;
        s->sum[i] += e - a;
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
