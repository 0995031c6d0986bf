#include "cta_union.h"
#include "cta_map.h"

#include <stdlib.h>
#include <string.h>

void cta_union_add(cta_union *u, uint64_t a, uint64_t b, uint64_t lag)
{
    if (b <= a)
        return;
    if (b > u->latest)
        u->latest = b;
    /* segments ending before a (not touching) stay; those from i to k-1 merge with [a, b) */
    size_t k = u->n;
    while (k > u->head && u->seg[k - 1][0] > b)
        k--;
    size_t i = k;
    while (i > u->head && u->seg[i - 1][1] >= a)
        i--;
    if (i < k) {
        if (u->seg[i][0] < a)
            a = u->seg[i][0];
        if (u->seg[k - 1][1] > b)
            b = u->seg[k - 1][1];
        memmove(&u->seg[i + 1], &u->seg[k], (u->n - k) * sizeof *u->seg);
        u->n -= k - i - 1;
    } else {
        if (u->n == u->cap && u->head) { /* compact: the dropped ones make room */
            memmove(u->seg, &u->seg[u->head], (u->n - u->head) * sizeof *u->seg);
            u->n -= u->head;
            i -= u->head;
            u->head = 0;
        }
        if (u->n == u->cap) {
            u->cap = u->cap ? 2 * u->cap : 64;
            u->seg = cta_xrealloc(u->seg, u->cap * sizeof *u->seg, "an interval union");
        }
        memmove(&u->seg[i + 1], &u->seg[i], (u->n - i) * sizeof *u->seg);
        u->n++;
    }
    u->seg[i][0] = a;
    u->seg[i][1] = b;
    /* past CTA_UNION_MAX_SEGS segments (a span a hostile file declares) the oldest go anyway */
    while (u->head < u->n &&
           (u->latest - u->seg[u->head][1] > lag || u->n - u->head > CTA_UNION_MAX_SEGS)) {
        u->done += u->seg[u->head][1] - u->seg[u->head][0];
        u->head++;
    }
}

uint64_t cta_union_len(const cta_union *u)
{
    uint64_t len = u->done;
    for (size_t i = u->head; i < u->n; i++)
        len += u->seg[i][1] - u->seg[i][0];
    return len;
}

void cta_union_free(cta_union *u)
{
    free(u->seg);
    memset(u, 0, sizeof *u);
}
