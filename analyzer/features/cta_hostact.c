/* Where the host was while the GPU sat idle (cta_hostact.h). */
#include "cta_hostact.h"

#include <stdlib.h>
#include <string.h>

#include "cta_feature_slots.h"
#include "cta_names.h"
#include "cta_out.h"
#include "cta_sweep.h"

/* What a sample says: the stack (an index in the process's stacks, 0 none), the CUDA call it
 * was in (the file's string id, 0 none), its state letter and flags (ct_thread_sample_flags). */
typedef struct {
    uint32_t stack, function, state, flags;
} ha_key;

/* A sample stands for the time since its thread's previous one (at most HA_MAX_US): a sampler
 * that ran late, its core taken by the busy thread it samples, took fewer samples of the busy
 * phases, and counting samples made a 60% phase 51%. */
#define HA_MAX_US 100000

typedef struct {
    uint64_t t;
    uint32_t key, us;
} ha_pending;

/* Whose samples: the thread that last fed the GPU's, or the loader workers' (CT_TS_WORKER:
 * child processes forked without exec that load the batches, sampled by their parent). */
enum { HA_FEEDER, HA_WORKERS, HA_WHO };

/* A gap's samples of one key and cause: where a finding of the steady state or of the start-up
 * counts only its own gaps (cta_span), the run's totals are split by these. */
typedef struct {
    uint64_t t;                   /* the gap's start */
    uint32_t key;
    uint32_t cls : 4, samples : 28;
    uint64_t us;
} ha_logged;

/* The gaps' samples logged, at most: 24 MiB a device and HA_WHO; a span reaching past them
 * counts the run's totals (the breakdown's) less those logged before it. A start-up is found
 * among the run's first GPU operations, long before this fills unless a run of hours idles
 * with a different activity every sample. */
#define HA_MAX_LOG (1u << 20)

/* A device's samples of one HA_WHO: those of the gap in progress, then their time (us) per key
 * and cause, in all and by gap (log). */
typedef struct {
    ha_pending *pend;
    size_t npend, cap_pend;
    uint64_t *us;                 /* [key * CTA_GAP_N + cause] */
    size_t cap_us;
    uint64_t total[CTA_GAP_N], samples[CTA_GAP_N];
    ha_logged *log;
    size_t nlog, cap_log;
} ha_set;

typedef struct {
    ha_set who[HA_WHO];
} ha_dev;

typedef struct {
    cta_map keys;                 /* ha_key -> its index */
    ha_key *key;
    int8_t *loader;               /* per key: in a loader (ha_loader_of) */
    size_t cap_key, cap_loader;
    cta_map tids;                 /* a sampled thread -> its index in last */
    uint64_t *last;               /* its previous sample's time */
    size_t cap_last;
    ha_dev dev[CTA_MAX_DEV];
    uint32_t workers;             /* loader workers sampled */
    uint32_t flags;               /* every flag a sample had (ct_thread_sample_flags) */
} ha_proc;

#define HA(p) ((ha_proc *)(p)->feat[CTA_FEAT_HOSTACT])

/* Whether a sample's Python frames are loading data: a frame of torch.utils.data (a DataLoader's
 * __next__, its fetch calling the Dataset's __getitem__), of a pool of workers producing batches
 * (multiprocessing, concurrent.futures), or a __getitem__ of the program's own (a dataset indexed
 * directly) 1; other Python frames 0; none (a native stack, unread frames) -1. */
static int ha_loader_frame(const char *file, const char *fn)
{
    static const char *const in[] = {"torch/utils/data/", "multiprocessing/", "concurrent/futures/"};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        if (strstr(file, in[i]))
            return 1;
    size_t n = strlen(fn);
    return n >= 11 && !strcmp(fn + n - 11, "__getitem__");
}

static int ha_loader_of(const cta_model *m, const cta_proc *p, const ha_key *k)
{
    const uint32_t *frames;
    uint32_t n;
    if (!k->stack || (k->flags & (CT_TS_NATIVE_LAST | CT_TS_READ_FAILED)) || k->stack >= p->nstacks ||
        ct_reader_stack(m->rd, p->file, p->stack_ids[k->stack], &frames, &n) != 0)
        return -1;
    int python = 0;
    for (uint32_t i = 0; i < n; i++) {
        ct_rec_frame fr = {0};
        if (ct_reader_frame(m->rd, p->file, frames[i], &fr) != 0 || fr.kind != CT_FRAME_PYTHON)
            continue;
        python = 1;
        char tmp[CT_STRTMP], tmp2[CT_STRTMP];
        if (ha_loader_frame(fr.module ? ct_reader_str(m->rd, p->file, fr.module, tmp) : "",
                            ct_reader_str(m->rd, p->file, fr.function, tmp2)))
            return 1;
    }
    return python ? 0 : -1;
}

static void ha_record(cta_model *m, cta_proc *p, const ct_rec *r)
{
    const ct_rec_thread_sample *s = &r->u.thread_sample;
    ha_proc *h = HA(p);
    if (!h) {
        h = p->feat[CTA_FEAT_HOSTACT] = cta_xmalloc(sizeof *h, "the host's samples");
        memset(h, 0, sizeof *h);
        cta_map_init(&h->keys);
        cta_map_init(&h->tids);
    }
    ha_key k = {s->stack ? cta_stack_index(p, s->stack) : 0, s->function, s->state, s->flags};
    h->flags |= s->flags;
    int added;
    uint32_t i = cta_map_get(&h->keys, &k, sizeof k, &added);
    if (added) {
        cta_grow(&h->key, &h->cap_key, i + 1, sizeof *h->key);
        cta_grow(&h->loader, &h->cap_loader, i + 1, sizeof *h->loader);
        h->key[i] = k;
        h->loader[i] = (int8_t)ha_loader_of(m, p, &k);
    }
    uint32_t ti = cta_map_get(&h->tids, &s->tid, sizeof s->tid, &added);
    if (added) {
        cta_grow(&h->last, &h->cap_last, ti + 1, sizeof *h->last);
        h->last[ti] = r->ts;
        h->workers += !!(s->flags & CT_TS_WORKER);
    }
    uint64_t us = r->ts > h->last[ti] ? (r->ts - h->last[ti]) / 1000 : 0;
    h->last[ti] = r->ts;
    /* the point: the key, the thread and the time it stands for */
    cta_sweep_push(p, (cta_pt){.t = r->ts, .type = CTA_P_FEAT_BEGIN, .kind = CTA_FEAT_HOSTACT,
                               .a = i, .b = (us < HA_MAX_US ? us : HA_MAX_US) << 32 | s->tid});
}

/* A sample, in time order: the thread that last fed the GPU (the one whose work it waits for, as the
 * breakdown's host states are its) counts for every device idle now; so does a loader worker's,
 * apart (what the batches the GPU waits for were waiting for). */
static void ha_point(cta_model *m, cta_proc *p, const cta_pt *pt)
{
    (void)m;
    ha_proc *h = HA(p);
    int who = h->key[pt->a].flags & CT_TS_WORKER ? HA_WORKERS : HA_FEEDER;
    if ((who == HA_FEEDER && (uint32_t)pt->b != p->sweep->last_tid) || !(pt->b >> 32))
        return;
    for (int d = 0; d < p->sweep->ndev && d < CTA_MAX_DEV; d++) {
        const cta_dev *dv = &p->dev[d];
        if (!dv->windowed || dv->busy_depth)
            continue;
        ha_set *x = &h->dev[d].who[who];
        cta_grow(&x->pend, &x->cap_pend, x->npend + 1, sizeof *x->pend);
        x->pend[x->npend++] = (ha_pending){pt->t, pt->a, (uint32_t)(pt->b >> 32)};
    }
}

/* In a PyTorch program, a gap before a host-to-device copy is data loading when the thread's
 * Python frames were in a loader for most of the time its samples in the gap stand for; not when
 * they were elsewhere (a program with no DataLoader copying small tensors it built: the host's
 * own work). Where all of a gap's samples came back unread (frames changing as they were read:
 * a tight loop of the program's own, PyTorch's starved loop sleeping in its collate function),
 * their states tell: running, the host computed (not loading: a loader's frames are read well),
 * else it waited, maybe for data, which the copy decides. Samples without Python frames cannot
 * tell, and a program without PyTorch may load its batches in code of its own (a pipe from
 * worker processes, its own preprocessing) that no frame names. */
static int ha_loading(cta_model *m, cta_proc *p, int d, const cta_gap *g)
{
    (void)m;
    (void)g;
    const ha_proc *h = HA(p);
    if (!h || !p->torch)
        return -1;
    const ha_set *x = &h->dev[d].who[HA_FEEDER];
    uint64_t in = 0, told = 0, unread = 0, running = 0;
    for (size_t i = 0; i < x->npend; i++) {
        const ha_key *k = &h->key[x->pend[i].key];
        int l = h->loader[x->pend[i].key];
        if (l >= 0) {
            told += x->pend[i].us;
            in += l ? x->pend[i].us : 0;
        } else if (k->flags & CT_TS_READ_FAILED) {
            unread += x->pend[i].us;
            running += k->state == 'R' ? x->pend[i].us : 0;
        }
    }
    if (told)
        return 2 * in >= told;
    return unread && 2 * running > unread ? 0 : -1;
}

/* Logs a sample of the gap begun at t (first: the gap's first entry), merged into the gap's
 * entry of the same key and cause among its last few. */
static void ha_log(ha_set *x, size_t first, uint64_t t, uint32_t key, int cls, uint32_t us)
{
    for (size_t i = x->nlog; i > first && i + 8 > x->nlog; i--)
        if (x->log[i - 1].key == key && x->log[i - 1].cls == (unsigned)cls &&
            x->log[i - 1].samples < (1u << 28) - 1) {
            x->log[i - 1].samples++;
            x->log[i - 1].us += us;
            return;
        }
    if (x->nlog >= HA_MAX_LOG)
        return;
    cta_grow(&x->log, &x->cap_log, x->nlog + 1, sizeof *x->log);
    x->log[x->nlog++] = (ha_logged){t, key, (unsigned)cls & 15, 1, us};
}

/* The gap ended: its samples go to its causes by their instants. */
static void ha_gap(cta_model *m, cta_proc *p, int d, const cta_gap_parts *g)
{
    (void)m;
    ha_proc *h = HA(p);
    if (!h)
        return;
    for (int w = 0; w < HA_WHO; w++) {
        ha_set *x = &h->dev[d].who[w];
        cta_grow(&x->us, &x->cap_us, cta_map_count(&h->keys) * CTA_GAP_N, sizeof *x->us);
        size_t first = x->nlog;
        for (size_t i = 0; i < x->npend && g->ns[0] + g->ns[1]; i++) {
            int cls = x->pend[i].t < g->start + g->ns[0] || !g->ns[1] ? g->cls[0] : g->cls[1];
            x->us[(size_t)x->pend[i].key * CTA_GAP_N + (size_t)cls] += x->pend[i].us;
            x->total[cls] += x->pend[i].us;
            x->samples[cls]++;
            ha_log(x, first, g->start, x->pend[i].key, cls, x->pend[i].us);
        }
        x->npend = 0;
    }
}

/* The time (us) per key of cause cls in the gaps of span, into us[nk], and their samples into
 * *samples; returns their total. The whole run's are the totals; a span from the steady state
 * on, the totals less what the log holds before it; another, what the log holds in it. */
static uint64_t ha_span_us(const ha_set *x, size_t nk, int cls, cta_span span, uint64_t *us,
                           uint64_t *samples)
{
    int rest = span.to == UINT64_MAX;
    for (size_t k = 0; k < nk; k++)
        us[k] = rest && (k + 1) * CTA_GAP_N <= x->cap_us ? x->us[k * CTA_GAP_N + (size_t)cls] : 0;
    uint64_t total = rest ? x->total[cls] : 0;
    *samples = rest ? x->samples[cls] : 0;
    if (rest && !span.from)
        return total;
    for (size_t i = 0; i < x->nlog; i++) {
        const ha_logged *e = &x->log[i];
        if (e->cls != (unsigned)cls || e->key >= nk)
            continue;
        if (rest && e->t < span.from) {
            us[e->key] -= e->us;
            total -= e->us;
            *samples -= e->samples;
        } else if (!rest && e->t >= span.from && e->t < span.to) {
            us[e->key] += e->us;
            total += e->us;
            *samples += e->samples;
        }
    }
    return total;
}

static void ha_proc_free(cta_proc *p)
{
    ha_proc *h = HA(p);
    if (!h)
        return;
    for (int d = 0; d < CTA_MAX_DEV; d++)
        for (int w = 0; w < HA_WHO; w++) {
            free(h->dev[d].who[w].pend);
            free(h->dev[d].who[w].us);
            free(h->dev[d].who[w].log);
        }
    free(h->key);
    free(h->loader);
    free(h->last);
    cta_map_free(&h->keys);
    cta_map_free(&h->tids);
    free(h);
    p->feat[CTA_FEAT_HOSTACT] = NULL;
}

/* ---- what the samples say, for people ---- */

/* The states a sample's letter falls in, as said. */
enum { HA_RUNNING, HA_SLEEPING, HA_IO, HA_OTHER, HA_STATES };
static const char *const ha_state_words[HA_STATES] = {"running", "sleeping", "in I/O", "other"};

static int state_of(uint32_t c)
{
    return c == 'R' ? HA_RUNNING : c == 'S' ? HA_SLEEPING : c == 'D' ? HA_IO : HA_OTHER;
}

/* One activity: what samples show, as the output groups them (by site, frame and call; the
 * state most of them were in). */
typedef struct {
    char site[200];               /* the user's line ("main.py:327 in train"), else native frames */
    char frame[200];              /* the innermost frame under it (file and function), when not
                                   * the site's own */
    char call[96];                /* the CUDA call it was in ("" none) */
    uint64_t us, in_state[HA_STATES]; /* the time its samples stand for, in all and by state */
} ha_act;

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The package a module's file belongs to: its first folder under site-packages (or
 * dist-packages), else the file's name without ".py" (the standard library's modules). */
static void ha_package(const char *file, char *out, size_t n)
{
    const char *s = strstr(file, "site-packages/");
    if (!s)
        s = strstr(file, "dist-packages/");
    if (s) {
        s = strchr(s, '/') + 1;
        snprintf(out, n, "%.*s", (int)strcspn(s, "/."), s);
        return;
    }
    const char *b = base_name(file);
    snprintf(out, n, "%.*s", (int)strcspn(b, "."), b);
}

/* A native stack (perf_event's: no Python on the thread) as one activity per place: its innermost
 * named function with its library, else the innermost frame's library ("in libcudnn_graph.so.9":
 * PyTorch's autograd thread autotuning, its frames stripped, made as many activities as
 * offsets, none of them in the list). */
static void ha_native_site(const cta_model *m, const cta_proc *p, const uint32_t *frames,
                           uint32_t n, char *out, size_t len)
{
    ct_rec_frame first = {0};
    for (uint32_t i = 0; i < n; i++) {
        ct_rec_frame fr = {0};
        if (ct_reader_frame(m->rd, p->file, frames[i], &fr) != 0)
            continue;
        if (!first.module)
            first = fr;
        if (fr.function) {
            char t1[CT_STRTMP], t2[CT_STRTMP];
            snprintf(out, len, "%s (%s)", ct_reader_str(m->rd, p->file, fr.function, t1),
                     base_name(fr.module ? ct_reader_str(m->rd, p->file, fr.module, t2) : "?"));
            return;
        }
    }
    char t[CT_STRTMP];
    snprintf(out, len, "in %s", first.module ? base_name(ct_reader_str(m->rd, p->file, first.module, t))
                                             : "native code");
}

/* What key k shows; 0 when its frames could not be read (not an activity). */
static int ha_render(const cta_model *m, const cta_proc *p, const ha_key *k, ha_act *a)
{
    memset(a, 0, sizeof *a);
    if (k->flags & CT_TS_READ_FAILED)
        return 0;
    char tmp[CT_STRTMP];
    if (k->function)
        snprintf(a->call, sizeof a->call, "%s",
                 cta_api_display_name(ct_reader_str(m->rd, p->file, k->function, tmp)));
    const uint32_t *frames;
    uint32_t n;
    if (!k->stack || k->stack >= p->nstacks ||
        ct_reader_stack(m->rd, p->file, p->stack_ids[k->stack], &frames, &n) != 0 || !n) {
        snprintf(a->site, sizeof a->site, "(no stack)");
        return 1;
    }
    if (k->flags & CT_TS_NATIVE_LAST) {
        /* no Python on the thread: where it last called CUDA, not where it is */
        char s[160];
        cta_model_site_text(m, p, k->stack, s, sizeof s, 3);
        snprintf(a->site, sizeof a->site, "native code after its CUDA call at %s", s);
        return 1;
    }
    int loader = 0;
    /* in: the innermost Python frame; stage: in a loader worker, the frame its fetch called
     * (the Dataset's __getitem__, the collate function), under which in runs */
    ct_rec_frame in = {0}, prev = {0}, stage = {0};
    char imported[96] = "";
    for (uint32_t i = 0; i < n; i++) {
        ct_rec_frame fr = {0};
        if (ct_reader_frame(m->rd, p->file, frames[i], &fr) != 0 || fr.kind != CT_FRAME_PYTHON)
            continue;
        char t2[CT_STRTMP], t3[CT_STRTMP];
        const char *file = fr.module ? ct_reader_str(m->rd, p->file, fr.module, t2) : "";
        if (strstr(file, "torch/utils/data/"))
            loader = 1;
        if ((k->flags & CT_TS_WORKER) && !stage.function && prev.function &&
            strstr(file, "torch/utils/data/_utils/fetch.py"))
            stage = prev;
        prev = fr;
        if (!in.function)
            in = fr;
        if (!imported[0] && !strcmp(ct_reader_str(m->rd, p->file, fr.function, t3), "<module>"))
            ha_package(file, imported, sizeof imported);
    }
    if (!cta_model_py_site(m, p, k->stack, a->site, sizeof a->site)) {
        /* no line of the program's own among the frames read (a deep import chain outgrows
         * them): the package being imported, as one activity, else the innermost frame */
        if (imported[0]) {
            snprintf(a->site, sizeof a->site, "importing %s", imported);
            return 1;
        }
        char t2[CT_STRTMP], t3[CT_STRTMP];
        if (in.function)
            snprintf(a->site, sizeof a->site, "%s:%u in %s",
                     base_name(in.module ? ct_reader_str(m->rd, p->file, in.module, t2) : "?"),
                     in.line, ct_reader_str(m->rd, p->file, in.function, t3));
        else
            ha_native_site(m, p, frames, n, a->site, sizeof a->site);
    }
    if (loader && k->state == 'S' && !k->function && !(k->flags & CT_TS_WORKER)) {
        snprintf(a->frame, sizeof a->frame, "waiting for the DataLoader");
        return 1;
    }
    if (in.function) {
        /* by function, not line: a framework function's lines are one activity */
        char t2[CT_STRTMP], t3[CT_STRTMP], at[200];
        const char *file = base_name(in.module ? ct_reader_str(m->rd, p->file, in.module, t2) : "?");
        const char *fn = ct_reader_str(m->rd, p->file, in.function, t3);
        snprintf(at, sizeof at, "%s:%u in %s", file, in.line, fn);
        /* a worker's stage before it, when another than the site's and the frame's own: what
         * of the loading the frame's work is ("fakedata.py in FakeData.__getitem__ <-
         * functional.py in to_tensor") */
        char t4[CT_STRTMP], t5[CT_STRTMP], st[200];
        const char *sfile = stage.module ? base_name(ct_reader_str(m->rd, p->file, stage.module, t4)) : "?";
        const char *sfn = stage.function ? ct_reader_str(m->rd, p->file, stage.function, t5) : "";
        snprintf(st, sizeof st, "%s:%u in %s", sfile, stage.line, sfn);
        int staged = stage.function && strcmp(st, a->site) &&
                     (stage.module != in.module || stage.function != in.function);
        if (strcmp(at, a->site) && staged)
            snprintf(a->frame, sizeof a->frame, "%s in %s <- %s in %s", sfile, sfn, file, fn);
        else if (strcmp(at, a->site))
            snprintf(a->frame, sizeof a->frame, "%s in %s", file, fn);
    }
    return 1;
}

static int by_count(const void *x, const void *y)
{
    const ha_act *a = x, *b = y;
    return a->us < b->us ? 1 : a->us > b->us ? -1 : strcmp(a->site, b->site);
}

#define HA_TOP 6

/* The activities of device d's idle time of cause cls in the gaps of span in the samples of
 * who, grouped and by share (at most HA_TOP, into out); the time (us) the cause's samples whose
 * frames were read stand for (the shares' whole), and in *unread that of those whose were not;
 * their samples in *samples. */
static uint64_t ha_activities(const cta_model *m, const cta_proc *p, int d, int cls, int who,
                              cta_span span, ha_act *out, int *nout, uint64_t *unread,
                              uint64_t *samples)
{
    *nout = 0;
    *unread = 0;
    *samples = 0;
    const ha_proc *h = HA(p);
    if (!h || d < 0 || d >= CTA_MAX_DEV || !h->dev[d].who[who].total[cls])
        return 0;
    const ha_set *x = &h->dev[d].who[who];
    size_t nk = cta_map_count(&h->keys), na = 0, cap = 0;
    uint64_t *us = cta_xmalloc((nk + 1) * sizeof *us, "the samples' time by activity");
    uint64_t total = ha_span_us(x, nk, cls, span, us, samples);
    ha_act *acts = NULL;
    cta_map by_text;
    cta_map_init(&by_text);
    for (size_t k = 0; k < nk && total; k++) {
        uint64_t c = us[k];
        if (!c)
            continue;
        ha_act a;
        if (!ha_render(m, p, &h->key[k], &a)) {
            *unread += c;
            continue;
        }
        char text[700];
        int len = snprintf(text, sizeof text, "%s\n%s\n%s", a.site, a.frame, a.call);
        int added;
        uint32_t i = cta_map_get(&by_text, text, (size_t)len, &added);
        if (added) {
            cta_grow(&acts, &cap, i + 1, sizeof *acts);
            acts[i] = a;
            na = i + 1;
        }
        acts[i].us += c;
        acts[i].in_state[state_of(h->key[k].state)] += c;
    }
    cta_map_free(&by_text);
    free(us);
    if (na)
        qsort(acts, na, sizeof *acts, by_count);
    for (size_t i = 0; i < na && i < HA_TOP; i++)
        out[(*nout)++] = acts[i];
    free(acts);
    return total - *unread;
}

/* The state most of an activity's samples were in. */
static const char *ha_state(const ha_act *a)
{
    int best = 0;
    for (int s = 1; s < HA_STATES; s++)
        if (a->in_state[s] > a->in_state[best])
            best = s;
    return ha_state_words[best];
}

/* An activity as said: "in CALL at SITE <- FRAME (STATE)". */
static void ha_line(char *out, size_t n, const ha_act *a)
{
    snprintf(out, n, "%s%s%s%s%s%s (%s)", a->call[0] ? "in " : "", a->call,
             a->call[0] ? " at " : "", a->site, a->frame[0] ? " <- " : "", a->frame, ha_state(a));
}

/* Where the samples' native stacks came from, when some had one (a thread without Python):
 * NULL when none did. */
static const char *ha_native(const ha_proc *h)
{
    if (!(h->flags & (CT_TS_NATIVE_LAST | CT_TS_NATIVE_PERF)))
        return NULL;
    return h->flags & CT_TS_PERF ? "perf_event user-stack sampling"
                                 : "only the stack of the thread's last CUDA call";
}

/* The loader workers' activities of the idle time of cause cls (into a, as ha_activities):
 * only in data-loading gaps, where they say why the batches were late. */
static uint64_t ha_worker_activities(const cta_model *m, const cta_proc *p, int d, int cls,
                                     cta_span span, ha_act *a, int *n, uint64_t *unread,
                                     uint64_t *samples)
{
    *n = 0;
    *unread = 0;
    *samples = 0;
    return cls == CTA_GAP_STARVE ? ha_activities(m, p, d, cls, HA_WORKERS, span, a, n, unread, samples)
                                 : 0;
}

/* One list of activities as the summary says them, under its title (up to its samples). */
static void ha_list_text(FILE *f, const char *indent, const char *title, uint64_t samples,
                         uint64_t unread, const char *native, const ha_act *a, int n, uint64_t total)
{
    char b[32], line[700];
    fprintf(f, "%s%s, %llu samples", indent, title, (unsigned long long)samples);
    if (unread)
        fprintf(f, "; %s of them stand for frames that changed as they were read",
                cta_fmt_ns(b, 1e3 * (double)unread));
    if (native)
        fprintf(f, "; native stacks: %s", native);
    fprintf(f, "):\n");
    for (int i = 0; i < n; i++) {
        ha_line(line, sizeof line, &a[i]);
        fprintf(f, "%s  %5.1f%%  %s\n", indent, 100.0 * (double)a[i].us / (double)total, line);
    }
}

static void ha_gap_text(FILE *f, const cta_model *m, const cta_proc *p, int d, int cls,
                        cta_span span, const char *indent)
{
    ha_act a[HA_TOP];
    int n;
    uint64_t unread, samples, total = ha_activities(m, p, d, cls, HA_FEEDER, span, a, &n, &unread,
                                                    &samples);
    if (!total)
        return;
    ha_list_text(f, indent, "where the host was (the thread that last fed the GPU", samples, unread,
                 ha_native(HA(p)), a, n, total);
    char title[120];
    snprintf(title, sizeof title,
             "where the loader workers were (%u sampled in the run; their time together",
             HA(p)->workers);
    if ((total = ha_worker_activities(m, p, d, cls, span, a, &n, &unread, &samples)))
        ha_list_text(f, indent, title, samples, unread, NULL, a, n, total);
}

int cta_hostact_describe(const cta_model *m, const cta_proc *p, const ct_rec_thread_sample *s,
                         char *out, size_t n)
{
    uint32_t i = s->stack ? cta_map_find(&p->stack_idx, &s->stack, sizeof s->stack) : 0;
    ha_key k = {i == UINT32_MAX ? 0 : s->stack ? i + 1 : 0, s->function, s->state, s->flags};
    ha_act a;
    if (!ha_render(m, p, &k, &a)) {
        snprintf(out, n, "(frames changed as they were read) (%s)",
                 ha_state_words[state_of(s->state)]);
        return 0;
    }
    a.in_state[state_of(s->state)] = 1;
    ha_line(out, n, &a);
    return 1;
}

/* The entries of one list of host_activity[] (who: NULL for the thread that fed the GPU). */
static void ha_list_json(cta_json *j, const char *who, const ha_act *a, int n, uint64_t total)
{
    for (int i = 0; i < n; i++) {
        cta_json_obj(j);
        if (who)
            CTA_JK_STR(j, "who", who);
        CTA_JK_NUM(j, "share", (double)a[i].us / (double)total);
        CTA_JK_STR(j, "state", ha_state(&a[i]));
        CTA_JK_STR(j, "site", a[i].site);
        CTA_JK_STR(j, "frame", a[i].frame);
        cta_json_key(j, "call");
        if (a[i].call[0])
            cta_json_str(j, a[i].call);
        else
            cta_json_null(j);
        CTA_JK_U64(j, "sampled_ns", 1000 * a[i].us);
        cta_json_end_obj(j);
    }
}

static void ha_gap_json(cta_json *j, const cta_model *m, const cta_proc *p, int d, int cls,
                        cta_span span)
{
    ha_act a[HA_TOP], w[HA_TOP];
    int n, nw;
    uint64_t unread, wunread, samples, wsamples,
        total = ha_activities(m, p, d, cls, HA_FEEDER, span, a, &n, &unread, &samples);
    if (!total)
        return;
    uint64_t wtotal = ha_worker_activities(m, p, d, cls, span, w, &nw, &wunread, &wsamples);
    CTA_JK_U64(j, "host_samples", samples);
    CTA_JK_U64(j, "host_sampled_ns", 1000 * total);
    CTA_JK_U64(j, "host_unread_ns", 1000 * unread);
    const char *native = ha_native(HA(p));
    if (native)
        CTA_JK_STR(j, "host_native_stacks", HA(p)->flags & CT_TS_PERF ? "perf_event" : "last_cuda_call");
    if (wtotal) {
        CTA_JK_U64(j, "worker_samples", wsamples);
        CTA_JK_U64(j, "worker_sampled_ns", 1000 * wtotal);
        CTA_JK_U64(j, "worker_unread_ns", 1000 * wunread);
    }
    cta_json_key(j, "host_activity");
    cta_json_arr(j);
    ha_list_json(j, NULL, a, n, total);
    if (wtotal)
        ha_list_json(j, "loader workers", w, nw, wtotal);
    cta_json_end_arr(j);
}

/* The running activity holding most of the loader workers' sampled time in the cause's gaps
 * (data loading): "FRAME (under SITE)", the work first, then the program's line it runs under
 * (for a worker, the loop that started it); its share of that time. The feeding thread's are
 * not the loading's where workers load: it waits for them. */
static int ha_gap_burning(const cta_model *m, const cta_proc *p, int d, int cls, cta_span span,
                          char *out, size_t n, double *share)
{
    ha_act a[HA_TOP];
    int na;
    uint64_t unread, samples, total = ha_worker_activities(m, p, d, cls, span, a, &na, &unread, &samples);
    for (int i = 0; total && i < na; i++)
        if (!strcmp(ha_state(&a[i]), ha_state_words[HA_RUNNING])) {
            if (a[i].frame[0])
                snprintf(out, n, "%s (under %s)", a[i].frame, a[i].site);
            else
                snprintf(out, n, "%s", a[i].site);
            *share = (double)a[i].us / (double)total;
            return 1;
        }
    return 0;
}

const cta_feature cta_hostact_feature = {
    .name = "hostact",
    .types = 1ull << CT_REC_THREAD_SAMPLE,
    .record = ha_record,
    .point = ha_point,
    .loading = ha_loading,
    .gap = ha_gap,
    .proc_free = ha_proc_free,
    .gap_text = ha_gap_text,
    .gap_json = ha_gap_json,
    .gap_burning = ha_gap_burning,
};
