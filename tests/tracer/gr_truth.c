/* CUDA graph checks the tracer and nvrt suites share (see gr_truth.h). */
#include "gr_truth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_helpers.h"

size_t gr_read_truth(const char *path, gr_truth **out)
{
    FILE *f = fopen(path, "r");
    *out = NULL;
    if (!f)
        return 0;
    gr_truth *v = NULL, o;
    size_t n = 0, cap = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        int at = 0;
        if (sscanf(line, "%d %u %lu %7s %*u %ld %ld %*d %*d%n", &o.pid, &o.tid, &o.idx, o.kind,
                   &o.start, &o.end, &at) != 6 || !at)
            continue;
        o.graph = 0;
        sscanf(line + at, " graph=%lu", &o.graph);
        if (n == cap)
            v = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
        v[n++] = o;
    }
    fclose(f);
    *out = v;
    return n;
}

/* graph_built's launches, phase by phase (tests/workloads/graph_built.cu): how many launches,
 * and per launch each kernel's nodes and the host-to-device copies, device-to-host copies and
 * sets. */
enum { GB_A, GB_B, GB_C, GB_D, GB_KERNELS };
static const char *const gb_names[GB_KERNELS] = {"a_kernel(float*)", "b_kernel(float*)",
                                                 "c_kernel(float*)", "d_kernel(float*)"};
static const struct {
    unsigned launches, kernels[GB_KERNELS], h2d, d2h, sets;
} gb_phases[] = {
    {3, {1, 1, 2, 0}, 1, 0, 1}, /* built, child graph of two c_kernel nodes */
    {2, {1, 0, 2, 1}, 1, 0, 1}, /* B's kernel set to d_kernel in the exec */
    {2, {1, 1, 2, 0}, 1, 0, 1}, /* instantiated again from the unchanged graph */
    {2, {1, 0, 2, 1}, 1, 0, 1}, /* updated to a clone whose B runs d_kernel */
    {2, {1, 1, 0, 0}, 0, 1, 1}, /* captured */
};
#define GB_PHASES (sizeof gb_phases / sizeof *gb_phases)

/* Per kernel name, its nodes in a timeline slice's "name xN, ..." list. */
static int gb_parse(const char *list, unsigned counts[GB_KERNELS])
{
    memset(counts, 0, GB_KERNELS * sizeof *counts);
    for (const char *p = list; p && *p;) {
        const char *x = strstr(p, " x");
        if (!x)
            return -1;
        size_t k = 0;
        while (k < GB_KERNELS && (strlen(gb_names[k]) != (size_t)(x - p) ||
                                  strncmp(p, gb_names[k], (size_t)(x - p))))
            k++;
        if (k == GB_KERNELS)
            return -1;
        counts[k] += (unsigned)strtoul(x + 2, NULL, 10);
        p = strchr(x, ',');
        p = p ? p + 2 : NULL;
    }
    return 0;
}

static int gb_by_ts(const void *a, const void *b)
{
    double x = tj_num(*(const tj *const *)a, "ts"), y = tj_num(*(const tj *const *)b, "ts");
    return (x > y) - (x < y);
}

int gr_built_check(const char *dir, const char *truth)
{
    gr_truth *tv;
    size_t nt = gr_read_truth(truth, &tv);
    unsigned launches = 0, want_k[GB_KERNELS] = {0}, want_h2d = 0, want_d2h = 0, want_sets = 0;
    for (size_t p = 0; p < GB_PHASES; p++) {
        launches += gb_phases[p].launches;
        for (size_t k = 0; k < GB_KERNELS; k++)
            want_k[k] += gb_phases[p].launches * gb_phases[p].kernels[k];
        want_h2d += gb_phases[p].launches * gb_phases[p].h2d;
        want_d2h += gb_phases[p].launches * gb_phases[p].d2h;
        want_sets += gb_phases[p].launches * gb_phases[p].sets;
    }

    /* the timeline: one slice per graph launch, in launch order; each lists what the truth's
     * lines of that launch (graph=L) executed, and what the program's phase ran */
    tj *tl = an_timeline(dir);
    ASSERT(tl != NULL);
    const tj *ev = tj_get(tl, "traceEvents");
    const tj *slices[64];
    size_t ns = 0;
    for (size_t i = 0; ev && i < ev->n; i++) {
        const char *nm = tj_str(ev->v[i], "name"), *ph = tj_str(ev->v[i], "ph");
        if (nm && ph && !strcmp(nm, "[CUDA graph]") && !strcmp(ph, "X") && ns < 64)
            slices[ns++] = ev->v[i];
    }
    ASSERT_UINT(ns, ==, launches);
    qsort(slices, ns, sizeof *slices, gb_by_ts);
    size_t launch = 0, truth_kernels = 0, truth_copies = 0;
    for (size_t p = 0; p < GB_PHASES; p++)
        for (unsigned i = 0; i < gb_phases[p].launches; i++, launch++) {
            size_t kernels = 0, copies = 0, sets = 0;
            for (size_t j = 0; j < nt; j++) {
                if (tv[j].graph != launch + 1)
                    continue;
                kernels += !strcmp(tv[j].kind, "kernel");
                copies += !strcmp(tv[j].kind, "copy");
                sets += !strcmp(tv[j].kind, "set");
            }
            const tj *s = slices[launch];
            ASSERT_NEAR(tj_num(s, "args.graph_kernels"), (double)kernels, 0);
            ASSERT_NEAR(tj_num(s, "args.graph_copies"), (double)copies, 0);
            ASSERT_NEAR(tj_num(s, "args.graph_sets"), (double)sets, 0);
            unsigned got[GB_KERNELS];
            ASSERT_INT(gb_parse(tj_str(s, "args.kernels"), got), ==, 0);
            for (size_t k = 0; k < GB_KERNELS; k++)
                ASSERT_UINT(got[k], ==, gb_phases[p].kernels[k]);
            ASSERT_UINT(copies, ==, gb_phases[p].h2d + gb_phases[p].d2h);
            ASSERT_UINT(sets, ==, gb_phases[p].sets);
            truth_kernels += kernels;
            truth_copies += copies + sets;
        }
    tj_free(tl);
    free(tv);

    /* the summary: each kernel and copy counted per launch, inside graphs, never timed */
    tj *s = an_summary(dir, NULL);
    ASSERT(s != NULL);
    const tj *ks = tj_get(s, "kernels");
    for (size_t k = 0; k < GB_KERNELS; k++) {
        const tj *row = tj_find(ks, "name", gb_names[k]);
        ASSERT(row != NULL);
        ASSERT_NEAR(tj_num(row, "instances"), want_k[k], 0);
        ASSERT_NEAR(tj_num(row, "graph_instances"), want_k[k], 0);
        ASSERT_NEAR(tj_num(row, "timed_instances"), 0, 0);
        ASSERT(isnan(tj_num(row, "total_ns")));
    }
    const tj *cs = tj_get(s, "copies");
    ASSERT(cs != NULL);
    static const char *const ops[] = {"H2D", "D2H", "memset"};
    const unsigned want_c[] = {want_h2d, want_d2h, want_sets};
    for (size_t o = 0; o < 3; o++) {
        const tj *row = tj_find(cs, "op", ops[o]);
        ASSERT(row != NULL);
        ASSERT_NEAR(tj_num(row, "count"), want_c[o], 0);
        ASSERT_NEAR(tj_num(row, "graph_count"), want_c[o], 0);
        ASSERT_NEAR(tj_num(row, "timed_count"), 0, 0);
        ASSERT_NEAR(tj_num(row, "bytes"), want_c[o] * 1024.0 * 4, 0);
    }
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launches"), launches, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launch_kernels"), (double)truth_kernels, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launch_copies"), (double)truth_copies, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.unknown_launches"), 0, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.instantiations"), 3, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.updates"), 1, 0);
    tj_free(s);
    return 0;
}
