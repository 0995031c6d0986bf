/* The diagnoses' internals, shared by the files of the cta_diag module (cta_diag.h says what a
 * diagnosis is):
 * - cta_diag.c, the driver: walks the rule table for each process (and each of its devices),
 *   finds the NVTX range of each finding and orders the findings;
 * - the rules, one function each with its evidence, saving and fix, in files by topic:
 *   cta_diag_loading.c (dataloader-starvation), cta_diag_sync.c (excessive-sync, sync-memcpy),
 *   cta_diag_launch.c (launch-bound, graph-reinstantiation), cta_diag_idle.c (gpu-gaps,
 *   low-gpu-utilization), cta_diag_copies.c (pageable-memcpy, async-memcpy-pageable),
 *   cta_diag_memory.c (alloc-churn, oom), cta_diag_startup.c (startup-autotuning);
 * - cta_diag_build.c, what the rules share to build a finding: the threshold, evidence, where it
 *   happened, the call sites and their rendering, the fix naming the user's lines.
 * The driver calls the rules (through the table) and the rules call the shared helpers, never
 * the other way.
 *
 * The rule contract. Inputs: the finished model (ds->m), the options (ds->o), one process and,
 * for a per-device rule, one of its devices whose GPU work is timed and has a window (the
 * driver skips the others: with operations untimed the idle gaps include their GPU time, and
 * nothing can be drawn); `win`, the window its saving is a share of (the device's, first to
 * last GPU activity; for a per-process rule the process's, its longest device's). A rule reads
 * the model only. Output: findings of its id, each made by cta_diag_add with the time the fix
 * would save, estimated from the trace (NULL: under the threshold, not reported), then its
 * message, evidence, call sites, where it happened and detail lines; a rule may make several
 * (oom: one per failed allocation). Adding a rule: its function and its cta_diag_rule in the
 * file of its topic, declared below, and a line in the table of cta_diag.c (the order the rules
 * run in, which decides among findings of equal saving and id: keep it). */
#ifndef CTA_DIAG_INT_H
#define CTA_DIAG_INT_H

#include "cta_diag.h"
#include "cta_names.h"

typedef struct cta_diag_rule cta_diag_rule;

/* The findings so far, and the rule running (its id names what cta_diag_add makes). */
typedef struct {
    const cta_model *m;
    const cta_diag_opts *o;
    const cta_diag_rule *rule;
    /* the window min_saving_pct is of, when longer than the one a rule passes: the device's
     * whole one for a rule run on its steady state (a steady window shorter by the start-up made
     * one synchronization per step, its host woken ~70 us late, a finding) */
    uint64_t whole;
    cta_diag *v;
    size_t n, cap;
} cta_diags;

struct cta_diag_rule {
    const char *id;
    int per_device;               /* run for each device (else once per process) */
    int always;                   /* reported whatever its saving, severity "error" (a failed
                                   * allocation): first in the list */
    int where;                    /* the events it is drawn from, for the NVTX range they happened
                                   * in (cta_nvtx_where_text's kind); -1: none */
    int gap;                      /* 1 + the cause (CTA_GAP_*) of the idle time it is drawn from,
                                   * whose host activity its output shows; 0: none */
    int startup;                  /* of the start-up: run on the device's whole record (the
                                   * others per device on its steady state), its findings apart */
    void (*run)(cta_diags *ds, const cta_proc *p, int dev, uint64_t win); /* dev -1: per process */
};

/* The rules, in the table's order (cta_diag.c). */
extern const cta_diag_rule cta_diag_rule_starvation, cta_diag_rule_excessive_sync,
    cta_diag_rule_sync_memcpy, cta_diag_rule_launch_bound, cta_diag_rule_gpu_gaps,
    cta_diag_rule_low_utilization, cta_diag_rule_reinstantiation, cta_diag_rule_pageable,
    cta_diag_rule_async_pageable, cta_diag_rule_churn, cta_diag_rule_oom,
    cta_diag_rule_startup_autotuning;

/* Each fix in the program's own terms: PyTorch's where the process had PyTorch's CUDA library
 * loaded (cta_proc.torch, from the trace header), CUDA's otherwise. */
typedef struct {
    const char *cuda, *torch;
} cta_fix;

/* torch NULL: the same words for both */
static inline const char *cta_fix_for(const cta_proc *p, cta_fix f)
{
    return p->torch && f.torch ? f.torch : f.cuda;
}

static inline double cta_diag_pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

/* A new finding of the running rule on device dev (-1: the process as a whole), or NULL when its
 * saving is under --min-saving's share of window (never for an `always` rule); severity by that
 * share. */
cta_diag *cta_diag_add(cta_diags *ds, const cta_proc *p, int dev, uint64_t saving, uint64_t window,
                       const char *fix);

/* A finding's saving changed after it was made (a rule moving idle time from one cause to
 * another it is owed to), its severity with it; never an "error" finding's. */
void cta_diag_reprice(cta_diag *d, uint64_t saving);
/* Evidence beyond CTA_DIAG_MAX_EV is dropped. */
void cta_diag_ev(cta_diag *d, const char *key, double v, cta_ev_unit u);
void cta_diag_msg(cta_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends to the detail lines, as far as they hold. */
void cta_diag_detail(cta_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* x happened in [start, start + len) on device dev (-1 none). */
void cta_diag_at_span(cta_diag *x, int dev, uint64_t start, uint64_t len);
/* x happened at the longest event of site kind `kind` (on the device it names, else dev). */
void cta_diag_at_call(cta_diag *x, const cta_proc *p, int kind, int dev);
/* x happened at device d's longest gap of cause cls (cta_dev.top keeps the longest gaps, longest
 * first), preferring one whose length class (cta_sketch_bucket) is in band[0..1] (band NULL: any);
 * when none of them has that cause, at the longest event of site kind `kind` (-1: none). */
void cta_diag_at_gap(cta_diag *x, const cta_proc *p, int d, int cls, const unsigned *band,
                     int kind);

/* Top call sites of one kind (CTA_SITE_*), by time, as d's sites: the function called and the
 * user's frames that called it (the API name alone where no stack was captured). */
void cta_diag_sites(const cta_model *m, const cta_proc *p, int kind, cta_diag *d);
/* The allocations live at a failure (n holders) as d's sites. */
void cta_diag_holders(const cta_model *m, const cta_proc *p, cta_diag *d, const cta_holder *h,
                      int n);
/* The fix of x names the Python lines of its sites (in their order, most time first): "WHO at
 * FILE:LINE in FUNCTION DOES (N calls); ...: FIX", WHO the PyTorch method the site's native frames
 * show (cta_model_torch_op: only when PyTorch is loaded, never guessed), else `what`; a hidden
 * synchronization (.item(), formatting a GPU tensor) outside a pageable rule is followed by what
 * to do instead ("... (N calls) - instead, ..."). When one is
 * a pageable copy made by .cuda() or .to() (pageable set), FIX is the first such method's own
 * non_blocking advice (pinning, which it starts with, is the advice for the others too); else
 * `advice`. Without a Python line the fix stays as made. */
void cta_diag_fix_at_line(const cta_model *m, const cta_proc *p, cta_diag *x, const char *what,
                          const char *does, const char *advice, int pageable);
/* The names of c's causes, comma-separated, into buf. */
void cta_diag_cause_names(const cta_starve_cause *c, char *buf, size_t n);

#endif
