/* The rule of the start-up (startup-autotuning), under the contract of cta_diag_int.h: run on
 * the device's whole record, its finding apart from the steady state's (cta_startup.h). */
#include "cta_diag_int.h"

#include <stdio.h>

#include "cta_out.h"
#include "cta_startup.h"

static const cta_fix FIX_TUNE = {
    "the algorithm search (cuDNN's cudnnFind*) runs once per input shape: on a short run use "
    "the heuristics (cudnnGetConvolution*Algorithm_v7) instead; on a long one it pays for itself: "
    "leave the warm-up out of the measurement",
    "cuDNN's autotuning (torch.backends.cudnn.benchmark = True) runs once per input shape: on a "
    "short run set torch.backends.cudnn.benchmark = False; on a long one it pays for itself: "
    "leave the warm-up iterations out of the measurement (and keep input shapes fixed so that "
    "it runs once)"};

/* startup-autotuning: the start-up searched for algorithms (synchronizations in cuDNN's search;
 * the thread samples there and the kernels tried that the steady state never runs tell how
 * much) while the GPU sat idle. Without the search the start-up's idle time of the host's own work, its
 * synchronizations and its launches goes; its data loading stays (the first batch is loaded
 * either way). Its host activity is the host's own work in the start-up's gaps: the search. */
static void startup_autotuning(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_startup_dev *r = cta_startup_of(p, d);
    const cta_startup_proc *pr = cta_startup_proc_of(p);
    char b1[32], b2[32], b3[32];
    cta_diag *x;
    if (!r || !r->steady_from || !pr->tune_calls)
        return;
    uint64_t idle = r->idle_ns[CTA_GAP_HOST] + r->idle_ns[CTA_GAP_SYNC] + r->idle_ns[CTA_GAP_LAUNCH] +
                    r->idle_ns[CTA_GAP_SYNCCPY];
    if (!(x = cta_diag_add(ds, p, d, idle, win, cta_fix_for(p, FIX_TUNE))))
        return;
    const cta_dev *dv = &p->dev[d];
    cta_diag_msg(x,
        "start-up, not the loop: GPU %d sat idle %s (%.1f%% of the window) before its steady state "
        "(+%s) while the host searched for algorithms: %llu synchronizations in the search blocked "
        "it %s, %llu of the start-up's %llu thread samples were in it, %llu kernels ran there that "
        "the steady state never runs",
        d, cta_fmt_ns(b1, (double)idle), cta_diag_pct(idle, win),
        cta_fmt_ns(b2, (double)(r->steady_from - ds->m->t0)), (unsigned long long)pr->tune_calls,
        cta_fmt_ns(b3, (double)pr->tune_ns), (unsigned long long)pr->tune_samples,
        (unsigned long long)pr->samples, (unsigned long long)r->trial_kernels);
    cta_diag_ev(x, "startup_ns", (double)(r->steady_from - dv->first_gpu), CTA_EV_NS);
    cta_diag_ev(x, "startup_idle_ns", (double)idle, CTA_EV_NS);
    cta_diag_ev(x, "host_ns", (double)r->idle_ns[CTA_GAP_HOST], CTA_EV_NS);
    cta_diag_ev(x, "autotune_syncs", (double)pr->tune_calls, CTA_EV_COUNT);
    cta_diag_ev(x, "autotune_sync_ns", (double)pr->tune_ns, CTA_EV_NS);
    cta_diag_ev(x, "autotune_samples", (double)pr->tune_samples, CTA_EV_COUNT);
    cta_diag_ev(x, "trial_kernels", (double)r->trial_kernels, CTA_EV_COUNT);
    cta_diag_at_span(x, d, dv->first_gpu, r->steady_from - dv->first_gpu);
}

const cta_diag_rule cta_diag_rule_startup_autotuning = {
    .id = "startup-autotuning", .per_device = 1, .where = -1, .startup = 1,
    .gap = 1 + CTA_GAP_HOST, .run = startup_autotuning};
