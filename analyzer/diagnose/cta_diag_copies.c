/* The rules of copies from pageable memory (pageable-memcpy, async-memcpy-pageable), under the
 * contract of cta_diag_int.h. */
#include "cta_diag_int.h"

#include <stdio.h>

#include "cta_out.h"

static const cta_fix FIX_PAGEABLE = {
    "pin host buffers: allocate them with cudaHostAlloc / cudaMallocHost, or cudaHostRegister "
    "existing memory",
    "pin host buffers: DataLoader(pin_memory=True) and tensor.pin_memory() / .to(device, "
    "non_blocking=True)"};

/* pageable-memcpy: copies of pageable host memory, priced at their time less what they would
 * take pinned (cta_proc.pageable_recost_ns) */
static void pageable(cta_diags *ds, const cta_proc *p, int dev, uint64_t win)
{
    (void)dev;
    const cta_model *m = ds->m;
    char b1[32], b2[32], b3[32];
    cta_diag *x;
    if (p->pageable_count) {
        uint64_t saving = p->pageable_ns - p->pageable_recost_ns;
        if ((x = cta_diag_add(ds, p, -1, saving, win, cta_fix_for(p, FIX_PAGEABLE)))) {
            double got = p->pageable_ns ? (double)p->pageable_bytes / (double)p->pageable_ns : 0;
            double pin = p->pageable_recost_ns ? (double)p->pageable_bytes / (double)p->pageable_recost_ns : 0;
            cta_diag_msg(x,
                "%llu copies of pageable host memory (%s) took %s at %.2f GB/s; pinned they "
                "would run at %.2f GB/s (%s) and save %s (%.1f%% of the window)%s",
                (unsigned long long)p->pageable_count, cta_fmt_bytes(b1, (double)p->pageable_bytes),
                cta_fmt_ns(b2, (double)p->pageable_ns), got, pin,
                p->pinned_from == 1 ? "the host link's peak: no pinned copy was measured"
                : p->pinned_from == 2 ? "their own transfer after staging: no pinned copy or "
                                        "link peak is known"
                                      : "measured on the same device",
                cta_fmt_ns(b3, (double)saving), cta_diag_pct(saving, win),
                !p->pageable_async ? ""
                : p->pageable_async == p->pageable_count
                    ? ". These are the Async copies of async-memcpy-pageable: its saving, of the "
                      "same pinning, includes this one (do not add the two)"
                    : ". Some are the Async copies of async-memcpy-pageable: its saving, of the "
                      "same pinning, includes theirs (do not add the two)");
            cta_diag_ev(x, "async_copies", (double)p->pageable_async, CTA_EV_COUNT);
            cta_diag_ev(x, "copies", (double)p->pageable_count, CTA_EV_COUNT);
            cta_diag_ev(x, "bytes", (double)p->pageable_bytes, CTA_EV_BYTES);
            cta_diag_ev(x, "time_ns", (double)p->pageable_ns, CTA_EV_NS);
            cta_diag_ev(x, "achieved_gbps", got, CTA_EV_GBPS);
            cta_diag_ev(x, "pinned_gbps", pin, CTA_EV_GBPS);
            cta_diag_ev(x, "pinned_time_ns", (double)p->pageable_recost_ns, CTA_EV_NS);
            cta_diag_sites(m, p, CTA_SITE_PAGEABLE, x);
            cta_diag_fix_at_line(m, p, x, "the copy", "copies from pageable memory",
                                 cta_fix_for(p, FIX_PAGEABLE), 1);
            cta_diag_at_call(x, p, CTA_SITE_PAGEABLE, -1);
        }
    }
}

const cta_diag_rule cta_diag_rule_pageable = {
    .id = "pageable-memcpy", .per_device = 0, .where = CTA_SITE_PAGEABLE, .run = pageable};

static const cta_fix FIX_ASYNC_PAGEABLE = {
    "an Async copy from pageable memory is staged synchronously: pin the host buffer "
    "(cudaHostAlloc / cudaMallocHost, or cudaHostRegister) so the copy overlaps and the host is "
    "not blocked",
    "a non_blocking copy from pageable memory is staged synchronously: pin the host tensor "
    "(tensor.pin_memory(), DataLoader(pin_memory=True)) so the copy overlaps and the host is not "
    "blocked"};

/* async-memcpy-pageable: pinned, the host would not wait for these copies; the time it
 * waited for queued work ahead of them is not counted: a small readback followed by a
 * synchronization waits for the same kernels pinned or not (cta_model.h) */
static void async_pageable(cta_diags *ds, const cta_proc *p, int dev, uint64_t win)
{
    (void)dev;
    const cta_model *m = ds->m;
    char b1[32], b2[32], b3[32];
    cta_diag *x;
    uint64_t an = p->async_pageable_copy_ns;
    if (p->async_pageable_count &&
        (x = cta_diag_add(ds, p, -1, an, win, cta_fix_for(p, FIX_ASYNC_PAGEABLE)))) {
        cta_diag_msg(x,
            "%llu asynchronous copies (%s) used pageable memory, so they ran synchronously and "
            "blocked the host %s; pinned, they would return at once and run at the pinned "
            "bandwidth, saving %s (%.1f%% of the window%s). The rest of the blocked time waited "
            "for work queued before the copies, which a later synchronization waits for either way",
            (unsigned long long)p->async_pageable_count,
            cta_fmt_bytes(b1, (double)p->async_pageable_bytes),
            cta_fmt_ns(b2, (double)p->async_pageable_host_ns), cta_fmt_ns(b3, (double)an),
            cta_diag_pct(an, win),
            p->async_pageable_from_bw ? "; copies without GPU timing re-costed at the pinned bandwidth"
                                      : "; from their GPU intervals");
        cta_diag_ev(x, "copies", (double)p->async_pageable_count, CTA_EV_COUNT);
        cta_diag_ev(x, "bytes", (double)p->async_pageable_bytes, CTA_EV_BYTES);
        cta_diag_ev(x, "host_blocked_ns", (double)p->async_pageable_host_ns, CTA_EV_NS);
        cta_diag_ev(x, "copy_ns", (double)an, CTA_EV_NS);
        cta_diag_sites(m, p, CTA_SITE_ASYNC_PAGEABLE, x);
        cta_diag_fix_at_line(m, p, x, "the copy", "copies from pageable memory",
                             cta_fix_for(p, FIX_ASYNC_PAGEABLE), 1);
        cta_diag_at_call(x, p, CTA_SITE_ASYNC_PAGEABLE, -1);
    }
}

const cta_diag_rule cta_diag_rule_async_pageable = {
    .id = "async-memcpy-pageable", .per_device = 0, .where = CTA_SITE_ASYNC_PAGEABLE,
    .run = async_pageable};
