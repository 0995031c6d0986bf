/* The rules of idle time no other rule explains (gpu-gaps, low-gpu-utilization), under the
 * contract of cta_diag_int.h. */
#include "cta_diag_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_out.h"

/* Utilization windows of one device, low-gpu-utilization's evidence. */
typedef struct {
    uint64_t width;               /* window length */
    uint32_t n;                   /* windows from the device's first GPU activity */
    uint64_t t0;                  /* window i spans [t0 + i width, t0 + (i + 1) width), clipped to
                                   * the device's first and last GPU activity */
    double util[CTA_SERIES_BINS];  /* busy fraction of each's recorded time (capture windows);
                                   * -1: none of it was recorded */
    uint64_t recorded[CTA_SERIES_BINS]; /* the window's length; in a windowed trace the time of
                                        * it recorded (clipped to the device's first and last
                                        * GPU activity, less time outside capture windows) */
    double median;
} cta_utilwin;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Of [lo, hi), the time inside p's capture windows (all of it when the trace is not windowed);
 * *w: the first window that may still overlap (calls come in increasing lo). */
static uint64_t recorded(const cta_proc *p, uint64_t lo, uint64_t hi, uint64_t *w)
{
    if (!p->captured)
        return hi - lo;
    uint64_t in = 0;
    for (; *w < p->capture_windows && p->capture_win[*w][1] <= lo; (*w)++)
        ;
    for (uint64_t i = *w; i < p->capture_windows && p->capture_win[i][0] < hi; i++) {
        uint64_t a = p->capture_win[i][0] > lo ? p->capture_win[i][0] : lo;
        uint64_t b = p->capture_win[i][1] < hi ? p->capture_win[i][1] : hi;
        in += b > a ? b - a : 0;
    }
    return in;
}

/* u: device d's windows of `want` (0: the largest of 10 ms, 1/100 of its window and 4 periods of
 * its loop), rounded up to whole bins of its series */
static void cta_util_windows(const cta_proc *p, const cta_dev *d, uint64_t want, cta_utilwin *u)
{
    memset(u, 0, sizeof *u);
    const cta_series *s = &d->util;
    uint64_t win = cta_dev_window(d);
    if (!d->windowed || !s->started || win == 0)
        return;
    if (want == 0) {
        /* several iterations per window, so a loop's own rhythm does not look like a phase */
        want = win / 100 > 10000000 ? win / 100 : 10000000;
        if (d->long_gaps && 4 * (win / d->long_gaps) > want)
            want = 4 * (win / d->long_gaps);
    }
    uint64_t k = (want + s->width - 1) / s->width;
    if (k == 0)
        k = 1;
    u->width = k * s->width;
    uint64_t first = d->first_gpu > s->t0 ? (d->first_gpu - s->t0) / s->width : 0;
    u->t0 = s->t0 + first * s->width;
    uint64_t last = (d->last_gpu - s->t0) / s->width, w = 0;
    if (last >= s->n)
        last = s->n ? s->n - 1 : 0;
    for (uint64_t b = first; b <= last && u->n < CTA_SERIES_BINS; b += k) {
        /* the window's span clipped to [first_gpu, last_gpu] */
        uint64_t lo = s->t0 + b * s->width, hi = lo + u->width;
        if (lo < d->first_gpu)
            lo = d->first_gpu;
        if (hi > d->last_gpu)
            hi = d->last_gpu;
        uint64_t busy = 0;
        for (uint64_t j = b; j < b + k && j <= last; j++)
            busy += cta_series_ch(s, CTA_CH_BUSY)[j];
        uint64_t rec = hi > lo ? recorded(p, lo, hi, &w) : 1;
        double x = rec ? (double)busy / (double)rec : -1; /* -1: nothing recorded in it */
        u->recorded[u->n] = p->captured ? rec : u->width;
        u->util[u->n++] = x > 1 ? 1 : x;
    }
    double *tmp = cta_xmalloc(u->n * sizeof *tmp + 1, "the utilization windows");
    uint32_t nrec = 0;
    for (uint32_t i = 0; i < u->n; i++)
        if (u->util[i] >= 0)
            tmp[nrec++] = u->util[i];
    qsort(tmp, nrec, sizeof *tmp, cmp_double);
    u->median = nrec ? tmp[nrec / 2] : 0;
    free(tmp);
}

/* Window i was recorded and ran below half its typical utilization. */
static int low_util(const cta_utilwin *u, uint32_t i)
{
    return u->util[i] >= 0 && u->util[i] < 0.5 && u->util[i] < 0.5 * u->median;
}

static const cta_fix FIX_GAPS = {
    "find what the host does in these gaps (the timeline shows the calls around them) and move "
    "it off the critical path or overlap it with queued GPU work", NULL};

/* Of gpu-gaps' finding x (its gaps hn), the main process's wait for the cores the loader
 * workers held (cta_starve_cause.h) moves to dataloader-starvation's finding on the device,
 * when that loading was CPU-bound too: cheaper loading or more cores give both back, and each
 * idle nanosecond is priced once. Returns the time moved. */
static uint64_t owe_loading(cta_diags *ds, cta_diag *x, const cta_proc *p, int d, uint64_t hn)
{
    uint64_t t = x->cause.wait_for_workers_ns < hn ? x->cause.wait_for_workers_ns : hn;
    cta_diag *ld = NULL;
    for (size_t i = 0; i < ds->n && !ld; i++)
        if (ds->v[i].proc == p && ds->v[i].dev == d &&
            ds->v[i].id == cta_diag_rule_starvation.id && (ds->v[i].cause.causes & CTA_CAUSE_CPU_BOUND))
            ld = &ds->v[i];
    if (!ld || !t)
        return 0;
    char b1[32];
    cta_diag_reprice(x, x->saving_ns - t);
    cta_diag_reprice(ld, ld->saving_ns + t);
    cta_diag_ev(ld, "main_wait_for_workers_ns", (double)t, CTA_EV_NS);
    cta_diag_detail(ld, "and the main process waited %s for a core the workers held in the gaps "
                    "between its launches (gpu-gaps' gaps): a cheaper loading, or more cores, "
                    "gives that back too (counted here)\n", cta_fmt_ns(b1, (double)t));
    return t;
}

/* gpu-gaps: idle gaps no other diagnosis explains */
static void gpu_gaps(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_model *m = ds->m;
    const cta_dev *dv = &p->dev[d];
    char b1[32], b2[32], b3[32];
    cta_diag *x;
    uint64_t hn = dv->gap_ns[CTA_GAP_HOST];
    if ((x = cta_diag_add(ds, p, d, hn, win, cta_fix_for(p, FIX_GAPS)))) {
        /* why, from the host samples: the main process's work between its launches */
        cta_starve_cause_of(p, d, CTA_GAP_HOST, CTA_CAUSE_HOST_WORK, dv->gap_count[CTA_GAP_HOST], 0,
                            0, 0, &dv->gap_host[CTA_GAP_HOST], &x->cause);
        char why[160] = "", names[96], owed[200] = "";
        cta_diag_cause_names(&x->cause, names, sizeof names);
        if (x->cause.known && x->cause.causes)
            snprintf(why, sizeof why, "; the host samples say why: %s (below)", names);
        uint64_t moved = owe_loading(ds, x, p, d, hn);
        if (moved)
            snprintf(owed, sizeof owed, "; %s of it the main process waited for a core the loader "
                     "workers held, which dataloader-starvation's fix gives back (counted there)",
                     cta_fmt_ns(b2, (double)moved));
        cta_diag_msg(x, "GPU %d idle %s (%.1f%% of the window) in %llu gaps that no other diagnosis "
               "explains (not data loading, not after a synchronization, not launch overhead)%s%s; "
               "the longest gaps of any cause are below",
            d, cta_fmt_ns(b1, (double)hn), cta_diag_pct(hn, win),
            (unsigned long long)dv->gap_count[CTA_GAP_HOST],
            owed, why);
        cta_diag_ev(x, "gaps", (double)dv->gap_count[CTA_GAP_HOST], CTA_EV_COUNT);
        cta_diag_ev(x, "gap_ns", (double)hn, CTA_EV_NS);
        /* a Kineto trace has no CPU-time readings: computing and waiting are unknown there */
        int no_cpu = p->kineto;
        if (no_cpu) {
            cta_diag_ev(x, "host_unknown_ns", (double)dv->gap_host[CTA_GAP_HOST].unknown,
                        CTA_EV_NS);
        } else {
            cta_diag_ev(x, "host_compute_ns", (double)dv->gap_host[CTA_GAP_HOST].compute,
                        CTA_EV_NS);
            cta_diag_ev(x, "host_wait_ns", (double)dv->gap_host[CTA_GAP_HOST].wait, CTA_EV_NS);
        }
        cta_diag_at_gap(x, p, d, CTA_GAP_HOST, NULL, -1);
        for (int i = 0; i < dv->ntop && i < 5; i++) {
            const cta_gap *g = &dv->top[i];
            if (no_cpu) {
                cta_diag_detail(x, "gap at +%s: %s (%s; host: in CUDA %s, blocked %s, outside CUDA %s "
                          "(computing or waiting: not in a Kineto trace))\n",
                       cta_fmt_ns(b1, (double)(g->start - m->t0)), cta_fmt_ns(b2, (double)g->len),
                       cta_gap_names[g->cls], cta_fmt_ns(b3, (double)g->host.in_api),
                       cta_fmt_ns((char[32]){0}, (double)g->host.blocked),
                       cta_fmt_ns((char[32]){0}, (double)(g->host.compute + g->host.wait + g->host.unknown)));
                continue;
            }
            cta_diag_detail(x, "gap at +%s: %s (%s; host: in CUDA %s, blocked %s, computing %s, waiting %s)\n",
                   cta_fmt_ns(b1, (double)(g->start - m->t0)), cta_fmt_ns(b2, (double)g->len),
                   cta_gap_names[g->cls], cta_fmt_ns(b3, (double)g->host.in_api),
                   cta_fmt_ns((char[32]){0}, (double)g->host.blocked),
                   cta_fmt_ns((char[32]){0}, (double)g->host.compute),
                   cta_fmt_ns((char[32]){0}, (double)(g->host.wait + g->host.unknown)));
        }
        cta_starve_cause_text(&x->cause, CTA_CAUSE_HOST_WORK, p->torch, x->detail, sizeof x->detail);
    }
}

const cta_diag_rule cta_diag_rule_gpu_gaps = {
    .id = "gpu-gaps", .per_device = 1, .where = CTA_WHERE_GAP + CTA_GAP_HOST,
    .gap = 1 + CTA_GAP_HOST, .run = gpu_gaps};

static const cta_fix FIX_LOWUTIL = {
    "look at what runs in these phases (evaluation, checkpointing, logging, data reloading): "
    "run them asynchronously, less often, or on other workers", NULL};

/* low-gpu-utilization: phases well below the run's typical utilization. Their idle time is of
 * the causes the rules before it priced (it runs last of the device's): it claims only what
 * they left of the device's idle time, so the device's findings together never claim more
 * than its idle time. */
static void low_utilization(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_model *m = ds->m;
    const cta_dev *dv = &p->dev[d];
    char b1[32], b2[32];
    cta_diag *x;
    cta_utilwin *u = cta_xmalloc(sizeof *u, "the utilization windows");
    cta_util_windows(p, dv, ds->o->util_window_ns, u);
    if (u->n >= 4) {
        double lost = 0;
        uint32_t low = 0;
        for (uint32_t i = 0; i < u->n; i++)
            if (low_util(u, i)) {
                lost += (u->median - u->util[i]) * (double)u->recorded[i];
                low++;
            }
        uint64_t idle = win > dv->busy ? win - dv->busy : 0, claimed = 0;
        for (size_t i = 0; i < ds->n; i++)
            if (ds->v[i].proc == p && ds->v[i].dev == d)
                claimed += ds->v[i].saving_ns;
        double left = claimed < idle ? (double)(idle - claimed) : 0;
        if (lost > left)
            lost = left;
        if (low && (x = cta_diag_add(ds, p, d, (uint64_t)lost, win, cta_fix_for(p, FIX_LOWUTIL)))) {
            cta_diag_msg(x, "GPU %d ran below half its typical utilization (%.0f%%) in %u windows of %s; "
                   "bringing them to typical would save %s",
                d, 100 * u->median, low, cta_fmt_ns(b1, (double)u->width), cta_fmt_ns(b2, lost));
            cta_diag_ev(x, "low_windows", low, CTA_EV_COUNT);
            cta_diag_ev(x, "window_ns", (double)u->width, CTA_EV_NS);
            cta_diag_ev(x, "median_utilization_pct", 100 * u->median, CTA_EV_PCT);
            uint32_t lowest = 0;
            for (uint32_t i = 1; i < u->n; i++)
                if (low_util(u, i) && (!low_util(u, lowest) || u->util[i] < u->util[lowest]))
                    lowest = i;
            uint64_t a = u->t0 + (uint64_t)lowest * u->width, b = a + u->width;
            a = a > dv->first_gpu ? a : dv->first_gpu;
            b = b < dv->last_gpu ? b : dv->last_gpu;
            cta_diag_at_span(x, d, a, b - a);
            int shown = 0;
            for (uint32_t i = 0; i < u->n && shown < 8; i++) {
                if (!low_util(u, i))
                    continue;
                uint32_t j = i;
                while (j + 1 < u->n && low_util(u, j + 1))
                    j++;
                uint64_t a = dv->first_gpu - m->t0 + (uint64_t)i * u->width;
                cta_diag_detail(x, "low utilization from +%s to +%s\n", cta_fmt_ns(b1, (double)a),
                       cta_fmt_ns(b2, (double)(a + (uint64_t)(j - i + 1) * u->width)));
                shown++;
                i = j;
            }
        }
    }
    free(u);
}

const cta_diag_rule cta_diag_rule_low_utilization = {
    .id = "low-gpu-utilization", .per_device = 1, .where = -1, .run = low_utilization};
