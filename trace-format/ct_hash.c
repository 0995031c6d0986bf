/* The integer-keyed hash map (contract in ct_hash.h). */
#include "ct_hash.h"

#include <stdlib.h>

/* Moves every key into a new table of ncap slots (a power of two that holds them). */
static int ct__hash_rehash(ct_hash *h, size_t ncap)
{
    if (ncap > SIZE_MAX / sizeof(uint64_t))
        return CT_E_NOMEM;
    ct_hash nh = {.keys = calloc(ncap, sizeof(uint64_t)), .vals = malloc(ncap * sizeof(uint32_t)),
                  .cap = ncap, .n = h->n};
    if (!nh.keys || !nh.vals) {
        free(nh.keys);
        free(nh.vals);
        return CT_E_NOMEM;
    }
    for (size_t i = 0; i < h->cap; i++) {
        if (!h->keys[i])
            continue;
        size_t j = ct_hash_slot(&nh, h->keys[i]);
        nh.keys[j] = h->keys[i];
        nh.vals[j] = h->vals[i];
    }
    free(h->keys);
    free(h->vals);
    *h = nh;
    return 0;
}

int ct_hash_reserve(ct_hash *h, size_t n)
{
    size_t cap = CT_HASH_MIN_CAP;
    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 2)
            return CT_E_NOMEM;
        cap *= 2;
    }
    return cap > h->cap ? ct__hash_rehash(h, cap) : 0;
}

int ct_hash_put(ct_hash *h, uint64_t key, uint32_t val)
{
    if (!key)
        return CT_E_INVAL;
    size_t i = 0;
    if (h->cap) {
        i = ct_hash_slot(h, key);
        if (h->keys[i]) {
            h->vals[i] = val;
            return 0;
        }
    }
    if (h->n + 1 > h->cap / 2) {
        int rc = ct_hash_reserve(h, h->n + 1);
        if (rc < 0)
            return rc;
        i = ct_hash_slot(h, key);
    }
    h->keys[i] = key;
    h->vals[i] = val;
    h->n++;
    return 1;
}

int ct_hash_del(ct_hash *h, uint64_t key, uint32_t *val)
{
    if (!h->cap)
        return 0;
    size_t mask = h->cap - 1, i = ct_hash_slot(h, key);
    if (!h->keys[i])
        return 0;
    if (val)
        *val = h->vals[i];
    h->keys[i] = 0;
    h->n--;
    /* Slot i is now a hole in the probe run that continues after it: move back each later key
     * of the run whose home is not cyclically within (i, j], so that no lookup stops early. */
    for (size_t j = (i + 1) & mask; h->keys[j]; j = (j + 1) & mask) {
        size_t home = ct_hash_mix(h->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            h->keys[i] = h->keys[j];
            h->vals[i] = h->vals[j];
            h->keys[j] = 0;
            i = j;
        }
    }
    return 1;
}

void ct_hash_free(ct_hash *h)
{
    free(h->keys);
    free(h->vals);
    *h = (ct_hash){0};
}
