/* NVTX: libcutrace as the program's NVTX tool (tests/workloads/nvtx_ranges.c, NVIDIA's own
 * nvtx3 headers, which dlopen the library NVTX_INJECTION64_PATH names). Checked against what
 * the workload does and measures itself: the nesting of its threads' push/pop ranges and their
 * times, an unbalanced pop, a range ended in another thread, marks with attributes, a domain
 * with a registered string and a named category, and a PyTorch-style stream of 10,000 distinct
 * names that leaves the string table bounded. */
#include "tr.h"

#include <stdlib.h>
#include <string.h>

#define NVTX_WORKERS 4
#define NVTX_ROUNDS 20
#define NVTX_NAMES 10000
#define NVTX_OUT "nvtx_ranges: threads=4 rounds=20 names=10000\n"
/* How far a recorded time may be from the program's own clock_gettime around it: the tracer's
 * cycle-counter-to-CLOCK_MONOTONIC conversion (ctp_clock.c) was found a few ns off here. */
#define NVTX_CLOCK_TOL 1000
/* The writer's bound of distinct messages, and of normalized ones, per file (FORMAT.md 4.8). */
#define NVTX_BOUND 1024

typedef struct {
    unsigned tid;
    unsigned long long before, after;
} nvtx_outer;

/* The workload's own measurements, one line per outer range. */
static int nvtx_times(const char *path, nvtx_outer *v, int max)
{
    char *text = ctt_read_file(path, NULL);
    if (!text)
        return -1;
    int n = 0;
    for (char *line = text; n < max && *line;) {
        if (sscanf(line, "%u %llu %llu", &v[n].tid, &v[n].before, &v[n].after) == 3)
            n++;
        char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(text);
    return n;
}

static const tr_rec *nvtx_find(const tr_trace *t, uint32_t type, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == type && t->v[i].name && strcmp(t->v[i].name, name) == 0)
            return &t->v[i];
    return NULL;
}

/* A range of thread tid, at depth, inside [start, end]. */
static int nvtx_inside(const tr_trace *t, uint32_t tid, uint32_t depth, const char *name,
                       uint64_t start, uint64_t end)
{
    int n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const ct_rec *r = &t->v[i].r;
        n += r->type == CT_REC_NVTX_RANGE && r->u.nvtx_range.end_tid == tid &&
             r->u.nvtx_range.depth == depth && t->v[i].name && !strcmp(t->v[i].name, name) &&
             r->u.nvtx_range.start >= start && r->ts <= end;
    }
    return n;
}

/* Runs nvtx_ranges (args after its path) under cutrace run into out and loads the trace. */
static int nvtx_traced(ctt_proc *p, tr_trace *t, const char *out, char *arg, char *const env[])
{
    char prog[4096];
    char *cmd[] = {(char *)tr_workload(prog, "nvtx_ranges"), arg, NULL};
    ASSERT_INT(tr_run(p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(*p, 0);
    ASSERT_STR(p->out, NVTX_OUT);
    ASSERT_INT(tr_load(t, out), ==, 0);
    return 0;
}

TEST_IMPL(nvtx_ranges_recorded)
{
    char out[4096], times[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(times, sizeof times, "%s/times", ctt_tmpdir());
    /* The 20,000 calls of the name stream come in ~2 ms, faster than the writer drains while it
     * interns their first names on two shared cores: the default 1 MiB ring may overflow (the
     * drops are counted, loss reason 1). What is recorded is the question here, not that. */
    char *env[] = {"CUTRACE_RING_KB=8192", NULL};
    ctt_proc p;
    tr_trace t;
    ASSERT_INT(nvtx_traced(&p, &t, out, times, env), ==, 0);
    ASSERT_UINT(t.stats[0].lost, ==, 0);
    uint32_t pid = t.pids[0];

    /* Each worker's 20 outer ranges: where the workload measured them, each holding its middle
     * and inner range; every push/pop range starts and ends in its thread. */
    nvtx_outer m[NVTX_WORKERS * NVTX_ROUNDS];
    ASSERT_INT(nvtx_times(times, m, NVTX_WORKERS * NVTX_ROUNDS), ==, NVTX_WORKERS * NVTX_ROUNDS);
    size_t pushpop = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type != CT_REC_NVTX_RANGE || r->u.nvtx_range.kind != CT_NVTX_PUSH_POP)
            continue;
        pushpop++;
        ASSERT_UINT(r->u.nvtx_range.start_tid, ==, r->u.nvtx_range.end_tid);
        ASSERT_UINT(r->u.nvtx_range.end_tid, ==, r->tid);
        ASSERT_UINT(r->u.nvtx_range.start, <=, r->ts);
    }
    /* 3 per round and worker, the unbalanced pop, the domain's range, the 10,000 names */
    ASSERT_UINT(pushpop, ==, 3 * NVTX_WORKERS * NVTX_ROUNDS + 1 + 1 + NVTX_NAMES);
    for (int k = 0; k < NVTX_WORKERS * NVTX_ROUNDS; k++) {
        /* the one outer range the workload timed: inside its measurement */
        uint64_t lo = m[k].before - NVTX_CLOCK_TOL, hi = m[k].after + NVTX_CLOCK_TOL;
        ASSERT_INT(nvtx_inside(&t, m[k].tid, 0, "outer", lo, hi), ==, 1);
        const tr_rec *o = NULL;
        for (size_t i = 0; i < t.n && !o; i++) {
            const ct_rec *r = &t.v[i].r;
            if (r->type == CT_REC_NVTX_RANGE && r->u.nvtx_range.end_tid == m[k].tid &&
                r->u.nvtx_range.depth == 0 && r->u.nvtx_range.start >= lo && r->ts <= hi)
                o = &t.v[i];
        }
        ASSERT(o != NULL);
        ASSERT_INT(nvtx_inside(&t, m[k].tid, 1, "middle", o->r.u.nvtx_range.start, o->r.ts), ==, 1);
        ASSERT_INT(nvtx_inside(&t, m[k].tid, 2, "inner", o->r.u.nvtx_range.start, o->r.ts), ==, 1);
        ASSERT_STR(o->symbol, "outer");
    }
    for (int w = 0; w < NVTX_WORKERS; w++) {
        /* nvtxNameOsThreadA: a mark naming the worker's thread id */
        char name[16];
        snprintf(name, sizeof name, "nvtx-%d", w);
        const tr_rec *n = nvtx_find(&t, CT_REC_NVTX_MARK, name);
        ASSERT(n != NULL);
        ASSERT_UINT(n->r.u.nvtx_mark.flags, ==, CT_NVTX_THREAD_NAME);
        ASSERT_UINT(n->r.u.nvtx_mark.payload, ==, n->r.tid);
    }

    /* The pop with nothing pushed, and the end of the range started before the trace: each
     * recorded, unmatched, in the main thread, with no time and no name. */
    size_t unmatched[2] = {0, 0};
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type == CT_REC_NVTX_RANGE && (r->u.nvtx_range.flags & CT_NVTX_UNMATCHED)) {
            ASSERT_UINT(r->u.nvtx_range.kind, <=, CT_NVTX_START_END);
            unmatched[r->u.nvtx_range.kind]++;
            ASSERT_UINT(r->tid, ==, pid);
            ASSERT_UINT(r->u.nvtx_range.start, ==, r->ts);
            ASSERT(t.v[i].name == NULL);
        }
    }
    ASSERT_UINT(unmatched[CT_NVTX_PUSH_POP], ==, 1);
    ASSERT_UINT(unmatched[CT_NVTX_START_END], ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_RANGE, "before-cuda"), ==, 0);

    /* Started in the main thread, ended in another: one record joining both. */
    const tr_rec *h = nvtx_find(&t, CT_REC_NVTX_RANGE, "handoff");
    ASSERT(h != NULL);
    ASSERT_UINT(h->r.u.nvtx_range.kind, ==, CT_NVTX_START_END);
    ASSERT_UINT(h->r.u.nvtx_range.start_tid, ==, pid);
    ASSERT(h->r.u.nvtx_range.end_tid != pid);
    ASSERT_UINT(h->r.u.nvtx_range.end_tid, ==, h->r.tid);
    ASSERT(h->r.u.nvtx_range.id != 0);
    ASSERT_UINT(h->r.u.nvtx_range.flags, ==, 0);
    ASSERT_UINT(h->r.u.nvtx_range.start, <, h->r.ts);

    /* 2000 ranges started in one thread and ended in the main one, across writer passes:
     * each joined (none unmatched), naming both threads. */
    size_t relays = 0;
    uint32_t starter = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type != CT_REC_NVTX_RANGE || !t.v[i].name || strcmp(t.v[i].name, "relay"))
            continue;
        relays++;
        starter = starter ? starter : r->u.nvtx_range.start_tid;
        ASSERT_UINT(r->u.nvtx_range.kind, ==, CT_NVTX_START_END);
        ASSERT_UINT(r->u.nvtx_range.start_tid, ==, starter);
        ASSERT_UINT(r->u.nvtx_range.end_tid, ==, pid);
        ASSERT_UINT(r->u.nvtx_range.flags, ==, 0);
        ASSERT_UINT(r->u.nvtx_range.start, <=, r->ts);
    }
    ASSERT_UINT(relays, ==, 2000);
    ASSERT(starter != pid);

    /* Marks, with the attributes given. */
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_MARK, "mark-a"), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_MARK, "wide-\xc3\xa9\xe4\xb8\xad"), ==, 1); /* UTF-8 */
    const tr_rec *x = nvtx_find(&t, CT_REC_NVTX_MARK, "mark-ex");
    ASSERT(x != NULL);
    ASSERT_UINT(x->r.u.nvtx_mark.category, ==, 3);
    ASSERT_UINT(x->r.u.nvtx_mark.color, ==, 0xff00ff00u);
    ASSERT_UINT(x->r.u.nvtx_mark.flags, ==, CT_NVTX_COLOR);
    ASSERT_UINT(x->r.u.nvtx_mark.payload_kind, ==, 1); /* NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 */
    ASSERT_UINT(x->r.u.nvtx_mark.payload, ==, 42);
    ASSERT(x->domain == NULL);

    /* Marks over the 512 bytes the tracer keeps of a message: cut to them on a character
     * boundary, marked with their length as a STRING over the format's limit is. */
    char cut[600], wcut[600];
    memcpy(cut, "long-", 5);
    memset(cut + 5, 'x', 481);
    strcpy(cut + 486, "...[truncated, 1000 bytes]");
    ASSERT_UINT(strlen(cut), ==, 512);
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_MARK, cut), ==, 1);
    strcpy(wcut, "wide-long-");
    for (int i = 0; i < 238; i++)
        strcat(wcut, "\xc3\xa9");
    strcat(wcut, "...[truncated, 610 bytes]");
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_MARK, wcut), ==, 1);

    /* The domain: its category's name, and a range named by a registered string. */
    const tr_rec *c = nvtx_find(&t, CT_REC_NVTX_MARK, "io");
    ASSERT(c != NULL);
    ASSERT_UINT(c->r.u.nvtx_mark.flags, ==, CT_NVTX_CATEGORY_NAME);
    ASSERT_UINT(c->r.u.nvtx_mark.category, ==, 7);
    ASSERT(c->domain != NULL);
    ASSERT_STR(c->domain, "cutrace-test");
    const tr_rec *d = nvtx_find(&t, CT_REC_NVTX_RANGE, "registered-phase");
    ASSERT(d != NULL);
    ASSERT(d->domain != NULL);
    ASSERT_STR(d->domain, "cutrace-test");
    ASSERT_UINT(d->r.u.nvtx_range.category, ==, 7);
    ASSERT_UINT(d->r.u.nvtx_range.payload_kind, ==, 5); /* NVTX_PAYLOAD_TYPE_INT32 */
    ASSERT_UINT(d->r.u.nvtx_range.payload, ==, 0xfffffffbu); /* -5 as its 32 bits */
    ASSERT_UINT(d->r.u.nvtx_range.depth, ==, 0);

    /* 10,000 distinct names: every range grouped under one normalized name, at most the bound
     * of them named as given (in order: the earliest), the rest counted, the table bounded. */
    size_t grouped = 0, named = 0, last_named = 0, first_unnamed = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.v[i].r.type != CT_REC_NVTX_RANGE || !t.v[i].symbol ||
            strcmp(t.v[i].symbol, "aten::add, seq = #, sizes = [[#, #]]"))
            continue;
        grouped++;
        if (t.v[i].name) {
            char want[96];
            snprintf(want, sizeof want, "aten::add, seq = %zu, sizes = [[3, 4]]", 999 + grouped);
            ASSERT_STR(t.v[i].name, want);
            named++;
            last_named = grouped;
        } else if (!first_unnamed) {
            first_unnamed = grouped;
        }
    }
    ASSERT_UINT(grouped, ==, NVTX_NAMES);
    ASSERT_UINT(named, >, 0);
    ASSERT_UINT(named, <, NVTX_BOUND);
    ASSERT_UINT(last_named, <, first_unnamed);
    ASSERT_UINT(t.stats[0].nvtx_unnamed, ==, NVTX_NAMES - named);
    /* API names, frames, thread names, the workload's dozen messages, and the bounded rest */
    ASSERT_UINT(t.nstrings, <, NVTX_BOUND + 300);

    /* Each range's NVTX_BEGIN, in its starting thread's stream at its start, before it: the
     * same names, kind and id or depth; none for the unmatched ones; one per range. */
    size_t begins = 0, ranges = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        begins += r->type == CT_REC_NVTX_BEGIN;
        if (r->type != CT_REC_NVTX_RANGE || (r->u.nvtx_range.flags & CT_NVTX_UNMATCHED))
            continue;
        ranges++;
        const ct_rec_nvtx_range *g = &r->u.nvtx_range;
        const tr_rec *b = NULL;
        for (size_t j = i; j-- > 0 && !b;) {
            const ct_rec *c = &t.v[j].r;
            if (c->type == CT_REC_NVTX_BEGIN && c->ts == g->start && c->tid == g->start_tid &&
                c->u.nvtx_begin.tid == g->start_tid && c->u.nvtx_begin.kind == g->kind &&
                c->u.nvtx_begin.id == g->id && c->u.nvtx_begin.depth == g->depth)
                b = &t.v[j];
        }
        ASSERT(b != NULL);
        ASSERT((b->name == NULL) == (t.v[i].name == NULL));
        ASSERT(!b->name || !strcmp(b->name, t.v[i].name));
        ASSERT(!b->symbol == !t.v[i].symbol);
        ASSERT(!b->symbol || !strcmp(b->symbol, t.v[i].symbol));
        ASSERT(!b->domain == !t.v[i].domain);
    }
    ASSERT_UINT(begins, ==, ranges);

    /* dump shows them; the analyzer reads the trace */
    char *dump = tr_analyze((char *[]){"dump", out, NULL});
    ASSERT(dump != NULL);
    ASSERT_CONTAINS(dump, " nvtx-mark ");
    ASSERT_CONTAINS(dump, "name=\"handoff\"");
    ASSERT_CONTAINS(dump, "...[truncated, 1000 bytes]");
    ASSERT_CONTAINS(dump, "...[truncated, 610 bytes]");
    free(dump);
    char tl[4096];
    snprintf(tl, sizeof tl, "%s/timeline.json", ctt_tmpdir());
    free(tr_analyze((char *[]){"timeline", "-o", tl, out, NULL}));
    char *tj = ctt_read_file(tl, NULL);
    ASSERT(tj != NULL);
    ASSERT_CONTAINS(tj, "...[truncated, 1000 bytes]");
    ASSERT_CONTAINS(tj, "...[truncated, 610 bytes]");
    free(tj);
    char *sum = tr_analyze((char *[]){"summary", out, NULL});
    ASSERT(sum != NULL);
    ASSERT_CONTAINS(sum, "ended: exit status 0");
    free(sum);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* The program's output and exit status are the same traced, untraced (no cutrace, no NVTX
 * tool), and preloaded without NVTX_INJECTION64_PATH (traced, no NVTX records). */
TEST_IMPL(nvtx_untraced_identical)
{
    char prog[4096], fake[4096], out[4096], llp[4200];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "nvtx_ranges"), NULL};
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *plain[] = {llp, "NVTX_INJECTION64_PATH=", "LD_PRELOAD=", NULL};
    ctt_proc u, p;
    ASSERT_INT(ctt_run(&u, cmd, plain, 60), ==, 0);
    TR_ASSERT_EXIT(u, 0);
    ASSERT_STR(u.out, NVTX_OUT);
    ASSERT_STR(u.err, "");
    char *unset[] = {"NVTX_INJECTION64_PATH=", NULL};
    ASSERT_INT(tr_run_preloaded(&p, out, cmd, unset, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_STR(p.out, u.out);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cudaMalloc"), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_RANGE, NULL) + tr_count(&t, CT_REC_NVTX_MARK, NULL), ==, 0);
    tr_free(&t);
    ctt_proc_free(&u);
    ctt_proc_free(&p);
    return 0;
}

/* A tool the user named stays the program's: cutrace run sets NVTX_INJECTION64_PATH only when
 * it is unset (here a library that does not exist: NVTX then runs without a tool). */
TEST_IMPL(nvtx_user_injection_kept)
{
    char out[4096], tool[4200];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(tool, sizeof tool, "NVTX_INJECTION64_PATH=%s/no-such-tool.so", ctt_tmpdir());
    char *env[] = {tool, NULL};
    ctt_proc p;
    tr_trace t;
    ASSERT_INT(nvtx_traced(&p, &t, out, NULL, env), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cudaMalloc"), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_RANGE, NULL) + tr_count(&t, CT_REC_NVTX_MARK, NULL), ==, 0);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* NVTX's C++ API (tests/workloads/nvtx3_ranges.cpp): scoped ranges of a domain named by a
 * registered string in a named category with a payload and a color, global-domain ranges
 * inside them (each domain nests on its own: both at level 0), a mark, and a range started in
 * one std::thread and ended in another. */
TEST_IMPL(nvtx_cpp_api)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "nvtx3_ranges"), NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_STR(p.out, "nvtx3_ranges: steps=5\n");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    const tr_rec *c = nvtx_find(&t, CT_REC_NVTX_MARK, "io");
    ASSERT(c != NULL && c->domain != NULL);
    ASSERT_STR(c->domain, "cutrace-cpp");
    ASSERT_UINT(c->r.u.nvtx_mark.category, ==, 11);
    ASSERT_UINT(c->r.u.nvtx_mark.flags, ==, CT_NVTX_CATEGORY_NAME);
    uint64_t seen = 0; /* bit i: the step with payload i */
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type != CT_REC_NVTX_RANGE || !t.v[i].name || strcmp(t.v[i].name, "step"))
            continue;
        ASSERT(t.v[i].domain != NULL);
        ASSERT_STR(t.v[i].domain, "cutrace-cpp");
        ASSERT_UINT(r->u.nvtx_range.category, ==, 11);
        ASSERT_UINT(r->u.nvtx_range.payload_kind, ==, 5); /* NVTX_PAYLOAD_TYPE_INT32 */
        ASSERT_UINT(r->u.nvtx_range.color, ==, 0xffff0000u);
        ASSERT_UINT(r->u.nvtx_range.flags, ==, CT_NVTX_COLOR);
        ASSERT_UINT(r->u.nvtx_range.depth, ==, 0);
        ASSERT_UINT(r->u.nvtx_range.payload, <, 5);
        seen |= 1ull << r->u.nvtx_range.payload;
        ASSERT_INT(nvtx_inside(&t, r->tid, 0, "load", r->u.nvtx_range.start, r->ts), ==, 1);
    }
    ASSERT_UINT(seen, ==, 0x1f);
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_RANGE, "load"), ==, 5);
    ASSERT_UINT(tr_count(&t, CT_REC_NVTX_MARK, "done"), ==, 1);
    const tr_rec *x = nvtx_find(&t, CT_REC_NVTX_RANGE, "cross");
    ASSERT(x != NULL);
    ASSERT_UINT(x->r.u.nvtx_range.kind, ==, CT_NVTX_START_END);
    ASSERT_UINT(x->r.u.nvtx_range.start_tid, ==, t.pids[0]);
    ASSERT(x->r.u.nvtx_range.end_tid != t.pids[0]);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
