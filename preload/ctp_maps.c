#define _GNU_SOURCE
#include "ctp_maps.h"
#include "ct_hash.h"

#include <dlfcn.h>

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

ctp_rmap ctp_mem_ranges;
ctp_rmap ctp_vmm_handles;
ctp_hmap ctp_kernel_names;

static void *ctp_reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- ranges ---- */

void ctp_rmap_init(ctp_rmap *m, uint32_t cap)
{
    pthread_mutex_init(&m->mu, NULL);
    atomic_store(&m->seq, 0);
    atomic_store(&m->n, 0);
    m->v = ctp_reserve((size_t)cap * sizeof(ctp_range));
    m->cap = m->v ? cap : 0;
}

/* First index whose start is >= key (writer side, under the mutex). */
static uint32_t ctp_rmap_lower(const ctp_rmap *m, uint32_t n, uint64_t key)
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

/* Entries change only between ctp_rmap_write_begin and _end, one field at a time with relaxed
 * atomic stores: a reader racing with the move may see a mix of old and new fields, which the
 * sequence check discards, but every access is atomic, so there is no data race in the C model
 * (a memmove or struct assignment against the readers' loads would be one, and the compiler may
 * tear or reorder plain stores). The writer's own plain reads (under the mutex) race with no
 * store. */
static void ctp_rmap_store(ctp_rmap *m, uint32_t i, const ctp_range *r)
{
    ctp_range *e = &m->v[i];
    __atomic_store_n(&e->start, r->start, __ATOMIC_RELAXED);
    __atomic_store_n(&e->size, r->size, __ATOMIC_RELAXED);
    __atomic_store_n(&e->kind, r->kind, __ATOMIC_RELAXED);
    __atomic_store_n(&e->device, r->device, __ATOMIC_RELAXED);
}

static void ctp_rmap_write_begin(ctp_rmap *m)
{
    atomic_fetch_add_explicit(&m->seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void ctp_rmap_write_end(ctp_rmap *m)
{
    atomic_fetch_add_explicit(&m->seq, 1, memory_order_release);
}

int ctp_rmap_add(ctp_rmap *m, uint64_t start, uint64_t size, uint32_t kind, uint32_t device)
{
    pthread_mutex_lock(&m->mu);
    uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed);
    uint32_t i = ctp_rmap_lower(m, n, start);
    int rc = 0;
    ctp_rmap_write_begin(m);
    if (i < n && m->v[i].start == start) {
        ctp_rmap_store(m, i, &(ctp_range){start, size, kind, device});
    } else if (n < m->cap) {
        for (uint32_t j = n; j > i; j--)
            ctp_rmap_store(m, j, &m->v[j - 1]);
        ctp_rmap_store(m, i, &(ctp_range){start, size, kind, device});
        atomic_store_explicit(&m->n, n + 1, memory_order_relaxed);
    } else {
        rc = -1;
    }
    ctp_rmap_write_end(m);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int ctp_rmap_remove(ctp_rmap *m, uint64_t start, ctp_range *out)
{
    pthread_mutex_lock(&m->mu);
    uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed);
    uint32_t i = ctp_rmap_lower(m, n, start);
    int found = i < n && m->v[i].start == start;
    if (found) {
        *out = m->v[i];
        ctp_rmap_write_begin(m);
        for (uint32_t j = i; j + 1 < n; j++)
            ctp_rmap_store(m, j, &m->v[j + 1]);
        atomic_store_explicit(&m->n, n - 1, memory_order_relaxed);
        ctp_rmap_write_end(m);
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}

int ctp_rmap_find(ctp_rmap *m, uint64_t addr, ctp_range *out)
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
        ctp_range r = {0, 0, 0, 0};
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

void ctp_hmap_init(ctp_hmap *m, unsigned log2_cap)
{
    pthread_mutex_init(&m->mu, NULL);
    size_t cap = (size_t)1 << log2_cap;
    m->keys = ctp_reserve(cap * sizeof(uint64_t));
    m->vals = ctp_reserve(cap * sizeof(uint64_t));
    m->mask = m->keys && m->vals ? cap - 1 : 0;
    m->n = 0;
}

void ctp_hmap_put(ctp_hmap *m, uint64_t key, uint64_t val)
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

int ctp_hmap_get(ctp_hmap *m, uint64_t key, uint64_t *val)
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
} ctp_str;

static pthread_mutex_t ctp_str_mu = PTHREAD_MUTEX_INITIALIZER;
static ctp_str *ctp_strs;          /* by id - 1 - ctp_str_base */
static uint32_t ctp_nstrs, ctp_strs_cap, ctp_str_emitted, ctp_str_base;
static uint32_t *ctp_str_index;   /* open addressing: id, 0 = empty */
static uint32_t ctp_str_index_mask;

uint64_t ctp_hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

void ctp_intern_reserve(uint32_t reserved)
{
    pthread_mutex_lock(&ctp_str_mu);
    assert(ctp_nstrs == 0);
    ctp_str_base = reserved;
    pthread_mutex_unlock(&ctp_str_mu);
}

/* Index entries hold the position in ctp_strs + 1 (0 = empty). */
static void ctp_str_index_insert(uint32_t pos1)
{
    const ctp_str *e = &ctp_strs[pos1 - 1];
    uint32_t i = (uint32_t)ctp_hash_bytes(e->s, e->len) & ctp_str_index_mask;
    while (ctp_str_index[i])
        i = (i + 1) & ctp_str_index_mask;
    ctp_str_index[i] = pos1;
}

uint32_t ctp_intern(const char *s, size_t len)
{
    pthread_mutex_lock(&ctp_str_mu);
    uint32_t id = 0;
    if (ctp_str_index) {
        for (uint32_t i = (uint32_t)ctp_hash_bytes(s, len) & ctp_str_index_mask; ctp_str_index[i];
             i = (i + 1) & ctp_str_index_mask) {
            const ctp_str *e = &ctp_strs[ctp_str_index[i] - 1];
            if (e->len == len && memcmp(e->s, s, len) == 0) {
                id = ctp_str_index[i] + ctp_str_base;
                break;
            }
        }
    }
    if (!id) {
        if (ctp_nstrs == ctp_strs_cap) {
            uint32_t cap = ctp_strs_cap ? ctp_strs_cap * 2 : 1024;
            ctp_str *v = realloc(ctp_strs, cap * sizeof *v);
            uint32_t *index = calloc((size_t)cap * 2, sizeof *index);
            if (!v || !index) {
                free(index);
                if (v)
                    ctp_strs = v;
                pthread_mutex_unlock(&ctp_str_mu);
                return 0;
            }
            ctp_strs = v;
            ctp_strs_cap = cap;
            free(ctp_str_index);
            ctp_str_index = index;
            ctp_str_index_mask = cap * 2 - 1;
            for (uint32_t j = 1; j <= ctp_nstrs; j++)
                ctp_str_index_insert(j);
        }
        char *copy = malloc(len + 1);
        if (copy) {
            memcpy(copy, s, len);
            copy[len] = 0;
            ctp_strs[ctp_nstrs] = (ctp_str){copy, len};
            ctp_str_index_insert(++ctp_nstrs);
            id = ctp_nstrs + ctp_str_base;
        }
    }
    pthread_mutex_unlock(&ctp_str_mu);
    return id;
}

typedef char *(*ctp_demangle_fn)(const char *, char *, size_t *, int *);

uint32_t ctp_intern_demangled(const char *name)
{
    static ctp_demangle_fn dm;
    static int looked;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&dm, (ctp_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle"),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    ctp_demangle_fn fn = __atomic_load_n(&dm, __ATOMIC_RELAXED);
    if (fn && name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = fn(name, NULL, NULL, &status);
        if (d && status == 0) {
            uint32_t id = ctp_intern(d, strlen(d));
            free(d);
            return id;
        }
        free(d);
    }
    return ctp_intern(name, strlen(name));
}

static void ctp_intern_emit(ctp_intern_fn fn, void *ctx)
{
    for (; ctp_str_emitted < ctp_nstrs; ctp_str_emitted++)
        fn(ctx, ctp_str_emitted + 1 + ctp_str_base, ctp_strs[ctp_str_emitted].s,
           ctp_strs[ctp_str_emitted].len);
}

void ctp_intern_pending(ctp_intern_fn fn, void *ctx)
{
    pthread_mutex_lock(&ctp_str_mu);
    ctp_intern_emit(fn, ctx);
    pthread_mutex_unlock(&ctp_str_mu);
}

int ctp_intern_pending_try(ctp_intern_fn fn, void *ctx)
{
    if (pthread_mutex_trylock(&ctp_str_mu) != 0)
        return -1;
    ctp_intern_emit(fn, ctx);
    pthread_mutex_unlock(&ctp_str_mu);
    return 0;
}

void ctp_intern_rewind(void)
{
    ctp_str_emitted = 0;
}

void ctp_maps_lock_all(void)
{
    pthread_mutex_lock(&ctp_str_mu);
    pthread_mutex_lock(&ctp_mem_ranges.mu);
    pthread_mutex_lock(&ctp_vmm_handles.mu);
    pthread_mutex_lock(&ctp_kernel_names.mu);
}

void ctp_maps_unlock_all(void)
{
    pthread_mutex_unlock(&ctp_kernel_names.mu);
    pthread_mutex_unlock(&ctp_vmm_handles.mu);
    pthread_mutex_unlock(&ctp_mem_ranges.mu);
    pthread_mutex_unlock(&ctp_str_mu);
}

void ctp_maps_init(void)
{
    ctp_rmap_init(&ctp_mem_ranges, 1u << 20);
    ctp_rmap_init(&ctp_vmm_handles, 1u << 18);
    ctp_hmap_init(&ctp_kernel_names, 18);
}
