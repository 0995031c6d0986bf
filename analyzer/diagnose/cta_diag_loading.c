/* The data-loading rule (dataloader-starvation), under the contract of cta_diag_int.h. */
#include "cta_diag_int.h"

#include <math.h>
#include <stdio.h>

#include "cta_out.h"

/* Of the data-loading gaps (cta_dev.starve_bins), those of the band [b, b + width) of length
 * classes, a factor CTA_DIAG_STARVE_BAND in length, with the most time among the bands holding
 * at least 3 gaps (else among all): their count, time, host activity and median (from the
 * lengths' sketch: exact up to CTA_SKETCH_EXACT gaps, else within 1/32). */
static void starve_band(const cta_dev *dv, uint64_t *sc, uint64_t *sn, cta_hostsplit *sh,
                        uint64_t *typical, unsigned band[2])
{
    const cta_starve_bin *bins = dv->starve_bins;
    if (!bins)
        return;
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
    unsigned first = best + 1 >= width ? best + 1 - width : 0;
    for (unsigned b = first; b <= best; b++) {
        *sc += bins[b].n;
        *sn += bins[b].ns;
        cta_hostsplit_add(sh, &bins[b].host);
    }
    *typical = cta_sketch_quantile_in(&dv->starve_len, 0.5, first, best);
    band[0] = first;
    band[1] = best;
}

static const cta_fix FIX_STARVE = {
    "overlap loading with GPU work: loader threads filling pinned buffers (cudaHostAlloc) and "
    "cudaMemcpyAsync on a copy stream one batch ahead, ordered by events; move preprocessing "
    "off the main thread or to the GPU; use faster storage or cache the dataset",
    "overlap loading with GPU work: DataLoader(num_workers=N>0, pin_memory=True, "
    "prefetch_factor=2+, persistent_workers=True); move preprocessing off the main thread (to "
    "the workers or the GPU); use faster storage or cache the dataset"};

/* dataloader-starvation: gaps that end with a batch copy and recur, each step: the typical
 * gap carries the time (a few long outliers, such as a descheduled host, do not). The
 * loop's gaps are those of the band of lengths (a factor CTA_DIAG_STARVE_BAND wide) holding
 * the most gap time among the bands with at least 3 gaps (starve_band); the others are
 * not a step's loading (the program's start up to its first batch, a stalled host, the
 * short pauses between a step's copies): they are set aside, their time and host
 * activity with them, so that they neither hide a starved loop nor count in its figures;
 * they must be fewer than the loop's.
 * The fix
 * is priced as recommended: N loader workers preparing batches ahead while the GPU runs
 * the step make a step last max(GPU step, loader / N) instead of loader + GPU step, so
 * each gap shrinks by loader - max(0, loader / N - GPU step); N is the fewest workers that
 * hide the typical gap, at most CTA_DIAG_MAX_WORKERS */
static void starvation(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_dev *dv = &p->dev[d];
    char b1[32], b2[32], b3[32];
    cta_diag *x;
    uint64_t typical = 0, sn = 0, sc = 0;
    cta_hostsplit sh = {0};
    unsigned band[2] = {0, CTA_SKETCH_BUCKETS};
    starve_band(dv, &sc, &sn, &sh, &typical, band);
    uint64_t set_aside = dv->gap_count[CTA_GAP_STARVE] - sc;
    uint64_t set_aside_ns = dv->gap_ns[CTA_GAP_STARVE] - sn;
    /* the GPU's work per step, at most its busy time: its kernels, and its copies and sets of
     * each direction, at the average of those whose intervals are the work alone
     * (cta_work_estimate), not at recorded durations that hold host time or are only bounds
     * (a synchronous copy in a slow first call is recorded as long as the call: PyTorch's
     * first batch copy, 171 ms for a copy of microseconds, made the step 22 ms instead of
     * 0.1 ms; a first launch loading its module is recorded with the loading) */
    double est = cta_work_estimate(&dv->work_kernels);
    for (int op = 0; op < CTA_OP_N; op++)
        est += cta_work_estimate(&dv->work_copies[op]);
    uint64_t work = est < (double)dv->busy ? (uint64_t)est : dv->busy;
    double step = (double)work / (double)(sc + 1), load = (double)typical;
    double need = step > 0 ? ceil(load / step) : CTA_DIAG_MAX_WORKERS;
    int workers = need > CTA_DIAG_MAX_WORKERS ? CTA_DIAG_MAX_WORKERS : need < 1 ? 1 : (int)need;
    double left = load / workers - step; /* of each gap, still on the critical path */
    double hidden = (double)sc * (load - (left > 0 ? left : 0));
    uint64_t ssave = hidden < (double)sn ? (uint64_t)hidden : sn;
    /* why, from the host samples: when they tell, the finding is priced by the fixes of the
     * causes they show (within the loop's gaps), not by workers they may rule out */
    cta_starve_cause cause;
    cta_starve_cause_of(p, d, CTA_GAP_STARVE, CTA_CAUSE_LOADING, sc + set_aside, p->h2d_copies, step,
                        &sh, &cause);
    int told = cause.known && cause.causes;
    if (told)
        ssave = cause.saving_ns < sn ? cause.saving_ns : sn;
    /* the band's gaps recur (3 or more, regular) and are the rule, the others exceptions */
    if (sc >= 3 && 2 * typical * sc >= sn && sc >= set_aside &&
        (x = cta_diag_add(ds, p, d, ssave, win, cta_fix_for(p, FIX_STARVE)))) {
        const cta_hostsplit *h = &sh;
        uint64_t outside = h->compute + h->wait + h->unknown;
        const char *what = h->unknown * 2 > outside
                               ? "outside CUDA (no CPU readings tell waiting from computing)"
                           : h->wait >= h->compute
                               ? "waiting (CPU idle: too few loader workers, slow I/O or storage)"
                           : p->torch ? "computing (CPU busy: preprocessing on the main thread, "
                                        "Python overhead)"
                                      : "computing (CPU busy: preprocessing on the main thread)";
        char who[64], b4[32], b5[32], b6[32], faster[160] = "", aside[160] = "";
        snprintf(who, sizeof who, "%d %s%s", workers,
                 p->torch ? "DataLoader worker" : "loader thread", workers == 1 ? "" : "s");
        /* the window is first to last GPU activity, so it is never all gaps and busy > 0 */
        if (ssave < win && dv->busy)
            snprintf(faster, sizeof faster,
                     " (the window %.2fx shorter; with the GPU never idle it would be at most "
                     "%.2fx shorter)",
                     (double)win / (double)(win - ssave), (double)win / (double)dv->busy);
        if (set_aside)
            snprintf(aside, sizeof aside,
                     " (%llu other gap%s before batch copies, %s in all, not counted: the "
                     "program's start, a stalled host, pauses between a step's copies)",
                     (unsigned long long)set_aside, set_aside == 1 ? "" : "s",
                     cta_fmt_ns(b6, (double)set_aside_ns));
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
        cta_diag_msg(x,
            "GPU %d idle %s (%.1f%% of the window) in %llu gaps before host-to-device batch "
            "copies (typically %s, against %s of GPU work per step)%s; the host was mostly %s. %s",
            d, cta_fmt_ns(b1, (double)sn), cta_diag_pct(sn, win), (unsigned long long)sc,
            cta_fmt_ns(b2, load), cta_fmt_ns(b3, step), aside, what, remedy);
        cta_diag_ev(x, "gaps", (double)sc, CTA_EV_COUNT);
        cta_diag_ev(x, "gap_ns", (double)sn, CTA_EV_NS);
        cta_diag_ev(x, "gap_pct_of_window", cta_diag_pct(sn, win), CTA_EV_PCT);
        cta_diag_ev(x, "avg_gap_ns", (double)sn / (double)sc, CTA_EV_NS);
        cta_diag_ev(x, "median_gap_ns", (double)typical, CTA_EV_NS);
        cta_diag_ev(x, "set_aside_gaps", (double)set_aside, CTA_EV_COUNT);
        cta_diag_ev(x, "set_aside_gap_ns", (double)set_aside_ns, CTA_EV_NS);
        cta_diag_ev(x, "host_wait_ns", (double)h->wait, CTA_EV_NS);
        cta_diag_ev(x, "host_compute_ns", (double)h->compute, CTA_EV_NS);
        cta_diag_ev(x, "host_in_cuda_ns", (double)(h->in_api + h->blocked), CTA_EV_NS);
        cta_diag_ev(x, "h2d_batches", (double)p->h2d_copies, CTA_EV_COUNT);
        cta_diag_ev(x, "gpu_busy_ns", (double)dv->busy, CTA_EV_NS);
        cta_diag_ev(x, "gpu_step_ns", step, CTA_EV_NS);
        cta_diag_ev(x, "loader_workers", workers, CTA_EV_COUNT);
        cta_diag_ev(x, "max_speedup", dv->busy ? (double)win / (double)dv->busy : 0, CTA_EV_RATIO);
        cta_diag_at_gap(x, p, d, CTA_GAP_STARVE, band, -1);
        x->cause = cause;
        cta_starve_cause_text(&cause, CTA_CAUSE_LOADING, p->torch, x->detail, sizeof x->detail);
    }
}

const cta_diag_rule cta_diag_rule_starvation = {
    .id = "dataloader-starvation", .per_device = 1, .where = CTA_WHERE_GAP + CTA_GAP_STARVE,
    .run = starvation};
