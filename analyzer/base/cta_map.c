#include "cta_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint64_t hash_bytes(const void *key, size_t len)
{
    const unsigned char *p = key;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static void out_of_memory(size_t n, const char *what)
{
    fprintf(stderr, "cutrace: out of memory: %zu bytes for %s\n", n, what);
    abort();
}

void *cta_xmalloc(size_t n, const char *what)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        out_of_memory(n, what);
    return p;
}

void *cta_xmalloc_written(size_t n, const char *what)
{
    volatile char *p = cta_xmalloc(n, what);
    for (size_t o = 0; o < n; o += 4096)
        p[o] = 0;
    return (void *)p;
}

void *cta_xrealloc(void *p, size_t n, const char *what)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n, what);
    return q;
}

/* The last reservations given back on this thread, kept for the next of the same size (the
 * start-up's arrays, one process after another): their pages stay mapped and written, so the
 * next process fills them without a page fault, and no unmapping interrupts the other cores
 * running the analyzer (a TLB shootdown, as cta_xmalloc_written's comment tells). */
static _Thread_local struct {
    void *p;
    size_t n;
} spare[2];

void *cta_xreserve(size_t n, const char *what)
{
    for (int i = 0; i < 2; i++)
        if (spare[i].p && spare[i].n == n) {
            void *p = spare[i].p;
            spare[i].p = NULL;
            return p;
        }
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        out_of_memory(n, what);
    return p;
}

void cta_unreserve(void *p, size_t n)
{
    for (int i = 0; i < 2 && p; i++)
        if (!spare[i].p) {
            spare[i].p = p;
            spare[i].n = n;
            return;
        }
    if (p)
        munmap(p, n ? n : 1);
}

void cta_xhash_put(ct_hash *h, uint64_t key, uint32_t val, const char *what)
{
    if (ct_hash_put(h, key, val) == CT_E_NOMEM)
        out_of_memory((h->cap ? 2 * h->cap : CT_HASH_MIN_CAP) * (sizeof *h->keys + sizeof *h->vals),
                      what);
}

void cta_grow_slow(void *arr, size_t *cap, size_t n, size_t sz)
{
    size_t nc = *cap ? *cap : 8;
    while (nc < n)
        nc *= 2;
    void **a = arr;
    char *p = cta_xrealloc(*a, nc * sz, "a growing array");
    memset(p + *cap * sz, 0, (nc - *cap) * sz);
    *a = p;
    *cap = nc;
}

void cta_map_init(cta_map *m)
{
    memset(m, 0, sizeof *m);
    m->cap = 16;
    m->slots = cta_xmalloc(m->cap * sizeof *m->slots, "a hash map's slots");
    for (size_t i = 0; i < m->cap; i++)
        m->slots[i].idx = UINT32_MAX;
}

/* a key the map does not own (cta_map_get_ref) */
#define KEY_BORROWED ((size_t)1 << (sizeof(size_t) * 8 - 1))

void cta_map_free(cta_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        if (!(m->lens[i] & KEY_BORROWED))
            free(m->keys[i]);
    free(m->keys);
    free(m->lens);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static size_t probe(const cta_map *m, uint64_t h, const void *key, size_t len)
{
    size_t i = h & (m->cap - 1);
    for (;;) {
        const cta_map_slot *s = &m->slots[i];
        if (s->idx == UINT32_MAX ||
            (s->hash == h && (m->lens[s->idx] & ~KEY_BORROWED) == len && memcmp(m->keys[s->idx], key, len) == 0))
            return i;
        i = (i + 1) & (m->cap - 1);
    }
}

uint32_t cta_map_find(const cta_map *m, const void *key, size_t len)
{
    return m->slots[probe(m, hash_bytes(key, len), key, len)].idx;
}

static uint32_t map_get(cta_map *m, const void *key, size_t len, int borrow, int *added)
{
    uint64_t h = hash_bytes(key, len);
    size_t i = probe(m, h, key, len);
    if (m->slots[i].idx != UINT32_MAX) {
        if (added)
            *added = 0;
        return m->slots[i].idx;
    }
    if (2 * (m->n + 1) > m->cap) {
        cta_map_slot *old = m->slots;
        size_t oc = m->cap;
        m->cap *= 2;
        m->slots = cta_xmalloc(m->cap * sizeof *m->slots, "a hash map's slots");
        for (size_t j = 0; j < m->cap; j++)
            m->slots[j].idx = UINT32_MAX;
        for (size_t j = 0; j < oc; j++)
            if (old[j].idx != UINT32_MAX) {
                size_t k = old[j].hash & (m->cap - 1);
                while (m->slots[k].idx != UINT32_MAX)
                    k = (k + 1) & (m->cap - 1);
                m->slots[k] = old[j];
            }
        free(old);
        i = probe(m, h, key, len);
    }
    size_t kc = m->keys_cap;
    cta_grow(&m->keys, &kc, m->n + 1, sizeof *m->keys);
    cta_grow(&m->lens, &m->keys_cap, m->n + 1, sizeof *m->lens);
    if (borrow) {
        m->keys[m->n] = (char *)key;
        m->lens[m->n] = len | KEY_BORROWED;
    } else {
        m->keys[m->n] = cta_xmalloc(len + 1, "a hash map's key");
        memcpy(m->keys[m->n], key, len);
        m->lens[m->n] = len;
    }
    m->slots[i].hash = h;
    m->slots[i].idx = (uint32_t)m->n;
    if (added)
        *added = 1;
    return (uint32_t)m->n++;
}

uint32_t cta_map_get(cta_map *m, const void *key, size_t len, int *added)
{
    return map_get(m, key, len, 0, added);
}

uint32_t cta_map_get_ref(cta_map *m, const char *key, size_t len, int *added)
{
    return map_get(m, key, len, 1, added);
}

void cta_pool_init(cta_pool *p, size_t item_size)
{
    memset(p, 0, sizeof *p);
    p->sz = item_size;
}

void cta_pool_free(cta_pool *p)
{
    free(p->items);
    free(p->free_list);
    memset(p, 0, sizeof *p);
}

uint32_t cta_pool_alloc(cta_pool *p)
{
    uint32_t idx;
    if (p->nfree) {
        idx = p->free_list[--p->nfree];
    } else {
        cta_grow(&p->items, &p->cap, p->n + 1, p->sz);
        idx = (uint32_t)p->n++;
    }
    memset(cta_pool_at(p, idx), 0, p->sz);
    return idx;
}

void cta_pool_put(cta_pool *p, uint32_t idx)
{
    cta_grow(&p->free_list, &p->free_cap, p->nfree + 1, sizeof *p->free_list);
    p->free_list[p->nfree++] = idx;
}

uint32_t cta_map_take(cta_map *dst, cta_map *src, uint32_t i, int *added)
{
    size_t len = src->lens[i] & ~KEY_BORROWED;
    int add;
    uint32_t j = map_get(dst, src->keys[i], len, 1, &add);
    if (add) { /* the key moves: dst owns it as src did, and src keeps it borrowed */
        dst->lens[j] = src->lens[i];
        src->lens[i] |= KEY_BORROWED;
    }
    if (added)
        *added = add;
    return j;
}
