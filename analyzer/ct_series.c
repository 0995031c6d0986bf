#include "ct_series.h"

#include <string.h>

void ct_series_init(ct_series *s)
{
    memset(s, 0, sizeof *s);
    s->width = CT_SERIES_MIN_NS;
}

static void coarsen(ct_series *s)
{
    for (uint32_t i = 0; i < CT_SERIES_BINS / 2; i++) {
        s->sum[i] = s->sum[2 * i] + s->sum[2 * i + 1];
        uint64_t a = s->max[2 * i], b = s->max[2 * i + 1];
        s->max[i] = a > b ? a : b;
    }
    memset(s->sum + CT_SERIES_BINS / 2, 0, sizeof s->sum / 2);
    memset(s->max + CT_SERIES_BINS / 2, 0, sizeof s->max / 2);
    s->n = (s->n + 1) / 2;
    s->width *= 2;
}

/* Bin index for t (>= t0), coarsening until it fits; bins up to it are in use. */
static uint32_t bin(ct_series *s, uint64_t t)
{
    if (!s->started) {
        s->started = 1;
        s->t0 = t - t % CT_SERIES_MIN_NS;
    }
    if (t < s->t0)
        t = s->t0; /* a late point lands in the first bin */
    while ((t - s->t0) / s->width >= CT_SERIES_BINS)
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

void ct_series_add_interval(ct_series *s, uint64_t a, uint64_t b)
{
    if (a >= b)
        return;
    /* coarsen for the interval's end first, so the walk visits at most CT_SERIES_BINS bins
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

void ct_series_note(ct_series *s, uint64_t t, uint64_t v)
{
    uint32_t i = bin(s, t);
    if (v > s->max[i])
        s->max[i] = v;
    s->last = v;
}
