/* Hash map from byte-string keys (names, or integers passed by address) to dense indices
 * 0, 1, 2... in insertion order, so callers keep their per-key records in a plain array. Keys are
 * copied. Open addressing with linear probing; grows at 50% load. Not a ct_hash (the format
 * library's integer map, which the analyzer uses for its in-flight calls and live allocations):
 * its keys are compared byte for byte, since two keys may share any hash, and are kept in
 * insertion order. */
#ifndef CTA_MAP_H
#define CTA_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "ct_hash.h"

typedef struct {
    uint64_t hash;
    uint32_t idx; /* UINT32_MAX: empty slot */
} cta_map_slot;

typedef struct {
    cta_map_slot *slots;
    size_t cap; /* power of two */
    char **keys;
    size_t *lens;
    size_t n, keys_cap;
} cta_map;

void cta_map_init(cta_map *m);
void cta_map_free(cta_map *m);
/* Index of key, inserting it (as the next index) if absent; *added tells which. */
uint32_t cta_map_get(cta_map *m, const void *key, size_t len, int *added);
/* The same without copying a new key: key (NUL-terminated at len) must stay valid and unchanged
 * while the map lives (names the trace reader holds until it closes; a million distinct kernel
 * names need no second copy). */
uint32_t cta_map_get_ref(cta_map *m, const char *key, size_t len, int *added);
/* The index in dst of src's key i, inserting it if absent: the key then moves to dst (no copy;
 * src keeps it, borrowed, until src is freed), so it stays valid while dst lives. */
uint32_t cta_map_take(cta_map *dst, cta_map *src, uint32_t i, int *added);
/* Index of key, or UINT32_MAX. */
uint32_t cta_map_find(const cta_map *m, const void *key, size_t len);
static inline size_t cta_map_count(const cta_map *m) { return m->n; }
static inline const char *cta_map_key(const cta_map *m, uint32_t idx) { return m->keys[idx]; }

/* The analyzer's policy when memory runs out: abort, naming what the memory was for (a summary
 * with a table missing would be wrong, and there is nothing to fall back to). cta_xmalloc's memory
 * is zeroed; cta_xrealloc's new part is not. */
void *cta_xmalloc(size_t n, const char *what);
/* cta_xmalloc with every page written at once: for memory read whole (by this thread or, in a
 * merge, another) before it is all written. calloc leaves fresh pages untouched, a read maps them
 * to the zero page, and the first write to each, then or when the memory is reused, copies it
 * with a TLB shootdown that interrupts every core running the process (summary -j 2 of 64 ranks:
 * ~2,700 shootdowns, 6% more CPU than -j 1, nearly all from histograms). */
void *cta_xmalloc_written(size_t n, const char *what);
void *cta_xrealloc(void *p, size_t n, const char *what);
/* n bytes of address space for an array filled in order up to a known bound, never read past
 * what was written: each page is mapped as it is first written, so the array costs what it
 * holds and never moves (grown by cta_grow, the start-up's operations and gaps were copied and
 * zeroed as they doubled: 100 million instructions of 15 billion in summary of 64 ranks). Not
 * zeroed: a reservation given back by cta_unreserve(p, n) (p NULL: nothing) is the thread's
 * next of that size. */
void *cta_xreserve(size_t n, const char *what);
void cta_unreserve(void *p, size_t n);
/* ct_hash_put under the same policy. The key 0 (a record without a correlation id or an
 * address) is not stored, so it is never found. */
void cta_xhash_put(ct_hash *h, uint64_t key, uint32_t val, const char *what);

/* Grows *arr (elements of size sz) to hold at least n elements, zeroing new ones. Inline for
 * the common case (room already there): it is on the per-record path. */
void cta_grow_slow(void *arr, size_t *cap, size_t n, size_t sz);
static inline void cta_grow(void *arr, size_t *cap, size_t n, size_t sz)
{
    if (n > *cap)
        cta_grow_slow(arr, cap, n, sz);
}

/* Free-list pool of fixed-size records addressed by uint32 index, for ct_hash values. */
typedef struct {
    char *items;
    size_t sz, cap, n;
    uint32_t *free_list;
    size_t nfree, free_cap;
} cta_pool;

void cta_pool_init(cta_pool *p, size_t item_size);
void cta_pool_free(cta_pool *p);
uint32_t cta_pool_alloc(cta_pool *p); /* zeroed */
void cta_pool_put(cta_pool *p, uint32_t idx);
static inline void *cta_pool_at(cta_pool *p, uint32_t idx) { return p->items + (size_t)idx * p->sz; }

#endif
