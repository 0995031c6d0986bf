/* Calls and their join (cta_model_int.h, "cta_join.c"): an API record with its LAUNCH / COPY /
 * MEM detail and GPU interval (by correlation id, FORMAT.md 4.3), the host-side accounting once
 * both are known, kernel instances and copies counted from their records, synchronizations and
 * their call sites, and what is left waiting at the end. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void untimed_done(cta_model *m, cta_proc *p, const cta_joining *c);

/* API and detail of a call are both known: host-side accounting. */
void cta_call_host_done(cta_model *m, cta_proc *p, cta_joining *c)
{
    uint64_t host_ns = c->api_end - c->api_start;
    if ((c->type == CT_REC_LAUNCH && (c->u.launch.flags & CT_LAUNCH_CAPTURED)) ||
        (c->type == CT_REC_COPY && (c->u.copy.flags & CT_COPY_CAPTURED))) {
        cta_call_drop(m, p, c->corr); /* a node added to a graph being captured: nothing executed */
        return;
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
        }
    } else if (c->type == CT_REC_MEM) {
        if (c->churn) {
            p->churn_ns += host_ns;
            cta_site_add(m, p, CTA_SITE_CHURN, c->api_idx, c->stack, 0, host_ns, c->ctx, c->api_start,
                         c->mem_dev);
        }
        cta_call_drop(m, p, c->corr);
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
        }
    }
}

/* A synchronization's site, once its API record (or the next call of its thread) is seen. */
static void sync_site(cta_model *m, cta_proc *p, cta_thread *th, uint32_t stack)
{
    cta_site_add(m, p, CTA_SITE_SYNC, th->sync_kind, stack, 0, th->sync_ns, 0, th->sync_start, -1);
    cta_feat_where_now(m, p, th, CTA_SITE_SYNC, th->sync_ns);
    th->sync_corr = 0;
}

/* The thread's call whose detail and GPU interval came before its API record: the API record
 * has now been seen (or was lost), so the GPU interval is accounted with what is known. */
static void await_done(cta_model *m, cta_proc *p, cta_thread *th)
{
    cta_joining *w = cta_call_get(p, th->await_corr, 0);
    th->await_corr = 0;
    if (w && w->have_gpu && w->have_detail)
        cta_gpu_done(m, p, &w->gpu, w->gpu_end, w);
}

/* The calls nested in the thread's current top-level call are its children, grandchildren...
 * (a thread's nested calls end, and come, before the call they nest in): a library call (a
 * cuBLAS GEMM) that returns at top level takes them, so that its kernels are found. */
static void nesting(cta_model *m, cta_proc *p, cta_thread *th, const ct_rec *r, uint32_t idx)
{
    const ct_rec_api *a = &r->u.api;
    if (a->flags & CT_API_LIBRARY)
        CTA_FEAT_CALL(m, library_call, m, p, r, cta_map_key(&m->api_names, idx), th->nested,
                      a->parent ? 0 : th->nnested);
    if (!a->parent) {
        th->nnested = 0;
        return;
    }
    cta_grow(&th->nested, &th->nested_cap, th->nnested + 1, sizeof *th->nested);
    th->nested[th->nnested++] = a->corr;
}

void cta_on_api(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_api *a = &r->u.api;
    uint32_t idx = cta_name_index(m, r->file, a->function, 1);
    cta_stat *st = &m->api[idx];
    uint64_t start = a->start <= r->ts ? a->start : r->ts;
    cta_sketch_add(&st->d, r->ts - start);
    st->layer = (a->flags & CT_API_DRIVER) ? CTA_LAYER_DRIVER
              : (a->flags & CT_API_LIBRARY) ? CTA_LAYER_LIBRARY : CTA_LAYER_RUNTIME;
    if (a->result != 0)
        st->failures++;
    uint8_t cat = cta_api_category(m, r->file, a->function, idx);
    cta_thread *th = cta_thread_of(p, r->tid);
    th->api_calls++;
    uint32_t stack = a->stack ? cta_stack_index(p, a->stack) : 0;
    /* a runtime call's site is on the driver call nested in it, which ends (and comes) first */
    if (!stack && a->corr == th->child_parent)
        stack = th->child_stack;
    th->child_parent = a->parent && stack ? a->parent : 0;
    th->child_stack = stack;
    if (th->sync_corr) /* its API record is the thread's next one, unless it was lost */
        sync_site(m, p, th, th->sync_corr == a->corr ? stack : 0);
    th->last_api_corr = a->corr;
    th->last_api_stack = stack;
    th->last_api_ns = r->ts - start;
    nesting(m, p, th, r, idx);
    int flag = ((cat & CTA_CAT_SYNCCOPY) ? CTA_PF_SYNCCOPY : 0) |
               ((cat & CTA_CAT_MEM) && !a->parent ? CTA_PF_MEMCALL : 0);
    if (!a->parent) /* a nested call lies inside its parent: the parent's interval covers it */
        cta_api_interval(p, start, r->ts, flag, r->tid);
    if (cat & CTA_CAT_DETAIL) {
        cta_apislot sl = {.corr = a->corr, .start = start, .end = r->ts, .idx = idx, .stack = stack,
                          .ctx = cta_feat_ref(m, p, th)};
        cta_joining *c = cta_call_get(p, a->corr, 0);
        if (c) {
            cta_call_api(c, &sl, r->tid);
            if (c->have_detail)
                cta_call_host_done(m, p, c);
        } else {
            /* A detail is appended next to its call, so a call of this thread that is still
             * without one four calls later never gets one (a nested call, a lost record): the
             * call waits in the thread's ring, not in the join table. */
            cta_apislot *old = &th->recent[th->api_calls % 4];
            if (old->corr)
                cta_feat_unref(m, p, old->ctx);
            *old = sl;
        }
    }
    if (th->await_corr)
        await_done(m, p, th);
    if (m->obs && m->obs->on_api)
        m->obs->on_api(m->obs->ctx, p, r, cta_map_key(&m->api_names, idx), stack);
}

/* Every kernel instance counts from its LAUNCH record, timed or not. */
static void launch_config(cta_stat *st, const ct_rec_launch *l, uint64_t now)
{
    if (!st->launched) {
        memcpy(st->grid, l->grid, sizeof st->grid);
        memcpy(st->block, l->block, sizeof st->block);
        st->first_ts = now;
    } else if (memcmp(st->grid, l->grid, sizeof st->grid) || memcmp(st->block, l->block, sizeof st->block)) {
        st->configs_vary = 1;
    }
    st->launched++;
}

/* An instance of kernel k launched as l, by a graph launch if in_graph: in the kernel table
 * (and the variants'); returns its variant's index. */
static uint32_t kernel_instance(cta_model *m, uint32_t k, const ct_rec_launch *l, int in_graph)
{
    launch_config(&m->kernels[k], l, m->now);
    m->kernels[k].in_graphs += (uint64_t)in_graph;
    m->launched++;
    if (!m->variants_on)
        return 0;
    char key[512];
    /* the configuration first, so that a table cutting long names keeps it */
    snprintf(key, sizeof key, "<<<(%u,%u,%u),(%u,%u,%u)>>> %s", l->grid[0], l->grid[1],
             l->grid[2], l->block[0], l->block[1], l->block[2], cta_map_key(&m->kernel_names, k));
    uint32_t v = cta_stat_index(&m->variants, &m->variant_stats, &m->variants_cap, key, 0);
    launch_config(&m->variant_stats[v], l, m->now);
    m->variant_stats[v].in_graphs += (uint64_t)in_graph;
    return v;
}

void cta_model_graph_kernel(cta_model *m, uint32_t k, const ct_rec_launch *l)
{
    kernel_instance(m, k, l, 1);
}

static void launch_counts(cta_model *m, cta_proc *p, cta_joining *c, const ct_rec *r)
{
    const ct_rec_launch *l = &c->u.launch;
    uint32_t k = c->kidx = cta_name_index(m, r->file, l->function, 0);
    if (l->flags & CT_LAUNCH_CAPTURED) {
        /* a node added to a graph being captured: nothing executed; its graph's launches
         * execute it */
        CTA_FEAT_CALL(m, captured, m, p, r, k);
        return;
    }
    c->vidx = kernel_instance(m, k, l, 0);
    cta_dev *dv = &p->dev[cta_dev_slot(l->device)];
    dv->seen = 1;
    dv->gpu_ops++;
}

/* Every copy and set counts from its COPY record, timed or not. */
static void copy_counts(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_copy *cp = &r->u.copy;
    if (cp->flags & CT_COPY_CAPTURED) {
        /* a node added to a graph being captured: nothing executed; its graph's launches
         * execute it */
        CTA_FEAT_CALL(m, captured, m, p, r, 0);
        return;
    }
    int op = cta_copy_op(cp), d = cta_dev_slot(cp->device);
    cta_copystat *cs = &m->copies[op][cta_host_kind(cp)];
    cs->count++;
    cs->bytes += cp->bytes;
    if (op != CTA_OP_H2H) {
        p->dev[d].seen = 1;
        p->dev[d].gpu_ops++;
    }
    cta_copy_peak(cs, op, &p->dev[d], m->now);
}

void cta_model_graph_copy(cta_model *m, const ct_rec_copy *cp)
{
    cta_copystat *cs = &m->copies[cta_copy_op(cp)][cta_host_kind(cp)];
    cs->count++;
    cs->bytes += cp->bytes;
    cs->in_graphs++;
}

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

/* LAUNCH and COPY records: the call's detail, which completes it if its API record and GPU
 * interval came first. */
static void detail_done(cta_model *m, cta_proc *p, const ct_rec *r, uint64_t corr, cta_joining *c)
{
    if (c->have_api)
        cta_call_host_done(m, p, c);
    /* the entry may be gone (a host-to-host copy has no GPU work) */
    c = cta_call_get(p, corr, 0);
    if (!c || !c->have_gpu)
        return;
    if (c->have_api) {
        cta_gpu_done(m, p, &c->gpu, c->gpu_end, c);
        return;
    }
    /* the API record, with the call site, comes next in this thread's stream */
    cta_thread *th = cta_thread_of(p, r->tid);
    if (th->await_corr)
        await_done(m, p, th);
    th->await_corr = corr;
}

void cta_on_launch(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_joining *c = cta_call_detail(p, r->u.launch.corr, CT_REC_LAUNCH, r->tid);
    c->u.launch = r->u.launch;
    launch_counts(m, p, c, r);
    detail_done(m, p, r, r->u.launch.corr, c);
}

void cta_on_copy(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_joining *c = cta_call_detail(p, r->u.copy.corr, CT_REC_COPY, r->tid);
    c->u.copy = r->u.copy;
    copy_counts(m, p, r);
    detail_done(m, p, r, r->u.copy.corr, c);
}

void cta_on_sync(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_sync *sy = &r->u.sync;
    uint64_t start = sy->start <= r->ts ? sy->start : r->ts;
    if (sy->kind >= CT_SYNC_DEVICE && sy->kind <= CT_SYNC_EVENT) {
        p->sync_calls++;
        p->sync_ns += r->ts - start;
        /* the site is on the call's API record, next in the thread's stream (or before) */
        cta_thread *th = cta_thread_of(p, r->tid);
        if (th->sync_corr)
            sync_site(m, p, th, 0);
        CTA_FEAT_CALL(m, sync, m, p, th, r->ts - start);
        th->sync_corr = sy->corr ? sy->corr : UINT64_MAX;
        th->sync_kind = sy->kind;
        th->sync_ns = r->ts - start;
        th->sync_start = start;
        if (th->last_api_corr == sy->corr && sy->corr)
            sync_site(m, p, th, th->last_api_stack);
    }
    if (sy->kind < 8)
        p->sync_count_kind[sy->kind]++;
    if (sy->kind != CT_SYNC_STREAM_WAIT_EVENT)
        cta_push_interval(p, start, r->ts, CTA_P_SYNC_BEGIN, CTA_P_SYNC_END, 0,
                          sy->kind == CT_SYNC_MEMCPY ? CTA_PF_SYNCCOPY : 0, r->tid);
}

void cta_join_finish(cta_model *m, cta_proc *p)
{
    for (size_t k = 0; k < p->nthreads; k++)
        if (p->threads[k].sync_corr)
            sync_site(m, p, &p->threads[k], 0);
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
