/* The per-record pass (cta_model_feed, cta_model.h): each record dispatched by its type, to the
 * features that take it (cta_feature.h) and to the core's handler of the type; the handlers of
 * the records that describe a process (threads, devices, libraries, Python, capture windows) are
 * here, those of calls in cta_join.c, cta_gpu.c and cta_memory.c; then the sweep is run up to
 * what no later record can precede. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_sweep.h"

#include <stdio.h>
#include <string.h>

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
        m->obs->on_stream(m->obs->ctx, p, cta_dev_slot(r->u.stream.device), r->u.stream.stream);
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
 * list of record types, CT_REC_LIST, generates the table); NULL: none (definitions the reader
 * resolves, records only features take). A new record type needs a handler here, or a NULL
 * name below, and the compiler says so. */
#define cta_on_string NULL
#define cta_on_frame NULL
#define cta_on_stack NULL
#define cta_on_loss NULL
#define cta_on_gemm NULL
#define cta_on_graph NULL
#define cta_on_proc NULL
#define cta_on_proc_sample NULL
#define cta_on_host_sample NULL
#define cta_on_nvtx_range cta_on_nvtx
#define cta_on_nvtx_mark cta_on_nvtx
#define cta_on_nvtx_begin cta_on_nvtx
typedef void (*cta_rec_fn)(cta_model *m, cta_proc *p, const ct_rec *r);
#define CTA_ON_TYPE(TYPE, member, ...) [CT_REC_##TYPE] = cta_on_##member,
static const cta_rec_fn on_type[CT_REC_TYPE_LIMIT] = {CT_REC_LIST(CTA_ON_TYPE)};
#undef CTA_ON_TYPE

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
    if (on_type[r->type])
        on_type[r->type](m, p, r);
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
