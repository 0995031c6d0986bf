#define _GNU_SOURCE
#include "ct_maps.h"
#include "ct_hash.h"

#include <dlfcn.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

ct_rmap ct_mem_ranges;
ct_rmap ct_vmm_handles;
ct_hmap ct_kernel_names;

static void *ct_reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- ranges ---- */

void ct_rmap_init(ct_rmap *m, uint32_t cap)
{
    pthread_mutex_init(&m->mu, NULL);
    atomic_store(&m->seq, 0);
    atomic_store(&m->n, 0);
    m->v = ct_reserve((size_t)cap * sizeof(ct_range));
    m->cap = m->v ? cap : 0;
}

/* First index whose start is >= key (writer side, under the mutex). */
static uint32_t ct_rmap_lower(const ct_rmap *m, uint32_t n, uint64_t key)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].start < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Entries change only between ct_rmap_write_begin and _end, one field at a time with relaxed
 * atomic stores: a reader racing with the move may see a mix of old and new fields, which the
 * sequence check discards, but every access is atomic, so there is no data race in the C model
 * (a memmove or struct assignment against the readers' loads would be one, and the compiler may
 * tear or reorder plain stores). The writer's own plain reads (under the mutex) race with no
 * store. */
static void ct_rmap_store(ct_rmap *m, uint32_t i, const ct_range *r)
{
    ct_range *e = &m->v[i];
    __atomic_store_n(&e->start, r->start, __ATOMIC_RELAXED);
    __atomic_store_n(&e->size, r->size, __ATOMIC_RELAXED);
    __atomic_store_n(&e->kind, r->kind, __ATOMIC_RELAXED);
    __atomic_store_n(&e->device, r->device, __ATOMIC_RELAXED);
}

static void ct_rmap_write_begin(ct_rmap *m)
{
    atomic_fetch_add_explicit(&m->seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void ct_rmap_write_end(ct_rmap *m)
{
    atomic_fetch_add_explicit(&m->seq, 1, memory_order_release);
}

int ct_rmap_add(ct_rmap *m, uint64_t start, uint64_t size, uint32_t kind, uint32_t device)
{
    pthread_mutex_lock(&m->mu);
    uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed);
    uint32_t i = ct_rmap_lower(m, n, start);
    int rc = 0;
    ct_rmap_write_begin(m);
    if (i < n && m->v[i].start == start) {
        ct_rmap_store(m, i, &(ct_range){start, size, kind, device});
    } else if (n < m->cap) {
        for (uint32_t j = n; j > i; j--)
            ct_rmap_store(m, j, &m->v[j - 1]);
        ct_rmap_store(m, i, &(ct_range){start, size, kind, device});
        atomic_store_explicit(&m->n, n + 1, memory_order_relaxed);
    } else {
        rc = -1;
    }
    ct_rmap_write_end(m);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int ct_rmap_remove(ct_rmap *m, uint64_t start, ct_range *out)
{
    pthread_mutex_lock(&m->mu);
    uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed);
    uint32_t i = ct_rmap_lower(m, n, start);
    int found = i < n && m->v[i].start == start;
    if (found) {
        *out = m->v[i];
        ct_rmap_write_begin(m);
        for (uint32_t j = i; j + 1 < n; j++)
            ct_rmap_store(m, j, &m->v[j + 1]);
        atomic_store_explicit(&m->n, n - 1, memory_order_relaxed);
        ct_rmap_write_end(m);
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}

int ct_rmap_find(ct_rmap *m, uint64_t addr, ct_range *out)
{
    for (;;) {
        uint64_t s = atomic_load_explicit(&m->seq, memory_order_acquire);
        if (s & 1) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed);
        if (n > m->cap)
            n = m->cap;
        /* Last entry whose start is <= addr. Racy reads are discarded below if a writer ran. */
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (__atomic_load_n(&m->v[mid].start, __ATOMIC_RELAXED) <= addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        ct_range r = {0, 0, 0, 0};
        int found = 0;
        if (lo > 0) {
            r.start = __atomic_load_n(&m->v[lo - 1].start, __ATOMIC_RELAXED);
            r.size = __atomic_load_n(&m->v[lo - 1].size, __ATOMIC_RELAXED);
            r.kind = __atomic_load_n(&m->v[lo - 1].kind, __ATOMIC_RELAXED);
            r.device = __atomic_load_n(&m->v[lo - 1].device, __ATOMIC_RELAXED);
            found = addr - r.start < (r.size ? r.size : 1);
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&m->seq, memory_order_relaxed) == s) {
            if (found)
                *out = r;
            return found;
        }
    }
}

/* ---- handle map ---- */

void ct_hmap_init(ct_hmap *m, unsigned log2_cap)
{
    pthread_mutex_init(&m->mu, NULL);
    size_t cap = (size_t)1 << log2_cap;
    m->keys = ct_reserve(cap * sizeof(uint64_t));
    m->vals = ct_reserve(cap * sizeof(uint64_t));
    m->mask = m->keys && m->vals ? cap - 1 : 0;
    m->n = 0;
}

void ct_hmap_put(ct_hmap *m, uint64_t key, uint64_t val)
{
    assert(key != 0);
    if (!m->mask)
        return;
    pthread_mutex_lock(&m->mu);
    for (uint64_t i = ct_hash_mix(key) & m->mask, probes = 0; probes <= m->mask;
         i = (i + 1) & m->mask, probes++) {
        uint64_t k = atomic_load_explicit(&m->keys[i], memory_order_relaxed);
        if (k == key) {
            atomic_store_explicit(&m->vals[i], val, memory_order_release);
            break;
        }
        if (k == 0) {
            if (m->n * 4 >= m->mask * 3)
                break; /* keep probes short: stop caching */
            atomic_store_explicit(&m->vals[i], val, memory_order_relaxed);
            atomic_store_explicit(&m->keys[i], key, memory_order_release);
            m->n++;
            break;
        }
    }
    pthread_mutex_unlock(&m->mu);
}

int ct_hmap_get(ct_hmap *m, uint64_t key, uint64_t *val)
{
    if (!m->mask || key == 0)
        return 0;
    for (uint64_t i = ct_hash_mix(key) & m->mask;; i = (i + 1) & m->mask) {
        uint64_t k = atomic_load_explicit(&m->keys[i], memory_order_acquire);
        if (k == key) {
            *val = atomic_load_explicit(&m->vals[i], memory_order_acquire);
            return 1;
        }
        if (k == 0)
            return 0;
    }
}

/* ---- strings ---- */

typedef struct {
    char *s;
    size_t len;
} ct_str;

static pthread_mutex_t ct_str_mu = PTHREAD_MUTEX_INITIALIZER;
static ct_str *ct_strs;          /* by id - 1 - ct_str_base */
static uint32_t ct_nstrs, ct_strs_cap, ct_str_emitted, ct_str_base;
static uint32_t *ct_str_index;   /* open addressing: id, 0 = empty */
static uint32_t ct_str_index_mask;

static uint64_t ct_hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

void ct_intern_reserve(uint32_t reserved)
{
    pthread_mutex_lock(&ct_str_mu);
    assert(ct_nstrs == 0);
    ct_str_base = reserved;
    pthread_mutex_unlock(&ct_str_mu);
}

/* Index entries hold the position in ct_strs + 1 (0 = empty). */
static void ct_str_index_insert(uint32_t pos1)
{
    const ct_str *e = &ct_strs[pos1 - 1];
    uint32_t i = (uint32_t)ct_hash_bytes(e->s, e->len) & ct_str_index_mask;
    while (ct_str_index[i])
        i = (i + 1) & ct_str_index_mask;
    ct_str_index[i] = pos1;
}

uint32_t ct_intern(const char *s, size_t len)
{
    pthread_mutex_lock(&ct_str_mu);
    uint32_t id = 0;
    if (ct_str_index) {
        for (uint32_t i = (uint32_t)ct_hash_bytes(s, len) & ct_str_index_mask; ct_str_index[i];
             i = (i + 1) & ct_str_index_mask) {
            const ct_str *e = &ct_strs[ct_str_index[i] - 1];
            if (e->len == len && memcmp(e->s, s, len) == 0) {
                id = ct_str_index[i] + ct_str_base;
                break;
            }
        }
    }
    if (!id) {
        if (ct_nstrs == ct_strs_cap) {
            uint32_t cap = ct_strs_cap ? ct_strs_cap * 2 : 1024;
            ct_str *v = realloc(ct_strs, cap * sizeof *v);
            uint32_t *index = calloc((size_t)cap * 2, sizeof *index);
            if (!v || !index) {
                free(index);
                if (v)
                    ct_strs = v;
                pthread_mutex_unlock(&ct_str_mu);
                return 0;
            }
            ct_strs = v;
            ct_strs_cap = cap;
            free(ct_str_index);
            ct_str_index = index;
            ct_str_index_mask = cap * 2 - 1;
            for (uint32_t j = 1; j <= ct_nstrs; j++)
                ct_str_index_insert(j);
        }
        char *copy = malloc(len + 1);
        if (copy) {
            memcpy(copy, s, len);
            copy[len] = 0;
            ct_strs[ct_nstrs] = (ct_str){copy, len};
            ct_str_index_insert(++ct_nstrs);
            id = ct_nstrs + ct_str_base;
        }
    }
    pthread_mutex_unlock(&ct_str_mu);
    return id;
}

typedef char *(*ct_demangle_fn)(const char *, char *, size_t *, int *);

uint32_t ct_intern_demangled(const char *name)
{
    static ct_demangle_fn dm;
    static int looked;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&dm, (ct_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle"),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    ct_demangle_fn fn = __atomic_load_n(&dm, __ATOMIC_RELAXED);
    if (fn && name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = fn(name, NULL, NULL, &status);
        if (d && status == 0) {
            uint32_t id = ct_intern(d, strlen(d));
            free(d);
            return id;
        }
        free(d);
    }
    return ct_intern(name, strlen(name));
}

static void ct_intern_emit(ct_intern_fn fn, void *ctx)
{
    for (; ct_str_emitted < ct_nstrs; ct_str_emitted++)
        fn(ctx, ct_str_emitted + 1 + ct_str_base, ct_strs[ct_str_emitted].s,
           ct_strs[ct_str_emitted].len);
}

void ct_intern_pending(ct_intern_fn fn, void *ctx)
{
    pthread_mutex_lock(&ct_str_mu);
    ct_intern_emit(fn, ctx);
    pthread_mutex_unlock(&ct_str_mu);
}

int ct_intern_pending_try(ct_intern_fn fn, void *ctx)
{
    if (pthread_mutex_trylock(&ct_str_mu) != 0)
        return -1;
    ct_intern_emit(fn, ctx);
    pthread_mutex_unlock(&ct_str_mu);
    return 0;
}

void ct_intern_rewind(void)
{
    ct_str_emitted = 0;
}

void ct_maps_lock_all(void)
{
    pthread_mutex_lock(&ct_str_mu);
    pthread_mutex_lock(&ct_mem_ranges.mu);
    pthread_mutex_lock(&ct_vmm_handles.mu);
    pthread_mutex_lock(&ct_kernel_names.mu);
}

void ct_maps_unlock_all(void)
{
    pthread_mutex_unlock(&ct_kernel_names.mu);
    pthread_mutex_unlock(&ct_vmm_handles.mu);
    pthread_mutex_unlock(&ct_mem_ranges.mu);
    pthread_mutex_unlock(&ct_str_mu);
}

void ct_maps_init(void)
{
    ct_rmap_init(&ct_mem_ranges, 1u << 20);
    ct_rmap_init(&ct_vmm_handles, 1u << 18);
    ct_hmap_init(&ct_kernel_names, 18);
}
