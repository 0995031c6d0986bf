/* The summary's NVTX sections, text and JSON from the same figures (cta_nvtx.h): the per-range
 * table, the per-iteration view of the repeating ranges, and where a diagnosis happened. */
#include "cta_nvtx.h"
#include "cta_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NV_VIEWS = 2 };
/* A step is slow (listed, with what made it slow) from this many times the median step on. */
#define NV_SLOW_RATIO 1.25

static int nv_is_slow(const cta_nvtx_step *s, uint64_t median)
{
    return (double)s->dur >= NV_SLOW_RATIO * (double)median;
}

static const cta_nvtx_group *grp(const cta_model *m, uint32_t g) { return &cta_nvtx_of(m)->g[g]; }

/* The repeating ranges that get a per-iteration view: at least 3 ended instances, most of them
 * with no range around them on their thread (a training step, not what a step calls), by host
 * time; where none is top-level, the repeating range with the most host time. */
static int views(const cta_model *m, uint32_t *out)
{
    uint32_t *order;
    size_t n = cta_nvtx_order(m, &order);
    int k = 0;
    for (size_t i = 0; i < n && k < NV_VIEWS; i++) {
        const cta_nvtx_group *x = grp(m, order[i]);
        if (x->host.count >= 3 && 2 * x->top >= x->host.count)
            out[k++] = order[i];
    }
    for (size_t i = 0; i < n && !k; i++)
        if (grp(m, order[i])->host.count >= 3)
            out[k++] = order[i];
    free(order);
    return k;
}

/* What made step s of x slow: the component (a child range, the time outside child ranges, or
 * synchronizing) furthest above its median per step. */
typedef struct {
    char name[200];
    uint64_t ns, median;
} nv_why;

static void why_of(const cta_model *m, const cta_nvtx_group *x, const cta_nvtx_step *s, nv_why *w)
{
    uint64_t n = x->host.count;
    int64_t best = INT64_MIN;
    for (int k = 0; k < s->nkids; k++) {
        int slot = -1;
        for (int j = 0; j < x->nkids; j++)
            slot = x->kid_group[j] == s->kid_group[k] ? j : slot;
        if (slot < 0)
            continue;
        uint64_t med = cta_nvtx_median(&x->kid[slot], n);
        if ((int64_t)(s->kid_ns[k] - med) > best) {
            best = (int64_t)(s->kid_ns[k] - med);
            cta_nvtx_display(m, s->kid_group[k], w->name, sizeof w->name);
            w->ns = s->kid_ns[k];
            w->median = med;
        }
    }
    uint64_t self = cta_nvtx_median(&x->self, n), sync = cta_nvtx_median(&x->sync, n);
    if ((int64_t)(s->self_ns - self) > best) {
        best = (int64_t)(s->self_ns - self);
        snprintf(w->name, sizeof w->name, "outside its child ranges");
        w->ns = s->self_ns;
        w->median = self;
    }
    if ((int64_t)(s->sync_ns - sync) > best) {
        snprintf(w->name, sizeof w->name, "synchronizing with the GPU");
        w->ns = s->sync_ns;
        w->median = sync;
    }
}

/* ---- text ---- */

static const char *ns_or_dash(char b[32], uint64_t ns, int have)
{
    if (!have)
        snprintf(b, 32, "-");
    return have ? cta_fmt_ns(b, (double)ns) : b;
}

void cta_nvtx_text(FILE *f, const cta_model *m, int top)
{
    if (!cta_nvtx_of(m) || !cta_map_count(&cta_nvtx_of(m)->names))
        return;
    fprintf(f, "\n== NVTX ranges ==\n");
    fprintf(f, "  Host: push to pop (start to end). GPU: the work its thread launched inside it,\n"
               "  kernels summed, and projected (first start to last end of that work, summed).\n");
    static const char *const h[] = {">Instances", ">Host total", ">Avg", ">Med", ">Max",
                                    ">GPU kernels", ">GPU projected", ">GPU ops", "Range"};
    cta_table *t = cta_table_new(9, h);
    uint32_t *order;
    size_t n = cta_nvtx_order(m, &order), rows = 0, open = 0, unprojected = 0, bounded = 0;
    for (size_t i = 0; i < n && (!top || rows < (size_t)top); i++, rows++) {
        const cta_nvtx_group *x = grp(m, order[i]);
        char c[8][32], name[200], safe[200];
        const cta_sketch *d = &x->host;
        snprintf(c[0], sizeof c[0], "%llu", (unsigned long long)d->count);
        ns_or_dash(c[1], d->sum, d->count);
        ns_or_dash(c[2], d->count ? d->sum / d->count : 0, d->count);
        ns_or_dash(c[3], cta_sketch_quantile(d, 0.5), d->count);
        ns_or_dash(c[4], d->max, d->count);
        ns_or_dash(c[5], x->kern_ns, x->ops);
        ns_or_dash(c[6], x->span.sum, x->ops);
        if (x->span_bounded) {
            char v[32];
            snprintf(c[6], sizeof c[6], "\u2264 %s", cta_fmt_ns(v, (double)x->span.sum));
            bounded++;
        }
        snprintf(c[7], sizeof c[7], "%llu", (unsigned long long)x->ops);
        cta_nvtx_display(m, order[i], name, sizeof name);
        if (x->open_at_end)
            open++;
        unprojected |= x->unprojected;
        cta_table_row(t, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                      cta_text_safe(safe, sizeof safe, name, 90));
    }
    cta_table_print(t, f, "  ");
    cta_table_free(t);
    cta_text_cut(f, rows, n);
    for (size_t i = 0; i < n && open; i++) {
        const cta_nvtx_group *x = grp(m, order[i]);
        char name[200], safe[200], b[32];
        if (!x->open_at_end)
            continue;
        fprintf(f, "  still open at the end: %s, %llu instance%s (%s until then, not in the table)\n",
                cta_text_safe(safe, sizeof safe, cta_nvtx_display(m, order[i], name, sizeof name), 90),
                (unsigned long long)x->open_at_end, x->open_at_end == 1 ? "" : "s",
                cta_fmt_ns(b, (double)x->open_ns));
    }
    if (bounded)
        fprintf(f, "  \u2264: in some instances the first operation began inside its call (an idle stream)\n"
                   "  or the last one's end is only bounded (README: end-bounded GPU times): the\n"
                   "  projected time is at most that (--json: gpu_projected_min_ns, the least).\n");
    if (unprojected)
        fprintf(f, "  Some ranges come from a trace written before format 1.6: their GPU work is "
                   "not known (trace again to have it).\n");
    free(order);

    uint32_t v[NV_VIEWS];
    int nv = views(m, v);
    for (int i = 0; i < nv; i++) {
        const cta_nvtx_group *x = grp(m, v[i]);
        char name[200], safe[200], b[4][32];
        cta_text_safe(safe, sizeof safe, cta_nvtx_display(m, v[i], name, sizeof name), 90);
        uint64_t med = cta_sketch_quantile(&x->host, 0.5);
        fprintf(f, "\n== Iterations of %s: %llu ==\n", safe, (unsigned long long)x->host.count);
        fprintf(f, "  per step: median %s, 90th percentile %s, max %s, total %s\n",
                cta_fmt_ns(b[0], (double)med), cta_fmt_ns(b[1], (double)cta_sketch_quantile(&x->host, 0.9)),
                cta_fmt_ns(b[2], (double)x->host.max), cta_fmt_ns(b[3], (double)x->host.sum));
        if (x->nkids) {
            fprintf(f, "  median step:");
            for (int k = 0; k < x->nkids; k++)
                fprintf(f, "%s %s %s", k ? "," : "",
                        cta_text_safe(safe, sizeof safe, cta_nvtx_display(m, x->kid_group[k], name, sizeof name), 60),
                        cta_fmt_ns(b[0], (double)cta_nvtx_median(&x->kid[k], x->host.count)));
            fprintf(f, ", outside child ranges %s\n",
                    cta_fmt_ns(b[0], (double)cta_nvtx_median(&x->self, x->host.count)));
        }
        int slow = 0;
        while (slow < x->nslow && nv_is_slow(&x->slow[slow], med))
            slow++;
        if (!slow)
            fprintf(f, "  no step took %.2fx the median or more\n", NV_SLOW_RATIO);
        else
            fprintf(f, "  slowest (%.2fx the median or more):\n", NV_SLOW_RATIO);
        for (int k = 0; k < slow; k++) {
            const cta_nvtx_step *s = &x->slow[k];
            nv_why w = {"", 0, 0};
            why_of(m, x, s, &w);
            char pid[32] = "";
            if (m->nprocs > 1)
                snprintf(pid, sizeof pid, " (pid %u)", s->pid);
            fprintf(f, "    step %llu%s: %s (%.1fx the median); ", (unsigned long long)s->seq, pid,
                    cta_fmt_ns(b[0], (double)s->dur), med ? (double)s->dur / (double)med : 0);
            if (s->gpu_ns)
                fprintf(f, "GPU: kernels %s, projected %s%s", cta_fmt_ns(b[1], (double)s->kern_ns),
                        s->span_lo_ns < s->span_ns ? "\u2264 " : "", cta_fmt_ns(b[2], (double)s->span_ns));
            else
                fprintf(f, "no GPU work");
            if (w.name[0])
                fprintf(f, "; most above its median: %s %s (median %s)",
                        cta_text_safe(safe, sizeof safe, w.name, 60), cta_fmt_ns(b[0], (double)w.ns),
                        cta_fmt_ns(b[1], (double)w.median));
            fprintf(f, "\n");
        }
    }
}

/* ---- JSON ---- */

static void json_name(cta_json *j, const cta_model *m, uint32_t g)
{
    const char *key = cta_nvtx_group_name(m, g), *sep = strchr(key, '\x1f');
    char dom[CT_STRTMP];
    snprintf(dom, sizeof dom, "%.*s", (int)(sep - key), key);
    CTA_JK_STR(j, "domain", dom);
    CTA_JK_STR(j, "name", sep + 1);
}

void cta_nvtx_json(cta_json *j, const cta_model *m)
{
    cta_json_key(j, "nvtx");
    cta_json_obj(j);
    cta_json_key(j, "ranges");
    cta_json_arr(j);
    uint32_t *order;
    size_t n = cta_nvtx_of(m) ? cta_nvtx_order(m, &order) : 0;
    for (size_t i = 0; i < n; i++) {
        const cta_nvtx_group *x = grp(m, order[i]);
        const cta_sketch *d = &x->host;
        cta_json_obj(j);
        json_name(j, m, order[i]);
        CTA_JK_STR(j, "kind", x->kinds == 3 ? "both" : x->kinds == 2 ? "start/end" : "push/pop");
        CTA_JK_U64(j, "instances", d->count);
        CTA_JK_U64(j, "top_level", x->top);
        CTA_JK_U64(j, "host_total_ns", d->sum);
        CTA_JK_U64(j, "host_avg_ns", d->count ? d->sum / d->count : 0);
        CTA_JK_U64(j, "host_median_ns", cta_sketch_quantile(d, 0.5));
        CTA_JK_U64(j, "host_min_ns", d->count ? d->min : 0);
        CTA_JK_U64(j, "host_max_ns", d->max);
        CTA_JK_U64(j, "open_at_end", x->open_at_end);
        CTA_JK_U64(j, "open_ns", x->open_ns);
        cta_json_key(j, "gpu_known");
        cta_json_bool(j, !x->unprojected);
        CTA_JK_U64(j, "gpu_ops", x->ops);
        CTA_JK_U64(j, "gpu_kernel_ns", x->kern_ns);
        CTA_JK_U64(j, "gpu_ops_ns", x->gpu_ns);
        CTA_JK_U64(j, "gpu_projected_ns", x->span.sum);
        CTA_JK_U64(j, "gpu_projected_min_ns", x->span_lo);
        CTA_JK_U64(j, "gpu_projected_bounded", x->span_bounded);
        CTA_JK_U64(j, "gpu_projected_median_ns", cta_sketch_quantile(&x->span, 0.5));
        CTA_JK_U64(j, "instances_with_gpu", x->with_gpu);
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
    cta_json_key(j, "iterations");
    cta_json_arr(j);
    uint32_t v[NV_VIEWS];
    int nv = n ? views(m, v) : 0;
    for (int i = 0; i < nv; i++) {
        const cta_nvtx_group *x = grp(m, v[i]);
        cta_json_obj(j);
        json_name(j, m, v[i]);
        CTA_JK_U64(j, "steps", x->host.count);
        CTA_JK_U64(j, "median_ns", cta_sketch_quantile(&x->host, 0.5));
        CTA_JK_U64(j, "p90_ns", cta_sketch_quantile(&x->host, 0.9));
        CTA_JK_U64(j, "max_ns", x->host.max);
        CTA_JK_U64(j, "total_ns", x->host.sum);
        cta_json_key(j, "histogram");
        cta_json_arr(j);
        for (unsigned b = 0; b < CTA_SKETCH_BUCKETS && x->host.count; b++) {
            uint64_t c = cta_sketch_bucket_count(&x->host, b), lo, hi;
            if (!c)
                continue;
            cta_sketch_bucket_bounds(b, &lo, &hi);
            cta_json_obj(j);
            CTA_JK_U64(j, "lo_ns", lo);
            CTA_JK_U64(j, "hi_ns", hi);
            CTA_JK_U64(j, "count", c);
            cta_json_end_obj(j);
        }
        cta_json_end_arr(j);
        cta_json_key(j, "median_step");
        cta_json_obj(j);
        for (int k = 0; k < x->nkids; k++) {
            char name[200];
            CTA_JK_U64(j, cta_nvtx_display(m, x->kid_group[k], name, sizeof name),
                       cta_nvtx_median(&x->kid[k], x->host.count));
        }
        CTA_JK_U64(j, "(outside child ranges)", cta_nvtx_median(&x->self, x->host.count));
        CTA_JK_U64(j, "(synchronizing)", cta_nvtx_median(&x->sync, x->host.count));
        cta_json_end_obj(j);
        cta_json_key(j, "slowest");
        cta_json_arr(j);
        uint64_t med = cta_sketch_quantile(&x->host, 0.5);
        for (int k = 0; k < x->nslow && nv_is_slow(&x->slow[k], med); k++) {
            const cta_nvtx_step *s = &x->slow[k];
            cta_json_obj(j);
            CTA_JK_U64(j, "pid", s->pid);
            CTA_JK_U64(j, "step", s->seq);
            CTA_JK_U64(j, "start_ns", s->start - m->t0);
            CTA_JK_U64(j, "dur_ns", s->dur);
            CTA_JK_U64(j, "gpu_kernel_ns", s->kern_ns);
            CTA_JK_U64(j, "gpu_ops_ns", s->gpu_ns);
            CTA_JK_U64(j, "gpu_projected_ns", s->span_ns);
            CTA_JK_U64(j, "gpu_projected_min_ns", s->span_lo_ns);
            CTA_JK_U64(j, "sync_ns", s->sync_ns);
            CTA_JK_U64(j, "outside_children_ns", s->self_ns);
            cta_json_key(j, "children");
            cta_json_obj(j);
            for (int c = 0; c < s->nkids; c++) {
                char name[200];
                CTA_JK_U64(j, cta_nvtx_display(m, s->kid_group[c], name, sizeof name), s->kid_ns[c]);
            }
            cta_json_end_obj(j);
            nv_why w = {"", 0, 0};
            why_of(m, x, s, &w);
            cta_json_key(j, "most_above_median");
            if (w.name[0]) {
                cta_json_obj(j);
                CTA_JK_STR(j, "part", w.name);
                CTA_JK_U64(j, "ns", w.ns);
                CTA_JK_U64(j, "median_ns", w.median);
                cta_json_end_obj(j);
            } else {
                cta_json_null(j);
            }
            cta_json_end_obj(j);
        }
        cta_json_end_arr(j);
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
    cta_json_end_obj(j);
    if (cta_nvtx_of(m))
        free(order);
}

/* ---- diagnoses ---- */

int cta_nvtx_where_text(const cta_model *m, const cta_proc *p, int kind, cta_nvtx_where_info *w)
{
    uint32_t g;
    double share;
    const cta_nvtx_place *pl = cta_nvtx_where_best(m, p, kind, &g, &share);
    if (!pl)
        return 0;
    memset(w, 0, sizeof *w);
    cta_nvtx_display(m, g, w->range, sizeof w->range);
    w->share = share;
    /* the outermost range around it that repeats; the next one in where the outermost ran once */
    for (int k = 0; k < 2 && !w->outer[0]; k++) {
        uint32_t o = pl->outer[k];
        if (o && grp(m, o - 1)->host.count + grp(m, o - 1)->open_at_end >= 2) {
            cta_nvtx_display(m, o - 1, w->outer, sizeof w->outer);
            w->first = pl->seq_min[k];
            w->last = pl->seq_max[k];
        }
    }
    char safe[2][200];
    int n = snprintf(w->text, sizeof w->text, "in NVTX range `%s` (%.0f%% of this time)",
                     cta_text_safe(safe[0], sizeof safe[0], w->range, 80), 100.0 * share);
    if (!w->outer[0])
        return 1;
    char which[64];
    if (w->first == w->last)
        snprintf(which, sizeof which, "instance %llu", (unsigned long long)w->first);
    else
        snprintf(which, sizeof which, "instances %llu-%llu", (unsigned long long)w->first,
                 (unsigned long long)w->last);
    if (strcmp(w->outer, w->range))
        snprintf(w->text + n, sizeof w->text - (size_t)n, ", %s of `%s`", which,
                 cta_text_safe(safe[1], sizeof safe[1], w->outer, 80));
    else
        snprintf(w->text + n, sizeof w->text - (size_t)n, ", %s", which);
    return 1;
}

/* The feature's entry in the table (cta_features.c): here, with its renderings, so that the
 * ranges (cta_nvtx.c) do not depend on how they are shown. */
const cta_feature cta_nvtx_feature = {
    .name = "nvtx",
    .types = 1ull << CT_REC_NVTX_BEGIN | 1ull << CT_REC_NVTX_RANGE,
    .record = cta_nvtx_record,
    .ctx_ref = cta_nvtx_ref,
    .ctx_unref = cta_nvtx_unref,
    .call_gpu = cta_nvtx_call_gpu,
    .sync = cta_nvtx_sync,
    .where = cta_nvtx_where,
    .idle = cta_nvtx_idle,
    .gap = cta_nvtx_gap,
    .point = cta_nvtx_point,
    .finish = cta_nvtx_finish,
    .merge = cta_nvtx_merge,
    .proc_free = cta_nvtx_proc_free,
    .free = cta_nvtx_free,
    .text = cta_nvtx_text,
    .json = cta_nvtx_json,
};
