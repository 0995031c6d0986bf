/* The timeline (cta_timeline.h): the model's observer, writing each event as the pass goes. */
#include "cta_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "cta_cli.h"
#include "cta_graph.h"
#include "cta_host.h"
#include "cta_kineto.h"
#include "cta_load.h"
#include "cta_out.h"
#include "cta_report_common.h"
#include "cta_tl_events.h"
#include "cta_tl_nvtx.h"
#include "cta_tl_samples.h"
#include "cta_names.h"

#define GPU_TID_BASE 1000000000u /* stream tracks: GPU_TID_BASE + device * 1000 + index */

static void on_proc(void *ctx, cta_proc *p)
{
    cta_tl *t = ctx;
    if (!cta_tl_keep_proc(t, p))
        return;
    char name[400];
    if (p->rank >= 0)
        snprintf(name, sizeof name, "%s pid %u rank %d", p->host, p->pid, p->rank);
    else
        snprintf(name, sizeof name, "%s pid %u", p->host, p->pid);
    cta_tl_meta(t, p, 0, "process_name", name);
    fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
            p->file + 1, p->rank >= 0 ? p->rank : (int)p->file);
    if (p->command[0]) {
        fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_labels\",\"args\":{\"labels\":\"",
                p->file + 1);
        cta_json_escape(t->f, p->command);
        fputs("\"}}", t->f);
    }
}

static void on_thread(void *ctx, cta_proc *p, const cta_thread *th)
{
    cta_tl *t = ctx;
    if (cta_tl_keep_proc(t, p) && th->name[0])
        cta_tl_meta(t, p, th->tid, "thread_name", th->name);
}

/* How p ended, once the model has read its END record (or found none): at its last activity,
 * or at the axis's start if it has none. */
static void ended(cta_tl *t, const cta_model *m, const cta_proc *p)
{
    if (!cta_tl_keep_proc(t, p))
        return;
    char text[160], name[170];
    snprintf(name, sizeof name, "ended: %s", cta_end_text(m, p, text, sizeof text));
    cta_tl_ev_open(t, "i", p, 0, p->t_first == UINT64_MAX ? t->base : p->t_last);
    cta_put_str(t->f, ",\"s\":\"p\"");
    cta_tl_str_field(t, "name", name);
    putc_unlocked('}', t->f);
}

/* The track of a device stream, named when it is created or first used: by its number on the
 * process's device in that order (33 tracks named by handle values could not be told apart),
 * its priority where its creation said one, then its handle, to match the program's logs. */
static uint64_t stream_track(cta_tl *t, cta_proc *p, int dev, uint64_t stream, int priority)
{
    uint64_t key[3] = {p->file, (uint64_t)dev, stream};
    int added;
    uint32_t i = cta_map_get(&t->streams, key, sizeof key, &added);
    uint64_t tid = GPU_TID_BASE + (uint64_t)dev * 1000 + i % 1000;
    if (added) {
        uint64_t dk[2] = {p->file, (uint64_t)dev};
        uint32_t d = cta_map_get(&t->stream_devs, dk, sizeof dk, &added);
        cta_grow(&t->stream_n, &t->stream_n_cap, d + 1, sizeof *t->stream_n);
        char name[96], prio[32] = "";
        if (priority)
            snprintf(prio, sizeof prio, "priority %d, ", priority);
        if (stream)
            snprintf(name, sizeof name, "GPU %d stream %u (%s0x%llx)", dev, ++t->stream_n[d], prio,
                     (unsigned long long)stream);
        else
            snprintf(name, sizeof name, "GPU %d default stream", dev);
        cta_tl_track_meta(t, p, tid, name);
    }
    return tid;
}

static void on_stream(void *ctx, cta_proc *p, int dev, uint64_t stream, int priority)
{
    cta_tl *t = ctx;
    if (cta_tl_keep_proc(t, p))
        stream_track(t, p, dev, stream, priority);
}

/* "site":..,"stack":.. of a call's stack (resolved once per stack: a loop repeats a few). */
static void stack_args(cta_tl *t, const cta_proc *p, uint32_t stack)
{
    uint32_t key[2] = {p->file, stack};
    int added;
    uint32_t i = cta_map_get(&t->stacks, key, sizeof key, &added);
    if (added) {
        char site[1024], st[CTA_FULL_STACK_LEN];
        cta_model_site_text(t->m, p, stack, site, sizeof site, CTA_FULL_STACK_FRAMES);
        cta_model_stack_text(t->m, p, stack, st, sizeof st, CTA_FULL_STACK_FRAMES);
        size_t a = strlen(site) + 1, b = strlen(st) + 1;
        cta_grow(&t->stack_text, &t->stack_cap, i + 1, sizeof *t->stack_text);
        t->stack_text[i] = cta_xmalloc(a + b, "the timeline's call stacks");
        memcpy(t->stack_text[i], site, a);
        memcpy(t->stack_text[i] + a, st, b);
    }
    const char *site = t->stack_text[i];
    cta_put_str(t->f, "\"site\":\"");
    cta_json_escape(t->f, site);
    putc_unlocked('"', t->f);
    cta_tl_str_field(t, "stack", site + strlen(site) + 1);
}

static void on_api(void *ctx, cta_proc *p, const ct_rec *r, const char *name, uint32_t stack)
{
    cta_tl *t = ctx;
    uint64_t start = r->u.api.start <= r->ts ? r->u.api.start : r->ts;
    if (!cta_tl_keep_proc(t, p) || !cta_tl_in_window(t, start, r->ts) ||
        (r->u.api.parent && (r->u.api.flags & CT_API_DRIVER) && !t->driver_calls) || !cta_tl_room(t, start, 1))
        return;
    cta_tl_ev_open(t, "X", p, r->tid, start);
    cta_tl_put_us(t->f, "dur", r->ts - start, 0);
    cta_put_str(t->f, ",\"cat\":\"cuda_api\"");
    cta_tl_str_field(t, "name", name);
    if (r->u.api.result || stack) {
        cta_put_str(t->f, ",\"args\":{");
        if (r->u.api.result)
            fprintf(t->f, "\"result\":%u%s", r->u.api.result, stack ? "," : "");
        if (stack)
            stack_args(t, p, stack);
        putc_unlocked('}', t->f);
    }
    putc_unlocked('}', t->f);
}

static const char *const kind_names[] = {"unknown", "pageable", "pinned", "device", "managed", "array"};
static const char *kind_name(uint32_t k) { return k < 6 ? kind_names[k] : "unknown"; }

/* A graph launch's args: the kernels it ran, in node order, runs of the same kernel as one
 * "name xN" (each one's GPU time inside the graph is unknown), and how many copies and sets. */
static void graph_args(cta_tl *t, const cta_proc *p, const cta_call *c)
{
    cta_gnodes g = cta_graph_launch_nodes(p, c->corr);
    size_t sets = 0;
    for (size_t i = 0; i < g.nc; i++)
        sets += g.c[i].cp.op == CT_COPY_MEMSET;
    if (g.nc)
        fprintf(t->f, ",\"graph_copies\":%zu,\"graph_sets\":%zu", g.nc - sets, sets);
    if (!g.n)
        return;
    char list[4096];
    size_t at = 0;
    for (size_t i = 0, run; i < g.n && at < sizeof list - 1; i += run) {
        for (run = 1; i + run < g.n && g.v[i + run].kidx == g.v[i].kidx; run++)
            ;
        int w = snprintf(list + at, sizeof list - at, "%s%s x%zu", i ? ", " : "",
                         cta_map_key(&t->m->kernel_names, g.v[i].kidx), run);
        at += w > 0 ? (size_t)w : 0;
    }
    if (at >= sizeof list - 1)
        memcpy(list + sizeof list - 5, "...", 4);
    fprintf(t->f, ",\"graph_kernels\":%zu", g.n);
    cta_tl_str_field(t, "kernels", list);
    cta_put_str(t->f, ",\"kernel_times\":\"unknown: events time a graph as a whole\"");
}

/* The category, name and args of a call's GPU work (gpu_kind: the GPU record's, for work whose
 * call is unknown); a copy's GB/s only when timed. */
static void work_event(cta_tl *t, const cta_proc *p, const cta_call *c, uint32_t gpu_kind,
                       uint64_t dur, int timed)
{
    char name[96];
    const char *nm = name;
    if (c->is_launch) {
        nm = c->kernel_name;
    } else if (c->is_copy) {
        static const char *const dirs[] = {"Memcpy ?", "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD",
                                           "Memcpy HtoH", "Memcpy PtoP"};
        if (c->copy->op == CT_COPY_MEMSET)
            snprintf(name, sizeof name, "Memset");
        else
            snprintf(name, sizeof name, "%s", dirs[c->copy->dir < 6 ? c->copy->dir : 0]);
    } else {
        snprintf(name, sizeof name, "%s", gpu_kind == CT_GPU_KERNEL ? "kernel" : gpu_kind == CT_GPU_MEMCPY ? "Memcpy" : gpu_kind == CT_GPU_MEMSET ? "Memset" : "GPU work");
    }
    cta_put_str(t->f, c->is_launch || gpu_kind == CT_GPU_KERNEL ? ",\"cat\":\"kernel\""
                                                              : ",\"cat\":\"memory\"");
    cta_tl_str_field(t, "name", nm);
    if (c->is_launch) {
        const ct_rec_launch *l = c->launch;
        static const char *const sep[6] = {",\"args\":{\"grid\":\"", ",", ",",
                                           "\",\"block\":\"", ",", ","};
        for (int i = 0; i < 6; i++) {
            cta_put_str(t->f, sep[i]);
            cta_put_dec(t->f, i < 3 ? l->grid[i] : l->block[i - 3]);
        }
        putc_unlocked('"', t->f);
        if (l->shared_bytes)
            fprintf(t->f, ",\"shared_bytes\":%u", l->shared_bytes);
        graph_args(t, p, c);
    } else if (c->is_copy) {
        const ct_rec_copy *cp = c->copy;
        fprintf(t->f, ",\"args\":{\"bytes\":%llu,\"src_kind\":\"%s\",\"dst_kind\":\"%s\",\"async\":%s",
                (unsigned long long)cp->bytes, kind_name(cp->src_kind), kind_name(cp->dst_kind),
                cp->flags & CT_COPY_ASYNC ? "true" : "false");
        if (timed)
            fprintf(t->f, ",\"gbps\":%.3f", dur ? (double)cp->bytes / (double)dur : 0);
    }
    if (!c->is_launch && !c->is_copy)
        return;
    if (!timed)
        cta_put_str(t->f, ",\"gpu_time\":\"not collected (cutrace run --gpu-timing all)\"");
    putc_unlocked('}', t->f);
}

/* Work without a GPU interval: an instant event on the calling thread when its call returned. */
static void on_untimed(void *ctx, cta_proc *p, const cta_call *c)
{
    cta_tl *t = ctx;
    if (!c->have_api || !cta_tl_keep_proc(t, p) || !cta_tl_in_window(t, c->api_end, c->api_end) ||
        !cta_tl_room(t, c->api_end, 1))
        return;
    cta_tl_ev_open(t, "i", p, c->tid, c->api_end);
    cta_put_str(t->f, ",\"s\":\"t\"");
    work_event(t, p, c, 0, 0, 0);
    putc_unlocked('}', t->f);
}

static void on_gpu(void *ctx, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c)
{
    cta_tl *t = ctx;
    uint64_t start = g->start <= end ? g->start : end, dur = end - start;
    int flow = c->have_api && (c->is_launch || c->is_copy), bw = c->is_copy && dur;
    if (!cta_tl_keep_proc(t, p) || !cta_tl_in_window(t, start, end) ||
        !cta_tl_room(t, start, 1 + 2 * (uint64_t)flow + 2 * (uint64_t)bw))
        return;
    int dev = g->device < CTA_MAX_DEV ? (int)g->device : CTA_MAX_DEV - 1;
    uint64_t tid = stream_track(t, p, dev, g->stream, 0);
    cta_tl_ev_open(t, "X", p, tid, start);
    cta_tl_put_us(t->f, "dur", dur, 0);
    work_event(t, p, c, g->kind, dur, 1);
    putc_unlocked('}', t->f);
    if (bw) {
        double gbps = (double)c->copy->bytes / (double)dur;
        char cname[48];
        snprintf(cname, sizeof cname, "GPU %d copy bandwidth (GB/s)", dev);
        cta_tl_ev_open(t, "C", p, 0, start);
        cta_tl_str_field(t, "name", cname);
        fprintf(t->f, ",\"args\":{\"GB/s\":%.3f}}", gbps);
        cta_tl_ev_open(t, "C", p, 0, end);
        cta_tl_str_field(t, "name", cname);
        cta_put_str(t->f, ",\"args\":{\"GB/s\":0}}");
    }
    if (flow) {
        /* the arrow: from inside the call to the start of its GPU work */
        uint64_t id = ++t->flows;
        uint64_t s_ts = c->api_start + (c->api_end - c->api_start) / 2;
        cta_tl_ev_open(t, "s", p, c->tid, s_ts);
        cta_put_str(t->f, ",\"id\":");
        cta_put_dec(t->f, id);
        cta_put_str(t->f, ",\"cat\":\"launch\",\"name\":\"launch\"}");
        cta_tl_ev_open(t, "f", p, tid, start);
        cta_put_str(t->f, ",\"id\":");
        cta_put_dec(t->f, id);
        cta_put_str(t->f, ",\"cat\":\"launch\",\"name\":\"launch\",\"bp\":\"e\"}");
    }
}

static void on_mem(void *ctx, cta_proc *p, uint64_t ts, int dev, uint64_t in_use)
{
    cta_tl *t = ctx;
    if (!cta_tl_keep_proc(t, p) || !cta_tl_in_window(t, ts, ts) || !cta_tl_room(t, ts, 1))
        return;
    char name[48];
    if (dev < 0)
        snprintf(name, sizeof name, "pinned host memory (bytes)");
    else
        snprintf(name, sizeof name, "GPU %d memory in use (bytes)", dev);
    cta_tl_ev_open(t, "C", p, 0, ts);
    cta_tl_str_field(t, "name", name);
    fprintf(t->f, ",\"args\":{\"bytes\":%llu}}", (unsigned long long)in_use);
}

/* One value of a counter track on the process's track 0 (beside its memory counters). */
static void counter(cta_tl *t, const cta_proc *p, uint64_t ts, const char *name, const char *unit, double v)
{
    cta_tl_ev_open(t, "C", p, 0, ts);
    cta_tl_str_field(t, "name", name);
    fprintf(t->f, ",\"args\":{\"%s\":%.6g}}", unit, v);
}

/* The host samples' counter tracks (cta_host.h), each value over the interval it measured: the
 * machine's busy and iowait cores, the process tree's read rate, each tree process's CPU; and
 * the threads' samples' host-activity tracks (cta_tl_samples.h). */
static int on_record(void *ctx, const ct_rec *r)
{
    cta_tl *t = ctx;
    if (r->type == CT_REC_THREAD_SAMPLE && cta_tl_keep_proc(t, &t->m->procs[r->file]))
        cta_tl_samples_record(t, &t->m->procs[r->file], r);
    if (r->type != CT_REC_PROC_SAMPLE && r->type != CT_REC_HOST_SAMPLE)
        return 0;
    const cta_proc *p = &t->m->procs[r->file];
    cta_host_rates x;
    if (!cta_tl_keep_proc(t, p) || !cta_host_rates_of(p, r, &x) || !cta_tl_in_window(t, x.from, r->ts) ||
        !cta_tl_room(t, r->ts, r->type == CT_REC_HOST_SAMPLE ? 3 : 1))
        return 0;
    if (x.from < t->base) /* a worker's start is to the clock tick: maybe before the axis */
        x.from = t->base;
    if (r->type == CT_REC_PROC_SAMPLE) {
        char name[96];
        snprintf(name, sizeof name, "CPU of pid %u, %s (cores)", x.pid, cta_role_names[x.role]);
        counter(t, p, x.from, name, "cores", x.cpu_cores);
    } else {
        counter(t, p, x.from, "machine: cores busy", "cores", x.busy_cores);
        counter(t, p, x.from, "machine: cores in iowait", "cores", x.iowait_cores);
        counter(t, p, x.from, "process tree: read MB/s", "MB/s", x.tree_read_bps / 1e6);
    }
    return 0;
}

static void on_nvtx(void *ctx, cta_proc *p, const ct_rec *r)
{
    cta_tl *t = ctx;
    if (cta_tl_keep_proc(t, p))
        cta_tl_nvtx_record(t, p, r);
}

/* Where a windowed trace's recording started and stopped: a line across the process. */
static void on_capture(void *ctx, cta_proc *p, const ct_rec *r)
{
    cta_tl *t = ctx;
    static const char *const why[] = {
        [CT_CAPTURE_PROFILER] = "cudaProfilerStart/Stop", [CT_CAPTURE_NVTX] = "the NVTX capture range",
        [CT_CAPTURE_DELAY] = "--delay elapsed", [CT_CAPTURE_DURATION] = "--duration elapsed",
        [CT_CAPTURE_END] = "the trace ended", [CT_CAPTURE_BEGIN] = "the trace began"};
    const ct_rec_capture *c = &r->u.capture;
    if (!cta_tl_keep_proc(t, p) || !cta_tl_in_window(t, r->ts, r->ts) || !cta_tl_room(t, r->ts, 1))
        return;
    char name[96];
    snprintf(name, sizeof name, "recording %s: %s", c->op == CT_CAPTURE_START ? "starts" : "stops",
             c->why < sizeof why / sizeof *why && why[c->why] ? why[c->why] : "?");
    cta_tl_ev_open(t, "i", p, 0, r->ts);
    cta_put_str(t->f, ",\"s\":\"p\",\"cat\":\"capture\"");
    cta_tl_str_field(t, "name", name);
    putc_unlocked('}', t->f);
}


int cta_timeline_write(FILE *f, ct_reader *rd, const cta_timeline_opts *o, cta_timeline_result *res)
{
    cta_tl t = {.first = 1, .pid = o->pid, .max_events = o->max_events, .driver_calls = o->driver_calls,
                .f = f, .nv = cta_tl_nvtx_new(), .samples = cta_tl_samples_new()};
    cta_map_init(&t.streams);
    cta_map_init(&t.stream_devs);
    cta_map_init(&t.stacks);
    cta_observer obs = {.ctx = &t, .on_api = on_api, .on_gpu = on_gpu, .on_untimed = on_untimed, .on_mem = on_mem,
                       .on_proc = on_proc, .on_thread = on_thread, .on_stream = on_stream,
                       .on_nvtx = on_nvtx, .on_capture = on_capture, .on_record = on_record};
    /* the axis starts at the earliest file start; the window is relative to it */
    t.base = cta_load_start(rd);
    t.from = t.base + (uint64_t)(o->from * 1e6);
    t.to = o->to ? t.base + (uint64_t)(o->to * 1e6) : 0;
    fputs("{\"displayTimeUnit\":\"ns\"," CTA_TIMELINE_MARK ",\"traceEvents\":[", f);
    cta_model m;
    t.m = &m;
    int rc = cta_load_run("timeline", rd, &obs, 0, &m);
    uint64_t t_end = 0;
    if (rc == CTA_EXIT_OK) {
        cta_tl_samples_flush(&t);
        for (size_t i = 0; i < m.nprocs; i++) {
            if (cta_tl_keep_proc(&t, &m.procs[i]))
                cta_tl_nvtx_never_ended(&t, &m.procs[i]);
            ended(&t, &m, &m.procs[i]);
        }
        fputs("\n]}\n", f);
        for (size_t i = 0; i < m.nprocs; i++)
            if (m.procs[i].t_last > t_end)
                t_end = m.procs[i].t_last;
        cta_model_free(&m);
    }
    *res = (cta_timeline_result){.events = t.events, .max_events = t.max_events,
                                 .stopped = t.stopped_at != 0,
                                 .stopped_ns = t.stopped_at > t.base ? t.stopped_at - t.base : 0,
                                 .end_ns = t_end > t.base ? t_end - t.base : 0,
                                 .nvtx_crowded = t.nvtx_crowded};
    cta_map_free(&t.streams);
    cta_map_free(&t.stream_devs);
    free(t.stream_n);
    for (size_t i = 0; i < cta_map_count(&t.stacks); i++)
        free(t.stack_text[i]);
    free(t.stack_text);
    cta_map_free(&t.stacks);
    cta_tl_nvtx_free(t.nv);
    cta_tl_samples_free(t.samples);
    return rc;
}

void cta_timeline_warnings(const cta_timeline_result *res, const char *out)
{
    if (res->stopped)
        fprintf(stderr,
                "cutrace timeline: warning: stopped at %llu events (--max-events), at %.3f ms of "
                "%.3f ms: the events after that are not in %s; choose a window with --from/--to, "
                "or --max-events 0 for all (viewers struggle beyond a few million events)\n",
                (unsigned long long)res->max_events, (double)res->stopped_ns / 1e6,
                (double)res->end_ns / 1e6, out);
    if (res->nvtx_crowded)
        fprintf(stderr,
                "cutrace timeline: warning: %llu NVTX start/end ranges are not in %s: each "
                "overlapped %d others started in its thread and domain (a row each; complete "
                "events must nest)\n",
                (unsigned long long)res->nvtx_crowded, out, CTA_TL_NVTX_ROWS);
}
