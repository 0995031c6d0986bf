/* `cutrace timeline PATH... -o FILE.json`: a Chrome Trace Event / Perfetto JSON timeline, written
 * while the model reads the traces (it observes the joined calls, cta_observer), so memory stays
 * that of the model. Layout:
 *  - one process per traced process, named "HOST pid PID rank R", sorted by rank;
 *  - host threads (tid = OS tid) with their CUDA calls as complete ("X") events; a driver call
 *    made by a runtime call lies inside it and is left out unless --driver-calls; a call with a
 *    call stack has args "site" (as the summary names it: the Python line in user code, else the
 *    user's native frames) and "stack" (every frame, innermost first, up to CTA_FULL_STACK_FRAMES);
 *  - one thread track per device stream ("GPU D stream 0x..."), with kernels, copies and sets
 *    (args: grid, block, bytes, memory kinds, GB/s); those without a GPU interval (GPU timing
 *    off or 1 in N) as instant events on the calling thread when the call returned;
 *  - a flow ("s" at the call, "f" at the GPU work, id unique per process) from each call to its
 *    GPU work;
 *  - NVTX ranges (FORMAT.md 4.8) as complete events on tracks of their own per thread and domain
 *    ("NVTX DOMAIN (tid N)", next to the thread's CUDA calls): push/pop ranges nest as pushed;
 *    start/end ranges, which need not nest, go on the starting thread's "start/end" track, on a
 *    further row of it ("start/end 2", up to NVTX_ROWS) when one overlaps a range already drawn,
 *    as complete events must nest (one overlapping NVTX_ROWS others is left out and counted in
 *    a warning); named by their message, or by its normalized name when the tracer kept no more
 *    names; marks and unmatched pops and ends as instant events;
 *  - counters ("C"): device memory in use per device, pinned host memory, copy bandwidth; from
 *    host samples (format 1.8, cta_host.h), the machine's busy and iowait cores, the process
 *    tree's read rate and each tree process's CPU in cores, each value at the start of the
 *    interval it measured (it holds until the next value of its track);
 *  - per process, an instant event at its last activity (the axis start if it has none) saying
 *    how it ended ("ended: exit status 3", as the summary's).
 * Times are microseconds from the earliest trace start (at most 3 decimals, trailing zeros
 * dropped); all processes share the axis. The JSON is kept small: one event per line, args only
 * where they say something (a call's result only when it failed; no correlation ids: the flows
 * link calls to their work), flow ids numbered from 1. Viewers handle a few million events at
 * most, so the timeline stops at --max-events (default CTA_TL_MAX_EVENTS) with a warning saying
 * where, rather than writing a file nothing can open. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_cli.h"
#include "cta_graph.h"
#include "cta_host.h"
#include "cta_load.h"
#include "cta_out.h"
#include "cta_report.h"
#include "cta_names.h"

#define GPU_TID_BASE 1000000000u /* stream tracks: GPU_TID_BASE + device * 1000 + index */
#define NVTX_TID_BASE 500000000u /* NVTX tracks: NVTX_TID_BASE + index, between threads and GPU */
#define NVTX_ROWS 256            /* rows of a start/end track (ranges open at once in a thread) */
#define CTA_TL_MAX_EVENTS 2000000ull

typedef struct {
    FILE *f;
    int first;
    uint64_t base;               /* ns mapped to ts 0 */
    uint64_t from, to;           /* window, ns on the trace axis (to 0: no end) */
    long pid;                    /* -1: all */
    cta_map streams;              /* (file, device, stream) -> index */
    uint64_t events;
    uint64_t max_events;         /* 0: no limit */
    uint64_t stopped_at;         /* time of the first event left out (0: none) */
    uint64_t flows;              /* flow ids handed out */
    int driver_calls;            /* also driver calls nested in runtime calls */
    const cta_model *m;          /* names the stacks */
    cta_map stacks;              /* (file, stack index) -> index in stack_text */
    char **stack_text;           /* site\0stack of each, resolved once */
    size_t stack_cap;
    cta_map nvtx_tracks;         /* (file, tid, domain, kind, row) -> index */
    uint64_t *nvtx_end;          /* per NVTX track: the latest end of a range drawn on it */
    size_t nvtx_cap;
    cta_map categories;          /* (file, domain, category) -> index in category_name */
    uint32_t *category_name;     /* string id that names it (nvtxNameCategory) */
    size_t category_cap;
    uint64_t nvtx_crowded;       /* start/end ranges left out: NVTX_ROWS rows were busy */
    /* NVTX ranges begun and not yet ended (NVTX_BEGIN records, format 1.6), drawn until their
     * process's end if they never end: push/pop ones by (file, tid, domain, depth), start/end
     * ones by id per file; each an entry of nvtx_open (tl_open) */
    cta_map nvtx_pushed;
    uint32_t *pushed_slot;        /* per nvtx_pushed key: its tl_open index + 1, 0 none */
    size_t pushed_cap;
    ct_hash *nvtx_started;        /* per file */
    size_t started_cap;
    cta_pool nvtx_open;
} tl;

typedef struct {
    ct_rec r;                     /* the NVTX_BEGIN */
    int live;
} tl_open;

/* A range drawn open (its flags, the timeline's own): it never ended. */
#define TL_NVTX_OPEN (1u << 31)

/* Whether n events at ts (one item: a GPU interval with its counters and flow) still fit under
 * --max-events; the first item that does not marks where the timeline stops (items come in time
 * order), and nothing after it is written. */
static int room(tl *t, uint64_t ts, uint64_t n)
{
    if (!t->max_events || (!t->stopped_at && t->events + n <= t->max_events))
        return 1;
    if (!t->stopped_at)
        t->stopped_at = ts ? ts : 1;
    return 0;
}

static int keep_proc(const tl *t, const cta_proc *p) { return t->pid < 0 || (long)p->pid == t->pid; }

static int in_window(const tl *t, uint64_t a, uint64_t b)
{
    return b >= t->from && (!t->to || a <= t->to);
}

/* ,"key":V with V the nanoseconds `neg ? -ns : ns` in microseconds, without trailing zeros. */
static void put_us(FILE *f, const char *key, uint64_t ns, int neg)
{
    unsigned frac = (unsigned)(ns % 1000);
    cta_put_str(f, ",\"");
    cta_put_str(f, key);
    cta_put_str(f, neg && ns ? "\":-" : "\":");
    cta_put_dec(f, ns / 1000);
    if (frac) {
        char d[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                     (char)('0' + frac % 10)};
        size_t n = sizeof d;
        while (d[n - 1] == '0')
            n--;
        for (size_t i = 0; i < n; i++)
            putc_unlocked(d[i], f);
    }
}

/* Opens one event object: {"ph":PH,"pid":..,"tid":..,"ts":..  (the caller adds the rest). */
static void ev_open(tl *t, const char *ph, const cta_proc *p, uint64_t tid, uint64_t ts)
{
    cta_put_str(t->f, t->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
    cta_put_str(t->f, ph);
    cta_put_str(t->f, "\",\"pid\":");
    cta_put_dec(t->f, p->file + 1);
    cta_put_str(t->f, ",\"tid\":");
    cta_put_dec(t->f, tid);
    if (ts >= t->base)
        put_us(t->f, "ts", ts - t->base, 0);
    else
        put_us(t->f, "ts", t->base - ts, 1);
    t->first = 0;
    t->events++;
}

static void str_field(tl *t, const char *key, const char *v)
{
    cta_put_str(t->f, ",\"");
    cta_put_str(t->f, key);
    cta_put_str(t->f, "\":\"");
    cta_json_escape(t->f, v);
    putc_unlocked('"', t->f);
}

static void meta(tl *t, const cta_proc *p, uint64_t tid, const char *what, const char *name)
{
    fprintf(t->f, "%s\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%llu,\"name\":\"%s\",\"args\":{\"name\":\"",
            t->first ? "" : ",", p->file + 1, (unsigned long long)tid, what);
    cta_json_escape(t->f, name);
    fputs("\"}}", t->f);
    t->first = 0;
}

static void on_proc(void *ctx, cta_proc *p)
{
    tl *t = ctx;
    if (!keep_proc(t, p))
        return;
    char name[400];
    if (p->rank >= 0)
        snprintf(name, sizeof name, "%s pid %u rank %d", p->host, p->pid, p->rank);
    else
        snprintf(name, sizeof name, "%s pid %u", p->host, p->pid);
    meta(t, p, 0, "process_name", name);
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
    tl *t = ctx;
    if (keep_proc(t, p) && th->name[0])
        meta(t, p, th->tid, "thread_name", th->name);
}

/* How p ended, once the model has read its END record (or found none): at its last activity,
 * or at the axis's start if it has none. */
static void ended(tl *t, const cta_model *m, const cta_proc *p)
{
    if (!keep_proc(t, p))
        return;
    char text[160], name[170];
    snprintf(name, sizeof name, "ended: %s", cta_end_text(m, p, text, sizeof text));
    ev_open(t, "i", p, 0, p->t_first == UINT64_MAX ? t->base : p->t_last);
    cta_put_str(t->f, ",\"s\":\"p\"");
    str_field(t, "name", name);
    putc_unlocked('}', t->f);
}

/* Names a track of the timeline's own (not an OS thread) and sorts it by its tid: NVTX tracks
 * after the host threads, stream tracks last. */
static void track_meta(tl *t, const cta_proc *p, uint64_t tid, const char *name)
{
    meta(t, p, tid, "thread_name", name);
    fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%llu,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%llu}}",
            p->file + 1, (unsigned long long)tid, (unsigned long long)tid);
}

/* The track of a device stream, named when first used. */
static uint64_t stream_track(tl *t, cta_proc *p, int dev, uint64_t stream)
{
    uint64_t key[3] = {p->file, (uint64_t)dev, stream};
    int added;
    uint32_t i = cta_map_get(&t->streams, key, sizeof key, &added);
    uint64_t tid = GPU_TID_BASE + (uint64_t)dev * 1000 + i % 1000;
    if (added) {
        char name[96];
        snprintf(name, sizeof name, "GPU %d stream %s0x%llx", dev, stream ? "" : "(default) ",
                 (unsigned long long)stream);
        track_meta(t, p, tid, name);
    }
    return tid;
}

static void on_stream(void *ctx, cta_proc *p, int dev, uint64_t stream)
{
    tl *t = ctx;
    if (keep_proc(t, p))
        stream_track(t, p, dev, stream);
}

/* "site":..,"stack":.. of a call's stack (resolved once per stack: a loop repeats a few). */
static void stack_args(tl *t, const cta_proc *p, uint32_t stack)
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
    str_field(t, "stack", site + strlen(site) + 1);
}

static void on_api(void *ctx, cta_proc *p, const ct_rec *r, const char *name, uint32_t stack)
{
    tl *t = ctx;
    uint64_t start = r->u.api.start <= r->ts ? r->u.api.start : r->ts;
    if (!keep_proc(t, p) || !in_window(t, start, r->ts) ||
        (r->u.api.parent && (r->u.api.flags & CT_API_DRIVER) && !t->driver_calls) || !room(t, start, 1))
        return;
    ev_open(t, "X", p, r->tid, start);
    put_us(t->f, "dur", r->ts - start, 0);
    cta_put_str(t->f, ",\"cat\":\"cuda_api\"");
    str_field(t, "name", name);
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
static void graph_args(tl *t, const cta_proc *p, const cta_call *c)
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
    str_field(t, "kernels", list);
    cta_put_str(t->f, ",\"kernel_times\":\"unknown: events time a graph as a whole\"");
}

/* The category, name and args of a call's GPU work (gpu_kind: the GPU record's, for work whose
 * call is unknown); a copy's GB/s only when timed. */
static void work_event(tl *t, const cta_proc *p, const cta_call *c, uint32_t gpu_kind,
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
    str_field(t, "name", nm);
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
    tl *t = ctx;
    if (!c->have_api || !keep_proc(t, p) || !in_window(t, c->api_end, c->api_end) ||
        !room(t, c->api_end, 1))
        return;
    ev_open(t, "i", p, c->tid, c->api_end);
    cta_put_str(t->f, ",\"s\":\"t\"");
    work_event(t, p, c, 0, 0, 0);
    putc_unlocked('}', t->f);
}

static void on_gpu(void *ctx, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c)
{
    tl *t = ctx;
    uint64_t start = g->start <= end ? g->start : end, dur = end - start;
    int flow = c->have_api && (c->is_launch || c->is_copy), bw = c->is_copy && dur;
    if (!keep_proc(t, p) || !in_window(t, start, end) ||
        !room(t, start, 1 + 2 * (uint64_t)flow + 2 * (uint64_t)bw))
        return;
    int dev = g->device < CTA_MAX_DEV ? (int)g->device : CTA_MAX_DEV - 1;
    uint64_t tid = stream_track(t, p, dev, g->stream);
    ev_open(t, "X", p, tid, start);
    put_us(t->f, "dur", dur, 0);
    work_event(t, p, c, g->kind, dur, 1);
    putc_unlocked('}', t->f);
    if (bw) {
        double gbps = (double)c->copy->bytes / (double)dur;
        char cname[48];
        snprintf(cname, sizeof cname, "GPU %d copy bandwidth (GB/s)", dev);
        ev_open(t, "C", p, 0, start);
        str_field(t, "name", cname);
        fprintf(t->f, ",\"args\":{\"GB/s\":%.3f}}", gbps);
        ev_open(t, "C", p, 0, end);
        str_field(t, "name", cname);
        cta_put_str(t->f, ",\"args\":{\"GB/s\":0}}");
    }
    if (flow) {
        /* the arrow: from inside the call to the start of its GPU work */
        uint64_t id = ++t->flows;
        uint64_t s_ts = c->api_start + (c->api_end - c->api_start) / 2;
        ev_open(t, "s", p, c->tid, s_ts);
        cta_put_str(t->f, ",\"id\":");
        cta_put_dec(t->f, id);
        cta_put_str(t->f, ",\"cat\":\"launch\",\"name\":\"launch\"}");
        ev_open(t, "f", p, tid, start);
        cta_put_str(t->f, ",\"id\":");
        cta_put_dec(t->f, id);
        cta_put_str(t->f, ",\"cat\":\"launch\",\"name\":\"launch\",\"bp\":\"e\"}");
    }
}

static void on_mem(void *ctx, cta_proc *p, uint64_t ts, int dev, uint64_t in_use)
{
    tl *t = ctx;
    if (!keep_proc(t, p) || !in_window(t, ts, ts) || !room(t, ts, 1))
        return;
    char name[48];
    if (dev < 0)
        snprintf(name, sizeof name, "pinned host memory (bytes)");
    else
        snprintf(name, sizeof name, "GPU %d memory in use (bytes)", dev);
    ev_open(t, "C", p, 0, ts);
    str_field(t, "name", name);
    fprintf(t->f, ",\"args\":{\"bytes\":%llu}}", (unsigned long long)in_use);
}

/* One value of a counter track on the process's track 0 (beside its memory counters). */
static void counter(tl *t, const cta_proc *p, uint64_t ts, const char *name, const char *unit, double v)
{
    ev_open(t, "C", p, 0, ts);
    str_field(t, "name", name);
    fprintf(t->f, ",\"args\":{\"%s\":%.6g}}", unit, v);
}

/* The host samples' counter tracks (cta_host.h), each value over the interval it measured: the
 * machine's busy and iowait cores, the process tree's read rate, each tree process's CPU. */
static int on_record(void *ctx, const ct_rec *r)
{
    tl *t = ctx;
    if (r->type != CT_REC_PROC_SAMPLE && r->type != CT_REC_HOST_SAMPLE)
        return 0;
    const cta_proc *p = &t->m->procs[r->file];
    cta_host_rates x;
    if (!keep_proc(t, p) || !cta_host_rates_of(p, r, &x) || !in_window(t, x.from, r->ts) ||
        !room(t, r->ts, r->type == CT_REC_HOST_SAMPLE ? 3 : 1))
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

/* The track of an NVTX thread and domain, named when first used: push/pop ranges (kind 0) or
 * row `row` of the start/end ranges (kind 1). Returns its index (nvtx_end) in *idx. */
static uint64_t nvtx_track(tl *t, cta_proc *p, uint32_t tid, uint32_t domain, uint32_t kind,
                           uint32_t row, uint32_t *idx)
{
    uint32_t key[5] = {p->file, tid, domain, kind, row};
    int added;
    uint32_t i = cta_map_get(&t->nvtx_tracks, key, sizeof key, &added);
    uint64_t track = NVTX_TID_BASE + (uint64_t)i;
    if (added) {
        cta_grow(&t->nvtx_end, &t->nvtx_cap, i + 1, sizeof *t->nvtx_end);
        t->nvtx_end[i] = 0;
        char tmp[CT_STRTMP], name[400], rowname[24] = "";
        if (row)
            snprintf(rowname, sizeof rowname, " %u", row + 1);
        snprintf(name, sizeof name, "NVTX%s%s%s%s (tid %u)", domain ? " " : "",
                 ct_reader_str(t->m->rd, p->file, domain, tmp), kind ? " start/end" : "", rowname, tid);
        track_meta(t, p, track, name);
    }
    *idx = i;
    return track;
}

/* ,"payload":V in the type the program gave (nvtxPayloadType_t); a non-finite float as text. */
static void nvtx_payload(FILE *f, uint32_t kind, uint64_t v)
{
    uint32_t lo = (uint32_t)v;
    double d;
    float fl;
    switch (kind) {
    case 1: fprintf(f, ",\"payload\":%llu", (unsigned long long)v); return;
    case 2: fprintf(f, ",\"payload\":%lld", (long long)v); return;
    case 4: fprintf(f, ",\"payload\":%u", lo); return;
    case 5: fprintf(f, ",\"payload\":%d", (int32_t)lo); return;
    case 3: memcpy(&d, &v, sizeof d); break;
    case 6: memcpy(&fl, &lo, sizeof fl); d = fl; break;
    default: return;
    }
    fprintf(f, d == d && d - d == 0 ? ",\"payload\":%.17g" : ",\"payload\":\"%g\"", d);
}

/* The args both NVTX records carry, opening "args" (the caller closes it): domain, category
 * (by its name when the program named it), payload, color, and the normalized name (group)
 * when it differs from the name shown. */
static void nvtx_args(tl *t, const cta_proc *p, uint32_t domain, uint32_t category, uint32_t payload_kind,
                      uint64_t payload, uint32_t flags, uint32_t color, const char *shown, uint32_t group)
{
    char tmp[CT_STRTMP];
    cta_put_str(t->f, ",\"args\":{\"domain\":\"");
    cta_json_escape(t->f, domain ? ct_reader_str(t->m->rd, p->file, domain, tmp) : "(default)");
    putc_unlocked('"', t->f);
    if (category) {
        uint32_t key[3] = {p->file, domain, category};
        uint32_t i = cta_map_find(&t->categories, key, sizeof key);
        if (i != UINT32_MAX)
            str_field(t, "category", ct_reader_str(t->m->rd, p->file, t->category_name[i], tmp));
        else
            fprintf(t->f, ",\"category\":%u", category);
    }
    nvtx_payload(t->f, payload_kind, payload);
    if (flags & CT_NVTX_COLOR)
        fprintf(t->f, ",\"color\":\"#%06x\"", color & 0xFFFFFFu);
    const char *g = group ? ct_reader_str(t->m->rd, p->file, group, tmp) : "";
    if (*g && strcmp(g, shown))
        str_field(t, "group", g);
}

/* The name an NVTX record shows: its message, else its normalized name (the tracer kept no
 * more distinct messages), else `none`. */
static const char *nvtx_name(const tl *t, const cta_proc *p, uint32_t name, uint32_t group,
                             const char *none, char tmp[CT_STRTMP])
{
    if (name)
        return ct_reader_str(t->m->rd, p->file, name, tmp);
    return group ? ct_reader_str(t->m->rd, p->file, group, tmp) : none;
}

static void nvtx_range(tl *t, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_range *n = &r->u.nvtx_range;
    uint64_t start = n->start <= r->ts ? n->start : r->ts;
    int unmatched = (n->flags & CT_NVTX_UNMATCHED) != 0;
    if (!in_window(t, start, r->ts))
        return;
    uint32_t idx, tid = unmatched ? n->end_tid : n->start_tid, row = 0;
    uint64_t track = nvtx_track(t, p, tid, n->domain, n->kind != 0, 0, &idx);
    /* complete events must nest: a start/end range that overlaps the last drawn goes lower */
    while (n->kind && !unmatched && t->nvtx_end[idx] > start) {
        if (++row == NVTX_ROWS) {
            t->nvtx_crowded++;
            return;
        }
        track = nvtx_track(t, p, tid, n->domain, 1, row, &idx);
    }
    if (!room(t, start, 1))
        return;
    char tmp[CT_STRTMP];
    const char *name;
    if (unmatched) {
        name = n->kind ? "nvtxRangeEnd of a range the trace did not see start (unmatched)"
                       : "nvtxRangePop with nothing pushed (unmatched)";
        ev_open(t, "i", p, track, r->ts);
        cta_put_str(t->f, ",\"s\":\"t\"");
    } else {
        name = nvtx_name(t, p, n->name, n->group, "(unnamed range)", tmp);
        if (r->ts > t->nvtx_end[idx])
            t->nvtx_end[idx] = r->ts;
        ev_open(t, "X", p, track, start);
        put_us(t->f, "dur", r->ts - start, 0);
    }
    cta_put_str(t->f, ",\"cat\":\"nvtx\"");
    str_field(t, "name", name);
    nvtx_args(t, p, n->domain, n->category, n->payload_kind, n->payload, n->flags, n->color, name, n->group);
    if (!n->kind)
        fprintf(t->f, ",\"depth\":%u", n->depth);
    else
        fprintf(t->f, ",\"id\":%llu", (unsigned long long)n->id);
    if (n->kind && n->start_tid != n->end_tid)
        fprintf(t->f, ",\"start_tid\":%u,\"end_tid\":%u", n->start_tid, n->end_tid);
    if (!n->name && n->group)
        cta_put_str(t->f, ",\"unnamed\":\"past the tracer's bound of distinct NVTX names: "
                          "shown by its normalized name\"");
    if (n->flags & TL_NVTX_OPEN)
        cta_put_str(t->f, ",\"open_at_end\":\"never ended: drawn until the process's last record\"");
    cta_put_str(t->f, "}}");
}

/* The slot of an open push/pop range of (file, tid, domain, depth): its tl_open index + 1. */
static uint32_t *pushed_slot(tl *t, uint32_t file, uint32_t tid, uint32_t domain, uint32_t depth,
                             int create)
{
    uint32_t key[4] = {file, tid, domain, depth};
    int added;
    uint32_t i = create ? cta_map_get(&t->nvtx_pushed, key, sizeof key, &added)
                        : cta_map_find(&t->nvtx_pushed, key, sizeof key);
    if (i == UINT32_MAX)
        return NULL;
    if (i >= t->pushed_cap) {
        size_t old = t->pushed_cap;
        cta_grow(&t->pushed_slot, &t->pushed_cap, i + 1, sizeof *t->pushed_slot);
        memset(t->pushed_slot + old, 0, (t->pushed_cap - old) * sizeof *t->pushed_slot);
    }
    return &t->pushed_slot[i];
}

/* The open start/end ranges of file: id -> tl_open index. */
static ct_hash *started(tl *t, uint32_t file)
{
    if (file >= t->started_cap) {
        size_t old = t->started_cap;
        cta_grow(&t->nvtx_started, &t->started_cap, file + 1, sizeof *t->nvtx_started);
        memset(t->nvtx_started + old, 0, (t->started_cap - old) * sizeof *t->nvtx_started);
    }
    return &t->nvtx_started[file];
}

/* Draws open range idx, which never ended, until end, and forgets it. */
static void draw_open(tl *t, cta_proc *p, uint32_t idx, uint64_t end)
{
    tl_open *o = cta_pool_at(&t->nvtx_open, idx);
    const ct_rec_nvtx_begin *b = &o->r.u.nvtx_begin;
    ct_rec r = {.type = CT_REC_NVTX_RANGE, .tid = o->r.tid, .file = p->file,
                .ts = end > o->r.ts ? end : o->r.ts};
    r.u.nvtx_range = (ct_rec_nvtx_range){.start = o->r.ts, .start_tid = b->tid, .end_tid = b->tid,
                                         .domain = b->domain, .name = b->name, .group = b->group,
                                         .kind = b->kind, .id = b->id, .depth = b->depth,
                                         .flags = TL_NVTX_OPEN};
    nvtx_range(t, p, &r);
    o->live = 0;
    cta_pool_put(&t->nvtx_open, idx);
}

/* NVTX_BEGIN: the range is open until its NVTX_RANGE (FORMAT.md 4.8). */
static void nvtx_begin(tl *t, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_begin *b = &r->u.nvtx_begin;
    uint32_t idx = cta_pool_alloc(&t->nvtx_open);
    *(tl_open *)cta_pool_at(&t->nvtx_open, idx) = (tl_open){*r, 1};
    if (b->kind == CT_NVTX_START_END) {
        uint32_t old;
        if (ct_hash_del(started(t, p->file), b->id, &old)) /* an id given twice */
            draw_open(t, p, old, r->ts);
        cta_xhash_put(started(t, p->file), b->id, idx, "the NVTX ranges open");
        return;
    }
    uint32_t *slot = pushed_slot(t, p->file, b->tid, b->domain, b->depth, 1);
    if (*slot) /* the one open at this level lost its pop: it ended by now */
        draw_open(t, p, *slot - 1, r->ts);
    *slot = idx + 1;
}

static void nvtx_ended(tl *t, const cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_range *n = &r->u.nvtx_range;
    uint32_t v, *slot;
    if (n->flags & CT_NVTX_UNMATCHED)
        return;
    if (n->kind == CT_NVTX_START_END) {
        if (ct_hash_del(started(t, p->file), n->id, &v))
            ((tl_open *)cta_pool_at(&t->nvtx_open, v))->live = 0, cta_pool_put(&t->nvtx_open, v);
    } else if ((slot = pushed_slot(t, p->file, n->start_tid, n->domain, n->depth, 0)) && *slot) {
        ((tl_open *)cta_pool_at(&t->nvtx_open, *slot - 1))->live = 0;
        cta_pool_put(&t->nvtx_open, *slot - 1);
        *slot = 0;
    }
}

/* The ranges of p that never ended, until its last record. */
static void nvtx_never_ended(tl *t, cta_proc *p)
{
    for (uint32_t i = 0; i < t->nvtx_open.n; i++) {
        tl_open *o = cta_pool_at(&t->nvtx_open, i);
        if (o->live && o->r.file == p->file)
            draw_open(t, p, i, p->t_last);
    }
}

static void nvtx_mark(tl *t, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_mark *n = &r->u.nvtx_mark;
    if (n->flags & CT_NVTX_CATEGORY_NAME) {
        uint32_t key[3] = {p->file, n->domain, n->category};
        int added;
        uint32_t i = cta_map_get(&t->categories, key, sizeof key, &added);
        cta_grow(&t->category_name, &t->category_cap, i + 1, sizeof *t->category_name);
        t->category_name[i] = n->name;
        return;
    }
    /* an OS thread's NVTX name is not an event; the tracer names threads itself */
    if ((n->flags & CT_NVTX_THREAD_NAME) || !in_window(t, r->ts, r->ts) || !room(t, r->ts, 1))
        return;
    uint32_t idx;
    uint64_t track = nvtx_track(t, p, r->tid, n->domain, 0, 0, &idx);
    char tmp[CT_STRTMP];
    const char *name = nvtx_name(t, p, n->name, n->group, "(unnamed mark)", tmp);
    ev_open(t, "i", p, track, r->ts);
    cta_put_str(t->f, ",\"s\":\"t\",\"cat\":\"nvtx\"");
    str_field(t, "name", name);
    nvtx_args(t, p, n->domain, n->category, n->payload_kind, n->payload, n->flags, n->color, name, n->group);
    cta_put_str(t->f, "}}");
}

static void on_nvtx(void *ctx, cta_proc *p, const ct_rec *r)
{
    tl *t = ctx;
    if (!keep_proc(t, p))
        return;
    if (r->type == CT_REC_NVTX_BEGIN) {
        nvtx_begin(t, p, r);
    } else if (r->type == CT_REC_NVTX_RANGE) {
        nvtx_ended(t, p, r);
        nvtx_range(t, p, r);
    } else {
        nvtx_mark(t, p, r);
    }
}

/* Where a windowed trace's recording started and stopped: a line across the process. */
static void on_capture(void *ctx, cta_proc *p, const ct_rec *r)
{
    tl *t = ctx;
    static const char *const why[] = {
        [CT_CAPTURE_PROFILER] = "cudaProfilerStart/Stop", [CT_CAPTURE_NVTX] = "the NVTX capture range",
        [CT_CAPTURE_DELAY] = "--delay elapsed", [CT_CAPTURE_DURATION] = "--duration elapsed",
        [CT_CAPTURE_END] = "the trace ended", [CT_CAPTURE_BEGIN] = "the trace began"};
    const ct_rec_capture *c = &r->u.capture;
    if (!keep_proc(t, p) || !in_window(t, r->ts, r->ts) || !room(t, r->ts, 1))
        return;
    char name[96];
    snprintf(name, sizeof name, "recording %s: %s", c->op == CT_CAPTURE_START ? "starts" : "stops",
             c->why < sizeof why / sizeof *why && why[c->why] ? why[c->why] : "?");
    ev_open(t, "i", p, 0, r->ts);
    cta_put_str(t->f, ",\"s\":\"p\",\"cat\":\"capture\"");
    str_field(t, "name", name);
    putc_unlocked('}', t->f);
}

static const char usage[] =
    "usage: cutrace timeline [OPTIONS] PATH... -o FILE.json\n"
    "\n"
    "Writes a Chrome Trace Event / Perfetto timeline (open it in https://ui.perfetto.dev) of the\n"
    "traces in PATH (trace files or directories; PyTorch profiler traces too): host threads\n"
    "with their CUDA calls, one track per GPU stream, arrows from calls to their GPU work, NVTX\n"
    "ranges and marks on tracks per thread and domain, memory and bandwidth counters; every\n"
    "process and rank on one time axis.\n"
    "\n"
    "  -o, --output FILE  where to write the JSON (required; - for stdout)\n"
    "  --from MS          only events ending after MS milliseconds from the trace start\n"
    "  --to MS            only events starting before MS milliseconds from the trace start\n"
    "  --pid PID          only this process\n"
    "  --driver-calls     also the driver calls made inside runtime calls\n"
    "  --max-events N     stop after N events, with a warning saying where (default 2000000,\n"
    "                     about what ui.perfetto.dev opens comfortably; 0: no limit)\n"
    "\n"
    "Exit status: 0 done, 2 usage error, 3 unreadable input.\n";

int cta_cmd_timeline(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"from", required_argument, NULL, 'f'},
                                         {"to", required_argument, NULL, 't'},
                                         {"pid", required_argument, NULL, 'p'},
                                         {"max-events", required_argument, NULL, 'm'},
                                         {"driver-calls", no_argument, NULL, 'd'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    double from = 0, to = 0;
    long pid = -1;
    unsigned long long max_events = CTA_TL_MAX_EVENTS;
    int c, driver_calls = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'f':
        case 't': {
            double v = strtod(optarg, &end);
            if (end == optarg || *end || v < 0)
                return cta_cli_usage_error("timeline", "--%s expects milliseconds >= 0, got '%s'",
                                          c == 'f' ? "from" : "to", optarg);
            if (c == 'f')
                from = v;
            else
                to = v;
            break;
        }
        case 'p':
            pid = strtol(optarg, &end, 10);
            if (end == optarg || *end || pid < 0)
                return cta_cli_usage_error("timeline", "--pid expects a process id, got '%s'", optarg);
            break;
        case 'd':
            driver_calls = 1;
            break;
        case 'm':
            max_events = strtoull(optarg, &end, 10);
            if (end == optarg || *end || *optarg == '-')
                return cta_cli_usage_error("timeline", "--max-events expects a count, got '%s'", optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return CTA_EXIT_OK;
        default:
            return cta_cli_usage_error("timeline", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!out)
        return cta_cli_usage_error("timeline", "expected -o FILE.json");
    if (optind >= argc)
        return cta_cli_usage_error("timeline", "expected at least one trace file or directory");
    if (to && to < from)
        return cta_cli_usage_error("timeline", "--to (%g) is before --from (%g)", to, from);
    /* the inputs first: nothing is created when they cannot be read */
    ct_reader *rd;
    int rc = cta_load_open("timeline", argv + optind, argc - optind, 0, &rd);
    if (rc != CTA_EXIT_OK)
        return rc;
    tl t = {.first = 1, .pid = pid, .max_events = max_events, .driver_calls = driver_calls};
    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "cutrace timeline: error: %s: cannot create the output file: %m\n", out);
        ct_reader_close(rd);
        return CTA_EXIT_FAIL;
    }
    cta_map_init(&t.streams);
    cta_map_init(&t.stacks);
    cta_map_init(&t.nvtx_tracks);
    cta_map_init(&t.categories);
    cta_map_init(&t.nvtx_pushed);
    cta_pool_init(&t.nvtx_open, sizeof(tl_open));
    t.f = f;
    cta_observer obs = {.ctx = &t, .on_api = on_api, .on_gpu = on_gpu, .on_untimed = on_untimed, .on_mem = on_mem,
                       .on_proc = on_proc, .on_thread = on_thread, .on_stream = on_stream,
                       .on_nvtx = on_nvtx, .on_capture = on_capture, .on_record = on_record};
    /* the axis starts at the earliest file start; the window is relative to it */
    t.base = cta_load_start(rd);
    t.from = t.base + (uint64_t)(from * 1e6);
    t.to = to ? t.base + (uint64_t)(to * 1e6) : 0;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
    cta_model m;
    t.m = &m;
    rc = cta_load_run("timeline", rd, &obs, 0, &m);
    uint64_t t_end = 0;
    if (rc == CTA_EXIT_OK) {
        for (size_t i = 0; i < m.nprocs; i++) {
            if (keep_proc(&t, &m.procs[i]))
                nvtx_never_ended(&t, &m.procs[i]);
            ended(&t, &m, &m.procs[i]);
        }
        fputs("\n]}\n", f);
        for (size_t i = 0; i < m.nprocs; i++)
            if (m.procs[i].t_last > t_end)
                t_end = m.procs[i].t_last;
        cta_model_free(&m);
    }
    ct_reader_close(rd);
    int werr = ferror(f);
    if (f != stdout && fclose(f) != 0)
        werr = 1;
    if (rc == CTA_EXIT_OK && werr) {
        fprintf(stderr, "cutrace timeline: error: %s: write failed\n", out);
        rc = CTA_EXIT_FAIL;
    } else if (rc == CTA_EXIT_OK && f != stdout) {
        fprintf(stderr, "cutrace timeline: wrote %llu events to %s (open it in https://ui.perfetto.dev)\n",
                (unsigned long long)t.events, out);
    }
    if (rc == CTA_EXIT_OK && t.stopped_at) {
        uint64_t at = t.stopped_at > t.base ? t.stopped_at - t.base : 0;
        uint64_t all = t_end > t.base ? t_end - t.base : 0;
        fprintf(stderr,
                "cutrace timeline: warning: stopped at %llu events (--max-events), at %.3f ms of "
                "%.3f ms: the events after that are not in %s; choose a window with --from/--to, "
                "or --max-events 0 for all (viewers struggle beyond a few million events)\n",
                (unsigned long long)t.max_events, (double)at / 1e6, (double)all / 1e6, out);
    }
    if (rc == CTA_EXIT_OK && t.nvtx_crowded)
        fprintf(stderr,
                "cutrace timeline: warning: %llu NVTX start/end ranges are not in %s: each "
                "overlapped %d others started in its thread and domain (a row each; complete "
                "events must nest)\n",
                (unsigned long long)t.nvtx_crowded, out, NVTX_ROWS);
    cta_map_free(&t.streams);
    for (size_t i = 0; i < cta_map_count(&t.stacks); i++)
        free(t.stack_text[i]);
    free(t.stack_text);
    cta_map_free(&t.stacks);
    cta_map_free(&t.nvtx_tracks);
    free(t.nvtx_end);
    cta_map_free(&t.categories);
    free(t.category_name);
    cta_map_free(&t.nvtx_pushed);
    free(t.pushed_slot);
    for (size_t i = 0; i < t.started_cap; i++)
        ct_hash_free(&t.nvtx_started[i]);
    free(t.nvtx_started);
    cta_pool_free(&t.nvtx_open);
    return rc;
}
