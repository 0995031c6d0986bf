/* ct_hash, the integer map the reader, the analyzer and the tracer share (ct_hash.h): lookups,
 * backward-shift deletion across the end of the table, growth at half load, the key 0 and
 * running out of memory. */
#include "fmt.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ct_hash.h"

static size_t home_of(const ct_hash *h, uint64_t key)
{
    return ct_hash_mix(key) & (h->cap - 1);
}

/* The table's invariant, checked slot by slot rather than through ct_hash_find: n keys, and no
 * empty slot between any key and its home (a lookup stops at the first empty slot). Counts in
 * *wrapped the keys whose probe run crossed the end of the table. */
static int check_table(const ct_hash *h, size_t *wrapped)
{
    size_t used = 0;
    for (size_t j = 0; j < h->cap; j++) {
        if (!h->keys[j])
            continue;
        used++;
        if (wrapped)
            *wrapped += j < home_of(h, h->keys[j]);
        for (size_t s = home_of(h, h->keys[j]); s != j; s = (s + 1) & (h->cap - 1))
            ASSERT(h->keys[s] != 0);
    }
    ASSERT_UINT(used, ==, h->n);
    return 0;
}

/* The next key above *after whose home in a table of cap slots is slot (*after becomes it). */
static uint64_t key_homed_at(size_t cap, size_t slot, uint64_t *after)
{
    uint64_t k = *after;
    do
        k++;
    while ((ct_hash_mix(k) & (cap - 1)) != slot);
    return *after = k;
}

TEST_IMPL(hash_put_find_replace_and_key_zero)
{
    ct_hash h = {0};
    ASSERT(ct_hash_find(&h, 5) == NULL);
    ASSERT_INT(ct_hash_del(&h, 5, NULL), ==, 0);
    /* 0 marks an empty slot: refused, and nothing allocated for it */
    ASSERT_INT(ct_hash_put(&h, 0, 1), ==, CT_E_INVAL);
    ASSERT_UINT(h.cap, ==, 0);
    ASSERT_INT(ct_hash_put(&h, 5, 50), ==, 1);
    ASSERT_INT(ct_hash_put(&h, UINT64_MAX, 7), ==, 1);
    ASSERT_INT(ct_hash_put(&h, 5, 51), ==, 0);
    ASSERT_UINT(h.n, ==, 2);
    ASSERT_UINT(*ct_hash_find(&h, 5), ==, 51);
    ASSERT_UINT(*ct_hash_find(&h, UINT64_MAX), ==, 7);
    ASSERT(ct_hash_find(&h, 0) == NULL);
    ASSERT(ct_hash_find(&h, 6) == NULL);
    ASSERT_INT(ct_hash_put(&h, 0, 1), ==, CT_E_INVAL);
    ASSERT_INT(ct_hash_del(&h, 0, NULL), ==, 0);
    ASSERT_UINT(h.n, ==, 2);
    uint32_t v = 0;
    ASSERT_INT(ct_hash_del(&h, 5, &v), ==, 1);
    ASSERT_UINT(v, ==, 51);
    ASSERT_INT(ct_hash_del(&h, 5, &v), ==, 0);
    ASSERT(ct_hash_find(&h, 5) == NULL);
    ASSERT_UINT(h.n, ==, 1);
    ct_hash_free(&h);
    ASSERT(h.keys == NULL && h.cap == 0 && h.n == 0);
    ASSERT(ct_hash_find(&h, UINT64_MAX) == NULL);
    return 0;
}

/* A probe run that starts at the last slots and continues at slot 0: deleting its first key
 * moves every later key of the run back by one, across the end of the table, except a key
 * already at its home. */
TEST_IMPL(hash_delete_shifts_back_across_the_end)
{
    ct_hash h = {0};
    ASSERT_INT(ct_hash_reserve(&h, 1), ==, 0);
    const size_t cap = h.cap, last = cap - 1;
    ASSERT_UINT(cap, ==, CT_HASH_MIN_CAP);
    uint64_t after = 0;
    /* homes: a, b, c at the second-to-last slot, d at the last, e at 0, f at 3 */
    uint64_t a = key_homed_at(cap, last - 1, &after), b = key_homed_at(cap, last - 1, &after);
    uint64_t c = key_homed_at(cap, last - 1, &after), d = key_homed_at(cap, last, &after);
    uint64_t e = key_homed_at(cap, 0, &after), f = key_homed_at(cap, 3, &after);
    uint64_t keys[] = {a, b, c, d, e, f};
    for (uint32_t i = 0; i < 6; i++)
        ASSERT_INT(ct_hash_put(&h, keys[i], i), ==, 1);
    /* linear probing wraps: a b | c d e f from slot cap-2 */
    ASSERT(h.keys[last - 1] == a && h.keys[last] == b && h.keys[0] == c && h.keys[1] == d &&
           h.keys[2] == e && h.keys[3] == f);
    if (check_table(&h, NULL))
        return 1;
    ASSERT_INT(ct_hash_del(&h, a, NULL), ==, 1);
    /* b, c, d, e each move back one slot (c and d across the end); f stays at its home */
    ASSERT(h.keys[last - 1] == b && h.keys[last] == c && h.keys[0] == d && h.keys[1] == e &&
           h.keys[2] == 0 && h.keys[3] == f);
    if (check_table(&h, NULL))
        return 1;
    /* d's home is the last slot: removing c (there) pulls d back across the end */
    ASSERT_INT(ct_hash_del(&h, c, NULL), ==, 1);
    ASSERT(h.keys[last] == d && h.keys[0] == e && h.keys[1] == 0);
    if (check_table(&h, NULL))
        return 1;
    for (uint32_t i = 0; i < 6; i++) {
        const uint32_t *v = ct_hash_find(&h, keys[i]);
        if (keys[i] == a || keys[i] == c)
            ASSERT(v == NULL);
        else
            ASSERT(v != NULL && *v == i);
    }
    ct_hash_free(&h);
    return 0;
}

/* Random inserts, replacements and deletions, most keys homed in the last eighth of the table
 * so that probe runs wrap, against a plain array of what each key holds. */
TEST_IMPL(hash_random_operations_match_a_model)
{
    enum { NKEYS = 200, OPS = 200000 };
    static uint64_t keys[NKEYS];
    static int64_t model[NKEYS]; /* -1: absent */
    ct_hash h = {0};
    ASSERT_INT(ct_hash_reserve(&h, NKEYS), ==, 0);
    const size_t cap = h.cap;
    uint64_t after = 0;
    for (size_t i = 0; i < NKEYS; i++) {
        keys[i] = key_homed_at(cap, i % 4 ? cap - 1 - i % (cap / 8) : i % cap, &after);
        model[i] = -1;
    }
    uint64_t x = 0x2545F4914F6CDD1Dull;
    size_t wrapped = 0;
    for (int op = 0; op < OPS; op++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t i = (size_t)(x >> 8) % NKEYS;
        if (x & 1) {
            uint32_t val = (uint32_t)(x >> 40);
            ASSERT_INT(ct_hash_put(&h, keys[i], val), ==, model[i] < 0);
            model[i] = val;
        } else {
            uint32_t val;
            ASSERT_INT(ct_hash_del(&h, keys[i], &val), ==, model[i] >= 0);
            if (model[i] >= 0)
                ASSERT_UINT(val, ==, (uint64_t)model[i]);
            model[i] = -1;
        }
        if (op % 997 == 0 && check_table(&h, &wrapped))
            return 1;
        const uint32_t *v = ct_hash_find(&h, keys[(i + 1) % NKEYS]);
        ASSERT_INT(v ? (int64_t)*v : -1, ==, model[(i + 1) % NKEYS]);
    }
    ASSERT_UINT(h.cap, ==, cap); /* reserved: never grew */
    ASSERT_UINT(wrapped, >, 0);
    size_t n = 0;
    for (size_t i = 0; i < NKEYS; i++) {
        const uint32_t *v = ct_hash_find(&h, keys[i]);
        ASSERT_INT(v ? (int64_t)*v : -1, ==, model[i]);
        n += model[i] >= 0;
    }
    ASSERT_UINT(h.n, ==, n);
    if (check_table(&h, NULL))
        return 1;
    ct_hash_free(&h);
    return 0;
}

/* The table doubles when an insertion would fill more than half of it; reserving makes room
 * once, so later insertions up to the reserved count do not move the table. */
TEST_IMPL(hash_grows_at_half_load_and_reserves)
{
    ct_hash h = {0};
    for (uint64_t k = 1; k <= CT_HASH_MIN_CAP / 2; k++)
        ASSERT_INT(ct_hash_put(&h, k, (uint32_t)k), ==, 1);
    ASSERT_UINT(h.cap, ==, CT_HASH_MIN_CAP);
    ASSERT_INT(ct_hash_put(&h, CT_HASH_MIN_CAP / 2 + 1, 0), ==, 1);
    ASSERT_UINT(h.cap, ==, 2 * CT_HASH_MIN_CAP);
    for (uint64_t k = CT_HASH_MIN_CAP / 2 + 2; k <= 5000; k++)
        ASSERT_INT(ct_hash_put(&h, k << 12, (uint32_t)k), ==, 1);
    ASSERT_UINT(h.cap, ==, 16384); /* 5000 keys: 8192 slots would be more than half full */
    for (uint64_t k = 1; k <= CT_HASH_MIN_CAP / 2; k++)
        ASSERT(ct_hash_find(&h, k) && *ct_hash_find(&h, k) == k);
    for (uint64_t k = CT_HASH_MIN_CAP / 2 + 2; k <= 5000; k++)
        ASSERT(ct_hash_find(&h, k << 12) && *ct_hash_find(&h, k << 12) == k);
    if (check_table(&h, NULL))
        return 1;
    ct_hash_free(&h);

    ASSERT_INT(ct_hash_reserve(&h, 3000), ==, 0);
    ASSERT_UINT(h.cap, ==, 8192);
    const uint64_t *table = h.keys;
    ASSERT_INT(ct_hash_reserve(&h, 10), ==, 0); /* never shrinks */
    for (uint64_t k = 1; k <= 3000; k++)
        ASSERT_INT(ct_hash_put(&h, k * 0x10000, (uint32_t)k), ==, 1);
    ASSERT(h.keys == table);
    ct_hash_free(&h);
    return 0;
}

/* A table that cannot grow leaves the map as it was: its keys all found, the new one absent. */
TEST_IMPL(hash_out_of_memory_leaves_the_map_unchanged)
{
    ct_hash h = {0};
    for (uint64_t k = 1; k <= 1000; k++)
        ASSERT_INT(ct_hash_put(&h, k, (uint32_t)k), ==, 1);
    const ct_hash before = h;
    /* more slots than memory can address: refused before any allocation */
    ASSERT_INT(ct_hash_reserve(&h, SIZE_MAX / 4), ==, CT_E_NOMEM);
    ASSERT(h.keys == before.keys && h.cap == before.cap && h.n == before.n);
#ifndef __SANITIZE_ADDRESS__ /* the sanitizer's shadow memory does not live under RLIMIT_AS */
    /* A real allocation failure: fill the table to half, then cap the address space below what
     * its doubling needs (this test runs in its own process). */
    ct_hash_free(&h);
    const uint64_t full = 1u << 19;
    for (uint64_t k = 1; k <= full; k++)
        ASSERT_INT(ct_hash_put(&h, k, (uint32_t)k), ==, 1);
    ASSERT_UINT(h.cap, ==, 2 * full);
    long pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    ASSERT(statm && fscanf(statm, "%ld", &pages) == 1);
    fclose(statm);
    struct rlimit old, lim;
    ASSERT_INT(getrlimit(RLIMIT_AS, &old), ==, 0);
    lim = old;
    /* 4 MiB to spare; the doubled table needs 24 (16 of keys, 8 of values) */
    lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (4u << 20);
    ASSERT_INT(setrlimit(RLIMIT_AS, &lim), ==, 0);
    const ct_hash full_map = h;
    int rc = ct_hash_put(&h, full + 1, 1);
    ASSERT_INT(setrlimit(RLIMIT_AS, &old), ==, 0);
    ASSERT_INT(rc, ==, CT_E_NOMEM);
    ASSERT(h.keys == full_map.keys && h.cap == full_map.cap && h.n == full_map.n);
    ASSERT(ct_hash_find(&h, full + 1) == NULL);
    for (uint64_t k = 1; k <= full; k++)
        ASSERT(ct_hash_find(&h, k) && *ct_hash_find(&h, k) == k);
    ASSERT_INT(ct_hash_put(&h, full + 1, 1), ==, 1); /* with the memory back */
    ASSERT_UINT(h.cap, ==, 4 * full);
#endif
    ct_hash_free(&h);
    return 0;
}
