/* The reference model (contract in refmodel.h): every record in memory, everything sorted. */
#include "refmodel.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cttrace.h"

const char *const rm_split_names[RM_NSPLIT] = {"idle_in_api_ns", "idle_blocked_ns",
                                               "idle_host_compute_ns", "idle_host_wait_ns",
                                               "idle_host_unknown_ns"};
const char *const rm_gap_names[RM_NGAP] = {"data-loading", "after-sync", "after-sync-copy",
                                           "launch", "host"};

#define NDEV 16

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        abort();
    return p;
}
#define PUSH(arr, n, cap, val)                                                                 \
    do {                                                                                       \
        if ((n) == (cap)) {                                                                    \
            (cap) = (cap) ? 2 * (cap) : 64;                                                    \
            (arr) = xrealloc((arr), (cap) * sizeof *(arr));                                    \
        }                                                                                      \
        (arr)[(n)++] = (val);                                                                  \
    } while (0)

typedef struct { uint64_t s, e, corr, parent; uint32_t tid, fn, result, driver; } api_t;
typedef struct { uint64_t s, e, corr; int dev, bounded; } gpu_t;
typedef struct { uint64_t s, e; uint32_t kind; } sync_t;
typedef struct { uint64_t t, cpu; uint32_t tid; size_t order; } cpu_t;
typedef struct { uint64_t corr, ts; uint32_t type; ct_rec_launch l; ct_rec_copy c; } det_t;

typedef struct {
    uint32_t pid;
    api_t *api; size_t napi, capi;
    gpu_t *gpu; size_t ngpu, cgpu;
    sync_t *sy; size_t nsy, csy;
    cpu_t *cpu; size_t ncpu, ccpu;
    det_t *det; size_t ndet, cdet;
    ct_rec_device prop[NDEV]; /* each device's last DEVICE record */
    uint8_t have_prop[NDEV];
} file_t;

/* ---- small sorting helpers -------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_det(const void *a, const void *b) { return cmp_u64(a, b); } /* corr first */
static int cmp_api_corr(const void *a, const void *b)
{
    const api_t *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}
static int cmp_cpu(const void *a, const void *b)
{
    const cpu_t *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}
static size_t lower(const uint64_t *v, size_t n, uint64_t x) /* first index with v[i] >= x */
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}
static const api_t *find_call(const api_t *v, size_t n, uint64_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m].corr < corr)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < n && v[lo].corr == corr ? &v[lo] : NULL;
}
static const det_t *find_det(const file_t *f, uint64_t corr)
{
    size_t lo = 0, hi = f->ndet;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (f->det[m].corr < corr)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < f->ndet && f->det[lo].corr == corr ? &f->det[lo] : NULL;
}

/* ---- tables ------------------------------------------------------------------------------- */

static rm_stat *stat_of(rm_stat **arr, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].name, name))
            return &(*arr)[i];
    *arr = xrealloc(*arr, (*n + 1) * sizeof **arr);
    rm_stat *s = &(*arr)[(*n)++];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    s->min = UINT64_MAX;
    return s;
}
static void stat_add(rm_stat *s, uint64_t v)
{
    PUSH(s->v, s->n, s->cap, v);
    s->total += v;
    if (v < s->min)
        s->min = v;
    if (v > s->max)
        s->max = v;
}

/* The row of s's end-bounded values (made on first use). */
static rm_stat *bounded_of(rm_stat *s)
{
    if (!s->bnd) {
        s->bnd = calloc(1, sizeof *s->bnd);
        if (!s->bnd)
            abort();
        s->bnd->min = UINT64_MAX;
    }
    return s->bnd;
}

const rm_stat *rm_shown(const rm_stat *s)
{
    return s->n || !s->bnd ? s : s->bnd;
}

uint64_t rm_kernel_total(const rm_stat *s)
{
    uint64_t nb = rm_timed(s) - s->n;
    if (!s->n)
        return nb ? s->bnd->total : 0;
    /* nb * total / n to the nearest integer: quotient, then the remainder against half */
    unsigned __int128 num = (unsigned __int128)nb * s->total;
    uint64_t q = (uint64_t)(num / s->n), rem = (uint64_t)(num % s->n);
    return s->total + q + (2 * (unsigned __int128)rem >= s->n);
}

void rm_middle(const rm_stat *s, uint64_t *lo, uint64_t *hi)
{
    *lo = *hi = 0;
    if (!s->n)
        return;
    uint64_t *v = malloc(s->n * sizeof *v);
    if (!v)
        abort();
    memcpy(v, s->v, s->n * sizeof *v);
    qsort(v, s->n, sizeof *v, cmp_u64);
    *lo = v[(s->n - 1) / 2];
    *hi = v[s->n / 2];
    free(v);
}

static const char *op_name(const ct_rec_copy *c)
{
    if (c->op == CT_COPY_MEMSET)
        return "memset";
    switch (c->dir) {
    case CT_DIR_HTOD: return "H2D";
    case CT_DIR_DTOH: return "D2H";
    case CT_DIR_PEER: return "P2P";
    case CT_DIR_HTOH: return "H2H";
    default: return "D2D";
    }
}
static const char *host_kind(const ct_rec_copy *c)
{
    if (c->op == CT_COPY_MEMSET)
        return "none";
    int pg, pn;
    if (c->dir == CT_DIR_HTOD) {
        pg = c->src_kind == CT_MEMKIND_PAGEABLE;
        pn = c->src_kind == CT_MEMKIND_PINNED;
    } else if (c->dir == CT_DIR_DTOH) {
        pg = c->dst_kind == CT_MEMKIND_PAGEABLE;
        pn = c->dst_kind == CT_MEMKIND_PINNED;
    } else {
        pg = c->src_kind == CT_MEMKIND_PAGEABLE || c->dst_kind == CT_MEMKIND_PAGEABLE;
        pn = c->src_kind == CT_MEMKIND_PINNED || c->dst_kind == CT_MEMKIND_PINNED;
    }
    return pg ? "pageable" : pn ? "pinned" : "none";
}

/* libstdc++'s demangler: the reference shows kernel names as the user wrote them too */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static void kernel_name(const char *recorded, char *out, size_t len)
{
    int status = -1;
    char *d = strncmp(recorded, "_Z", 2) ? NULL : __cxa_demangle(recorded, NULL, NULL, &status);
    snprintf(out, len, "%s", d && status == 0 ? d : recorded);
    free(d);
}

/* nvcc 13 compiles kernel<<<...>>> into calls of these entry points of libcudart, which the
 * tracer records as it intercepted them (../shared/reference/nvcc-13.0-host-abi.txt) */
static const char *api_name(const char *recorded)
{
    static const char *const internal[] = {"__cudaLaunchKernel", "__cudaLaunchKernel_ptsz"};
    for (size_t i = 0; i < sizeof internal / sizeof *internal; i++)
        if (!strcmp(recorded, internal[i]))
            return "cudaLaunchKernel";
    return recorded;
}

/* A launch of a kernel row: counted, its host time, the earliest launch's configuration. */
static void launch_add(rm_stat *s, const det_t *d, const api_t *call)
{
    const ct_rec_launch *l = &d->l;
    int same = s->recorded && !memcmp(s->grid, l->grid, sizeof s->grid) &&
               !memcmp(s->block, l->block, sizeof s->block);
    if (s->recorded && !same)
        s->vary = 1;
    if (!s->recorded || d->ts < s->first_ts) {
        memcpy(s->grid, l->grid, sizeof s->grid);
        memcpy(s->block, l->block, sizeof s->block);
        s->first_ts = d->ts;
        s->config_tie = 0;
    } else if (d->ts == s->first_ts && !same) {
        s->config_tie = 1;
    }
    s->recorded++;
    if (call)
        s->launch_ns += call->e - call->s;
}

/* The API category the breakdown needs: a synchronous copy or set (its return ends a copy's
 * wait); by name, as the JSON's API table names calls. */
static int sync_copy_call(const char *name)
{
    return (strstr(name, "Memcpy") || strstr(name, "Memset")) && !strstr(name, "Async");
}

/* ---- reading ------------------------------------------------------------------------------ */

static void quiet(void *ctx, const char *path, const char *msg)
{
    (void)ctx, (void)path, (void)msg;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The trace files of path: itself, or a directory's *.cutrace files by name. */
static char **list_paths(const char *path, size_t *n)
{
    struct stat st;
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l < 9 || strcmp(e->d_name + l - 8, ".cutrace"))
                continue;
            char *p = malloc(strlen(path) + l + 2);
            if (!p)
                abort();
            sprintf(p, "%s/%s", path, e->d_name);
            PUSH(v, *n, cap, p);
        }
        if (d)
            closedir(d);
        qsort(v, *n, sizeof *v, cmp_str);
    } else {
        PUSH(v, *n, cap, strdup(path));
    }
    return v;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static int dev_of(uint32_t device) { return device < NDEV ? (int)device : NDEV - 1; }

static void read_all(ct_reader *rd, file_t *files, rm_result *res)
{
    ct_rec r;
    size_t order = 0;
    while (ct_reader_next(rd, &r) == 1) {
        file_t *f = &files[r.file];
        if (r.type >= CT_REC_API && r.type < CT_REC_TYPE_LIMIT) {
            uint64_t first = r.type == CT_REC_API ? r.u.api.start : r.type == CT_REC_GPU ? r.u.gpu.start
                           : r.type == CT_REC_SYNC ? r.u.sync.start : r.ts;
            res->t0 = min_u64(res->t0, min_u64(first, r.ts));
        }
        switch (r.type) {
        case CT_REC_API: {
            api_t a = {.s = min_u64(r.u.api.start, r.ts), .e = r.ts, .corr = r.u.api.corr,
                       .parent = r.u.api.parent, .tid = r.tid, .fn = r.u.api.function,
                       .result = r.u.api.result, .driver = r.u.api.flags & CT_API_DRIVER};
            PUSH(f->api, f->napi, f->capi, a);
            break;
        }
        case CT_REC_GPU: {
            gpu_t g = {.s = min_u64(r.u.gpu.start, r.ts), .e = r.ts, .corr = r.u.gpu.corr,
                       .dev = dev_of(r.u.gpu.device), .bounded = (r.u.gpu.flags & CT_GPU_END_BOUND) != 0};
            PUSH(f->gpu, f->ngpu, f->cgpu, g);
            break;
        }
        case CT_REC_SYNC: {
            sync_t s = {.s = min_u64(r.u.sync.start, r.ts), .e = r.ts, .kind = r.u.sync.kind};
            PUSH(f->sy, f->nsy, f->csy, s);
            break;
        }
        case CT_REC_CPU: {
            cpu_t c = {.t = r.ts, .cpu = r.u.cpu.user_ns + r.u.cpu.sys_ns, .tid = r.u.cpu.tid,
                       .order = order++};
            PUSH(f->cpu, f->ncpu, f->ccpu, c);
            break;
        }
        case CT_REC_DEVICE:
            f->prop[dev_of(r.u.device.device)] = r.u.device;
            f->have_prop[dev_of(r.u.device.device)] = 1;
            break;
        case CT_REC_LAUNCH:
        case CT_REC_COPY: {
            /* work enqueued while its stream was captured into a graph did not execute */
            if (r.type == CT_REC_LAUNCH ? r.u.launch.flags & CT_LAUNCH_CAPTURED
                                        : r.u.copy.flags & CT_COPY_CAPTURED)
                break;
            det_t d = {.type = r.type, .ts = r.ts};
            if (r.type == CT_REC_LAUNCH) {
                d.l = r.u.launch;
                d.corr = d.l.corr;
            } else {
                d.c = r.u.copy;
                d.corr = d.c.corr;
            }
            PUSH(f->det, f->ndet, f->cdet, d);
            break;
        }
        default:
            break;
        }
    }
}

/* ---- the breakdown -------------------------------------------------------------------------- */

/* What one process's host was doing, on the sorted time points T[0..nt): segment i is
 * (T[i], T[i+1]). */
typedef struct {
    uint64_t *T;
    size_t nt;
    int64_t *api_cnt, *sync_cnt; /* intervals covering segment i */
    uint32_t *last_tid;          /* thread of the latest API call event at or before T[i] (0) */
    cpu_t *rates;                /* per thread, sorted: (t, rate bits in cpu) rate points */
    size_t nrates;
    uint64_t *send;              /* ends of synchronizations (sorted) ... */
    size_t nsend;
    uint64_t *cend;              /* ... and of copies' waits (sorted) */
    size_t ncend;
} host_t;

typedef struct { uint64_t t; int rank; uint32_t tid; size_t order; } ev_t;
static int cmp_ev(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static size_t tindex(const host_t *h, uint64_t t) { return lower(h->T, h->nt, t); }

static void host_build(host_t *h, const file_t *f, const ct_reader *rd, uint32_t fileno)
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
    qsort(c, f->ncpu, sizeof *c, cmp_cpu);
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
    qsort(h->T, h->nt, sizeof *h->T, cmp_u64);
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
        ev_t b = {.t = a->s, .rank = 1, .tid = a->tid, .order = i};
        ev_t e = {.t = a->e, .rank = a->e == a->s ? 2 : 0, .tid = a->tid, .order = i};
        PUSH(ev, nev, evcap, b);
        PUSH(ev, nev, evcap, e);
        char tmp[CT_STRTMP];
        if (sync_copy_call(ct_reader_str(rd, fileno, a->fn, tmp)))
            PUSH(h->cend, h->ncend, ccap, a->e);
    }
    for (size_t i = 0; i < f->nsy; i++) {
        const sync_t *s = &f->sy[i];
        if (s->kind == CT_SYNC_STREAM_WAIT_EVENT)
            continue;
        h->sync_cnt[tindex(h, s->s)]++;
        h->sync_cnt[tindex(h, s->e)]--;
        if (s->kind == CT_SYNC_MEMCPY)
            PUSH(h->cend, h->ncend, ccap, s->e);
        else
            PUSH(h->send, h->nsend, scap, s->e);
    }
    for (size_t i = 1; i < h->nt; i++) {
        h->api_cnt[i] += h->api_cnt[i - 1];
        h->sync_cnt[i] += h->sync_cnt[i - 1];
    }
    qsort(ev, nev, sizeof *ev, cmp_ev);
    size_t k = 0;
    uint32_t last = 0;
    for (size_t i = 0; i < h->nt; i++) {
        while (k < nev && ev[k].t <= h->T[i])
            last = ev[k++].tid;
        h->last_tid[i] = last;
    }
    free(ev);
    if (h->send)
        qsort(h->send, h->nsend, sizeof *h->send, cmp_u64);
    if (h->cend)
        qsort(h->cend, h->ncend, sizeof *h->cend, cmp_u64);
}

static void host_free(host_t *h)
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
static int any_in(const uint64_t *v, size_t n, uint64_t a, uint64_t b)
{
    size_t i = lower(v, n, a);
    return i < n && v[i] <= b;
}

static int by_length(const void *a, const void *b)
{
    const rm_gap *x = a, *y = b;
    if (x->len != y->len)
        return x->len > y->len ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void gap_done(rm_breakdown *b, rm_gap *g, double rate_ns, uint64_t known, rm_gap **all,
                     size_t *n, size_t *cap)
{
    g->split[RM_COMPUTE] = (uint64_t)(rate_ns + 0.5);
    if (g->split[RM_COMPUTE] > known)
        g->split[RM_COMPUTE] = known;
    g->split[RM_WAIT] = known - g->split[RM_COMPUTE];
    for (int k = 0; k < RM_NSPLIT; k++)
        b->split[k] += g->split[k];
    b->gap_count[g->cause]++;
    b->gap_ns[g->cause] += g->len;
    PUSH(*all, *n, *cap, *g);
}

static void breakdown(rm_breakdown *b, const file_t *f, const host_t *h, int dev, uint64_t t0)
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
        const det_t *d = find_det(f, g->corr);
        if (d && d->type == CT_REC_COPY && d->c.op == CT_COPY_MEMCPY && d->c.dir == CT_DIR_HTOD)
            h2d[a] = 1;
        ws = min_u64(ws, g->s);
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
            uint64_t outside = g.split[RM_UNKNOWN] + known;
            if (h2d[i] && outside * 2 >= g.len)
                g.cause = RM_GAP_STARVE;
            else if (any_in(h->send, h->nsend, g.start, t))
                g.cause = RM_GAP_SYNC;
            else if (any_in(h->cend, h->ncend, g.start, t))
                g.cause = RM_GAP_SYNCCPY;
            else if (g.split[RM_IN_API] * 2 >= g.len)
                g.cause = RM_GAP_LAUNCH;
            else
                g.cause = RM_GAP_HOST;
            gap_done(b, &g, rate_ns, known, &all, &nall, &cap);
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

/* ---- the tables ------------------------------------------------------------------------------ */

/* name (the kernel's shown name) prefixed with the launch's configuration, in place */
static void variant_name(const ct_rec_launch *l, char *name, size_t len)
{
    char *kernel = strdup(name);
    if (!kernel)
        abort();
    snprintf(name, len, "<<<(%u,%u,%u),(%u,%u,%u)>>> %s", l->grid[0], l->grid[1], l->grid[2],
             l->block[0], l->block[1], l->block[2], kernel);
    free(kernel);
}

/* Peaks in bytes/s (JSON.md processes[].devices): DDR memory moves two words per clock; a PCIe
 * lane's usable rate after line encoding (8b/10b to gen 2, 128b/130b from gen 3, FLIT mode in
 * gen 6) as the specifications publish it. */
static double mem_peak(const ct_rec_device *p)
{
    return 2.0 * (double)p->mem_clock_khz * 1000.0 * (double)p->mem_bus_bits / 8.0;
}
static double link_peak(const ct_rec_device *p)
{
    static const double lane_mbps[] = {250, 500, 985, 1969, 3938, 7563}; /* gen 1..6 */
    if ((p->link_kind != CT_LINK_PCIE && p->link_kind != CT_LINK_UNKNOWN) || p->link_gen < 1 ||
        p->link_gen > 6)
        return 0;
    return lane_mbps[p->link_gen - 1] * 1e6 * (double)p->link_width;
}

/* A copy of row s at ts on device dev of file f: the row's peak if it is the earliest so far. */
static void copy_peak(rm_stat *s, const ct_rec_copy *c, uint64_t ts, const file_t *f, int dev)
{
    if (!f->have_prop[dev])
        return;
    int memory = c->op == CT_COPY_MEMSET || c->dir == CT_DIR_DTOD;
    double peak = memory ? mem_peak(&f->prop[dev]) : link_peak(&f->prop[dev]);
    if (peak <= 0)
        return;
    if (s->peak_bps <= 0 || ts < s->peak_ts) {
        s->peak_bps = peak;
        s->peak_ts = ts;
        s->peak_tie = 0;
    } else if (ts == s->peak_ts && peak != s->peak_bps) {
        s->peak_tie = 1;
    }
}

static rm_stat *copy_row(rm_result *res, const ct_rec_copy *c)
{
    char key[32];
    snprintf(key, sizeof key, "%s/%s", op_name(c), host_kind(c));
    return stat_of(&res->copies, &res->ncopies, key);
}

/* One file's rows, and the operations of each of its devices with those never timed. */
static void tables(rm_result *res, const file_t *f, const ct_reader *rd, uint32_t fi,
                   uint64_t *ops, uint64_t *untimed)
{
    char tmp[CT_STRTMP], name[4096];
    uint64_t *timed = malloc((f->ngpu + 1) * sizeof *timed);
    api_t *calls = malloc((f->napi + 1) * sizeof *calls);
    if (!timed || !calls)
        abort();
    for (size_t i = 0; i < f->ngpu; i++)
        timed[i] = f->gpu[i].corr;
    qsort(timed, f->ngpu, sizeof *timed, cmp_u64);
    memcpy(calls, f->api, f->napi * sizeof *calls);
    qsort(calls, f->napi, sizeof *calls, cmp_api_corr);
    for (size_t i = 0; i < f->ndet; i++) {
        const det_t *d = &f->det[i];
        int dev;
        if (d->type == CT_REC_LAUNCH) {
            const api_t *call = find_call(calls, f->napi, d->corr);
            kernel_name(ct_reader_str(rd, fi, d->l.function, tmp), name, sizeof name);
            launch_add(stat_of(&res->kernels, &res->nkernels, name), d, call);
            variant_name(&d->l, name, sizeof name);
            launch_add(stat_of(&res->variants, &res->nvariants, name), d, call);
            dev = dev_of(d->l.device);
        } else {
            rm_stat *s = copy_row(res, &d->c);
            s->recorded++;
            s->bytes += d->c.bytes;
            copy_peak(s, &d->c, d->ts, f, dev_of(d->c.device));
            if (d->c.op == CT_COPY_MEMCPY && d->c.dir == CT_DIR_HTOH)
                continue; /* no GPU work */
            dev = dev_of(d->c.device);
        }
        size_t k = lower(timed, f->ngpu, d->corr);
        ops[dev]++;
        untimed[dev] += k == f->ngpu || timed[k] != d->corr;
    }
    for (size_t i = 0; i < f->ngpu; i++) {
        const det_t *d = find_det(f, f->gpu[i].corr);
        uint64_t dur = f->gpu[i].e - f->gpu[i].s;
        int bd = f->gpu[i].bounded;
        if (d && d->type == CT_REC_LAUNCH) {
            kernel_name(ct_reader_str(rd, fi, d->l.function, tmp), name, sizeof name);
            rm_stat *k = stat_of(&res->kernels, &res->nkernels, name);
            stat_add(bd ? bounded_of(k) : k, dur);
            variant_name(&d->l, name, sizeof name);
            k = stat_of(&res->variants, &res->nvariants, name);
            stat_add(bd ? bounded_of(k) : k, dur);
        } else if (d && d->type == CT_REC_COPY) {
            rm_stat *s = copy_row(res, &d->c);
            if (bd)
                s = bounded_of(s);
            stat_add(s, dur);
            s->timed_bytes += d->c.bytes;
        }
    }
    for (size_t i = 0; i < f->napi; i++) {
        rm_stat *s = stat_of(&res->api, &res->napi, api_name(ct_reader_str(rd, fi, f->api[i].fn, tmp)));
        stat_add(s, f->api[i].e - f->api[i].s);
        s->failures += f->api[i].result != 0;
        s->driver = f->api[i].driver != 0;
        res->layer_ns[s->driver] += f->api[i].e - f->api[i].s;
    }
    free(timed);
    free(calls);
}

/* ---- the whole trace ------------------------------------------------------------------------ */

rm_result *rm_compute(const char *path, char *err, size_t errlen)
{
    size_t np;
    char **paths = list_paths(path, &np);
    ct_reader_opts o = {.warn = quiet, .file_order = 1};
    ct_reader *rd = NULL;
    if (np == 0 || ct_reader_open(&rd, (const char *const *)paths, np, &o, err, errlen) < 0) {
        if (np == 0)
            snprintf(err, errlen, "%s: no trace files", path);
        for (size_t i = 0; i < np; i++)
            free(paths[i]);
        free(paths);
        return NULL;
    }
    rm_result *res = calloc(1, sizeof *res);
    file_t *files = calloc(np, sizeof *files);
    if (!res || !files)
        abort();
    res->t0 = UINT64_MAX;
    read_all(rd, files, res);
    for (size_t fi = 0; fi < np; fi++) {
        file_t *f = &files[fi];
        const ct_header *hd = ct_reader_header(rd, (uint32_t)fi);
        f->pid = hd ? hd->pid : 0;
        qsort(f->det, f->ndet, sizeof *f->det, cmp_det);
        uint64_t ops[NDEV] = {0}, untimed[NDEV] = {0};
        tables(res, f, rd, (uint32_t)fi, ops, untimed);
        host_t h;
        host_build(&h, f, rd, (uint32_t)fi);
        for (int d = 0; d < NDEV; d++) {
            int has = untimed[d] > 0;
            for (size_t i = 0; i < f->ngpu && !has; i++)
                has = f->gpu[i].dev == d;
            if (ops[d] || f->have_prop[d]) {
                rm_devops o = {.pid = f->pid, .device = d, .ops = ops[d], .timed = ops[d] - untimed[d],
                               .have_prop = f->have_prop[d]};
                if (o.have_prop) {
                    o.mem_peak = mem_peak(&f->prop[d]);
                    o.link_peak = link_peak(&f->prop[d]);
                }
                res->devs = xrealloc(res->devs, (res->ndevs + 1) * sizeof *res->devs);
                res->devs[res->ndevs++] = o;
            }
            if (!has)
                continue;
            res->bd = xrealloc(res->bd, (res->nbd + 1) * sizeof *res->bd);
            rm_breakdown *b = &res->bd[res->nbd++];
            memset(b, 0, sizeof *b);
            b->pid = f->pid;
            b->device = d;
            b->ops = ops[d];
            b->untimed = untimed[d];
            if (!untimed[d])
                breakdown(b, f, &h, d, res->t0);
        }
        host_free(&h);
        free(f->api);
        free(f->gpu);
        free(f->sy);
        free(f->cpu);
        free(f->det);
    }
    free(files);
    ct_reader_close(rd);
    for (size_t i = 0; i < res->nkernels; i++)
        res->kernel_ns += rm_kernel_total(&res->kernels[i]);
    for (size_t i = 0; i < res->nvariants; i++)
        res->variant_ns += rm_kernel_total(&res->variants[i]);
    for (size_t i = 0; i < np; i++)
        free(paths[i]);
    free(paths);
    return res;
}

static void stats_free(rm_stat *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(s[i].name);
        free(s[i].v);
        if (s[i].bnd)
            free(s[i].bnd->v);
        free(s[i].bnd);
    }
    free(s);
}

void rm_free(rm_result *r)
{
    if (!r)
        return;
    free(r->bd);
    free(r->devs);
    stats_free(r->kernels, r->nkernels);
    stats_free(r->api, r->napi);
    stats_free(r->copies, r->ncopies);
    stats_free(r->variants, r->nvariants);
    free(r);
}
