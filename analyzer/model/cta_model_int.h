/* Internal to the model (cta_model.c: processes, finishing, freeing; cta_feed.c, cta_join.c,
 * cta_gpu.c, cta_memory.c, cta_calls.c: the per-record pass; cta_feature.c: the features; names:
 * cta_intern.c): the state of a call being joined and of a live allocation, which both keep in
 * each process's pools (cta_proc.calls, cta_proc.allocs), and each file's contract. The sweep's
 * own interface is cta_sweep.h, the features' cta_feature_int.h.
 *
 * The model's other headers (cta_sweep.h, cta_names.h, cta_feature.h) reach cta_model.h through
 * this one, not directly: cta_model.c calls their modules, and a module's edges with its
 * internal header do not count as dependencies (tests/structure's cycle check), so the files
 * cta_model.c calls do not depend back on it. */
#ifndef CTA_MODEL_INT_H
#define CTA_MODEL_INT_H

#include "cta_model.h"

/* A call being joined: API record + its detail (+ its GPU record for launches and copies). */
typedef struct {
    uint64_t corr;
    uint8_t have_api, have_detail, type; /* type: CT_REC_LAUNCH / COPY / MEM */
    uint8_t churn, have_gpu;             /* have_gpu: the GPU record came first and waits */
    uint8_t mem_dev;                     /* MEM: the allocation's device slot */
    ct_rec_gpu gpu;
    uint64_t gpu_end;
    uint64_t api_start, api_end;
    uint32_t api_idx, tid;
    uint32_t stack;                      /* call site (stack index), from the API or MEM record */
    uint32_t kidx, vidx;                 /* launches: kernel and variant index */
    uint32_t ctx;                        /* the call's context (cta_feature.ctx_ref), 0 none */
    union {
        ct_rec_launch launch;
        ct_rec_copy copy;
    } u;
} cta_joining;

/* Live allocation */
typedef struct {
    uint64_t size;
    uint32_t stack;
    uint8_t dev, churn, kind;
} cta_liveent;

/* ---- the per-record pass: cta_feed.c dispatches each record to its handler (cta_on_<its ct_rec
 * member>), its own but for allocations' (cta_memory.c). Calls go one way: cta_feed.c calls the
 * others, cta_memory.c calls cta_join.c, which calls cta_gpu.c, which calls cta_calls.c. ---- */

/* The device slot of a record's device (the last slot for those past CTA_MAX_DEV). */
static inline int cta_dev_slot(uint32_t device)
{
    return device < CTA_MAX_DEV ? (int)device : CTA_MAX_DEV - 1;
}

/* What a COPY record is, for the tables and diagnoses. */
/* An Async pageable copy whose pinning can save time: host-to-device (the call stages the data
 * while the host waits), or a device-to-host copy large enough for bandwidth to matter; a small
 * readback costs its latency pinned or not, and the host waits for its data either way (a
 * synchronization after a pinned one waits for the same queued work). */
static inline int cta_apg_priced(const ct_rec_copy *c)
{
    return c->dir == CT_DIR_HTOD || (c->dir == CT_DIR_DTOH && c->bytes >= CTA_BW_MIN_BYTES);
}

/* A synchronous copy that sync-memcpy counts: not a host-to-device one of 64 KiB or less (the
 * call returns once the data is staged) nor device-to-device (it does not block the host). */
static inline int cta_sync_copy_counted(const ct_rec_copy *c)
{
    return c->op == CT_COPY_MEMCPY && !(c->flags & CT_COPY_ASYNC) &&
           !(c->dir == CT_DIR_HTOD && c->bytes <= 65536) && c->dir != CT_DIR_DTOD;
}

static inline int cta_host_kind(const ct_rec_copy *c)
{
    uint32_t k = c->dir == CT_DIR_DTOH ? c->dst_kind : c->dir == CT_DIR_HTOD ? c->src_kind
                 : c->src_kind == CT_MEMKIND_PAGEABLE || c->dst_kind == CT_MEMKIND_PAGEABLE
                     ? CT_MEMKIND_PAGEABLE
                 : c->src_kind == CT_MEMKIND_PINNED || c->dst_kind == CT_MEMKIND_PINNED
                     ? CT_MEMKIND_PINNED
                     : CT_MEMKIND_UNKNOWN;
    if (c->op == CT_COPY_MEMSET)
        return CTA_HK_NONE;
    return k == CT_MEMKIND_PAGEABLE ? CTA_HK_PAGEABLE : k == CT_MEMKIND_PINNED ? CTA_HK_PINNED : CTA_HK_NONE;
}

static inline int cta_copy_op(const ct_rec_copy *c)
{
    if (c->op == CT_COPY_MEMSET)
        return CTA_OP_MEMSET;
    switch (c->dir) {
    case CT_DIR_HTOD: return CTA_OP_H2D;
    case CT_DIR_DTOH: return CTA_OP_D2H;
    case CT_DIR_PEER: return CTA_OP_P2P;
    case CT_DIR_HTOH: return CTA_OP_H2H;
    default: return CTA_OP_D2D;
    }
}

/* cta_calls.c: the calls being joined. */
/* The process's index of stack id `id` of its file (0: none), added if new. */
uint32_t cta_stack_index(cta_proc *p, uint32_t id);
/* A new entry for the call of correlation id corr (not in the table). */
cta_joining *cta_call_new(cta_proc *p, uint64_t corr);
/* The call of correlation id corr, created if `create` (else NULL when there is none). Inline:
 * each API, detail and GPU record looks its call up. */
static inline cta_joining *cta_call_get(cta_proc *p, uint64_t corr, int create)
{
    const uint32_t *found = ct_hash_find(&p->corr, corr);
    if (found)
        return cta_pool_at(&p->calls, *found);
    return create ? cta_call_new(p, corr) : NULL;
}
/* The call is done: its entry goes, with its context (cta_feature.ctx_unref). */
void cta_call_drop(cta_model *m, cta_proc *p, uint64_t corr);
/* The call's API record (from the thread's ring, cta_thread.recent) joins its entry. */
static inline void cta_call_api(cta_joining *c, const cta_apislot *a, uint32_t tid)
{
    c->have_api = 1;
    c->api_start = a->start;
    c->api_end = a->end;
    c->api_idx = a->idx;
    c->tid = tid;
    c->ctx = a->ctx;
    if (a->stack)
        c->stack = a->stack;
}
/* A detail record (LAUNCH, COPY, MEM) attaches to its call: its entry, or its API record still in
 * the thread's ring (the caller does the host-side accounting once it has stored the detail). */
cta_joining *cta_call_detail(cta_proc *p, uint64_t corr, int type, uint32_t tid);
/* What an observer (and a feature's gpu hook) sees of a call with its detail. */
void cta_call_view(const cta_model *m, const cta_joining *c, cta_call *call);

/* cta_join.c: calls joined. */
/* API and detail of a call are both known: host-side accounting, and the call dropped when no
 * GPU record will follow. Returns 1 if its entry stays (c still valid), 0 if it was dropped. */
int cta_call_host_done(cta_model *m, cta_proc *p, cta_joining *c);
/* The site of thread th's synchronization (cta_thread.sync_*), once its API record (or the next
 * call of the thread) is seen: stack, or 0 when the API record was lost. */
void cta_sync_site(cta_model *m, cta_proc *p, cta_thread *th, uint32_t stack);
/* At the end of the records: the sites of synchronizations whose API record never came, and the
 * calls still waiting for a part (GPU intervals whose detail never came count as GPU time only;
 * details whose GPU interval never came as untimed). */
void cta_join_finish(cta_model *m, cta_proc *p);

/* cta_gpu.c: GPU intervals. */
/* A GPU interval with whatever is known of its call (c NULL or without detail: unmatched). */
void cta_gpu_done(cta_model *m, cta_proc *p, const ct_rec_gpu *g, uint64_t end, cta_joining *c);
/* The peak a copy is measured against: the device's memory for device-side copies and sets,
 * its host link for the others (from the first device with properties it ran on). */
void cta_copy_peak(cta_copystat *cs, int op, const cta_dev *dv, uint64_t now);

/* cta_memory.c: allocations and frees. */
void cta_on_mem(cta_model *m, cta_proc *p, const ct_rec *r);

/* API categories, from the function name (cached per string id: cta_api_category). */
/* CTA_CAT_DETAIL: the call may have a LAUNCH, COPY or MEM record to join */
/* CTA_CAT_TIMING: the time between two events (the program times itself with events) */
enum { CTA_CAT_LAUNCH = 1, CTA_CAT_COPY = 2, CTA_CAT_SYNCCOPY = 4, CTA_CAT_MEM = 8, CTA_CAT_SYNC = 16, CTA_CAT_DETAIL = 32,
       CTA_CAT_TIMING = 64, CTA_CAT_KNOWN = 128 };

/* Names (cta_intern.c). */
/* The row of string sid of file in the API table (api) or the kernel table, by display name,
 * added if new. Inline, a cache hit (cta_model.acache, kcache): a launch looks two names up,
 * each seen before but the first time, which cta_name_resolve resolves. */
uint32_t cta_name_resolve(cta_model *m, uint32_t file, uint32_t sid, int api);
static inline uint32_t cta_name_index(cta_model *m, uint32_t file, uint32_t sid, int api)
{
    uint32_t slot = file - m->file0;
    const uint32_t *cache = api ? m->acache[slot] : m->kcache[slot];
    if (sid < (api ? m->acache_n[slot] : m->kcache_n[slot]) && cache[sid])
        return cache[sid] - 1;
    return cta_name_resolve(m, file, sid, api);
}
/* The row of name in a table (names: its keys; arr, cap: its rows), added if new. borrow: name
 * stays valid while the model lives (the reader's string) and is not copied. */
uint32_t cta_stat_index(cta_map *names, cta_stat **arr, size_t *cap, const char *name, int borrow);
/* Adds row s of a partial model to row d of the same name (cta_model_merge). */
void cta_stat_merge(cta_stat *d, const cta_stat *s);
/* CTA_CAT_* of an API function, from its name. */
uint8_t cta_api_name_category(const char *name);
/* CTA_CAT_* of an API call (its name's row idx, its string sid in file). Inline, a cache hit
 * (cta_model.acat) once the name has been resolved and categorized, by cta_api_categorize. */
uint8_t cta_api_categorize(cta_model *m, uint32_t file, uint32_t sid, uint32_t idx);
static inline uint8_t cta_api_category(cta_model *m, uint32_t file, uint32_t sid, uint32_t idx)
{
    uint32_t slot = file - m->file0;
    if (sid < m->acache_n[slot] && m->acat[slot][sid])
        return m->acat[slot][sid];
    return cta_api_categorize(m, file, sid, idx);
}
/* Counts one event of a call site (kind CTA_SITE_*, the API row, the stack index: counted at its
 * site, cta_model_site_group), and in the features' where hooks with the call's context ctx
 * (0 none); the event ran ns from start, on device dev (-1 unknown): cta_site_note. */
void cta_site_add(cta_model *m, cta_proc *p, int kind, uint32_t api_idx, uint32_t stack,
                  uint64_t bytes, uint64_t ns, uint32_t ctx, uint64_t start, int dev);
/* Keeps the event if it is the longest of its kind so far (cta_proc.site_longest): O(1). */
static inline void cta_site_note(cta_proc *p, int kind, uint64_t start, uint64_t ns, int dev)
{
    cta_site_longest *l = &p->site_longest[kind];
    if (!l->set || ns > l->len)
        *l = (cta_site_longest){start, ns, dev, 1};
}

#endif
