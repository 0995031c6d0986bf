/* The rules of the host waiting for the GPU (excessive-sync, sync-memcpy), under the contract of
 * cta_diag_int.h. */
#include "cta_diag_int.h"

#include <stdio.h>

#include "cta_out.h"

static const cta_fix FIX_SYNC = {
    "remove synchronizations that are not needed (cudaDeviceSynchronize / cudaStreamSynchronize "
    "inside the loop); wait on events for the data you need (cudaEventRecord + "
    "cudaStreamWaitEvent, or cudaEventSynchronize on the host)",
    "remove synchronizations that are not needed (torch.cuda.synchronize(), .item(), .cpu(), "
    "printing tensors); order streams with torch.cuda.Event and stream.wait_event instead"};

/* excessive-sync: synchronizations, priced at the GPU's idle time after them that is theirs
 * (the time of cause CTA_GAP_SYNC): of each gap after one, at most the time they blocked the
 * host (the sweep's gap_commit), since without them the host runs ahead by that much and no
 * more; what it does after they return is host work (a GAN's cuDNN autotuning after a sync
 * was priced at 38 s for 0.3 s blocked). A program that times itself with events (it asks for
 * the time between two: cudaEventElapsedTime) synchronizes on them to read the time, as
 * NVIDIA's samples do: those event synchronizations are not defects, and their share is left
 * out (simpleMultiCopy's was 65% of its window, the fix the call it flagged). */
static void excessive_sync(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_model *m = ds->m;
    const cta_dev *dv = &p->dev[d];
    char b1[32], b2[32];
    cta_diag *x;
    uint64_t timing = p->event_timings ? dv->sync_event_owed : 0;
    uint64_t yn = dv->gap_ns[CTA_GAP_SYNC] - (timing < dv->gap_ns[CTA_GAP_SYNC] ? timing : dv->gap_ns[CTA_GAP_SYNC]);
    if (p->sync_calls && (x = cta_diag_add(ds, p, d, yn, win, cta_fix_for(p, FIX_SYNC)))) {
        char timed[200] = "";
        if (timing)
            snprintf(timed, sizeof timed,
                     "; not counted: %s after event synchronizations, which a program that times "
                     "itself with events (%llu cudaEventElapsedTime) needs",
                     cta_fmt_ns((char[32]){0}, (double)timing), (unsigned long long)p->event_timings);
        cta_diag_msg(x,
            "%llu synchronizations blocked the host %s; GPU %d sat idle %s (%.1f%% of the "
            "window) after them for want of the work the host would have queued meanwhile (of "
            "each gap after one, up to the time they blocked; the rest is the host's own work)%s",
            (unsigned long long)p->sync_calls, cta_fmt_ns(b1, (double)p->sync_ns), d,
            cta_fmt_ns(b2, (double)yn), cta_diag_pct(yn, win), timed);
        cta_diag_ev(x, "sync_calls", (double)p->sync_calls, CTA_EV_COUNT);
        cta_diag_ev(x, "device_syncs",
                    (double)p->sync_count_kind[CT_SYNC_DEVICE] +
                        (double)p->sync_count_kind[CT_SYNC_CONTEXT],
                    CTA_EV_COUNT);
        cta_diag_ev(x, "stream_syncs", (double)p->sync_count_kind[CT_SYNC_STREAM], CTA_EV_COUNT);
        cta_diag_ev(x, "event_syncs", (double)p->sync_count_kind[CT_SYNC_EVENT], CTA_EV_COUNT);
        cta_diag_ev(x, "host_blocked_ns", (double)p->sync_ns, CTA_EV_NS);
        cta_diag_ev(x, "idle_after_sync_ns", (double)yn, CTA_EV_NS);
        cta_diag_ev(x, "idle_after_timing_syncs_ns", (double)timing, CTA_EV_NS);
        cta_diag_ev(x, "gaps_after_sync", (double)dv->gap_count[CTA_GAP_SYNC], CTA_EV_COUNT);
        cta_diag_sites(m, p, CTA_SITE_SYNC, x);
        cta_diag_fix_at_line(m, p, x, "the synchronization", "waits for the GPU",
                             cta_fix_for(p, FIX_SYNC), 0);
        cta_diag_at_gap(x, p, d, CTA_GAP_SYNC, NULL, CTA_SITE_SYNC);
    }
}

const cta_diag_rule cta_diag_rule_excessive_sync = {
    .id = "excessive-sync", .per_device = 1, .where = CTA_SITE_SYNC, .gap = 1 + CTA_GAP_SYNC,
    .run = excessive_sync};

static const cta_fix FIX_SYNC_COPY = {
    "avoid blocking copies inside the loop: keep values on the GPU and read them every N steps; "
    "use cudaMemcpyAsync into pinned memory and an event (cudaEventRecord, cudaEventSynchronize "
    "later) to read results when they are needed",
    "avoid blocking copies inside the loop: keep values on the GPU (accumulate the loss in a "
    "GPU tensor and call loss.item() every N steps); copy with .to('cpu', non_blocking=True) "
    "into pinned memory and wait on a torch.cuda.Event only when the value is needed"};

/* sync-memcpy: without it the host would have run ahead instead of waiting. The fix, the
 * copy queued and read later, saves the idle time after the copies that is theirs (of each gap
 * after one, at most the time they blocked the host: the sweep's gap_commit) and, in the latency-bound
 * copies' intervals (bounds: they end at the call's return), the host's wake-up: what they
 * hold beyond a small copy timed exactly, else beyond the fastest of them (cta_proc.scp_ns) */
static void sync_memcpy(cta_diags *ds, const cta_proc *p, int d, uint64_t win)
{
    const cta_model *m = ds->m;
    const cta_dev *dv = &p->dev[d];
    char b1[32], b2[32], b3[32];
    cta_diag *x;
    uint64_t cn = dv->gap_ns[CTA_GAP_SYNCCPY], wake = 0;
    for (int dir = 0; dir < 2; dir++) {
        uint64_t copy = p->scp_min[d][dir];
        if (p->small_exact_n[d][dir] && p->small_exact_min[d][dir] < copy)
            copy = p->small_exact_min[d][dir];
        wake += p->scp_ns[d][dir] - p->scp_n[d][dir] * copy;
    }
    if (p->sync_copy_count &&
        (x = cta_diag_add(ds, p, d, cn + wake, win, cta_fix_for(p, FIX_SYNC_COPY)))) {
        cta_diag_msg(x,
            "%llu synchronous copies (%s) blocked the host %s (%.1f%% of the window); GPU %d sat "
            "idle %s after them for want of the work the host would have queued meanwhile (of "
            "each gap after one, up to the time they blocked) and %s while the host woke from the "
            "small ones (their time beyond what such a copy takes): queued and read later, they "
            "save %s",
            (unsigned long long)p->sync_copy_count, cta_fmt_bytes(b1, (double)p->sync_copy_bytes),
            cta_fmt_ns(b2, (double)p->sync_copy_host_ns), cta_diag_pct(p->sync_copy_host_ns, win),
            d,
            cta_fmt_ns(b3, (double)cn), cta_fmt_ns((char[32]){0}, (double)wake),
            cta_fmt_ns((char[32]){0}, (double)(cn + wake)));
        cta_diag_ev(x, "idle_in_wakeup_ns", (double)wake, CTA_EV_NS);
        cta_diag_ev(x, "copies", (double)p->sync_copy_count, CTA_EV_COUNT);
        cta_diag_ev(x, "bytes", (double)p->sync_copy_bytes, CTA_EV_BYTES);
        cta_diag_ev(x, "host_blocked_ns", (double)p->sync_copy_host_ns, CTA_EV_NS);
        cta_diag_ev(x, "idle_after_copy_ns", (double)cn, CTA_EV_NS);
        cta_diag_sites(m, p, CTA_SITE_SYNC_COPY, x);
        cta_diag_fix_at_line(m, p, x, "the blocking copy", "waits for the GPU",
                             cta_fix_for(p, FIX_SYNC_COPY), 0);
        cta_diag_at_gap(x, p, d, CTA_GAP_SYNCCPY, NULL, CTA_SITE_SYNC_COPY);
    }
}

const cta_diag_rule cta_diag_rule_sync_memcpy = {
    .id = "sync-memcpy", .per_device = 1, .where = CTA_SITE_SYNC_COPY,
    .gap = 1 + CTA_GAP_SYNCCPY, .run = sync_memcpy};
