/* Shared lookup structures of the tracer, readable from any thread without a lock.
 *
 * ctp_rmap: a sorted set of address ranges (allocations cutrace saw) with their allocation kind.
 * Writers (allocations, frees: not the hot path) serialize on a mutex; readers (copy
 * classification, on the hot path) use a sequence lock and retry if a writer was active, so
 * they never block or write shared memory. Storage is one fixed-capacity anonymous mapping
 * (address space reserved, pages touched only as used), so readers never see freed memory.
 *
 * ctp_hmap: handle -> 64-bit value (kernel handle -> interned names), insert-or-update under a
 * mutex, lock-free lookup. Fixed capacity; a full map stops caching (lookups then miss and the
 * caller resolves again). Not a ct_hash (the format library's map, which grows and shifts
 * entries back on deletion): its readers on the hot path race with its writers, so an entry,
 * once published by an atomic store, never moves and its memory is never freed.
 *
 * Strings: ctp_intern returns a per-file string id (1..) for a text, storing it once; the
 * writer takes the definitions not yet written with ctp_intern_pending. */
#ifndef CTP_MAPS_H
#define CTP_MAPS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t start, size;
    uint32_t kind;      /* enum ct_alloc_kind */
    uint32_t device;
} ctp_range;

typedef struct {
    pthread_mutex_t mu;
    _Atomic uint64_t seq;
    _Atomic uint32_t n;
    uint32_t cap;
    ctp_range *v;
} ctp_rmap;

void ctp_rmap_init(ctp_rmap *m, uint32_t cap);
/* Adds [start, start+size); an existing entry at the same start is replaced. 0 or -1 (full). */
int ctp_rmap_add(ctp_rmap *m, uint64_t start, uint64_t size, uint32_t kind, uint32_t device);
/* Removes the entry starting exactly at start into *out; 1 if found. */
int ctp_rmap_remove(ctp_rmap *m, uint64_t start, ctp_range *out);
/* The entry containing addr into *out; 1 if found. Lock-free. */
int ctp_rmap_find(ctp_rmap *m, uint64_t addr, ctp_range *out);

typedef struct {
    pthread_mutex_t mu;
    uint64_t mask;
    _Atomic uint64_t *keys;   /* 0 = empty */
    _Atomic uint64_t *vals;
    uint64_t n;
} ctp_hmap;

void ctp_hmap_init(ctp_hmap *m, unsigned log2_cap);
void ctp_hmap_put(ctp_hmap *m, uint64_t key, uint64_t val);  /* key != 0 */
int ctp_hmap_get(ctp_hmap *m, uint64_t key, uint64_t *val);

/* FNV-1a of len bytes (the string table's hash, also the NVTX name bounds' in ctp_nvtxw.c). */
uint64_t ctp_hash_bytes(const char *s, size_t len);

/* String interning. ids are dense in first-intern order, after the `reserved` ids 1..reserved
 * that the caller defines itself (API function names). */
void ctp_intern_reserve(uint32_t reserved);
uint32_t ctp_intern(const char *s, size_t len);
/* The id of name demangled by the process's own C++ runtime (__cxa_demangle found with
 * dlsym: cutrace links no C++ library), or of name itself when it is not a C++ symbol or the
 * process has no C++ runtime. */
uint32_t ctp_intern_demangled(const char *name);
/* Calls fn for each string interned since the previous call (or since ctp_intern_rewind). */
typedef void (*ctp_intern_fn)(void *ctx, uint32_t id, const char *s, size_t len);
void ctp_intern_pending(ctp_intern_fn fn, void *ctx);
/* Same, but gives up (returns -1) instead of waiting if another thread holds the table: for
 * the signal-handler flush. */
int ctp_intern_pending_try(ctp_intern_fn fn, void *ctx);
/* Makes every string pending again (a forked child starts a new file). */
void ctp_intern_rewind(void);

/* Locks every map/table mutex (fork prepare) and releases them (fork parent/child). */
void ctp_maps_lock_all(void);
void ctp_maps_unlock_all(void);

/* The process-wide maps. */
extern ctp_rmap ctp_mem_ranges;   /* device, pinned, managed, registered, VMM-mapped memory */
extern ctp_rmap ctp_vmm_handles;  /* cuMemCreate handles (start = handle) */
extern ctp_hmap ctp_kernel_names; /* CUfunction/CUkernel -> function id | symbol id << 32 */
void ctp_maps_init(void);

#endif
