/* The per-record pass of the model (cta_model_feed, cta_model.h): each record joined into its call
 * (API record + LAUNCH/COPY/MEM detail + GPU interval, by correlation id, FORMAT.md 4.3), counted
 * into the per-name tables and call sites, and turned into the sweep's intervals and points. */
#include "cta_model_int.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t stack_index(cta_proc *p, uint32_t id)
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

static int dev_slot(uint32_t device)
{
    return device < CTA_MAX_DEV ? (int)device : CTA_MAX_DEV - 1;
}

/* ---- record handlers ---------------------------------------------------------------------- */

static cta_joining *call_get(cta_proc *p, uint64_t corr, int create)
{
    const uint32_t *found = ct_hash_find(&p->corr, corr);
    if (found)
        return cta_pool_at(&p->calls, *found);
    if (!create)
        return NULL;
    uint32_t idx = cta_pool_alloc(&p->calls);
    cta_xhash_put(&p->corr, corr, idx, "the calls in flight");
    cta_joining *c = cta_pool_at(&p->calls, idx);
    c->corr = corr;
    return c;
}

static void call_drop(cta_model *m, cta_proc *p, uint64_t corr)
{
    uint32_t idx;
    if (ct_hash_del(&p->corr, corr, &idx)) {
        cta_feat_unref(m, p, ((cta_joining *)cta_pool_at(&p->calls, idx))->ctx);
        cta_pool_put(&p->calls, idx);
    }
}

/* An Async pageable copy whose pinning can save time: host-to-device (the call stages the data
 * while the host waits), or a device-to-host copy large enough for bandwidth to matter; a small
 * readback costs its latency pinned or not, and the host waits for its data either way (a
 * synchronization after a pinned one waits for the same queued work). */
static int apg_priced(const ct_rec_copy *c)
{
    return c->dir == CT_DIR_HTOD || (c->dir == CT_DIR_DTOH && c->bytes >= CTA_BW_MIN_BYTES);
}

/* A synchronous copy that sync-memcpy counts: not a host-to-device one of 64 KiB or less (the
 * call returns once the data is staged) nor device-to-device (it does not block the host). */
static int sync_copy_counted(const ct_rec_copy *c)
{
    return c->op == CT_COPY_MEMCPY && !(c->flags & CT_COPY_ASYNC) &&
           !(c->dir == CT_DIR_HTOD && c->bytes <= 65536) && c->dir != CT_DIR_DTOD;
}

static int host_kind(const ct_rec_copy *c)
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

static int copy_op(const ct_rec_copy *c)
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

static void untimed_done(cta_model *m, cta_proc *p, const cta_joining *c);

/* API and detail of a call are both known: host-side accounting. */
static void call_host_done(cta_model *m, cta_proc *p, cta_joining *c)
{
    uint64_t host_ns = c->api_end - c->api_start;
    if ((c->type == CT_REC_LAUNCH && (c->u.launch.flags & CT_LAUNCH_CAPTURED)) ||
        (c->type == CT_REC_COPY && (c->u.copy.flags & CT_COPY_CAPTURED))) {
        call_drop(m, p, c->corr); /* a node added to a graph being captured: nothing executed */
        return;
    }
    if (c->type == CT_REC_COPY) {
        const ct_rec_copy *cp = &c->u.copy;
        int hk = host_kind(cp);
        if (cp->op == CT_COPY_MEMCPY && (cp->flags & CT_COPY_ASYNC) && hk == CTA_HK_PAGEABLE) {
            p->async_pageable_count++;
            p->async_pageable_bytes += cp->bytes;
            p->async_pageable_host_ns += host_ns;
            if (apg_priced(cp)) {
                int d = dev_slot(cp->device), dir = cp->dir == CT_DIR_DTOH;
                p->apg_bytes[d][dir] += cp->bytes;
                p->apg_host_ns[d][dir] += host_ns;
            }
            cta_site_add(m, p, CTA_SITE_ASYNC_PAGEABLE, c->api_idx, c->stack, cp->bytes, host_ns, c->ctx,
                         c->api_start, dev_slot(cp->device));
        }
        if (sync_copy_counted(cp)) {
            p->sync_copy_count++;
            p->sync_copy_bytes += cp->bytes;
            p->sync_copy_host_ns += host_ns;
            cta_site_add(m, p, CTA_SITE_SYNC_COPY, c->api_idx, c->stack, cp->bytes, host_ns, c->ctx,
                         c->api_start, dev_slot(cp->device));
        }
        if (cp->dir == CT_DIR_HTOH || p->gpu_timing == 0 || (cp->flags & CT_COPY_UNTIMED)) {
            /* no GPU record follows */
            untimed_done(m, p, c);
            call_drop(m, p, c->corr);
        }
    } else if (c->type == CT_REC_MEM) {
        if (c->churn) {
            p->churn_ns += host_ns;
            cta_site_add(m, p, CTA_SITE_CHURN, c->api_idx, c->stack, 0, host_ns, c->ctx, c->api_start,
                         c->mem_dev);
        }
        call_drop(m, p, c->corr);
    } else if (c->type == CT_REC_LAUNCH) {
        p->launches++;
        p->launch_api_ns += host_ns;
        m->kernels[c->kidx].launch_ns += host_ns;
        if (m->variants_on)
            m->variant_stats[c->vidx].launch_ns += host_ns;
        int dev = dev_slot(c->u.launch.device);
        if (c->stack) /* launches carry a call site only with --stacks all */
            cta_site_add(m, p, CTA_SITE_LAUNCH, c->api_idx, c->stack, 0, host_ns, c->ctx,
                         c->api_start, dev);
        else
            cta_site_note(p, CTA_SITE_LAUNCH, c->api_start, host_ns, dev);
        if (p->gpu_timing == 0 || (c->u.launch.flags & CT_LAUNCH_UNTIMED)) {
            untimed_done(m, p, c);
            call_drop(m, p, c->corr);
        }
    }
}

static void gpu_done(cta_model *m, cta_proc *p, const ct_rec_gpu *g, uint64_t end, cta_joining *c);

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
    cta_joining *w = call_get(p, th->await_corr, 0);
    th->await_corr = 0;
    if (w && w->have_gpu && w->have_detail)
        gpu_done(m, p, &w->gpu, w->gpu_end, w);
}

/* The call's API record joins its entry. */
static void call_api(cta_joining *c, const cta_apislot *a, uint32_t tid)
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

static void on_api(cta_model *m, cta_proc *p, const ct_rec *r)
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
    uint32_t stack = a->stack ? stack_index(p, a->stack) : 0;
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
        cta_joining *c = call_get(p, a->corr, 0);
        if (c) {
            call_api(c, &sl, r->tid);
            if (c->have_detail)
                call_host_done(m, p, c);
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

/* Detail records (LAUNCH, COPY, MEM) attach to their call: its entry, or its API record still in
 * the thread's ring (the caller does the host-side accounting once it has stored the detail). */
static cta_joining *detail(cta_proc *p, uint64_t corr, int type, uint32_t tid)
{
    cta_joining *c = call_get(p, corr, 1);
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
            call_api(c, &th->recent[hit], tid);
        }
    }
    return c;
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
    cta_dev *dv = &p->dev[dev_slot(l->device)];
    dv->seen = 1;
    dv->gpu_ops++;
}

/* The peak a copy is measured against: the device's memory for device-side copies and sets,
 * its host link for the others (from the first device with properties it ran on). */
static void copy_peak(cta_copystat *cs, int op, const cta_dev *dv, uint64_t now)
{
    if (cs->peak_bps != 0 || !dv->have_prop)
        return;
    cs->peak_bps = op == CTA_OP_D2D || op == CTA_OP_MEMSET ? cta_dev_mem_peak(&dv->prop)
                                                         : cta_dev_link_peak(&dv->prop);
    cs->peak_ts = now;
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
    int op = copy_op(cp), d = dev_slot(cp->device);
    cta_copystat *cs = &m->copies[op][host_kind(cp)];
    cs->count++;
    cs->bytes += cp->bytes;
    if (op != CTA_OP_H2H) {
        p->dev[d].seen = 1;
        p->dev[d].gpu_ops++;
    }
    copy_peak(cs, op, &p->dev[d], m->now);
}

void cta_model_graph_copy(cta_model *m, const ct_rec_copy *cp)
{
    cta_copystat *cs = &m->copies[copy_op(cp)][host_kind(cp)];
    cs->count++;
    cs->bytes += cp->bytes;
    cs->in_graphs++;
}

/* What an observer sees of a call with its detail. */
static void call_view(const cta_model *m, const cta_joining *c, cta_call *call)
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
    } else if (c->type == CT_REC_COPY) {
        call->is_copy = 1;
        call->copy = &c->u.copy;
    }
}

/* A kernel, copy or set whose GPU interval will not come (GPU timing off, or the trace ended
 * without it): the observer still sees it. */
static void untimed_done(cta_model *m, cta_proc *p, const cta_joining *c)
{
    if (!m->obs || !m->obs->on_untimed || (c->type == CT_REC_COPY && c->u.copy.dir == CT_DIR_HTOH))
        return;
    cta_call call = {0};
    call_view(m, c, &call);
    m->obs->on_untimed(m->obs->ctx, p, &call);
}

/* One operation into w. Its interval is clean when its end was timed exactly and it began
 * after its call returned (queued behind other work, its start event fired as the work
 * began); one that began before (an idle stream's start event fires at once, and the call may
 * hand the work over much later: a lazily loaded module, a slow launch) holds some of the
 * call. */
static void work_sample(cta_work *w, const cta_joining *c, uint64_t start, uint64_t end, int bounded)
{
    w->ops++;
    if (bounded)
        return;
    w->exact_ops++;
    w->exact_ns += end - start;
    if (c && c->have_api && start >= c->api_end) {
        w->clean_ops++;
        w->clean_ns += end - start;
    }
}

/* A GPU interval with whatever is known of its call (c NULL or without detail: unmatched). */
static void gpu_done(cta_model *m, cta_proc *p, const ct_rec_gpu *g, uint64_t end, cta_joining *c)
{
    int d = dev_slot(g->device);
    cta_dev *dv = &p->dev[d];
    dv->seen = 1;
    uint64_t start = g->start <= end ? g->start : end, dur = end - start;
    cta_call call = {.corr = g->corr};
    int flag = 0, bounded = (g->flags & CT_GPU_END_BOUND) != 0;
    if (c && c->have_detail)
        call_view(m, c, &call);
    if (c && c->have_detail && c->type == CT_REC_LAUNCH) {
        uint32_t k = c->kidx;
        cta_sketch_add(bounded ? &m->kernels[k].b : &m->kernels[k].d, dur);
        m->launched_timed++;
        dv->gpu_timed++;
        cta_grow(&p->kern_ns, &p->kern_cap, k + 1, sizeof *p->kern_ns);
        p->kern_ns[k] += dur;
        dv->kernels++;
        dv->kernel_ns += dur;
        work_sample(&dv->work_kernels, c, start, end, bounded);
        if (c->have_api) {
            if (start >= c->api_start)
                cta_sketch_add(&p->launch_queue, start - c->api_start);
            /* A record that starts before its call returned (nothing was queued before it)
             * vouches only for the kernel's time after the return, or for none if its end is
             * only a bound: the call may have handed it over at its last instant */
            uint64_t call_ns = c->api_end - c->api_start, surely = dur;
            if (start < c->api_end)
                surely = (g->flags & CT_GPU_END_BOUND) || end < c->api_end ? 0 : end - c->api_end;
            if (surely < call_ns)
                p->short_kernels++;
            /* the wait is the launch's when the call took at least half of it (as in a launch
             * gap); else (the host did other things first, or was descheduled) only the
             * part in the call is */
            uint64_t latest = start > c->api_end ? start : c->api_end < end ? c->api_end : end;
            uint64_t wait = latest > dv->end_seen ? latest - dv->end_seen : 0;
            if (wait && 2 * call_ns < wait)
                wait = latest > c->api_start && c->api_start > dv->end_seen ? latest - c->api_start : 0;
            if (wait) {
                dv->launch_wait_ns += wait;
                dv->launch_waits++;
                dv->graph_launch_wait_ns += (c->u.launch.flags & CT_LAUNCH_GRAPH) ? wait : 0;
            }
        }
        if (m->variants_on)
            cta_sketch_add(bounded ? &m->variant_stats[c->vidx].b : &m->variant_stats[c->vidx].d, dur);
    } else if (c && c->have_detail && c->type == CT_REC_COPY) {
        const ct_rec_copy *cp = &c->u.copy;
        int op = copy_op(cp), hk = host_kind(cp);
        cta_copystat *cs = &m->copies[op][hk];
        if (bounded) {
            cs->bounded++;
            cs->bounded_bytes += cp->bytes;
            cs->bounded_ns += dur;
        } else {
            cs->timed++;
            cs->timed_bytes += cp->bytes;
            cs->ns += dur;
        }
        dv->gpu_timed++;
        copy_peak(cs, op, dv, m->now);
        dv->copy_ns += dur;
        work_sample(&dv->work_copies[op], c, start, end, bounded);
        if (op == CTA_OP_H2D || op == CTA_OP_D2H) {
            int dir = op == CTA_OP_D2H;
            if (op == CTA_OP_H2D) {
                flag = CTA_PF_H2D;
                p->h2d_copies++;
            }
            if (hk == CTA_HK_PAGEABLE && (cp->flags & CT_COPY_ASYNC) && cp->op == CT_COPY_MEMCPY &&
                c->have_api && apg_priced(cp)) {
                uint64_t from = start > c->api_start ? start : c->api_start;
                uint64_t to = end > c->api_end ? end : c->api_end;
                p->apg_timed_bytes[d][dir] += cp->bytes;
                p->apg_timed_host_ns[d][dir] += c->api_end - c->api_start;
                p->apg_span_ns[d][dir] += to - from;
                p->apg_tail_ns[d][dir] += end > c->api_end ? end - c->api_end : 0;
            }
            /* a latency-bound synchronous copy: its interval ends when its call returned (the
             * tracer's bound), so it holds the host's wake-up, in which the GPU had nothing
             * queued; the copy itself takes what a small copy timed exactly takes, else at
             * most the fastest of them (cta_diag.c) */
            if (sync_copy_counted(cp) && cp->bytes < CTA_BW_MIN_BYTES && c->have_api) {
                p->scp_ns[d][dir] += dur;
                if (!p->scp_n[d][dir]++ || dur < p->scp_min[d][dir])
                    p->scp_min[d][dir] = dur;
            }
            if (cp->bytes < CTA_BW_MIN_BYTES && !(g->flags & CT_GPU_END_BOUND) &&
                (!p->small_exact_n[d][dir]++ || dur < p->small_exact_min[d][dir]))
                p->small_exact_min[d][dir] = dur;
            if (hk == CTA_HK_PINNED && cp->bytes >= CTA_BW_MIN_BYTES) {
                p->pinned_bytes[d][dir] += cp->bytes;
                p->pinned_ns[d][dir] += dur;
            } else if (hk == CTA_HK_PAGEABLE && cp->bytes >= CTA_BW_MIN_BYTES) {
                /* a smaller copy costs its latency, pinned or not */
                p->pg_bytes[d][dir] += cp->bytes;
                p->pg_ns[d][dir] += dur;
                if (c->have_api && end > c->api_end)
                    p->pg_tail_ns[d][dir] += end - c->api_end;
                p->pg_count[d][dir]++;
                p->pageable_async += (cp->flags & CT_COPY_ASYNC) && cp->op == CT_COPY_MEMCPY;
                cta_site_add(m, p, CTA_SITE_PAGEABLE, c->have_api ? c->api_idx : UINT32_MAX, c->stack,
                             cp->bytes, dur, c->ctx, start, d);
            }
        }
    } else {
        p->unmatched_gpu++;
    }
    if (c && c->have_detail && c->ctx) {
        /* an operation that began before its call returned (an idle stream) began by then; one
         * whose end is a bound ended after it began */
        uint64_t late = !c->have_api || start >= c->api_end ? start : c->api_end < end ? c->api_end : end;
        CTA_FEAT_CALL(m, call_gpu, m, p, c->ctx, start, end, c->type == CT_REC_LAUNCH, late,
                      bounded ? start : end);
    }
    cta_gpu_interval(p, d, start, end, flag);
    if (end > dv->end_seen)
        dv->end_seen = end;
    CTA_FEAT_CALL(m, gpu, m, p, g, end, &call);
    if (m->obs && m->obs->on_gpu)
        m->obs->on_gpu(m->obs->ctx, p, g, end, &call);
    if (c)
        call_drop(m, p, g->corr);
}

/* GPU records are joined to their call's LAUNCH / COPY detail. A GPU interval can end before
 * its call returns (a synchronous copy, a tiny kernel), so it can be delivered first: it then
 * waits in the call's entry for the detail. */
static void on_gpu(cta_model *m, cta_proc *p, const ct_rec *r)
{
    /* the union of the exact intervals sees the records in time order, whenever their call's
     * records come */
    const ct_rec_gpu *g = &r->u.gpu;
    cta_dev *dv = &p->dev[dev_slot(g->device)];
    uint64_t a = g->start <= r->ts ? g->start : r->ts;
    if (r->ts - a > p->gpu_longest)
        p->gpu_longest = r->ts - a;
    if (g->flags & CT_GPU_END_BOUND) {
        dv->bounded_ops++;
    } else {
        /* as the sweep: the file's declared span covers every interval from the first on */
        uint64_t seen = p->gpu_longest > UINT64_MAX / 4 ? UINT64_MAX / 2 : 2 * p->gpu_longest;
        uint64_t lag = seen > p->stats->max_span ? seen : p->stats->max_span;
        cta_union_add(&dv->u_exact, a, r->ts, lag > UINT64_MAX / 2 ? lag : lag + CTA_SWEEP_MIN_LAG_NS);
    }
    cta_joining *c = call_get(p, r->u.gpu.corr, 1);
    if (c->have_detail && c->type != CT_REC_MEM) {
        gpu_done(m, p, &r->u.gpu, r->ts, c);
        return;
    }
    c->have_gpu = 1;
    c->gpu = r->u.gpu;
    c->gpu_end = r->ts;
}

static int mem_slot(const ct_rec_mem *mr)
{
    switch (mr->kind) {
    case CT_ALLOC_PINNED:
    case CT_ALLOC_HOST_REGISTER:
        return CTA_HOST_DEV;
    case CT_ALLOC_DEVICE:
    case CT_ALLOC_POOL:
    case CT_ALLOC_VMM_PHYSICAL:
    case CT_ALLOC_MANAGED:
        return dev_slot(mr->device);
    default:
        return -1; /* mappings and reservations do not add memory in use */
    }
}

static void on_mem(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_mem *mr = &r->u.mem;
    int d = mem_slot(mr);
    if (d < 0)
        return;
    uint32_t stack = stack_index(p, mr->stack);
    int churn = 0;
    if (mr->op == CT_MEM_ALLOC) {
        if (mr->result != 0) {
            cta_feat_where_now(m, p, cta_thread_of(p, r->tid), CTA_WHERE_OOM, 1);
            cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_FAIL, .dev = (uint8_t)d, .a = stack,
                                  .b = mr->size, .kind = (uint8_t)mr->kind,
                                  .flag = (uint8_t)(mr->result < 255 ? mr->result : 255)});
            return;
        }
        uint64_t key[2] = {(uint64_t)d, mr->size};
        if (d != CTA_HOST_DEV && cta_map_find(&p->freed_sizes, key, sizeof key) != UINT32_MAX &&
            mr->kind == CT_ALLOC_DEVICE) {
            churn = 1;
            p->churn_allocs++;
        }
        uint32_t li = cta_pool_alloc(&p->allocs);
        cta_liveent *le = cta_pool_at(&p->allocs, li);
        le->size = mr->size;
        le->stack = stack;
        le->dev = (uint8_t)d;
        le->churn = (uint8_t)churn;
        le->kind = (uint8_t)mr->kind;
        uint32_t old;
        if (ct_hash_del(&p->live, mr->address ? mr->address : mr->handle, &old))
            cta_pool_put(&p->allocs, old); /* its free was lost: the new block replaces it */
        cta_xhash_put(&p->live, mr->address ? mr->address : mr->handle, li, "the live allocations");
        cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_ALLOC, .dev = (uint8_t)d, .a = stack, .b = mr->size});
    } else {
        uint32_t li;
        if (!ct_hash_del(&p->live, mr->address ? mr->address : mr->handle, &li)) {
            p->unknown_frees++;
            return;
        }
        cta_liveent *le = cta_pool_at(&p->allocs, li);
        uint64_t key[2] = {(uint64_t)le->dev, le->size};
        cta_map_get(&p->freed_sizes, key, sizeof key, NULL);
        churn = le->churn;
        if (churn)
            p->churn_frees++;
        cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_FREE, .dev = le->dev, .a = le->stack, .b = le->size});
        cta_pool_put(&p->allocs, li);
    }
    if (!mr->corr) /* no call to join (FORMAT.md: 0 means none): an entry would never go */
        return;
    cta_joining *c = detail(p, mr->corr, CT_REC_MEM, r->tid);
    c->churn = (uint8_t)churn;
    c->mem_dev = (uint8_t)(churn ? d : 0);
    if (stack)
        c->stack = stack;
    if (c->have_api)
        call_host_done(m, p, c);
}

static void on_cpu(cta_model *m, cta_proc *p, const ct_rec *r)
{
    (void)m;
    cta_thread *th = cta_thread_of(p, r->u.cpu.tid);
    uint64_t cpu = r->u.cpu.user_ns + r->u.cpu.sys_ns;
    if (th->have_reading && r->ts > th->last_ts && cpu >= th->last_cpu) {
        double rate = (double)(cpu - th->last_cpu) / (double)(r->ts - th->last_ts);
        cta_pt pt = {.t = th->last_ts, .type = CTA_P_RATE, .a = th->tid};
        memcpy(&pt.b, &rate, sizeof rate);
        cta_sweep_push(p, pt);
    }
    th->have_reading = 1;
    th->last_ts = r->ts;
    th->last_cpu = cpu;
}

static void on_thread(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_thread *th = cta_thread_of(p, r->u.thread.tid);
    char tmp[CT_STRTMP], name[sizeof th->name];
    snprintf(name, sizeof name, "%s", ct_reader_str(m->rd, r->file, r->u.thread.name, tmp));
    /* a thread is described again when it exits: report names, not records */
    if (strcmp(name, th->name) != 0) {
        memcpy(th->name, name, sizeof name);
        if (m->obs && m->obs->on_thread)
            m->obs->on_thread(m->obs->ctx, p, th);
    }
}

static void on_device(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_dev *dv = &p->dev[dev_slot(r->u.device.device)];
    dv->seen = 1;
    dv->prop = r->u.device;
    dv->have_prop = 1;
    char tmp[CT_STRTMP];
    snprintf(dv->name, sizeof dv->name, "%s", ct_reader_str(m->rd, r->file, r->u.device.name, tmp));
}

static void on_shlib(cta_model *m, cta_proc *p, const ct_rec *r)
{
    if (p->nshlibs >= CTA_MAX_SHLIBS)
        return;
    cta_shlib *l = &p->shlibs[p->nshlibs++];
    char tmp[CT_STRTMP];
    l->kind = r->u.shlib.kind;
    snprintf(l->path, sizeof l->path, "%s", ct_reader_str(m->rd, r->file, r->u.shlib.path, tmp));
    snprintf(l->build_id, sizeof l->build_id, "%s",
             r->u.shlib.build_id ? ct_reader_str(m->rd, r->file, r->u.shlib.build_id, tmp) : "");
}

static void on_python(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_python *py = &p->python;
    char tmp[CT_STRTMP];
    const ct_rec_python *q = &r->u.python;
    py->version = q->version;
    snprintf(py->program, sizeof py->program, "%s", ct_reader_str(m->rd, r->file, q->program, tmp));
    snprintf(py->prefix, sizeof py->prefix, "%s", ct_reader_str(m->rd, r->file, q->prefix, tmp));
    snprintf(py->exec_prefix, sizeof py->exec_prefix, "%s",
             ct_reader_str(m->rd, r->file, q->exec_prefix, tmp));
    snprintf(py->path, sizeof py->path, "%s", ct_reader_str(m->rd, r->file, q->path, tmp));
}

static void on_capture(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_sweep_capture(p, r->ts, r->u.capture.op == CT_CAPTURE_START);
    if (m->obs && m->obs->on_capture)
        m->obs->on_capture(m->obs->ctx, p, r);
}

static void on_stream(cta_model *m, cta_proc *p, const ct_rec *r)
{
    if (m->obs && m->obs->on_stream && r->u.stream.op == CT_STREAM_CREATE)
        m->obs->on_stream(m->obs->ctx, p, dev_slot(r->u.stream.device), r->u.stream.stream);
}

/* LAUNCH and COPY records: the call's detail, which completes it if its API record and GPU
 * interval came first. */
static void detail_done(cta_model *m, cta_proc *p, const ct_rec *r, uint64_t corr, cta_joining *c)
{
    if (c->have_api)
        call_host_done(m, p, c);
    /* the entry may be gone (a host-to-host copy has no GPU work) */
    c = call_get(p, corr, 0);
    if (!c || !c->have_gpu)
        return;
    if (c->have_api) {
        gpu_done(m, p, &c->gpu, c->gpu_end, c);
        return;
    }
    /* the API record, with the call site, comes next in this thread's stream */
    cta_thread *th = cta_thread_of(p, r->tid);
    if (th->await_corr)
        await_done(m, p, th);
    th->await_corr = corr;
}

static void on_launch(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_joining *c = detail(p, r->u.launch.corr, CT_REC_LAUNCH, r->tid);
    c->u.launch = r->u.launch;
    launch_counts(m, p, c, r);
    detail_done(m, p, r, r->u.launch.corr, c);
}

static void on_copy(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_joining *c = detail(p, r->u.copy.corr, CT_REC_COPY, r->tid);
    c->u.copy = r->u.copy;
    copy_counts(m, p, r);
    detail_done(m, p, r, r->u.copy.corr, c);
}

static void on_sync(cta_model *m, cta_proc *p, const ct_rec *r)
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

/* NVTX records are the NVTX feature's; the observer sees them too (the timeline's tracks). */
static void on_nvtx(cta_model *m, cta_proc *p, const ct_rec *r)
{
    if (m->obs && m->obs->on_nvtx)
        m->obs->on_nvtx(m->obs->ctx, p, r);
}

static void on_end(cta_model *m, cta_proc *p, const ct_rec *r)
{
    (void)m;
    p->ended = 1;
    p->end = r->u.end;
}

/* The core's handler of each record type, named after the type's ct_rec member; NULL: none
 * (definitions the reader resolves, records only features take). Generated from the format's
 * list of record types, this is CT_REC_LIST(CTA_JOIN_ON) with
 *   #define CTA_JOIN_ON(TYPE, member, ...) [CT_REC_##TYPE] = on_##member,
 * hence the names below for the types without a handler. */
#define on_string NULL
#define on_frame NULL
#define on_stack NULL
#define on_loss NULL
#define on_gemm NULL
#define on_graph NULL
#define on_proc NULL
#define on_proc_sample NULL
#define on_host_sample NULL
#define on_nvtx_range on_nvtx
#define on_nvtx_mark on_nvtx
#define on_nvtx_begin on_nvtx
typedef void (*cta_rec_fn)(cta_model *m, cta_proc *p, const ct_rec *r);
static const cta_rec_fn join_on[CT_REC_TYPE_LIMIT] = {
    [CT_REC_STRING] = on_string,
    [CT_REC_FRAME] = on_frame,
    [CT_REC_STACK] = on_stack,
    [CT_REC_THREAD] = on_thread,
    [CT_REC_DEVICE] = on_device,
    [CT_REC_STREAM] = on_stream,
    [CT_REC_API] = on_api,
    [CT_REC_LAUNCH] = on_launch,
    [CT_REC_COPY] = on_copy,
    [CT_REC_GPU] = on_gpu,
    [CT_REC_MEM] = on_mem,
    [CT_REC_SYNC] = on_sync,
    [CT_REC_CPU] = on_cpu,
    [CT_REC_LOSS] = on_loss,
    [CT_REC_END] = on_end,
    [CT_REC_NVTX_RANGE] = on_nvtx_range,
    [CT_REC_NVTX_MARK] = on_nvtx_mark,
    [CT_REC_GEMM] = on_gemm,
    [CT_REC_SHLIB] = on_shlib,
    [CT_REC_PYTHON] = on_python,
    [CT_REC_NVTX_BEGIN] = on_nvtx_begin,
    [CT_REC_CAPTURE] = on_capture,
    [CT_REC_GRAPH] = on_graph,
    [CT_REC_PROC] = on_proc,
    [CT_REC_PROC_SAMPLE] = on_proc_sample,
    [CT_REC_HOST_SAMPLE] = on_host_sample,
};

void cta_model_feed(cta_model *m, const ct_rec *r)
{
    if (r->file - m->file0 >= m->nprocs) /* unsigned: files before file0 too */
        return;
    cta_proc *p = &m->procs[r->file - m->file0];
    m->records++;
    m->now = r->ts;
    if (r->type >= CT_REC_TYPE_LIMIT)
        return;
    /* definitions may carry any time (a tracer interns some before its clock is set): only
     * activity places a process on the time axis */
    if (r->type >= CT_REC_API && r->type != CT_REC_STREAM) {
        uint64_t first = r->type == CT_REC_API ? r->u.api.start : r->type == CT_REC_GPU ? r->u.gpu.start
                       : r->type == CT_REC_SYNC ? r->u.sync.start : r->ts;
        if (first > r->ts)
            first = r->ts;
        if (first < p->t_first)
            p->t_first = first;
        if (r->ts > p->t_last)
            p->t_last = r->ts;
        if (first < m->t0)
            m->t0 = first;
    }
    /* the features that take the type first: the core's handler may tell an observer */
    const cta_slots *fs = &m->plugs->rec[r->type];
    for (int k = 0; k < fs->n; k++)
        m->plugs->at[fs->slot[k]]->record(m, p, r);
    if (join_on[r->type])
        join_on[r->type](m, p, r);
    cta_sweep *s = p->sweep;
    /* the file's declared span covers every record from the first on; once a record exceeds it
     * (a file of 1.0 declares none, a writer may lie) the longest interval seen, with a margin
     * since it can only grow late */
    uint64_t lag = s->max_dur <= s->file_span ? s->file_span
                 : s->max_dur > UINT64_MAX / 2 ? UINT64_MAX : 2 * s->max_dur;
    if (lag < CTA_SWEEP_MIN_LAG_NS)
        lag = CTA_SWEEP_MIN_LAG_NS;
    if (s->pending > CTA_SWEEP_MAX_PENDING)
        lag = 0;
    if (s->pending && r->ts > lag && s->head < (r->ts - lag) >> CTA_BUCKET_SHIFT)
        cta_sweep_run(m, p, r->ts - lag);
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
        cta_joining *c = call_get(p, waiting[k], 0);
        ct_rec_gpu g = c->gpu;
        gpu_done(m, p, &g, c->gpu_end, c->have_detail ? c : NULL);
        call_drop(m, p, waiting[k]);
    }
    free(waiting);
}
