/* The Kineto conversion's external merge sort (cta_ksort.h). */
#define _GNU_SOURCE
#include "cta_ksort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cta_map.h"

typedef struct cta_krun {
    uint64_t off, n, pos; /* in items */
    cta_kit buf[64];
    size_t bn, bi;
} krun;

static int kit_cmp(const cta_kit *a, const cta_kit *b)
{
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->sub != b->sub)
        return a->sub < b->sub ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int kit_qcmp(const void *a, const void *b) { return kit_cmp(a, b); }

void cta_ksort_init(cta_ksort *s, const char *tmpdir)
{
    memset(s, 0, sizeof *s);
    s->cap = CTA_KSORT_BYTES / sizeof(cta_kit);
    s->fd = -1;
    s->tmpdir = tmpdir;
}

int cta_ksort_tmpfile(const char *dir, char *path, size_t len)
{
    snprintf(path, len, "%s/cutrace-kineto-XXXXXX", dir);
    return mkstemp(path);
}

static int ks_spill(cta_ksort *s)
{
    if (s->fd < 0) {
        char path[4096];
        s->fd = cta_ksort_tmpfile(s->tmpdir, path, sizeof path);
        if (s->fd < 0)
            return -1;
        unlink(path);
    }
    qsort(s->mem, s->n, sizeof *s->mem, kit_qcmp);
    size_t bytes = s->n * sizeof *s->mem;
    if (pwrite(s->fd, s->mem, bytes, (off_t)(s->spilled * sizeof(cta_kit))) != (ssize_t)bytes)
        return -1;
    cta_grow(&s->runs, &s->runs_cap, s->nruns + 1, sizeof *s->runs);
    s->runs[s->nruns++] = (krun){.off = s->spilled, .n = s->n};
    s->spilled += s->n;
    s->n = 0;
    return 0;
}

void cta_ksort_add(cta_ksort *s, const cta_kit *it)
{
    if (s->failed)
        return;
    if (!s->mem)
        s->mem = cta_xmalloc(s->cap * sizeof *s->mem, "the Kineto conversion's sort");
    if (s->n == s->cap && ks_spill(s) != 0) {
        s->failed = errno ? errno : EIO;
        return;
    }
    s->mem[s->n++] = *it;
}

static int run_fill(cta_ksort *s, krun *r)
{
    size_t want = r->n - r->pos < 64 ? (size_t)(r->n - r->pos) : 64;
    ssize_t got = pread(s->fd, r->buf, want * sizeof(cta_kit), (off_t)((r->off + r->pos) * sizeof(cta_kit)));
    if (got != (ssize_t)(want * sizeof(cta_kit)))
        return -1;
    r->bn = want;
    r->bi = 0;
    r->pos += want;
    return 0;
}

static const cta_kit *run_head(const cta_ksort *s, uint32_t i) { return &s->runs[i].buf[s->runs[i].bi]; }

static void heap_down(cta_ksort *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->nheap && kit_cmp(run_head(s, s->heap[l]), run_head(s, s->heap[m])) < 0)
            m = l;
        if (l + 1 < s->nheap && kit_cmp(run_head(s, s->heap[l + 1]), run_head(s, s->heap[m])) < 0)
            m = l + 1;
        if (m == i)
            return;
        uint32_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

int cta_ksort_finish(cta_ksort *s)
{
    if (s->failed)
        return -1;
    if (!s->nruns) {
        if (s->n)
            qsort(s->mem, s->n, sizeof *s->mem, kit_qcmp);
        s->mi = 0;
        return 0;
    }
    if (s->n && ks_spill(s) != 0)
        return -1;
    free(s->mem);
    s->mem = NULL;
    s->heap = cta_xmalloc(s->nruns * sizeof *s->heap, "the Kineto conversion's merge");
    for (uint32_t i = 0; i < s->nruns; i++) {
        if (run_fill(s, &s->runs[i]) != 0)
            return -1;
        s->heap[s->nheap++] = i;
    }
    for (size_t i = s->nheap / 2; i-- > 0;)
        heap_down(s, i);
    return 0;
}

int cta_ksort_next(cta_ksort *s, cta_kit *out)
{
    if (!s->nruns) {
        if (s->mi >= s->n)
            return 0;
        *out = s->mem[s->mi++];
        return 1;
    }
    if (!s->nheap)
        return 0;
    krun *r = &s->runs[s->heap[0]];
    *out = r->buf[r->bi++];
    if (r->bi == r->bn) {
        if (r->pos < r->n) {
            if (run_fill(s, r) != 0)
                return -1;
        } else {
            s->heap[0] = s->heap[--s->nheap];
        }
    }
    heap_down(s, 0);
    return 1;
}

void cta_ksort_free(cta_ksort *s)
{
    free(s->mem);
    free(s->runs);
    free(s->heap);
    if (s->fd >= 0)
        close(s->fd);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
