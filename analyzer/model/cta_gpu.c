/* GPU intervals (cta_model_int.h, "cta_gpu.c"), once joined with what is known of their call
 * (the GPU record itself is cta_feed.c's): counted into the kernel and copy tables, the
 * devices' work and the copies' re-costing, and turned into the sweep's busy runs. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_names.h"
#include "cta_sweep.h"

/* The peak a copy is measured against: the device's memory for device-side copies and sets,
 * its host link for the others (from the first device with properties it ran on). */
void cta_copy_peak(cta_copystat *cs, int op, const cta_dev *dv, uint64_t now)
{
    if (cs->peak_bps != 0 || !dv->have_prop)
        return;
    cs->peak_bps = op == CTA_OP_D2D || op == CTA_OP_MEMSET ? cta_dev_mem_peak(&dv->prop)
                                                         : cta_dev_link_peak(&dv->prop);
    cs->peak_ts = now;
}

/* One operation into w. An interval timed exactly is the work alone when it began after its
 * call returned (queued behind other work, its start event fired as the work began); one that
 * began before (an idle stream's start event fires at once, and the call may hand the work over
 * much later: a lazily loaded module, a slow launch, a pageable copy's staging) holds some of
 * the call, and only its part after the call's return is surely the work. */
static void work_sample(cta_work *w, const cta_joining *c, uint64_t start, uint64_t end, int bounded)
{
    if (!w->ops++ || end - start < w->shortest_ns)
        w->shortest_ns = end - start;
    if (bounded)
        return;
    w->exact_ops++;
    w->exact_ns += c && c->have_api && start < c->api_end ? (end > c->api_end ? end - c->api_end : 0)
                                                          : end - start;
}

/* A GPU interval with whatever is known of its call (c NULL or without detail: unmatched). */
void cta_gpu_done(cta_model *m, cta_proc *p, const ct_rec_gpu *g, uint64_t end, cta_joining *c)
{
    int d = cta_dev_slot(g->device);
    cta_dev *dv = &p->dev[d];
    dv->seen = 1;
    uint64_t start = g->start <= end ? g->start : end, dur = end - start;
    cta_call call = {.corr = g->corr};
    int flag = 0, bounded = (g->flags & CT_GPU_END_BOUND) != 0;
    if (c && c->have_detail)
        cta_call_view(m, c, &call);
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
        int op = cta_copy_op(cp), hk = cta_host_kind(cp);
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
        cta_copy_peak(cs, op, dv, m->now);
        dv->copy_ns += dur;
        work_sample(&dv->work_copies[op], c, start, end, bounded);
        if (op == CTA_OP_H2D || op == CTA_OP_D2H) {
            int dir = op == CTA_OP_D2H;
            if (op == CTA_OP_H2D) {
                int batch = dv->first_kernel && dv->kernel_since_h2d;
                flag = CTA_PF_H2D | (batch ? CTA_PF_BATCH : 0);
                dv->h2d_before_kernels += !dv->first_kernel;
                dv->h2d_batches += batch;
                dv->kernel_since_h2d = 0;
            }
            if (hk == CTA_HK_PAGEABLE && (cp->flags & CT_COPY_ASYNC) && cp->op == CT_COPY_MEMCPY &&
                c->have_api && cta_apg_priced(cp)) {
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
            if (cta_sync_copy_counted(cp) && cp->bytes < CTA_BW_MIN_BYTES && c->have_api) {
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
    if (c && c->type == CT_REC_LAUNCH)
        dv->kernel_since_h2d = 1;
    if (c && c->type == CT_REC_LAUNCH && !dv->first_kernel) {
        dv->first_kernel = 1;
        dv->h2d_batches += dv->h2d_before_kernels > 0; /* the first step's */
        cta_sweep_push(p, (cta_pt){.t = start, .type = CTA_P_FIRST_KERNEL, .dev = (uint8_t)d});
    }
    if (end > dv->end_seen)
        dv->end_seen = end;
    CTA_FEAT_CALL(m, gpu, m, p, g, end, &call);
    if (m->obs && m->obs->on_gpu)
        m->obs->on_gpu(m->obs->ctx, p, g, end, &call);
    if (c)
        cta_call_drop(m, p, g->corr);
}
