/* The writer's side of NVTX (see ctp_nvtxw.h). */
#include "ctp_nvtxw.h"

#include <stdlib.h>
#include <string.h>

#include "ctp_clock.h"

typedef struct {
    uint32_t domain, name, group, category, color, payload_kind, flags;
    uint64_t payload;
    int unnamed;                   /* its message was past the bound: counted once encoded */
} ctp_nvtxw_info;

enum { CTP_NVTXW_OPEN = 64,        /* pushes open at once per thread that get a record */
       CTP_NVTXW_STARTS = 8192 };  /* start/end ranges open at once in the process */

struct ctp_nvtx_open {
    uint64_t start;
    uint32_t dom, depth, used;
    ctp_nvtxw_info i;
};

typedef struct {
    uint64_t id, start;            /* id 0: empty */
    uint32_t tid;
    ctp_nvtxw_info i;
} ctp_nvtxw_start;

/* Texts seen this file: FNV-1a hash (never 0), length and string id. */
typedef struct {
    uint64_t h;
    uint32_t len, id;
} ctp_nvtxw_seen;

static ctp_nvtxw_start *ctp_starts;
static ctp_nvtxw_seen ctp_seen_names[2 * CTP_NVTXW_NAMES], ctp_seen_groups[2 * CTP_NVTXW_NAMES];
static unsigned ctp_nnames, ctp_ngroups;
static uint32_t ctp_domain_ids[CTP_NVTX_DOMAINS]; /* string id of each domain's name, this file */
static uint64_t ctp_names_lost;

int ctp_nvtxw_init(void)
{
    if (!ctp_starts)
        ctp_starts = calloc(CTP_NVTXW_STARTS, sizeof *ctp_starts);
    return ctp_starts ? 0 : -1;
}

uint64_t ctp_nvtxw_names_lost(void) { return ctp_names_lost; }

void ctp_nvtxw_thread_dead(ctp_thread *t)
{
    free(t->nvtx_open);
    t->nvtx_open = NULL;
}

void ctp_nvtxw_new_file(void)
{
    memset(ctp_seen_names, 0, sizeof ctp_seen_names);
    memset(ctp_seen_groups, 0, sizeof ctp_seen_groups);
    memset(ctp_domain_ids, 0, sizeof ctp_domain_ids);
    ctp_nnames = ctp_ngroups = 0;
    ctp_names_lost = 0;
    if (ctp_starts)
        memset(ctp_starts, 0, CTP_NVTXW_STARTS * sizeof *ctp_starts);
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        if (t->nvtx_open)
            memset(t->nvtx_open, 0, CTP_NVTXW_OPEN * sizeof *t->nvtx_open);
}

/* The id of s if it is among the first CTP_NVTXW_NAMES distinct texts of `seen` this file
 * (bounded), or of any text (registered strings: the program's own registrations bound them);
 * *fresh set when s was interned now. Texts are told apart by 64-bit hash and length. */
static uint32_t ctp_nvtxw_intern(ctp_nvtxw_seen *seen, unsigned *n, const char *s, size_t len,
                                int bounded, int *fresh)
{
    uint64_t h = ctp_hash_bytes(s, len) | 1, mask = 2 * CTP_NVTXW_NAMES - 1;
    uint64_t i = h & mask;
    for (unsigned k = 0; k <= mask && seen[i].h; k++, i = (i + 1) & mask)
        if (seen[i].h == h && seen[i].len == len)
            return seen[i].id;
    if (bounded && *n >= CTP_NVTXW_NAMES)
        return 0;
    uint32_t id = ctp_intern(s, len);
    *fresh = 1;
    if (id && !seen[i].h) { /* a full table (registered strings) only stops caching */
        seen[i] = (ctp_nvtxw_seen){h, (uint32_t)len, id};
        *n += (unsigned)bounded;
    }
    return id;
}

/* s with each maximal run of decimal digits replaced by one '#'. */
static size_t ctp_nvtxw_normalize(char *out, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int digit = s[i] >= '0' && s[i] <= '9';
        if (!digit)
            out[n++] = s[i];
        else if (i == 0 || !(s[i - 1] >= '0' && s[i - 1] <= '9'))
            out[n++] = '#';
    }
    return n;
}

static void ctp_nvtxw_info_of(const ctp_nvtx_raw *r, const char *text, unsigned dom, int nolock,
                             ctp_intern_fn def, ctp_nvtxw_info *o)
{
    *o = (ctp_nvtxw_info){0, 0, 0, r->category, r->color, r->payload_kind,
                          r->flags & CT_NVTX_COLOR, r->payload, 0};
    if (nolock)
        return;
    int fresh = 0;
    const char *dname = ctp_nvtx_domain_names[dom];
    if (dom && dname && !ctp_domain_ids[dom]) {
        ctp_domain_ids[dom] = ctp_intern(dname, strlen(dname));
        fresh = 1;
    }
    o->domain = ctp_domain_ids[dom];
    size_t len = r->len;
    if (r->registered) {
        text = r->registered;
        len = strlen(text);
        o->name = ctp_nvtxw_intern(ctp_seen_names, &ctp_nnames, text, len, 0, &fresh);
    } else if (len) {
        o->name = ctp_nvtxw_intern(ctp_seen_names, &ctp_nnames, text, len, 1, &fresh);
        o->unnamed = !o->name;
    }
    if (len) {
        char norm[CTP_NVTX_TEXT];
        o->group = ctp_nvtxw_intern(ctp_seen_groups, &ctp_ngroups, norm,
                                    ctp_nvtxw_normalize(norm, text, len), 1, &fresh);
    }
    if (fresh)
        ctp_intern_pending(def, NULL);
}

static int ctp_nvtxw_range(ct_enc *e, uint64_t ts, uint64_t start, uint32_t start_tid,
                          uint32_t end_tid, const ctp_nvtxw_info *i, uint32_t kind, uint64_t id,
                          uint32_t depth, uint32_t flags)
{
    ct_rec_nvtx_range rr = {start, start_tid, end_tid, i->domain, i->name, i->group,
                            i->category, i->color, i->payload_kind, i->payload, kind, id,
                            depth, i->flags | flags};
    int rc = ct_enc_nvtx_range(e, ts, &rr);
    ctp_names_lost += rc == 0 && i->unnamed;
    return rc;
}

/* The NVTX_BEGIN of a range the writer now keeps open: a reader learns of it before the calls
 * made inside it (FORMAT.md 4.8). */
static int ctp_nvtxw_begin(ct_enc *e, uint64_t ts, uint32_t tid, uint32_t kind, uint64_t id,
                          uint32_t depth, const ctp_nvtxw_info *i)
{
    ct_rec_nvtx_begin b = {tid, kind, id, i->domain, i->name, i->group, depth};
    return ct_enc_nvtx_begin(e, ts, &b);
}

static ctp_nvtxw_start *ctp_nvtxw_find(uint64_t id, int for_insert)
{
    uint64_t i = (id * 0x9E3779B97F4A7C15ull) >> 51; /* 13 bits: CTP_NVTXW_STARTS */
    for (unsigned k = 0; k < CTP_NVTXW_STARTS; k++, i = (i + 1) % CTP_NVTXW_STARTS) {
        if (ctp_starts[i].id == id)
            return &ctp_starts[i];
        if (!ctp_starts[i].id)
            return for_insert ? &ctp_starts[i] : NULL;
    }
    return NULL;
}

/* Removes slot s, shifting back the entries of its probe run (no tombstones). */
static void ctp_nvtxw_remove(ctp_nvtxw_start *s)
{
    size_t hole = (size_t)(s - ctp_starts);
    for (size_t j = (hole + 1) % CTP_NVTXW_STARTS; ctp_starts[j].id; j = (j + 1) % CTP_NVTXW_STARTS) {
        size_t home = (size_t)((ctp_starts[j].id * 0x9E3779B97F4A7C15ull) >> 51);
        /* j's entry may fill the hole if its home is not in (hole, j] cyclically */
        if ((j > hole && (home <= hole || home > j)) || (j < hole && home <= hole && home > j)) {
            ctp_starts[hole] = ctp_starts[j];
            hole = j;
        }
    }
    ctp_starts[hole].id = 0;
}

int ctp_nvtxw_encode(ctp_thread *t, ct_enc *e, const uint64_t *w, int give_up, int nolock,
                     ctp_intern_fn def)
{
    unsigned op = ctp_raw_fn(w[0]) & ~(unsigned)CTP_NVTX_PLAIN;
    unsigned dom = (ctp_raw_aux(w[0]) & 0xffff) % CTP_NVTX_DOMAINS;
    ctp_nvtx_raw r = {0};
    const char *text = NULL;
    if (op == CTP_NVTX_POP) {
        r.depth = (uint32_t)w[2];
        r.flags = (uint32_t)(w[2] >> 32);
    } else if (op == CTP_NVTX_END) {
        r.id = w[2];
    } else if (ctp_raw_fn(w[0]) & CTP_NVTX_PLAIN) {
        r.len = ctp_raw_aux(w[0]) >> 16;
        if (op == CTP_NVTX_PUSH)
            r.depth = (uint32_t)w[2];
        else
            r.id = w[2];
        text = (const char *)(w + 3);
    } else {
        memcpy(&r, w + 2, sizeof r);
        text = (const char *)(w + 2) + sizeof r;
    }
    uint64_t ts = ctp_ticks_to_ns(w[1]);
    ctp_nvtxw_info info;
    switch (op) {
    case CTP_NVTX_PUSH: {
        if (!t->nvtx_open && !nolock)
            t->nvtx_open = calloc(CTP_NVTXW_OPEN, sizeof *t->nvtx_open);
        struct ctp_nvtx_open *o = t->nvtx_open, *slot = NULL;
        for (unsigned k = 0; o && k < CTP_NVTXW_OPEN; k++) {
            if (o[k].used && o[k].dom == dom && o[k].depth == r.depth) {
                slot = &o[k]; /* its pop was lost */
                break;
            }
            if (!o[k].used && !slot)
                slot = &o[k];
        }
        if (!slot)
            return 0;
        ctp_nvtxw_info_of(&r, text, dom, nolock, def, &info);
        int rc = ctp_nvtxw_begin(e, ts, t->tid, CT_NVTX_PUSH_POP, 0, r.depth, &info);
        if (rc == 0)
            *slot = (struct ctp_nvtx_open){ts, dom, r.depth, 1, info};
        return rc;
    }
    case CTP_NVTX_POP: {
        struct ctp_nvtx_open *o = t->nvtx_open;
        for (unsigned k = 0; o && !(r.flags & CT_NVTX_UNMATCHED) && k < CTP_NVTXW_OPEN; k++)
            if (o[k].used && o[k].dom == dom && o[k].depth == r.depth) {
                int rc = ctp_nvtxw_range(e, ts, o[k].start, t->tid, t->tid, &o[k].i,
                                         CT_NVTX_PUSH_POP, 0, r.depth, 0);
                if (rc == 0)
                    o[k].used = 0;
                return rc;
            }
        ctp_nvtxw_info_of(&r, text, dom, nolock, def, &info);
        return ctp_nvtxw_range(e, ts, ts, t->tid, t->tid, &info, CT_NVTX_PUSH_POP, 0, r.depth,
                               CT_NVTX_UNMATCHED);
    }
    case CTP_NVTX_START: {
        ctp_nvtxw_start *s = ctp_starts ? ctp_nvtxw_find(r.id, 1) : NULL;
        if (!s)
            return 0;
        ctp_nvtxw_info_of(&r, text, dom, nolock, def, &info);
        int rc = ctp_nvtxw_begin(e, ts, t->tid, CT_NVTX_START_END, r.id, 0, &info);
        if (rc == 0)
            *s = (ctp_nvtxw_start){r.id, ts, t->tid, info};
        return rc;
    }
    case CTP_NVTX_END: {
        ctp_nvtxw_start *s = ctp_starts ? ctp_nvtxw_find(r.id, 0) : NULL;
        if (s) {
            int rc = ctp_nvtxw_range(e, ts, s->start, s->tid, t->tid, &s->i, CT_NVTX_START_END,
                                     r.id, 0, 0);
            if (rc == 0)
                ctp_nvtxw_remove(s);
            return rc;
        }
        if (!give_up && (r.id & CTP_NVTX_ID_RECORDED))
            return CTP_NVTXW_WAIT;
        ctp_nvtxw_info_of(&r, text, dom, nolock, def, &info);
        return ctp_nvtxw_range(e, ts, ts, t->tid, t->tid, &info, CT_NVTX_START_END, r.id, 0,
                               CT_NVTX_UNMATCHED);
    }
    case CTP_NVTX_MARK: {
        ctp_nvtxw_info_of(&r, text, dom, nolock, def, &info);
        ct_rec_nvtx_mark m = {info.domain, info.name, info.group, info.category, info.color,
                              info.payload_kind, r.flags & CT_NVTX_THREAD_NAME ? r.id : info.payload,
                              info.flags | (r.flags & (CT_NVTX_CATEGORY_NAME | CT_NVTX_THREAD_NAME))};
        int rc = ct_enc_nvtx_mark(e, ts, &m);
        ctp_names_lost += rc == 0 && info.unnamed;
        return rc;
    }
    default:
        return 0;
    }
}
