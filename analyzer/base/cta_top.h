/* The largest few of a stream of items, by a 64-bit key, kept in a small array sorted largest
 * first: the longest gaps of a device, the slowest instances of an NVTX range, the largest holders
 * of memory. An item whose key equals one kept goes after it, and is dropped when the array is
 * full: the first seen of equals stays, whatever order they come in. */
#ifndef CTA_TOP_H
#define CTA_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Inserts item (size bytes; its key the uint64_t at key_off) into v, which holds *n items and
 * room for max (> 0); *n grows up to max. O(max): the arrays are a few entries long. */
static inline void cta_top_insert(void *v, int *n, int max, size_t size, const void *item,
                                  size_t key_off)
{
    char *b = v;
    uint64_t key, k;
    memcpy(&key, (const char *)item + key_off, sizeof key);
    int i = *n < max ? (*n)++ : max;
    if (i == max) {
        memcpy(&k, b + (size_t)(max - 1) * size + key_off, sizeof k);
        if (key <= k)
            return;
        i = max - 1; /* the last one kept makes way */
    }
    int end = i;
    for (; i > 0; i--) {
        memcpy(&k, b + (size_t)(i - 1) * size + key_off, sizeof k);
        if (k >= key)
            break;
    }
    memmove(b + (size_t)(i + 1) * size, b + (size_t)i * size, (size_t)(end - i) * size);
    memcpy(b + (size_t)i * size, item, size);
}

#endif
