/* The data-loading rule (dataloader-starvation), under the contract of cta_diag_int.h. */
#include "cta_diag_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cta_out.h"
#include "cta_startup.h"

/* The typical data-loading gap (cta_dev.starve_bins), which the fix's workers are counted for:
 * the band of length classes [band[0], band[1]], a factor CTA_DIAG_STARVE_BAND wide, holding
 * the most gap time among the bands of at least 3 gaps (else among all), so that a stall or
 * the program's start, however long, does not stand for the loop; *typical, the band's median
 * (from the lengths' sketch: exact up to CTA_SKETCH_EXACT gaps, else within 1/32). It picks a
 * length only: every gap counts in the finding and its price. */
static uint64_t starve_typical(const cta_dev *dv, unsigned band[2])
{
    const cta_starve_bin *bins = dv->starve_bins;
    const unsigned width = (unsigned)__builtin_ctz(CTA_DIAG_STARVE_BAND) * CTA_SKETCH_SUB;
    uint64_t n = 0, ns = 0, best_ns = 0;
    unsigned best = 0;
    int best_recurs = 0;
    for (unsigned b = 0; b < CTA_SKETCH_BUCKETS; b++) {
        n += bins[b].n;
        ns += bins[b].ns;
        if (b >= width) {
            n -= bins[b - width].n;
            ns -= bins[b - width].ns;
        }
        int recurs = n >= 3;
        if (ns && (recurs > best_recurs || (recurs == best_recurs && ns > best_ns))) {
            best = b;
            best_ns = ns;
            best_recurs = recurs;
        }
    }
    band[0] = best + 1 >= width ? best + 1 - width : 0;
    band[1] = best;
    return cta_sketch_quantile_in(&dv->starve_len, 0.5, band[0], band[1]);
}

/* The steps the data-loading gaps stand for, the first batch's aside: the gaps a step's first
 * batch copy ended. Not the program's start, nor a pause within a step, before its second copy
 * (PyTorch's labels: one beside CPU-bound processes, the host descheduled in it, passed for a
 * step and halved the loop's). A program of copies alone (no kernel, no step to tell): the gaps
 * at least 1/16 of the typical band's shortest (class first). */
static uint64_t starve_steps(const cta_dev *dv, unsigned first)
{
    uint64_t n = 0;
    for (unsigned b = dv->first_kernel || first < 4 * CTA_SKETCH_SUB ? 0 : first - 4 * CTA_SKETCH_SUB;
         b < CTA_SKETCH_BUCKETS; b++)
        n += dv->first_kernel ? dv->starve_bins[b].steps : dv->starve_bins[b].n;
    return n;
}

/* The loop's step as the main thread lives it, its loading aside: the time between one step's
 * data-loading gap and the next, on average, over the span from the first step gap's start
 * (cta_dev.first_step_gap; without one, a program of copies alone, or a steady state begun
 * after it, the first gap's) to the last gap's end (the device's utilization series, whose bins
 * hold each cause's gap time: a first bin's loading taken at its end, a last's at its start,
 * exact for gaps longer than a bin, within a bin otherwise); the program's start before it is
 * no step's (spanned from the first gap, an import's, and divided by its gaps too, the step
 * came out at the program's shortest, a third of it beside CPU-bound processes). Not the GPU's
 * work per step: between its batches the main thread launches
 * the step, runs its Python, waits in its synchronizations, and that is what the next batch's
 * loading follows, whoever loads it (imagenet -j 0: 4 ms of GPU work, about 20 ms of step; paced
 * by the GPU's, 2 workers were priced at half the loading where -j 2 saved two thirds). Not the
 * window less the loading over the steps either: what the run does once before its first batch
 * or after its last (a checkpoint, a loader_tree's hold) is no step's. At least gpu_step (the
 * GPU's work bounds the step from below); with fewer than two steps there is no span between
 * gaps, and the window's non-loading time stands for it. */
static double loop_step(const cta_dev *dv, uint64_t sn, uint64_t steps, uint64_t win, double gpu_step)
{
    const cta_series *u = &dv->util;
    double s = steps ? (double)(win > sn ? win - sn : 0) / (double)steps : 0;
    if (steps >= 2 && u->started && u->n && dv->last_gpu > u->t0) {
        const uint64_t *v = cta_series_ch(u, CTA_CH_GAP + CTA_GAP_STARVE);
        uint32_t i0 = cta_series_bin(u, dv->first_gpu > u->t0 ? dv->first_gpu : u->t0), i1 = u->n;
        while (i0 < u->n && !v[i0])
            i0++;
        for (uint32_t i = i0; i < u->n; i++)
            if (v[i])
                i1 = i;
        if (i1 < u->n) {
            uint64_t lo = u->t0 + (uint64_t)(i0 + 1) * u->width - v[i0];
            uint64_t hi = u->t0 + (uint64_t)i1 * u->width + v[i1];
            lo = lo > dv->first_gpu ? lo : dv->first_gpu;
            if (dv->first_step_gap && dv->first_step_gap >= dv->first_gpu) {
                lo = dv->first_step_gap;
                sn -= dv->starve_before_step < sn ? dv->starve_before_step : sn;
            }
            hi = hi < dv->last_gpu ? hi : dv->last_gpu;
            uint64_t between = hi > lo + sn ? hi - lo - sn : 0;
            s = (double)between / (double)(steps - 1);
        }
    }
    return s > gpu_step ? s : gpu_step;
}

/* Of a gap of loading len, what N loader workers preparing batches while the main thread runs a
 * step hide: they leave max(0, len / N - step) of it. */
static double hidden_of(double len, int workers, double step)
{
    double left = len / workers - step;
    return len - (left > 0 ? left : 0);
}

/* The idle time N loader workers would hide of the loop's data-loading gaps, each gap priced by
 * the average length of its class, less the program's start's (startup gaps of startup_ns:
 * nothing loads ahead of the first batch). */
static double starve_hidden(const cta_dev *dv, int workers, double step, uint64_t startup,
                            uint64_t startup_ns)
{
    double hidden = 0;
    for (unsigned b = 0; b < CTA_SKETCH_BUCKETS; b++) {
        const cta_starve_bin *x = &dv->starve_bins[b];
        if (x->n)
            hidden += (double)x->n * hidden_of((double)x->ns / (double)x->n, workers, step);
    }
    if (startup)
        hidden -= (double)startup * hidden_of((double)startup_ns / (double)startup, workers, step);
    return hidden > 0 ? hidden : 0;
}

static const cta_fix FIX_STARVE = {
    "overlap loading with GPU work: loader threads filling pinned buffers (cudaHostAlloc) and "
    "cudaMemcpyAsync on a copy stream one batch ahead, ordered by events; move preprocessing "
    "off the main thread or to the GPU; use faster storage or cache the dataset",
    "overlap loading with GPU work: DataLoader(num_workers=N>0, pin_memory=True, "
    "prefetch_factor=2+, persistent_workers=True); move preprocessing off the main thread (to "
    "the workers or the GPU); use faster storage or cache the dataset"};

/* When the host samples say every core was busy loading (cpu-bound, and no core free for more
 * workers): the fix is cheaper batches, not more workers. */
static const cta_fix FIX_STARVE_CPU = {
    "the loading is CPU-bound: more loader threads will not help; make each batch cheaper to "
    "prepare (the lines the loading was on, listed with this finding), cache decoded samples, "
    "move preprocessing to the GPU, or give the job more cores",
    "the loading is CPU-bound: more DataLoader workers will not help; make each sample cheaper "
    "(where the loader workers were, listed with this finding: decoding, transforms), cache "
    "decoded samples, move augmentation to the GPU, or give the job more cores"};

/* dataloader-starvation: the GPU idle before batch copies (the gaps of cause CTA_GAP_STARVE),
 * every such gap, whatever the shape of their lengths: regular, bursty (workers delivering
 * batches in bursts), irregular (imagenet's from 23 ms to 1.1 s), or mixed with the short
 * pauses before a step's second copy. (A rule that kept the band of lengths holding the most
 * time, or gaps that recur, dropped bursty and irregular loaders holding 90% of the window.)
 * The fix is priced as recommended, gap by gap (starve_hidden): N loader workers preparing
 * batches ahead while the main thread runs a step (loop_step) make a gap of loading L last
 * max(0, L / N - step); N is the fewest workers that hide the typical gap (starve_typical), at most
 * CTA_DIAG_MAX_WORKERS. One or two gaps holding less than a tenth of the window are not a
 * loop's loading and are not reported; more, or more time, always are. */
static void starvation(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_dev *dv = &p->dev[d];
    char b1[32], b2[32], b3[32], b6[32];
    cta_diag *x;
    uint64_t sn = dv->gap_ns[CTA_GAP_STARVE], sc = dv->gap_count[CTA_GAP_STARVE];
    /* the program's start, when a kernel ran at all; what the host did in the loop's gaps (the
     * start's is another story: imports, set-up) */
    const cta_hostsplit none = {0}, *all = &dv->gap_host[CTA_GAP_STARVE];
    const cta_hostsplit *st = dv->first_kernel ? &dv->starve_startup_host : &none;
    uint64_t startup = dv->first_kernel ? dv->starve_startup : 0;
    uint64_t startup_ns = dv->first_kernel ? dv->starve_startup_ns : 0;
    const cta_hostsplit sh = {all->in_api - st->in_api, all->blocked - st->blocked,
                              all->compute - st->compute, all->wait - st->wait,
                              all->unknown - st->unknown};
    if (!sn || !dv->starve_bins || (sc < 3 && 10 * sn < win))
        return;
    unsigned band[2];
    uint64_t typical = starve_typical(dv, band);
    /* the GPU's work per step, at most its busy time: its kernels, and its copies and sets of
     * each direction, at what their exact intervals say is the work alone, the others at the
     * tightest bound (cta_work_estimate), not at recorded durations that hold host time
     * (a synchronous copy in a slow first call is recorded as long as the call: PyTorch's
     * first batch copy, 171 ms for a copy of microseconds, made the step 22 ms instead of
     * 0.1 ms; a first launch loading its module is recorded with the loading) */
    double est = 0, exact = 0; /* (of it, what rests on exact intervals) */
    for (int k = -1; k < CTA_OP_N; k++) {
        const cta_work *w = k < 0 ? &dv->work_kernels : &dv->work_copies[k];
        double e = cta_work_estimate(w);
        est += e;
        exact += (double)w->exact_ns;
    }
    uint64_t work = est < (double)dv->busy ? (uint64_t)est : dv->busy;
    uint64_t steps = starve_steps(dv, band[0]);
    double gpu_step = (double)work / (double)(steps + 1), load = (double)typical;
    /* ... and the step the workers' arithmetic is paced by: the loop's, of which it is a part */
    double step = loop_step(dv, sn, steps, win, gpu_step);
    double need = step > 0 ? ceil(load / step) : CTA_DIAG_MAX_WORKERS;
    int workers = need > CTA_DIAG_MAX_WORKERS ? CTA_DIAG_MAX_WORKERS : need < 1 ? 1 : (int)need;
    double left = load / workers - step; /* of the typical gap, still on the critical path */
    double hidden = starve_hidden(dv, workers, step, startup, startup_ns);
    uint64_t ssave = hidden < (double)sn ? (uint64_t)hidden : sn;
    /* why, from the host samples: when they tell, the finding is priced by the fixes of the
     * causes they show (within the loop's gaps), not by workers they may rule out */
    cta_starve_cause cause;
    uint64_t batches = dv->first_kernel ? dv->h2d_batches : dv->h2d_before_kernels;
    /* per step, not per gap: the pauses before a step's second copy are not a batch each (with
     * them imagenet's batch was said to cost the main thread 34 ms of CPU for 76) */
    cta_starve_cause_of(p, d, CTA_GAP_STARVE, CTA_CAUSE_LOADING, steps + startup ? steps + startup : sc,
                        batches, step, gpu_step, &sh, &cause);
    int told = cause.known && cause.causes;
    /* ... none of which shortens the program's start before its first batch (imports,
     * set-up): its gaps are counted, not priced, as the workers' arithmetic leaves them out */
    if (told)
        ssave = cause.saving_ns < sn - startup_ns ? cause.saving_ns : sn - startup_ns;
    int cpu_bound = told && (cause.causes & CTA_CAUSE_CPU_BOUND) && !(cause.causes & CTA_CAUSE_ADD_WORKERS);
    if ((x = cta_diag_add(ds, p, d, ssave, win,
                          cta_fix_for(p, cpu_bound ? FIX_STARVE_CPU : FIX_STARVE)))) {
        /* a CPU-bound loading's fix names the line that burns the CPU (issue 28 item 4): the
         * workers' activity on a CPU holding most of their sampled time */
        char burning[600];
        double bshare;
        if (cpu_bound && cta_feature_gap_burning(ds->m, p, d, CTA_GAP_STARVE, cta_startup_span(p, d, 0), burning,
                                                 sizeof burning, &bshare)) {
            size_t used = strlen(x->fix);
            snprintf(x->fix + used, sizeof x->fix - used,
                     "; first of all %s, where the %s were on a CPU %.0f%% of their sampled "
                     "time in the gaps", burning, p->torch ? "DataLoader workers" : "loader workers",
                     100 * bshare);
        }
        const cta_hostsplit *h = &sh;
        uint64_t outside = h->compute + h->wait + h->unknown;
        const char *what = h->unknown * 2 > outside
                               ? "outside CUDA (no CPU readings tell waiting from computing)"
                           : h->wait >= h->compute
                               ? "waiting (off a CPU: for loader workers, I/O or storage, or a core)"
                           : p->torch ? "computing (CPU busy: preprocessing on the main thread, "
                                        "Python overhead)"
                                      : "computing (CPU busy: preprocessing on the main thread)";
        char who[64], b4[32], b5[32], faster[160] = "";
        snprintf(who, sizeof who, "%d %s%s", workers,
                 p->torch ? "DataLoader worker" : "loader thread", workers == 1 ? "" : "s");
        /* the window is first to last GPU activity, so it is never all gaps and busy > 0 */
        if (ssave < win && dv->busy)
            snprintf(faster, sizeof faster,
                     " (the window %.2fx shorter; with the GPU never idle it would be at most "
                     "%.2fx shorter)",
                     (double)win / (double)(win - ssave), (double)win / (double)dv->busy);
        char names[96];
        cta_diag_cause_names(&cause, names, sizeof names);
        /* the remedy: the causes the samples tell, else the workers that would hide the gaps */
        char remedy[400];
        if (told)
            snprintf(remedy, sizeof remedy,
                     "The host samples say why: %s (below); fixing it saves up to %s%s", names,
                     cta_fmt_ns(b5, (double)ssave), faster);
        else
            snprintf(remedy, sizeof remedy,
                     "%s preparing batches one step ahead would leave %s of each gap: saves %s%s%s",
                     who, cta_fmt_ns(b4, left > 0 ? left : 0), cta_fmt_ns(b5, (double)ssave),
                     faster,
                     workers == CTA_DIAG_MAX_WORKERS && left > 0 ? "; more workers would hide more"
                                                                 : "");
        char started[160] = "";
        if (startup)
            snprintf(started, sizeof started,
                     "; %s of it before the first kernel (the program's start up to its first "
                     "batch, which workers do not shorten)",
                     cta_fmt_ns((char[32]){0}, (double)startup_ns));
        cta_diag_msg(x,
            "GPU %d idle %s (%.1f%% of the window) in %llu gaps before host-to-device batch "
            "copies (typically %s, against a step of %s between them, %s of it GPU work)%s; the "
            "host was mostly %s. %s",
            d, cta_fmt_ns(b1, (double)sn), cta_diag_pct(sn, win), (unsigned long long)sc,
            cta_fmt_ns(b2, load), cta_fmt_ns(b3, step), cta_fmt_ns(b6, gpu_step), started, what,
            remedy);
        cta_diag_ev(x, "gaps", (double)sc, CTA_EV_COUNT);
        cta_diag_ev(x, "gap_ns", (double)sn, CTA_EV_NS);
        cta_diag_ev(x, "gap_pct_of_window", cta_diag_pct(sn, win), CTA_EV_PCT);
        cta_diag_ev(x, "avg_gap_ns", (double)sn / (double)sc, CTA_EV_NS);
        cta_diag_ev(x, "median_gap_ns", (double)typical, CTA_EV_NS);
        cta_diag_ev(x, "startup_gap_ns", (double)startup_ns, CTA_EV_NS);
        cta_diag_ev(x, "host_wait_ns", (double)h->wait, CTA_EV_NS);
        cta_diag_ev(x, "host_compute_ns", (double)h->compute, CTA_EV_NS);
        cta_diag_ev(x, "host_in_cuda_ns", (double)(h->in_api + h->blocked), CTA_EV_NS);
        cta_diag_ev(x, "h2d_batches", (double)batches, CTA_EV_COUNT);
        cta_diag_ev(x, "gpu_busy_ns", (double)dv->busy, CTA_EV_NS);
        cta_diag_ev(x, "gpu_step_ns", gpu_step, CTA_EV_NS);
        cta_diag_ev(x, "gpu_step_exact_pct", est > 0 ? 100 * exact / est : 100, CTA_EV_PCT);
        cta_diag_ev(x, "loop_step_ns", step, CTA_EV_NS);
        cta_diag_ev(x, "loader_workers", workers, CTA_EV_COUNT);
        cta_diag_ev(x, "max_speedup", dv->busy ? (double)win / (double)dv->busy : 0, CTA_EV_RATIO);
        /* at a gap of the typical length: the longest may be an outlier */
        cta_diag_at_gap(x, p, d, CTA_GAP_STARVE, band, -1);
        x->cause = cause;
        cta_starve_cause_text(&cause, CTA_CAUSE_LOADING, p->torch, x->detail, sizeof x->detail);
    }
}

const cta_diag_rule cta_diag_rule_starvation = {
    .id = "dataloader-starvation", .per_device = 1, .where = CTA_WHERE_GAP + CTA_GAP_STARVE,
    .gap = 1 + CTA_GAP_STARVE,
    .run = starvation};
