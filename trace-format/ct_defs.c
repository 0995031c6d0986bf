/* The reader's definition tables (see ct_read_internal.h): an arena whose memory never moves
 * (texts and frame lists are handed out as pointers) and the registration of STRING, FRAME and
 * STACK definitions, each found by its id through a ct_hash, against the file's CT_DEFS_MAX
 * budget. */
#include "ct_read_internal.h"

#include <stdlib.h>

void *ct__arena_alloc(ct__block **head, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    ct__block *b = *head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > (64u << 10) ? n : (64u << 10);
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = *head;
        b->used = 0;
        b->cap = cap;
        *head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void ct__arena_free(ct__block *b)
{
    while (b) {
        ct__block *n = b->next;
        free(b);
        b = n;
    }
}

int ct__reserve(void *arrp, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *na = realloc(*(void **)arrp, ncap * elem);
    if (!na)
        return CT_E_NOMEM;
    *(void **)arrp = na;
    *cap = ncap;
    return 0;
}

/* ---- definitions ---------------------------------------------------------------------------- */

/* Charges a definition of `bytes` (plus its table entries) to the file's budget: 0, or 1 if
 * the budget is spent (warned once), when the definition is to be ignored. Compression lets a
 * small file define gigabytes of names; past CT_DEFS_MAX their ids read as undefined. */
static int ct__def_charge(ct__infile *f, uint64_t bytes)
{
    /* table slot (16), the id map's two slots at half load (2 x 12: ct_hash), arena rounding */
    const uint64_t entry = 48;
    if (f->def_bytes + bytes + entry <= CT_DEFS_MAX) {
        f->def_bytes += bytes + entry;
        return 0;
    }
    if (f->def_bytes <= CT_DEFS_MAX) {
        f->def_bytes = CT_DEFS_MAX + 1;
        ct__warn(f, "more than %u bytes of string, frame and stack definitions: the rest are "
                   "ignored (their ids show as undefined)", CT_DEFS_MAX);
    }
    return 1;
}

int ct__define(ct__infile *f, uint32_t type, const uint8_t *b, const uint8_t *be)
{
    int bad = 0;
    const uint8_t *body = b;
    uint32_t id = ct__get_u32v(&b, be, &bad);
    if (bad || id == 0)
        return 1;
    if (type == CT_REC_STRING) {
        uint64_t n = ct__get_uv(&b, be, &bad);
        if (bad || n > CT_STRING_MAX || n > (uint64_t)(be - b))
            return 1;
        if (ct_hash_find(&f->str_ids, id) || ct__def_charge(f, n + 1))
            return 0;
        char *t = ct__arena_alloc(&f->arena, n + 1);
        if (!t || ct__reserve(&f->strs, &f->strs_cap, f->nstrs, sizeof *f->strs) < 0)
            return CT_E_NOMEM;
        memcpy(t, b, n);
        t[n] = 0;
        f->strs[f->nstrs] = (ct__str_def){t, (uint32_t)n};
        int rc = ct_hash_put(&f->str_ids, id, (uint32_t)f->nstrs);
        f->nstrs += rc > 0;
        return rc < 0 ? rc : 0;
    }
    if (type == CT_REC_FRAME) {
        ct_rec_frame fr, *d = &fr;
        b = body;
        CT_FRAME_FIELDS(CT__DEC_FIELD)
        if (bad)
            return 1;
        if (ct_hash_find(&f->frame_ids, id) || ct__def_charge(f, sizeof fr))
            return 0;
        if (ct__reserve(&f->frames, &f->frames_cap, f->nframes, sizeof *f->frames) < 0)
            return CT_E_NOMEM;
        f->frames[f->nframes] = fr;
        int rc = ct_hash_put(&f->frame_ids, id, (uint32_t)f->nframes);
        f->nframes += rc > 0;
        return rc < 0 ? rc : 0;
    }
    uint64_t n = ct__get_uv(&b, be, &bad);
    /* Each frame id takes at least one byte: a count above the bytes left is a lie. */
    if (bad || n > CT_STACK_MAX || n > (uint64_t)(be - b))
        return 1;
    if (ct_hash_find(&f->stack_ids, id) || ct__def_charge(f, n * sizeof(uint32_t)))
        return 0;
    uint32_t *frames = ct__arena_alloc(&f->arena, (size_t)n * sizeof(uint32_t) + 1);
    if (!frames)
        return CT_E_NOMEM;
    for (uint64_t i = 0; i < n; i++)
        frames[i] = ct__get_u32v(&b, be, &bad);
    if (bad)
        return 1;
    if (ct__reserve(&f->stacks, &f->stacks_cap, f->nstacks, sizeof *f->stacks) < 0)
        return CT_E_NOMEM;
    f->stacks[f->nstacks] = (ct__stack_def){frames, (uint32_t)n};
    int rc = ct_hash_put(&f->stack_ids, id, (uint32_t)f->nstacks);
    f->nstacks += rc > 0;
    return rc < 0 ? rc : 0;
}
