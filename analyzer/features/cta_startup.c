/* Start-up apart from the steady state (cta_startup.h). */
#include "cta_startup.h"

#include <stdlib.h>
#include <string.h>

#include "cta_feature_slots.h"
#include "cta_out.h"
#include "cta_period.h"

#define SU_MAX_GAPS CTA_STARTUP_MAX_OPS
#define SU_MAX_EVENTS (1u << 14)
#define SU_MAX_RANGES (1u << 13)  /* outermost NVTX ranges kept */
/* Compact: the head's operations and gaps are what the feature's memory grows with. */
typedef struct {
    uint64_t start;
    uint32_t dur;                 /* ns, at most UINT32_MAX (4.3 s: an end beyond is a bound) */
    uint32_t sym : 28;
    uint32_t stream : 4;          /* its stream's index on the device (SU_STREAMS - 1: the rest) */
} su_op;
#define SU_STREAMS 16

static inline uint64_t op_end(const su_op *o) { return o->start + o->dur; }

/* A gap as the sweep decided it (cta_gap_parts), with which part counts it (gap_commit: the
 * part of the cause holding most of it; 2 none), whether it came before the device's first
 * kernel ran (a data-loading one is then the program's start: cta_dev.starve_startup) and
 * whether a step's first batch copy ended it (cta_starve_bin.steps). */
typedef struct {
    uint64_t start, ns0;
    uint64_t ns1 : 48, cls0 : 4, cls1 : 4, counted : 2, before_kernel : 1, step : 1;
} su_gap;

enum { EV_ALLOC, EV_LIB, EV_TUNE, EV_SAMPLE, EV_TUNE_SAMPLE };
typedef struct {
    uint64_t start;
    uint32_t dur;                 /* ns, at most UINT32_MAX */
    uint32_t kind;
} su_ev;

/* A data-loading gap of the start-up, as the steady state's view leaves it out of the gap
 * classes (cta_startup_steady). */
typedef struct {
    uint64_t len : 62, before_kernel : 1, step : 1;
} su_starve;

/* A device's operations and gaps until its process is finished; then only what the diagnoses
 * read of them (the start-up's data-loading gaps), so that a finished process keeps little. The
 * operations and gaps are reserved whole (cta_xreserve: up to CTA_STARTUP_MAX_OPS of each) as
 * the first comes. */
typedef struct {
    su_op *ops;
    size_t nops;
    uint64_t stream[SU_STREAMS - 1]; /* the streams by index (0: free) */
    unsigned last_st;                /* the last operation's stream index: work comes in runs */
    uint32_t per[SU_STREAMS];        /* operations per stream index */
    int unsorted;                    /* one came before the one ahead of it (by start) */
    su_gap *gaps;
    size_t ngaps;
    su_starve *starve;
    size_t nstarve, cap_starve;
    cta_startup_dev r;
} su_dev;

/* What a function name or a stack is to the start-up: its class + 1 (0: not yet looked up). */
enum { FN_OTHER, FN_CTX, FN_LIB, FN_ALLOC, FN_SYNC, FN_INIT };

/* A library's loading as the start-up's part: cuBLAS's by its first call (its handle is made
 * just before, in cublasCreate, which is not traced), cuDNN's by the tracer finding its
 * libraries mapped (SHLIB: cuDNN is not intercepted; it loads its engines' libraries as a
 * handle is made and a convolution planned, and the tracer finds them when their kernels are
 * first looked up). A library loaded with its own copy of the runtime calls cuInit as its code
 * first runs: the host's time on that thread before that cuInit (since its previous CUDA call)
 * is the library's loading (on PyTorch: 191 ms for cuDNN's engines, 37 ms for its graph
 * library, each mapped ~0.2 ms after its cuInit); without one, the time before the last call
 * ahead of the finding. */
typedef struct {
    uint64_t seen;                /* when the library was first seen in use (0 not yet) */
    uint64_t charged;             /* the start of the last call whose time before it was counted */
    uint32_t thr;                 /* on which thread (its index in the process, SU_NO_THREAD) */
    int called;                   /* seen after the thread's first CUDA call */
} su_lib_seen;

/* A thread's last top-level CUDA calls: the last one's, and the last cuInit's. */
typedef struct {
    uint64_t end, start, before;  /* the last call's end, start and the host's time before it */
    uint64_t init_start, init_before; /* the same of the last cuInit */
} su_thr;

/* An outermost NVTX range (push/pop depth 0, or start/end). */
typedef struct {
    uint64_t start, dur;
    uint32_t group;               /* its normalized name's string id */
} su_range;

#define SU_NO_THREAD UINT32_MAX
typedef struct {
    cta_map syms;                 /* kernel name or copy kind -> symbol */
    uint8_t *sym_copy;            /* per symbol: a copy */
    size_t cap_sym;
    /* the symbols found, so an operation's name is hashed once: + 1 (0: not yet), per kernel
     * name of the model (cta_call.kernel_idx) and per copy kind */
    uint32_t *kernel_sym, copy_sym[CTA_OP_N];
    size_t cap_kernel_sym;
    uint8_t *cls;                 /* per row of the API table (cta_name_index): its FN_ class + 1 */
    size_t cap_cls;
    /* integer keys + 1 (0 is no key): looked up per record, they are not hashed as bytes */
    ct_hash stack_tune;           /* stack id -> its tune_frame bits (sync 1, sample 2) */
    uint64_t tune_parent;         /* the runtime call whose nested driver call was counted */
    su_ev *ev;
    size_t nev, cap_ev;
    su_range *ranges;
    size_t nranges, cap_ranges;
    uint64_t nvtx_from;           /* the steady state by the NVTX ranges (0: none) */
    su_lib_seen lib_seen[CTA_STARTUP_LIBS];
    su_thr *thr;                  /* by the thread's index in the process (cta_proc.threads) */
    size_t cap_thr;
    su_dev dev[CTA_MAX_DEV];
    cta_startup_proc r;
} su_proc;

#define SU(p) ((su_proc *)(p)->feat[CTA_FEAT_STARTUP])

static su_proc *su_get(cta_proc *p)
{
    if (!SU(p)) {
        su_proc *s = cta_xmalloc(sizeof *s, "the start-up's state");
        cta_map_init(&s->syms);
        p->feat[CTA_FEAT_STARTUP] = s;
    }
    return SU(p);
}

static int prefix(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strncmp(s, list[i], strlen(list[i])))
            return 1;
    return 0;
}

static int fn_class(const char *name)
{
    static const char *const ctx[] = {"cuDevicePrimaryCtxRetain", "cuCtxCreate"};
    static const char *const lib[] = {"cublasCreate", "cublasLtCreate", "cudnnCreate", "cuModuleLoad",
                                      "cuLibraryLoad", "cudaLibraryLoad"};
    static const char *const alloc[] = {"cudaMalloc", "cuMemAlloc", "cudaHostAlloc", "cuMemHostAlloc",
                                        "cuMemCreate"};
    if (prefix(name, ctx, 2))
        return FN_CTX;
    if (prefix(name, lib, sizeof lib / sizeof *lib))
        return FN_LIB;
    if (prefix(name, alloc, sizeof alloc / sizeof *alloc))
        return FN_ALLOC;
    if (!strcmp(name, "cuInit"))
        return FN_INIT;
    return strstr(name, "Synchronize") ? FN_SYNC : FN_OTHER;
}

/* Whether a frame is an algorithm search: cuDNN's (cudnnFind*, cudnn_frontend's timing of its
 * plans, PyTorch's get_plans_from_find) or a framework's benchmark of a convolution; for a
 * thread sample (Python frames: the native ones under them are not read), the convolution's
 * forward too, which the search runs under (counted only where a search synchronized). */
static int tune_frame(const char *fn, int sample)
{
    static const char *const in[] = {"cudnnFind", "time_sorted_plan", "get_plans_from_find",
                                     "autotune", "Autotune", "benchmark_conv", "_conv_forward"};
    for (size_t i = 0; i < sizeof in / sizeof *in - !sample; i++)
        if (strstr(fn, in[i]))
            return 1;
    return 0;
}

/* Whether stack id (the file's) holds an algorithm search (tune_frame), looked up once per
 * stack: bit 0 as a call's stack, bit 1 as a sample's. */
static int stack_tune(cta_model *m, cta_proc *p, su_proc *s, uint32_t id, int sample)
{
    const uint32_t *known = ct_hash_find(&s->stack_tune, (uint64_t)id + 1);
    uint32_t bits = known ? *known : 0;
    if (!known) {
        const uint32_t *frames;
        uint32_t n;
        if (ct_reader_stack(m->rd, p->file, id, &frames, &n) == 0)
            for (uint32_t f = 0; f < n; f++) {
                ct_rec_frame fr = {0};
                char tmp[CT_STRTMP];
                if (ct_reader_frame(m->rd, p->file, frames[f], &fr) != 0)
                    continue;
                const char *fn = ct_reader_str(m->rd, p->file, fr.function, tmp);
                bits |= (uint32_t)(tune_frame(fn, 0) | tune_frame(fn, 1) << 1);
            }
        cta_xhash_put(&s->stack_tune, (uint64_t)id + 1, bits, "the start-up's stacks");
    }
    return bits >> sample & 1;
}

static void add_ev(su_proc *s, uint64_t start, uint64_t end, int kind)
{
    if (s->nev >= SU_MAX_EVENTS)
        return;
    cta_grow(&s->ev, &s->cap_ev, s->nev + 1, sizeof *s->ev);
    s->ev[s->nev++] = (su_ev){start, end - start < UINT32_MAX ? (uint32_t)(end - start) : UINT32_MAX,
                              (uint32_t)kind};
}

/* Thread t's (its index in the process) last calls. */
static inline su_thr *thr_at(su_proc *s, uint32_t t)
{
    cta_grow(&s->thr, &s->cap_thr, (size_t)t + 1, sizeof *s->thr);
    return &s->thr[t];
}

/* A top-level call [start, end) of the thread whose calls h holds, init a cuInit. */
static inline void lib_call(su_thr *h, uint64_t start, uint64_t end, int init)
{
    h->before = h->end && start > h->end ? start - h->end : 0;
    h->start = start;
    h->end = end;
    if (init) {
        h->init_start = start;
        h->init_before = h->before;
    }
}

/* Library l seen in use at time ts on thread t (its index in the process, SU_NO_THREAD one
 * that has made no CUDA call) after its calls that ended by then: its use once
 * the thread has called CUDA (cuDNN's libcudnn.so.9 is mapped with the program that links it,
 * found at its first CUDA call; the libraries of its engines come as a handle is made), else
 * its mapping; the loading of what was found (su_lib_seen). */
static void lib_seen(su_proc *s, int l, uint32_t t, uint64_t ts)
{
    su_lib_seen *x = &s->lib_seen[l];
    cta_startup_lib *o = &s->r.lib[l];
    o->objects += l == CTA_LIB_CUDNN;
    const su_thr *h = t != SU_NO_THREAD ? thr_at(s, t) : NULL;
    int called = h && h->end != 0;
    if (!x->seen || (called && !x->called)) {
        *x = (su_lib_seen){.seen = ts, .thr = t, .called = called};
        o->seen = ts;
        o->before_cuda = !called;
    }
    if (!called || x->thr != t)
        return;
    int init = l == CTA_LIB_CUDNN && h->init_start > x->charged;
    uint64_t from = init ? h->init_start : h->start;
    if (from <= x->charged)
        return; /* found with others of the same loading */
    x->charged = from;
    if (!o->first_call)
        o->first_call = from;
    o->host_ns += init ? h->init_before : h->before;
}

/* A library mapped, an NVTX range, a thread sample (the calls are cta_startup_api's). */
void cta_startup_record(cta_model *m, cta_proc *p, const ct_rec *r)
{
    su_proc *s = su_get(p);
    if (r->type == CT_REC_SHLIB) {
        /* the thread as the core knows it, not made here: one that never calls CUDA is none */
        uint32_t t = SU_NO_THREAD;
        for (uint32_t k = 0; k < p->nthreads && t == SU_NO_THREAD; k++)
            if (p->threads[k].tid == r->tid)
                t = k;
        if (r->u.shlib.kind == CT_SHLIB_CUDNN)
            lib_seen(s, CTA_LIB_CUDNN, t, r->ts);
        return;
    }
    if (r->type == CT_REC_NVTX_RANGE) {
        const ct_rec_nvtx_range *n = &r->u.nvtx_range;
        if (n->depth == 0 && s->nranges < SU_MAX_RANGES) {
            cta_grow(&s->ranges, &s->cap_ranges, s->nranges + 1, sizeof *s->ranges);
            s->ranges[s->nranges++] = (su_range){n->start, r->ts - n->start, n->group};
        }
        return;
    }
    if (r->type == CT_REC_THREAD_SAMPLE) {
        const ct_rec_thread_sample *ts = &r->u.thread_sample;
        if (ts->flags & CT_TS_WORKER)
            return; /* a loader worker's: not the process's start-up */
        add_ev(s, r->ts, r->ts, ts->stack && stack_tune(m, p, s, ts->stack, 1) ? EV_TUNE_SAMPLE : EV_SAMPLE);
    }
}

/* The class of the API function at row idx of the API table, found once per function. */
static __attribute__((noinline)) int call_class(cta_model *m, su_proc *s, uint32_t idx)
{
    int c = fn_class(cta_map_key(&m->api_names, idx));
    cta_grow(&s->cls, &s->cap_cls, (size_t)idx + 1, 1);
    s->cls[idx] = (uint8_t)(c + 1);
    return c;
}

/* An API call of class c that the start-up looks at more closely than its thread's timing. */
static __attribute__((noinline)) void notable_call(cta_model *m, cta_proc *p, su_proc *s,
                                                   uint32_t t, const ct_rec *r, int c)
{
    const ct_rec_api *a = &r->u.api;
    /* cuBLAS's first call: its own handle is made just before it */
    if ((a->flags & CT_API_LIBRARY) && !s->lib_seen[CTA_LIB_CUBLAS].seen)
        lib_seen(s, CTA_LIB_CUBLAS, t, a->start);
    if (c == FN_CTX && !s->r.init_end)
        s->r.init_end = r->ts;
    else if (c == FN_LIB)
        add_ev(s, a->start, r->ts, EV_LIB);
    else if (c == FN_ALLOC && !a->parent)
        add_ev(s, a->start, r->ts, EV_ALLOC);
    else if (c == FN_SYNC && a->corr != s->tune_parent && a->stack && stack_tune(m, p, s, a->stack, 0)) {
        /* the site is on the driver call nested in the runtime's, which comes first */
        s->tune_parent = a->parent;
        add_ev(s, a->start, r->ts, EV_TUNE);
    }
    /* a program whose calls never make a context (the runtime's first call does) */
    if (!s->r.init_end && !a->parent)
        s->r.init_end = r->ts;
}

/* A call that cta_startup_api's short path leaves (api_usual). */
static __attribute__((noinline)) void api_call(cta_model *m, cta_proc *p, cta_thread *th,
                                               const ct_rec *r, uint32_t idx)
{
    su_proc *s = su_get(p);
    const ct_rec_api *a = &r->u.api;
    if (!s->r.first_call || a->start < s->r.first_call)
        s->r.first_call = a->start;
    int c = idx < s->cap_cls && s->cls[idx] ? s->cls[idx] - 1 : call_class(m, s, idx);
    uint32_t t = (uint32_t)(th - p->threads);
    if (!a->parent)
        lib_call(thr_at(s, t), a->start, r->ts, c == FN_INIT);
    if (c != FN_OTHER || (a->flags & CT_API_LIBRARY) || !s->r.init_end)
        notable_call(m, p, s, t, r, c);
}

/* Whether the call is of the usual kind, which only times its thread's calls: a launch, a copy
 * (FN_OTHER, no library's) once the context is made, of a thread seen before. */
static inline int api_usual(const su_proc *s, const ct_rec_api *a, uint32_t idx, size_t t)
{
    return s && idx < s->cap_cls && s->cls[idx] == FN_OTHER + 1 && s->r.init_end &&
           !(a->flags & CT_API_LIBRARY) && a->start >= s->r.first_call && t < s->cap_thr;
}

/* Per call: the usual one's path is a leaf (a call made from it cost the path its registers'
 * saving: 74 instructions a call, the feature's most), the rest is api_call's. */
void cta_startup_api(cta_model *m, cta_proc *p, cta_thread *th, const ct_rec *r, uint32_t idx)
{
    su_proc *s = SU(p);
    const ct_rec_api *a = &r->u.api;
    size_t t = (size_t)(th - p->threads);
    if (!api_usual(s, a, idx, t)) {
        api_call(m, p, th, r, idx);
        return;
    }
    if (!a->parent)
        lib_call(&s->thr[t], a->start, r->ts, 0);
}

static inline void op_put(su_dev *dv, const ct_rec_gpu *g, uint64_t end, uint32_t sym, unsigned st)
{
    uint64_t dur = end > g->start ? end - g->start : 0;
    dv->unsorted |= dv->nops && g->start < dv->ops[dv->nops - 1].start;
    dv->per[st]++;
    dv->ops[dv->nops++] = (su_op){g->start, dur < UINT32_MAX ? (uint32_t)dur : UINT32_MAX,
                                  sym & 0xfffffff, st};
}

/* An operation that cta_startup_gpu's short path leaves: a copy, a kernel not seen yet, the
 * device's first, on another stream than the last one's. */
static __attribute__((noinline)) void op_other(cta_proc *p, const ct_rec_gpu *g, uint64_t end,
                                               const cta_call *c)
{
    su_proc *s = su_get(p);
    su_dev *dv = &s->dev[cta_dev_slot(g->device)];
    if (dv->nops >= CTA_STARTUP_MAX_OPS)
        return;
    uint32_t *known;
    if (c->is_copy) {
        known = &s->copy_sym[cta_copy_op(c->copy)];
    } else {
        cta_grow(&s->kernel_sym, &s->cap_kernel_sym, c->kernel_idx + 1, sizeof *s->kernel_sym);
        known = &s->kernel_sym[c->kernel_idx];
    }
    if (!*known) {
        char key[CT_STRTMP + 16];
        const char *name = c->kernel_name;
        if (c->is_copy || !name) {
            snprintf(key, sizeof key, "\1%s", c->is_copy ? cta_op_names[cta_copy_op(c->copy)] : "?");
            name = key;
        }
        int added;
        uint32_t sym = cta_map_get(&s->syms, name, strlen(name), &added);
        if (added) {
            cta_grow(&s->sym_copy, &s->cap_sym, sym + 1, 1);
            s->sym_copy[sym] = name == key;
        }
        *known = sym + 1;
    }
    if (!dv->ops)
        dv->ops = cta_xreserve(CTA_STARTUP_MAX_OPS * sizeof *dv->ops, "the start-up's operations");
    unsigned st = dv->last_st;
    if (st >= SU_STREAMS - 1 || dv->stream[st] != g->stream + 1) {
        st = 0;
        while (st < SU_STREAMS - 1 && dv->stream[st] && dv->stream[st] != g->stream + 1)
            st++;
        if (st < SU_STREAMS - 1)
            dv->stream[st] = g->stream + 1;
        dv->last_st = st;
    }
    op_put(dv, g, end, *known - 1, st);
}

/* Per operation: a kernel seen before on the stream of the device's last operation takes the
 * short path (a leaf, as cta_startup_api's). */
void cta_startup_gpu(cta_model *m, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c)
{
    (void)m;
    su_proc *s = SU(p);
    su_dev *dv = s ? &s->dev[cta_dev_slot(g->device)] : NULL;
    uint32_t k = c->kernel_idx;
    if (dv && dv->ops && c->is_launch && !c->is_copy && k < s->cap_kernel_sym && s->kernel_sym[k] &&
        dv->last_st < SU_STREAMS - 1 && dv->stream[dv->last_st] == g->stream + 1) {
        if (dv->nops < CTA_STARTUP_MAX_OPS)
            op_put(dv, g, end, s->kernel_sym[k] - 1, dv->last_st);
    } else if (c->is_launch || c->is_copy) {
        op_other(p, g, end, c);
    }
}

void cta_startup_gap(cta_model *m, cta_proc *p, int d, const cta_gap_parts *g)
{
    (void)m;
    uint64_t len = g->ns[0] + g->ns[1];
    if (!len)
        return;
    su_dev *dv = &su_get(p)->dev[d];
    if (dv->ngaps >= SU_MAX_GAPS)
        return;
    /* gap_commit counts the gap under the cause holding most of it */
    int rest = g->cls[1], main_cls = 2 * g->ns[0] >= len ? g->cls[0] : rest;
    uint8_t counted = g->ns[0] && main_cls == g->cls[0] ? 0 : g->ns[1] && main_cls == rest ? 1 : 2;
    if (!dv->gaps)
        dv->gaps = cta_xreserve(SU_MAX_GAPS * sizeof *dv->gaps, "the start-up's gaps");
    dv->gaps[dv->ngaps++] = (su_gap){.start = g->start, .ns0 = g->ns[0], .ns1 = g->ns[1],
                                     .cls0 = (unsigned)g->cls[0] & 15, .cls1 = (unsigned)rest & 15,
                                     .counted = counted & 3, .before_kernel = !p->dev[d].kernel_run,
                                     .step = p->dev[d].closed_batch != 0};
}

static int by_start(const void *a, const void *b)
{
    const su_op *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The steady state by the sequence of operations o[0..n), sorted by start, and their symbols
 * sy (cta_startup.h): fills r's repetition and steady_from; returns its first operation (n: no
 * repetition). The repetition is their kernels' and copies' (cta_period_find). */
static size_t sequence_start(const su_op *o, const uint32_t *sy, size_t n, cta_startup_dev *r)
{
    size_t best_len, j;
    size_t P = cta_period_find(sy, n, &best_len, &j);
    if (!P)
        return n;
    /* the unit begins after its longest typical gap: where an iteration ends and the next
     * begins (a batch loaded, the loss read) */
    double *gap = cta_xmalloc(P * sizeof *gap, "the unit's gaps");
    uint64_t me = 0;
    for (size_t k = 0; k < n; k++) {
        if (k >= j && k > 0 && o[k].start > me)
            gap[(k - j) % P] += (double)(o[k].start - me);
        if (op_end(&o[k]) > me)
            me = op_end(&o[k]);
    }
    size_t phase = 0;
    for (size_t q = 1; q < P; q++)
        if (gap[q] > gap[phase])
            phase = q;
    free(gap);
    size_t b = j + phase;
    r->found = CTA_STARTUP_SEQUENCE;
    r->period = (uint32_t)P;
    r->repeats = (j + best_len - b) / P;
    /* the steady state begins when the start-up's last GPU work ends */
    me = 0;
    for (size_t k = 0; k < b; k++)
        me = op_end(&o[k]) > me ? op_end(&o[k]) : me;
    r->steady_from = b ? me < o[b].start ? me : o[b].start : 0;
    return b;
}

/* The steady state by the outermost NVTX range that repeats most (the longest in all, among
 * equals): from its first instance no longer than 1.5 times their median (a first iteration
 * autotuning, allocating, loading its modules is longer). Into s->nvtx_from and s->r. */
static void nvtx_start(cta_model *m, const cta_proc *p, su_proc *s)
{
    cta_map names;
    cta_map_init(&names);
    uint64_t *count = NULL, *total = NULL;
    size_t cap = 0, cap2 = 0, best = SIZE_MAX;
    for (size_t i = 0; i < s->nranges; i++) {
        int added;
        uint32_t g = cta_map_get(&names, &s->ranges[i].group, sizeof s->ranges[i].group, &added);
        if (added) {
            cta_grow(&count, &cap, g + 1, sizeof *count);
            cta_grow(&total, &cap2, g + 1, sizeof *total);
            count[g] = total[g] = 0;
        }
        count[g]++;
        total[g] += s->ranges[i].dur;
        if (best == SIZE_MAX || count[g] > count[best] ||
            (count[g] == count[best] && total[g] > total[best]))
            best = g;
    }
    uint32_t want = best != SIZE_MAX ? *(const uint32_t *)cta_map_key(&names, (uint32_t)best) : 0;
    uint64_t n = best != SIZE_MAX ? count[best] : 0;
    free(count);
    free(total);
    cta_map_free(&names);
    if (n < 3)
        return;
    cta_sketch durs;
    cta_sketch_init(&durs);
    for (size_t i = 0; i < s->nranges; i++)
        if (s->ranges[i].group == want)
            cta_sketch_add(&durs, s->ranges[i].dur);
    uint64_t median = cta_sketch_quantile(&durs, 0.5);
    cta_sketch_free(&durs);
    /* the ranges come by their end: the earliest typical one */
    uint64_t from = 0, left = 0;
    for (size_t i = 0; i < s->nranges; i++)
        if (s->ranges[i].group == want && 2 * s->ranges[i].dur <= 3 * median &&
            (!from || s->ranges[i].start < from))
            from = s->ranges[i].start;
    for (size_t i = 0; i < s->nranges; i++)
        left += s->ranges[i].group == want && s->ranges[i].start >= from;
    s->nvtx_from = from;
    s->r.nvtx_repeats = left;
    char tmp[CT_STRTMP];
    snprintf(s->r.nvtx_range, sizeof s->r.nvtx_range, "%s", ct_reader_str(m->rd, p->file, want, tmp));
}

static void find_steady(su_proc *s, su_dev *dv, const cta_dev *cd)
{
    cta_startup_dev *r = &dv->r;
    size_t n = dv->nops, b;
    r->ops = n;
    if (!n || (n < 6 && !s->nvtx_from))
        return;
    if (dv->unsorted) /* they come in order of their ends, mostly of their starts too */
        qsort(dv->ops, n, sizeof *dv->ops, by_start);
    const su_op *o = dv->ops;
    if (s->nvtx_from) {
        r->found = CTA_STARTUP_NVTX;
        r->repeats = s->r.nvtx_repeats;
        for (b = 0; b < n && o[b].start < s->nvtx_from; b++)
            ;
        r->period = r->repeats ? (uint32_t)((n - b) / r->repeats) : 0;
        r->steady_from = s->nvtx_from;
    } else {
        /* the busiest stream's sequence: work on other streams (a copy stream loading the next
         * batch) falls anywhere among its operations, from one iteration to the next */
        size_t busiest = 0, m = 0;
        for (size_t q = 1; q < SU_STREAMS; q++)
            busiest = dv->per[q] > dv->per[busiest] ? q : busiest;
        /* the symbols compared densely; the stream's operations apart if others ran too */
        uint32_t *sy = cta_xmalloc(dv->per[busiest] * sizeof *sy + 1, "the operations' symbols");
        su_op *kept = dv->per[busiest] < n ? cta_xmalloc(dv->per[busiest] * sizeof *kept, "a stream's operations")
                                           : NULL;
        for (size_t k = 0; k < n; k++)
            if (o[k].stream == busiest) {
                if (kept)
                    kept[m] = o[k];
                sy[m++] = o[k].sym;
            }
        b = sequence_start(kept ? kept : o, sy, m, r);
        free(sy);
        free(kept);
        if (b == m)
            return;
        for (b = 0; b < n && o[b].start < r->steady_from; b++)
            ;
    }
    r->steady_op = b;
    if (r->steady_from <= cd->first_gpu || b == n) {
        r->steady_from = 0;
        return;
    }
    /* busy before it: the union of the start-up's work, as ordered by start */
    uint64_t cur_s = 0, cur_e = 0;
    for (size_t k = 0; k <= b && k < n; k++) {
        uint64_t st = o[k].start < r->steady_from ? o[k].start : r->steady_from;
        uint64_t en = k < b ? (op_end(&o[k]) < r->steady_from ? op_end(&o[k]) : r->steady_from) : st;
        if (k == b || st > cur_e) {
            r->startup_busy += cur_e - cur_s;
            cur_s = st;
            cur_e = en;
        } else if (en > cur_e) {
            cur_e = en;
        }
    }
    for (size_t g = 0; g < dv->ngaps && dv->gaps[g].start < r->steady_from; g++) {
        const su_gap *x = &dv->gaps[g];
        r->idle_ns[x->cls0] += x->ns0;
        r->idle_count[x->cls0] += x->counted == 0;
        r->idle_ns[x->cls1] += x->ns1;
        r->idle_count[x->cls1] += x->counted == 1;
    }
    /* kernels the start-up tried that the steady state never runs */
    size_t nsym = cta_map_count(&s->syms);
    uint8_t *seen = cta_xmalloc(nsym + 1, "the kernels seen");
    for (size_t k = b; k < n; k++)
        seen[o[k].sym] = 1;
    for (size_t k = 0; k < b; k++)
        if (!s->sym_copy[o[k].sym] && seen[o[k].sym] != 1) {
            r->trial_runs++;
            r->trial_kernels += !seen[o[k].sym];
            seen[o[k].sym] = 2;
        }
    free(seen);
}

void cta_startup_finish(cta_model *m, cta_proc *p)
{
    su_proc *s = SU(p);
    if (!s)
        return;
    nvtx_start(m, p, s);
    for (int d = 0; d < CTA_MAX_DEV; d++) {
        su_dev *dv = &s->dev[d];
        find_steady(s, dv, &p->dev[d]);
        uint64_t t = dv->r.steady_from;
        if (t && (!s->r.steady_from || t < s->r.steady_from))
            s->r.steady_from = t;
        for (size_t g = 0; t && g < dv->ngaps && dv->gaps[g].start < t; g++)
            if (dv->gaps[g].cls0 == CTA_GAP_STARVE) {
                cta_grow(&dv->starve, &dv->cap_starve, dv->nstarve + 1, sizeof *dv->starve);
                dv->starve[dv->nstarve++] =
                    (su_starve){dv->gaps[g].ns0 + dv->gaps[g].ns1, dv->gaps[g].before_kernel,
                                dv->gaps[g].step};
            }
        cta_unreserve(dv->ops, CTA_STARTUP_MAX_OPS * sizeof *dv->ops);
        cta_unreserve(dv->gaps, SU_MAX_GAPS * sizeof *dv->gaps);
        dv->ops = NULL;
        dv->gaps = NULL;
        dv->nops = dv->ngaps = 0;
    }
    if (!s->r.steady_from)
        return;
    for (size_t i = 0; i < s->nev; i++) {
        const su_ev *e = &s->ev[i];
        if (e->start >= s->r.steady_from)
            continue;
        uint64_t ns = e->dur;
        switch (e->kind) {
        case EV_ALLOC: s->r.alloc_calls++, s->r.alloc_ns += ns; break;
        case EV_LIB: s->r.lib_calls++, s->r.lib_ns += ns; break;
        case EV_TUNE:
            s->r.tune_calls++, s->r.tune_ns += ns;
            if (!s->r.tune_first)
                s->r.tune_first = e->start;
            s->r.tune_last = e->start + e->dur;
            break;
        default: s->r.samples++, s->r.tune_samples += e->kind == EV_TUNE_SAMPLE;
        }
    }
    /* a convolution's forward is a search only where one synchronized: else its first call's
     * loading of cuDNN */
    if (!s->r.tune_calls)
        s->r.tune_samples = 0;
}

void cta_startup_proc_free(cta_proc *p)
{
    su_proc *s = SU(p);
    if (!s)
        return;
    for (int d = 0; d < CTA_MAX_DEV; d++) {
        cta_unreserve(s->dev[d].ops, CTA_STARTUP_MAX_OPS * sizeof *s->dev[d].ops);
        cta_unreserve(s->dev[d].gaps, SU_MAX_GAPS * sizeof *s->dev[d].gaps);
        free(s->dev[d].starve);
    }
    cta_map_free(&s->syms);
    ct_hash_free(&s->stack_tune);
    free(s->cls);
    free(s->thr);
    free(s->sym_copy);
    free(s->kernel_sym);
    free(s->ev);
    free(s->ranges);
    free(s);
    p->feat[CTA_FEAT_STARTUP] = NULL;
}

const cta_startup_dev *cta_startup_of(const cta_proc *p, int d)
{
    const su_proc *s = p->feat[CTA_FEAT_STARTUP];
    return s && s->dev[d].r.ops ? &s->dev[d].r : NULL;
}

const cta_startup_proc *cta_startup_proc_of(const cta_proc *p)
{
    const su_proc *s = p->feat[CTA_FEAT_STARTUP];
    return s ? &s->r : NULL;
}

static void scale(cta_hostsplit *h, uint64_t part, uint64_t whole)
{
    double f = whole ? (double)part / (double)whole : 0;
    *h = (cta_hostsplit){(uint64_t)((double)h->in_api * f), (uint64_t)((double)h->blocked * f),
                         (uint64_t)((double)h->compute * f), (uint64_t)((double)h->wait * f),
                         (uint64_t)((double)h->unknown * f)};
}

int cta_startup_steady(const cta_proc *p, int d, cta_dev *out)
{
    const su_proc *s = p->feat[CTA_FEAT_STARTUP];
    const cta_startup_dev *r = s ? &s->dev[d].r : NULL;
    const cta_dev *dv = &p->dev[d];
    if (!r || !r->steady_from || r->steady_from >= dv->last_gpu)
        return 0;
    *out = *dv;
    uint64_t whole = cta_dev_window(dv);
    out->first_gpu = r->steady_from;
    if (out->paused > out->last_gpu - out->first_gpu)
        out->paused = 0;
    uint64_t win = cta_dev_window(out), idle_all = 0, idle_su = 0;
    out->busy = dv->busy > r->startup_busy ? dv->busy - r->startup_busy : 0;
    for (int c = 0; c < CTA_GAP_N; c++) {
        idle_all += dv->gap_ns[c];
        idle_su += r->idle_ns[c];
        out->gap_ns[c] = dv->gap_ns[c] - r->idle_ns[c];
        out->gap_count[c] = dv->gap_count[c] - r->idle_count[c];
        scale(&out->gap_host[c], out->gap_ns[c], dv->gap_ns[c]);
    }
    scale(&out->idle, idle_all - idle_su, idle_all);
    /* the waits for launches are not timed per gap: in proportion to the window */
    out->launch_wait_ns = whole ? (uint64_t)((double)dv->launch_wait_ns * (double)win / (double)whole) : 0;
    out->graph_launch_wait_ns = whole ? (uint64_t)((double)dv->graph_launch_wait_ns * (double)win / (double)whole) : 0;
    /* what event synchronizations are owed is not kept per gap: in proportion to the time after
     * synchronizations (clamping it to the steady state's made all of that the program's own
     * timing, and simpleMultiCopy's sync finding vanished) */
    out->sync_event_owed = dv->gap_ns[CTA_GAP_SYNC]
        ? (uint64_t)((double)dv->sync_event_owed * (double)out->gap_ns[CTA_GAP_SYNC] /
                     (double)dv->gap_ns[CTA_GAP_SYNC])
        : 0;
    /* the start-up's data-loading gaps leave the gap classes, and those before the first kernel
     * the program's start the model counted apart */
    static _Thread_local cta_starve_bin bins[CTA_SKETCH_BUCKETS];
    if (dv->starve_bins) {
        memcpy(bins, dv->starve_bins, sizeof bins);
        out->starve_bins = bins;
    }
    const su_dev *sd = &s->dev[d];
    for (size_t g = 0; g < sd->nstarve && dv->starve_bins; g++) {
        const su_starve *x = &sd->starve[g];
        uint64_t len = x->len;
        cta_starve_bin *b = &bins[cta_sketch_bucket(len)];
        b->n -= b->n > 0;
        b->ns -= b->ns < len ? b->ns : len;
        b->steps -= x->step && b->steps > 0;
        if (x->before_kernel && out->starve_startup) {
            out->starve_startup--;
            out->starve_startup_ns -= out->starve_startup_ns < len ? out->starve_startup_ns : len;
        }
    }
    scale(&out->starve_startup_host, out->starve_startup_ns, dv->starve_startup_ns);
    /* the loop's steps begin at its first step gap, if the steady state holds it (the gaps left
     * out came before it) */
    if (out->first_step_gap < r->steady_from) {
        out->first_step_gap = 0;
    } else {
        uint64_t gone = dv->gap_ns[CTA_GAP_STARVE] - out->gap_ns[CTA_GAP_STARVE];
        out->starve_before_step -= gone < out->starve_before_step ? gone : out->starve_before_step;
    }
    out->ntop = 0;
    for (int i = 0; i < dv->ntop; i++)
        if (dv->top[i].start >= r->steady_from)
            out->top[out->ntop++] = dv->top[i];
    return 1;
}

cta_span cta_startup_span(const cta_proc *p, int d, int startup)
{
    const su_proc *s = p->feat[CTA_FEAT_STARTUP];
    uint64_t t = s ? s->dev[d].r.steady_from : 0;
    if (!t || t >= p->dev[d].last_gpu)
        return CTA_SPAN_ALL;
    return startup ? (cta_span){0, t} : (cta_span){t, UINT64_MAX};
}
