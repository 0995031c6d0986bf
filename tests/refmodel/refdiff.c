/* rm_diff: the reference against cutrace's JSON, field by field (contract in refmodel.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "refmodel.h"
#include "an_helpers.h"

typedef struct {
    const char *what;
    int n;
} diffs;

static void differ(diffs *d, const char *where, const char *field, double got, double want)
{
    if (d->n++ < 20)
        fprintf(stderr, "%s: %s %s: cutrace %.0f, reference %.0f\n", d->what, where, field, got, want);
}

static void exact(diffs *d, const char *where, const tj *o, const char *field, uint64_t want)
{
    double got = tj_num(o, field);
    if (isnan(got) || got != (double)want)
        differ(d, where, field, got, (double)want);
}

/* A name as the JSON shows it, with every byte outside ASCII dropped (the JSON replaces
 * invalid UTF-8 by U+FFFD), for matching rows by name. */
static void ascii(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (; *s && o + 1 < len; s++)
        if ((unsigned char)*s < 0x80)
            out[o++] = *s;
    out[o] = 0;
}

static const tj *row(const tj *arr, const char *key, const char *name)
{
    char want[512], got[512];
    ascii(name, want, sizeof want);
    for (size_t i = 0; arr && i < arr->n; i++) {
        const char *s = tj_str(arr->v[i], key);
        if (!s)
            continue;
        ascii(s, got, sizeof got);
        if (!strcmp(got, want))
            return arr->v[i];
    }
    return NULL;
}

/* median_ns: exact up to 32 values (the mean of the two middle ones for an even count), beyond
 * within 1/32 of the lower middle value (the sketch reports the mean of its bucket). */
static void median(diffs *d, const char *where, const tj *o, const rm_stat *s)
{
    uint64_t lo, hi;
    rm_middle(s, &lo, &hi);
    double got = tj_num(o, "median_ns"), m = ((double)lo + (double)hi) / 2;
    int ok = s->n <= 32 ? fabs(got - m) <= 0.5
                        : got >= (double)lo * (1 - 1.0 / 32) - 1 && got <= (double)lo * (1 + 1.0 / 32) + 1;
    if (isnan(got) || !ok)
        differ(d, where, "median_ns", got, m);
}

static void table(diffs *d, const tj *arr, const char *key, const rm_stat *st, size_t n,
                  const char *what, int api)
{
    if (!arr || arr->n != n)
        differ(d, what, "rows", arr ? (double)arr->n : -1, (double)n);
    for (size_t i = 0; i < n; i++) {
        const rm_stat *s = &st[i];
        char where[600];
        snprintf(where, sizeof where, "%s \"%.500s\"", what, s->name);
        const tj *o = row(arr, key, s->name);
        if (!o) {
            differ(d, where, "missing row", 0, (double)s->n);
            continue;
        }
        exact(d, where, o, api ? "calls" : "instances", s->n);
        exact(d, where, o, "total_ns", s->total);
        exact(d, where, o, "min_ns", s->min);
        exact(d, where, o, "max_ns", s->max);
        if (api)
            exact(d, where, o, "failures", s->failures);
        median(d, where, o, s);
    }
}

static void copies(diffs *d, const tj *arr, const rm_result *r)
{
    if (!arr || arr->n != r->ncopies)
        differ(d, "copies", "rows", arr ? (double)arr->n : -1, (double)r->ncopies);
    for (size_t i = 0; i < r->ncopies; i++) {
        const rm_stat *s = &r->copies[i];
        char op[16], hk[16];
        if (sscanf(s->name, "%15[^/]/%15s", op, hk) != 2)
            continue;
        const tj *o = NULL;
        for (size_t k = 0; arr && k < arr->n && !o; k++)
            if (!strcmp(tj_str(arr->v[k], "op"), op) && !strcmp(tj_str(arr->v[k], "host_kind"), hk))
                o = arr->v[k];
        char where[64];
        snprintf(where, sizeof where, "copies %s", s->name);
        if (!o) {
            differ(d, where, "missing row", 0, (double)s->n);
            continue;
        }
        exact(d, where, o, "count", s->n);
        exact(d, where, o, "bytes", s->bytes);
        exact(d, where, o, "total_ns", s->total);
    }
}

static void breakdown(diffs *d, const tj *arr, const rm_breakdown *b, const tj *procs)
{
    char where[64];
    snprintf(where, sizeof where, "breakdown pid %u device %d", b->pid, b->device);
    const tj *o = NULL;
    for (size_t k = 0; arr && k < arr->n && !o; k++)
        if (tj_num(arr->v[k], "pid") == b->pid && tj_num(arr->v[k], "device") == b->device)
            o = arr->v[k];
    if (!o) {
        differ(d, where, "missing entry", 0, (double)b->window);
        return;
    }
    for (size_t k = 0; procs && k < procs->n; k++)
        if (tj_num(procs->v[k], "pid") == b->pid && tj_num(procs->v[k], "late_points") > 0)
            return; /* the analyzer says its breakdown is approximate */
    exact(d, where, o, "window_start_ns", b->window_start);
    exact(d, where, o, "window_ns", b->window);
    exact(d, where, o, "gpu_busy_ns", b->busy);
    exact(d, where, o, "gpu_idle_ns", b->window - b->busy);
    for (int k = 0; k < RM_NSPLIT; k++)
        exact(d, where, o, rm_split_names[k], b->split[k]);
    const tj *gaps = tj_get(o, "gaps");
    for (int c = 0; c < RM_NGAP; c++) {
        char f[64];
        snprintf(f, sizeof f, "%s.count", rm_gap_names[c]);
        exact(d, where, gaps, f, b->gap_count[c]);
        snprintf(f, sizeof f, "%s.total_ns", rm_gap_names[c]);
        exact(d, where, gaps, f, b->gap_ns[c]);
    }
    const tj *top = tj_get(o, "longest_gaps");
    if (!top || top->n != (size_t)b->ntop) {
        differ(d, where, "longest_gaps", top ? (double)top->n : -1, b->ntop);
        return;
    }
    for (int i = 0; i < b->ntop; i++) {
        const rm_gap *g = &b->top[i];
        char w[128];
        snprintf(w, sizeof w, "%s longest_gaps[%d]", where, i);
        exact(d, w, top->v[i], "start_ns", g->start);
        exact(d, w, top->v[i], "len_ns", g->len);
        const char *cause = tj_str(top->v[i], "cause");
        if (!cause || strcmp(cause, rm_gap_names[g->cause]))
            differ(d, w, rm_gap_names[g->cause], 0, 1);
        for (int k = 0; k < RM_NSPLIT; k++)
            exact(d, w, top->v[i], rm_split_names[k], g->split[k]);
    }
}

int rm_diff(const rm_result *r, const tj *s, const char *what)
{
    diffs d = {.what = what};
    const tj *bd = tj_get(s, "breakdown");
    if (!bd || bd->n != r->nbd)
        differ(&d, "breakdown", "entries", bd ? (double)bd->n : -1, (double)r->nbd);
    for (size_t i = 0; i < r->nbd; i++)
        breakdown(&d, bd, &r->bd[i], tj_get(s, "processes"));
    table(&d, tj_get(s, "kernels"), "name", r->kernels, r->nkernels, "kernel", 0);
    table(&d, tj_get(s, "api"), "name", r->api, r->napi, "api", 1);
    copies(&d, tj_get(s, "copies"), r);
    if (d.n > 20)
        fprintf(stderr, "%s: ... %d differences in all\n", what, d.n);
    return d.n;
}

int rm_check(const char *path, const char *extra, const char *what, rm_result **out)
{
    char err[512];
    rm_result *r = rm_compute(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s: the reference could not read %s: %s\n", what, path, err);
        return -1;
    }
    tj *s = an_summary(path, extra);
    if (!s) {
        rm_free(r);
        return -1;
    }
    int n = rm_diff(r, s, what);
    tj_free(s);
    if (out)
        *out = r;
    else
        rm_free(r);
    return n;
}
