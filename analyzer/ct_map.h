/* Hash map from byte-string keys (names, or integers passed by address) to dense indices
 * 0, 1, 2... in insertion order, so callers keep their per-key records in a plain array. Keys are
 * copied. Open addressing with linear probing; grows at 50% load. */
#ifndef CT_MAP_H
#define CT_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t hash;
    uint32_t idx; /* UINT32_MAX: empty slot */
} ct_map_slot;

typedef struct {
    ct_map_slot *slots;
    size_t cap; /* power of two */
    char **keys;
    size_t *lens;
    size_t n, keys_cap;
} ct_map;

void ct_map_init(ct_map *m);
void ct_map_free(ct_map *m);
/* Index of key, inserting it (as the next index) if absent; *added tells which. */
uint32_t ct_map_get(ct_map *m, const void *key, size_t len, int *added);
/* The same without copying a new key: key (NUL-terminated at len) must stay valid and unchanged
 * while the map lives (names the trace reader holds until it closes; a million distinct kernel
 * names need no second copy). */
uint32_t ct_map_get_ref(ct_map *m, const char *key, size_t len, int *added);
/* Index of key, or UINT32_MAX. */
uint32_t ct_map_find(const ct_map *m, const void *key, size_t len);
static inline size_t ct_map_count(const ct_map *m) { return m->n; }
static inline const char *ct_map_key(const ct_map *m, uint32_t idx) { return m->keys[idx]; }

/* The analyzer's policy when memory runs out: abort, naming what the memory was for (a summary
 * with a table missing would be wrong, and there is nothing to fall back to). xmalloc's memory
 * is zeroed; xrealloc's new part is not. */
void *xmalloc(size_t n, const char *what);
void *xrealloc(void *p, size_t n, const char *what);

/* Grows *arr (elements of size sz) to hold at least n elements, zeroing new ones. Inline for
 * the common case (room already there): it is on the per-record path. */
void ct_grow_slow(void *arr, size_t *cap, size_t n, size_t sz);
static inline void ct_grow(void *arr, size_t *cap, size_t n, size_t sz)
{
    if (n > *cap)
        ct_grow_slow(arr, cap, n, sz);
}

#endif

/* Hash map from nonzero 64-bit keys (correlation ids, addresses) to 32-bit values, with
 * deletion (backward-shift, no tombstones), for state that comes and goes: in-flight calls, live
 * allocations. */
typedef struct {
    uint64_t *keys; /* 0: empty */
    uint32_t *vals;
    size_t cap, n;
} ct_imap;

void ct_imap_init(ct_imap *m);
void ct_imap_free(ct_imap *m);
/* Sets key's value (inserting it). */
void ct_imap_put(ct_imap *m, uint64_t key, uint32_t val);

static inline uint64_t ct_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* The slot holding key, or the empty slot where it would go. Inline with ct_imap_get: lookups
 * run several times per trace record. */
static inline size_t ct_imap_slot(const ct_imap *m, uint64_t key)
{
    size_t i = ct_mix64(key) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* 1 and *val if present. */
static inline int ct_imap_get(const ct_imap *m, uint64_t key, uint32_t *val)
{
    size_t i = ct_imap_slot(m, key);
    if (!m->keys[i])
        return 0;
    *val = m->vals[i];
    return 1;
}
/* 1 and *val if it was present (and is now removed). */
int ct_imap_del(ct_imap *m, uint64_t key, uint32_t *val);

/* Free-list pool of fixed-size records addressed by uint32 index, for ct_imap values. */
typedef struct {
    char *items;
    size_t sz, cap, n;
    uint32_t *free_list;
    size_t nfree, free_cap;
} ct_pool;

void ct_pool_init(ct_pool *p, size_t item_size);
void ct_pool_free(ct_pool *p);
uint32_t ct_pool_alloc(ct_pool *p); /* zeroed */
void ct_pool_put(ct_pool *p, uint32_t idx);
static inline void *ct_pool_at(ct_pool *p, uint32_t idx) { return p->items + (size_t)idx * p->sz; }
