/* The analyzer's building blocks: the median sketch's documented error, the maps, JSON
 * escaping. */
#include "an_helpers.h"

#include <math.h>
#include <stdlib.h>

#include "cta_map.h"
#include "cta_out.h"
#include "cta_period.h"
#include "cta_sketch.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t p = *(const uint64_t *)a, q = *(const uint64_t *)b;
    return p < q ? -1 : p > q;
}

TEST_IMPL(sketch_quantiles_within_documented_error)
{
    cta_sketch s;
    cta_sketch_init(&s);
    uint64_t v[] = {5, 1, 4, 2, 3, 6};
    for (int i = 0; i < 6; i++)
        cta_sketch_add(&s, v[i]);
    ASSERT_INT(cta_sketch_quantile(&s, 0.5), ==, 4); /* exact: (3 + 4) / 2 rounded */
    ASSERT_INT(s.min, ==, 1);
    ASSERT_INT(s.max, ==, 6);
    ASSERT_NEAR(cta_sketch_stddev(&s), 1.8708, 0.001);
    cta_sketch_free(&s);
    /* 100000 log-uniform values from 1 us to 1 s: every decile within 1/32 of the truth */
    cta_sketch_init(&s);
    uint64_t *all = malloc(100000 * sizeof *all);
    ASSERT(all);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        all[i] = (uint64_t)(1000.0 * pow(1e6, (double)(x % 1000000) / 1e6));
        cta_sketch_add(&s, all[i]);
    }
    qsort(all, 100000, sizeof *all, cmp_u64);
    for (int d = 1; d < 10; d++) {
        double truth = (double)all[(size_t)(d * 0.1 * 99999)];
        ASSERT_NEAR((double)cta_sketch_quantile(&s, d * 0.1), truth, truth / 32 + 1);
    }
    free(all);
    cta_sketch_free(&s);
    return 0;
}

TEST_IMPL(maps_insert_find_delete)
{
    /* the join's maps: ct_hash under the analyzer's policy (the map itself: tests/format) */
    ct_hash m = {0};
    for (uint64_t k = 1; k <= 5000; k++)
        cta_xhash_put(&m, k * 7919, (uint32_t)k, "a test map");
    uint32_t v;
    for (uint64_t k = 1; k <= 5000; k += 2)
        ASSERT(ct_hash_del(&m, k * 7919, &v) && v == k);
    for (uint64_t k = 1; k <= 5000; k++)
        ASSERT_INT(ct_hash_find(&m, k * 7919) != NULL, ==, k % 2 == 0);
    ASSERT_UINT(m.n, ==, 2500);
    /* a record without a correlation id or address: not stored, not an abort */
    cta_xhash_put(&m, 0, 7, "a test map");
    ASSERT_UINT(m.n, ==, 2500);
    ASSERT(ct_hash_find(&m, 0) == NULL);
    ct_hash_free(&m);
    cta_map s;
    cta_map_init(&s);
    ASSERT_UINT(cta_map_get(&s, "a", 1, NULL), ==, 0);
    ASSERT_UINT(cta_map_get(&s, "b", 1, NULL), ==, 1);
    ASSERT_UINT(cta_map_get(&s, "a", 1, NULL), ==, 0);
    ASSERT_UINT(cta_map_find(&s, "c", 1), ==, UINT32_MAX);
    ASSERT_STR(cta_map_key(&s, 1), "b");
    cta_map_free(&s);
    return 0;
}

TEST_IMPL(json_and_text_escaping)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT(f);
    cta_json_escape(f, "a\"b\\c\n\x01\xff\xc3\xa9");
    fclose(f);
    ASSERT_STR(buf, "a\\\"b\\\\c\\u000a\\u0001\\ufffd\xc3\xa9");
    free(buf);
    char t[64];
    ASSERT_STR(cta_text_safe(t, sizeof t, "x\ty\xffz", 0), "x?y?z");
    ASSERT_STR(cta_text_safe(t, sizeof t, "abcdefghijkl", 8), "abcde...");
    ASSERT_STR(cta_fmt_ns(t, 1500), "1.50 us");
    ASSERT_STR(cta_fmt_bytes(t, 4294967296.0), "4.00 GiB");
    return 0;
}

/* A loop of 37 operations after a start-up of other ones, 1% of its operations replaced by
 * others (a kernel more or less in an iteration): the period is found through the noise, in a
 * run within one window and in one longer than a window (its middle's and end's), and its
 * repetition reaches back to the loop's first iteration within a few. The cheap rejection of
 * periods that cannot loop must not reject the true one (planted: a rejection that allows no
 * mismatch skips 37 here). */
static size_t period_of_noisy_loop(size_t startup, size_t iters, size_t *len, size_t *from)
{
    size_t n = startup + 37 * iters;
    uint32_t *sy = malloc(n * sizeof *sy);
    if (!sy)
        return 0;
    uint64_t x = 88172645463325252ull;
    for (size_t k = 0; k < n; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        sy[k] = k < startup ? 1000 + (uint32_t)(x % 500) : (k - startup) % 37;
        if (k >= startup && x % 100 == 0)
            sy[k] = 2000 + (uint32_t)(x >> 32) % 50;
    }
    size_t P = cta_period_find(sy, n, len, from);
    free(sy);
    return P;
}

TEST_IMPL(period_found_through_noise)
{
    size_t len, from;
    ASSERT_UINT(period_of_noisy_loop(300, 200, &len, &from), ==, 37);
    ASSERT_UINT(from, <, 300 + 5 * 37);
    ASSERT_UINT(period_of_noisy_loop(5000, 600, &len, &from), ==, 37);
    ASSERT_UINT(from, <, 5000 + 5 * 37);
    return 0;
}
