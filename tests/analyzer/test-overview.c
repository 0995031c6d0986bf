/* Where each diagnosis happened (diagnoses[].at) and the overview of the busiest stretch
 * (summary --overview N), against the records themselves: `cutrace dump --time-order` of the
 * trace, from which the test computes the GPU's idle gaps, the calls each diagnosis counts and
 * the densest stretch by brute force, independently of the analyzer's model. */
#include "an_helpers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the records, from cutrace dump --time-order ------------------------------------------ */

typedef struct {
    uint64_t ts, start;   /* start: the record's start= (its ts if none) */
    char type[16];
    const char *line;     /* the rest of the line (fields), NUL-terminated */
} drec;

typedef struct {
    char *text;
    drec *v;
    size_t n;
    uint64_t t0;          /* the earliest activity: the JSON's time 0 */
} dump_t;

/* " key=VALUE" of a record (decimal or 0x hex); 0 when absent. */
static uint64_t fnum(const drec *r, const char *key)
{
    char pat[40];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(r->line, pat);
    return p ? strtoull(p + strlen(pat), NULL, 0) : 0;
}

static int has(const drec *r, const char *s) { return strstr(r->line, s) != NULL; }
static int is(const drec *r, const char *type) { return !strcmp(r->type, type); }

static int load_dump(dump_t *d, const char *dir)
{
    memset(d, 0, sizeof *d);
    ctt_proc p;
    if (an_run(&p, "dump --time-order {}", dir) != 0 || !p.exited || p.code != 0) {
        fprintf(stderr, "cutrace dump %s failed\n", dir);
        return -1;
    }
    d->text = p.out;
    p.out = NULL;
    ctt_proc_free(&p);
    size_t cap = 0;
    d->t0 = UINT64_MAX;
    for (char *line = strtok(d->text, "\n"); line; line = strtok(NULL, "\n")) {
        char type[16];
        unsigned long long ts;
        int off;
        if (sscanf(line, "%llu %15s%n", &ts, type, &off) != 2)
            continue; /* a header line */
        if (d->n == cap) {
            cap = cap ? 2 * cap : 4096;
            d->v = realloc(d->v, cap * sizeof *d->v);
        }
        drec *r = &d->v[d->n++];
        r->ts = ts;
        snprintf(r->type, sizeof r->type, "%s", type);
        r->line = line + off - 1; /* from the space before the first field */
        r->start = has(r, " start=") ? fnum(r, "start") : ts;
        /* definitions carry any time: only activity is on the axis, from the start of an API
         * call, GPU interval or synchronization, else the record's time (JSON.md) */
        static const char *const defs[] = {"string", "frame", "stack", "thread", "device", "stream"};
        int def = 0;
        for (size_t k = 0; k < sizeof defs / sizeof *defs; k++)
            def |= !strcmp(type, defs[k]);
        uint64_t first = is(r, "api") || is(r, "gpu") || is(r, "sync") ? r->start : ts;
        if (!def && first < d->t0)
            d->t0 = first;
    }
    return 0;
}

static void free_dump(dump_t *d)
{
    free(d->text);
    free(d->v);
}


/* The record of type `type` with this corr, or NULL. */
static const drec *by_corr(const dump_t *d, const char *type, uint64_t corr)
{
    for (size_t i = 0; i < d->n; i++)
        if (is(&d->v[i], type) && fnum(&d->v[i], "corr") == corr)
            return &d->v[i];
    return NULL;
}

/* ---- the GPU's idle gaps: between the union of device 0's GPU intervals ------------------- */

typedef struct {
    uint64_t start, end;  /* on the JSON's axis */
    const drec *next;     /* the GPU record that ends it */
} gap;

static int by_start_rec(const void *a, const void *b)
{
    const drec *x = *(const drec *const *)a, *y = *(const drec *const *)b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Fills g (malloc'd) with the gaps, returns how many. */
static size_t gaps_of(const dump_t *d, gap **g)
{
    const drec **v = malloc((d->n + 1) * sizeof *v);
    size_t n = 0, ng = 0;
    for (size_t i = 0; i < d->n; i++)
        if (is(&d->v[i], "gpu"))
            v[n++] = &d->v[i];
    qsort(v, n, sizeof *v, by_start_rec);
    *g = malloc((n + 1) * sizeof **g);
    uint64_t end = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && v[i]->start > end)
            (*g)[ng++] = (gap){end - d->t0, v[i]->start - d->t0, v[i]};
        if (!i || v[i]->ts > end)
            end = v[i]->ts;
    }
    free(v);
    return ng;
}

/* The diagnosis's place: at.start_ns, at.end_ns; 0 if it has none. */
static int at_of(const tj *s, const char *id, uint64_t *a, uint64_t *b)
{
    const tj *x = an_diag(s, id);
    const tj *at = x ? tj_get(x, "at") : NULL;
    if (!at || at->type != TJ_OBJ) {
        fprintf(stderr, "%s: no diagnosis or no at\n", id);
        return 0;
    }
    *a = (uint64_t)tj_num(at, "start_ns");
    *b = (uint64_t)tj_num(at, "end_ns");
    return 1;
}

/* The gap [a, b], if it is one of g; else NULL. */
static const gap *gap_at(const gap *g, size_t n, uint64_t a, uint64_t b)
{
    for (size_t i = 0; i < n; i++)
        if (g[i].start == a && g[i].end == b)
            return &g[i];
    return NULL;
}

/* The longest of the gaps for which keep() holds. */
static const gap *longest(const dump_t *d, const gap *g, size_t n,
                          int (*keep)(const dump_t *, const gap *))
{
    const gap *best = NULL;
    for (size_t i = 0; i < n; i++)
        if ((!keep || keep(d, &g[i])) && (!best || g[i].end - g[i].start > best->end - best->start))
            best = &g[i];
    return best;
}

/* A gap that ends with a host-to-device copy (a batch). */
static int ends_with_h2d(const dump_t *d, const gap *g)
{
    const drec *cp = by_corr(d, "copy", fnum(g->next, "corr"));
    return cp && fnum(cp, "dir") == 1;
}

/* A record of type `type` (and holding `text`) returned during the gap. */
static int returned_in(const dump_t *d, const gap *g, const char *type, const char *text)
{
    for (size_t i = 0; i < d->n; i++) {
        const drec *r = &d->v[i];
        if (is(r, type) && (!text || has(r, text)) && r->ts - d->t0 >= g->start && r->ts - d->t0 <= g->end)
            return 1;
    }
    return 0;
}

static int sync_in(const dump_t *d, const gap *g)
{
    return !ends_with_h2d(d, g) && returned_in(d, g, "sync", NULL);
}

static int copy_in(const dump_t *d, const gap *g)
{
    return !ends_with_h2d(d, g) && returned_in(d, g, "api", "fn=\"cudaMemcpy\"");
}

/* The longest record of type `type` for which keep() holds: its [start, end] on the axis. */
static int longest_rec(const dump_t *d, const char *type, int (*keep)(const dump_t *, const drec *),
                       uint64_t *a, uint64_t *b)
{
    const drec *best = NULL;
    for (size_t i = 0; i < d->n; i++) {
        const drec *r = &d->v[i];
        if (is(r, type) && keep(d, r) && (!best || r->ts - r->start > best->ts - best->start))
            best = r;
    }
    if (best) {
        *a = best->start - d->t0;
        *b = best->ts - d->t0;
    }
    return best != NULL;
}

/* A pageable copy of 256 KiB or more to or from the device (pageable-memcpy counts its GPU
 * interval). */
static int pageable_gpu(const dump_t *d, const drec *r)
{
    const drec *cp = by_corr(d, "copy", fnum(r, "corr"));
    if (!cp || fnum(cp, "bytes") < 262144)
        return 0;
    uint64_t dir = fnum(cp, "dir");
    return (dir == 1 && fnum(cp, "src_kind") == 1) || (dir == 2 && fnum(cp, "dst_kind") == 1);
}

/* An Async copy call from or to pageable memory (async-memcpy-pageable counts its call). */
static int async_pageable_call(const dump_t *d, const drec *r)
{
    if (!has(r, "parent=0 "))
        return 0;
    const drec *cp = by_corr(d, "copy", fnum(r, "corr"));
    return cp && (fnum(cp, "flags") & 1) &&
           ((fnum(cp, "dir") == 1 && fnum(cp, "src_kind") == 1) ||
            (fnum(cp, "dir") == 2 && fnum(cp, "dst_kind") == 1));
}

static int launch_call(const dump_t *d, const drec *r)
{
    (void)d;
    return has(r, "parent=0 ") && has(r, "LaunchKernel");
}

/* An allocation re-making a size freed earlier, or the free of such an allocation
 * (alloc-churn's calls): from the mem records before r's call. */
static int churn_call(const dump_t *d, const drec *r)
{
    if (!has(r, "parent=0 ") || !(has(r, "fn=\"cudaMalloc\"") || has(r, "fn=\"cudaFree\"")))
        return 0;
    const drec *mem = by_corr(d, "mem", fnum(r, "corr"));
    if (!mem)
        return 0;
    uint64_t size = fnum(mem, "size");
    if (has(mem, "op=free")) { /* the size of what it freed: its allocation's */
        for (const drec *x = mem; x >= d->v; x--)
            if (is(x, "mem") && has(x, "op=alloc") && fnum(x, "address") == fnum(mem, "address")) {
                size = fnum(x, "size");
                mem = x;
                break;
            }
    }
    for (const drec *x = d->v; x < mem; x++) /* a free of that size before the allocation */
        if (is(x, "mem") && has(x, "op=free")) {
            for (const drec *y = x; y >= d->v; y--)
                if (is(y, "mem") && has(y, "op=alloc") && fnum(y, "address") == fnum(x, "address")) {
                    if (fnum(y, "size") == size && y != mem)
                        return 1;
                    break;
                }
        }
    return 0;
}

/* A tracegen trace (ARGS) with its records, its GPU's gaps and its summary. */
typedef struct {
    dump_t d;
    gap *g;
    size_t ng;
    tj *s;
} trace_t;

/* 0, or -1 (nothing to close) */
static int trace_open(trace_t *t, const char *kind, size_t i, const char *args)
{
    char dir[4096], name[32];
    snprintf(name, sizeof name, "%s%zu", kind, i);
    memset(t, 0, sizeof *t);
    if (!an_gen(dir, name, args) || load_dump(&t->d, dir) != 0)
        return -1;
    t->ng = gaps_of(&t->d, &t->g);
    if (!(t->s = an_summary(dir, NULL))) {
        free(t->g);
        free_dump(&t->d);
        return -1;
    }
    return 0;
}

static void trace_close(trace_t *t)
{
    free(t->g);
    free_dump(&t->d);
    tj_free(t->s);
}

/* Gap-based diagnoses: the longest gap of their cause, which is a true idle gap of the GPU. */
TEST_IMPL(diag_at_gaps)
{
    static const struct {
        const char *id, *args;
        int (*keep)(const dump_t *, const gap *);
    } cases[] = {
        /* data loading: the gaps before each batch copy (the longest gaps of the run) */
        {"dataloader-starvation", "", ends_with_h2d},
        /* a 2 s stall is a data-loading gap too, but not the typical one: the place is a loop's gap */
        {"dataloader-starvation", "--iters 20 --loader-ms 20 --stall-ms 2000", NULL},
        {"gpu-gaps", "--loader-ms 0 --pinned --host-us 5000 --kernel-us 20", NULL},
        {"excessive-sync", "--sync-every-kernel --loader-ms 0 --pinned", sync_in},
        {"sync-memcpy", "--sync-copy-bytes 8000000 --loader-ms 0 --pinned --host-us 2000", copy_in},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        trace_t t;
        ASSERT(trace_open(&t, "gaps", c, cases[c].args) == 0);
        const dump_t *d = &t.d;
        const tj *s = t.s;
        uint64_t a, b;
        ASSERT(at_of(s, cases[c].id, &a, &b));
        const gap *x = gap_at(t.g, t.ng, a, b);
        if (!x)
            fprintf(stderr, "%s: at [%llu, %llu] is no idle gap of the GPU\n", cases[c].id,
                    (unsigned long long)a, (unsigned long long)b);
        ASSERT(x);
        ASSERT_INT(tj_num(an_diag(s, cases[c].id), "at.device"), ==, 0);
        ASSERT_UINT(tj_num(an_diag(s, cases[c].id), "at.pid"), ==, tj_num(s, "processes.0.pid"));
        if (c == 1) {
            /* a loop's gap, ending with its batch: 20 ms, not the 2 s stall */
            ASSERT(ends_with_h2d(d, x));
            ASSERT_NEAR((double)(b - a), 20e6, 0.1e6);
            const gap *stall = longest(d, t.g, t.ng, NULL);
            ASSERT((double)(stall->end - stall->start) > 1e9);
        } else {
            const gap *want = longest(d, t.g, t.ng, cases[c].keep);
            ASSERT(want);
            ASSERT_UINT(b - a, ==, want->end - want->start);
            ASSERT(!cases[c].keep || cases[c].keep(d, x));
        }
        trace_close(&t);
    }
    return 0;
}

/* Call-based diagnoses: the longest call (for pageable-memcpy, GPU interval) they counted; oom
 * the failed allocation; low-gpu-utilization a window in the stall. */
TEST_IMPL(diag_at_calls)
{
    static const struct {
        const char *id, *args, *type;
        int (*keep)(const dump_t *, const drec *);
    } cases[] = {
        {"pageable-memcpy", "--loader-ms 0 --batch-bytes 67108864 --iters 20", "gpu", pageable_gpu},
        {"async-memcpy-pageable", "--loader-ms 0 --batch-bytes 67108864 --iters 20", "api", async_pageable_call},
        {"alloc-churn", "--churn --loader-ms 0 --pinned", "api", churn_call},
        /* no launch gap is among the longest gaps: the longest launch call */
        {"launch-bound", "--kernel-us 2 --launch-us 8 --loader-ms 0 --pinned --batch-bytes 65536 --host-us 0",
         "api", launch_call},
    };
    trace_t t;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ASSERT(trace_open(&t, "calls", c, cases[c].args) == 0);
        uint64_t a, b, wa = 0, wb = 0;
        ASSERT(at_of(t.s, cases[c].id, &a, &b));
        ASSERT(longest_rec(&t.d, cases[c].type, cases[c].keep, &wa, &wb));
        if (a != wa || b != wb)
            fprintf(stderr, "%s: at [%llu, %llu], the longest of its calls [%llu, %llu]\n",
                    cases[c].id, (unsigned long long)a, (unsigned long long)b,
                    (unsigned long long)wa, (unsigned long long)wb);
        ASSERT_UINT(a, ==, wa);
        ASSERT_UINT(b, ==, wb);
        ASSERT_INT(tj_num(an_diag(t.s, cases[c].id), "at.device"), ==, 0);
        trace_close(&t);
    }

    /* oom: the failed allocation's time */
    ASSERT(trace_open(&t, "oom", 0, "--oom --loader-ms 0 --pinned --iters 5") == 0);
    uint64_t a, b;
    ASSERT(at_of(t.s, "oom", &a, &b));
    const drec *fail = NULL;
    for (size_t i = 0; i < t.d.n && !fail; i++)
        if (is(&t.d.v[i], "mem") && has(&t.d.v[i], "op=alloc") && !has(&t.d.v[i], " result=0 "))
            fail = &t.d.v[i];
    ASSERT(fail);
    ASSERT_UINT(a, ==, fail->ts - t.d.t0);
    ASSERT_UINT(b, ==, a);
    trace_close(&t);

    /* low-gpu-utilization: the lowest window, one of the diagnosis's width, in the 600 ms stall:
     * the GPU ran nothing in it */
    ASSERT(trace_open(&t, "low", 0, "--stall-ms 600") == 0);
    ASSERT(at_of(t.s, "low-gpu-utilization", &a, &b));
    ASSERT_NEAR((double)(b - a), tj_num(an_diag(t.s, "low-gpu-utilization"), "evidence.window_ns"), 0);
    const gap *stall = longest(&t.d, t.g, t.ng, NULL);
    ASSERT(stall->end - stall->start > 600000000);
    ASSERT(a >= stall->start && b <= stall->end);
    trace_close(&t);
    return 0;
}

/* graph-reinstantiation: the first instantiation of a graph instantiated before, the loop's
 * second cuGraphInstantiateWithFlags call. */
TEST_IMPL(diag_at_graph_reinstantiation)
{
    char dir[4096];
    char *out = NULL;
    ASSERT(an_trace_workload(dir, "graph_re", "graph_steps --steps 5 --reinstantiate", NULL, &out));
    free(out);
    dump_t d;
    ASSERT(load_dump(&d, dir) == 0);
    const drec *second = NULL;
    int seen = 0;
    for (size_t i = 0; i < d.n && !second; i++)
        if (is(&d.v[i], "api") && has(&d.v[i], "fn=\"cuGraphInstantiateWithFlags\"") && ++seen == 2)
            second = &d.v[i];
    ASSERT(second);
    tj *s = an_summary(dir, "--min-saving 0");
    ASSERT(s);
    uint64_t a, b;
    ASSERT(at_of(s, "graph-reinstantiation", &a, &b));
    ASSERT_UINT(a, ==, second->start - d.t0);
    ASSERT_UINT(b, ==, second->ts - d.t0);
    free_dump(&d);
    tj_free(s);
    return 0;
}

/* ---- the overview --------------------------------------------------------------------------- */

typedef struct {
    uint64_t start, end, id; /* on the JSON's axis; id: tid or stream */
    int stream, cat;
} oslice;

/* The slices the overview draws, from the records: top-level API calls on their thread, GPU
 * intervals on their stream, NVTX ranges on their starting thread; in record (end) order. */
static size_t slices_of(const dump_t *d, oslice *v)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++) {
        const drec *r = &d->v[i];
        /* a range begun before the axis's 0 is drawn from 0 */
        oslice s = {r->start > d->t0 ? r->start - d->t0 : 0, r->ts - d->t0, 0, 0, 0};
        if (is(r, "api") && has(r, " parent=0 ")) {
            s.id = fnum(r, "tid");
            s.cat = has(r, "Synchronize\"") ? 4 : has(r, "Malloc\"") || has(r, "Free\"") ? 5 : 0;
        } else if (is(r, "gpu")) {
            s.id = fnum(r, "stream");
            s.stream = 1;
            s.cat = (int)fnum(r, "kind"); /* 1 kernel, 2 memcpy, 3 memset */
        } else if (is(r, "nvtx-range") && !(fnum(r, "flags") & 2)) { /* 2: unmatched */
            s.id = fnum(r, "start_thread");
            s.cat = 6;
        } else {
            continue;
        }
        v[n++] = s;
    }
    return n;
}

static int by_slice(const void *a, const void *b)
{
    const oslice *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream - y->stream;
    if (x->cat != y->cat)
        return x->cat - y->cat;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The overview of n slices matches a brute-force reading of the records: its stretch starts a
 * window of the least span holding n slice ends (no shorter one holds n), it holds exactly the
 * slices overlapping it, each once, at most n (the n that start first, the stretch cut before
 * the first left out). */
static int check_overview(const char *dir, const dump_t *d, uint32_t n)
{
    oslice *all = malloc((d->n + 1) * sizeof *all);
    size_t na = slices_of(d, all);
    char extra[64];
    snprintf(extra, sizeof extra, "--overview %u", n);
    tj *s = an_summary(dir, extra);
    ASSERT(s);
    const tj *o = tj_get(s, "overview");
    ASSERT(o);
    uint64_t start = (uint64_t)tj_num(o, "start_ns"), end = (uint64_t)tj_num(o, "end_ns");
    /* the least span of n consecutive ends (all the run when fewer) */
    uint64_t span = UINT64_MAX;
    if (na >= n) {
        for (size_t i = 0; i + n <= na; i++)
            if (all[i + n - 1].end - all[i].end < span)
                span = all[i + n - 1].end - all[i].end;
        /* the stretch is one such window: n ends in [start, start + span] */
        size_t in = 0;
        for (size_t i = 0; i < na; i++)
            in += all[i].end >= start && all[i].end <= start + span;
        ASSERT_UINT(in, >=, n);
    } else {
        start = UINT64_MAX;
        for (size_t i = 0; i < na; i++)
            start = all[i].start < start ? all[i].start : start;
        ASSERT_UINT(start, ==, (uint64_t)tj_num(o, "start_ns"));
        span = all[na - 1].end - start;
    }
    /* the slices overlapping it, cut to the n that start first */
    oslice *want = malloc((na + 1) * sizeof *want);
    size_t nw = 0;
    for (size_t i = 0; i < na; i++)
        if (all[i].end >= start && all[i].start <= start + span)
            want[nw++] = all[i];
    qsort(want, nw, sizeof *want, by_slice);
    ASSERT_UINT(tj_num(o, "slices_total"), ==, nw);
    ASSERT_INT(tj_get(o, "truncated")->num, ==, nw > n);
    uint64_t want_end = start + span;
    if (nw > n) {
        uint64_t cut = want[n].start;
        while (nw && want[nw - 1].start >= cut)
            nw--;
        want_end = cut > start ? cut - 1 : start; /* more than n open at its start: it alone */
    }
    ASSERT_UINT(end, ==, want_end);
    /* the overview's slices, on the same terms */
    const tj *sl = tj_get(o, "slices"), *tr = tj_get(o, "tracks");
    ASSERT(sl && tr);
    ASSERT_UINT(sl->n, <=, n);
    ASSERT_UINT(sl->n, ==, nw);
    oslice *got = malloc((sl->n + 1) * sizeof *got);
    for (size_t i = 0; i < sl->n; i++) {
        const tj *x = sl->v[i], *t = tj_at(tr, (size_t)tj_at(x, 0)->num);
        ASSERT(t);
        got[i] = (oslice){(uint64_t)tj_at(x, 1)->num, (uint64_t)(tj_at(x, 1)->num + tj_at(x, 2)->num),
                          (uint64_t)tj_num(t, "id"), !strcmp(tj_str(t, "kind"), "stream"),
                          (int)tj_at(x, 4)->num};
        ASSERT((size_t)tj_at(x, 3)->num < tj_len(o, "names"));
    }
    qsort(got, sl->n, sizeof *got, by_slice);
    for (size_t i = 0; i < nw; i++)
        if (by_slice(&got[i], &want[i])) {
            fprintf(stderr, "slice %zu: got %s %llu [%llu, %llu] cat %d, want %s %llu [%llu, %llu] cat %d\n",
                    i, got[i].stream ? "stream" : "thread", (unsigned long long)got[i].id,
                    (unsigned long long)got[i].start, (unsigned long long)got[i].end, got[i].cat,
                    want[i].stream ? "stream" : "thread", (unsigned long long)want[i].id,
                    (unsigned long long)want[i].start, (unsigned long long)want[i].end, want[i].cat);
            ASSERT(0);
        }
    free(got);
    free(want);
    free(all);
    tj_free(s);
    return 0;
}

TEST_IMPL(overview_busiest_stretch)
{
    char dir[4096];
    /* 2 devices' worth of streams, ranks' threads: 2 ranks, a starved loop with denser phases */
    ASSERT(an_gen(dir, "ov", "--iters 12 --ranks 2 --loader-ms 5"));
    dump_t d;
    ASSERT(load_dump(&d, dir) == 0);
    static const uint32_t ns[] = {1, 7, 100, 1000, 1000000};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        if (check_overview(dir, &d, ns[i]) != 0) {
            fprintf(stderr, "overview of %u slices\n", ns[i]);
            free_dump(&d);
            return 1;
        }
    }
    free_dump(&d);
    /* NVTX ranges of every kind in 4 threads (tests/workloads/nvtx_ranges.c), some begun before
     * the first CUDA call */
    char *env[] = {"CUTRACE_RING_KB=8192", NULL}, *out = NULL;
    ASSERT(an_trace_workload(dir, "ov_nvtx", "nvtx_ranges", env, &out));
    free(out);
    ASSERT(load_dump(&d, dir) == 0);
    for (size_t i = 0; i < 2; i++)
        if (check_overview(dir, &d, i ? 1000000 : 500) != 0) {
            free_dump(&d);
            return 1;
        }
    free_dump(&d);
    /* without --overview, no overview; a count out of range is a usage error */
    tj *s = an_summary(dir, NULL);
    ASSERT(s && !tj_get(s, "overview"));
    tj_free(s);
    static const char *const bad[] = {"0", "1000001", "2.5", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[64];
        snprintf(args, sizeof args, "summary --json --overview %s {}", bad[i]);
        ctt_proc p;
        ASSERT(an_run(&p, args, dir) == 0);
        int code = p.code, exited = p.exited, said = strstr(p.err, "--overview") != NULL;
        ctt_proc_free(&p);
        ASSERT(exited && code == 2 && said);
    }
    return 0;
}

/* dataloader-starvation on a real loop (train_loop on the simulated CUDA): its place lies inside
 * a true idle gap of the GPU, from the simulation's log of every operation's true interval
 * (FAKECUDA_TRUTH), one of the loop's 20 ms gaps, not the slow steps' 170 ms ones (not the
 * typical gap). Recorded gaps are lower bounds of the true ones (README: an end-bounded interval ends
 * late, and a batch copy's record on an idle stream starts at its call, before its staging), so
 * the place lies inside the true gap (up to the anchor's error, tests/tracer/test-truth.c). */
#define OV_TOL_NS 10000
TEST_IMPL(diag_at_against_truth)
{
    char dir[4096], truth[4096], env0[4200], *out;
    snprintf(truth, sizeof truth, "%s/truth", ctt_tmpdir());
    snprintf(env0, sizeof env0, "FAKECUDA_TRUTH=%s", truth);
    char *env[] = {env0, "FAKECUDA_KERNEL_NS=*=200000", NULL};
    /* 30 steps: the loop's gaps outweigh the slow steps' even when a loaded machine stretches a
     * few of them (the diagnosis counts the band of lengths holding the most gap time) */
    ASSERT(an_trace_workload(dir, "loop", "train_loop --iters 30 --loader-ms 20 --slow-steps 5-6:150",
                             env, &out));
    free(out);
    /* the true intervals, by start */
    typedef struct {
        long long start, end;
    } iv;
    iv *v = NULL, x;
    size_t n = 0, cap = 0;
    FILE *f = fopen(truth, "r");
    ASSERT(f != NULL);
    while (fscanf(f, "%*u %*u %*u %*7s %*u %lld %lld %*d %*d", &x.start, &x.end) == 2) {
        if (n == cap)
            v = realloc(v, (cap = cap ? 2 * cap : 512) * sizeof *v);
        v[n++] = x;
    }
    fclose(f);
    ASSERT(n > 100);
    for (size_t i = 1; i < n; i++) /* insertion sort: the log is nearly in order */
        for (size_t k = i; k > 0 && v[k].start < v[k - 1].start; k--) {
            iv t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    dump_t d;
    ASSERT(load_dump(&d, dir) == 0);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    uint64_t a, b;
    ASSERT(at_of(s, "dataloader-starvation", &a, &b));
    long long at0 = (long long)(a + d.t0), at1 = (long long)(b + d.t0), in = -1, slow = 0;
    long long end = 0; /* of the union so far */
    for (size_t i = 1; i < n; i++) {
        end = v[i - 1].end > end ? v[i - 1].end : end;
        long long g0 = end, g1 = v[i].start;
        if (g1 <= g0)
            continue;
        slow += g1 - g0 > 100000000;
        if (at0 >= g0 - OV_TOL_NS && at1 <= g1 + OV_TOL_NS)
            in = g1 - g0;
    }
    if (in < 0)
        fprintf(stderr, "at [%lld, %lld] lies in no true gap\n", at0, at1);
    ASSERT(in >= 0);
    ASSERT_INT(slow, >=, 2); /* a loaded machine may stall a step too */
    /* the loader's 20 ms and the step's host work (longer on a loaded machine), not a stall */
    ASSERT(in >= 20000000 && in < 100000000);
    ASSERT(at1 - at0 >= 16000000);
    free(v);
    free_dump(&d);
    tj_free(s);
    return 0;
}
