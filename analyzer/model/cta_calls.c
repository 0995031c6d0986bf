/* The calls being joined (cta_model_int.h, "cta_calls.c"): the table of a process's calls by
 * correlation id, the detail records that attach to them, and what an observer sees of one. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_sweep.h"

#include <string.h>

uint32_t cta_stack_index(cta_proc *p, uint32_t id)
{
    if (id == 0)
        return 0;
    int added;
    uint32_t i = cta_map_get(&p->stack_idx, &id, sizeof id, &added) + 1;
    if (added) {
        cta_grow(&p->stack_ids, &p->stacks_cap, i + 1, sizeof *p->stack_ids);
        p->stack_ids[i] = id;
        p->nstacks = i + 1;
    }
    return i;
}

cta_joining *cta_call_new(cta_proc *p, uint64_t corr)
{
    uint32_t idx = cta_pool_alloc(&p->calls);
    cta_xhash_put(&p->corr, corr, idx, "the calls in flight");
    cta_joining *c = cta_pool_at(&p->calls, idx);
    c->corr = corr;
    return c;
}

void cta_call_drop(cta_model *m, cta_proc *p, uint64_t corr)
{
    uint32_t idx;
    if (ct_hash_del(&p->corr, corr, &idx)) {
        cta_feat_unref(m, p, ((cta_joining *)cta_pool_at(&p->calls, idx))->ctx);
        cta_pool_put(&p->calls, idx);
    }
}

/* Detail records (LAUNCH, COPY, MEM) attach to their call: its entry, or its API record still in
 * the thread's ring (the caller does the host-side accounting once it has stored the detail). */
cta_joining *cta_call_detail(cta_proc *p, uint64_t corr, int type, uint32_t tid)
{
    cta_joining *c = cta_call_get(p, corr, 1);
    c->type = (uint8_t)type;
    c->have_detail = 1;
    if (!c->have_api) {
        cta_thread *th = cta_thread_of(p, tid);
        /* the first slot holding corr, found without a branch per slot: which slot it is
         * cycles with the thread's calls, and a mispredicted early exit cost more than the
         * three extra comparisons */
        int hit = -1;
        for (int k = 3; k >= 0; k--)
            hit = th->recent[k].corr == corr ? k : hit;
        if (hit >= 0 && corr) { /* corr 0 (a damaged detail's) is what marks a free slot */
            th->recent[hit].corr = 0;
            cta_call_api(c, &th->recent[hit], tid);
        }
    }
    return c;
}

/* What an observer sees of a call with its detail. */
void cta_call_view(const cta_model *m, const cta_joining *c, cta_call *call)
{
    call->corr = c->corr;
    call->have_api = c->have_api;
    call->api_start = c->api_start;
    call->api_end = c->api_end;
    call->tid = c->tid;
    call->api_name = c->have_api ? cta_map_key(&m->api_names, c->api_idx) : NULL;
    if (c->type == CT_REC_LAUNCH) {
        call->is_launch = 1;
        call->launch = &c->u.launch;
        call->kernel_name = cta_map_key(&m->kernel_names, c->kidx);
        call->kernel_idx = c->kidx;
    } else if (c->type == CT_REC_COPY) {
        call->is_copy = 1;
        call->copy = &c->u.copy;
    }
}
