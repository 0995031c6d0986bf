/* The diagnoses in the summary, text and JSON (cta_diag_report.h). */
#include "cta_diag_report.h"

#include <string.h>

#include "cta_report_common.h"

void cta_diag_report_text(FILE *f, const cta_model *m, const cta_diag *dg, int n, double min_saving_pct)
{
    for (size_t i = 0; i < m->nprocs; i++)
        for (int d = 0; d < CTA_MAX_DEV; d++)
            if (cta_dev_untimed(&m->procs[i].dev[d]))
                fprintf(f, "  pid %u GPU %d: the findings drawn from GPU idle gaps need every GPU "
                           "interval and are not made (see the breakdown)\n", m->procs[i].pid, d);
    if (!n)
        fprintf(f, "  none above %.1f%% of the window\n", min_saving_pct);
    for (int i = 0; i < n; i++) {
        const cta_diag *d = &dg[i];
        char b[32], safe[700];
        fprintf(f, "  [%s] %s%s", d->severity, d->id, d->startup ? " (start-up)" : "");
        if (m->nprocs > 1 && d->proc->rank >= 0)
            fprintf(f, " (pid %u, rank %d)", d->proc->pid, d->proc->rank);
        else if (m->nprocs > 1)
            fprintf(f, " (pid %u)", d->proc->pid);
        if (!strcmp(d->id, "oom"))
            fprintf(f, ": the run failed\n");
        else
            fprintf(f, ": saves ~%s (%.1f%% of the window)\n", cta_fmt_ns(b, (double)d->saving_ns),
                    d->window_ns ? 100.0 * (double)d->saving_ns / (double)d->window_ns : 0);
        fprintf(f, "    %s\n", cta_text_safe(safe, sizeof safe, d->message, 0));
        if (d->detail[0]) {
            const char *s = d->detail;
            while (*s) {
                const char *e = strchr(s, '\n');
                size_t len = e ? (size_t)(e - s) : strlen(s);
                fprintf(f, "    %.*s\n", (int)len, s);
                s += len + (e != NULL);
            }
        }
        if (d->gap && d->dev >= 0)
            cta_feature_gap_text(f, m, d->proc, d->dev, d->gap - 1, d->span, "    ");
        if (d->in_range)
            fprintf(f, "    %s\n", d->range.text);
        if (d->nsites) {
            fprintf(f, "    where:\n");
            for (int k = 0; k < d->nsites; k++)
                fprintf(f, "      %s\n", d->sites[k].text);
        }
        fprintf(f, "    fix: %s\n", d->fix);
    }
}

static const char *const unit_names[] = {"count", "ns", "bytes", "pct", "gbps", "ratio"};

/* dataloader-starvation's and gpu-gaps' "cause" (JSON.md): present only with host samples in
 * the gaps. */
static void json_cause(cta_json *j, const cta_starve_cause *c)
{
    cta_json_key(j, "cause");
    cta_json_obj(j);
    cta_json_key(j, "causes");
    cta_json_arr(j);
    for (int k = 0; k < CTA_CAUSE_N; k++)
        if (c->causes & (1 << k))
            cta_json_str(j, cta_cause_names[k]);
    cta_json_end_arr(j);
    CTA_JK_U64(j, "gaps", c->gaps);
    CTA_JK_U64(j, "gap_ns", c->gap_ns);
    CTA_JK_U64(j, "covered_gap_ns", c->covered_ns);
    CTA_JK_U64(j, "cpus", c->cpus);
    CTA_JK_U64(j, "machine_cpus", c->machine_cpus);
    CTA_JK_NUM_IF(j, "cpu_limit_cores", c->limit_cores > 0, c->limit_cores);
    CTA_JK_NUM(j, "throttled_share", c->throttled_share);
    CTA_JK_NUM(j, "busy_cores", c->busy_cores);
    CTA_JK_NUM(j, "free_cores", c->free_cores);
    CTA_JK_NUM(j, "outside_tree_cores", c->outside_cores);
    CTA_JK_U64(j, "workers", c->workers);
    CTA_JK_U64(j, "active_workers", c->active_workers);
    CTA_JK_NUM(j, "worker_cpu_cores", c->worker_cpu_cores);
    CTA_JK_NUM(j, "worker_runqueue_wait_cores", c->worker_wait_cores);
    CTA_JK_NUM(j, "worker_iowait_share", c->worker_d_share);
    CTA_JK_NUM(j, "worker_read_bps", c->worker_read_bps);
    CTA_JK_NUM(j, "main_cpu_cores", c->main_cpu_cores);
    CTA_JK_NUM(j, "main_runqueue_wait_cores", c->main_wait_cores);
    CTA_JK_NUM(j, "main_iowait_share", c->main_d_share);
    CTA_JK_NUM(j, "main_read_bps", c->main_read_bps);
    CTA_JK_NUM(j, "main_compute_share", c->main_compute_share);
    CTA_JK_NUM(j, "main_cpu_per_gap_ns", c->main_cpu_per_gap_ns);
    CTA_JK_NUM(j, "iowait_cores", c->iowait_cores);
    CTA_JK_NUM(j, "psi_cpu_share", c->psi_cpu);
    CTA_JK_NUM(j, "psi_io_share", c->psi_io);
    CTA_JK_NUM(j, "psi_memory_share", c->psi_mem);
    CTA_JK_NUM(j, "swap_pages_per_s", c->swap_pages_s);
    CTA_JK_NUM(j, "major_faults_per_s", c->majflt_s);
    CTA_JK_STR(j, "told_by", c->by_main ? "main" : "workers");
    CTA_JK_NUM(j, "worker_cpu_per_batch_ns", c->worker_cpu_per_batch_ns);
    CTA_JK_NUM(j, "gpu_step_ns", c->gpu_step_ns);
    CTA_JK_NUM(j, "loop_step_ns", c->step_ns);
    CTA_JK_U64(j, "workers_recommended", (uint64_t)c->workers_recommended);
    CTA_JK_U64(j, "estimated_saving_ns", c->saving_ns);
    cta_json_end_obj(j);
}

/* "at": where the finding happened, on the common axis (null: no single place). */
static void json_at(cta_json *j, const cta_model *m, const cta_diag *d)
{
    cta_json_key(j, "at");
    if (!d->at.set) {
        cta_json_null(j);
        return;
    }
    cta_json_obj(j);
    CTA_JK_U64(j, "pid", d->proc->pid);
    cta_json_key(j, "device");
    if (d->at.dev >= 0)
        cta_json_i64(j, d->at.dev);
    else
        cta_json_null(j);
    CTA_JK_U64(j, "start_ns", d->at.start - m->t0);
    CTA_JK_U64(j, "end_ns", d->at.end - m->t0);
    cta_json_end_obj(j);
}

void cta_diag_report_json(cta_json *j, const cta_model *m, const cta_diag *dg, int n)
{
    cta_json_key(j, "diagnoses");
    cta_json_arr(j);
    for (int i = 0; i < n; i++) {
        const cta_diag *d = &dg[i];
        cta_json_obj(j);
        CTA_JK_STR(j, "id", d->id);
        CTA_JK_STR(j, "severity", d->severity);
        CTA_JK_STR(j, "phase", d->startup ? "startup" : "steady");
        CTA_JK_U64(j, "pid", d->proc->pid);
        cta_json_key(j, "rank");
        if (d->proc->rank >= 0)
            cta_json_i64(j, d->proc->rank);
        else
            cta_json_null(j);
        cta_json_key(j, "device");
        if (d->dev >= 0)
            cta_json_i64(j, d->dev);
        else
            cta_json_null(j);
        CTA_JK_STR(j, "message", d->message);
        CTA_JK_U64(j, "estimated_saving_ns", d->saving_ns);
        CTA_JK_U64(j, "window_ns", d->window_ns);
        CTA_JK_NUM(j, "saving_pct", d->window_ns ? 100.0 * (double)d->saving_ns / (double)d->window_ns : 0);
        json_at(j, m, d);
        cta_json_key(j, "evidence");
        cta_json_obj(j);
        for (int k = 0; k < d->nev; k++)
            CTA_JK_NUM(j, d->ev[k].key, d->ev[k].value);
        cta_json_end_obj(j);
        cta_json_key(j, "evidence_units");
        cta_json_obj(j);
        for (int k = 0; k < d->nev; k++)
            CTA_JK_STR(j, d->ev[k].key, unit_names[d->ev[k].unit]);
        cta_json_end_obj(j);
        cta_json_key(j, "nvtx");
        if (d->in_range) {
            cta_json_obj(j);
            CTA_JK_STR(j, "range", d->range.range);
            CTA_JK_NUM(j, "share_pct", 100.0 * d->range.share);
            cta_json_key(j, "repeating");
            if (d->range.outer[0]) {
                cta_json_obj(j);
                CTA_JK_STR(j, "range", d->range.outer);
                CTA_JK_U64(j, "first", d->range.first);
                CTA_JK_U64(j, "last", d->range.last);
                cta_json_end_obj(j);
            } else {
                cta_json_null(j);
            }
            CTA_JK_STR(j, "text", d->range.text);
            cta_json_end_obj(j);
        } else {
            cta_json_null(j);
        }
        cta_json_key(j, "call_sites");
        cta_json_arr(j);
        for (int k = 0; k < d->nsites; k++)
            cta_json_str(j, d->sites[k].text);
        cta_json_end_arr(j);
        cta_json_key(j, "sites");
        cta_json_arr(j);
        for (int k = 0; k < d->nsites; k++) {
            const cta_diag_site *st = &d->sites[k];
            cta_json_obj(j);
            CTA_JK_STR(j, "call", st->call);
            CTA_JK_STR(j, "stack", st->stack);
            CTA_JK_U64(j, "count", st->count);
            CTA_JK_U64(j, "bytes", st->bytes);
            CTA_JK_U64(j, "total_ns", st->ns);
            cta_report_json_stacks(j, m, d->proc, &st->stacks);
            cta_json_end_obj(j);
        }
        cta_json_end_arr(j);
        CTA_JK_STR(j, "detail", d->detail);
        if (d->cause.known)
            json_cause(j, &d->cause);
        if (d->gap && d->dev >= 0)
            cta_feature_gap_json(j, m, d->proc, d->dev, d->gap - 1, d->span);
        CTA_JK_STR(j, "fix", d->fix);
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
}
