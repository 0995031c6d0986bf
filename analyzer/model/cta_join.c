/* Calls joined (cta_model_int.h, "cta_join.c"): the host-side accounting once a call's API
 * record and its LAUNCH / COPY / MEM detail are both known (the records themselves are
 * cta_feed.c's and cta_memory.c's), synchronizations' call sites, and what is left waiting at
 * the end. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_sweep.h"

#include <stdlib.h>

/* A kernel, copy or set whose GPU interval will not come (GPU timing off, or the trace ended
 * without it): the observer still sees it. */
static void untimed_done(cta_model *m, cta_proc *p, const cta_joining *c)
{
    if (!m->obs || !m->obs->on_untimed || (c->type == CT_REC_COPY && c->u.copy.dir == CT_DIR_HTOH))
        return;
    cta_call call = {0};
    cta_call_view(m, c, &call);
    m->obs->on_untimed(m->obs->ctx, p, &call);
}

int cta_call_host_done(cta_model *m, cta_proc *p, cta_joining *c)
{
    uint64_t host_ns = c->api_end - c->api_start;
    if ((c->type == CT_REC_LAUNCH && (c->u.launch.flags & CT_LAUNCH_CAPTURED)) ||
        (c->type == CT_REC_COPY && (c->u.copy.flags & CT_COPY_CAPTURED))) {
        cta_call_drop(m, p, c->corr); /* a node added to a graph being captured: nothing executed */
        return 0;
    }
    if (c->type == CT_REC_COPY) {
        const ct_rec_copy *cp = &c->u.copy;
        int hk = cta_host_kind(cp);
        if (cp->op == CT_COPY_MEMCPY && (cp->flags & CT_COPY_ASYNC) && hk == CTA_HK_PAGEABLE) {
            p->async_pageable_count++;
            p->async_pageable_bytes += cp->bytes;
            p->async_pageable_host_ns += host_ns;
            if (cta_apg_priced(cp)) {
                int d = cta_dev_slot(cp->device), dir = cp->dir == CT_DIR_DTOH;
                p->apg_bytes[d][dir] += cp->bytes;
                p->apg_host_ns[d][dir] += host_ns;
            }
            cta_site_add(m, p, CTA_SITE_ASYNC_PAGEABLE, c->api_idx, c->stack, cp->bytes, host_ns, c->ctx,
                         c->api_start, cta_dev_slot(cp->device));
        }
        if (cta_sync_copy_counted(cp)) {
            p->sync_copy_count++;
            p->sync_copy_bytes += cp->bytes;
            p->sync_copy_host_ns += host_ns;
            cta_site_add(m, p, CTA_SITE_SYNC_COPY, c->api_idx, c->stack, cp->bytes, host_ns, c->ctx,
                         c->api_start, cta_dev_slot(cp->device));
        }
        if (cp->dir == CT_DIR_HTOH || p->gpu_timing == 0 || (cp->flags & CT_COPY_UNTIMED)) {
            /* no GPU record follows */
            untimed_done(m, p, c);
            cta_call_drop(m, p, c->corr);
            return 0;
        }
    } else if (c->type == CT_REC_MEM) {
        if (c->churn) {
            p->churn_ns += host_ns;
            cta_site_add(m, p, CTA_SITE_CHURN, c->api_idx, c->stack, 0, host_ns, c->ctx, c->api_start,
                         c->mem_dev);
        }
        cta_call_drop(m, p, c->corr);
        return 0;
    } else if (c->type == CT_REC_LAUNCH) {
        p->launches++;
        p->launch_api_ns += host_ns;
        m->kernels[c->kidx].launch_ns += host_ns;
        if (m->variants_on)
            m->variant_stats[c->vidx].launch_ns += host_ns;
        int dev = cta_dev_slot(c->u.launch.device);
        if (c->stack) /* launches carry a call site only with --stacks all */
            cta_site_add(m, p, CTA_SITE_LAUNCH, c->api_idx, c->stack, 0, host_ns, c->ctx,
                         c->api_start, dev);
        else
            cta_site_note(p, CTA_SITE_LAUNCH, c->api_start, host_ns, dev);
        if (p->gpu_timing == 0 || (c->u.launch.flags & CT_LAUNCH_UNTIMED)) {
            untimed_done(m, p, c);
            cta_call_drop(m, p, c->corr);
            return 0;
        }
    }
    return 1;
}

void cta_sync_site(cta_model *m, cta_proc *p, cta_thread *th, uint32_t stack)
{
    cta_site_add(m, p, CTA_SITE_SYNC, th->sync_kind, stack, 0, th->sync_ns, 0, th->sync_start, -1);
    cta_feat_where_now(m, p, th, CTA_SITE_SYNC, th->sync_ns);
    th->sync_corr = 0;
}

void cta_join_finish(cta_model *m, cta_proc *p)
{
    for (size_t k = 0; k < p->nthreads; k++)
        if (p->threads[k].sync_corr)
            cta_sync_site(m, p, &p->threads[k], 0);
    /* GPU intervals whose call detail never came: counted as GPU time only; those whose
     * API record never came, with their detail */
    uint64_t *waiting = cta_xmalloc((p->corr.n + 1) * sizeof *waiting, "the calls still waiting");
    size_t nw = 0;
    for (size_t k = 0; k < p->corr.cap; k++) {
        if (!p->corr.keys[k])
            continue;
        const cta_joining *c = cta_pool_at(&p->calls, p->corr.vals[k]);
        if (c->have_gpu)
            waiting[nw++] = p->corr.keys[k];
        else if (c->have_detail && c->type != CT_REC_MEM) /* its GPU interval never came */
            untimed_done(m, p, c);
    }
    for (size_t k = 0; k < nw; k++) {
        cta_joining *c = cta_call_get(p, waiting[k], 0);
        ct_rec_gpu g = c->gpu;
        cta_gpu_done(m, p, &g, c->gpu_end, c->have_detail ? c : NULL);
        cta_call_drop(m, p, waiting[k]);
    }
    free(waiting);
}
