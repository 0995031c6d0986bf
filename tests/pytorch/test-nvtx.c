/* PyTorch's NVTX (tests/pytorch/nvtx.py) reaches cutrace: torch.cuda.nvtx and emit_nvtx() in
 * PyPI's torch are NVIDIA's header-only nvtx3 compiled into libtorch_python.so, which loads the
 * library NVTX_INJECTION64_PATH names (`cutrace run` sets it). Checked against what the script
 * says it ran: its train_step and data_load ranges, exactly as many, nested at depths 0 and 1;
 * emit_nvtx's per-operator ranges, one "aten::add, seq = N, op_id = M" per chained addition,
 * inside the steps that emitted them, each grouped by its name with digit runs as '#'; at most
 * 1,024 distinct names interned although the operators' names are more, the rest recorded by
 * their group and counted in LOSS records (reason 5); and the script's output and exit status
 * as without tracing; the summary's per-range table says as much, and gives the steps the GPU
 * operations of the calls made inside them, counted here from the records; and the timeline
 * draws them so. */
#include "pt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cttrace.h"

#define NVTX_BOUND 1024 /* distinct messages, and normalized ones, a trace keeps (FORMAT.md 4.8) */
#define ADD_GROUP "aten::add, seq = #, op_id = #"

typedef struct {
    char name[256], group[256]; /* "" for none */
    unsigned name_id, group_id, depth, flags, tid;
    unsigned long long start, end;
} pt_range;

typedef struct {
    unsigned long long corr, start;
    unsigned tid;
} pt_call;

static int pt_call_cmp(const void *a, const void *b)
{
    unsigned long long x = ((const pt_call *)a)->corr, y = ((const pt_call *)b)->corr;
    return x < y ? -1 : x > y;
}

/* The value of ` key=` in a dump line: a quoted string ("TEXT"#ID: text and id) or `-`. */
static void pt_dump_str(const char *line, const char *key, char out[256], unsigned *id)
{
    char k[32];
    snprintf(k, sizeof k, " %s=", key);
    const char *v = strstr(line, k);
    out[0] = 0;
    *id = 0;
    if (!v || v[strlen(k)] != '"')
        return;
    v += strlen(k) + 1;
    const char *q = strstr(v, "\"#");
    if (!q)
        return;
    snprintf(out, 256, "%.*s", (int)(q - v), v);
    *id = (unsigned)strtoul(q + 2, NULL, 10);
}

static unsigned long long pt_dump_num(const char *line, const char *key)
{
    char k[32];
    snprintf(k, sizeof k, " %s=", key);
    const char *v = strstr(line, k);
    return v ? strtoull(v + strlen(k), NULL, 0) : 0;
}

/* text with each maximal run of decimal digits replaced by one '#' (FORMAT.md 4.8) */
static void pt_normalize(const char *text, char out[256])
{
    size_t o = 0;
    for (const char *c = text; *c && o < 255; c++)
        if (*c < '0' || *c > '9')
            out[o++] = *c;
        else if (c == text || c[-1] < '0' || c[-1] > '9')
            out[o++] = '#';
    out[o] = 0;
}

static int pt_cmp_u(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

/* distinct nonzero values of v (sorted in place) */
static int pt_distinct(unsigned *v, size_t n)
{
    qsort(v, n, sizeof *v, pt_cmp_u);
    int d = 0;
    for (size_t i = 0; i < n; i++)
        d += v[i] && (i == 0 || v[i] != v[i - 1]);
    return d;
}

static int pt_inside(const pt_range *in, const pt_range *out)
{
    return in->tid == out->tid && in->start >= out->start && in->end <= out->end;
}

/* `cutrace timeline` draws the ranges: every train_step, data_load and chained addition (by
 * name, or past the bound by its group) on one NVTX track, each of the others inside a
 * train_step. */
static int pt_timeline_nests(const char *dir, int pushes, int loads, int adds)
{
    tj *j = an_timeline(dir);
    ASSERT(j);
    const tj *ev = tj_get(j, "traceEvents");
    long long steps[64][2];
    double track = -1;
    int nstep = 0, nload = 0, nadd = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; ev && i < ev->n; i++) {
            const tj *e = ev->v[i];
            const char *cat = tj_str(e, "cat"), *name = tj_str(e, "name");
            if (strcmp(tj_str(e, "ph"), "X") || !cat || strcmp(cat, "nvtx"))
                continue;
            long long ts = llround(tj_num(e, "ts") * 1000), end = ts + llround(tj_num(e, "dur") * 1000);
            char norm[256];
            pt_normalize(name, norm);
            int step = !strcmp(name, "train_step"), load = !strcmp(name, "data_load"),
                add = !strcmp(norm, ADD_GROUP);
            if (pass == 0 && step) {
                ASSERT(track < 0 || tj_num(e, "tid") == track);
                track = tj_num(e, "tid");
                ASSERT_INT(nstep, <, 64);
                steps[nstep][0] = ts;
                steps[nstep++][1] = end;
            }
            if (pass == 0 || !(load || add))
                continue;
            ASSERT(tj_num(e, "tid") == track);
            int inside = 0;
            for (int k = 0; k < nstep && !inside; k++)
                inside = ts >= steps[k][0] && end <= steps[k][1];
            ASSERT(inside);
            nload += load;
            nadd += add;
        }
    tj_free(j);
    ASSERT_INT(nstep, ==, pushes);
    ASSERT_INT(nload, ==, loads);
    ASSERT_INT(nadd, ==, adds);
    return 0;
}

TEST_IMPL(pytorch_nvtx_ranges)
{
    static const char *const args[] = {"--steps", "6", "--emit-steps", "2", "--chain", "700", NULL};
    ctt_proc p;
    char dir[4096], one[4096];
    if (pt_run_both(&p, dir, "nvtx", "nvtx.py", args, NULL))
        return 1;
    int pushes, loads, adds;
    const char *said = strstr(p.out, "train_step pushes ");
    ASSERT(said && sscanf(said, "train_step pushes %d data_load ranges %d chained additions %d",
                          &pushes, &loads, &adds) == 3);
    ASSERT_INT(pushes, ==, 6);
    ctt_proc_free(&p);
    ASSERT_INT(pt_trace_files(dir, one), ==, 1);
    ASSERT_INT(an_run(&p, "dump {}", one), ==, 0);
    ASSERT_INT(p.code, ==, 0);

    size_t n = 0, cap = 1024, names = 0;
    pt_range *r = malloc(cap * sizeof *r); /* ranges; the ids of every NVTX record's names: */
    unsigned *name_ids = malloc(cap * sizeof *name_ids), *group_ids = malloc(cap * sizeof *group_ids);
    unsigned long long lost_names = 0;
    /* the calls (corr, thread, start) and the corrs of GPU intervals, for the GPU work of the
     * steps counted from the records themselves */
    size_t ncalls = 0, ngpu = 0, calls_cap = 1024, gpu_cap = 1024;
    pt_call *calls = malloc(calls_cap * sizeof *calls);
    unsigned long long *gpu = malloc(gpu_cap * sizeof *gpu);
    for (char *save = NULL, *l = strtok_r(p.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strstr(l, " api ")) {
            if (ncalls == calls_cap)
                calls = realloc(calls, (calls_cap *= 2) * sizeof *calls);
            calls[ncalls++] = (pt_call){pt_dump_num(l, "corr"), pt_dump_num(l, "start"),
                                        (unsigned)pt_dump_num(l, "tid")};
            continue;
        }
        if (strstr(l, " gpu ")) {
            if (ngpu == gpu_cap)
                gpu = realloc(gpu, (gpu_cap *= 2) * sizeof *gpu);
            gpu[ngpu++] = pt_dump_num(l, "corr");
            continue;
        }
        int range = strstr(l, " nvtx-range ") != NULL;
        if (strstr(l, " loss ") && pt_dump_num(l, "reason") == 5)
            lost_names += pt_dump_num(l, "count");
        if (!range && !strstr(l, " nvtx-mark ") && !strstr(l, " nvtx-begin "))
            continue;
        if (names == cap) {
            cap *= 2;
            r = realloc(r, cap * sizeof *r);
            name_ids = realloc(name_ids, cap * sizeof *name_ids);
            group_ids = realloc(group_ids, cap * sizeof *group_ids);
        }
        pt_range x;
        pt_dump_str(l, "name", x.name, &x.name_id);
        pt_dump_str(l, "group", x.group, &x.group_id);
        name_ids[names] = x.name_id;
        group_ids[names++] = x.group_id;
        if (!range)
            continue;
        x.depth = (unsigned)pt_dump_num(l, "depth");
        x.flags = (unsigned)pt_dump_num(l, "flags");
        x.tid = (unsigned)pt_dump_num(l, "start_thread");
        x.start = pt_dump_num(l, "start");
        x.end = x.start + pt_dump_num(l, "dur");
        r[n++] = x;
    }
    ctt_proc_free(&p);

    /* the script's own ranges: as many as it made, train_step outermost, data_load inside one */
    const pt_range *step[64];
    int nstep = 0, nload = 0, nadd = 0, unnamed = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, "train_step") && nstep < 64) {
            ASSERT_UINT(r[i].depth, ==, 0);
            step[nstep++] = &r[i];
        }
    ASSERT_INT(nstep, ==, pushes);
    for (size_t i = 0; i < n; i++) {
        ASSERT_UINT(r[i].flags & CT_NVTX_UNMATCHED, ==, 0);
        int in_step = -1;
        for (int s = 0; s < nstep && in_step < 0; s++)
            if (pt_inside(&r[i], step[s]))
                in_step = s;
        if (!strcmp(r[i].name, "data_load")) {
            ASSERT_UINT(r[i].depth, ==, 1);
            ASSERT_INT(in_step, >=, 0);
            nload++;
        }
        /* a name the trace kept is grouped by its normalized text; one past the bound has its
         * group alone */
        char norm[256];
        pt_normalize(r[i].name, norm);
        if (r[i].name_id)
            ASSERT_STR(r[i].group, norm);
        else
            unnamed += r[i].group_id != 0;
        if (!strcmp(r[i].group, ADD_GROUP)) {
            /* the chained additions, in the emitting steps (the last two), under train_step */
            ASSERT_INT(in_step, >=, nstep - 2);
            ASSERT_UINT(r[i].depth, >=, 1);
            nadd++;
        }
    }
    ASSERT_INT(nload, ==, loads);
    ASSERT_INT(nadd, ==, adds);

    /* bounded interning: the operators' names outnumber the bound; the rest are counted */
    int dn = pt_distinct(name_ids, names), dg = pt_distinct(group_ids, names);
    ASSERT_INT(dn, <=, NVTX_BOUND);
    ASSERT_INT(dg, <=, NVTX_BOUND);
    ASSERT_INT(unnamed, >, 0);
    ASSERT_UINT(lost_names, ==, (unsigned long long)unnamed);

    /* the summary's ranges: as many as the script made, and the steps' GPU work that of the
     * calls made inside them on their thread, counted here from the records */
    qsort(calls, ncalls, sizeof *calls, pt_call_cmp);
    long long in_steps = 0;
    for (size_t g = 0; g < ngpu; g++) {
        pt_call key = {gpu[g], 0, 0};
        const pt_call *c = bsearch(&key, calls, ncalls, sizeof *calls, pt_call_cmp);
        for (int k = 0; c && k < nstep; k++)
            in_steps += c->tid == step[k]->tid && c->start >= step[k]->start && c->start <= step[k]->end;
    }
    ASSERT(in_steps > 0);
    tj *sum = an_summary(dir, NULL);
    ASSERT(sum);
    const tj *ranges = tj_path(sum, "nvtx.ranges");
    const tj *ts = tj_find(ranges, "name", "train_step"), *dl = tj_find(ranges, "name", "data_load");
    const tj *ad = tj_find(ranges, "name", ADD_GROUP);
    ASSERT(ts && dl && ad);
    ASSERT_INT(tj_num(ts, "instances"), ==, pushes);
    ASSERT_INT(tj_num(ts, "top_level"), ==, pushes);
    ASSERT_INT(tj_num(dl, "instances"), ==, loads);
    ASSERT_INT(tj_num(ad, "instances"), ==, adds);
    ASSERT_INT(tj_num(ts, "gpu_ops"), ==, in_steps);
    ASSERT_STR(tj_str(sum, "nvtx.iterations.0.name"), "train_step");
    tj_free(sum);
    free(calls);
    free(gpu);
    free(r);
    free(name_ids);
    free(group_ids);
    return pt_timeline_nests(dir, pushes, loads, adds);
}
