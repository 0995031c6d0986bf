/* The timeline's NVTX tracks (cta_tl_nvtx.h). */
#include "cta_tl_nvtx.h"

#include <stdlib.h>
#include <string.h>

#include "cta_nvtx.h"
#include "cta_out.h"

#define NVTX_TID_BASE 500000000u /* NVTX tracks: NVTX_TID_BASE + index, between threads and GPU */

typedef struct {
    ct_rec r;                     /* the NVTX_BEGIN */
    int live;
} tl_open;

typedef struct {
    uint32_t *v, n;               /* tl_open indices */
    size_t cap;
} tl_pushed;

struct cta_tl_nvtx {
    cta_map nvtx_tracks;         /* (file, tid, domain, kind, row) -> index */
    uint64_t *nvtx_end;          /* per NVTX track: the latest end of a range drawn on it */
    size_t nvtx_cap;
    cta_map categories;          /* (file, domain, category) -> index in category_name */
    uint32_t *category_name;     /* string id that names it (nvtxNameCategory) */
    size_t category_cap;
    /* NVTX ranges begun and not yet ended (NVTX_BEGIN records, format 1.6), drawn until their
     * process's end if they never end, paired with their ends as the model pairs them
     * (cta_nvtx_pop_lost, cta_nvtx_popped): push/pop ones per thread in begin order, start/end
     * ones by id per file; each an entry of nvtx_open (tl_open) */
    cta_map threads;              /* (file, tid) -> index in pushed */
    tl_pushed *pushed;
    size_t pushed_cap;
    ct_hash *nvtx_started;        /* per file */
    size_t started_cap;
    cta_pool nvtx_open;
};


/* A range drawn open (its flags, the timeline's own): it never ended. */
#define TL_NVTX_OPEN (1u << 31)

struct cta_tl_nvtx *cta_tl_nvtx_new(void)
{
    struct cta_tl_nvtx *nv = cta_xmalloc(sizeof *nv, "the timeline's NVTX tracks");
    memset(nv, 0, sizeof *nv);
    cta_map_init(&nv->nvtx_tracks);
    cta_map_init(&nv->categories);
    cta_map_init(&nv->threads);
    cta_pool_init(&nv->nvtx_open, sizeof(tl_open));
    return nv;
}

void cta_tl_nvtx_free(struct cta_tl_nvtx *nv)
{
    cta_map_free(&nv->nvtx_tracks);
    free(nv->nvtx_end);
    cta_map_free(&nv->categories);
    free(nv->category_name);
    cta_map_free(&nv->threads);
    for (size_t i = 0; i < nv->pushed_cap; i++)
        free(nv->pushed[i].v);
    free(nv->pushed);
    for (size_t i = 0; i < nv->started_cap; i++)
        ct_hash_free(&nv->nvtx_started[i]);
    free(nv->nvtx_started);
    cta_pool_free(&nv->nvtx_open);
    free(nv);
}

/* The track of an NVTX thread and domain, named when first used: push/pop ranges (kind 0) or
 * row `row` of the start/end ranges (kind 1). Returns its index (nvtx_end) in *idx. */
static uint64_t nvtx_track(cta_tl *t, cta_proc *p, uint32_t tid, uint32_t domain, uint32_t kind,
                           uint32_t row, uint32_t *idx)
{
    uint32_t key[5] = {p->file, tid, domain, kind, row};
    int added;
    uint32_t i = cta_map_get(&t->nv->nvtx_tracks, key, sizeof key, &added);
    uint64_t track = NVTX_TID_BASE + (uint64_t)i;
    if (added) {
        cta_grow(&t->nv->nvtx_end, &t->nv->nvtx_cap, i + 1, sizeof *t->nv->nvtx_end);
        t->nv->nvtx_end[i] = 0;
        char tmp[CT_STRTMP], name[400], rowname[24] = "";
        if (row)
            snprintf(rowname, sizeof rowname, " %u", row + 1);
        snprintf(name, sizeof name, "NVTX%s%s%s%s (tid %u)", domain ? " " : "",
                 ct_reader_str(t->m->rd, p->file, domain, tmp), kind ? " start/end" : "", rowname, tid);
        cta_tl_track_meta(t, p, track, name);
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
static void nvtx_args(cta_tl *t, const cta_proc *p, uint32_t domain, uint32_t category, uint32_t payload_kind,
                      uint64_t payload, uint32_t flags, uint32_t color, const char *shown, uint32_t group)
{
    char tmp[CT_STRTMP];
    cta_put_str(t->f, ",\"args\":{\"domain\":\"");
    cta_json_escape(t->f, domain ? ct_reader_str(t->m->rd, p->file, domain, tmp) : "(default)");
    putc_unlocked('"', t->f);
    if (category) {
        uint32_t key[3] = {p->file, domain, category};
        uint32_t i = cta_map_find(&t->nv->categories, key, sizeof key);
        if (i != UINT32_MAX)
            cta_tl_str_field(t, "category", ct_reader_str(t->m->rd, p->file, t->nv->category_name[i], tmp));
        else
            fprintf(t->f, ",\"category\":%u", category);
    }
    nvtx_payload(t->f, payload_kind, payload);
    if (flags & CT_NVTX_COLOR)
        fprintf(t->f, ",\"color\":\"#%06x\"", color & 0xFFFFFFu);
    const char *g = group ? ct_reader_str(t->m->rd, p->file, group, tmp) : "";
    if (*g && strcmp(g, shown))
        cta_tl_str_field(t, "group", g);
}

/* The name an NVTX record shows: its message, else its normalized name (the tracer kept no
 * more distinct messages), else `none`. */
static const char *nvtx_name(const cta_tl *t, const cta_proc *p, uint32_t name, uint32_t group,
                             const char *none, char tmp[CT_STRTMP])
{
    if (name)
        return ct_reader_str(t->m->rd, p->file, name, tmp);
    return group ? ct_reader_str(t->m->rd, p->file, group, tmp) : none;
}

static void nvtx_range(cta_tl *t, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_range *n = &r->u.nvtx_range;
    uint64_t start = n->start <= r->ts ? n->start : r->ts;
    int unmatched = (n->flags & CT_NVTX_UNMATCHED) != 0;
    if (!cta_tl_in_window(t, start, r->ts))
        return;
    uint32_t idx, tid = unmatched ? n->end_tid : n->start_tid, row = 0;
    uint64_t track = nvtx_track(t, p, tid, n->domain, n->kind != 0, 0, &idx);
    /* complete events must nest: a start/end range that overlaps the last drawn goes lower */
    while (n->kind && !unmatched && t->nv->nvtx_end[idx] > start) {
        if (++row == CTA_TL_NVTX_ROWS) {
            t->nvtx_crowded++;
            return;
        }
        track = nvtx_track(t, p, tid, n->domain, 1, row, &idx);
    }
    if (!cta_tl_room(t, start, 1))
        return;
    char tmp[CT_STRTMP];
    const char *name;
    if (unmatched) {
        name = n->kind ? "nvtxRangeEnd of a range the trace did not see start (unmatched)"
                       : "nvtxRangePop with nothing pushed (unmatched)";
        cta_tl_ev_open(t, "i", p, track, r->ts);
        cta_put_str(t->f, ",\"s\":\"t\"");
    } else {
        name = nvtx_name(t, p, n->name, n->group, "(unnamed range)", tmp);
        if (r->ts > t->nv->nvtx_end[idx])
            t->nv->nvtx_end[idx] = r->ts;
        cta_tl_ev_open(t, "X", p, track, start);
        cta_tl_put_us(t->f, "dur", r->ts - start, 0);
    }
    cta_put_str(t->f, ",\"cat\":\"nvtx\"");
    cta_tl_str_field(t, "name", name);
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

/* The open push/pop ranges of a thread, in begin order (NULL if it has none and !create). */
static tl_pushed *pushed_of(cta_tl *t, uint32_t file, uint32_t tid, int create)
{
    uint32_t key[2] = {file, tid};
    int added;
    uint32_t i = create ? cta_map_get(&t->nv->threads, key, sizeof key, &added)
                        : cta_map_find(&t->nv->threads, key, sizeof key);
    if (i == UINT32_MAX)
        return NULL;
    if (i >= t->nv->pushed_cap) {
        size_t old = t->nv->pushed_cap;
        cta_grow(&t->nv->pushed, &t->nv->pushed_cap, i + 1, sizeof *t->nv->pushed);
        memset(t->nv->pushed + old, 0, (t->nv->pushed_cap - old) * sizeof *t->nv->pushed);
    }
    return &t->nv->pushed[i];
}

static void pushed_remove(tl_pushed *o, uint32_t k)
{
    memmove(o->v + k, o->v + k + 1, (o->n - k - 1) * sizeof *o->v);
    o->n--;
}

static const ct_rec_nvtx_begin *open_begin(const cta_tl *t, uint32_t idx)
{
    return &((const tl_open *)cta_pool_at(&t->nv->nvtx_open, idx))->r.u.nvtx_begin;
}

/* The open start/end ranges of file: id -> tl_open index. */
static ct_hash *started(cta_tl *t, uint32_t file)
{
    if (file >= t->nv->started_cap) {
        size_t old = t->nv->started_cap;
        cta_grow(&t->nv->nvtx_started, &t->nv->started_cap, file + 1, sizeof *t->nv->nvtx_started);
        memset(t->nv->nvtx_started + old, 0, (t->nv->started_cap - old) * sizeof *t->nv->nvtx_started);
    }
    return &t->nv->nvtx_started[file];
}

/* Draws open range idx, which never ended, until end, and forgets it. */
static void draw_open(cta_tl *t, cta_proc *p, uint32_t idx, uint64_t end)
{
    tl_open *o = cta_pool_at(&t->nv->nvtx_open, idx);
    const ct_rec_nvtx_begin *b = &o->r.u.nvtx_begin;
    ct_rec r = {.type = CT_REC_NVTX_RANGE, .tid = o->r.tid, .file = p->file,
                .ts = end > o->r.ts ? end : o->r.ts};
    r.u.nvtx_range = (ct_rec_nvtx_range){.start = o->r.ts, .start_tid = b->tid, .end_tid = b->tid,
                                         .domain = b->domain, .name = b->name, .group = b->group,
                                         .kind = b->kind, .id = b->id, .depth = b->depth,
                                         .flags = TL_NVTX_OPEN};
    nvtx_range(t, p, &r);
    o->live = 0;
    cta_pool_put(&t->nv->nvtx_open, idx);
}

/* NVTX_BEGIN: the range is open until its NVTX_RANGE (FORMAT.md 4.8). */
static void nvtx_begin(cta_tl *t, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_begin *b = &r->u.nvtx_begin;
    uint32_t idx = cta_pool_alloc(&t->nv->nvtx_open);
    *(tl_open *)cta_pool_at(&t->nv->nvtx_open, idx) = (tl_open){*r, 1};
    if (b->kind == CT_NVTX_START_END) {
        uint32_t old;
        if (ct_hash_del(started(t, p->file), b->id, &old)) /* an id given twice */
            draw_open(t, p, old, r->ts);
        cta_xhash_put(started(t, p->file), b->id, idx, "the NVTX ranges open");
        return;
    }
    tl_pushed *o = pushed_of(t, p->file, b->tid, 1);
    /* those that lost their pop end by now, the innermost first */
    for (uint32_t k = o->n; k-- > 0;) {
        const ct_rec_nvtx_begin *ob = open_begin(t, o->v[k]);
        if (cta_nvtx_pop_lost(ob->kind, ob->domain, ob->depth, b)) {
            draw_open(t, p, o->v[k], r->ts);
            pushed_remove(o, k);
        }
    }
    cta_grow(&o->v, &o->cap, o->n + 1, sizeof *o->v);
    o->v[o->n++] = idx;
}

static void nvtx_ended(cta_tl *t, const cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_range *n = &r->u.nvtx_range;
    uint32_t v;
    tl_pushed *o;
    if (n->flags & CT_NVTX_UNMATCHED)
        return;
    if (n->kind == CT_NVTX_START_END) {
        if (ct_hash_del(started(t, p->file), n->id, &v))
            ((tl_open *)cta_pool_at(&t->nv->nvtx_open, v))->live = 0, cta_pool_put(&t->nv->nvtx_open, v);
    } else if ((o = pushed_of(t, p->file, n->start_tid, 0))) {
        for (uint32_t k = o->n; k-- > 0;) {
            const ct_rec_nvtx_begin *ob = open_begin(t, o->v[k]);
            if (cta_nvtx_popped(ob->kind, ob->domain, ob->depth, n)) {
                ((tl_open *)cta_pool_at(&t->nv->nvtx_open, o->v[k]))->live = 0;
                cta_pool_put(&t->nv->nvtx_open, o->v[k]);
                pushed_remove(o, k);
                break;
            }
        }
    }
}

/* The ranges of p that never ended, until its last record. */
void cta_tl_nvtx_never_ended(cta_tl *t, cta_proc *p)
{
    for (uint32_t i = 0; i < t->nv->nvtx_open.n; i++) {
        tl_open *o = cta_pool_at(&t->nv->nvtx_open, i);
        if (o->live && o->r.file == p->file)
            draw_open(t, p, i, p->t_last);
    }
}

static void nvtx_mark(cta_tl *t, cta_proc *p, const ct_rec *r)
{
    const ct_rec_nvtx_mark *n = &r->u.nvtx_mark;
    if (n->flags & CT_NVTX_CATEGORY_NAME) {
        uint32_t key[3] = {p->file, n->domain, n->category};
        int added;
        uint32_t i = cta_map_get(&t->nv->categories, key, sizeof key, &added);
        cta_grow(&t->nv->category_name, &t->nv->category_cap, i + 1, sizeof *t->nv->category_name);
        t->nv->category_name[i] = n->name;
        return;
    }
    /* an OS thread's NVTX name is not an event; the tracer names threads itself */
    if ((n->flags & CT_NVTX_THREAD_NAME) || !cta_tl_in_window(t, r->ts, r->ts) || !cta_tl_room(t, r->ts, 1))
        return;
    uint32_t idx;
    uint64_t track = nvtx_track(t, p, r->tid, n->domain, 0, 0, &idx);
    char tmp[CT_STRTMP];
    const char *name = nvtx_name(t, p, n->name, n->group, "(unnamed mark)", tmp);
    cta_tl_ev_open(t, "i", p, track, r->ts);
    cta_put_str(t->f, ",\"s\":\"t\",\"cat\":\"nvtx\"");
    cta_tl_str_field(t, "name", name);
    nvtx_args(t, p, n->domain, n->category, n->payload_kind, n->payload, n->flags, n->color, name, n->group);
    cta_put_str(t->f, "}}");
}

void cta_tl_nvtx_record(cta_tl *t, cta_proc *p, const ct_rec *r)
{
    if (r->type == CT_REC_NVTX_BEGIN) {
        nvtx_begin(t, p, r);
    } else if (r->type == CT_REC_NVTX_RANGE) {
        nvtx_ended(t, p, r);
        nvtx_range(t, p, r);
    } else {
        nvtx_mark(t, p, r);
    }
}
