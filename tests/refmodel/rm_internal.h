/* What the reference model's files share (refmodel.c: reading the records and the whole
 * computation; rm_tables.c: the tables; rm_breakdown.c: the breakdown). Internal to
 * tests/refmodel; like them it shares nothing with analyzer/. */
#ifndef RM_INTERNAL_H
#define RM_INTERNAL_H

#include "refmodel.h"

#include "cttrace.h"

#define NDEV 16

#define PUSH(arr, n, cap, val)                                                                 \
    do {                                                                                       \
        if ((n) == (cap)) {                                                                    \
            (cap) = (cap) ? 2 * (cap) : 64;                                                    \
            (arr) = rm_xrealloc((arr), (cap) * sizeof *(arr));                                    \
        }                                                                                      \
        (arr)[(n)++] = (val);                                                                  \
    } while (0)

typedef struct { uint64_t s, e, corr, parent; uint32_t tid, fn, result, driver; } api_t;
typedef struct { uint64_t s, e, corr; int dev, bounded; } gpu_t;
typedef struct { uint64_t s, e; uint32_t kind; } sync_t;
typedef struct { uint64_t t, cpu; uint32_t tid; size_t order; } cpu_t;
typedef struct { uint64_t corr, ts; uint32_t type; ct_rec_launch l; ct_rec_copy c; } det_t;

typedef struct {
    uint32_t pid;
    api_t *api; size_t napi, capi;
    gpu_t *gpu; size_t ngpu, cgpu;
    sync_t *sy; size_t nsy, csy;
    cpu_t *cpu; size_t ncpu, ccpu;
    det_t *det; size_t ndet, cdet;
    ct_rec_device prop[NDEV]; /* each device's last DEVICE record */
    uint8_t have_prop[NDEV];
} file_t;

/* What one process's host was doing, on the sorted time points T[0..nt): segment i is
 * (T[i], T[i+1]). */
/* A blocking call's return: when, and how long it blocked the host. */
typedef struct {
    uint64_t end, ns;
} rm_ret;
typedef struct {
    uint64_t *T;
    size_t nt;
    int64_t *api_cnt, *sync_cnt; /* intervals covering segment i */
    uint32_t *last_tid;          /* thread of the latest API call event at or before T[i] of a call that feeds the GPU (rm_feeds_call), or of any call while none has (0) */
    cpu_t *rates;                /* per thread, sorted: (t, rate bits in cpu) rate points */
    size_t nrates;
    rm_ret *send;                /* synchronizations' returns (sorted by end) ... */
    size_t nsend;
    rm_ret *cend;                /* ... and copies' waits' */
    size_t ncend;
} host_t;

/* refmodel.c: realloc that aborts when out of memory; qsort comparisons (uint64_t first
 * member; API records by correlation id; CPU readings by thread, time, file order); the first
 * index with v[i] >= x; binary searches by correlation id (API calls sorted by it, a file's
 * details); the smaller of two; the device slot of a device number (16 and up share slot 15). */
void *rm_xrealloc(void *p, size_t n);
int rm_cmp_u64(const void *a, const void *b);
int rm_cmp_api_corr(const void *a, const void *b);
int rm_cmp_cpu(const void *a, const void *b);
size_t rm_lower(const uint64_t *v, size_t n, uint64_t x);
const api_t *rm_find_call(const api_t *v, size_t n, uint64_t corr);
const det_t *rm_find_det(const file_t *f, uint64_t corr);
uint64_t rm_min_u64(uint64_t a, uint64_t b);
int rm_dev_of(uint32_t device);

/* rm_tables.c: whether an API name is a synchronous copy or set call; a device's memory and
 * host-link peak rates from its DEVICE record; file fi's kernel, copy and API rows added to res,
 * with each device's operations and untimed ones counted into ops and untimed. */
/* Whether a call of this name puts work on the GPU or waits for it (a launch, copy, set,
 * synchronization): the host thread the GPU waits for is the last to make one. */
int rm_feeds_call(const char *name);
int rm_sync_copy_call(const char *name);
double rm_mem_peak(const ct_rec_device *p);
double rm_link_peak(const ct_rec_device *p);
void rm_tables(rm_result *res, const file_t *f, const ct_reader *rd, uint32_t fi,
               uint64_t *ops, uint64_t *untimed);

/* rm_breakdown.c: the host's state over time of file fileno; freeing it; device dev's
 * breakdown into b (t0: the trace's start). */
void rm_host_build(host_t *h, const file_t *f, const ct_reader *rd, uint32_t fileno);
void rm_host_free(host_t *h);
void rm_compute_breakdown(rm_breakdown *b, const file_t *f, const host_t *h, int dev, uint64_t t0);

#endif
