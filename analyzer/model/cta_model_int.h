/* Internal to the model (cta_model.c: processes, finishing, freeing; cta_join.c: the per-record
 * pass): the state of a call being joined and of a live allocation, which both keep in each
 * process's pools (cta_proc.calls, cta_proc.allocs), and the join's end. The sweep's own internal
 * interface is cta_sweep.h. */
#ifndef CTA_MODEL_INT_H
#define CTA_MODEL_INT_H

#include "cta_feature.h"
#include "cta_names.h"
#include "cta_sweep.h"

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

/* At the end of the records: the sites of synchronizations whose API record never came, and the
 * calls still waiting for a part (GPU intervals whose detail never came count as GPU time only;
 * details whose GPU interval never came as untimed). */
void cta_join_finish(cta_model *m, cta_proc *p);

/* API categories, from the function name (cached per string id: cta_api_category). */
/* CTA_CAT_DETAIL: the call may have a LAUNCH, COPY or MEM record to join */
enum { CTA_CAT_LAUNCH = 1, CTA_CAT_COPY = 2, CTA_CAT_SYNCCOPY = 4, CTA_CAT_MEM = 8, CTA_CAT_SYNC = 16, CTA_CAT_DETAIL = 32,
       CTA_CAT_KNOWN = 128 };

/* Names (cta_intern.c). */
/* The row of name in a table (names: its keys; arr, cap: its rows), added if new. borrow: name
 * stays valid while the model lives (the reader's string) and is not copied. */
uint32_t cta_stat_index(cta_map *names, cta_stat **arr, size_t *cap, const char *name, int borrow);
/* Adds row s of a partial model to row d of the same name (cta_model_merge). */
void cta_stat_merge(cta_stat *d, const cta_stat *s);
/* CTA_CAT_* of an API function, from its name. */
uint8_t cta_api_name_category(const char *name);
/* CTA_CAT_* of an API call (its name's row idx, its string sid in file). */
uint8_t cta_api_category(cta_model *m, uint32_t file, uint32_t sid, uint32_t idx);
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

/* ---- the features (cta_feature.c) ---- */
typedef struct {
    uint8_t n, slot[CTA_FEAT_MAX];
} cta_slots;
/* The plugged features (at: by slot); per record type, and per hook, the slots of those that
 * have it, in slot order, so that a record or an event costs nothing for the others. */
struct cta_plugs {
    const cta_feature *at[CTA_FEAT_MAX];
    cta_slots rec[CT_REC_TYPE_LIMIT];
    cta_slots library_call, captured, call_gpu, gpu, sync, where, idle, gap, finish, merge, proc_free,
        free;
    int ctx;                             /* 1 + the slot of the context's provider, 0 none */
};
const struct cta_plugs *cta_model_plugs(void);

/* Calls hook(...) of every feature that has it, in slot order. */
#define CTA_FEAT_CALL(m, hook, ...)                                                                 \
    do {                                                                                            \
        const struct cta_plugs *pl_ = (m)->plugs;                                                   \
        for (int k_ = 0; k_ < pl_->hook.n; k_++)                                                    \
            pl_->at[pl_->hook.slot[k_]]->hook(__VA_ARGS__);                                         \
    } while (0)

/* The context of a call made now on thread th (0: none, or no feature gives one). */
static inline uint32_t cta_feat_ref(cta_model *m, cta_proc *p, cta_thread *th)
{
    int c = m->plugs->ctx;
    return c && th->feat[c - 1] ? m->plugs->at[c - 1]->ctx_ref(p, th) : 0;
}
static inline void cta_feat_unref(cta_model *m, cta_proc *p, uint32_t ref)
{
    if (ref)
        m->plugs->at[m->plugs->ctx - 1]->ctx_unref(m, p, ref);
}
/* An event a diagnosis counts (kind CTA_WHERE_*), of ns, of thread th now. */
void cta_feat_where_now(cta_model *m, cta_proc *p, cta_thread *th, int kind, uint64_t ns);

#endif
