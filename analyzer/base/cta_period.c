/* The period of a sequence of symbols (cta_period.h). */
#include "cta_period.h"

#include <stdlib.h>

#include "cta_map.h"

/* The period is looked for among CTA_PERIOD_WINDOW symbols at a time (every period up to a
 * third of them against each: quadratic in the window, so bounded), in a longer run in two
 * windows, its middle and its end (a start-up is at its beginning); each window's period is then
 * followed through the whole run, in one pass. */
#define CTA_PERIOD_WINDOW 8192u

/* The longest stretch of operations (their symbols sy) that repeats with period P (*lo its
 * first), scanning back from the end in blocks of at least a period, a tenth of each may differ.
 * An operation repeats if the one P later has its symbol exactly: a kernel more or less in an
 * iteration costs its comparison with the next, where a kernel shifted by one counted alike
 * would make every period one short of the true one repeat. Anywhere in the run:
 * a run ends with other work (an evaluation, a checkpoint's copies) as it begins with its
 * start-up. */
static size_t periodic_run(const uint32_t *sy, size_t n, size_t P, size_t *lo_out)
{
    size_t B = P > 32 ? P : 32, k = n - P, best = 0, top = n - P; /* top: the run's compared end */
    *lo_out = 0;
    while (k > 0) {
        size_t lo = k > B ? k - B : 0, bad = 0, allowed = (k - lo) / 10 + 1, first_bad = 0, i;
        for (i = k; i-- > lo;)
            if (sy[i] != sy[i + P] && !bad++)
                first_bad = i;
            else if (bad > allowed)
                break;
        size_t low = bad > allowed ? first_bad + 1 : lo; /* where the run reaches down to */
        if (top > low && top + P - low > best) {
            best = top + P - low;
            *lo_out = low;
        }
        if (bad > allowed) {
            k = i;
            top = i; /* a run may start below the mismatches */
        } else {
            k = lo;
        }
    }
    return best;
}

/* Whether a stretch of len symbols repeating with period P, of n, is a loop: three iterations
 * at least, CTA_PERIOD_MIN_LOOP symbols at least (a kernel run three times running is not a
 * loop), and a quarter of the symbols at least (a loop is what the run does most). */
#define CTA_PERIOD_MIN_LOOP 24
static int loop_like(size_t len, size_t P, size_t n)
{
    return len >= 3 * P && len >= CTA_PERIOD_MIN_LOOP && 4 * len >= n;
}

/* Whether no stretch repeating with period P in sy[0..n) can be as long as a loop (loop_like),
 * found cheaper than periodic_run, which then runs only for the periods that pass. A run's
 * compared symbols hold at most a block's allowance (a tenth of B, and one) in each block
 * they touch, and a stretch of m of them touches at most m / B + 2 blocks; the chunks of
 * CTA_PERIOD_CHUNK symbols wholly inside such a stretch hold no more. cnt: room for the
 * chunks. */
#define CTA_PERIOD_CHUNK 64
static int cannot_loop(const uint32_t *sy, size_t n, size_t P, uint32_t *cnt)
{
    size_t need = 3 * P > CTA_PERIOD_MIN_LOOP ? 3 * P : CTA_PERIOD_MIN_LOOP;
    need = need > (n + 3) / 4 ? need : (n + 3) / 4;
    if (need > n)
        return 1; /* no run is longer than the window */
    size_t m = need - P, B = P > 32 ? P : 32, most = (m / B + 2) * (B / 10 + 1);
    if (m / CTA_PERIOD_CHUNK < 2)
        return 0;
    size_t whole = m / CTA_PERIOD_CHUNK - 1, nc = (n - P) / CTA_PERIOD_CHUNK;
    if (nc < whole)
        return 1;
    for (size_t c = 0; c < nc; c++) {
        uint32_t bad = 0;
        const uint32_t *a = sy + c * CTA_PERIOD_CHUNK, *b = a + P;
        for (size_t i = 0; i < CTA_PERIOD_CHUNK; i++)
            bad += a[i] != b[i];
        cnt[c] = bad;
    }
    size_t sum = 0;
    for (size_t c = 0; c < nc; c++) {
        sum += cnt[c];
        if (c >= whole)
            sum -= cnt[c - whole];
        if (c + 1 >= whole && sum <= most)
            return 0;
    }
    return 1;
}

/* The period of sy[0..n) (n at most CTA_PERIOD_WINDOW): the shortest repeating nearly as long
 * as any, its repetition's first symbol in *from, the longest repetition of any period in *len;
 * 0: none is a loop. */
static size_t window_period(const uint32_t *sy, size_t n, size_t *len_out, size_t *from_out)
{
    size_t best_len = 0, maxP = n / 3;
    size_t *len = cta_xmalloc((maxP + 1) * 2 * sizeof *len, "the periods"), *from = len + maxP + 1;
    uint32_t *cnt = cta_xmalloc((n / CTA_PERIOD_CHUNK + 1) * sizeof *cnt, "the periods' chunks");
    /* no run is longer than the window: once one is as long, no later period changes the
     * choice below (the whole window repeating is what a steady state's window does) */
    size_t last = 0; /* the longest period tried */
    while (last < maxP && best_len < n) {
        last++;
        len[last] = cannot_loop(sy, n, last, cnt) ? 0 : periodic_run(sy, n, last, &from[last]);
        if (loop_like(len[last], last, n) && len[last] > best_len)
            best_len = len[last];
    }
    /* the shortest period repeating nearly as long as any: a kernel repeated many times (an
     * optimizer's step over each parameter) repeats too, over a short stretch */
    size_t P = 0;
    for (size_t q = 1; q <= last && !P; q++)
        if (loop_like(len[q], q, n) && 10 * len[q] >= 9 * best_len)
            P = q;
    *len_out = P ? best_len : 0;
    *from_out = P ? from[P] : 0;
    free(len);
    free(cnt);
    return P;
}

size_t cta_period_find(const uint32_t *sy, size_t n, size_t *len, size_t *from)
{
    size_t best_len = 0, j = 0, P = 0;
    if (n <= CTA_PERIOD_WINDOW) {
        P = window_period(sy, n, &best_len, &j);
    } else {
        const size_t at[2] = {n / 2 - CTA_PERIOD_WINDOW / 2, n - CTA_PERIOD_WINDOW};
        for (int w = 0; w < 2; w++) {
            size_t l, f, q = window_period(sy + at[w], CTA_PERIOD_WINDOW, &l, &f);
            if (!q || q == P)
                continue;
            l = periodic_run(sy, n, q, &f);
            if (loop_like(l, q, n) && (l > best_len || (l == best_len && q < P))) {
                P = q;
                best_len = l;
                j = f;
            }
        }
    }
    *len = best_len;
    *from = j;
    return P;
}
