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
        fprintf(stderr, "%s: %s %s: cutrace %.10g, reference %.10g\n", d->what, where, field, got, want);
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

/* A number the JSON prints with 6 significant digits (%.6g; integral values exactly). */
static void near(diffs *d, const char *where, const tj *o, const char *field, double want,
                 double slack)
{
    double got = tj_num(o, field);
    if (isnan(got) || fabs(got - want) > 5e-6 * fabs(want) + slack + 1e-9)
        differ(d, where, field, got, want);
}

/* A statistic over nothing: present, and null. */
static void null(diffs *d, const char *where, const tj *o, const char *field)
{
    const tj *v = tj_get(o, field);
    if (!v || v->type != TJ_NULL)
        differ(d, where, field, v ? tj_num(o, field) : -1, NAN);
}

static void flag(diffs *d, const char *where, const tj *o, const char *field, int want)
{
    const tj *v = tj_get(o, field);
    if (!v || v->type != TJ_BOOL || v->num != want)
        differ(d, where, field, v ? v->num : -1, want);
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

/* stddev_ns, the sample standard deviation: the reference's two-pass value; the analyzer's
 * one-pass sum of squares (doubles) may be off by its rounding, at most n ulps of each of the
 * two terms of the variance, and |sqrt(a) - sqrt(b)| <= sqrt(|a - b|). */
static void stddev(diffs *d, const char *where, const tj *o, const rm_stat *s)
{
    double n = (double)s->n, mean = (double)s->total / n, ss = 0, sq = 0;
    for (size_t i = 0; i < s->n; i++) {
        double x = (double)s->v[i];
        ss += (x - mean) * (x - mean);
        sq += x * x;
    }
    double want = s->n > 1 ? sqrt(ss / (n - 1)) : 0;
    double rounding = s->n > 1 ? sqrt(4 * n * ldexp(sq, -52) / (n - 1)) : 0;
    near(d, where, o, "stddev_ns", want, rounding);
}

/* The duration statistics of a row, its total (row_total) and share of total (null over no
 * values). */
static void durations(diffs *d, const char *where, const tj *o, const rm_stat *s,
                      uint64_t row_total, uint64_t total)
{
    if (!s->n) {
        static const char *const none[] = {"total_ns", "time_pct", "avg_ns", "median_ns",
                                           "min_ns", "max_ns", "stddev_ns"};
        for (size_t k = 0; k < sizeof none / sizeof *none; k++)
            null(d, where, o, none[k]);
        return;
    }
    exact(d, where, o, "total_ns", row_total);
    exact(d, where, o, "min_ns", s->min);
    exact(d, where, o, "max_ns", s->max);
    near(d, where, o, "avg_ns", (double)s->total / (double)s->n, 0);
    near(d, where, o, "time_pct", total ? 100.0 * (double)row_total / (double)total : 0, 0);
    median(d, where, o, s);
    stddev(d, where, o, s);
}

/* The reference row a JSON row names (NULL: none). */
static const rm_stat *ref_row(const rm_stat *st, size_t n, const char *name)
{
    char want[512], got[512];
    ascii(name ? name : "", want, sizeof want);
    for (size_t i = 0; i < n; i++) {
        ascii(st[i].name, got, sizeof got);
        if (!strcmp(got, want))
            return &st[i];
    }
    return NULL;
}

/* JSON.md's order of the kernel and API tables: by time descending, then (kernels never
 * timed) by instances and by launch call time, descending too. */
static void order(diffs *d, const tj *arr, const rm_stat *st, size_t n, const char *what)
{
    for (size_t i = 0; arr && i + 1 < arr->n; i++) {
        const rm_stat *a = ref_row(st, n, tj_str(arr->v[i], "name"));
        const rm_stat *b = ref_row(st, n, tj_str(arr->v[i + 1], "name"));
        if (!a || !b)
            continue; /* reported as a row count */
        uint64_t ka[3] = {rm_kernel_total(a), a->recorded, a->launch_ns},
                 kb[3] = {rm_kernel_total(b), b->recorded, b->launch_ns};
        int k = 0;
        while (k < 2 && ka[k] == kb[k])
            k++;
        if (ka[k] < kb[k]) {
            char where[600];
            snprintf(where, sizeof where, "%s \"%.500s\" before \"%.40s\"", what, a->name, b->name);
            differ(d, where, "order (row)", (double)i, (double)i + 1);
        }
    }
}

static void rows(diffs *d, const tj *arr, size_t n, const char *what)
{
    if (!arr || arr->n != n)
        differ(d, what, "rows", arr ? (double)arr->n : -1, (double)n);
}

/* The kernel table (st is r->kernels, or r->variants) or the API table (r->api), rows matched
 * by name. */
static void named_table(diffs *d, const tj *arr, const rm_stat *st, size_t n, const rm_result *r)
{
    int api = st == r->api;
    const char *what = api ? "api" : st == r->variants ? "kernel variant" : "kernel";
    rows(d, arr, n, what);
    for (size_t i = 0; i < n; i++) {
        const rm_stat *s = &st[i];
        char where[600];
        snprintf(where, sizeof where, "%s \"%.500s\"", what, s->name);
        const tj *o = row(arr, "name", s->name);
        if (!o) {
            differ(d, where, "missing row", 0, (double)(api ? s->n : s->recorded));
            continue;
        }
        if (api) {
            const char *layer = tj_str(o, "layer");
            if (!layer || strcmp(layer, s->driver ? "driver" : "runtime"))
                differ(d, where, s->driver ? "layer driver" : "layer runtime", 0, 1);
            exact(d, where, o, "calls", s->n);
            exact(d, where, o, "failures", s->failures);
            durations(d, where, o, s, s->total, r->layer_ns[s->driver]);
            continue; /* its order is checked below, with the kernels' */
        }
        exact(d, where, o, "instances", s->recorded);
        uint64_t nb = rm_timed(s) - s->n;
        exact(d, where, o, "timed_instances", rm_timed(s));
        exact(d, where, o, "end_bounded", nb);
        flag(d, where, o, "upper_bounds", !s->n && nb);
        exact(d, where, o, "launch_calls_ns", s->launch_ns);
        flag(d, where, o, "configurations_vary", s->vary);
        for (int k = 0; k < 3 && !s->config_tie; k++) { /* the first launch is ambiguous on a tie */
            char f[16];
            snprintf(f, sizeof f, "grid.%d", k);
            exact(d, where, o, f, s->grid[k]);
            snprintf(f, sizeof f, "block.%d", k);
            exact(d, where, o, f, s->block[k]);
        }
        flag(d, where, o, "total_estimated", s->n && nb);
        durations(d, where, o, rm_shown(s), rm_kernel_total(s),
                  st == r->variants ? r->variant_ns : r->kernel_ns);
    }
    order(d, arr, st, n, what);
}

static void copies(diffs *d, const tj *arr, const rm_result *r)
{
    rows(d, arr, r->ncopies, "copies");
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
            differ(d, where, "missing row", 0, (double)s->recorded);
            continue;
        }
        exact(d, where, o, "count", s->recorded);
        exact(d, where, o, "bytes", s->bytes);
        uint64_t nb = rm_timed(s) - s->n;
        exact(d, where, o, "timed_count", rm_timed(s));
        exact(d, where, o, "end_bounded", nb);
        flag(d, where, o, "upper_bounds", !s->n && nb);
        const rm_stat *sh = rm_shown(s);
        exact(d, where, o, "timed_bytes", sh->timed_bytes);
        if (sh->n)
            exact(d, where, o, "total_ns", sh->total);
        else
            null(d, where, o, "total_ns");
        double gbps = sh->total ? (double)sh->timed_bytes / (double)sh->total : 0; /* bytes per ns */
        if (sh->total)
            near(d, where, o, "gbps", gbps, 0);
        else
            null(d, where, o, "gbps");
        if (sh->total && s->peak_bps > 0 && !s->peak_tie) /* a tie: which copy came first is open */
            near(d, where, o, "peak_pct", 100.0 * gbps * 1e9 / s->peak_bps, 0);
        else if (!sh->total || s->peak_bps <= 0)
            null(d, where, o, "peak_pct");
    }
}

/* processes[].devices: every device with operations, their counts. */
static void devices(diffs *d, const tj *procs, const rm_result *r)
{
    for (size_t i = 0; i < r->ndevs; i++) {
        const rm_devops *v = &r->devs[i];
        char where[64];
        snprintf(where, sizeof where, "process %u device %d", v->pid, v->device);
        const tj *o = NULL;
        for (size_t k = 0; procs && k < procs->n && !o; k++) {
            const tj *devs = tj_get(procs->v[k], "devices");
            for (size_t j = 0; tj_num(procs->v[k], "pid") == v->pid && devs && j < devs->n && !o; j++)
                if (tj_num(devs->v[j], "device") == v->device)
                    o = devs->v[j];
        }
        if (!o) {
            differ(d, where, "missing device", 0, (double)v->ops);
            continue;
        }
        exact(d, where, o, "gpu_operations", v->ops);
        exact(d, where, o, "gpu_timed_operations", v->timed);
        if (v->have_prop) {
            /* a peak the trace does not give is null */
            if (v->mem_peak > 0)
                near(d, where, o, "memory_peak_gbps", v->mem_peak / 1e9, 0);
            else
                null(d, where, o, "memory_peak_gbps");
            if (v->link_peak > 0)
                near(d, where, o, "link_peak_gbps", v->link_peak / 1e9, 0);
            else
                null(d, where, o, "link_peak_gbps");
        } else if (tj_get(o, "memory_peak_gbps")) {
            differ(d, where, "peaks without a DEVICE record", 1, 0);
        }
    }
    /* and no operations on a device the reference has none on */
    for (size_t k = 0; procs && k < procs->n; k++) {
        const tj *devs = tj_get(procs->v[k], "devices");
        for (size_t j = 0; devs && j < devs->n; j++) {
            double ops = tj_num(devs->v[j], "gpu_operations"), pid = tj_num(procs->v[k], "pid");
            int known = 0;
            for (size_t i = 0; i < r->ndevs && !known; i++)
                known = r->devs[i].pid == pid && r->devs[i].device == tj_num(devs->v[j], "device");
            if (!known && ops != 0) {
                char where[64];
                snprintf(where, sizeof where, "process %.0f device %.0f", pid, tj_num(devs->v[j], "device"));
                differ(d, where, "gpu_operations", ops, 0);
            }
        }
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
        differ(d, where, "missing entry", 0, (double)b->ops);
        return;
    }
    exact(d, where, o, "gpu_operations", b->ops);
    exact(d, where, o, "gpu_untimed_operations", b->untimed);
    flag(d, where, o, "complete", !b->untimed);
    if (b->untimed) { /* no figures: they would count the untimed work as idle */
        if (tj_get(o, "window_ns") || tj_get(o, "gpu_busy_ns") || tj_get(o, "gaps"))
            differ(d, where, "figures of an incomplete breakdown", 1, 0);
        return;
    }
    for (size_t k = 0; procs && k < procs->n; k++)
        if (tj_num(procs->v[k], "pid") == b->pid && tj_num(procs->v[k], "late_points") > 0)
            return; /* the analyzer says its breakdown is approximate */
    exact(d, where, o, "window_start_ns", b->window_start);
    exact(d, where, o, "window_ns", b->window);
    exact(d, where, o, "gpu_busy_ns", b->busy);
    exact(d, where, o, "gpu_end_bounded_operations", b->bounded_ops);
    exact(d, where, o, "gpu_busy_bounded_ns", b->busy_bounded);
    exact(d, where, o, "gpu_idle_ns", b->window - b->busy);
    uint64_t idle = b->window - b->busy;
    if (idle)
        near(d, where, o, "max_speedup_gpu", (double)b->window / (double)idle, 0);
    else
        null(d, where, o, "max_speedup_gpu");
    if (b->busy)
        near(d, where, o, "max_speedup_host", (double)b->window / (double)b->busy, 0);
    else
        null(d, where, o, "max_speedup_host");
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
    named_table(&d, tj_get(s, "kernels"), r->kernels, r->nkernels, r);
    named_table(&d, tj_get(s, "api"), r->api, r->napi, r);
    if (tj_get(s, "kernel_variants")) /* with --variants */
        named_table(&d, tj_get(s, "kernel_variants"), r->variants, r->nvariants, r);
    copies(&d, tj_get(s, "copies"), r);
    devices(&d, tj_get(s, "processes"), r);
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
