/* NVTX ranges in the model (see cta_nvtx.h). */
#include "cta_nvtx.h"
#include "cta_sweep.h"
#include "cta_top.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The feature's state in the model's, a process's and a thread's slot (cta_feature.h). */
#define NVM(m) ((struct cta_nvtx_model *)(m)->feat[CTA_FEAT_NVTX])
#define NVP(p) ((struct cta_nvtx_proc *)(p)->feat[CTA_FEAT_NVTX])
#define NVT(th) ((struct cta_nvtx_thread *)(th)->feat[CTA_FEAT_NVTX])

/* Components of the per-iteration view are tracked for the first this many ranges that have
 * child ranges (each costs up to 11 duration sketches). */
#define NV_TRACKED_GROUPS 32
#define NV_OVERLAP 4 /* ranges a gap in progress is counted against, per device */

typedef struct {
    uint64_t start, end, serial, seq;
    uint64_t gpu_ns, kern_ns, first, last, sync_ns, ops, kid_total;
    uint64_t first_late, last_early; /* the latest its work can have begun, the earliest ended */
    uint64_t kid_ns[CTA_NVTX_KIDS];
    uint32_t kid_group[CTA_NVTX_KIDS];
    uint64_t parent_serial;
    uint32_t parent;               /* enclosing push/pop of its thread and domain: index + 1 */
    uint32_t group, tid, domain, depth, kind, refs, nkids;
    /* where its events are counted: the two outermost ranges open around it at its start
     * (group + 1 and their seq; 0: none), itself if none */
    uint32_t outer[2];
    uint64_t outer_seq[2];
    uint8_t ended, top, projected;
} nv_inst;

typedef struct {
    uint32_t *v, n, refs;
} nv_set;

struct cta_nvtx_thread {
    uint32_t *open, nopen;           /* feed time: open instances, in begin order */
    uint32_t set;                    /* the set of open (index + 1), while they stay open */
    uint32_t *sw, nsw;               /* sweep time: the same */
    size_t open_cap, sw_cap;
};

struct cta_nvtx_proc {
    cta_pool inst, sets;
    ct_hash ids;                     /* start/end id -> instance */
    uint64_t serial;
    uint64_t where_ns[CTA_WHERE_N];  /* all events of each diagnosis kind, in a range or not */
    uint64_t *seq;                   /* per group: instances begun in this process */
    size_t seq_cap;
    struct {
        uint32_t inst;                /* index + 1 */
        uint64_t ns;
    } ov[CTA_MAX_DEV + 1][NV_OVERLAP];
};

/* ---- groups ---- */

static struct cta_nvtx_model *nv_model(cta_model *m)
{
    struct cta_nvtx_model *nm = m->feat[CTA_FEAT_NVTX];
    if (!nm) {
        m->feat[CTA_FEAT_NVTX] = nm = cta_xmalloc(sizeof *nm, "the NVTX ranges");
        memset(nm, 0, sizeof *nm);
        cta_map_init(&nm->names);
        cta_map_init(&nm->where);
    }
    return nm;
}

static void group_init(struct cta_nvtx_model *nm, uint32_t g)
{
    cta_grow(&nm->g, &nm->cap, g + 1, sizeof *nm->g);
    memset(&nm->g[g], 0, sizeof nm->g[g]);
    cta_nvtx_group *x = &nm->g[g];
    cta_sketch_init(&x->host);
    cta_sketch_init(&x->span);
    cta_sketch_init(&x->sync);
    cta_sketch_init(&x->self);
    for (int k = 0; k < CTA_NVTX_KIDS; k++)
        cta_sketch_init(&x->kid[k]);
}

static uint32_t nv_group(cta_model *m, uint32_t file, uint32_t domain, uint32_t group)
{
    struct cta_nvtx_model *nm = nv_model(m);
    char tmp[CT_STRTMP], key[2 * CT_STRTMP + 2];
    int n = snprintf(key, sizeof key, "%s\x1f", domain ? ct_reader_str(m->rd, file, domain, tmp) : "");
    snprintf(key + n, sizeof key - (size_t)n, "%s",
             group ? ct_reader_str(m->rd, file, group, tmp) : "(not named: past the trace's bound of names)");
    int added;
    uint32_t g = cta_map_get(&nm->names, key, strlen(key) + 1, &added);
    if (added)
        group_init(nm, g);
    return g;
}

const char *cta_nvtx_display(const cta_model *m, uint32_t g, char *buf, size_t len)
{
    const char *key = cta_nvtx_group_name(m, g), *sep = strchr(key, '\x1f');
    if (sep == key)
        snprintf(buf, len, "%s", sep + 1);
    else
        snprintf(buf, len, "%.*s: %s", (int)(sep - key), key, sep + 1);
    return buf;
}

/* ---- instances ---- */

static struct cta_nvtx_proc *nv_proc(cta_proc *p)
{
    struct cta_nvtx_proc *np = p->feat[CTA_FEAT_NVTX];
    if (!np) {
        p->feat[CTA_FEAT_NVTX] = np = cta_xmalloc(sizeof *np, "a process's NVTX ranges");
        memset(np, 0, sizeof *np);
        cta_pool_init(&np->inst, sizeof(nv_inst));
        cta_pool_init(&np->sets, sizeof(nv_set));
    }
    return np;
}

static struct cta_nvtx_thread *nv_thread(cta_thread *th)
{
    struct cta_nvtx_thread *t = th->feat[CTA_FEAT_NVTX];
    if (!t) {
        th->feat[CTA_FEAT_NVTX] = t = cta_xmalloc(sizeof *t, "a thread's NVTX ranges");
        memset(t, 0, sizeof *t);
    }
    return t;
}

static nv_inst *nv_at(cta_proc *p, uint32_t i) { return cta_pool_at(&NVP(p)->inst, i); }

/* The component slot of child group kid in x, or -1 (not tracked). */
static int kid_slot(cta_model *m, cta_nvtx_group *x, uint32_t kid)
{
    if (x->kid_track == 0) {
        size_t tracked = 0;
        for (uint32_t g = 0; g < cta_map_count(&NVM(m)->names); g++)
            tracked += NVM(m)->g[g].kid_track == 1;
        x->kid_track = tracked < NV_TRACKED_GROUPS ? 1 : -1;
    }
    if (x->kid_track < 0)
        return -1;
    for (int k = 0; k < x->nkids; k++)
        if (x->kid_group[k] == kid)
            return k;
    if (x->nkids == CTA_NVTX_KIDS)
        return -1;
    x->kid_group[x->nkids] = kid;
    return x->nkids++;
}

/* An instance nothing refers to any more: into its group's statistics. */
static void nv_fold(cta_model *m, cta_proc *p, uint32_t idx)
{
    nv_inst *in = nv_at(p, idx);
    cta_nvtx_group *x = &NVM(m)->g[in->group];
    /* never ended: until its process's last record, or until a later range took its place */
    uint64_t end = in->end ? in->end : p->t_last > in->start ? p->t_last : in->start;
    uint64_t dur = end - in->start, span = in->ops ? in->last - in->first : 0;
    uint64_t lo = in->last_early > in->first_late ? in->last_early - in->first_late : 0;
    lo = lo < span ? lo : span;
    x->kinds |= in->kind == CT_NVTX_START_END ? 2 : 1;
    x->unprojected |= !in->projected;
    if (!in->ended) {
        x->open_at_end++;
        x->open_ns += dur;
    } else {
        cta_sketch_add(&x->host, dur);
        x->top += in->top;
        uint64_t self = dur > in->kid_total ? dur - in->kid_total : 0;
        cta_nvtx_step s = {in->start, dur, in->seq, p->pid, in->gpu_ns, in->kern_ns, span,
                           in->sync_ns, self, lo, {0}, {0}, 0};
        for (uint32_t k = 0; k < in->nkids; k++) {
            s.kid_group[s.nkids] = in->kid_group[k];
            s.kid_ns[s.nkids++] = in->kid_ns[k];
            int slot = kid_slot(m, x, in->kid_group[k]);
            if (slot >= 0)
                cta_sketch_add(&x->kid[slot], in->kid_ns[k]);
        }
        cta_sketch_add(&x->self, self);
        if (in->sync_ns)
            cta_sketch_add(&x->sync, in->sync_ns);
        cta_top_insert(x->slow, &x->nslow, CTA_NVTX_SLOW, sizeof s, &s, offsetof(cta_nvtx_step, dur));
    }
    if (in->ops) {
        cta_sketch_add(&x->span, span);
        x->with_gpu++;
        x->span_lo += lo;
        x->span_bounded += lo < span;
    }
    x->kern_ns += in->kern_ns;
    x->gpu_ns += in->gpu_ns;
    x->ops += in->ops;
    cta_pool_put(&NVP(p)->inst, idx);
}

static void inst_unref(cta_model *m, cta_proc *p, uint32_t idx)
{
    nv_inst *in = nv_at(p, idx);
    if (in->refs > 0 && --in->refs == 0)
        nv_fold(m, p, idx);
}

static void set_drop(cta_model *m, cta_proc *p, uint32_t set)
{
    nv_set *s = cta_pool_at(&NVP(p)->sets, set - 1);
    if (--s->refs)
        return;
    for (uint32_t k = 0; k < s->n; k++)
        inst_unref(m, p, s->v[k]);
    free(s->v);
    s->v = NULL;
    cta_pool_put(&NVP(p)->sets, set - 1);
}

/* The thread's open ranges changed: its current set (if any) is no longer current. */
static void thread_changed(cta_model *m, cta_proc *p, struct cta_nvtx_thread *t)
{
    if (t->set) {
        uint32_t s = t->set;
        t->set = 0;
        set_drop(m, p, s);
    }
}

static void open_remove(struct cta_nvtx_thread *t, uint32_t idx)
{
    for (uint32_t k = t->nopen; k-- > 0;)
        if (t->open[k] == idx) {
            memmove(t->open + k, t->open + k + 1, (t->nopen - k - 1) * sizeof *t->open);
            t->nopen--;
            return;
        }
}

/* The instance's end is known (end: its time): the child time of its parent, the sweep's end
 * point, the end of its own reference. */
static void inst_end(cta_model *m, cta_proc *p, uint32_t idx, uint64_t end)
{
    nv_inst *in = nv_at(p, idx);
    in->ended = 1;
    in->end = end < in->start ? in->start : end;
    if (in->parent) {
        nv_inst *up = nv_at(p, in->parent - 1);
        if (up->serial == in->parent_serial && !up->ended) {
            uint64_t d = in->end - in->start;
            up->kid_total += d;
            uint32_t k = 0;
            while (k < up->nkids && up->kid_group[k] != in->group)
                k++;
            if (k == up->nkids && k < CTA_NVTX_KIDS)
                up->kid_group[up->nkids++] = in->group;
            if (k < up->nkids)
                up->kid_ns[k] += d;
        }
    }
    cta_sweep_push(p, (cta_pt){.t = in->end, .type = CTA_P_FEAT_END, .kind = CTA_FEAT_NVTX, .a = idx, .b = in->tid});
    inst_unref(m, p, idx);
}

/* A range a later one took the place of (at ts): never ended, it leaves its thread's open ranges
 * and the sweep's, and counts until ts. */
static void inst_displaced(cta_model *m, cta_proc *p, uint32_t idx, uint64_t ts)
{
    nv_inst *o = nv_at(p, idx);
    struct cta_nvtx_thread *t = nv_thread(cta_thread_of(p, o->tid));
    open_remove(t, idx);
    thread_changed(m, p, t);
    o->end = ts;
    o->refs--; /* its own (never ended): the sweep's is released at the point below */
    cta_sweep_push(p, (cta_pt){.t = ts, .type = CTA_P_FEAT_END, .kind = CTA_FEAT_NVTX, .a = idx, .b = o->tid});
}

static void cta_nvtx_begin(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_begin *b = &r->u.nvtx_begin;
    struct cta_nvtx_proc *np = nv_proc(p);
    cta_thread *th = cta_thread_of(p, b->tid);
    struct cta_nvtx_thread *t = nv_thread(th);
    uint32_t g = nv_group(m, r->file, b->domain, b->group);
    if (b->kind == CT_NVTX_PUSH_POP) {
        /* one already open at this level of the thread and domain: its pop was lost */
        for (uint32_t k = t->nopen; k-- > 0;) {
            nv_inst *o = nv_at(p, t->open[k]);
            if (cta_nvtx_pop_lost(o->kind, o->domain, o->depth, b)) {
                inst_displaced(m, p, t->open[k], r->ts); /* its pop was lost */
            }
        }
    } else {
        const uint32_t *old = ct_hash_find(&np->ids, b->id);
        if (old) { /* an id given twice: the first is forgotten */
            uint32_t lost = *old;
            ct_hash_del(&np->ids, b->id, NULL);
            inst_displaced(m, p, lost, r->ts);
        }
    }
    thread_changed(m, p, t);
    uint32_t idx = cta_pool_alloc(&np->inst);
    nv_inst *in = nv_at(p, idx);
    cta_grow(&np->seq, &np->seq_cap, g + 1, sizeof *np->seq);
    *in = (nv_inst){.start = r->ts, .serial = ++np->serial, .seq = ++np->seq[g],
                    .group = g, .tid = b->tid, .domain = b->domain, .depth = b->depth,
                    .kind = b->kind, .refs = 2 /* open; the sweep's */, .top = t->nopen == 0,
                    .projected = 1};
    for (uint32_t k = 0; k < 2; k++) {
        nv_inst *o = k < t->nopen ? nv_at(p, t->open[k]) : in;
        in->outer[k] = o->group + 1;
        in->outer_seq[k] = o->seq;
    }
    if (b->kind == CT_NVTX_PUSH_POP)
        for (uint32_t k = t->nopen; k-- > 0;) {
            nv_inst *o = nv_at(p, t->open[k]);
            if (o->kind == CT_NVTX_PUSH_POP && o->domain == b->domain) {
                in->parent = t->open[k] + 1;
                in->parent_serial = o->serial;
                break;
            }
        }
    cta_grow(&t->open, &t->open_cap, t->nopen + 1, sizeof *t->open);
    t->open[t->nopen++] = idx;
    if (b->kind == CT_NVTX_START_END)
        cta_xhash_put(&np->ids, b->id, idx, "the NVTX ranges open");
    cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_FEAT_BEGIN, .kind = CTA_FEAT_NVTX, .a = idx, .b = b->tid});
}

static void cta_nvtx_end(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_range *e = &r->u.nvtx_range;
    if (e->flags & CT_NVTX_UNMATCHED)
        return;
    struct cta_nvtx_proc *np = nv_proc(p);
    cta_thread *th = cta_thread_of(p, e->start_tid);
    struct cta_nvtx_thread *t = nv_thread(th);
    uint32_t idx = UINT32_MAX;
    if (e->kind == CT_NVTX_START_END) {
        uint32_t v;
        if (ct_hash_del(&np->ids, e->id, &v))
            idx = v;
    } else {
        for (uint32_t k = t->nopen; k-- > 0 && idx == UINT32_MAX;) {
            nv_inst *o = nv_at(p, t->open[k]);
            if (cta_nvtx_popped(o->kind, o->domain, o->depth, e))
                idx = t->open[k];
        }
    }
    if (idx == UINT32_MAX) {
        /* no NVTX_BEGIN (a file before 1.6): its host time only */
        uint32_t g = nv_group(m, r->file, e->domain, e->group);
        idx = cta_pool_alloc(&np->inst);
        cta_grow(&np->seq, &np->seq_cap, g + 1, sizeof *np->seq);
        *nv_at(p, idx) = (nv_inst){.start = e->start, .end = r->ts, .seq = ++np->seq[g],
                                   .group = g, .tid = e->start_tid, .kind = e->kind, .ended = 1,
                                   .top = e->kind == CT_NVTX_PUSH_POP && e->depth == 0};
        nv_fold(m, p, idx);
        return;
    }
    open_remove(t, idx);
    thread_changed(m, p, t);
    inst_end(m, p, idx, r->ts);
}

uint32_t cta_nvtx_ref(cta_proc *p, cta_thread *th)
{
    struct cta_nvtx_thread *t = NVT(th);
    if (!t || !t->nopen)
        return 0;
    if (!t->set) {
        uint32_t s = cta_pool_alloc(&NVP(p)->sets);
        nv_set *x = cta_pool_at(&NVP(p)->sets, s);
        x->v = cta_xmalloc(t->nopen * sizeof *x->v, "the NVTX ranges open");
        memcpy(x->v, t->open, t->nopen * sizeof *x->v);
        x->n = t->nopen;
        x->refs = 1; /* the thread's, while current */
        for (uint32_t k = 0; k < x->n; k++)
            nv_at(p, x->v[k])->refs++;
        t->set = s + 1;
    }
    nv_set *x = cta_pool_at(&NVP(p)->sets, t->set - 1);
    x->refs++;
    return t->set;
}

void cta_nvtx_unref(cta_model *m, cta_proc *p, uint32_t set)
{
    if (set)
        set_drop(m, p, set);
}

void cta_nvtx_call_gpu(cta_model *m, cta_proc *p, uint32_t set, uint64_t start, uint64_t end,
                          int kernel, uint64_t start_late, uint64_t end_early)
{
    (void)m;
    if (!set)
        return;
    const nv_set *x = cta_pool_at(&NVP(p)->sets, set - 1);
    for (uint32_t k = 0; k < x->n; k++) {
        nv_inst *in = nv_at(p, x->v[k]);
        if (!in->ops || start < in->first)
            in->first = start;
        if (!in->ops || end > in->last)
            in->last = end;
        if (!in->ops || start_late < in->first_late)
            in->first_late = start_late;
        if (!in->ops || end_early > in->last_early)
            in->last_early = end_early;
        in->ops++;
        in->gpu_ns += end - start;
        in->kern_ns += kernel ? end - start : 0;
    }
}

void cta_nvtx_sync(cta_model *m, cta_proc *p, cta_thread *th, uint64_t ns)
{
    (void)m;
    const struct cta_nvtx_thread *t = NVT(th);
    for (uint32_t k = 0; t && k < t->nopen; k++)
        nv_at(p, t->open[k])->sync_ns += ns;
}

/* An event of kind, of ns, in instance in (innermost of its thread). */
static void place_add(const cta_model *m, const cta_proc *p, const nv_inst *in, int kind, uint64_t ns)
{
    struct cta_nvtx_model *nm = NVM(m);
    uint32_t key[3] = {(uint32_t)kind, in->group, p->file};
    int added;
    uint32_t i = cta_map_get(&nm->where, key, sizeof key, &added);
    if (added) {
        cta_grow(&nm->place, &nm->place_cap, i + 1, sizeof *nm->place);
        memset(&nm->place[i], 0, sizeof nm->place[i]);
    }
    cta_nvtx_place *pl = &nm->place[i];
    /* which range around it repeats is known only at the end: the two outermost are kept (as
     * the first event saw them; later events in other ranges widen nothing) */
    for (int k = 0; k < 2; k++) {
        uint64_t s = in->outer_seq[k];
        if (!pl->n) {
            pl->outer[k] = in->outer[k];
            pl->seq_min[k] = pl->seq_max[k] = s;
        } else if (in->outer[k] == pl->outer[k]) {
            pl->seq_min[k] = s < pl->seq_min[k] ? s : pl->seq_min[k];
            pl->seq_max[k] = s > pl->seq_max[k] ? s : pl->seq_max[k];
        }
    }
    pl->ns += ns;
    pl->n++;
}

void cta_nvtx_where(cta_model *m, cta_proc *p, uint32_t set, int kind, uint64_t ns)
{
    nv_model(m);
    nv_proc(p)->where_ns[kind] += ns;
    if (set) {
        const nv_set *x = cta_pool_at(&NVP(p)->sets, set - 1);
        place_add(m, p, nv_at(p, x->v[x->n - 1]), kind, ns);
    }
}

/* ---- sweep side ---- */

/* a: the instance's index, b: its thread */
void cta_nvtx_point(cta_model *m, cta_proc *p, const cta_pt *pt)
{
    uint32_t a = pt->a;
    struct cta_nvtx_thread *t = nv_thread(cta_thread_of(p, (uint32_t)pt->b));
    if (pt->type == CTA_P_FEAT_BEGIN) {
        cta_grow(&t->sw, &t->sw_cap, t->nsw + 1, sizeof *t->sw);
        t->sw[t->nsw++] = a;
        return;
    }
    for (uint32_t k = t->nsw; k-- > 0;)
        if (t->sw[k] == a) {
            memmove(t->sw + k, t->sw + k + 1, (t->nsw - k - 1) * sizeof *t->sw);
            t->nsw--;
            inst_unref(m, p, a);
            return;
        }
}

void cta_nvtx_idle(cta_model *m, cta_proc *p, int dev, uint32_t tid, uint64_t ns)
{
    if (!NVP(p) || !NVP(p)->serial || !ns) /* no range yet */
        return;
    uint32_t ti = cta_map_count(&p->thread_idx) ? cta_map_find(&p->thread_idx, &tid, sizeof tid)
                                                 : UINT32_MAX;
    const struct cta_nvtx_thread *t = ti == UINT32_MAX ? NULL : NVT(&p->threads[ti]);
    if (!t || !t->nsw)
        return;
    uint32_t inner = t->sw[t->nsw - 1] + 1;
    __typeof__(NVP(p)->ov[0][0]) *ov = NVP(p)->ov[dev];
    int k = 0;
    while (k < NV_OVERLAP && ov[k].inst && ov[k].inst != inner)
        k++;
    if (k == NV_OVERLAP) { /* past the bound: the least of them gives way */
        k = NV_OVERLAP - 1;
        for (int j = 0; j < NV_OVERLAP; j++)
            k = ov[j].ns < ov[k].ns ? j : k;
        if (ov[k].ns > ns)
            return;
        inst_unref(m, p, ov[k].inst - 1);
        ov[k].inst = 0;
    }
    if (!ov[k].inst) {
        ov[k].inst = inner;
        ov[k].ns = 0;
        nv_at(p, inner - 1)->refs++;
    }
    ov[k].ns += ns;
}

void cta_nvtx_gap(cta_model *m, cta_proc *p, int dev, const cta_gap_parts *g)
{
    nv_model(m);
    struct cta_nvtx_proc *np = nv_proc(p);
    __typeof__(np->ov[0][0]) *ov = np->ov[dev];
    int best = -1;
    for (int k = 0; k < NV_OVERLAP; k++)
        if (ov[k].inst && (best < 0 || ov[k].ns > ov[best].ns))
            best = k;
    for (int i = 0; i < 2; i++) {
        np->where_ns[CTA_WHERE_GAP + g->cls[i]] += g->ns[i];
        if (best >= 0 && g->ns[i])
            place_add(m, p, nv_at(p, ov[best].inst - 1), CTA_WHERE_GAP + g->cls[i], g->ns[i]);
    }
    for (int k = 0; k < NV_OVERLAP; k++)
        if (ov[k].inst) {
            inst_unref(m, p, ov[k].inst - 1);
            ov[k].inst = 0;
        }
}

/* ---- results ---- */

void cta_nvtx_finish(cta_model *m, cta_proc *p)
{
    struct cta_nvtx_proc *np = NVP(p);
    if (!np)
        return;
    /* every instance still held: ended ones, and those never ended (open at the end) */
    for (uint32_t i = 0; i < np->inst.n; i++) {
        nv_inst *in = nv_at(p, i);
        if (in->refs)
            nv_fold(m, p, i);
    }
}

void cta_nvtx_proc_free(cta_proc *p)
{
    for (size_t k = 0; k < p->nthreads; k++) {
        struct cta_nvtx_thread *t = NVT(&p->threads[k]);
        if (t) {
            free(t->open);
            free(t->sw);
            free(t);
        }
    }
    struct cta_nvtx_proc *np = NVP(p);
    if (!np)
        return;
    for (uint32_t i = 0; i < np->sets.n; i++)
        free(((nv_set *)cta_pool_at(&np->sets, i))->v);
    cta_pool_free(&np->inst);
    cta_pool_free(&np->sets);
    ct_hash_free(&np->ids);
    free(np->seq);
    free(np);
}

/* Group y of a partial model into group x of the merged one (gmap: the merged groups of the
 * partial's), as if y's instances had been folded into x after x's own. */
static void group_merge(cta_model *dst, cta_nvtx_group *x, const cta_nvtx_group *y, const uint32_t *gmap)
{
    cta_sketch_merge(&x->host, &y->host);
    cta_sketch_merge(&x->span, &y->span);
    cta_sketch_merge(&x->sync, &y->sync);
    cta_sketch_merge(&x->self, &y->self);
    x->span_lo += y->span_lo;
    x->span_bounded += y->span_bounded;
    x->kern_ns += y->kern_ns;
    x->gpu_ns += y->gpu_ns;
    x->ops += y->ops;
    x->open_at_end += y->open_at_end;
    x->open_ns += y->open_ns;
    x->top += y->top;
    x->with_gpu += y->with_gpu;
    x->kinds |= y->kinds;
    x->unprojected |= y->unprojected;
    for (int i = 0; i < y->nslow; i++) {
        cta_nvtx_step s = y->slow[i];
        for (int k = 0; k < s.nkids; k++)
            s.kid_group[k] = gmap[s.kid_group[k]];
        cta_top_insert(x->slow, &x->nslow, CTA_NVTX_SLOW, sizeof s, &s, offsetof(cta_nvtx_step, dur));
    }
    /* components: tracked in x as nv_fold would have tracked y's (up to NV_TRACKED_GROUPS
     * groups, CTA_NVTX_KIDS children each) */
    for (int k = 0; y->kid_track == 1 && k < y->nkids; k++) {
        int slot = kid_slot(dst, x, gmap[y->kid_group[k]]);
        if (slot >= 0)
            cta_sketch_merge(&x->kid[slot], &y->kid[k]);
    }
}

void cta_nvtx_merge(cta_model *dst, cta_model *src)
{
    struct cta_nvtx_model *sn = NVM(src);
    if (!sn)
        return;
    struct cta_nvtx_model *dn = nv_model(dst);
    size_t n = cta_map_count(&sn->names);
    uint32_t *gmap = cta_xmalloc((n + 1) * sizeof *gmap, "the NVTX ranges' merge");
    for (size_t i = 0; i < n; i++) {
        int added;
        gmap[i] = cta_map_take(&dn->names, &sn->names, (uint32_t)i, &added);
        if (added)
            group_init(dn, gmap[i]);
    }
    for (size_t i = 0; i < n; i++)
        group_merge(dst, &dn->g[gmap[i]], &sn->g[i], gmap);
    /* places are per process: each is new to dst */
    for (uint32_t i = 0; i < cta_map_count(&sn->where); i++) {
        uint32_t key[3];
        memcpy(key, cta_map_key(&sn->where, i), sizeof key);
        key[1] = gmap[key[1]];
        uint32_t j = cta_map_get(&dn->where, key, sizeof key, NULL);
        cta_grow(&dn->place, &dn->place_cap, j + 1, sizeof *dn->place);
        cta_nvtx_place *pl = &dn->place[j];
        *pl = sn->place[i];
        for (int k = 0; k < 2; k++)
            pl->outer[k] = pl->outer[k] ? gmap[pl->outer[k] - 1] + 1 : 0;
    }
    free(gmap);
    /* a finished process begins no more instances: its per-group numbering is done with */
    for (size_t i = 0; i < src->nprocs; i++)
        if (NVP(&src->procs[i])) {
            free(NVP(&src->procs[i])->seq);
            NVP(&src->procs[i])->seq = NULL;
            NVP(&src->procs[i])->seq_cap = 0;
        }
}

void cta_nvtx_free(cta_model *m)
{
    struct cta_nvtx_model *nm = NVM(m);
    if (!nm)
        return;
    for (uint32_t g = 0; g < cta_map_count(&nm->names); g++) {
        cta_nvtx_group *x = &nm->g[g];
        cta_sketch_free(&x->host);
        cta_sketch_free(&x->span);
        cta_sketch_free(&x->sync);
        cta_sketch_free(&x->self);
        for (int k = 0; k < CTA_NVTX_KIDS; k++)
            cta_sketch_free(&x->kid[k]);
    }
    free(nm->g);
    cta_map_free(&nm->names);
    cta_map_free(&nm->where);
    free(nm->place);
    free(nm);
}

const cta_nvtx_place *cta_nvtx_where_best(const cta_model *m, const cta_proc *p, int kind,
                                          uint32_t *group, double *share)
{
    const struct cta_nvtx_model *nm = NVM(m);
    if (!nm || !NVP(p) || !NVP(p)->where_ns[kind])
        return NULL;
    const cta_nvtx_place *best = NULL;
    for (uint32_t i = 0; i < cta_map_count(&nm->where); i++) {
        uint32_t key[3];
        memcpy(key, cta_map_key(&nm->where, i), sizeof key);
        if ((int)key[0] == kind && key[2] == p->file && (!best || nm->place[i].ns > best->ns)) {
            best = &nm->place[i];
            *group = key[1];
        }
    }
    if (best)
        *share = (double)best->ns / (double)NVP(p)->where_ns[kind];
    return best;
}

uint64_t cta_nvtx_median(const cta_sketch *s, uint64_t n)
{
    /* the zeros of the instances without it come first */
    if (!s->count || 2 * (n - s->count) >= n)
        return 0;
    return cta_sketch_quantile(s, (0.5 * (double)n - (double)(n - s->count)) / (double)s->count);
}

static const cta_model *order_m;
static int order_cmp(const void *a, const void *b)
{
    const cta_nvtx_group *x = &NVM(order_m)->g[*(const uint32_t *)a];
    const cta_nvtx_group *y = &NVM(order_m)->g[*(const uint32_t *)b];
    uint64_t tx = x->host.sum + x->open_ns, ty = y->host.sum + y->open_ns;
    return tx < ty ? 1 : tx > ty ? -1 : *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

size_t cta_nvtx_order(const cta_model *m, uint32_t **out)
{
    size_t n = NVM(m) ? cta_map_count(&NVM(m)->names) : 0;
    *out = cta_xmalloc((n + 1) * sizeof **out, "the NVTX table");
    for (size_t i = 0; i < n; i++)
        (*out)[i] = (uint32_t)i;
    order_m = m;
    qsort(*out, n, sizeof **out, order_cmp);
    return n;
}

void cta_nvtx_record(cta_model *m, cta_proc *p, const ct_rec *r)
{
    if (r->type == CT_REC_NVTX_BEGIN)
        cta_nvtx_begin(m, p, r);
    else
        cta_nvtx_end(m, p, r);
}
