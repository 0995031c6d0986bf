/* `cutrace summary`'s text: one section per question (the run, kernels, copies, VRAM, the
 * breakdown, diagnoses, ranks, GEMMs), from the figures cta_report_common.c computes for the text
 * and the JSON alike. */
#include "cta_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_kineto_open.h"
#include "cta_kineto_report.h"
#include "cta_diag_report.h"
#include "cta_feature.h"
#include "cta_out.h"
#include "cta_report_common.h"
#include "cta_names.h"

static const char *const TIMING_FIX = "for GPU durations of every one: cutrace run --gpu-timing all";

/* Why GPU intervals are missing, as the traces' tracer options tell it. */
static const char *timing_why(const cta_model *m, char *buf, size_t n)
{
    int off = 0, every = 0;
    const cta_proc *stopped = NULL;
    for (size_t i = 0; i < m->nprocs; i++) {
        if (m->procs[i].gpu_timing == 0)
            off = 1;
        else if (m->procs[i].gpu_timing > 1)
            every = m->procs[i].gpu_timing;
        if (m->procs[i].ended && m->procs[i].end.how == CT_END_STOPPED)
            stopped = &m->procs[i];
    }
    if (every)
        snprintf(buf, n, "traced with --gpu-timing %d, which times 1 in %d", every, every);
    else if (off)
        snprintf(buf, n, "traced with GPU timing off, cutrace run's default");
    else if (stopped)
        snprintf(buf, n, "the trace stopped early, %s: the timings due after that were never "
                 "written", cta_stop_words(stopped->end.code));
    else
        snprintf(buf, n, "the tracer lost them: operations still running when the process "
                         "ended, or its CUDA events ran out");
    return buf;
}

static void heading(FILE *f, const char *t)
{
    fprintf(f, "\n== %s ==\n", t);
}

static const char *u64s(char b[32], uint64_t v)
{
    snprintf(b, 32, "%llu", (unsigned long long)v);
    return b;
}

/* "<<<(4,1,1),(256,1,1)>>>", or that launches used several configurations */
static const char *config_text(char *buf, size_t n, const cta_stat *s)
{
    if (s->configs_vary)
        snprintf(buf, n, "several (--variants)");
    else
        snprintf(buf, n, "<<<(%u,%u,%u),(%u,%u,%u)>>>", s->grid[0], s->grid[1], s->grid[2],
                 s->block[0], s->block[1], s->block[2]);
    return buf;
}

static int any_untimed(const cta_stat *st, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cta_stat_timed(&st[i]) < st[i].launched)
            return 1;
    return 0;
}

/* Time % of a kernel table: of the sum of its rows' Total (cta_stat_total), so that the shares
 * add up to 100. */
uint64_t cta_report_shown_total(const cta_stat *st, size_t n)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += cta_stat_total(&st[i]);
    return t;
}

/* A figure of a row whose statistics are upper bounds: "≤ 276.1 us"; an estimate: "~ 1.2 ms". */
static const char *upper_ns(char b[40], double ns, int upper)
{
    char v[32];
    snprintf(b, 40, "%s%s", upper == 2 ? "~ " : upper ? "\u2264 " : "", cta_fmt_ns(v, ns));
    return b;
}

/* Kernel instances whose end is only bounded, in the user's terms (under a kernel table). */
static void bounded_note(FILE *f, const cta_stat *st, size_t n, int pct)
{
    uint64_t nb = 0, all = 0, upper = 0, worst = 0;
    for (size_t i = 0; i < n; i++) {
        nb += st[i].b.count;
        all += cta_stat_timed(&st[i]);
        upper += cta_stat_upper(&st[i]);
        if (st[i].b.count && st[i].b.max > worst)
            worst = st[i].b.max;
    }
    if (!nb)
        return;
    char w[32];
    fprintf(f, "  End-bounded: %llu of %llu timed instances ended before the tracer could time their "
               "end: the stream was idle when the launch call returned, because the call was held "
               "up on the host after the driver got the work (a preempted thread, a slow driver "
               "call), so their recorded durations (up to %s) are only upper bounds. Rows take "
               "their statistics from their exact instances; their Total (~) counts these at "
               "that average",
            (unsigned long long)nb, (unsigned long long)all, cta_fmt_ns(w, (double)worst));
    if (upper)
        fprintf(f, "; the %llu row%s with no exact instance show%s the bounds (\u2264)",
                (unsigned long long)upper, upper == 1 ? "" : "s", upper == 1 ? "s" : "");
    fprintf(f, "%s.\n", pct ? ". Time % is of the Totals shown" : "");
}

/* What a table of GPU work says of the instances without a GPU duration, in its words. */
typedef struct {
    const char *what, *nodes, *graph_row, *columns, *untimed;
} timing_words;

/* The note above a table of GPU work when some of it has no GPU duration: the instances that
 * ran in graph launches (graphed), then unless complete, the timed ones of all and why. */
static void timing_note(FILE *f, const cta_model *m, const timing_words *w, uint64_t graphed,
                        int complete, uint64_t timed, uint64_t all)
{
    char why[200];
    if (graphed)
        fprintf(f, "  %llu %s ran inside CUDA graph launches, counted from the graphs' %s: events "
                   "time a graph as a whole%s, so their own GPU durations are unknown and not "
                   "shown.\n",
                (unsigned long long)graphed, w->what, w->nodes, w->graph_row);
    if (complete)
        return;
    if (timed)
        fprintf(f, "  GPU durations were collected for %llu of %llu %s (%s): the %s cover those "
                   "only; %s.\n",
                (unsigned long long)timed, (unsigned long long)all, w->what,
                timing_why(m, why, sizeof why), w->columns, TIMING_FIX);
    else
        fprintf(f, "  GPU durations were not collected (%s): %s; %s.\n", timing_why(m, why, sizeof why),
                w->untimed, TIMING_FIX);
}

/* Kernels (or variants) when some instances have no GPU interval: what the launch records
 * tell of every instance, and the GPU time of those timed. */
static void host_kernel_table(FILE *f, const cta_model *m, const cta_stat *st, const cta_map *names,
                              size_t n, int top)
{
    static const char *const h[] = {">Instances", ">GPU-timed", ">GPU total", ">GPU avg",
                                     ">Launch API time", "Grid, block", "Name"};
    static const char *const hb[] = {">Instances", ">GPU-timed", ">End-bounded", ">GPU total",
                                      ">GPU avg", ">Launch API time", "Grid, block", "Name"};
    uint64_t timed = 0, all = 0, nb = 0, graphed = 0;
    for (size_t i = 0; i < n; i++) {
        timed += cta_stat_timed(&st[i]);
        all += st[i].launched;
        nb += st[i].b.count;
        graphed += st[i].in_graphs;
    }
    static const timing_words kernels = {
        "kernel instances", "kernel nodes", " (its [CUDA graph] row)", "GPU columns",
        "instances, configurations and launch call time are from the launch records"};
    timing_note(f, m, &kernels, graphed, timed + graphed == all, timed, all);
    cta_table *t = nb ? cta_table_new(8, hb) : cta_table_new(7, h);
    uint32_t *idx = cta_report_sorted(st, n);
    size_t rows = top && (size_t)top < n ? (size_t)top : n;
    for (size_t r = 0; r < rows; r++) {
        const cta_stat *s = &st[idx[r]];
        char c[7][40], cfg[64], name[200];
        const cta_sketch *d = cta_stat_shown(s);
        int tm = d->count > 0, up = cta_stat_upper(s), k = 0;
        const char *cell[8];
        cell[k++] = u64s(c[0], s->launched);
        cell[k++] = u64s(c[1], cta_stat_timed(s));
        if (nb)
            cell[k++] = u64s(c[5], s->b.count);
        cell[k++] = tm ? upper_ns(c[2], (double)cta_stat_total(s),
                                  cta_stat_total_estimated(s) ? 2 : up)
                       : "-";
        cell[k++] = tm ? upper_ns(c[3], (double)d->sum / (double)d->count, up) : "-";
        cell[k++] = cta_fmt_ns(c[4], (double)s->launch_ns);
        cell[k++] = config_text(cfg, sizeof cfg, s);
        cell[k++] = cta_text_safe(name, sizeof name, cta_map_key(names, idx[r]), 90);
        cta_table_row_v(t, cell);
    }
    cta_table_print(t, f, "  ");
    cta_text_cut(f, rows, n);
    cta_table_free(t);
    free(idx);
    bounded_note(f, st, n, 0);
}

static void stats_table(FILE *f, const cta_stat *st, const cta_map *names, size_t n, int top,
                        uint64_t total, int api)
{
    static const char *const kh[] = {">Time %", ">Total", ">Instances", ">Avg", ">Med", ">Min",
                                     ">Max", ">StdDev", "Name"};
    static const char *const kbh[] = {">Time %", ">Total", ">Instances", ">End-bounded", ">Avg",
                                      ">Med", ">Min", ">Max", ">StdDev", "Name"};
    static const char *const ah[] = {">Time %", ">Total", ">Calls", ">Avg", ">Med", ">Min",
                                     ">Max", ">Failed", "Name"};
    int nb = 0; /* a column of end-bounded instances where any kernel has some */
    for (size_t i = 0; !api && i < n; i++)
        nb |= st[i].b.count > 0;
    if (!api)
        total = cta_report_shown_total(st, n);
    cta_table *t = api ? cta_table_new(9, ah) : nb ? cta_table_new(10, kbh) : cta_table_new(9, kh);
    uint32_t *idx = cta_report_sorted(st, n);
    size_t rows = 0;
    for (size_t r = 0; r < n && (!top || rows < (size_t)top); r++) {
        const cta_stat *s = &st[idx[r]];
        if (api && s->layer != api - 1)
            continue;
        rows++;
        char c[10][40], name[200];
        const cta_sketch *d = api ? &s->d : cta_stat_shown(s);
        int up = !api && cta_stat_upper(s);
        uint64_t sum = api ? d->sum : cta_stat_total(s);
        cta_fmt_pct(c[0], total ? 100.0 * (double)sum / (double)total : 0);
        upper_ns(c[1], (double)sum, !api && cta_stat_total_estimated(s) ? 2 : up);
        u64s(c[2], api ? s->d.count : cta_stat_timed(s));
        upper_ns(c[3], d->count ? (double)d->sum / (double)d->count : 0, up);
        upper_ns(c[4], (double)cta_sketch_quantile(d, 0.5), up);
        upper_ns(c[5], d->count ? (double)d->min : 0, up);
        upper_ns(c[6], (double)d->max, up);
        if (api)
            u64s(c[7], s->failures);
        else
            upper_ns(c[7], cta_sketch_stddev(d), up);
        cta_text_safe(name, sizeof name, cta_map_key(names, idx[r]), 90);
        if (nb)
            cta_table_row(t, c[0], c[1], c[2], u64s(c[8], s->b.count), c[3], c[4], c[5], c[6], c[7],
                         name);
        else
            cta_table_row(t, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], name);
    }
    cta_table_print(t, f, "  ");
    size_t all = n;
    if (api) {
        all = 0;
        for (size_t i = 0; i < n; i++)
            all += st[i].layer == api - 1;
    }
    cta_text_cut(f, rows, all);
    cta_table_free(t);
    free(idx);
    if (!api)
        bounded_note(f, st, n, 1);
    for (size_t i = 0; api && i < n; i++) { /* what the failed calls returned */
        if (st[i].layer != api - 1 || !st[i].failures)
            continue;
        const char *err = cta_report_error_name(api - 1, st[i].fail_code);
        char name[200];
        cta_text_safe(name, sizeof name, cta_map_key(names, i), 90);
        fprintf(f, "  %s failed %llu of %llu calls: %s (%d)%s\n", name,
                (unsigned long long)st[i].failures, (unsigned long long)st[i].d.count,
                err ? err : "error", st[i].fail_code,
                st[i].fail_codes_vary ? ", the first; others returned other errors" : "");
    }
}

/* Host time and number of functions of one API layer (CTA_LAYER_*). */
uint64_t cta_report_layer_total(const cta_model *m, int layer)
{
    uint64_t t = 0;
    for (size_t i = 0; i < cta_map_count(&m->api_names); i++)
        if (m->api[i].layer == layer)
            t += m->api[i].d.sum;
    return t;
}
static size_t layer_calls(const cta_model *m, int layer)
{
    size_t n = 0;
    for (size_t i = 0; i < cta_map_count(&m->api_names); i++)
        n += m->api[i].layer == layer;
    return n;
}

static void text_run(FILE *f, const cta_model *m)
{
    heading(f, "Run");
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        /* the whole command: cut at 120 characters, imagenet's "-b 32 -j..." hid the -j 0 that
         * the verdict was about */
        char b1[32], b2[160], cmd[1100], host[120];
        fprintf(f, "  process %u on %s", p->pid, cta_text_safe(host, sizeof host, p->host, 60));
        if (p->rank >= 0)
            fprintf(f, ", rank %d", p->rank);
        fprintf(f, ": %s\n", cta_text_safe(cmd, sizeof cmd, p->command, 1000));
        fprintf(f, "    wall %s, ended: %s, %llu records\n", cta_fmt_ns(b1, (double)cta_wall_of(p)),
                cta_end_text(m, p, b2, sizeof b2), (unsigned long long)(p->stats ? p->stats->records : 0));
        if (p->captured) /* the tables, breakdown and gaps cover these windows only */
            fprintf(f, "    captured in %llu window%s totalling %s (allocations and frees "
                    "recorded throughout)\n", (unsigned long long)p->capture_windows,
                    p->capture_windows == 1 ? "" : "s", cta_fmt_ns(b1, (double)p->capture_ns));
        cta_feature_proc_text(f, m, p);
        for (int d = 0; d < CTA_MAX_DEV; d++) {
            const cta_dev *dv = &p->dev[d];
            if (!dv->seen)
                continue;
            char nm[128], mem[32];
            if (dv->have_prop) {
                /* without the link's peak the Copies table has no % of peak: say why */
                char link[200] = "host link unknown: the tracer found no PCIe speed and width in "
                                 "sysfs (with /sys mounted elsewhere, set CUTRACE_SYSFS), so "
                                 "copies have no % of peak";
                double lp = cta_dev_link_peak(&dv->prop);
                if (cta_kineto_source(m->rd, p->file))
                    snprintf(link, sizeof link, "host link and memory clock not in a Kineto trace, "
                                                "so copies have no %% of peak");
                else if (lp > 0)
                    snprintf(link, sizeof link, "host link %.1f GB/s (PCIe gen %u x%u)", lp / 1e9,
                             dv->prop.link_gen, dv->prop.link_width);
                else if (dv->prop.link_kind == CT_LINK_C2C)
                    snprintf(link, sizeof link, "host link NVLink-C2C");
                else if (dv->prop.link_kind == CT_LINK_INTEGRATED)
                    snprintf(link, sizeof link, "integrated (shares host memory)");
                char bw[48] = "memory bandwidth unknown";
                if (cta_dev_mem_peak(&dv->prop) > 0)
                    snprintf(bw, sizeof bw, "memory %.0f GB/s", cta_dev_mem_peak(&dv->prop) / 1e9);
                fprintf(f, "    GPU %d: %s, %s, %u SMs, %s, %s\n", d,
                        cta_text_safe(nm, sizeof nm, dv->name, 60),
                        cta_fmt_bytes(mem, (double)dv->prop.mem_bytes), dv->prop.sm_count, bw, link);
            } else
                fprintf(f, "    GPU %d: (no device record)\n", d);
        }
        for (size_t k = 0; k < p->nshlibs; k++) {
            const cta_shlib *l = &p->shlibs[k];
            char path[600];
            fprintf(f, "    %s: %s, build id %s\n", cta_report_shlib_kind(l->kind),
                    cta_text_safe(path, sizeof path, l->path, 300), l->build_id[0] ? l->build_id : "none");
        }
        if (p->python.version) {
            char prog[600], prefix[600];
            fprintf(f, "    python: CPython %u.%u.%u, %s (prefix %s)\n", p->python.version >> 24,
                    (p->python.version >> 16) & 0xff, (p->python.version >> 8) & 0xff,
                    cta_text_safe(prog, sizeof prog, p->python.program, 300),
                    cta_text_safe(prefix, sizeof prefix, p->python.prefix, 300));
        }
        const ct_stats *s = p->stats;
        /* the reasons that call for something: a bigger budget or --on-full block, and
         * descriptors left to the tracer */
        char full[300] = "";
        int nf = 0;
        const struct { uint64_t n; const char *why; } by[] = {
            {s ? s->lost_full : 0, "because the tracer's buffers were full: its writer did not "
                                   "keep up"},
            {s ? s->lost_fd : 0, "while the program had closed the trace's descriptor and none "
                                 "was left to reopen it with"},
        };
        for (size_t i = 0; i < sizeof by / sizeof *by; i++)
            if (by[i].n)
                nf += snprintf(full + nf, sizeof full - (size_t)nf, "%s%llu%s %s",
                               nf ? "; " : " (", (unsigned long long)by[i].n,
                               nf ? "" : " of them", by[i].why);
        if (nf)
            snprintf(full + nf, sizeof full - (size_t)nf, ")");
        if (s && (s->lost || s->corrupt_chunks || s->chunks_missing || s->torn_tail || s->bad_records ||
                  s->late_records))
            fprintf(f, "    trace damage: %llu records lost%s, %llu corrupt chunks, %llu chunks "
                       "missing, %llu bytes torn at the end, %llu malformed records, %llu out of "
                       "order\n", (unsigned long long)s->lost, full,
                    (unsigned long long)s->corrupt_chunks,
                    (unsigned long long)s->chunks_missing, (unsigned long long)s->torn_tail,
                    (unsigned long long)s->bad_records, (unsigned long long)s->late_records);
        if (p->late_points)
            fprintf(f, "    %llu intervals arrived after the breakdown had passed them (applied late)\n",
                    (unsigned long long)p->late_points);
        if (p->unmatched_gpu || p->unknown_frees)
            fprintf(f, "    %llu GPU intervals without their call's record, %llu frees of unknown addresses\n",
                    (unsigned long long)p->unmatched_gpu, (unsigned long long)p->unknown_frees);
    }
}

static void text_copies(FILE *f, const cta_model *m)
{
    heading(f, "Copies and sets");
    /* host-to-host copies have no GPU work: they are never untimed */
    uint64_t all = 0, timed = 0, bounded = 0, upper = 0, graphed = 0;
    for (int op = 0; op < CTA_OP_N; op++)
        for (int hk = 0; hk < CTA_HK_N; hk++) {
            const cta_copystat *c = &m->copies[op][hk];
            bounded += c->bounded;
            upper += c->count && cta_copy_shown(c).upper;
            graphed += c->in_graphs;
            if (op == CTA_OP_H2H)
                continue;
            all += c->count;
            timed += c->timed + c->bounded;
        }
    int partial = timed < all;
    static const timing_words copies = {
        "copies and sets", "memcpy and memset nodes", "", "time and bandwidth columns",
        "counts and bytes are from the copy records"};
    /* host-to-host graph nodes are not in all */
    timing_note(f, m, &copies, graphed, timed + graphed >= all, timed, all);
    /* GPU-timed where some have no GPU interval, End-bounded where some have only a bound */
    const char *h[11] = {"Operation", "Host memory", ">Count", ">Bytes"};
    int nh = 4;
    if (partial)
        h[nh++] = ">GPU-timed";
    if (bounded)
        h[nh++] = ">End-bounded";
    h[nh++] = ">Total";
    h[nh++] = ">Avg";
    h[nh++] = ">GB/s";
    h[nh++] = ">% of peak";
    cta_table *t = cta_table_new(nh, h);
    int rows = 0, vacuous_rows = 0;
    for (int op = 0; op < CTA_OP_N; op++)
        for (int hk = 0; hk < CTA_HK_N; hk++) {
            const cta_copystat *c = &m->copies[op][hk];
            if (!c->count)
                continue;
            /* over the exact ones, else the bounded ones (a bound: "<=" time, ">=" rate); "-"
             * where none was timed (or none has GPU work) */
            cta_copyshown sh = cta_copy_shown(c);
            char a[32], b[32], cc[40] = "-", d[40] = "-", e[40] = "-", g[40] = "-", n[32], nb[32];
            double bw = cta_gbps(sh.bytes, sh.ns);
            /* a lower bound under 0.01 GB/s (the demo's 4-byte reads, "≥ 0.00") says nothing */
            int vacuous = sh.upper && bw < 0.005;
            vacuous_rows += sh.n && vacuous;
            if (sh.n) {
                upper_ns(cc, (double)sh.ns, sh.upper);
                upper_ns(d, (double)sh.ns / (double)sh.n, sh.upper);
            }
            if (sh.n && !vacuous) {
                snprintf(e, sizeof e, "%s%.2f", sh.upper ? "\u2265 " : "", bw);
                if (c->peak_bps > 0) {
                    char pc[32];
                    snprintf(g, sizeof g, "%s%s", sh.upper ? "\u2265 " : "",
                             cta_fmt_pct(pc, 100.0 * bw * 1e9 / c->peak_bps));
                }
            }
            const char *cell[11] = {cta_op_names[op], cta_hk_names[hk], u64s(a, c->count),
                                    cta_fmt_bytes(b, (double)c->bytes)};
            int k = 4;
            if (partial)
                cell[k++] = op == CTA_OP_H2H ? "-" : u64s(n, c->timed + c->bounded);
            if (bounded)
                cell[k++] = u64s(nb, c->bounded);
            cell[k++] = cc;
            cell[k++] = d;
            cell[k++] = e;
            cell[k++] = g;
            cta_table_row_v(t, cell);
            rows++;
        }
    if (rows)
        cta_table_print(t, f, "  ");
    else
        fprintf(f, "  (no copies or sets)\n");
    cta_table_free(t);
    if (bounded) {
        fprintf(f, "  End-bounded: %llu copies and sets ended before the tracer could time their "
                   "end: the stream was idle when the call returned (a call that returned only once "
                   "the copy completed, or one held up on the host after the driver got the work), "
                   "so their recorded times are only upper bounds. Rows take their time and "
                   "bandwidth from their exact operations and only count these",
                (unsigned long long)bounded);
        if (upper)
            fprintf(f, "; the %llu row%s with no exact operation show%s the bounds (\u2264 time, "
                       "\u2265 bandwidth)", (unsigned long long)upper, upper == 1 ? "" : "s",
                    upper == 1 ? "s" : "");
        if (vacuous_rows)
            fprintf(f, ", but for a bandwidth bound under 0.01 GB/s (-), which says nothing");
        fprintf(f, ".\n");
    }
}

static void sparkline(FILE *f, const cta_series *s, uint64_t peak)
{
    static const char *const lv[] = {" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585",
                                     "\u2586", "\u2587", "\u2588"};
    if (!s->n || !peak)
        return;
    uint32_t cols = s->n < 64 ? s->n : 64;
    fprintf(f, "    in use over time: |");
    for (uint32_t c = 0; c < cols; c++) {
        uint32_t a = (uint32_t)((uint64_t)c * s->n / cols), b = (uint32_t)((uint64_t)(c + 1) * s->n / cols);
        uint64_t mx = 0;
        for (uint32_t i = a; i < b; i++)
            if (s->max[i] > mx)
                mx = s->max[i];
        fputs(lv[(int)((double)mx / (double)peak * 8 + 0.5)], f);
    }
    fprintf(f, "| (each column %s)\n",
            cta_fmt_ns((char[32]){0}, (double)s->width * (double)s->n / (double)cols));
}

static void text_holders(FILE *f, const cta_model *m, const cta_proc *p, const cta_holder *h, int n,
                         const char *indent)
{
    for (int i = 0; i < n; i++) {
        char st[400], safe[300], b[32];
        cta_model_site_text(m, p, h[i].stack, st, sizeof st, 5);
        fprintf(f, "%s%10s in %llu  %s\n", indent, cta_fmt_bytes(b, (double)h[i].bytes),
                (unsigned long long)h[i].count,
                cta_text_safe(safe, sizeof safe, *st ? st : "(no call stack)", 160));
    }
}

static void text_vram(FILE *f, const cta_model *m)
{
    heading(f, "VRAM");
    int any = 0, torch = 0, kineto = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        for (int d = 0; d <= CTA_MAX_DEV; d++) {
            const cta_dev *dv = &p->dev[d];
            if (!cta_report_has_vram(dv))
                continue;
            any = 1;
            /* a Kineto trace's allocations are the tensors' blocks ([memory] events) */
            if (cta_kineto_source(m->rd, p->file))
                kineto = 1;
            else
                torch |= p->torch;
            char b1[32], b2[32], b3[32];
            if (d == CTA_HOST_DEV)
                fprintf(f, "  pid %u pinned host memory: peak %s at +%s\n", p->pid,
                        cta_fmt_bytes(b1, (double)dv->peak), cta_fmt_ns(b2, (double)(dv->peak_time - m->t0)));
            else
                fprintf(f, "  pid %u GPU %d: peak %s (%llu bytes) at +%s%s%s; %llu allocations, %llu frees, %s still in use at the end\n",
                        p->pid, d, cta_fmt_bytes(b1, (double)dv->peak), (unsigned long long)dv->peak,
                        cta_fmt_ns(b2, (double)(dv->peak_time - m->t0)),
                        dv->have_prop ? " of " : "",
                        dv->have_prop ? cta_fmt_bytes(b3, (double)dv->prop.mem_bytes) : "",
                        (unsigned long long)dv->allocs, (unsigned long long)dv->frees,
                        cta_fmt_bytes((char[32]){0}, (double)dv->in_use));
            if (dv->npeak_holders) {
                fprintf(f, "    live at the peak, by call site:\n");
                text_holders(f, m, p, dv->peak_holders, dv->npeak_holders, "      ");
            }
            sparkline(f, &dv->mem, dv->peak);
            for (uint64_t k = 0; k < dv->nfails && k < CTA_MAX_FAILS; k++) {
                const cta_fail *fl = &dv->fails[k];
                fprintf(f, "    FAILED allocation of %s (%llu bytes) at +%s, error %u, with %s (%llu bytes) in use; largest holders:\n",
                        cta_fmt_bytes(b1, (double)fl->requested), (unsigned long long)fl->requested,
                        cta_fmt_ns(b2, (double)(fl->time - m->t0)), fl->result,
                        cta_fmt_bytes(b3, (double)fl->in_use), (unsigned long long)fl->in_use);
                text_holders(f, m, p, fl->holders, fl->nholders, "      ");
            }
        }
    }
    if (!any)
        fprintf(f, "  (no allocations traced)\n");
    /* a caching allocator is plausible only where PyTorch (whose allocator caches by default)
     * was loaded in a process with allocations */
    else if (torch)
        fprintf(f, "  Note: PyTorch was loaded, so these are likely its caching allocator's reserved segments, not tensors.\n");
    if (kineto)
        fprintf(f, "  Kineto traces: the blocks PyTorch's caching allocator gave tensors ([memory] events), "
                   "from the start of the profile (memory allocated before it is not counted).\n");
}

/* The Amdahl bounds in words; a bound would be infinite only where the GPU is never busy or
 * never idle, and those cases are said in words instead. */
static void amdahl_line(FILE *f, const cta_breakdown *b)
{
    double pb = b->window ? (double)b->busy / (double)b->window : 0;
    if (!b->busy)
        fprintf(f, "    Amdahl: the GPU work took no measurable time: the host alone sets the "
                   "window's length (faster GPU work gains nothing).\n");
    else if (!b->idle)
        fprintf(f, "    Amdahl: the GPU is never idle in the window: GPU work alone sets its length "
                   "(faster GPU work shortens it in proportion; hiding host-side work gains nothing).\n");
    else
        fprintf(f, "    Amdahl: the GPU is busy %.1f%% of the window; infinitely fast GPU work would make it at most %.2fx faster (1/(1-p)); hiding every host-side gap, at most %.2fx (window/busy).\n",
                100 * pb, b->max_speedup_gpu, b->max_speedup_host);
}

typedef struct {
    FILE *f;
    const cta_model *m;
    int any;
} text_breakdown_ctx;

/* The idle time by cause, each with what the features say of it (the host's activity from
 * thread samples): shown only where one says something. */
static void idle_by_cause(FILE *f, const cta_model *m, const cta_proc *p, int d, const cta_breakdown *b)
{
    const cta_dev *dv = &p->dev[d];
    for (int c = 0; c < CTA_GAP_N; c++) {
        char *said = NULL, w[32];
        size_t len = 0;
        FILE *s = dv->gap_ns[c] ? open_memstream(&said, &len) : NULL;
        if (!s)
            continue;
        cta_feature_gap_text(s, m, p, d, c, CTA_SPAN_ALL, "      ");
        if (fclose(s) == 0 && len)
            fprintf(f, "    idle of cause %s: %s (%.1f%% of the window)\n%s", cta_gap_names[c],
                    cta_fmt_ns(w, (double)dv->gap_ns[c]),
                    b->window ? 100.0 * (double)dv->gap_ns[c] / (double)b->window : 0, said);
        free(said);
    }
}

static void text_dev_breakdown(void *ctx, const cta_proc *p, int d, uint64_t untimed, const cta_breakdown *b)
{
    text_breakdown_ctx *tb = ctx;
    FILE *f = tb->f;
    const cta_model *m = tb->m;
    const cta_dev *dv = &p->dev[d];
    tb->any = 1;
    if (untimed) {
        /* the idle time would hold the untimed work: no figure would be right */
        char why[200];
        fprintf(f, "  pid %u GPU %d: no breakdown: it needs the GPU interval of every "
                   "kernel, copy and set, and %llu of %llu have none (%s); %s.\n",
                p->pid, d, (unsigned long long)untimed, (unsigned long long)dv->gpu_ops,
                timing_why(m, why, sizeof why), TIMING_FIX);
        return;
    }
    char w[32], x[32], y[32];
    fprintf(f, "  pid %u GPU %d: window %s\n", p->pid, d, cta_fmt_ns(w, (double)b->window));
    static const char *const h[] = {"", ">Time", ">% of window"};
    cta_table *t = cta_table_new(3, h);
#define ROW(label, v) cta_table_row(t, label, cta_fmt_ns(x, (double)(v)), cta_fmt_pct(y, b->window ? 100.0 * (double)(v) / (double)b->window : 0))
    ROW("GPU busy (kernels, copies, sets)", b->busy);
    ROW("GPU idle", b->idle);
    ROW("  host inside CUDA calls (launching)", b->host.in_api);
    ROW("  host blocked in synchronization", b->host.blocked);
    int no_cpu = cta_kineto_source(m->rd, p->file) != NULL;
    if (!no_cpu) {
        ROW("  host outside CUDA, computing", b->host.compute);
        ROW("  host outside CUDA, waiting", b->host.wait);
    }
    if (b->host.unknown)
        ROW("  host outside CUDA, computing or waiting (*)", b->host.unknown);
#undef ROW
    cta_table_print(t, f, "    ");
    cta_table_free(t);
    if (b->busy_bounded)
        fprintf(f, "    GPU busy includes up to %s covered only by operations whose end is "
                   "only bounded (%llu on this GPU ended before the tracer could time their "
                   "end): busy may be that much less, idle and its gaps that much more.\n",
                cta_fmt_ns(x, (double)b->busy_bounded), (unsigned long long)dv->bounded_ops);
    if (b->host.unknown && no_cpu)
        fprintf(f, "    (*) a Kineto trace holds no CPU-time readings, so computing cannot "
                   "be told from waiting.\n");
    else if (b->host.unknown)
        fprintf(f, "    (*) no CPU-time readings of the thread cover this time, so computing "
                   "cannot be told from waiting: the tracer reads a thread's CPU time when "
                   "it comes back to CUDA after more than CUTRACE_CPU_GAP_US (100 us) "
                   "outside it, and time before its second reading or after its last one "
                   "has none.\n");
    amdahl_line(f, b);
    idle_by_cause(f, m, p, d, b);
}

static void text_breakdown(FILE *f, const cta_model *m)
{
    heading(f, "Breakdown (first to last GPU activity)");
    text_breakdown_ctx tb = {f, m, 0};
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        cta_report_breakdowns(p, text_dev_breakdown, &tb);
        if (p->launch_queue.count) {
            char a[32], md[32], mx[32];
            fprintf(f, "  pid %u launch queue (launch call to kernel start): avg %s, median %s, max %s over %llu kernels\n",
                    p->pid, cta_fmt_ns(a, (double)p->launch_queue.sum / (double)p->launch_queue.count),
                    cta_fmt_ns(md, (double)cta_sketch_quantile(&p->launch_queue, 0.5)),
                    cta_fmt_ns(mx, (double)p->launch_queue.max), (unsigned long long)p->launch_queue.count);
        }
    }
    if (!tb.any)
        fprintf(f, "  (no GPU activity traced)\n");
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_kconv_stats *ks = cta_kineto_source_stats(m->rd, m->procs[i].file);
        if (ks && !ks->kernels && !ks->copies && !ks->sets)
            fprintf(f, "  pid %u: %s\n", m->procs[i].pid,
                    ks->dropped_gpu ? cta_kineto_gpu_dropped : cta_kineto_no_gpu);
    }
}

static void text_ranks(FILE *f, const cta_model *m)
{
    if (m->nprocs < 2)
        return;
    int compared = cta_report_ranked(m) >= 2;
    heading(f, compared ? "Ranks" : "Processes");
    if (!compared)
        fprintf(f, "  No straggler verdicts: fewer than two processes have a rank (RANK, "
                   "SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK), and processes without one "
                   "need not do the same work.\n");
    else if (cta_report_ranked(m) < m->nprocs)
        fprintf(f, "  Stragglers are judged among the processes with a rank only.\n");
    static const char *const h[] = {">Rank", ">PID", "Host", ">Wall", ">GPU busy", ">Idle",
                                    ">Peak VRAM", "Top kernel", "Straggler"};
    cta_table *t = cta_table_new(9, h);
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        cta_breakdown b;
        int known = cta_report_proc_breakdown(p, &b) && b.window;
        char r[32], pid[32], w[32], busy[32] = "-", idle[32] = "-", peak[32], host[80], top[200];
        snprintf(r, sizeof r, "%d", p->rank);
        if (known) {
            cta_fmt_pct(busy, 100.0 * (double)b.busy / (double)b.window);
            cta_fmt_pct(idle, 100.0 * (double)b.idle / (double)b.window);
        }
        const char *s = cta_report_straggler(m, p);
        cta_table_row(t, p->rank >= 0 ? r : "-", u64s(pid, p->pid),
                     cta_text_safe(host, sizeof host, p->host, 40), cta_fmt_ns(w, (double)cta_wall_of(p)),
                     busy, idle, cta_fmt_bytes(peak, (double)cta_report_proc_peak(p)),
                     p->top_kernel[0] ? cta_text_safe(top, sizeof top, p->top_kernel, 60) : "-",
                     s ? s : "");
    }
    cta_table_print(t, f, "  ");
    cta_table_free(t);
}

void cta_report_text(FILE *f, const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o)
{
    fprintf(f, "cutrace summary: %zu process%s, %llu records\n", m->nprocs, m->nprocs == 1 ? "" : "es",
            (unsigned long long)m->records);
    for (size_t i = 0; i < m->nprocs; i++) {
        const char *kineto = cta_kineto_source(m->rd, m->procs[i].file);
        char name[4096];
        if (kineto)
            fprintf(f, "source: PyTorch profiler (Kineto) trace %s; not in it: %s\n",
                    cta_text_safe(name, sizeof name, kineto, 0), cta_kineto_lacks);
        const cta_kconv_stats *ks = cta_kineto_source_stats(m->rd, m->procs[i].file);
        char why[1024];
        if (ks && ks->dropped_events)
            fprintf(f, "dropped: %llu of the %llu events of %s (%s)\n",
                    (unsigned long long)ks->dropped_events, (unsigned long long)ks->events, name,
                    cta_kconv_dropped_text(ks, why, sizeof why));
    }
    text_run(f, m);
    heading(f, "Kernels");
    size_t nk = cta_map_count(&m->kernel_names);
    if (nk && any_untimed(m->kernels, nk))
        host_kernel_table(f, m, m->kernels, &m->kernel_names, nk, o->top);
    else if (nk)
        stats_table(f, m->kernels, &m->kernel_names, nk, o->top, 0, 0);
    else
        fprintf(f, "  (no kernels)\n");
    size_t nv = cta_map_count(&m->variants);
    if (o->variants && nv) {
        heading(f, "Kernel variants (grid, block)");
        if (any_untimed(m->variant_stats, nv))
            host_kernel_table(f, m, m->variant_stats, &m->variants, nv, o->top);
        else
            stats_table(f, m->variant_stats, &m->variants, nv, o->top, 0, 0);
    }
    cta_feature_text(f, m, o->top, CTA_AT_KERNELS);
    text_copies(f, m);
    /* runtime and library calls contain the driver calls they make: one table per layer, each
     * layer's Time % of its own total, so that no time is counted twice */
    static const char *const heads[CTA_LAYER_N] = {"CUDA runtime API", "CUDA driver API",
                                                  "cuBLAS and cuBLASLt API"};
    for (int layer = 0; layer < CTA_LAYER_N; layer++) {
        size_t calls = layer_calls(m, layer);
        if (layer == CTA_LAYER_LIBRARY && !calls)
            continue;
        heading(f, heads[layer]);
        uint64_t total = cta_report_layer_total(m, layer);
        if (layer == CTA_LAYER_DRIVER)
            fprintf(f, "  Driver calls, those the runtime makes inside the calls above included "
                       "(Time %% is of this table's total).\n");
        if (calls)
            stats_table(f, m->api, &m->api_names, cta_map_count(&m->api_names), o->top, total,
                        1 + layer);
        else
            fprintf(f, "  (no %s calls)\n", layer ? "driver API" : "runtime API");
    }
    text_vram(f, m);
    text_breakdown(f, m);
    cta_feature_text(f, m, o->top, CTA_AT_BREAKDOWN);
    text_ranks(f, m);
    heading(f, "Diagnoses (by estimated saving)");
    cta_diag_report_text(f, m, dg, ndiag, o->diag ? o->diag->min_saving_pct : 1.0);
    if (o->hta) {
        fputc('\n', f);
        cta_kineto_hta_text(f, o->hta);
    }
}
