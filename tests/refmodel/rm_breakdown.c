/* The reference's breakdown of one process's device (refmodel.h states the definitions): the
 * host's state over time, then each gap's split and cause. Apart from refmodel.c because the
 * breakdown is one job and reading the records and the tables others. */
#include "rm_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the breakdown -------------------------------------------------------------------------- */

typedef struct { uint64_t t; int rank, feeds; uint32_t tid; size_t order; } ev_t;
static int cmp_ev(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static size_t tindex(const host_t *h, uint64_t t) { return rm_lower(h->T, h->nt, t); }

void rm_host_build(host_t *h, const file_t *f, const ct_reader *rd, uint32_t fileno)
{
    memset(h, 0, sizeof *h);
    size_t cap = 0;
    for (size_t i = 0; i < f->napi; i++)
        if (!f->api[i].parent) {
            PUSH(h->T, h->nt, cap, f->api[i].s);
            PUSH(h->T, h->nt, cap, f->api[i].e);
        }
    for (size_t i = 0; i < f->nsy; i++)
        if (f->sy[i].kind != CT_SYNC_STREAM_WAIT_EVENT) {
            PUSH(h->T, h->nt, cap, f->sy[i].s);
            PUSH(h->T, h->nt, cap, f->sy[i].e);
        }
    for (size_t i = 0; i < f->ngpu; i++) {
        PUSH(h->T, h->nt, cap, f->gpu[i].s);
        PUSH(h->T, h->nt, cap, f->gpu[i].e);
    }
    /* rate points: consecutive readings of a thread in time order */
    cpu_t *c = malloc((f->ncpu + 1) * sizeof *c);
    if (!c)
        abort();
    memcpy(c, f->cpu, f->ncpu * sizeof *c);
    qsort(c, f->ncpu, sizeof *c, rm_cmp_cpu);
    size_t rcap = 0;
    for (size_t i = 1; i < f->ncpu; i++) {
        if (c[i].tid != c[i - 1].tid || c[i].t <= c[i - 1].t || c[i].cpu < c[i - 1].cpu)
            continue;
        double rate = (double)(c[i].cpu - c[i - 1].cpu) / (double)(c[i].t - c[i - 1].t);
        cpu_t rp = {.t = c[i - 1].t, .tid = c[i].tid};
        memcpy(&rp.cpu, &rate, sizeof rate);
        PUSH(h->rates, h->nrates, rcap, rp);
        PUSH(h->T, h->nt, cap, rp.t);
    }
    free(c);
    qsort(h->T, h->nt, sizeof *h->T, rm_cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < h->nt; i++)
        if (u == 0 || h->T[i] != h->T[u - 1])
            h->T[u++] = h->T[i];
    h->nt = u;
    h->api_cnt = calloc(h->nt + 1, sizeof *h->api_cnt);
    h->sync_cnt = calloc(h->nt + 1, sizeof *h->sync_cnt);
    h->last_tid = calloc(h->nt + 1, sizeof *h->last_tid);
    if (!h->api_cnt || !h->sync_cnt || !h->last_tid)
        abort();
    /* coverage counts by differences: +1 where an interval starts, -1 where it ends */
    ev_t *ev = NULL;
    size_t nev = 0, evcap = 0, scap = 0, ccap = 0;
    for (size_t i = 0; i < f->napi; i++) {
        const api_t *a = &f->api[i];
        if (a->parent)
            continue;
        h->api_cnt[tindex(h, a->s)]++;
        h->api_cnt[tindex(h, a->e)]--;
        char tmp[CT_STRTMP];
        const char *fn = ct_reader_str(rd, fileno, a->fn, tmp);
        int feeds = rm_feeds_call(fn);
        ev_t b = {.t = a->s, .rank = 1, .feeds = feeds, .tid = a->tid, .order = i};
        ev_t e = {.t = a->e, .rank = a->e == a->s ? 2 : 0, .feeds = feeds, .tid = a->tid, .order = i};
        PUSH(ev, nev, evcap, b);
        PUSH(ev, nev, evcap, e);
        if (rm_sync_copy_call(fn))
            PUSH(h->cend, h->ncend, ccap, ((rm_ret){a->e, a->e - a->s}));
    }
    for (size_t i = 0; i < f->nsy; i++) {
        const sync_t *s = &f->sy[i];
        if (s->kind == CT_SYNC_STREAM_WAIT_EVENT)
            continue;
        h->sync_cnt[tindex(h, s->s)]++;
        h->sync_cnt[tindex(h, s->e)]--;
        if (s->kind == CT_SYNC_MEMCPY)
            PUSH(h->cend, h->ncend, ccap, ((rm_ret){s->e, s->e - s->s}));
        else
            PUSH(h->send, h->nsend, scap, ((rm_ret){s->e, s->e - s->s}));
    }
    for (size_t i = 1; i < h->nt; i++) {
        h->api_cnt[i] += h->api_cnt[i - 1];
        h->sync_cnt[i] += h->sync_cnt[i - 1];
    }
    qsort(ev, nev, sizeof *ev, cmp_ev);
    size_t k = 0;
    uint32_t last = 0;
    for (size_t i = 0; i < h->nt; i++) {
        for (; k < nev && ev[k].t <= h->T[i]; k++)
            if (ev[k].feeds || !last)
                last = ev[k].tid;
        h->last_tid[i] = last;
    }
    free(ev);
    if (h->send)
        qsort(h->send, h->nsend, sizeof *h->send, rm_cmp_u64);
    if (h->cend)
        qsort(h->cend, h->ncend, sizeof *h->cend, rm_cmp_u64);
}

void rm_host_free(host_t *h)
{
    free(h->T);
    free(h->api_cnt);
    free(h->sync_cnt);
    free(h->last_tid);
    free(h->rates);
    free(h->send);
    free(h->cend);
}

/* The rate of thread tid in effect at t; 0 when it has none yet. */
static int rate_at(const host_t *h, uint32_t tid, uint64_t t, double *rate)
{
    int found = 0;
    uint64_t best = 0;
    for (size_t i = 0; i < h->nrates; i++)
        if (h->rates[i].tid == tid && h->rates[i].t <= t && (!found || h->rates[i].t >= best)) {
            best = h->rates[i].t;
            memcpy(rate, &h->rates[i].cpu, sizeof *rate);
            found = 1;
        }
    return found;
}

/* Whether any of the sorted times v lies in [a, b]. */
/* Of the returns v (sorted by end) in [a, b]: whether any, and the time they blocked. */
static int any_in(const rm_ret *v, size_t n, uint64_t a, uint64_t b, uint64_t *ns)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].end < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    *ns = 0;
    for (size_t i = lo; i < n && v[i].end <= b; i++)
        *ns += v[i].ns;
    return lo < n && v[lo].end <= b;
}

static int by_length(const void *a, const void *b)
{
    const rm_gap *x = a, *y = b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Gap g of cause g->cause is that cause's for its first `owed` (all of it but after a blocking
 * call: up to the time the call blocked the host), the rest's after; counted and listed under
 * the one holding most of it. */
static void gap_done(rm_breakdown *b, rm_gap *g, uint64_t owed, int rest, double rate_ns,
                     uint64_t known, rm_gap **all, size_t *n, size_t *cap)
{
    g->split[RM_COMPUTE] = (uint64_t)(rate_ns + 0.5);
    if (g->split[RM_COMPUTE] > known)
        g->split[RM_COMPUTE] = known;
    g->split[RM_WAIT] = known - g->split[RM_COMPUTE];
    for (int k = 0; k < RM_NSPLIT; k++)
        b->split[k] += g->split[k];
    if (g->len) {
        b->gap_ns[g->cause] += owed;
        b->gap_ns[rest] += g->len - owed;
        g->cause = 2 * owed >= g->len ? g->cause : rest;
        b->gap_count[g->cause]++;
    }
    PUSH(*all, *n, *cap, *g);
}

void rm_compute_breakdown(rm_breakdown *b, const file_t *f, const host_t *h, int dev, uint64_t t0)
{
    size_t nt = h->nt;
    int64_t *busy = calloc(nt + 1, sizeof *busy), *exact = calloc(nt + 1, sizeof *exact);
    uint8_t *point = calloc(nt + 1, 1), *h2d = calloc(nt + 1, 1);
    if (!busy || !exact || !point || !h2d)
        abort();
    uint64_t ws = UINT64_MAX, we = 0;
    for (size_t i = 0; i < f->ngpu; i++) {
        const gpu_t *g = &f->gpu[i];
        if (g->dev != dev)
            continue;
        size_t a = tindex(h, g->s), e = tindex(h, g->e);
        busy[a]++;
        busy[e]--;
        if (g->bounded) {
            b->bounded_ops++;
        } else {
            exact[a]++;
            exact[e]--;
        }
        if (g->s == g->e)
            point[a] = 1;
        const det_t *d = rm_find_det(f, g->corr);
        if (d && d->type == CT_REC_COPY && d->c.op == CT_COPY_MEMCPY && d->c.dir == CT_DIR_HTOD)
            h2d[a] = 1;
        ws = rm_min_u64(ws, g->s);
        we = g->e > we ? g->e : we;
    }
    for (size_t i = 1; i < nt; i++) {
        busy[i] += busy[i - 1];
        exact[i] += exact[i - 1];
    }
    b->window_start = ws - t0;
    b->window = we - ws;
    size_t is = tindex(h, ws), ie = tindex(h, we);
    int open = 0;
    rm_gap g = {0}, *all = NULL;
    size_t nall = 0, cap = 0;
    double rate_ns = 0;
    uint64_t known = 0;
    for (size_t i = is; i <= ie; i++) {
        uint64_t t = h->T[i];
        /* a gap ends where GPU work starts: a busy segment, a zero-length interval, the end */
        int ends = open && (i == ie || busy[i] > 0 || point[i]);
        if (ends) {
            g.len = t - g.start;
            uint64_t outside = g.split[RM_UNKNOWN] + known, owed = g.len, blocked;
            int rest = g.split[RM_IN_API] * 2 >= g.len ? RM_GAP_LAUNCH : RM_GAP_HOST;
            if (h2d[i] && outside * 2 >= g.len)
                g.cause = RM_GAP_STARVE;
            else if (any_in(h->send, h->nsend, g.start, t, &blocked))
                g.cause = RM_GAP_SYNC, owed = blocked < g.len ? blocked : g.len;
            else if (any_in(h->cend, h->ncend, g.start, t, &blocked))
                g.cause = RM_GAP_SYNCCPY, owed = blocked < g.len ? blocked : g.len;
            else
                g.cause = rest;
            gap_done(b, &g, owed, rest, rate_ns, known, &all, &nall, &cap);
            open = 0;
        }
        if (i < ie && busy[i] > 0)
            b->busy += h->T[i + 1] - t;
        if (i < ie && busy[i] > 0 && exact[i] == 0)
            b->busy_bounded += h->T[i + 1] - t;
        if (i == ie || busy[i] > 0)
            continue;
        if (!open) {
            memset(&g, 0, sizeof g);
            g.start = t;
            rate_ns = 0;
            known = 0;
            open = 1;
        }
        uint64_t len = h->T[i + 1] - t;
        double r;
        if (h->sync_cnt[i] > 0)
            g.split[RM_BLOCKED] += len;
        else if (h->api_cnt[i] > 0)
            g.split[RM_IN_API] += len;
        else if (h->last_tid[i] && rate_at(h, h->last_tid[i], t, &r)) {
            r = r < 0 ? 0 : r > 1 ? 1 : r;
            rate_ns += (double)len * r;
            known += len;
        } else {
            g.split[RM_UNKNOWN] += len;
        }
    }
    if (nall)
        qsort(all, nall, sizeof *all, by_length);
    for (size_t k = 0; k < nall && k < RM_TOP; k++) {
        b->top[k] = all[k];
        b->top[k].start -= t0;
    }
    b->ntop = nall < RM_TOP ? (int)nall : RM_TOP;
    free(all);
    free(busy);
    free(exact);
    free(point);
    free(h2d);
}
