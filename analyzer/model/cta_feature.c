/* The features plugged into the model, and the walks over them that are not on the per-record
 * path (the contract is cta_feature.h; the per-record path walks the lists made here, cta_plugs
 * in cta_model_int.h). */
#include "cta_model_int.h"
#include "cta_feature_int.h"

#include <assert.h>
#include <string.h>

/* Written once by cta_model_plug before any model exists, then only read (by every model, on
 * every thread): the models hold a pointer to it. */
static struct cta_plugs plugs;

static void slots_add(cta_slots *s, int slot) { s->slot[s->n++] = (uint8_t)slot; }

void cta_model_plug(const cta_feature *const *table, size_t n)
{
    assert(n <= CTA_FEAT_MAX);
    memset(&plugs, 0, sizeof plugs);
    for (size_t i = 0; i < n; i++) {
        const cta_feature *f = table[i];
        int slot = (int)i;
        if (!f)
            continue;
        plugs.at[i] = f;
        for (int t = 0; t < CT_REC_TYPE_LIMIT && f->record; t++)
            if (f->types >> t & 1)
                slots_add(&plugs.rec[t], slot);
#define HOOK(h) if (f->h) slots_add(&plugs.h, slot)
        HOOK(api);
        HOOK(library_call);
        HOOK(captured);
        HOOK(call_gpu);
        HOOK(gpu);
        HOOK(sync);
        HOOK(where);
        HOOK(idle);
        HOOK(loading);
        HOOK(gap);
        HOOK(finish);
        HOOK(merge);
        HOOK(proc_free);
        HOOK(free);
#undef HOOK
        if (f->ctx_ref) {
            assert(!plugs.ctx); /* one context per call: one provider */
            plugs.ctx = slot + 1;
        }
    }
}

const struct cta_plugs *cta_model_plugs(void) { return &plugs; }

const cta_feature *cta_feature_at(const cta_model *m, int i)
{
    return i >= 0 && i < CTA_FEAT_MAX ? m->plugs->at[i] : NULL;
}

void cta_feat_where_now(cta_model *m, cta_proc *p, cta_thread *th, int kind, uint64_t ns)
{
    uint32_t ref = cta_feat_ref(m, p, th);
    CTA_FEAT_CALL(m, where, m, p, ref, kind, ns);
    cta_feat_unref(m, p, ref);
}

uint64_t cta_feature_pass2_types(const cta_model *m)
{
    uint64_t types = 0;
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->feat[i])
            types |= m->plugs->at[i]->pass2_types;
    return types;
}

void cta_feature_pass2_record(cta_model *m, const ct_rec *r)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++) {
        const cta_feature *f = m->plugs->at[i];
        if (f && m->feat[i] && f->pass2_types >> r->type & 1)
            f->pass2_record(m, r);
    }
}

void cta_feature_pass2_finish(cta_model *m)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->feat[i] && m->plugs->at[i]->pass2_finish)
            m->plugs->at[i]->pass2_finish(m);
}

void cta_feature_text(FILE *f, const cta_model *m, int top, int at)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->plugs->at[i]->text && m->plugs->at[i]->at == at)
            m->plugs->at[i]->text(f, m, top);
}

void cta_feature_proc_text(FILE *f, const cta_model *m, const cta_proc *p)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->plugs->at[i]->proc_text)
            m->plugs->at[i]->proc_text(f, p);
}

void cta_feature_json(cta_json *j, const cta_model *m, int at)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->plugs->at[i]->json && m->plugs->at[i]->at == at)
            m->plugs->at[i]->json(j, m);
}

void cta_feature_proc_json(cta_json *j, const cta_model *m, const cta_proc *p, int at)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->plugs->at[i]->proc_json && m->plugs->at[i]->proc_at == at)
            m->plugs->at[i]->proc_json(j, p);
}

void cta_feature_gap_text(FILE *f, const cta_model *m, const cta_proc *p, int dev, int cls,
                          cta_span span, const char *indent)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->plugs->at[i]->gap_text)
            m->plugs->at[i]->gap_text(f, m, p, dev, cls, span, indent);
}

void cta_feature_gap_json(cta_json *j, const cta_model *m, const cta_proc *p, int dev, int cls,
                          cta_span span)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->plugs->at[i]->gap_json)
            m->plugs->at[i]->gap_json(j, m, p, dev, cls, span);
}

int cta_feature_gap_burning(const cta_model *m, const cta_proc *p, int dev, int cls, cta_span span,
                            char *out, size_t n, double *share)
{
    for (int i = 0; i < CTA_FEAT_MAX; i++)
        if (m->plugs->at[i] && m->plugs->at[i]->gap_burning &&
            m->plugs->at[i]->gap_burning(m, p, dev, cls, span, out, n, share))
            return 1;
    return 0;
}
