#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_names.h"
#include "cta_sweep.h"
#include "cta_top.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Test only: CUTRACE_TEST_SWEEP_FAULT=1 (read once, by cta_model_init) plants a known bug in the
 * sweep, zero-length intervals ending before they begin, so that the differential tests
 * (tests/refmodel) can show they detect a wrong breakdown. Never set it otherwise. */
int cta_sweep_fault;

void cta_sweep_ring_grow(cta_sweep *s, size_t need)
{
    assert(need <= CTA_RING_MAX);
    size_t nc = s->cap ? s->cap : 64;
    while (nc < need)
        nc *= 2;
    cta_bucket *nr = cta_xmalloc(nc * sizeof *nr, "the sweep's queue");
    uint64_t *occ = cta_xmalloc(nc / 64 * sizeof *occ, "the sweep's queue");
    for (size_t i = 0; i < s->cap; i++) {
        cta_bucket *b = &s->ring[(s->head + i) & (s->cap - 1)];
        size_t k = (s->head + i) & (nc - 1);
        nr[k] = *b;
        if (b->n)
            occ[k >> 6] |= 1ull << (k & 63);
    }
    free(s->ring);
    free(s->occ);
    s->ring = nr;
    s->occ = occ;
    s->cap = nc;
}

/* The first ring bucket at or after head that holds points (the ring holds some). */
static uint64_t ring_next(const cta_sweep *s)
{
    size_t mask = s->cap - 1, start = s->head & mask, nw = s->cap / 64, w = start >> 6;
    uint64_t bits = s->occ[w] & (~0ull << (start & 63));
    for (size_t k = 0; !bits; k++) {
        assert(k < nw);
        w = (w + 1) & (nw - 1);
        bits = s->occ[w]; /* back at the start word, its low bits are the window's end */
    }
    size_t slot = (w << 6) | (size_t)__builtin_ctzll(bits);
    return s->head + ((slot - start) & mask);
}

void cta_sweep_far_push(cta_sweep *s, cta_pt pt)
{
    cta_grow(&s->far, &s->far_cap, s->nfar + 1, sizeof *s->far);
    size_t i = s->nfar++;
    while (i > 0 && cta_pt_less(&pt, &s->far[(i - 1) / 2])) {
        s->far[i] = s->far[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->far[i] = pt;
}

static cta_pt far_pop(cta_sweep *s)
{
    assert(s->nfar > 0);
    cta_pt top = s->far[0], last = s->far[--s->nfar];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nfar)
            break;
        if (c + 1 < s->nfar && cta_pt_less(&s->far[c + 1], &s->far[c]))
            c++;
        if (!cta_pt_less(&s->far[c], &last))
            break;
        s->far[i] = s->far[c];
        i = c;
    }
    if (s->nfar)
        s->far[i] = last;
    return top;
}

void cta_sweep_rebase(cta_sweep *s, uint64_t bi)
{
    if (s->head - bi + s->cap <= CTA_RING_MAX) {
        cta_sweep_ring_grow(s, s->head + s->cap - bi);
        s->head = bi;
        return;
    }
    /* too far back for the ring to span both: what it holds waits in far */
    for (size_t k = 0; k < s->cap; k++) {
        cta_bucket *b = &s->ring[k];
        for (size_t i = 0; i < b->n; i++)
            cta_sweep_far_push(s, b->v[i]);
        b->n = 0;
    }
    memset(s->occ, 0, s->cap / 64 * sizeof *s->occ);
    s->head = bi;
}

/* ---- the sweep: applying points ----------------------------------------------------------- */


static void gap_commit(cta_model *m, cta_proc *p, int d);

/* Advances the state from s->now to t: busy time and idle time by host state. Gaps that ended
 * at s->now are final once the sweep moves past it. */
static void advance(cta_model *m, cta_proc *p, uint64_t t)
{
    cta_sweep *s = p->sweep;
    if (s->applied && t > s->now)
        for (int d = 0; d < s->ndev; d++)
            if (p->dev[d].closed_open)
                gap_commit(m, p, d);
    if (!s->applied) {
        s->applied = 1;
        s->now = t;
    }
    if (t <= s->now)
        return;
    uint64_t len = t - s->now;
    cta_hostsplit seg = {0};
    double seg_cpu = 0, seg_rate = 0;
    int seg_done = 0, seg_ch = CTA_CH_PEND_UNKNOWN;
    for (int d = 0; d < s->ndev; d++) {
        cta_dev *dv = &p->dev[d];
        if (!dv->windowed)
            continue;
        if (dv->busy_depth > 0) {
            dv->busy += len;
            cta_series_add_interval(&dv->util, CTA_CH_BUSY, s->now, t, 1);
            continue;
        }
        if (s->paused) { /* not recorded: neither idle nor part of the gap */
            dv->pause_pend += len;
            continue;
        }
        if (s->mem_depth > 0)
            dv->gap_mem = 1;
        if (!seg_done) {
            seg_done = 1;
            if (s->sync_depth > 0) {
                seg.blocked = len;
                seg_ch = CTA_CH_PEND_BLOCKED;
            } else if (s->api_depth > 0) {
                seg.in_api = len;
                seg_ch = CTA_CH_PEND_IN_API;
            } else {
                uint32_t ti;
                const cta_thread *th = NULL;
                uint32_t tid = s->last_tid;
                if (cta_map_count(&p->thread_idx) &&
                    (ti = cta_map_find(&p->thread_idx, &tid, sizeof tid)) != UINT32_MAX)
                    th = &p->threads[ti];
                if (th && th->rate_known) {
                    /* split when the gap ends (gap_end): rounding each segment would make the
                     * split depend on where unrelated points cut the gap */
                    seg_rate = th->rate < 0 ? 0 : th->rate > 1 ? 1 : th->rate;
                    seg_cpu = (double)len * seg_rate;
                    seg.wait = len;
                    seg_ch = CTA_CH_PEND_OUTSIDE;
                } else {
                    seg.unknown = len;
                }
            }
        }
        cta_hostsplit_add(&dv->pend, &seg);
        dv->pend_cpu += seg_cpu;
        cta_series_add_interval(&dv->util, (uint32_t)seg_ch, s->now, t, 1);
        if (seg_cpu > 0)
            cta_series_add_interval(&dv->util, CTA_CH_PEND_CPU, s->now, t, seg_rate);
        for (int k = 0; k < m->plugs->idle.n; k++) /* only where the feature has state */
            if (p->feat[m->plugs->idle.slot[k]])
                m->plugs->at[m->plugs->idle.slot[k]]->idle(m, p, d, s->last_tid, len);
    }
    s->now = t;
}

/* The gap in progress ends at t (GPU work begins). Its cause is decided once the sweep has
 * applied every point at t (gap_commit): a synchronization returning at t, or a host-to-device
 * copy beginning at t, may come after the point that ended the gap. */
static void gap_end(cta_dev *dv, uint64_t t, int flag)
{
    /* the time outside CUDA with a known CPU rate is in pend.wait until now */
    uint64_t known = dv->pend.wait, cpu = (uint64_t)(dv->pend_cpu + 0.5);
    dv->pend.compute = cpu < known ? cpu : known;
    dv->pend.wait = known - dv->pend.compute;
    dv->closed = (cta_gap){.start = dv->gap_start, .len = t - dv->gap_start - dv->pause_pend,
                           .host = dv->pend};
    dv->paused += dv->pause_pend;
    dv->pause_pend = 0;
    dv->closed_open = 1;
    dv->closed_h2d = (flag & CTA_PF_H2D) != 0;
    dv->closed_batch = (flag & CTA_PF_BATCH) != 0;
    dv->closed_sync = dv->gap_sync;
    memcpy(dv->closed_sync_ns, dv->gap_sync_ns, sizeof dv->closed_sync_ns);
    dv->closed_synccpy = dv->gap_synccpy;
    dv->closed_mem = dv->gap_mem;
    memset(&dv->pend, 0, sizeof dv->pend);
    dv->pend_cpu = 0;
}

/* The plot series' pending idle time of the gap [start, end] moves to its host states and to
 * its causes: per bin, the CPU time outside CUDA is compute (at most the time outside CUDA),
 * the rest of it waiting, as gap_end splits the gap as a whole. The gap's time before `split`
 * goes to cause cls, the rest to cls2 (a bin holding `split` is shared by where it falls). */
static void series_commit(cta_series *u, uint64_t start, uint64_t end, int cls, uint64_t split,
                          int cls2)
{
    if (!u->started)
        return;
    uint64_t *v = u->sum;
#define CH(c, i) v[(uint64_t)(c) * CTA_SERIES_BINS + (i)]
    for (uint32_t i = cta_series_bin(u, start), last = cta_series_bin(u, end); i <= last; i++) {
        uint64_t out = CH(CTA_CH_PEND_OUTSIDE, i), cpu = CH(CTA_CH_PEND_CPU, i);
        if (cpu > out)
            cpu = out;
        CH(CTA_CH_IN_API, i) += CH(CTA_CH_PEND_IN_API, i);
        CH(CTA_CH_BLOCKED, i) += CH(CTA_CH_PEND_BLOCKED, i);
        CH(CTA_CH_COMPUTE, i) += cpu;
        CH(CTA_CH_WAIT, i) += out - cpu;
        CH(CTA_CH_UNKNOWN, i) += CH(CTA_CH_PEND_UNKNOWN, i);
        uint64_t idle = CH(CTA_CH_PEND_IN_API, i) + CH(CTA_CH_PEND_BLOCKED, i) + out +
                        CH(CTA_CH_PEND_UNKNOWN, i);
        /* of the bin's part of the gap, the share before split */
        uint64_t lo = u->t0 + (uint64_t)i * u->width, hi = lo + u->width;
        lo = lo > start ? lo : start;
        hi = hi < end ? hi : end;
        uint64_t first = split <= lo ? 0
                         : split >= hi ? idle
                                       : (uint64_t)((double)idle * (double)(split - lo) / (double)(hi - lo));
        CH(CTA_CH_GAP + cls, i) += first;
        CH(CTA_CH_GAP + cls2, i) += idle - first;
        for (int c = CTA_CH_PEND_IN_API; c <= CTA_CH_PEND_UNKNOWN; c++)
            CH(c, i) = 0;
    }
#undef CH
}

/* ns of gap g (one gap: count 1, else 0) to cause cls, with that share of its host activity. */
static void gap_account(cta_proc *p, int d, const cta_gap *g, int cls, uint64_t ns, int count)
{
    cta_dev *dv = &p->dev[d];
    if (ns == 0)
        return;
    const cta_hostsplit *h = &g->host;
    cta_hostsplit part = *h;
    if (ns < g->len) {
        double f = (double)ns / (double)g->len;
        part = (cta_hostsplit){(uint64_t)((double)h->in_api * f), (uint64_t)((double)h->blocked * f),
                               (uint64_t)((double)h->compute * f), (uint64_t)((double)h->wait * f),
                               (uint64_t)((double)h->unknown * f)};
    }
    dv->gap_ns[cls] += ns;
    dv->gap_count[cls] += (uint64_t)count;
    cta_hostsplit_add(&dv->gap_host[cls], &part);
}

/* Whether the host was loading batches in gap g, which ends with a host-to-device copy while
 * the host was mostly outside CUDA: so unless a feature knows otherwise (what the host was
 * doing: a copy is a batch by where the host was, not by its size or rhythm alone). */
static int gap_loading(cta_model *m, cta_proc *p, int d, const cta_gap *g)
{
    const struct cta_plugs *pl = m->plugs;
    for (int k = 0; k < pl->loading.n; k++) {
        int said = pl->at[pl->loading.slot[k]]->loading(m, p, d, g);
        if (said >= 0)
            return said;
    }
    return 1;
}

static void gap_commit(cta_model *m, cta_proc *p, int d)
{
    cta_dev *dv = &p->dev[d];
    dv->closed_open = 0;
    cta_gap g = dv->closed;
    const cta_hostsplit *h = &g.host;
    uint64_t outside = h->compute + h->wait + h->unknown;
    /* A synchronization (or a synchronous copy) is owed the gap after it up to the time it
     * blocked the host: without it the host would have run ahead by that much, no more; the
     * rest is what the host did then (its own work, launching), of the cause it would have had
     * without it. */
    int rest = h->in_api * 2 >= g.len ? CTA_GAP_LAUNCH : CTA_GAP_HOST;
    uint64_t owed = g.len;
    if (dv->closed_h2d && outside * 2 >= g.len && gap_loading(m, p, d, &g))
        g.cls = CTA_GAP_STARVE;
    else if (dv->closed_sync) {
        g.cls = CTA_GAP_SYNC;
        owed = dv->closed_sync_ns[0] < g.len ? dv->closed_sync_ns[0] : g.len;
        /* the event synchronizations' share of it, by the time they blocked */
        if (dv->closed_sync_ns[0])
            dv->sync_event_owed += (uint64_t)((double)owed * (double)dv->closed_sync_ns[2] /
                                              (double)dv->closed_sync_ns[0]);
    } else if (dv->closed_synccpy) {
        g.cls = CTA_GAP_SYNCCPY;
        owed = dv->closed_sync_ns[1] < g.len ? dv->closed_sync_ns[1] : g.len;
    } else
        g.cls = rest;
    /* the gap is counted, and listed among the longest, under the cause that holds most of it */
    int main_cls = 2 * owed >= g.len ? g.cls : rest;
    cta_hostsplit_add(&dv->idle, h);
    series_commit(&dv->util, g.start, p->sweep->now, g.cls, g.start + owed, rest);
    /* An allocation call in the gap: the host's time in CUDA in it is what reusing memory
     * saves, the allocation calls (cudaFree waiting for the device) and the launch after them
     * that the GPU also waits for; its time outside CUDA (a loader) stays */
    if (dv->closed_mem)
        dv->idle_in_memcall += h->in_api;
    if (g.len >= 100000)
        dv->long_gaps++;
    if (g.len > 0 && g.cls == CTA_GAP_STARVE && !dv->kernel_run) {
        dv->starve_startup_ns += g.len;
        dv->starve_startup++;
        cta_hostsplit_add(&dv->starve_startup_host, h);
    }
    if (g.len > 0 && g.cls == CTA_GAP_STARVE) {
        cta_sketch_add(&dv->starve_len, g.len);
        if (!dv->starve_bins) {
            dv->starve_bins = cta_xmalloc(CTA_SKETCH_BUCKETS * sizeof *dv->starve_bins, "gap classes");
            memset(dv->starve_bins, 0, CTA_SKETCH_BUCKETS * sizeof *dv->starve_bins);
        }
        cta_starve_bin *b = &dv->starve_bins[cta_sketch_bucket(g.len)];
        b->n++;
        b->ns += g.len;
        b->steps += dv->closed_batch;
        if (dv->closed_batch && !dv->first_step_gap) {
            dv->first_step_gap = g.start;
            dv->starve_before_step = dv->gap_ns[CTA_GAP_STARVE];
        }
    }
    cta_gap_parts parts = {.start = g.start, .ns = {owed, g.len - owed}, .cls = {g.cls, rest}};
    if (g.len > 0) {
        gap_account(p, d, &g, g.cls, owed, main_cls == g.cls);
        gap_account(p, d, &g, rest, g.len - owed, main_cls == rest);
        g.cls = main_cls;
        cta_top_insert(dv->top, &dv->ntop, CTA_TOP_GAPS, sizeof g, &g, offsetof(cta_gap, len));
    }
    CTA_FEAT_CALL(m, gap, m, p, d, &parts);
}

int cta_sweep_holders(const cta_proc *p, int d, cta_holder *out)
{
    int n = 0;
    for (uint32_t i = 0; i < cta_map_count(&p->holders); i++) {
        uint32_t key[2];
        memcpy(key, cta_map_key(&p->holders, i), sizeof key);
        if ((int)key[0] != d || p->holder_bytes[i] == 0)
            continue;
        const cta_stackset *ss = &p->holder_stacks[i];
        cta_holder h = {.stack = ss->n ? ss->ids[0] : 0, .bytes = p->holder_bytes[i],
                        .count = p->holder_count[i], .stacks = *ss};
        cta_top_insert(out, &n, CTA_TOP_STACKS, sizeof h, &h, offsetof(cta_holder, bytes));
    }
    return n;
}

/* Live memory is held per device and call site, so that a Python line reached through several
 * native paths is one holder (cta_model_site_group). */
static void holder_add(const cta_model *m, cta_proc *p, int d, uint32_t stack, uint64_t bytes, int sign)
{
    uint32_t key[2] = {(uint32_t)d, cta_model_site_group(m, p, stack)};
    int added;
    uint32_t i = cta_map_get(&p->holders, key, sizeof key, &added);
    if (added) {
        size_t c = p->holders_cap, c2 = p->holders_cap;
        cta_grow(&p->holder_bytes, &c, i + 1, sizeof *p->holder_bytes);
        cta_grow(&p->holder_stacks, &c2, i + 1, sizeof *p->holder_stacks);
        cta_grow(&p->holder_count, &p->holders_cap, i + 1, sizeof *p->holder_count);
    }
    if (sign > 0) {
        p->holder_bytes[i] += bytes;
        p->holder_count[i]++;
        if (stack)
            cta_stackset_add(&p->holder_stacks[i], stack);
    } else {
        p->holder_bytes[i] -= bytes < p->holder_bytes[i] ? bytes : p->holder_bytes[i];
        p->holder_count[i] -= p->holder_count[i] > 0;
    }
}

static void apply(cta_model *m, cta_proc *p, const cta_pt *pt)
{
    cta_sweep *s = p->sweep;
    advance(m, p, pt->t);
    cta_dev *dv = &p->dev[pt->dev];
    int type = pt->type >= CTA_P_END0 ? pt->type - CTA_P_END0 : pt->type;
    switch (type) {
    case CTA_P_GPU_BEGIN:
        if (!dv->windowed) {
            dv->windowed = 1;
            dv->first_gpu = pt->t;
            if (pt->dev >= s->ndev)
                s->ndev = pt->dev + 1;
        } else if (dv->busy_depth == 0) {
            gap_end(dv, pt->t, pt->flag);
        } else if (dv->closed_open && (pt->flag & CTA_PF_H2D)) {
            dv->closed_h2d = 1; /* began with the work that ended the gap */
            dv->closed_batch |= (pt->flag & CTA_PF_BATCH) != 0;
        }
        dv->busy_depth++;
        break;
    case CTA_P_GPU_END:
        if (dv->busy_depth > 0 && --dv->busy_depth == 0) {
            dv->gap_start = pt->t;
            /* a synchronization that returned at this instant counts for this gap too */
            dv->gap_sync = s->sync_ret && s->sync_ret_t == pt->t;
            dv->gap_synccpy = s->copy_ret && s->copy_ret_t == pt->t;
            dv->gap_sync_ns[0] = dv->gap_sync ? s->ret_ns[0] : 0;
            dv->gap_sync_ns[1] = dv->gap_synccpy ? s->ret_ns[1] : 0;
            dv->gap_sync_ns[2] = dv->gap_sync ? s->ret_ns[2] : 0;
            dv->gap_mem = s->mem_depth > 0;
            memset(&dv->pend, 0, sizeof dv->pend);
            dv->pend_cpu = 0;
            dv->pause_pend = 0;
        }
        if (pt->t > dv->last_gpu)
            dv->last_gpu = pt->t;
        break;
    case CTA_P_API_BEGIN:
        s->api_depth++;
        s->mem_depth += (pt->flag & CTA_PF_MEMCALL) != 0;
        if ((pt->flag & CTA_PF_FEEDS) || !s->last_tid)
            s->last_tid = pt->a;
        break;
    case CTA_P_API_END:
    case CTA_P_SYNC_END:
        if (type == CTA_P_API_END) {
            s->api_depth -= s->api_depth > 0;
            s->mem_depth -= (pt->flag & CTA_PF_MEMCALL) && s->mem_depth > 0;
        }
        else
            s->sync_depth -= s->sync_depth > 0;
        if (type == CTA_P_API_END && ((pt->flag & CTA_PF_FEEDS) || !s->last_tid))
            s->last_tid = pt->a;
        if (type == CTA_P_SYNC_END || (pt->flag & CTA_PF_SYNCCOPY)) {
            /* it counts for every gap whose span (ends included) holds its return: the one in
             * progress, one that ended at this instant, one that starts at it */
            int cpy = (pt->flag & CTA_PF_SYNCCOPY) != 0;
            uint64_t blocked = pt->b, event = pt->flag & CTA_PF_EVENTSYNC ? pt->b : 0;
            int again = cpy ? s->copy_ret && s->copy_ret_t == pt->t : s->sync_ret && s->sync_ret_t == pt->t;
            s->ret_ns[cpy] = (again ? s->ret_ns[cpy] : 0) + blocked;
            if (!cpy)
                s->ret_ns[2] = (again ? s->ret_ns[2] : 0) + event;
            *(cpy ? &s->copy_ret : &s->sync_ret) = 1;
            *(cpy ? &s->copy_ret_t : &s->sync_ret_t) = pt->t;
            for (int d = 0; d < s->ndev; d++) {
                cta_dev *x = &p->dev[d];
                if (x->windowed && x->busy_depth == 0) {
                    *(cpy ? &x->gap_synccpy : &x->gap_sync) = 1;
                    x->gap_sync_ns[cpy] += blocked;
                    x->gap_sync_ns[2] += event;
                }
                if (x->closed_open) {
                    *(cpy ? &x->closed_synccpy : &x->closed_sync) = 1;
                    x->closed_sync_ns[cpy] += blocked;
                    x->closed_sync_ns[2] += event;
                }
            }
        }
        break;
    case CTA_P_SYNC_BEGIN:
        s->sync_depth++;
        break;
    case CTA_P_FEAT_BEGIN:
    case CTA_P_FEAT_END:
        m->plugs->at[pt->kind]->point(m, p, pt);
        break;
    case CTA_P_RATE: {
        cta_thread *th = cta_thread_of(p, pt->a);
        double r;
        memcpy(&r, &pt->b, sizeof r);
        th->rate = r;
        th->rate_known = 1;
        break;
    }
    case CTA_P_ALLOC:
        dv->in_use += pt->b;
        dv->allocs++;
        dv->alloc_bytes += pt->b;
        holder_add(m, p, pt->dev, pt->a, pt->b, +1);
        if (dv->in_use > dv->peak) {
            dv->peak = dv->in_use;
            dv->peak_time = pt->t;
            dv->peak_pending = 1;
        }
        cta_series_note(&dv->mem, pt->t, dv->in_use);
        if (m->obs && m->obs->on_mem)
            m->obs->on_mem(m->obs->ctx, p, pt->t, pt->dev == CTA_HOST_DEV ? -1 : pt->dev, dv->in_use);
        break;
    case CTA_P_FREE:
        if (dv->peak_pending) {
            dv->npeak_holders = cta_sweep_holders(p, pt->dev, dv->peak_holders);
            dv->peak_pending = 0;
        }
        dv->in_use -= pt->b < dv->in_use ? pt->b : dv->in_use;
        dv->frees++;
        holder_add(m, p, pt->dev, pt->a, pt->b, -1);
        cta_series_note(&dv->mem, pt->t, dv->in_use);
        if (m->obs && m->obs->on_mem)
            m->obs->on_mem(m->obs->ctx, p, pt->t, pt->dev == CTA_HOST_DEV ? -1 : pt->dev, dv->in_use);
        break;
    case CTA_P_FIRST_KERNEL:
        dv->kernel_run = 1;
        break;
    case CTA_P_CAPTURE:
        s->paused = !pt->flag;
        break;
    case CTA_P_FAIL:
        if (dv->nfails < CTA_MAX_FAILS) {
            cta_fail *f = &dv->fails[dv->nfails];
            f->time = pt->t;
            f->requested = pt->b;
            f->in_use = dv->in_use;
            f->stack = pt->a;
            f->kind = pt->kind;
            f->result = pt->flag;
            f->nholders = cta_sweep_holders(p, pt->dev, f->holders);
        }
        dv->nfails++;
        break;
    }
}

void cta_sweep_capture(cta_proc *p, uint64_t t, int on)
{
    p->captured = 1;
    if (on && !p->capture_on)
        p->capture_since = t;
    else if (!on && p->capture_on) {
        cta_grow(&p->capture_win, &p->capture_cap, p->capture_windows + 1, sizeof *p->capture_win);
        p->capture_win[p->capture_windows][0] = p->capture_since;
        p->capture_win[p->capture_windows][1] = t;
        p->capture_windows++;
        p->capture_ns += t - p->capture_since;
    }
    p->capture_on = on;
    cta_sweep_push(p, (cta_pt){.t = t, .type = CTA_P_CAPTURE, .flag = (uint8_t)on});
}

void cta_sweep_run(cta_model *m, cta_proc *p, uint64_t upto)
{
    cta_sweep *s = p->sweep;
    int all = upto == UINT64_MAX; /* the end: even points at the clock's last instant */
    if (s->api_open && (s->api_end < upto || all))
        cta_api_flush(p);
    /* a merged GPU interval ending before upto cannot grow any more (a later record starts
     * after upto): its end goes in now, before the sweep passes it */
    for (int d = 0; d < CTA_MAX_DEV; d++) {
        cta_dev *dv = &p->dev[d];
        if (dv->run_open && (dv->run_end < upto || all)) {
            dv->run_open = 0;
            cta_sweep_push(p, (cta_pt){.t = dv->run_end, .type = cta_end_type(CTA_P_GPU_END, dv->run_start, dv->run_end),
                                  .dev = (uint8_t)d});
        }
    }
    uint64_t lim = all ? UINT64_MAX : upto >> CTA_BUCKET_SHIFT; /* buckets before lim are applied */
    if (lim > s->safe)
        s->safe = lim;
    while (s->pending > 0 && s->head < lim) {
        while (s->nfar && (s->far[0].t >> CTA_BUCKET_SHIFT) - s->head < CTA_RING_MAX)
            cta_ring_put(s, far_pop(s));
        if (!s->nfar && s->far) { /* its points are in the ring now: not twice the memory */
            free(s->far);
            s->far = NULL;
            s->far_cap = 0;
        }
        if (s->pending == s->nfar) {
            /* the ring is empty: jump to the next point instead of walking to it */
            uint64_t fb = s->far[0].t >> CTA_BUCKET_SHIFT;
            s->head = fb < lim ? fb : lim;
            continue;
        }
        uint64_t nb = ring_next(s);
        if (nb >= lim) {
            s->head = lim;
            break;
        }
        s->head = nb;
        size_t k = nb & (s->cap - 1);
        cta_bucket *b = &s->ring[k];
        for (size_t i = 0; i < b->n; i++)
            apply(m, p, &b->v[i]);
        s->occ[k >> 6] &= ~(1ull << (k & 63));
        s->pending -= b->n;
        b->n = 0;
        s->head++;
    }
}

void cta_sweep_finish(cta_model *m, cta_proc *p)
{
    if (p->capture_on) /* no stop: the trace was cut short while recording */
        cta_sweep_capture(p, p->t_last > p->capture_since ? p->t_last : p->capture_since, 0);
    cta_sweep_run(m, p, UINT64_MAX); /* closes the open GPU runs first */
    for (int d = 0; d <= CTA_MAX_DEV; d++) {
        cta_dev *dv = &p->dev[d];
        if (dv->closed_open)
            gap_commit(m, p, d);
        if (dv->peak_pending) {
            dv->npeak_holders = cta_sweep_holders(p, d, dv->peak_holders);
            dv->peak_pending = 0;
        }
    }
}
