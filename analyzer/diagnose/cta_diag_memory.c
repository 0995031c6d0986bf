/* The rules of device memory (alloc-churn, oom), under the contract of cta_diag_int.h. */
#include "cta_diag_int.h"

#include <stdio.h>

#include "cta_out.h"

static const cta_fix FIX_CHURN = {
    "reuse device memory: allocate buffers once before the loop, or use cudaMallocAsync with a "
    "memory pool (cudaMemPoolSetAttribute release threshold); cudaFree synchronizes the device",
    "reuse device memory: keep PyTorch's caching allocator caching (avoid "
    "torch.cuda.empty_cache() in the loop), preallocate tensors reused each step; cudaFree "
    "synchronizes the device"};

/* alloc-churn: the GPU time lost while the host allocated and freed in the loop and then
 * launched the work the GPU waited for (cta_dev.idle_in_memcall) */
static void churn(cta_diags *ds, const cta_proc *p, int dev, uint64_t win)
{
    (void)dev;
    const cta_model *m = ds->m;
    char b1[32], b2[32];
    cta_diag *x;
    uint64_t churn_idle = 0;
    for (int k = 0; k < CTA_MAX_DEV; k++)
        churn_idle += p->dev[k].idle_in_memcall;
    if (p->churn_allocs &&
        (x = cta_diag_add(ds, p, -1, churn_idle, win, cta_fix_for(p, FIX_CHURN)))) {
        cta_diag_msg(x,
            "%llu device allocations re-made a size freed earlier and %llu of them were freed "
            "again; the host spent %s in those calls (each cudaFree synchronizes the device) and "
            "the GPU sat idle %s (%.1f%% of the window) in those calls and the launches after them, "
            "which reusing the memory saves",
            (unsigned long long)p->churn_allocs, (unsigned long long)p->churn_frees,
            cta_fmt_ns(b1, (double)p->churn_ns), cta_fmt_ns(b2, (double)churn_idle),
            cta_diag_pct(churn_idle, win));
        cta_diag_ev(x, "allocations", (double)p->churn_allocs, CTA_EV_COUNT);
        cta_diag_ev(x, "frees", (double)p->churn_frees, CTA_EV_COUNT);
        cta_diag_ev(x, "host_ns", (double)p->churn_ns, CTA_EV_NS);
        cta_diag_ev(x, "gpu_idle_in_alloc_calls_ns", (double)churn_idle, CTA_EV_NS);
        cta_diag_sites(m, p, CTA_SITE_CHURN, x);
        cta_diag_at_call(x, p, CTA_SITE_CHURN, -1);
    }
}

const cta_diag_rule cta_diag_rule_churn = {
    .id = "alloc-churn", .per_device = 0, .where = CTA_SITE_CHURN, .run = churn};

static const cta_fix FIX_OOM = {
    "reduce peak memory: smaller batches, free buffers no longer needed before allocating, "
    "reuse buffers; the holders below are the allocations live at the failure",
    "reduce peak memory: smaller batch, activation checkpointing, mixed precision, free "
    "references to tensors no longer needed; for fragmentation set "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. The caching allocator shows reserved "
    "segments, not individual tensors"};

/* oom: every failed allocation, with what held the memory */
static void oom(cta_diags *ds, const cta_proc *p, int dev, uint64_t win)
{
    (void)dev;
    const cta_model *m = ds->m;
    char b1[32], b2[32], b3[32], b4[32];
    cta_diag *x;
    for (int d = 0; d <= CTA_MAX_DEV; d++) {
        const cta_dev *dv = &p->dev[d];
        for (uint64_t i = 0; i < dv->nfails && i < CTA_MAX_FAILS; i++) {
            const cta_fail *f = &dv->fails[i];
            uint64_t w = win ? win : p->t_last - p->t_first;
            x = cta_diag_add(ds, p, d == CTA_HOST_DEV ? -1 : d, w, w, cta_fix_for(p, FIX_OOM));
            char where[32];
            if (d == CTA_HOST_DEV)
                snprintf(where, sizeof where, "pinned host memory");
            else
                snprintf(where, sizeof where, "GPU %d", d);
            uint64_t total = dv->have_prop ? dv->prop.mem_bytes : 0;
            cta_diag_msg(x,
                "allocation of %s on %s failed at +%s (error %u) with %s in use%s%s; %llu "
                "failed allocation%s in all",
                cta_fmt_bytes(b1, (double)f->requested), where, cta_fmt_ns(b2, (double)(f->time - m->t0)),
                f->result, cta_fmt_bytes(b3, (double)f->in_use), total ? " of " : "",
                total ? cta_fmt_bytes(b4, (double)total) : "", (unsigned long long)dv->nfails,
                dv->nfails == 1 ? "" : "s");
            cta_diag_ev(x, "requested_bytes", (double)f->requested, CTA_EV_BYTES);
            cta_diag_ev(x, "in_use_bytes", (double)f->in_use, CTA_EV_BYTES);
            if (total)
                cta_diag_ev(x, "device_bytes", (double)total, CTA_EV_BYTES);
            cta_diag_ev(x, "time_ns", (double)(f->time - m->t0), CTA_EV_NS);
            cta_diag_ev(x, "failed_allocations", (double)dv->nfails, CTA_EV_COUNT);
            cta_diag_at_span(x, d == CTA_HOST_DEV ? -1 : d, f->time, 0);
            if (f->stack) {
                char st[300], safe[300];
                cta_model_site_text(m, p, f->stack, st, sizeof st, 4);
                cta_diag_detail(x, "failing call: %s\n", cta_text_safe(safe, sizeof safe, st, 200));
            }
            cta_diag_holders(m, p, x, f->holders, f->nholders);
        }
    }
}

const cta_diag_rule cta_diag_rule_oom = {
    .id = "oom", .per_device = 0, .always = 1, .where = CTA_WHERE_OOM, .run = oom};
