/* ct_hash: the project's one integer-keyed hash map, from nonzero 64-bit keys (definition ids,
 * correlation ids, addresses, entry points) to 32-bit values (indices, function ids). The reader
 * maps ids to definitions with it, the analyzer its in-flight calls and live allocations, the
 * tracer the real driver's entry points to its wrappers.
 *
 * Open addressing with linear probing, keys and values in two arrays (a probe reads keys alone;
 * one block for both measured 2% slower in the analyzer's summary). A zeroed ct_hash is an empty
 * map holding no memory. An insertion that would fill more than half of the slots first doubles
 * the table (CT_HASH_MIN_CAP slots at first), so probe runs stay short; deletion shifts the rest
 * of its probe run back (no tombstones), so a map whose keys come and go never degrades. Errors
 * are returned, never aborted on: CT_E_INVAL for the key 0 (it marks an empty slot), CT_E_NOMEM
 * when the table cannot grow (the map is then unchanged). After ct_hash_reserve(h, n) succeeds,
 * inserting up to n keys in all neither allocates nor fails.
 *
 * Not thread-safe: a writer needs the map to itself, and readers on other threads must come
 * after every write (a table built once, then only read). ct_hash_put may move every entry as
 * it grows and ct_hash_del moves entries within a probe run, so a reader racing with either
 * could miss a present key or read freed memory. */
#ifndef CT_HASH_H
#define CT_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "cttrace.h"

#define CT_HASH_MIN_CAP 64u

typedef struct {
    uint64_t *keys; /* 0: an empty slot */
    uint32_t *vals; /* meaningful where keys is not 0 */
    size_t cap;     /* 0 (no table yet) or a power of two */
    size_t n;       /* keys present */
} ct_hash;

/* The finalizer of MurmurHash3's first half: sequential ids and aligned addresses both spread
 * over the low bits that choose a slot. */
static inline uint64_t ct_hash_mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* The slot holding key, or the empty slot where it would go (cap > 0; for the key 0, the first
 * empty slot of its probe run). */
static inline size_t ct_hash_slot(const ct_hash *h, uint64_t key)
{
    size_t i = ct_hash_mix(key) & (h->cap - 1);
    while (h->keys[i] && h->keys[i] != key)
        i = (i + 1) & (h->cap - 1);
    return i;
}

/* key's value, or NULL if key is absent (or 0: its probe stops at the first empty slot, and a
 * table is never more than half full). Inline: the analyzer looks up several keys per trace
 * record. The pointer is valid until the next ct_hash_put or ct_hash_del. */
static inline const uint32_t *ct_hash_find(const ct_hash *h, uint64_t key)
{
    if (!h->cap)
        return NULL;
    size_t i = ct_hash_slot(h, key);
    return h->keys[i] ? &h->vals[i] : NULL;
}

/* Sets key's value: 1 if key was inserted, 0 if it was present (its value replaced),
 * CT_E_INVAL if key is 0, CT_E_NOMEM if the table had to grow and could not. */
int ct_hash_put(ct_hash *h, uint64_t key, uint32_t val);
/* Removes key: 1 (and its value in *val unless val is NULL) if it was present, else 0. */
int ct_hash_del(ct_hash *h, uint64_t key, uint32_t *val);
/* Grows the table so that n keys in all fit without growing again: 0, or CT_E_NOMEM (the map
 * unchanged). */
int ct_hash_reserve(ct_hash *h, size_t n);
/* Frees the table; h is an empty map again. */
void ct_hash_free(ct_hash *h);

#endif
