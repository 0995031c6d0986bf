#include "cta_kineto_conv.h"
#include "cta_diag.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_graph.h"
#include "cta_starve_cause.h"
#include "cta_out.h"
#include "cta_names.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Of [lo, hi), the time inside p's capture windows (all of it when the trace is not windowed);
 * *w: the first window that may still overlap (calls come in increasing lo). */
static uint64_t recorded(const cta_proc *p, uint64_t lo, uint64_t hi, uint64_t *w)
{
    if (!p->captured)
        return hi - lo;
    uint64_t in = 0;
    for (; *w < p->capture_windows && p->capture_win[*w][1] <= lo; (*w)++)
        ;
    for (uint64_t i = *w; i < p->capture_windows && p->capture_win[i][0] < hi; i++) {
        uint64_t a = p->capture_win[i][0] > lo ? p->capture_win[i][0] : lo;
        uint64_t b = p->capture_win[i][1] < hi ? p->capture_win[i][1] : hi;
        in += b > a ? b - a : 0;
    }
    return in;
}

void cta_util_windows(const cta_proc *p, const cta_dev *d, uint64_t want, cta_utilwin *u)
{
    memset(u, 0, sizeof *u);
    const cta_series *s = &d->util;
    uint64_t win = cta_dev_window(d);
    if (!d->windowed || !s->started || win == 0)
        return;
    if (want == 0) {
        /* several iterations per window, so a loop's own rhythm does not look like a phase */
        want = win / 100 > 10000000 ? win / 100 : 10000000;
        if (d->long_gaps && 4 * (win / d->long_gaps) > want)
            want = 4 * (win / d->long_gaps);
    }
    uint64_t k = (want + s->width - 1) / s->width;
    if (k == 0)
        k = 1;
    u->width = k * s->width;
    uint64_t first = d->first_gpu > s->t0 ? (d->first_gpu - s->t0) / s->width : 0;
    u->t0 = s->t0 + first * s->width;
    uint64_t last = (d->last_gpu - s->t0) / s->width, w = 0;
    if (last >= s->n)
        last = s->n ? s->n - 1 : 0;
    for (uint64_t b = first; b <= last && u->n < CTA_SERIES_BINS; b += k) {
        /* the window's span clipped to [first_gpu, last_gpu] */
        uint64_t lo = s->t0 + b * s->width, hi = lo + u->width;
        if (lo < d->first_gpu)
            lo = d->first_gpu;
        if (hi > d->last_gpu)
            hi = d->last_gpu;
        uint64_t busy = 0;
        for (uint64_t j = b; j < b + k && j <= last; j++)
            busy += cta_series_ch(s, CTA_CH_BUSY)[j];
        uint64_t rec = hi > lo ? recorded(p, lo, hi, &w) : 1;
        double x = rec ? (double)busy / (double)rec : -1; /* -1: nothing recorded in it */
        u->recorded[u->n] = p->captured ? rec : u->width;
        u->util[u->n++] = x > 1 ? 1 : x;
    }
    double *tmp = cta_xmalloc(u->n * sizeof *tmp + 1, "the utilization windows");
    uint32_t nrec = 0;
    for (uint32_t i = 0; i < u->n; i++)
        if (u->util[i] >= 0)
            tmp[nrec++] = u->util[i];
    qsort(tmp, nrec, sizeof *tmp, cmp_double);
    u->median = nrec ? tmp[nrec / 2] : 0;
    free(tmp);
}

/* Window i was recorded and ran below half its typical utilization. */
static int low_util(const cta_utilwin *u, uint32_t i)
{
    return u->util[i] >= 0 && u->util[i] < 0.5 && u->util[i] < 0.5 * u->median;
}

/* ---- building diagnoses ------------------------------------------------------------------- */

typedef struct {
    const cta_model *m;
    const cta_diag_opts *o;
    cta_diag *v;
    size_t n, cap;
} diags;

static cta_diag *add(diags *ds, const char *id, const cta_proc *p, int dev, uint64_t saving,
                    uint64_t window, const char *fix)
{
    int exempt = !strcmp(id, "oom");
    if (!exempt && (window == 0 || saving == 0 ||
                    (double)saving < ds->o->min_saving_pct / 100.0 * (double)window))
        return NULL;
    cta_grow(&ds->v, &ds->cap, ds->n + 1, sizeof *ds->v);
    cta_diag *d = &ds->v[ds->n++];
    memset(d, 0, sizeof *d);
    d->id = id;
    d->proc = p;
    d->dev = dev;
    d->saving_ns = saving;
    d->window_ns = window;
    snprintf(d->fix, sizeof d->fix, "%s", fix);
    double share = window ? (double)saving / (double)window : 1;
    d->severity = exempt ? "error" : share >= 0.25 ? "high" : share >= 0.05 ? "medium" : "low";
    return d;
}

static void ev(cta_diag *d, const char *key, double v, cta_ev_unit u)
{
    if (d->nev < CTA_DIAG_MAX_EV)
        d->ev[d->nev++] = (cta_evidence){key, v, u};
}

static void msg(cta_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(cta_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    va_end(ap);
}

/* x happened in [start, start + len) on device dev (-1 none). */
static void at(cta_diag *x, int dev, uint64_t start, uint64_t len)
{
    x->at = (cta_diag_at){1, dev, start, start + len};
}

/* x happened at the longest event of site kind `kind` (on the device it names, else dev). */
static void at_call(cta_diag *x, const cta_proc *p, int kind, int dev)
{
    const cta_site_longest *l = &p->site_longest[kind];
    if (l->set)
        at(x, l->dev >= 0 ? l->dev : dev, l->start, l->len);
}

/* x happened at device d's longest gap of cause cls (cta_dev.top keeps the longest gaps, longest
 * first), preferring one whose length class (cta_sketch_bucket) is in band[0..1] (band NULL: any);
 * when none of them has that cause, at the longest event of site kind `kind` (-1: none). */
static void at_gap(cta_diag *x, const cta_proc *p, int d, int cls, const unsigned *band, int kind)
{
    const cta_dev *dv = &p->dev[d];
    const cta_gap *g = NULL;
    for (int i = dv->ntop - 1; i >= 0; i--) {
        unsigned b = cta_sketch_bucket(dv->top[i].len);
        if (dv->top[i].cls == cls && (!g || !band || (b >= band[0] && b <= band[1])))
            g = &dv->top[i];
    }
    if (g)
        at(x, d, g->start, g->len);
    else if (kind >= 0)
        at_call(x, p, kind, d);
}

static void detail(cta_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void detail(cta_diag *d, const char *fmt, ...)
{
    size_t o = strlen(d->detail);
    if (o + 1 >= sizeof d->detail)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->detail + o, sizeof d->detail - o, fmt, ap);
    va_end(ap);
}

/* The process's window: the longest of its devices' (first to last GPU activity). */
static uint64_t proc_window(const cta_proc *p)
{
    uint64_t w = 0;
    for (int d = 0; d < CTA_MAX_DEV; d++)
        if (cta_dev_window(&p->dev[d]) > w)
            w = cta_dev_window(&p->dev[d]);
    return w;
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0; }

/* Fills the next site of d (the calls of stacks, first stacks.ids[0]) and its one-line text: a
 * stack with a Python frame in user code is shown by that frame. */
static void site_out(const cta_model *m, const cta_proc *p, cta_diag *d, const char *call,
                     const cta_stackset *stacks, uint64_t count, uint64_t bytes, uint64_t ns,
                     const char *unit)
{
    if (d->nsites >= CTA_DIAG_MAX_SITES)
        return;
    cta_diag_site *s = &d->sites[d->nsites++];
    char stack[400];
    cta_model_site(m, p, stacks->n ? stacks->ids[0] : 0, NULL, 0, stack, sizeof stack, 4);
    s->python = stacks->n && cta_model_py_site(m, p, stacks->ids[0], stack, sizeof stack);
    s->stacks = *stacks;
    cta_text_safe(s->call, sizeof s->call, call, 80);
    cta_text_safe(s->stack, sizeof s->stack, stack, 300);
    s->count = count;
    s->bytes = bytes;
    s->ns = ns;
    char b1[32], b2[32], nums[96];
    int o = snprintf(nums, sizeof nums, "%llu %s%s", (unsigned long long)count, unit,
                     count == 1 ? "" : "s");
    if (bytes)
        o += snprintf(nums + o, sizeof nums - (size_t)o, ", %s", cta_fmt_bytes(b1, (double)bytes));
    if (ns)
        snprintf(nums + o, sizeof nums - (size_t)o, ", %s", cta_fmt_ns(b2, (double)ns));
    char text[sizeof s->text];
    const char *c = s->call, *st = s->stack;
    snprintf(text, sizeof text, "%s%s%s: %s", c, *c && *st ? " at " : "",
             *st ? st : *c ? "" : "(no call stack)", nums);
    memcpy(s->text, text, sizeof text);
}

/* Top call sites of one kind, by time: the function called and the user's frames that called
 * it (the API name alone where no stack was captured). */
static void sites(const cta_model *m, const cta_proc *p, int kind, cta_diag *d)
{
    int idx[CTA_DIAG_MAX_SITES], n = 0;
    for (uint32_t i = 0; i < cta_map_count(&p->sites); i++) {
        uint32_t key[3];
        memcpy(key, cta_map_key(&p->sites, i), sizeof key);
        if ((int)key[0] != kind)
            continue;
        int j = n < CTA_DIAG_MAX_SITES ? n++ : CTA_DIAG_MAX_SITES;
        if (j == CTA_DIAG_MAX_SITES) {
            if (p->site[i].ns <= p->site[idx[j - 1]].ns)
                continue;
            j--;
        }
        while (j > 0 && p->site[idx[j - 1]].ns < p->site[i].ns) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = (int)i;
    }
    for (int k = 0; k < n; k++) {
        uint32_t key[3];
        memcpy(key, cta_map_key(&p->sites, (uint32_t)idx[k]), sizeof key);
        const cta_site *s = &p->site[idx[k]];
        char call[96], st[400], what[160];
        static const char *const sync_kinds[] = {"other", "device", "context", "stream", "event",
                                                 "stream-wait-event", "implicit (sync copy)", "?"};
        /* the site's own first stack: the site's key may be another kind's stack on that line */
        cta_model_site(m, p, s->stacks.n ? s->stacks.ids[0] : 0, call, sizeof call, st, sizeof st, 4);
        if (kind == CTA_SITE_SYNC) {
            snprintf(what, sizeof what, "%s%s%s synchronization%s", call, *call ? " (" : "",
                     sync_kinds[key[1] < 7 ? key[1] : 7], *call ? ")" : "");
        } else {
            snprintf(what, sizeof what, "%s",
                     *call ? call
                     : key[1] < cta_map_count(&m->api_names) ? cta_map_key(&m->api_names, key[1])
                                                            : "(unknown call)");
        }
        site_out(m, p, d, what, &s->stacks, s->count, s->bytes, s->ns, "call");
    }
}

static void holders_detail(const cta_model *m, const cta_proc *p, cta_diag *d, const cta_holder *h,
                           int n)
{
    for (int i = 0; i < n; i++) {
        char call[96], st[400];
        cta_model_site(m, p, h[i].stack, call, sizeof call, st, sizeof st, 4);
        site_out(m, p, d, call, &h[i].stacks, h[i].count, h[i].bytes, 0, "allocation");
    }
}

/* Each fix in the program's own terms: PyTorch's where the process had PyTorch's CUDA library
 * loaded (cta_proc.torch, from the trace header), CUDA's otherwise. */
typedef struct {
    const char *cuda, *torch;
} cta_fix;

/* torch NULL: the same words for both */
static const char *fix(const cta_proc *p, cta_fix f) { return p->torch && f.torch ? f.torch : f.cuda; }

static const cta_fix FIX_STARVE = {
    "overlap loading with GPU work: loader threads filling pinned buffers (cudaHostAlloc) and "
    "cudaMemcpyAsync on a copy stream one batch ahead, ordered by events; move preprocessing "
    "off the main thread or to the GPU; use faster storage or cache the dataset",
    "overlap loading with GPU work: DataLoader(num_workers=N>0, pin_memory=True, "
    "prefetch_factor=2+, persistent_workers=True); move preprocessing off the main thread (to "
    "the workers or the GPU); use faster storage or cache the dataset"};
static const cta_fix FIX_PAGEABLE = {
    "pin host buffers: allocate them with cudaHostAlloc / cudaMallocHost, or cudaHostRegister "
    "existing memory",
    "pin host buffers: DataLoader(pin_memory=True) and tensor.pin_memory() / .to(device, "
    "non_blocking=True)"};
static const cta_fix FIX_ASYNC_PAGEABLE = {
    "an Async copy from pageable memory is staged synchronously: pin the host buffer "
    "(cudaHostAlloc / cudaMallocHost, or cudaHostRegister) so the copy overlaps and the host is "
    "not blocked",
    "a non_blocking copy from pageable memory is staged synchronously: pin the host tensor "
    "(tensor.pin_memory(), DataLoader(pin_memory=True)) so the copy overlaps and the host is not "
    "blocked"};
static const cta_fix FIX_SYNC_COPY = {
    "avoid blocking copies inside the loop: keep values on the GPU and read them every N steps; "
    "use cudaMemcpyAsync into pinned memory and an event (cudaEventRecord, cudaEventSynchronize "
    "later) to read results when they are needed",
    "avoid blocking copies inside the loop: keep values on the GPU (accumulate the loss in a "
    "GPU tensor and call loss.item() every N steps); copy with .to('cpu', non_blocking=True) "
    "into pinned memory and wait on a torch.cuda.Event only when the value is needed"};
static const cta_fix FIX_SYNC = {
    "remove synchronizations that are not needed (cudaDeviceSynchronize / cudaStreamSynchronize "
    "inside the loop); wait on events for the data you need (cudaEventRecord + "
    "cudaStreamWaitEvent, or cudaEventSynchronize on the host)",
    "remove synchronizations that are not needed (torch.cuda.synchronize(), .item(), .cpu(), "
    "printing tensors); order streams with torch.cuda.Event and stream.wait_event instead"};
static const cta_fix FIX_CHURN = {
    "reuse device memory: allocate buffers once before the loop, or use cudaMallocAsync with a "
    "memory pool (cudaMemPoolSetAttribute release threshold); cudaFree synchronizes the device",
    "reuse device memory: keep PyTorch's caching allocator caching (avoid "
    "torch.cuda.empty_cache() in the loop), preallocate tensors reused each step; cudaFree "
    "synchronizes the device"};
static const cta_fix FIX_LAUNCH = {
    "cut launch overhead: capture the step in a CUDA graph (cudaStreamBeginCapture + "
    "cudaGraphLaunch), fuse small kernels, or give each kernel more work (larger batches)",
    "cut launch overhead: CUDA graphs (torch.cuda.graphs / torch.cuda.make_graphed_callables), "
    "torch.compile(mode=\"reduce-overhead\"), fused kernels, or larger batches"};
static const cta_fix FIX_LAUNCH_GRAPHED = {
    "cut launch overhead: the launches are CUDA graph launches already: capture more of the step "
    "into each graph (fewer, larger graphs), fuse small kernels, or give each kernel more work",
    "cut launch overhead: the launches are CUDA graph replays already: graph more of the step "
    "per replay (torch.cuda.graphs around the whole step), fused kernels, or larger batches"};
static const cta_fix FIX_REINSTANTIATE = {
    "instantiate each graph once, before the loop, and launch its exec again (cudaGraphLaunch); "
    "when its parameters change, update the exec in place (cudaGraphExecUpdate, "
    "cudaGraphExecKernelNodeSetParams) instead of capturing and instantiating it again",
    "capture the step once (torch.cuda.CUDAGraph / torch.cuda.graphs) and replay it, copying new "
    "inputs into its static input tensors instead of capturing again; with torch.compile, avoid "
    "recompiling (fixed shapes, or torch._dynamo.mark_dynamic)"};
static const cta_fix FIX_GAPS = {
    "find what the host does in these gaps (the timeline shows the calls around them) and move "
    "it off the critical path or overlap it with queued GPU work", NULL};
static const cta_fix FIX_LOWUTIL = {
    "look at what runs in these phases (evaluation, checkpointing, logging, data reloading): "
    "run them asynchronously, less often, or on other workers", NULL};
static const cta_fix FIX_OOM = {
    "reduce peak memory: smaller batches, free buffers no longer needed before allocating, "
    "reuse buffers; the holders below are the allocations live at the failure",
    "reduce peak memory: smaller batch, activation checkpointing, mixed precision, free "
    "references to tensors no longer needed; for fragmentation set "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. The caching allocator shows reserved "
    "segments, not individual tensors"};

/* The fix of x names the Python lines of its sites (in their order, most time first): "WHO at
 * FILE:LINE in FUNCTION DOES (N calls); ...: FIX", WHO the PyTorch method the site's native frames
 * show (cta_model_torch_op: only when PyTorch is loaded, never guessed), else `what`. When one is
 * a pageable copy made by .cuda() or .to(), FIX is the first such method's own non_blocking
 * advice (pinning, which it starts with, is the advice for the others too). */
static void fix_at_line(const cta_model *m, const cta_proc *p, cta_diag *x, const char *what,
                        const char *does, const char *advice, int pageable)
{
    static const char *const who[] = {NULL, "`.item()`", "`x.cuda()`", "`x.to()`",
                                      "a tensor copy (`.to()`, `.cuda()` or `.copy_()`)"};
    char lines[1024], own[160]; /* lines: the fix's advice (< 600) fits after them */
    size_t o = 0;
    for (int i = 0; i < x->nsites; i++) {
        const cta_diag_site *s = &x->sites[i];
        if (!s->python)
            continue;
        int op = cta_model_torch_op(m, p, &s->stacks);
        if (advice != own && pageable && (op == CTA_TORCH_CUDA || op == CTA_TORCH_TO)) {
            snprintf(own, sizeof own,
                     "pin the host tensor (DataLoader(pin_memory=True), or tensor.pin_memory()) "
                     "and copy with `%s`",
                     op == CTA_TORCH_CUDA ? ".cuda(non_blocking=True)" : ".to(device, non_blocking=True)");
            advice = own;
        }
        int w = snprintf(lines + o, sizeof lines - o, "%s%s at %s %s (%llu call%s)", o ? "; " : "",
                         op ? who[op] : what, s->stack, does, (unsigned long long)s->count,
                         s->count == 1 ? "" : "s");
        if (w < 0 || o + (size_t)w >= sizeof lines)
            break; /* the lines named so far, whole */
        o += (size_t)w;
    }
    if (o)
        snprintf(x->fix, sizeof x->fix, "%.*s: %s", (int)o, lines, advice);
}

/* The names of c's causes, comma-separated, into buf. */
static void cause_names(const cta_starve_cause *c, char *buf, size_t n)
{
    buf[0] = 0;
    for (int k = 0; k < CTA_CAUSE_N; k++)
        if (c->causes & (1 << k))
            snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? ", " : "", cta_cause_names[k]);
}

/* Of the data-loading gaps (cta_dev.starve_bins), those of the band [b, b + width) of length
 * classes, a factor CTA_DIAG_STARVE_BAND in length, with the most time among the bands holding
 * at least 3 gaps (else among all): their count, time, host activity and median (from the
 * lengths' sketch: exact up to CTA_SKETCH_EXACT gaps, else within 1/32). */
static void starve_band(const cta_dev *dv, uint64_t *sc, uint64_t *sn, cta_hostsplit *sh,
                        uint64_t *typical, unsigned band[2])
{
    const cta_starve_bin *bins = dv->starve_bins;
    if (!bins)
        return;
    const unsigned width = (unsigned)__builtin_ctz(CTA_DIAG_STARVE_BAND) * CTA_SKETCH_SUB;
    uint64_t n = 0, ns = 0, best_ns = 0;
    unsigned best = 0;
    int best_recurs = 0;
    for (unsigned b = 0; b < CTA_SKETCH_BUCKETS; b++) {
        n += bins[b].n;
        ns += bins[b].ns;
        if (b >= width) {
            n -= bins[b - width].n;
            ns -= bins[b - width].ns;
        }
        int recurs = n >= 3;
        if (ns && (recurs > best_recurs || (recurs == best_recurs && ns > best_ns))) {
            best = b;
            best_ns = ns;
            best_recurs = recurs;
        }
    }
    unsigned first = best + 1 >= width ? best + 1 - width : 0;
    for (unsigned b = first; b <= best; b++) {
        *sc += bins[b].n;
        *sn += bins[b].ns;
        cta_hostsplit_add(sh, &bins[b].host);
    }
    *typical = cta_sketch_quantile_in(&dv->starve_len, 0.5, first, best);
    band[0] = first;
    band[1] = best;
}

static void dev_diagnoses(diags *ds, const cta_proc *p, int d)
{
    const cta_model *m = ds->m;
    const cta_dev *dv = &p->dev[d];
    uint64_t win = cta_dev_window(dv);
    /* with operations untimed the idle gaps include their GPU time: nothing can be drawn */
    if (!win || cta_dev_untimed(dv))
        return;
    char b1[32], b2[32], b3[32];
    cta_diag *x;

    /* dataloader-starvation: gaps that end with a batch copy and recur, each step: the typical
     * gap carries the time (a few long outliers, such as a descheduled host, do not). The
     * loop's gaps are those of the band of lengths (a factor CTA_DIAG_STARVE_BAND wide) holding
     * the most gap time among the bands with at least 3 gaps (starve_band); the others are
     * not a step's loading (the program's start up to its first batch, a stalled host, the
     * short pauses between a step's copies): they are set aside, their time and host
     * activity with them, so that they neither hide a starved loop nor count in its figures;
     * they must be fewer than the loop's.
     * The fix
     * is priced as recommended: N loader workers preparing batches ahead while the GPU runs
     * the step make a step last max(GPU step, loader / N) instead of loader + GPU step, so
     * each gap shrinks by loader - max(0, loader / N - GPU step); N is the fewest workers that
     * hide the typical gap, at most CTA_DIAG_MAX_WORKERS */
    uint64_t typical = 0, sn = 0, sc = 0;
    cta_hostsplit sh = {0};
    unsigned band[2] = {0, CTA_SKETCH_BUCKETS};
    starve_band(dv, &sc, &sn, &sh, &typical, band);
    uint64_t set_aside = dv->gap_count[CTA_GAP_STARVE] - sc;
    uint64_t set_aside_ns = dv->gap_ns[CTA_GAP_STARVE] - sn;
    /* the GPU's work per step, at most its busy time: its kernels, and its copies and sets of
     * each direction, at the average of those whose intervals are the work alone
     * (cta_work_estimate), not at recorded durations that hold host time or are only bounds
     * (a synchronous copy in a slow first call is recorded as long as the call: PyTorch's
     * first batch copy, 171 ms for a copy of microseconds, made the step 22 ms instead of
     * 0.1 ms; a first launch loading its module is recorded with the loading) */
    double est = cta_work_estimate(&dv->work_kernels);
    for (int op = 0; op < CTA_OP_N; op++)
        est += cta_work_estimate(&dv->work_copies[op]);
    uint64_t work = est < (double)dv->busy ? (uint64_t)est : dv->busy;
    double step = (double)work / (double)(sc + 1), load = (double)typical;
    double need = step > 0 ? ceil(load / step) : CTA_DIAG_MAX_WORKERS;
    int workers = need > CTA_DIAG_MAX_WORKERS ? CTA_DIAG_MAX_WORKERS : need < 1 ? 1 : (int)need;
    double left = load / workers - step; /* of each gap, still on the critical path */
    double hidden = (double)sc * (load - (left > 0 ? left : 0));
    uint64_t ssave = hidden < (double)sn ? (uint64_t)hidden : sn;
    /* why, from the host samples: when they tell, the finding is priced by the fixes of the
     * causes they show (within the loop's gaps), not by workers they may rule out */
    cta_starve_cause cause;
    cta_starve_cause_of(p, d, CTA_GAP_STARVE, CTA_CAUSE_LOADING, sc + set_aside, p->h2d_copies, step,
                        &sh, &cause);
    int told = cause.known && cause.causes;
    if (told)
        ssave = cause.saving_ns < sn ? cause.saving_ns : sn;
    /* the band's gaps recur (3 or more, regular) and are the rule, the others exceptions */
    if (sc >= 3 && 2 * typical * sc >= sn && sc >= set_aside &&
        (x = add(ds, "dataloader-starvation", p, d, ssave, win, fix(p, FIX_STARVE)))) {
        const cta_hostsplit *h = &sh;
        uint64_t outside = h->compute + h->wait + h->unknown;
        const char *what = h->unknown * 2 > outside
                               ? "outside CUDA (no CPU readings tell waiting from computing)"
                           : h->wait >= h->compute
                               ? "waiting (CPU idle: too few loader workers, slow I/O or storage)"
                           : p->torch ? "computing (CPU busy: preprocessing on the main thread, "
                                        "Python overhead)"
                                      : "computing (CPU busy: preprocessing on the main thread)";
        char who[64], b4[32], b5[32], b6[32], faster[160] = "", aside[160] = "";
        snprintf(who, sizeof who, "%d %s%s", workers,
                 p->torch ? "DataLoader worker" : "loader thread", workers == 1 ? "" : "s");
        /* the window is first to last GPU activity, so it is never all gaps and busy > 0 */
        if (ssave < win && dv->busy)
            snprintf(faster, sizeof faster,
                     " (the window %.2fx shorter; with the GPU never idle it would be at most "
                     "%.2fx shorter)",
                     (double)win / (double)(win - ssave), (double)win / (double)dv->busy);
        if (set_aside)
            snprintf(aside, sizeof aside,
                     " (%llu other gap%s before batch copies, %s in all, not counted: the "
                     "program's start, a stalled host, pauses between a step's copies)",
                     (unsigned long long)set_aside, set_aside == 1 ? "" : "s",
                     cta_fmt_ns(b6, (double)set_aside_ns));
        char names[96];
        cause_names(&cause, names, sizeof names);
        /* the remedy: the causes the samples tell, else the workers that would hide the gaps */
        char remedy[400];
        if (told)
            snprintf(remedy, sizeof remedy,
                     "The host samples say why: %s (below); fixing it saves up to %s%s", names,
                     cta_fmt_ns(b5, (double)ssave), faster);
        else
            snprintf(remedy, sizeof remedy,
                     "%s preparing batches one step ahead would leave %s of each gap: saves %s%s%s",
                     who, cta_fmt_ns(b4, left > 0 ? left : 0), cta_fmt_ns(b5, (double)ssave),
                     faster,
                     workers == CTA_DIAG_MAX_WORKERS && left > 0 ? "; more workers would hide more"
                                                                 : "");
        msg(x,
            "GPU %d idle %s (%.1f%% of the window) in %llu gaps before host-to-device batch "
            "copies (typically %s, against %s of GPU work per step)%s; the host was mostly %s. %s",
            d, cta_fmt_ns(b1, (double)sn), pct(sn, win), (unsigned long long)sc,
            cta_fmt_ns(b2, load), cta_fmt_ns(b3, step), aside, what, remedy);
        ev(x, "gaps", (double)sc, CTA_EV_COUNT);
        ev(x, "gap_ns", (double)sn, CTA_EV_NS);
        ev(x, "gap_pct_of_window", pct(sn, win), CTA_EV_PCT);
        ev(x, "avg_gap_ns", (double)sn / (double)sc, CTA_EV_NS);
        ev(x, "median_gap_ns", (double)typical, CTA_EV_NS);
        ev(x, "set_aside_gaps", (double)set_aside, CTA_EV_COUNT);
        ev(x, "set_aside_gap_ns", (double)set_aside_ns, CTA_EV_NS);
        ev(x, "host_wait_ns", (double)h->wait, CTA_EV_NS);
        ev(x, "host_compute_ns", (double)h->compute, CTA_EV_NS);
        ev(x, "host_in_cuda_ns", (double)(h->in_api + h->blocked), CTA_EV_NS);
        ev(x, "h2d_batches", (double)p->h2d_copies, CTA_EV_COUNT);
        ev(x, "gpu_busy_ns", (double)dv->busy, CTA_EV_NS);
        ev(x, "gpu_step_ns", step, CTA_EV_NS);
        ev(x, "loader_workers", workers, CTA_EV_COUNT);
        ev(x, "max_speedup", dv->busy ? (double)win / (double)dv->busy : 0, CTA_EV_RATIO);
        at_gap(x, p, d, CTA_GAP_STARVE, band, -1);
        x->cause = cause;
        cta_starve_cause_text(&cause, CTA_CAUSE_LOADING, p->torch, x->detail, sizeof x->detail);
    }

    /* excessive-sync */
    uint64_t yn = dv->gap_ns[CTA_GAP_SYNC];
    if (p->sync_calls && (x = add(ds, "excessive-sync", p, d, yn, win, fix(p, FIX_SYNC)))) {
        msg(x,
            "%llu synchronizations blocked the host %s; GPU %d then sat idle %s (%.1f%% of the "
            "window) until new work arrived",
            (unsigned long long)p->sync_calls, cta_fmt_ns(b1, (double)p->sync_ns), d,
            cta_fmt_ns(b2, (double)yn), pct(yn, win));
        ev(x, "sync_calls", (double)p->sync_calls, CTA_EV_COUNT);
        ev(x, "device_syncs", (double)p->sync_count_kind[CT_SYNC_DEVICE] + (double)p->sync_count_kind[CT_SYNC_CONTEXT], CTA_EV_COUNT);
        ev(x, "stream_syncs", (double)p->sync_count_kind[CT_SYNC_STREAM], CTA_EV_COUNT);
        ev(x, "event_syncs", (double)p->sync_count_kind[CT_SYNC_EVENT], CTA_EV_COUNT);
        ev(x, "host_blocked_ns", (double)p->sync_ns, CTA_EV_NS);
        ev(x, "idle_after_sync_ns", (double)yn, CTA_EV_NS);
        ev(x, "gaps_after_sync", (double)dv->gap_count[CTA_GAP_SYNC], CTA_EV_COUNT);
        sites(m, p, CTA_SITE_SYNC, x);
        fix_at_line(m, p, x, "the synchronization", "waits for the GPU", fix(p, FIX_SYNC), 0);
        at_gap(x, p, d, CTA_GAP_SYNC, NULL, CTA_SITE_SYNC);
    }

    /* sync-memcpy: without it the host would have run ahead instead of waiting. The fix, the
     * copy queued and read later, saves the gaps after the copies and, in the latency-bound
     * copies' intervals (bounds: they end at the call's return), the host's wake-up: what they
     * hold beyond a small copy timed exactly, else beyond the fastest of them (cta_proc.scp_ns) */
    uint64_t cn = dv->gap_ns[CTA_GAP_SYNCCPY], wake = 0;
    for (int dir = 0; dir < 2; dir++) {
        uint64_t copy = p->scp_min[d][dir];
        if (p->small_exact_n[d][dir] && p->small_exact_min[d][dir] < copy)
            copy = p->small_exact_min[d][dir];
        wake += p->scp_ns[d][dir] - p->scp_n[d][dir] * copy;
    }
    if (p->sync_copy_count &&
        (x = add(ds, "sync-memcpy", p, d, cn + wake, win, fix(p, FIX_SYNC_COPY)))) {
        msg(x,
            "%llu synchronous copies (%s) blocked the host %s (%.1f%% of the window); GPU %d sat "
            "idle %s right after them and %s while the host woke from the small ones (their "
            "time beyond what such a copy takes): queued and read later, they save %s",
            (unsigned long long)p->sync_copy_count, cta_fmt_bytes(b1, (double)p->sync_copy_bytes),
            cta_fmt_ns(b2, (double)p->sync_copy_host_ns), pct(p->sync_copy_host_ns, win), d,
            cta_fmt_ns(b3, (double)cn), cta_fmt_ns((char[32]){0}, (double)wake),
            cta_fmt_ns((char[32]){0}, (double)(cn + wake)));
        ev(x, "idle_in_wakeup_ns", (double)wake, CTA_EV_NS);
        ev(x, "copies", (double)p->sync_copy_count, CTA_EV_COUNT);
        ev(x, "bytes", (double)p->sync_copy_bytes, CTA_EV_BYTES);
        ev(x, "host_blocked_ns", (double)p->sync_copy_host_ns, CTA_EV_NS);
        ev(x, "idle_after_copy_ns", (double)cn, CTA_EV_NS);
        sites(m, p, CTA_SITE_SYNC_COPY, x);
        fix_at_line(m, p, x, "the blocking copy", "waits for the GPU", fix(p, FIX_SYNC_COPY), 0);
        at_gap(x, p, d, CTA_GAP_SYNCCPY, NULL, CTA_SITE_SYNC_COPY);
    }

    /* launch-bound: fewer launches (a graph, fused kernels) save the GPU's wait for each launch
     * (cta_dev.launch_wait_ns): from its earlier work's end to the latest the kernel can have
     * started. On an idle stream the recorded start is the host's time before the call (events
     * cannot tell when in the call the GPU got the kernel), so the wait runs to the call's
     * return; the idle gaps alone would leave the call out, as if the GPU had been busy */
    uint64_t ln = dv->gap_ns[CTA_GAP_LAUNCH], lw = dv->launch_wait_ns;
    /* graphs are the fix only for launches that are not graph launches already: when most
     * of the wait was for graph launches, the fix is larger graphs */
    cta_graph_stats gs = cta_graph_stats_of(p);
    int graphed = 2 * dv->graph_launch_wait_ns > lw;
    if (dv->kernels && 2 * p->short_kernels >= dv->kernels &&
        (x = add(ds, "launch-bound", p, d, lw, win,
                 fix(p, graphed ? FIX_LAUNCH_GRAPHED : FIX_LAUNCH)))) {
        double avg_launch = p->launches ? (double)p->launch_api_ns / (double)p->launches : 0;
        double avg_kernel = (double)dv->kernel_ns / (double)dv->kernels;
        msg(x,
            "%llu of %llu kernels on GPU %d ran shorter than their launch call, as far as their "
            "GPU timings tell (avg kernel %s as recorded, avg launch %s); the GPU waited %s "
            "(%.1f%% of the window) for %llu launches, up to the calls' returns: fewer launches "
            "save that",
            (unsigned long long)p->short_kernels, (unsigned long long)dv->kernels, d,
            cta_fmt_ns(b1, avg_kernel), cta_fmt_ns(b2, avg_launch), cta_fmt_ns(b3, (double)lw),
            pct(lw, win), (unsigned long long)dv->launch_waits);
        ev(x, "waited_for_launch_ns", (double)lw, CTA_EV_NS);
        ev(x, "launches_waited_for", (double)dv->launch_waits, CTA_EV_COUNT);
        ev(x, "kernels", (double)dv->kernels, CTA_EV_COUNT);
        ev(x, "short_kernels", (double)p->short_kernels, CTA_EV_COUNT);
        ev(x, "avg_kernel_ns", avg_kernel, CTA_EV_NS);
        ev(x, "avg_launch_ns", avg_launch, CTA_EV_NS);
        ev(x, "idle_while_launching_ns", (double)ln, CTA_EV_NS);
        ev(x, "launch_gaps", (double)dv->gap_count[CTA_GAP_LAUNCH], CTA_EV_COUNT);
        ev(x, "graph_launches", (double)gs.launches, CTA_EV_COUNT);
        ev(x, "waited_for_graph_launch_ns", (double)dv->graph_launch_wait_ns, CTA_EV_NS);
        if (gs.launches)
            detail(x, "%llu of the process's %llu launches are CUDA graph launches already, "
                      "%s of the wait (%.1f%%)", (unsigned long long)gs.launches,
                   (unsigned long long)p->launches, cta_fmt_ns(b1, (double)dv->graph_launch_wait_ns),
                   pct(dv->graph_launch_wait_ns, lw));
        sites(m, p, CTA_SITE_LAUNCH, x);
        at_gap(x, p, d, CTA_GAP_LAUNCH, NULL, CTA_SITE_LAUNCH);
    }

    /* gpu-gaps: idle gaps no other diagnosis explains */
    uint64_t hn = dv->gap_ns[CTA_GAP_HOST];
    if ((x = add(ds, "gpu-gaps", p, d, hn, win, fix(p, FIX_GAPS)))) {
        /* why, from the host samples: the main process's work between its launches */
        cta_starve_cause_of(p, d, CTA_GAP_HOST, CTA_CAUSE_HOST_WORK, dv->gap_count[CTA_GAP_HOST], 0,
                            0, &dv->gap_host[CTA_GAP_HOST], &x->cause);
        char why[160] = "", names[96];
        cause_names(&x->cause, names, sizeof names);
        if (x->cause.known && x->cause.causes)
            snprintf(why, sizeof why, "; the host samples say why: %s (below)", names);
        msg(x, "GPU %d idle %s (%.1f%% of the window) in %llu gaps that no other diagnosis "
               "explains (not data loading, not after a synchronization, not launch overhead)%s; the "
               "longest gaps of any cause are below",
            d, cta_fmt_ns(b1, (double)hn), pct(hn, win), (unsigned long long)dv->gap_count[CTA_GAP_HOST],
            why);
        ev(x, "gaps", (double)dv->gap_count[CTA_GAP_HOST], CTA_EV_COUNT);
        ev(x, "gap_ns", (double)hn, CTA_EV_NS);
        /* a Kineto trace has no CPU-time readings: computing and waiting are unknown there */
        int no_cpu = cta_kineto_source(m->rd, p->file) != NULL;
        if (no_cpu) {
            ev(x, "host_unknown_ns", (double)dv->gap_host[CTA_GAP_HOST].unknown, CTA_EV_NS);
        } else {
            ev(x, "host_compute_ns", (double)dv->gap_host[CTA_GAP_HOST].compute, CTA_EV_NS);
            ev(x, "host_wait_ns", (double)dv->gap_host[CTA_GAP_HOST].wait, CTA_EV_NS);
        }
        at_gap(x, p, d, CTA_GAP_HOST, NULL, -1);
        for (int i = 0; i < dv->ntop && i < 5; i++) {
            const cta_gap *g = &dv->top[i];
            if (no_cpu) {
                detail(x, "gap at +%s: %s (%s; host: in CUDA %s, blocked %s, outside CUDA %s "
                          "(computing or waiting: not in a Kineto trace))\n",
                       cta_fmt_ns(b1, (double)(g->start - m->t0)), cta_fmt_ns(b2, (double)g->len),
                       cta_gap_names[g->cls], cta_fmt_ns(b3, (double)g->host.in_api),
                       cta_fmt_ns((char[32]){0}, (double)g->host.blocked),
                       cta_fmt_ns((char[32]){0}, (double)(g->host.compute + g->host.wait + g->host.unknown)));
                continue;
            }
            detail(x, "gap at +%s: %s (%s; host: in CUDA %s, blocked %s, computing %s, waiting %s)\n",
                   cta_fmt_ns(b1, (double)(g->start - m->t0)), cta_fmt_ns(b2, (double)g->len),
                   cta_gap_names[g->cls], cta_fmt_ns(b3, (double)g->host.in_api),
                   cta_fmt_ns((char[32]){0}, (double)g->host.blocked),
                   cta_fmt_ns((char[32]){0}, (double)g->host.compute),
                   cta_fmt_ns((char[32]){0}, (double)(g->host.wait + g->host.unknown)));
        }
        cta_starve_cause_text(&x->cause, CTA_CAUSE_HOST_WORK, p->torch, x->detail, sizeof x->detail);
    }

    /* low-gpu-utilization: phases well below the run's typical utilization */
    cta_utilwin *u = cta_xmalloc(sizeof *u, "the utilization windows");
    cta_util_windows(p, dv, ds->o->util_window_ns, u);
    if (u->n >= 4) {
        double lost = 0;
        uint32_t low = 0;
        for (uint32_t i = 0; i < u->n; i++)
            if (low_util(u, i)) {
                lost += (u->median - u->util[i]) * (double)u->recorded[i];
                low++;
            }
        if (low && (x = add(ds, "low-gpu-utilization", p, d, (uint64_t)lost, win, fix(p, FIX_LOWUTIL)))) {
            msg(x, "GPU %d ran below half its typical utilization (%.0f%%) in %u windows of %s; "
                   "bringing them to typical would save %s",
                d, 100 * u->median, low, cta_fmt_ns(b1, (double)u->width), cta_fmt_ns(b2, lost));
            ev(x, "low_windows", low, CTA_EV_COUNT);
            ev(x, "window_ns", (double)u->width, CTA_EV_NS);
            ev(x, "median_utilization_pct", 100 * u->median, CTA_EV_PCT);
            uint32_t lowest = 0;
            for (uint32_t i = 1; i < u->n; i++)
                if (low_util(u, i) && (!low_util(u, lowest) || u->util[i] < u->util[lowest]))
                    lowest = i;
            uint64_t a = u->t0 + (uint64_t)lowest * u->width, b = a + u->width;
            a = a > dv->first_gpu ? a : dv->first_gpu;
            b = b < dv->last_gpu ? b : dv->last_gpu;
            at(x, d, a, b - a);
            int shown = 0;
            for (uint32_t i = 0; i < u->n && shown < 8; i++) {
                if (!low_util(u, i))
                    continue;
                uint32_t j = i;
                while (j + 1 < u->n && low_util(u, j + 1))
                    j++;
                uint64_t a = dv->first_gpu - m->t0 + (uint64_t)i * u->width;
                detail(x, "low utilization from +%s to +%s\n", cta_fmt_ns(b1, (double)a),
                       cta_fmt_ns(b2, (double)(a + (uint64_t)(j - i + 1) * u->width)));
                shown++;
                i = j;
            }
        }
    }
    free(u);
}

static void proc_diagnoses(diags *ds, const cta_proc *p)
{
    const cta_model *m = ds->m;
    uint64_t win = proc_window(p);
    char b1[32], b2[32], b3[32], b4[32];
    cta_diag *x;

    for (int d = 0; d < CTA_MAX_DEV; d++)
        dev_diagnoses(ds, p, d);

    /* graph-reinstantiation: a graph of the same kernels and configurations instantiated
     * again (captured in the loop and instantiated each step) costs an instantiation each time
     * that one exec, relaunched or updated in place, would not; the estimate counts the
     * instantiations only (capturing again costs more) */
    cta_graph_stats gs = cta_graph_stats_of(p);
    if (gs.repeated &&
        (x = add(ds, "graph-reinstantiation", p, -1, gs.repeat_ns, win, fix(p, FIX_REINSTANTIATE)))) {
        msg(x,
            "%llu of %llu graph instantiations were of a graph instantiated before (%llu graphs "
            "of the same kernels and launch configurations instantiated more than once); they "
            "cost the host %s (%.1f%% of the window) beyond one instantiation per graph: "
            "instantiating once and relaunching saves at least that",
            (unsigned long long)gs.repeated, (unsigned long long)gs.instantiations,
            (unsigned long long)gs.repeated_shapes, cta_fmt_ns(b1, (double)gs.repeat_ns),
            pct(gs.repeat_ns, win));
        ev(x, "repeated_instantiations", (double)gs.repeated, CTA_EV_COUNT);
        ev(x, "instantiations", (double)gs.instantiations, CTA_EV_COUNT);
        ev(x, "repeated_graphs", (double)gs.repeated_shapes, CTA_EV_COUNT);
        ev(x, "instantiate_ns", (double)gs.instantiate_ns, CTA_EV_NS);
        ev(x, "repeated_instantiate_ns", (double)gs.repeat_ns, CTA_EV_NS);
        ev(x, "graph_launches", (double)gs.launches, CTA_EV_COUNT);
        ev(x, "exec_updates", (double)gs.updates, CTA_EV_COUNT);
        at(x, -1, gs.first_repeat, gs.first_repeat_ns);
    }

    /* pageable-memcpy */
    if (p->pageable_count) {
        uint64_t saving = p->pageable_ns - p->pageable_recost_ns;
        if ((x = add(ds, "pageable-memcpy", p, -1, saving, win, fix(p, FIX_PAGEABLE)))) {
            double got = p->pageable_ns ? (double)p->pageable_bytes / (double)p->pageable_ns : 0;
            double pin = p->pageable_recost_ns ? (double)p->pageable_bytes / (double)p->pageable_recost_ns : 0;
            msg(x,
                "%llu copies of pageable host memory (%s) took %s at %.2f GB/s; pinned they "
                "would run at %.2f GB/s (%s) and save %s (%.1f%% of the window)%s",
                (unsigned long long)p->pageable_count, cta_fmt_bytes(b1, (double)p->pageable_bytes),
                cta_fmt_ns(b2, (double)p->pageable_ns), got, pin,
                p->pinned_from == 1 ? "the host link's peak: no pinned copy was measured"
                : p->pinned_from == 2 ? "their own transfer after staging: no pinned copy or "
                                        "link peak is known"
                                      : "measured on the same device",
                cta_fmt_ns(b3, (double)saving), pct(saving, win),
                !p->pageable_async ? ""
                : p->pageable_async == p->pageable_count
                    ? ". These are the Async copies of async-memcpy-pageable: its saving, of the "
                      "same pinning, includes this one (do not add the two)"
                    : ". Some are the Async copies of async-memcpy-pageable: its saving, of the "
                      "same pinning, includes theirs (do not add the two)");
            ev(x, "async_copies", (double)p->pageable_async, CTA_EV_COUNT);
            ev(x, "copies", (double)p->pageable_count, CTA_EV_COUNT);
            ev(x, "bytes", (double)p->pageable_bytes, CTA_EV_BYTES);
            ev(x, "time_ns", (double)p->pageable_ns, CTA_EV_NS);
            ev(x, "achieved_gbps", got, CTA_EV_GBPS);
            ev(x, "pinned_gbps", pin, CTA_EV_GBPS);
            ev(x, "pinned_time_ns", (double)p->pageable_recost_ns, CTA_EV_NS);
            sites(m, p, CTA_SITE_PAGEABLE, x);
            fix_at_line(m, p, x, "the copy", "copies from pageable memory", fix(p, FIX_PAGEABLE), 1);
            at_call(x, p, CTA_SITE_PAGEABLE, -1);
        }
    }

    /* async-memcpy-pageable: pinned, the host would not wait for these copies; the time it
     * waited for queued work ahead of them is not counted: a small readback followed by a
     * synchronization waits for the same kernels pinned or not (cta_model.h) */
    uint64_t an = p->async_pageable_copy_ns;
    if (p->async_pageable_count &&
        (x = add(ds, "async-memcpy-pageable", p, -1, an, win, fix(p, FIX_ASYNC_PAGEABLE)))) {
        msg(x,
            "%llu asynchronous copies (%s) used pageable memory, so they ran synchronously and "
            "blocked the host %s; pinned, they would return at once and run at the pinned "
            "bandwidth, saving %s (%.1f%% of the window%s). The rest of the blocked time waited "
            "for work queued before the copies, which a later synchronization waits for either way",
            (unsigned long long)p->async_pageable_count, cta_fmt_bytes(b1, (double)p->async_pageable_bytes),
            cta_fmt_ns(b2, (double)p->async_pageable_host_ns), cta_fmt_ns(b3, (double)an), pct(an, win),
            p->async_pageable_from_bw ? "; copies without GPU timing re-costed at the pinned bandwidth"
                                      : "; from their GPU intervals");
        ev(x, "copies", (double)p->async_pageable_count, CTA_EV_COUNT);
        ev(x, "bytes", (double)p->async_pageable_bytes, CTA_EV_BYTES);
        ev(x, "host_blocked_ns", (double)p->async_pageable_host_ns, CTA_EV_NS);
        ev(x, "copy_ns", (double)an, CTA_EV_NS);
        sites(m, p, CTA_SITE_ASYNC_PAGEABLE, x);
        fix_at_line(m, p, x, "the copy", "copies from pageable memory", fix(p, FIX_ASYNC_PAGEABLE), 1);
        at_call(x, p, CTA_SITE_ASYNC_PAGEABLE, -1);
    }

    /* alloc-churn: the GPU time lost while the host allocated and freed in the loop and then
     * launched the work the GPU waited for (cta_dev.idle_in_memcall) */
    uint64_t churn_idle = 0;
    for (int k = 0; k < CTA_MAX_DEV; k++)
        churn_idle += p->dev[k].idle_in_memcall;
    if (p->churn_allocs && (x = add(ds, "alloc-churn", p, -1, churn_idle, win, fix(p, FIX_CHURN)))) {
        msg(x,
            "%llu device allocations re-made a size freed earlier and %llu of them were freed "
            "again; the host spent %s in those calls (each cudaFree synchronizes the device) and "
            "the GPU sat idle %s (%.1f%% of the window) in those calls and the launches after them, "
            "which reusing the memory saves",
            (unsigned long long)p->churn_allocs, (unsigned long long)p->churn_frees,
            cta_fmt_ns(b1, (double)p->churn_ns), cta_fmt_ns(b2, (double)churn_idle), pct(churn_idle, win));
        ev(x, "allocations", (double)p->churn_allocs, CTA_EV_COUNT);
        ev(x, "frees", (double)p->churn_frees, CTA_EV_COUNT);
        ev(x, "host_ns", (double)p->churn_ns, CTA_EV_NS);
        ev(x, "gpu_idle_in_alloc_calls_ns", (double)churn_idle, CTA_EV_NS);
        sites(m, p, CTA_SITE_CHURN, x);
        at_call(x, p, CTA_SITE_CHURN, -1);
    }

    /* oom: every failed allocation, with what held the memory */
    for (int d = 0; d <= CTA_MAX_DEV; d++) {
        const cta_dev *dv = &p->dev[d];
        for (uint64_t i = 0; i < dv->nfails && i < CTA_MAX_FAILS; i++) {
            const cta_fail *f = &dv->fails[i];
            uint64_t w = win ? win : p->t_last - p->t_first;
            x = add(ds, "oom", p, d == CTA_HOST_DEV ? -1 : d, w, w, fix(p, FIX_OOM));
            char where[32];
            if (d == CTA_HOST_DEV)
                snprintf(where, sizeof where, "pinned host memory");
            else
                snprintf(where, sizeof where, "GPU %d", d);
            uint64_t total = dv->have_prop ? dv->prop.mem_bytes : 0;
            msg(x,
                "allocation of %s on %s failed at +%s (error %u) with %s in use%s%s; %llu "
                "failed allocation%s in all",
                cta_fmt_bytes(b1, (double)f->requested), where, cta_fmt_ns(b2, (double)(f->time - m->t0)),
                f->result, cta_fmt_bytes(b3, (double)f->in_use), total ? " of " : "",
                total ? cta_fmt_bytes(b4, (double)total) : "", (unsigned long long)dv->nfails,
                dv->nfails == 1 ? "" : "s");
            ev(x, "requested_bytes", (double)f->requested, CTA_EV_BYTES);
            ev(x, "in_use_bytes", (double)f->in_use, CTA_EV_BYTES);
            if (total)
                ev(x, "device_bytes", (double)total, CTA_EV_BYTES);
            ev(x, "time_ns", (double)(f->time - m->t0), CTA_EV_NS);
            ev(x, "failed_allocations", (double)dv->nfails, CTA_EV_COUNT);
            at(x, d == CTA_HOST_DEV ? -1 : d, f->time, 0);
            if (f->stack) {
                char st[300], safe[300];
                cta_model_site_text(m, p, f->stack, st, sizeof st, 4);
                detail(x, "failing call: %s\n", cta_text_safe(safe, sizeof safe, st, 200));
            }
            holders_detail(m, p, x, f->holders, f->nholders);
        }
    }
}

static int by_saving(const void *a, const void *b)
{
    const cta_diag *x = a, *y = b;
    int ex = !strcmp(x->id, "oom"), ey = !strcmp(y->id, "oom");
    if (ex != ey)
        return ey - ex; /* a death comes first */
    return x->saving_ns < y->saving_ns ? 1 : x->saving_ns > y->saving_ns ? -1 : strcmp(x->id, y->id);
}

/* The events each diagnosis is drawn from, for the NVTX range they happened in. */
static const struct {
    const char *id;
    int kind;
} where_kinds[] = {
    {"dataloader-starvation", CTA_WHERE_GAP + CTA_GAP_STARVE},
    {"excessive-sync", CTA_SITE_SYNC},
    {"sync-memcpy", CTA_SITE_SYNC_COPY},
    {"launch-bound", CTA_WHERE_GAP + CTA_GAP_LAUNCH},
    {"gpu-gaps", CTA_WHERE_GAP + CTA_GAP_HOST},
    {"pageable-memcpy", CTA_SITE_PAGEABLE},
    {"async-memcpy-pageable", CTA_SITE_ASYNC_PAGEABLE},
    {"alloc-churn", CTA_SITE_CHURN},
    {"oom", CTA_WHERE_OOM},
};

int cta_diagnose(const cta_model *m, const cta_diag_opts *o, cta_diag **out)
{
    diags ds = {.m = m, .o = o};
    for (size_t i = 0; i < m->nprocs; i++)
        proc_diagnoses(&ds, &m->procs[i]);
    for (size_t i = 0; i < ds.n; i++)
        for (size_t k = 0; k < sizeof where_kinds / sizeof *where_kinds; k++)
            if (!strcmp(ds.v[i].id, where_kinds[k].id))
                ds.v[i].in_range = cta_nvtx_where_text(m, ds.v[i].proc, where_kinds[k].kind,
                                                       &ds.v[i].range);
    if (ds.n)
        qsort(ds.v, ds.n, sizeof *ds.v, by_saving);
    *out = ds.v;
    return (int)ds.n;
}
