/* The diagnoses' driver (cta_diag_int.h): the rules in the order they run, each run on every
 * process (a per-device rule on each device with timed GPU work, over its steady state but a
 * start-up rule), the NVTX range of each finding, and the findings ordered by estimated saving,
 * the steady state's first. */
#include "cta_diag_int.h"

#include <stdlib.h>
#include <string.h>

#include "cta_startup.h"

/* The rules in the order they run: the findings are sorted by saving and id after, and this
 * order decides among equal ones. */
static const cta_diag_rule *const rules[] = {
    /* per device */
    &cta_diag_rule_starvation,
    &cta_diag_rule_excessive_sync,
    &cta_diag_rule_sync_memcpy,
    &cta_diag_rule_launch_bound,
    &cta_diag_rule_gpu_gaps,
    &cta_diag_rule_low_utilization,
    &cta_diag_rule_startup_autotuning,
    /* per process */
    &cta_diag_rule_reinstantiation,
    &cta_diag_rule_pageable,
    &cta_diag_rule_async_pageable,
    &cta_diag_rule_churn,
    &cta_diag_rule_oom,
};
#define NRULES (sizeof rules / sizeof *rules)

/* The process's window: the longest of its devices' (first to last GPU activity). */
static uint64_t proc_window(const cta_proc *p)
{
    uint64_t w = 0;
    for (int d = 0; d < CTA_MAX_DEV; d++)
        if (cta_dev_window(&p->dev[d]) > w)
            w = cta_dev_window(&p->dev[d]);
    return w;
}

static void proc_diagnoses(cta_diags *ds, const cta_proc *p)
{
    /* the per-device rules see each device from its steady state on (cta_startup_steady); their
     * findings are of p */
    cta_proc *steady = cta_xmalloc(sizeof *steady, "the steady state's view");
    *steady = *p;
    for (int d = 0; d < CTA_MAX_DEV; d++) {
        const cta_dev *dv = &p->dev[d];
        uint64_t win = cta_dev_window(dv);
        /* with operations untimed the idle gaps include their GPU time: nothing can be drawn */
        if (!win || cta_dev_untimed(dv))
            continue;
        int apart = cta_startup_steady(p, d, &steady->dev[d]);
        size_t first = ds->n;
        ds->whole = win;
        for (size_t r = 0; r < NRULES; r++)
            if (rules[r]->per_device) {
                const cta_proc *v = apart && !rules[r]->startup ? steady : p;
                size_t n0 = ds->n;
                ds->rule = rules[r];
                rules[r]->run(ds, v, d, cta_dev_window(&v->dev[d]));
                for (size_t i = n0; i < ds->n; i++) {
                    ds->v[i].startup = rules[r]->startup;
                    ds->v[i].span = cta_startup_span(p, d, rules[r]->startup);
                }
            }
        /* (low-gpu-utilization counts what the device's steady findings claimed by their proc) */
        for (size_t i = first; i < ds->n; i++)
            ds->v[i].proc = p;
    }
    free(steady);
    ds->whole = 0;
    uint64_t win = proc_window(p);
    for (size_t r = 0; r < NRULES; r++)
        if (!rules[r]->per_device) {
            size_t n0 = ds->n;
            ds->rule = rules[r];
            rules[r]->run(ds, p, -1, win);
            for (size_t i = n0; i < ds->n; i++)
                ds->v[i].span = CTA_SPAN_ALL;
        }
}

static int by_saving(const void *a, const void *b)
{
    const cta_diag *x = a, *y = b;
    int ex = !strcmp(x->severity, "error"), ey = !strcmp(y->severity, "error");
    if (ex != ey)
        return ey - ex; /* a death comes first */
    if (x->startup != y->startup)
        return x->startup - y->startup; /* then the steady state's */
    return x->saving_ns < y->saving_ns ? 1 : x->saving_ns > y->saving_ns ? -1 : strcmp(x->id, y->id);
}

int cta_diagnose(const cta_model *m, const cta_diag_opts *o, cta_diag **out)
{
    cta_diags ds = {.m = m, .o = o};
    for (size_t i = 0; i < m->nprocs; i++)
        proc_diagnoses(&ds, &m->procs[i]);
    for (size_t i = 0; i < ds.n; i++)
        for (size_t r = 0; r < NRULES; r++)
            if (!strcmp(ds.v[i].id, rules[r]->id) && rules[r]->where >= 0)
                ds.v[i].in_range = cta_nvtx_where_text(m, ds.v[i].proc, rules[r]->where,
                                                       &ds.v[i].range);
    if (ds.n)
        qsort(ds.v, ds.n, sizeof *ds.v, by_saving);
    *out = ds.v;
    return (int)ds.n;
}
