/* The per-record pass (cta_model_feed, cta_model.h): each record dispatched by its type, to the
 * features that take it (cta_feature.h) and to the core's handler of the type; then the sweep is
 * run up to what no later record can precede. The handlers of the records that make most of a
 * trace are here, where the dispatch inlines them (apart, called through a table of pointers,
 * they cost summary 3% more instructions): an API record, a LAUNCH or COPY detail joined with it
 * (by correlation id, FORMAT.md 4.3) and counted into the kernel and copy tables, a GPU interval
 * waiting for its call or completing it, a synchronization, a CPU reading; and those of the
 * records that describe a process (threads, devices, libraries, Python, capture windows). The
 * call's completion is cta_join.c's, GPU intervals' accounting cta_gpu.c's, allocations
 * cta_memory.c's. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_sweep.h"

#include <stdio.h>
#include <string.h>

/* ---- calls, GPU intervals, synchronizations ---- */

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

static void cta_on_api(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_api *a = &r->u.api;
    uint32_t idx = cta_name_index(m, r->file, a->function, 1);
    cta_stat *st = &m->api[idx];
    uint64_t start = a->start <= r->ts ? a->start : r->ts;
    cta_sketch_add(&st->d, r->ts - start);
    st->layer = (a->flags & CT_API_DRIVER) ? CTA_LAYER_DRIVER
              : (a->flags & CT_API_LIBRARY) ? CTA_LAYER_LIBRARY : CTA_LAYER_RUNTIME;
    if (a->result != 0) {
        st->fail_codes_vary |= st->failures && st->fail_code != (int32_t)a->result;
        st->fail_code = st->failures++ ? st->fail_code : (int32_t)a->result;
    }
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
        cta_sync_site(m, p, th, th->sync_corr == a->corr ? stack : 0);
    th->last_api_corr = a->corr;
    th->last_api_stack = stack;
    th->last_api_ns = r->ts - start;
    nesting(m, p, th, r, idx);
    if ((cat & CTA_CAT_TIMING) && !a->parent)
        p->event_timings++;
    int flag = ((cat & CTA_CAT_SYNCCOPY) ? CTA_PF_SYNCCOPY : 0) |
               ((cat & CTA_CAT_MEM) && !a->parent ? CTA_PF_MEMCALL : 0) |
               ((cat & (CTA_CAT_LAUNCH | CTA_CAT_COPY | CTA_CAT_SYNC)) ? CTA_PF_FEEDS : 0);
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
    CTA_FEAT_CALL(m, api, m, p, th, r, idx);
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

/* LAUNCH and COPY records: the call's detail, which completes it if its API record and GPU
 * interval came first. Inline in both handlers, as the rest of theirs. */
static inline void detail_done(cta_model *m, cta_proc *p, const ct_rec *r, uint64_t corr,
                               cta_joining *c)
{
    /* the host-side accounting drops the entry when no GPU record follows (a host-to-host
     * copy, GPU timing off) */
    if ((c->have_api && !cta_call_host_done(m, p, c)) || !c->have_gpu)
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

static void cta_on_launch(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_joining *c = cta_call_detail(p, r->u.launch.corr, CT_REC_LAUNCH, r->tid);
    c->u.launch = r->u.launch;
    launch_counts(m, p, c, r);
    detail_done(m, p, r, r->u.launch.corr, c);
}

static void cta_on_copy(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_joining *c = cta_call_detail(p, r->u.copy.corr, CT_REC_COPY, r->tid);
    c->u.copy = r->u.copy;
    copy_counts(m, p, r);
    detail_done(m, p, r, r->u.copy.corr, c);
}

static void cta_on_sync(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_sync *sy = &r->u.sync;
    uint64_t start = sy->start <= r->ts ? sy->start : r->ts;
    if (sy->kind >= CT_SYNC_DEVICE && sy->kind <= CT_SYNC_EVENT) {
        p->sync_calls++;
        p->sync_ns += r->ts - start;
        /* the site is on the call's API record, next in the thread's stream (or before) */
        cta_thread *th = cta_thread_of(p, r->tid);
        if (th->sync_corr)
            cta_sync_site(m, p, th, 0);
        CTA_FEAT_CALL(m, sync, m, p, th, r->ts - start);
        th->sync_corr = sy->corr ? sy->corr : UINT64_MAX;
        th->sync_kind = sy->kind;
        th->sync_ns = r->ts - start;
        th->sync_start = start;
        if (th->last_api_corr == sy->corr && sy->corr)
            cta_sync_site(m, p, th, th->last_api_stack);
    }
    if (sy->kind < 8)
        p->sync_count_kind[sy->kind]++;
    if (sy->kind != CT_SYNC_STREAM_WAIT_EVENT)
        cta_push_interval(p, start, r->ts, CTA_P_SYNC_BEGIN, CTA_P_SYNC_END, 0,
                          sy->kind == CT_SYNC_MEMCPY ? CTA_PF_SYNCCOPY
                          : sy->kind == CT_SYNC_EVENT ? CTA_PF_EVENTSYNC : 0,
                          r->tid);
}

/* GPU records are joined to their call's LAUNCH / COPY detail. A GPU interval can end before
 * its call returns (a synchronous copy, a tiny kernel), so it can be delivered first: it then
 * waits in the call's entry for the detail. */
static void cta_on_gpu(cta_model *m, cta_proc *p, const ct_rec *r)
{
    /* the union of the exact intervals sees the records in time order, whenever their call's
     * records come */
    const ct_rec_gpu *g = &r->u.gpu;
    cta_dev *dv = &p->dev[cta_dev_slot(g->device)];
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
    cta_joining *c = cta_call_get(p, r->u.gpu.corr, 1);
    if (c->have_detail && c->type != CT_REC_MEM) {
        cta_gpu_done(m, p, &r->u.gpu, r->ts, c);
        return;
    }
    c->have_gpu = 1;
    c->gpu = r->u.gpu;
    c->gpu_end = r->ts;
}

/* ---- the records that describe a process ---- */

static void cta_on_cpu(cta_model *m, cta_proc *p, const ct_rec *r)
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

static void cta_on_thread(cta_model *m, cta_proc *p, const ct_rec *r)
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

static void cta_on_device(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_dev *dv = &p->dev[cta_dev_slot(r->u.device.device)];
    dv->seen = 1;
    dv->prop = r->u.device;
    dv->have_prop = 1;
    char tmp[CT_STRTMP];
    snprintf(dv->name, sizeof dv->name, "%s", ct_reader_str(m->rd, r->file, r->u.device.name, tmp));
}

static void cta_on_shlib(cta_model *m, cta_proc *p, const ct_rec *r)
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

static void cta_on_python(cta_model *m, cta_proc *p, const ct_rec *r)
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

static void cta_on_capture(cta_model *m, cta_proc *p, const ct_rec *r)
{
    cta_sweep_capture(p, r->ts, r->u.capture.op == CT_CAPTURE_START);
    if (m->obs && m->obs->on_capture)
        m->obs->on_capture(m->obs->ctx, p, r);
}

static void cta_on_stream(cta_model *m, cta_proc *p, const ct_rec *r)
{
    if (m->obs && m->obs->on_stream && r->u.stream.op == CT_STREAM_CREATE)
        m->obs->on_stream(m->obs->ctx, p, cta_dev_slot(r->u.stream.device), r->u.stream.stream,
                          r->u.stream.priority);
}

/* NVTX records are the NVTX feature's; the observer sees them too (the timeline's tracks). */
static void cta_on_nvtx(cta_model *m, cta_proc *p, const ct_rec *r)
{
    if (m->obs && m->obs->on_nvtx)
        m->obs->on_nvtx(m->obs->ctx, p, r);
}

static void cta_on_end(cta_model *m, cta_proc *p, const ct_rec *r)
{
    (void)m;
    p->ended = 1;
    p->end = r->u.end;
}

/* The core's handler of each record type, named after the type's ct_rec member (the format's
 * list of record types, CT_REC_LIST, generates the dispatch); cta_on_none: none (definitions
 * the reader resolves, records only features take). A new record type needs a handler here, or
 * a name below, and the compiler says so. A switch, not a table of pointers, so that the
 * handlers above are inlined in it. */
static void cta_on_none(cta_model *m, cta_proc *p, const ct_rec *r)
{
    (void)m, (void)p, (void)r;
}
#define cta_on_string cta_on_none
#define cta_on_frame cta_on_none
#define cta_on_stack cta_on_none
#define cta_on_loss cta_on_none
#define cta_on_gemm cta_on_none
#define cta_on_graph cta_on_none
#define cta_on_proc cta_on_none
#define cta_on_proc_sample cta_on_none
#define cta_on_host_sample cta_on_none
#define cta_on_thread_sample cta_on_none
#define cta_on_nvtx_range cta_on_nvtx
#define cta_on_nvtx_mark cta_on_nvtx
#define cta_on_nvtx_begin cta_on_nvtx
#define CTA_ON_TYPE(TYPE, member, ...)                                                             \
    case CT_REC_##TYPE:                                                                            \
        cta_on_##member(m, p, r);                                                                  \
        break;

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
    switch (r->type) {
        CT_REC_LIST(CTA_ON_TYPE)
    default:
        break;
    }
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
#undef CTA_ON_TYPE
