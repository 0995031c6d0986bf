/* The start-up feature (cta_startup.h) assembled: its hooks (cta_startup.c) and its sections of
 * the summary, the text after the breakdown ("== Start-up and steady state ==") and JSON
 * "startup". */
#include "cta_startup.h"

#include <stdio.h>

#include "cta_out.h"

const char *const cta_startup_lib_names[CTA_STARTUP_LIBS] = {"cuBLAS", "cuDNN"};

/* Whether library l's loading is the start-up's: seen in use before the steady state, after
 * CUDA's first call (one only mapped with the program, its loading timed by no call: cuDNN's
 * libcudnn.so.9 that PyTorch links, in a program with no convolution). */
static int lib_in_startup(const cta_startup_proc *r, int l)
{
    return r->steady_from && r->lib[l].seen && r->lib[l].seen < r->steady_from &&
           !r->lib[l].before_cuda;
}

/* Device d of p's start-up when the summary shows it: p had GPU operations there and a window
 * (NULL otherwise). */
static const cta_startup_dev *shown(const cta_proc *p, int d)
{
    const cta_startup_dev *r = cta_startup_of(p, d);
    return r && cta_dev_window(&p->dev[d]) ? r : NULL;
}

static void su_text(FILE *f, const cta_model *m, int top)
{
    (void)top;
    int any = 0;
    char b1[32], b2[32], b3[32];
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        const cta_startup_proc *sp = cta_startup_proc_of(p); /* not NULL where a device is shown */
        for (int d = 0; d < CTA_MAX_DEV; d++) {
            const cta_startup_dev *r = shown(p, d);
            const cta_dev *dv = &p->dev[d];
            if (!r)
                continue;
            /* a loop from its first GPU work has nothing to set apart (the JSON says so) */
            if (r->found && !r->steady_from)
                continue;
            if (!any++)
                fputs("\n== Start-up and steady state ==\n", f);
            if (!r->found) {
                fprintf(f, "  pid %u GPU %d: no repeating iteration in its %llu GPU operations: the "
                        "whole run is taken as steady\n", p->pid, d, (unsigned long long)r->ops);
                continue;
            }
            uint64_t su = r->steady_from - dv->first_gpu, idle = 0;
            for (int c = 0; c < CTA_GAP_N; c++)
                idle += r->idle_ns[c];
            char how[160];
            if (r->found == CTA_STARTUP_NVTX)
                snprintf(how, sizeof how, "its first typical instance of the NVTX range '%s', %llu "
                         "instances from it on", sp->nvtx_range, (unsigned long long)r->repeats);
            else
                snprintf(how, sizeof how, "an iteration of %u GPU operations, %llu times, found in "
                         "the sequence of kernels and copies", r->period,
                         (unsigned long long)r->repeats);
            fprintf(f, "  pid %u GPU %d: steady state from +%s (%s); start-up %s (%.1f%% of the "
                    "window), GPU idle %s of it; the diagnoses below are of the steady state but "
                    "those marked start-up\n",
                    p->pid, d, cta_fmt_ns(b1, (double)(r->steady_from - m->t0)), how,
                    cta_fmt_ns(b2, (double)su),
                    cta_dev_window(dv) ? 100.0 * (double)su / (double)cta_dev_window(dv) : 0,
                    cta_fmt_ns(b3, (double)idle));
            for (int c = 0, first = 1; c < CTA_GAP_N; c++)
                if (r->idle_ns[c]) {
                    fprintf(f, "%s %s %s", first ? "    idle in start-up by cause:" : ",",
                            cta_gap_names[c], cta_fmt_ns(b1, (double)r->idle_ns[c]));
                    first = 0;
                }
            if (idle)
                fputc('\n', f);
            if (r->trial_kernels)
                fprintf(f, "    %llu kernels run %llu times in start-up that the steady state never "
                        "runs (trials of an algorithm search, one-time set-up)\n",
                        (unsigned long long)r->trial_kernels, (unsigned long long)r->trial_runs);
        }
        const cta_startup_proc *r = sp;
        if (!any || !r)
            continue;
        if (r->first_call && r->init_end >= r->first_call)
            fprintf(f, "  pid %u: CUDA init %s (the first CUDA call to the context made)\n", p->pid,
                    cta_fmt_ns(b1, (double)(r->init_end - r->first_call)));
        if (!r->steady_from)
            continue;
        if (r->lib_calls)
            fprintf(f, "  pid %u: library loading: %llu calls (handles made, modules loaded), %s "
                    "in them\n", p->pid, (unsigned long long)r->lib_calls,
                    cta_fmt_ns(b1, (double)r->lib_ns));
        for (int l = 0; l < CTA_STARTUP_LIBS; l++) {
            const cta_startup_lib *x = &r->lib[l];
            if (!lib_in_startup(r, l))
                continue;
            char objs[48] = "";
            if (x->objects)
                snprintf(objs, sizeof objs, " (%u of its libraries mapped)", x->objects);
            fprintf(f, "  pid %u: library loading: %s in use from +%s%s", p->pid,
                    cta_startup_lib_names[l], cta_fmt_ns(b1, (double)(x->seen - m->t0)), objs);
            if (x->first_call)
                fprintf(f, "; the host %s on that thread before %s (loading, its handle "
                        "made)\n", cta_fmt_ns(b2, (double)x->host_ns),
                        l == CTA_LIB_CUDNN ? "the first CUDA calls of its libraries' code"
                                           : "its first call");
            else
                fputc('\n', f);
        }
        if (r->alloc_calls)
            fprintf(f, "  pid %u: first allocations: %llu before the steady state, %s in them\n",
                    p->pid, (unsigned long long)r->alloc_calls, cta_fmt_ns(b1, (double)r->alloc_ns));
        if (r->tune_calls)
            fprintf(f, "  pid %u: autotuning: %llu synchronizations in an algorithm search "
                    "(cuDNN's: cudnnFind, time_sorted_plan) from +%s to +%s, blocked %s; %llu of "
                    "%llu thread samples of the start-up in it\n", p->pid,
                    (unsigned long long)r->tune_calls,
                    cta_fmt_ns(b1, (double)(r->tune_first ? r->tune_first - m->t0 : 0)),
                    cta_fmt_ns(b2, (double)(r->tune_last ? r->tune_last - m->t0 : 0)),
                    cta_fmt_ns(b3, (double)r->tune_ns), (unsigned long long)r->tune_samples,
                    (unsigned long long)r->samples);
    }
}

static void su_json(cta_json *j, const cta_model *m)
{
    cta_json_key(j, "startup");
    cta_json_arr(j);
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        const cta_startup_proc *pr = cta_startup_proc_of(p); /* not NULL where a device is shown */
        for (int d = 0; d < CTA_MAX_DEV; d++) {
            const cta_startup_dev *r = shown(p, d);
            const cta_dev *dv = &p->dev[d];
            if (!r)
                continue;
            cta_json_obj(j);
            CTA_JK_U64(j, "pid", p->pid);
            CTA_JK_U64(j, "device", (uint64_t)d);
            CTA_JK_STR(j, "found", r->found == CTA_STARTUP_NVTX       ? "nvtx"
                                   : r->found == CTA_STARTUP_SEQUENCE ? "sequence"
                                                                      : "none");
            if (r->found == CTA_STARTUP_NVTX)
                CTA_JK_STR(j, "nvtx_range", pr->nvtx_range);
            CTA_JK_U64(j, "ops", r->ops);
            CTA_JK_U64(j, "period_ops", r->period);
            CTA_JK_U64(j, "repeats", r->repeats);
            CTA_JK_U64(j, "steady_op", r->steady_op);
            CTA_JK_U64_IF(j, "steady_from_ns", r->steady_from, r->steady_from - m->t0);
            CTA_JK_U64(j, "startup_ns", r->steady_from ? r->steady_from - dv->first_gpu : 0);
            CTA_JK_U64(j, "startup_busy_ns", r->startup_busy);
            cta_json_key(j, "idle_by_cause");
            cta_json_obj(j);
            for (int c = 0; c < CTA_GAP_N; c++)
                CTA_JK_U64(j, cta_gap_names[c], r->idle_ns[c]);
            cta_json_end_obj(j);
            CTA_JK_U64(j, "trial_kernels", r->trial_kernels);
            CTA_JK_U64(j, "trial_runs", r->trial_runs);
            CTA_JK_U64(j, "init_ns", pr->init_end >= pr->first_call ? pr->init_end - pr->first_call : 0);
            CTA_JK_U64(j, "library_calls", pr->lib_calls);
            CTA_JK_U64(j, "library_ns", pr->lib_ns);
            cta_json_key(j, "libraries");
            cta_json_arr(j);
            for (int l = 0; l < CTA_STARTUP_LIBS; l++) {
                const cta_startup_lib *x = &pr->lib[l];
                if (!lib_in_startup(pr, l))
                    continue;
                cta_json_obj(j);
                CTA_JK_STR(j, "name", cta_startup_lib_names[l]);
                CTA_JK_U64(j, "seen_ns", x->seen - m->t0);
                CTA_JK_U64_IF(j, "first_call_ns", x->first_call, x->first_call - m->t0);
                CTA_JK_U64(j, "host_ns", x->host_ns);
                CTA_JK_U64(j, "objects", x->objects);
                cta_json_end_obj(j);
            }
            cta_json_end_arr(j);
            CTA_JK_U64(j, "allocations", pr->alloc_calls);
            CTA_JK_U64(j, "allocation_ns", pr->alloc_ns);
            CTA_JK_U64(j, "autotune_syncs", pr->tune_calls);
            CTA_JK_U64(j, "autotune_sync_ns", pr->tune_ns);
            CTA_JK_U64(j, "samples", pr->samples);
            CTA_JK_U64(j, "autotune_samples", pr->tune_samples);
            cta_json_end_obj(j);
        }
    }
    cta_json_end_arr(j);
}

const cta_feature cta_startup_feature = {
    .name = "startup",
    .types = 1ull << CT_REC_THREAD_SAMPLE | 1ull << CT_REC_NVTX_RANGE | 1ull << CT_REC_SHLIB,
    .record = cta_startup_record,
    .api = cta_startup_api,
    .gpu = cta_startup_gpu,
    .gap = cta_startup_gap,
    .finish = cta_startup_finish,
    .proc_free = cta_startup_proc_free,
    .at = CTA_AT_BREAKDOWN,
    .text = su_text,
    .json = su_json,
};
