/* Internal to the model (cta_feature.c, and the model's files that call the features): the
 * plugged features and, per record type and per hook, the slots of those that have it. */
#ifndef CTA_FEATURE_INT_H
#define CTA_FEATURE_INT_H

#include "cta_feature.h"

typedef struct {
    uint8_t n, slot[CTA_FEAT_MAX];
} cta_slots;
/* The plugged features (at: by slot); per record type, and per hook, the slots of those that
 * have it, in slot order, so that a record or an event costs nothing for the others. */
struct cta_plugs {
    const cta_feature *at[CTA_FEAT_MAX];
    cta_slots rec[CT_REC_TYPE_LIMIT];
    cta_slots api, library_call, captured, call_gpu, gpu, sync, where, idle, loading, gap, finish, merge,
        proc_free, free;
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
