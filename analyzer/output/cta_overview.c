#include "cta_overview.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_cli.h"
#include "cta_load.h"
#include "cta_model_int.h"

enum { TRACK_THREAD, TRACK_STREAM };

/* The sift-down of a binary heap of T whose top is the element `first` puts before the others
 * (the search's cursors by their next end, the kept slices by their start, latest first). */
#define CTA_OV_SIFT_DOWN(name, T, first)                                                    \
    static void name(T *h, size_t n, size_t i)                                             \
    {                                                                                      \
        for (;;) {                                                                         \
            size_t l = 2 * i + 1, m = i;                                                   \
            if (l < n && first(&h[l], &h[m]))                                              \
                m = l;                                                                     \
            if (l + 1 < n && first(&h[l + 1], &h[m]))                                      \
                m = l + 1;                                                                 \
            if (m == i)                                                                    \
                return;                                                                    \
            T t_ = h[i];                                                                   \
            h[i] = h[m];                                                                   \
            h[m] = t_;                                                                     \
            i = m;                                                                         \
        }                                                                                  \
    }

typedef struct {
    uint64_t start, end;
    uint64_t id;                  /* tid or stream */
    const char *name;             /* NULL: an NVTX range's, string nvtx_name (else nvtx_group) */
    uint32_t nvtx_name, nvtx_group;
    uint32_t file;
    uint8_t kind, dev, cat;
} slice;

struct cta_overview {
    uint32_t n;                   /* slices at most */
    uint32_t cap;                 /* of heap: grown as slices come (a file's part holds few) */
    uint64_t start, end;          /* the stretch, on the merged axis */
    int any;                      /* the traces hold a slice */
    slice *heap;                  /* the kept slices, a max-heap by start */
    uint32_t nheap;
    uint64_t total;               /* slices overlapping the stretch */
    uint64_t cut;                 /* the earliest start left out (UINT64_MAX: none) */
};

/* ---- pass 1: the stretch ------------------------------------------------------------------- */

/* A record that is a slice: its start (records are ordered by their time, a slice's end). */
static int slice_start(const ct_rec *r, uint64_t *start)
{
    uint64_t s;
    switch (r->type) {
    case CT_REC_API:
        if (r->u.api.parent)
            return 0;
        s = r->u.api.start;
        break;
    case CT_REC_GPU:
        s = r->u.gpu.start;
        break;
    case CT_REC_NVTX_RANGE:
        if (r->u.nvtx_range.flags & CT_NVTX_UNMATCHED)
            return 0;
        s = r->u.nvtx_range.start;
        break;
    default:
        return 0;
    }
    *start = s <= r->ts ? s : r->ts;
    return 1;
}

/* One file's slice ends in time order, compact: a file's records come in the order of their time,
 * so its ends mostly ascend and are kept as LEB128 deltas (a few bytes a slice, where every
 * file's decoding held at once would cost a chunk buffer per file); an end below the last one
 * (a damaged trace's late record) goes to a side list, sorted when the file is done. */
typedef struct {
    uint8_t *buf;
    size_t len, cap;
    uint64_t last;                /* the last end in buf */
    uint64_t *late;
    size_t nlate, late_cap;
    uint64_t count, first, max;   /* slices, earliest start, latest end */
    int rc;                       /* ct_reader_next_in's last answer */
} ov_ends;

typedef struct {
    ct_reader *rd;
    ov_ends *ends;
    uint32_t nfiles;
    uint32_t next;                /* the next file to take (atomic) */
} ov_find;

static void ends_add(ov_ends *e, uint64_t end)
{
    if (e->count++ && end < e->last) {
        if (e->nlate == e->late_cap) {
            e->late_cap = e->late_cap ? 2 * e->late_cap : 64;
            e->late = cta_xrealloc(e->late, e->late_cap * sizeof *e->late, "the overview's search");
        }
        e->late[e->nlate++] = end;
        return;
    }
    if (e->cap - e->len < 10) {
        e->cap = e->cap ? 2 * e->cap : 4096;
        e->buf = cta_xrealloc(e->buf, e->cap, "the overview's search");
    }
    uint64_t d = end - (e->count > 1 ? e->last : 0);
    do {
        e->buf[e->len++] = (uint8_t)(d & 0x7F) | (d > 0x7F ? 0x80 : 0);
        d >>= 7;
    } while (d);
    e->last = end;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A worker: takes the files in turn (distinct files of one reader read at once, ct_reader_next_in). */
static void *find_worker(void *arg)
{
    ov_find *f = arg;
    uint32_t file;
    while ((file = __atomic_fetch_add(&f->next, 1, __ATOMIC_RELAXED)) < f->nfiles) {
        ov_ends *e = &f->ends[file];
        e->first = UINT64_MAX;
        ct_rec r;
        while ((e->rc = ct_reader_next_in(f->rd, file, &r)) > 0) {
            uint64_t s;
            if (!slice_start(&r, &s))
                continue;
            e->first = s < e->first ? s : e->first;
            e->max = r.ts > e->max ? r.ts : e->max;
            ends_add(e, r.ts);
        }
        if (e->nlate)
            qsort(e->late, e->nlate, sizeof *e->late, by_u64);
    }
    return NULL;
}

/* A cursor over one sorted list of ends: a file's deltas or its late ends. */
typedef struct {
    const ov_ends *e;
    int late;
    size_t at;
    uint64_t v;
} ov_cursor;

static int cursor_next(ov_cursor *c)
{
    if (c->late) {
        if (c->at >= c->e->nlate)
            return 0;
        c->v = c->e->late[c->at++];
        return 1;
    }
    if (c->at >= c->e->len)
        return 0;
    uint64_t d = 0;
    for (int sh = 0; c->at < c->e->len; sh += 7) {
        uint8_t b = c->e->buf[c->at++];
        d |= (uint64_t)(b & 0x7F) << sh;
        if (!(b & 0x80))
            break;
    }
    c->v += d;
    return 1;
}

static int cursor_before(const ov_cursor *a, const ov_cursor *b) { return a->v < b->v; }
CTA_OV_SIFT_DOWN(cursor_down, ov_cursor, cursor_before)

cta_overview *cta_overview_find(const char *cmd, char *const *paths, int npaths, uint32_t n, int jobs)
{
    ct_reader *rd;
    if (cta_load_open(cmd, paths, npaths, 1, &rd) != CTA_EXIT_OK)
        return NULL;
    ov_find f = {.rd = rd, .nfiles = (uint32_t)ct_reader_nfiles(rd)};
    f.ends = cta_xmalloc(f.nfiles * sizeof *f.ends, "the overview's search");
    if ((uint32_t)jobs > f.nfiles)
        jobs = (int)f.nfiles;
    pthread_t *th = cta_xmalloc((size_t)jobs * sizeof *th, "the overview's search");
    int started = 0;
    while (started < jobs && pthread_create(&th[started], NULL, find_worker, &f) == 0)
        started++;
    if (!started)
        find_worker(&f);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    cta_overview *o = cta_xmalloc(sizeof *o, "the overview");
    o->n = n;
    o->cut = UINT64_MAX;
    /* the ends of every file in time order (a heap of the files' cursors); the ring holds the
     * ends of the last n slices, the oldest next to be replaced */
    ov_cursor *h = cta_xmalloc(2 * (size_t)f.nfiles * sizeof *h + 1, "the overview's search");
    size_t nh = 0;
    uint64_t seen = 0, first = UINT64_MAX, last = 0, best = UINT64_MAX;
    int failed = 0;
    for (uint32_t i = 0; i < f.nfiles; i++) {
        const ov_ends *e = &f.ends[i];
        if (e->rc < 0 && !failed) {
            fprintf(stderr, "cutrace %s: error: %s\n", cmd, ct_reader_error_in(rd, i));
            failed = 1;
        }
        first = e->count && e->first < first ? e->first : first;
        last = e->max > last ? e->max : last;
        for (int late = 0; late < 2; late++) {
            h[nh] = (ov_cursor){.e = e, .late = late};
            if (cursor_next(&h[nh]))
                nh++;
        }
    }
    for (size_t i = nh; i-- > 0;)
        cursor_down(h, nh, i);
    uint64_t *ring = failed ? NULL : cta_xmalloc((size_t)n * sizeof *ring, "the overview's search");
    while (ring && nh) {
        uint64_t end = h[0].v;
        if (!cursor_next(&h[0]))
            h[0] = h[--nh];
        cursor_down(h, nh, 0);
        ring[seen++ % n] = end;
        if (seen >= n && end - ring[seen % n] < best) {
            best = end - ring[seen % n];
            o->start = ring[seen % n];
            o->end = end;
        }
    }
    free(ring);
    free(h);
    for (uint32_t i = 0; i < f.nfiles; i++) {
        free(f.ends[i].buf);
        free(f.ends[i].late);
    }
    free(f.ends);
    ct_reader_close(rd);
    if (failed) {
        cta_overview_free(o);
        return NULL;
    }
    o->any = seen > 0;
    if (seen < n) {
        o->start = first;
        o->end = last;
    }
    return o;
}

/* ---- pass 2: the stretch's slices, observed as the model is built --------------------------- */

/* the kept slices: a max-heap by start, the one to leave out first on top */
static int later_start(const slice *a, const slice *b) { return a->start > b->start; }
CTA_OV_SIFT_DOWN(sift_down, slice, later_start)

/* A slice: kept if it overlaps the stretch and is among the n that start first. */
static void add(cta_overview *o, const slice *s)
{
    if (s->end < o->start || s->start > o->end)
        return;
    o->total++;
    if (o->nheap < o->n && o->nheap == o->cap) {
        o->cap = o->cap ? (o->cap > o->n / 2 ? o->n : 2 * o->cap) : 64 < o->n ? 64 : o->n;
        o->heap = cta_xrealloc(o->heap, (size_t)o->cap * sizeof *o->heap, "the overview's slices");
    }
    slice *h = o->heap;
    if (o->nheap < o->n) {
        uint32_t i = o->nheap++;
        for (; i > 0 && h[(i - 1) / 2].start < s->start; i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
        h[i] = *s;
        return;
    }
    uint64_t out = s->start;
    if (s->start < h[0].start) {
        out = h[0].start;
        h[0] = *s;
        sift_down(h, o->n, 0);
    }
    if (out < o->cut)
        o->cut = out;
}

static uint8_t dev_of(uint32_t device) { return (uint8_t)(device < CTA_MAX_DEV ? device : CTA_MAX_DEV - 1); }

static void on_api(void *ctx, cta_proc *p, const ct_rec *r, const char *name, uint32_t stack)
{
    (void)stack;
    if (r->u.api.parent)
        return;
    uint64_t start = r->u.api.start <= r->ts ? r->u.api.start : r->ts;
    cta_overview *o = ctx;
    if (r->ts < o->start || start > o->end)
        return;
    uint8_t c = cta_api_name_category(name);
    slice s = {.start = start, .end = r->ts, .id = r->tid, .name = name, .file = p->file,
               .kind = TRACK_THREAD,
               .cat = (c & CTA_CAT_SYNC) ? CTA_OV_SYNC : (c & CTA_CAT_MEM) ? CTA_OV_ALLOC : CTA_OV_API};
    add(o, &s);
}

static void on_gpu(void *ctx, cta_proc *p, const ct_rec_gpu *g, uint64_t end, const cta_call *c)
{
    static const char *const copies[] = {"memcpy", "memcpy H2D", "memcpy D2H", "memcpy D2D",
                                         "memcpy H2H", "memcpy P2P"};
    uint64_t start = g->start <= end ? g->start : end;
    cta_overview *o = ctx;
    if (end < o->start || start > o->end)
        return;
    slice s = {.start = start, .end = end, .id = g->stream, .file = p->file, .kind = TRACK_STREAM,
               .dev = dev_of(g->device)};
    int kind = c->is_launch ? CT_GPU_KERNEL
               : c->is_copy ? (c->copy->op == CT_COPY_MEMSET ? CT_GPU_MEMSET : CT_GPU_MEMCPY)
                            : (int)g->kind;
    s.cat = kind == CT_GPU_MEMCPY ? CTA_OV_MEMCPY : kind == CT_GPU_MEMSET ? CTA_OV_MEMSET : CTA_OV_KERNEL;
    s.name = c->is_launch ? c->kernel_name
             : kind == CT_GPU_MEMCPY ? copies[c->is_copy && c->copy->dir < 6 ? c->copy->dir : 0]
             : kind == CT_GPU_MEMSET ? "memset"
             : kind == CT_GPU_KERNEL ? "kernel" : "GPU work";
    add(o, &s);
}

static void on_nvtx(void *ctx, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_range *n = &r->u.nvtx_range;
    if (r->type != CT_REC_NVTX_RANGE || (n->flags & CT_NVTX_UNMATCHED))
        return;
    uint64_t start = n->start <= r->ts ? n->start : r->ts;
    cta_overview *o = ctx;
    if (r->ts < o->start || start > o->end)
        return;
    slice s = {.start = start, .end = r->ts, .id = n->start_tid, .nvtx_name = n->name,
               .nvtx_group = n->group, .file = p->file, .kind = TRACK_THREAD, .cat = CTA_OV_NVTX};
    add(o, &s);
}

cta_overview *cta_overview_part(const cta_overview *o)
{
    cta_overview *p = cta_xmalloc(sizeof *p, "the overview");
    *p = (cta_overview){.n = o->n, .start = o->start, .end = o->end, .any = o->any, .cut = UINT64_MAX};
    return p;
}

void cta_overview_merge(cta_overview *o, const cta_overview *part, const cta_model *m)
{
    for (uint32_t i = 0; i < part->nheap; i++) {
        slice s = part->heap[i];
        /* a kernel's name may be the part's own copy, freed with it: the merged model's */
        uint32_t k = s.cat == CTA_OV_KERNEL && s.name
                         ? cta_map_find(&m->kernel_names, s.name, strlen(s.name)) : UINT32_MAX;
        if (k != UINT32_MAX)
            s.name = cta_map_key(&m->kernel_names, k);
        add(o, &s);
    }
    o->total += part->total - part->nheap;
    if (part->cut < o->cut)
        o->cut = part->cut;
}

cta_observer cta_overview_observer(cta_overview *o)
{
    return (cta_observer){.ctx = o, .on_api = on_api, .on_gpu = on_gpu, .on_nvtx = on_nvtx};
}

/* ---- the JSON ------------------------------------------------------------------------------ */

static int by_start(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* A track, by one of its slices, and its index as interned */
typedef struct {
    const slice *s;
    uint32_t index;
} track_ref;

static int by_track(const void *a, const void *b)
{
    const slice *x = ((const track_ref *)a)->s, *y = ((const track_ref *)b)->s;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->kind != y->kind || x->dev != y->dev)
        return x->kind != y->kind ? x->kind - y->kind : x->dev - y->dev;
    return x->id < y->id ? -1 : x->id > y->id;
}

static const char *slice_name(const cta_model *m, const slice *s, char tmp[CT_STRTMP])
{
    if (s->name)
        return s->name;
    if (s->nvtx_name)
        return ct_reader_str(m->rd, s->file, s->nvtx_name, tmp);
    return s->nvtx_group ? ct_reader_str(m->rd, s->file, s->nvtx_group, tmp) : "(unnamed range)";
}

static void track_json(cta_json *j, const cta_model *m, const slice *s)
{
    const cta_proc *p = &m->procs[s->file];
    char name[160];
    cta_json_obj(j);
    CTA_JK_U64(j, "pid", p->pid);
    CTA_JK_STR(j, "kind", s->kind == TRACK_THREAD ? "thread" : "stream");
    CTA_JK_U64(j, "id", s->id);
    cta_json_key(j, "device");
    if (s->kind == TRACK_STREAM) {
        cta_json_i64(j, s->dev);
        snprintf(name, sizeof name, "GPU %u stream 0x%llx", s->dev, (unsigned long long)s->id);
    } else {
        cta_json_null(j);
        uint32_t tid = (uint32_t)s->id;
        uint32_t i = cta_map_count(&p->thread_idx) ? cta_map_find(&p->thread_idx, &tid, sizeof tid)
                                                   : UINT32_MAX;
        if (i != UINT32_MAX && p->threads[i].name[0])
            snprintf(name, sizeof name, "%s (tid %u)", p->threads[i].name, tid);
        else
            snprintf(name, sizeof name, "thread %u", tid);
    }
    CTA_JK_STR(j, "name", name);
    cta_json_end_obj(j);
}

void cta_overview_json(cta_json *j, const cta_model *m, const cta_overview *o)
{
    slice *v = o->heap;
    uint32_t n = o->nheap;
    if (n)
        qsort(v, n, sizeof *v, by_start);
    uint64_t start = o->start, end = o->end;
    int truncated = o->cut != UINT64_MAX;
    if (truncated) {
        /* keep exactly the slices that start before the first one left out */
        while (n && v[n - 1].start >= o->cut)
            n--;
        end = o->cut > start ? o->cut - 1 : start;
    }
    /* tracks and names, interned in the order the slices first use them */
    cta_map tracks, names;
    cta_map_init(&tracks);
    cta_map_init(&names);
    uint32_t *ti = cta_xmalloc(((size_t)n + 1) * 2 * sizeof *ti, "the overview's slices");
    for (uint32_t i = 0; i < n; i++) {
        uint64_t key[3] = {v[i].file | (uint64_t)v[i].kind << 32 | (uint64_t)v[i].dev << 40, v[i].id, 0};
        ti[2 * i] = cta_map_get(&tracks, key, sizeof key, NULL);
        char tmp[CT_STRTMP];
        const char *nm = slice_name(m, &v[i], tmp);
        ti[2 * i + 1] = cta_map_get(&names, nm, strlen(nm) + 1, NULL);
    }
    /* tracks by process, its threads before its streams, by device, by id */
    uint32_t nt = (uint32_t)cta_map_count(&tracks);
    track_ref *tr = cta_xmalloc(((size_t)nt + 1) * sizeof *tr, "the overview's tracks");
    for (uint32_t i = n; i-- > 0;)
        tr[ti[2 * i]] = (track_ref){&v[i], ti[2 * i]};
    qsort(tr, nt, sizeof *tr, by_track);
    uint32_t *pos = cta_xmalloc(((size_t)nt + 1) * sizeof *pos, "the overview's tracks");
    for (uint32_t k = 0; k < nt; k++)
        pos[tr[k].index] = k;
    uint64_t t0 = m->t0;
    cta_json_key(j, "overview");
    cta_json_obj(j);
    CTA_JK_U64(j, "start_ns", o->any && start > t0 ? start - t0 : 0);
    CTA_JK_U64(j, "end_ns", o->any && end > t0 ? end - t0 : 0);
    CTA_JK_U64(j, "slices_total", o->total);
    cta_json_key(j, "truncated");
    cta_json_bool(j, truncated);
    cta_json_key(j, "tracks");
    cta_json_arr(j);
    for (uint32_t k = 0; k < nt; k++)
        track_json(j, m, tr[k].s);
    cta_json_end_arr(j);
    cta_json_key(j, "names");
    cta_json_arr(j);
    for (uint32_t i = 0; i < cta_map_count(&names); i++)
        cta_json_str(j, cta_map_key(&names, i));
    cta_json_end_arr(j);
    cta_json_key(j, "slices");
    cta_json_arr(j);
    for (uint32_t i = 0; i < n; i++) {
        cta_json_arr(j);
        int pretty = j->pretty; /* one slice a line */
        j->pretty = 0;
        /* an NVTX range may begin before the axis does (its first CUDA activity) */
        uint64_t from = v[i].start > t0 ? v[i].start : t0;
        cta_json_u64(j, pos[ti[2 * i]]);
        cta_json_u64(j, from - t0);
        cta_json_u64(j, v[i].end > from ? v[i].end - from : 0);
        cta_json_u64(j, ti[2 * i + 1]);
        cta_json_u64(j, v[i].cat);
        cta_json_end_arr(j);
        j->pretty = pretty;
    }
    cta_json_end_arr(j);
    cta_json_end_obj(j);
    free(ti);
    free(tr);
    free(pos);
    cta_map_free(&tracks);
    cta_map_free(&names);
}

void cta_overview_free(cta_overview *o)
{
    if (!o)
        return;
    free(o->heap);
    free(o);
}
