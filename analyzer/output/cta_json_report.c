/* The summary's JSON document (cta_json_report.h), from the figures cta_report_common.c computes
 * for the text and the JSON alike. */
#include "cta_json_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_kineto_open.h"
#include "cta_kineto_report.h"
#include "cta_diag_report.h"
#include "cta_feature.h"
#include "cta_out.h"
#include "cta_overview.h"
#include "cta_report_common.h"
#include "cta_names.h"

static void json_u32s(cta_json *j, const char *k, const uint32_t v[3])
{
    cta_json_key(j, k);
    cta_json_arr(j);
    for (int i = 0; i < 3; i++)
        cta_json_u64(j, v[i]);
    cta_json_end_arr(j);
}

/* Kernels: the statistics are of the GPU durations of the timed instances (null when none was
 * timed); API functions: of the calls' host time, each layer's time_pct of its own total. */
static void json_stats(cta_json *j, const char *key, const cta_stat *st, const cta_map *names,
                       size_t n, uint64_t total, int api, const cta_model *m)
{
    cta_json_key(j, key);
    cta_json_arr(j);
    uint32_t *idx = cta_report_sorted(st, n);
    static const char *const layer_name[CTA_LAYER_N] = {"runtime", "driver", "library"};
    uint64_t layer[CTA_LAYER_N];
    for (int l = 0; l < CTA_LAYER_N; l++)
        layer[l] = cta_report_layer_total(m, l);
    if (!api)
        total = cta_report_shown_total(st, n);
    for (size_t r = 0; r < n; r++) {
        const cta_stat *s = &st[idx[r]];
        cta_json_obj(j);
        CTA_JK_STR(j, "name", cta_map_key(names, idx[r]));
        if (api) {
            CTA_JK_STR(j, "layer", layer_name[s->layer]);
            CTA_JK_U64(j, "calls", s->d.count);
            total = layer[s->layer];
        } else {
            CTA_JK_U64(j, "instances", s->launched);
            CTA_JK_U64(j, "timed_instances", cta_stat_timed(s));
            CTA_JK_U64(j, "graph_instances", s->in_graphs);
            CTA_JK_U64(j, "end_bounded", s->b.count);
            cta_json_key(j, "upper_bounds");
            cta_json_bool(j, cta_stat_upper(s));
            cta_json_key(j, "total_estimated");
            cta_json_bool(j, cta_stat_total_estimated(s));
            CTA_JK_U64(j, "launch_calls_ns", s->launch_ns);
            json_u32s(j, "grid", s->grid);
            json_u32s(j, "block", s->block);
            cta_json_key(j, "configurations_vary");
            cta_json_bool(j, s->configs_vary);
        }
        const cta_sketch *d = api ? &s->d : cta_stat_shown(s);
        if (d->count) {
            uint64_t sum = api ? d->sum : cta_stat_total(s);
            CTA_JK_U64(j, "total_ns", sum);
            CTA_JK_NUM(j, "time_pct", total ? 100.0 * (double)sum / (double)total : 0);
            CTA_JK_NUM(j, "avg_ns", (double)d->sum / (double)d->count);
            CTA_JK_U64(j, "median_ns", cta_sketch_quantile(d, 0.5));
            CTA_JK_U64(j, "min_ns", d->min);
            CTA_JK_U64(j, "max_ns", d->max);
            CTA_JK_NUM(j, "stddev_ns", cta_sketch_stddev(d));
        } else {
            static const char *const none[] = {"total_ns", "time_pct", "avg_ns", "median_ns",
                                               "min_ns", "max_ns", "stddev_ns"};
            for (size_t k = 0; k < sizeof none / sizeof *none; k++) {
                cta_json_key(j, none[k]);
                cta_json_null(j);
            }
        }
        if (api) {
            CTA_JK_U64(j, "failures", s->failures);
            cta_json_key(j, "first_failure");
            if (s->failures) {
                const char *err = cta_report_error_name(s->layer, s->fail_code);
                cta_json_obj(j);
                CTA_JK_I64(j, "code", s->fail_code);
                cta_json_key(j, "name");
                err ? cta_json_str(j, err) : cta_json_null(j);
                cta_json_key(j, "others_differ");
                cta_json_bool(j, s->fail_codes_vary);
                cta_json_end_obj(j);
            } else {
                cta_json_null(j);
            }
        }
        cta_json_end_obj(j);
    }
    free(idx);
    cta_json_end_arr(j);
}

static void json_holders(cta_json *j, const cta_model *m, const cta_proc *p, const char *key,
                         const cta_holder *h, int n)
{
    cta_json_key(j, key);
    cta_json_arr(j);
    for (int i = 0; i < n; i++) {
        char st[1024];
        cta_json_obj(j);
        CTA_JK_U64(j, "bytes", h[i].bytes);
        CTA_JK_U64(j, "allocations", h[i].count);
        CTA_JK_STR(j, "stack", cta_model_stack_text(m, p, h[i].stack, st, sizeof st, 16));
        CTA_JK_STR(j, "site", cta_model_site_text(m, p, h[i].stack, st, sizeof st, 16));
        cta_report_json_stacks(j, m, p, &h[i].stacks);
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
}

/* no_cpu: the trace has no CPU-time readings at all (a Kineto trace): computing and waiting
 * are unknown (null), not 0 */
static void json_split(cta_json *j, const cta_hostsplit *h, int no_cpu)
{
    CTA_JK_U64(j, "idle_in_api_ns", h->in_api);
    CTA_JK_U64(j, "idle_blocked_ns", h->blocked);
    if (no_cpu) {
        cta_json_key(j, "idle_host_compute_ns");
        cta_json_null(j);
        cta_json_key(j, "idle_host_wait_ns");
        cta_json_null(j);
    } else {
        CTA_JK_U64(j, "idle_host_compute_ns", h->compute);
        CTA_JK_U64(j, "idle_host_wait_ns", h->wait);
    }
    CTA_JK_U64(j, "idle_host_unknown_ns", h->unknown);
}

static void json_speedup(cta_json *j, const char *k, double v)
{
    cta_json_key(j, k);
    if (isinf(v))
        cta_json_null(j);
    else
        cta_json_num(j, v);
}

static void json_processes(cta_json *j, const cta_model *m)
{
    cta_json_key(j, "processes");
    cta_json_arr(j);
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        cta_json_obj(j);
        CTA_JK_STR(j, "host", p->host);
        CTA_JK_U64(j, "pid", p->pid);
        cta_json_key(j, "rank");
        if (p->rank >= 0)
            cta_json_i64(j, p->rank);
        else
            cta_json_null(j);
        CTA_JK_STR(j, "command", p->command);
        cta_json_key(j, "pytorch");
        cta_json_bool(j, p->torch);
        CTA_JK_STR(j, "file", cta_kineto_display_path(m->rd, p->file));
        CTA_JK_U64(j, "start_ns", p->t_first == UINT64_MAX ? 0 : p->t_first - m->t0);
        CTA_JK_U64(j, "wall_ns", cta_wall_of(p));
        if (p->captured) { /* only then: the output of other traces stays as it was */
            cta_json_key(j, "capture");
            cta_json_obj(j);
            CTA_JK_U64(j, "windows", p->capture_windows);
            CTA_JK_U64(j, "total_ns", p->capture_ns);
            cta_json_end_obj(j);
        }
        cta_feature_proc_json(j, m, p, CTA_AT_PROC_CAPTURE);
        const char *kineto = cta_kineto_source(m->rd, p->file);
        if (kineto) { /* only then, as for capture */
            cta_json_key(j, "source");
            cta_json_obj(j);
            CTA_JK_STR(j, "format", "kineto");
            CTA_JK_STR(j, "file", kineto);
            CTA_JK_STR(j, "not_in_trace", cta_kineto_lacks);
            const cta_kconv_stats *ks = cta_kineto_source_stats(m->rd, p->file);
            static const cta_kconv_stats none;
            if (!ks)
                ks = &none;
            CTA_JK_U64(j, "kernels", ks->kernels);
            CTA_JK_U64(j, "memcpys", ks->copies);
            CTA_JK_U64(j, "memsets", ks->sets);
            CTA_JK_U64(j, "memcpys_kind_unknown", ks->copies_kind_unknown);
            CTA_JK_U64(j, "gpu_work_without_call", ks->gpu_without_call);
            CTA_JK_U64(j, "ranges", ks->ranges);
            CTA_JK_U64(j, "memory_events", ks->memory_events);
            CTA_JK_U64(j, "events", ks->events);
            CTA_JK_U64(j, "dropped_events", ks->dropped_events);
            cta_json_key(j, "dropped");
            cta_json_obj(j);
            for (int r = 0; r < CTA_KDROP_N; r++)
                CTA_JK_U64(j, cta_kdrop_key[r], ks->dropped[r]);
            cta_json_end_obj(j);
            if (ks != &none && !ks->kernels && !ks->copies && !ks->sets)
                CTA_JK_STR(j, "message", ks->dropped_gpu ? cta_kineto_gpu_dropped : cta_kineto_no_gpu);
            cta_json_end_obj(j);
        }
        cta_feature_proc_json(j, m, p, CTA_AT_PROC_SOURCE);
        cta_json_key(j, "complete");
        cta_json_bool(j, p->ended);
        if (p->ended) {
            CTA_JK_STR(j, "end", cta_report_end_how[p->end.how < CTA_REPORT_END_HOWS ? p->end.how : 0]);
            if (p->end.how == CT_END_STOPPED)
                CTA_JK_STR(j, "stopped_by", cta_stop_key(p->end.code));
            else if (cta_report_end_code(m, p) >= 0)
                CTA_JK_I64(j, "end_code", cta_report_end_code(m, p));
        }
        const ct_stats *s = p->stats;
        CTA_JK_U64(j, "records", s ? s->records : 0);
        CTA_JK_U64(j, "lost_records", s ? s->lost : 0);
        if (s && s->lost_full)
            CTA_JK_U64(j, "lost_buffer_full", s->lost_full);
        if (s && s->lost_fd)
            CTA_JK_U64(j, "lost_descriptors", s->lost_fd);
        CTA_JK_U64(j, "corrupt_chunks", s ? s->corrupt_chunks : 0);
        CTA_JK_U64(j, "missing_chunks", s ? s->chunks_missing : 0);
        CTA_JK_U64(j, "torn_tail_bytes", s ? s->torn_tail : 0);
        CTA_JK_U64(j, "late_points", p->late_points);
        CTA_JK_U64(j, "unmatched_gpu_records", p->unmatched_gpu);
        CTA_JK_U64(j, "unknown_frees", p->unknown_frees);
        CTA_JK_U64(j, "pinned_host_peak_bytes", p->dev[CTA_HOST_DEV].peak);
        cta_json_key(j, "gpu_timing");
        if (p->gpu_timing >= 0)
            cta_json_i64(j, p->gpu_timing);
        else
            cta_json_null(j);
        const char *sg = cta_report_straggler(m, p);
        cta_json_key(j, "straggler");
        cta_json_bool(j, sg != NULL);
        cta_json_key(j, "devices");
        cta_json_arr(j);
        for (int d = 0; d < CTA_MAX_DEV; d++) {
            const cta_dev *dv = &p->dev[d];
            if (!dv->seen)
                continue;
            cta_json_obj(j);
            CTA_JK_I64(j, "device", d);
            CTA_JK_STR(j, "name", dv->name);
            CTA_JK_U64(j, "gpu_operations", dv->gpu_ops);
            CTA_JK_U64(j, "gpu_timed_operations", dv->gpu_timed < dv->gpu_ops ? dv->gpu_timed : dv->gpu_ops);
            if (dv->have_prop) {
                CTA_JK_U64(j, "memory_bytes", dv->prop.mem_bytes);
                /* a peak of 0 is one the trace does not give (no memory clock, no link speed) */
                double peaks[2] = {cta_dev_mem_peak(&dv->prop), cta_dev_link_peak(&dv->prop)};
                static const char *const keys[2] = {"memory_peak_gbps", "link_peak_gbps"};
                for (int k = 0; k < 2; k++) {
                    cta_json_key(j, keys[k]);
                    if (peaks[k] > 0)
                        cta_json_num(j, peaks[k] / 1e9);
                    else
                        cta_json_null(j);
                }
            }
            cta_json_end_obj(j);
        }
        cta_json_end_arr(j);
        cta_json_key(j, "libraries");
        cta_json_arr(j);
        for (size_t k = 0; k < p->nshlibs; k++) {
            cta_json_obj(j);
            CTA_JK_STR(j, "kind", cta_report_shlib_kind(p->shlibs[k].kind));
            CTA_JK_STR(j, "path", p->shlibs[k].path);
            cta_json_key(j, "build_id");
            if (p->shlibs[k].build_id[0])
                cta_json_str(j, p->shlibs[k].build_id);
            else
                cta_json_null(j);
            cta_json_end_obj(j);
        }
        cta_json_end_arr(j);
        cta_json_key(j, "python");
        if (p->python.version) {
            char v[32];
            snprintf(v, sizeof v, "%u.%u.%u", p->python.version >> 24, (p->python.version >> 16) & 0xff,
                     (p->python.version >> 8) & 0xff);
            cta_json_obj(j);
            CTA_JK_STR(j, "version", v);
            CTA_JK_U64(j, "hexversion", p->python.version);
            CTA_JK_STR(j, "program", p->python.program);
            CTA_JK_STR(j, "prefix", p->python.prefix);
            CTA_JK_STR(j, "exec_prefix", p->python.exec_prefix);
            CTA_JK_STR(j, "path", p->python.path);
            cta_json_end_obj(j);
        } else {
            cta_json_null(j);
        }
        if (p->launch_queue.count) {
            cta_json_key(j, "launch_queue");
            cta_json_obj(j);
            CTA_JK_U64(j, "kernels", p->launch_queue.count);
            CTA_JK_NUM(j, "avg_ns", (double)p->launch_queue.sum / (double)p->launch_queue.count);
            CTA_JK_U64(j, "median_ns", cta_sketch_quantile(&p->launch_queue, 0.5));
            CTA_JK_U64(j, "max_ns", p->launch_queue.max);
            cta_json_end_obj(j);
        }
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
}

/* How many of a series' bins make one shown bin: the least power of two that keeps at most
 * max_bins of them (0: no limit). */
static uint32_t series_merge(const cta_series *s, uint32_t max_bins)
{
    uint32_t f = 1;
    while (max_bins && (s->n + f - 1) / f > max_bins)
        f *= 2;
    return f;
}

/* The first bin's start (a whole millisecond of the clock: up to 1 ms before the first activity,
 * so it can be negative) and the shown bins' width. */
static void json_series_axis(cta_json *j, const cta_model *m, const cta_series *s, uint32_t f)
{
    CTA_JK_I64(j, "start_ns", s->started ? (int64_t)(s->t0 - m->t0) : 0);
    CTA_JK_U64(j, "bin_ns", s->width * f);
}

static void json_vram(cta_json *j, const cta_model *m, uint32_t max_bins)
{
    cta_json_key(j, "vram");
    cta_json_arr(j);
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        for (int d = 0; d <= CTA_MAX_DEV; d++) {
            const cta_dev *dv = &p->dev[d];
            if (!cta_report_has_vram(dv))
                continue;
            cta_json_obj(j);
            CTA_JK_U64(j, "pid", p->pid);
            cta_json_key(j, "device");
            if (d == CTA_HOST_DEV)
                cta_json_str(j, "pinned-host");
            else
                cta_json_i64(j, d);
            CTA_JK_U64(j, "peak_bytes", dv->peak);
            CTA_JK_U64(j, "peak_time_ns", dv->peak ? dv->peak_time - m->t0 : 0);
            CTA_JK_U64(j, "allocations", dv->allocs);
            CTA_JK_U64(j, "frees", dv->frees);
            CTA_JK_U64(j, "in_use_at_end_bytes", dv->in_use);
            json_holders(j, m, p, "peak_holders", dv->peak_holders, dv->npeak_holders);
            cta_json_key(j, "curve");
            cta_json_obj(j);
            uint32_t f = series_merge(&dv->mem, max_bins);
            json_series_axis(j, m, &dv->mem, f);
            cta_json_key(j, "max_bytes");
            cta_json_arr(j);
            for (uint32_t k = 0; k < dv->mem.n; k += f) {
                uint64_t mx = 0;
                for (uint32_t i = k; i < k + f && i < dv->mem.n; i++)
                    mx = dv->mem.max[i] > mx ? dv->mem.max[i] : mx;
                cta_json_u64(j, mx);
            }
            cta_json_end_arr(j);
            cta_json_end_obj(j);
            CTA_JK_U64(j, "failed_count", dv->nfails);
            cta_json_key(j, "failed_allocs");
            cta_json_arr(j);
            for (uint64_t k = 0; k < dv->nfails && k < CTA_MAX_FAILS; k++) {
                const cta_fail *fl = &dv->fails[k];
                char st[1024];
                cta_json_obj(j);
                CTA_JK_U64(j, "requested_bytes", fl->requested);
                CTA_JK_U64(j, "in_use_bytes", fl->in_use);
                CTA_JK_U64(j, "time_ns", fl->time - m->t0);
                CTA_JK_U64(j, "result", fl->result);
                CTA_JK_STR(j, "stack", cta_model_stack_text(m, p, fl->stack, st, sizeof st, 16));
                CTA_JK_STR(j, "site", cta_model_site_text(m, p, fl->stack, st, sizeof st, 16));
                json_holders(j, m, p, "holders", fl->holders, fl->nholders);
                cta_json_end_obj(j);
            }
            cta_json_end_arr(j);
            cta_json_end_obj(j);
        }
    }
    cta_json_end_arr(j);
}

static void json_channel(cta_json *j, const char *key, const cta_series *s, uint32_t ch, uint32_t f)
{
    const uint64_t *v = cta_series_ch(s, ch);
    cta_json_key(j, key);
    cta_json_arr(j);
    for (uint32_t i = 0; i < s->n; i += f) {
        uint64_t sum = 0;
        for (uint32_t k = i; k < i + f && k < s->n; k++)
            sum += v[k];
        cta_json_u64(j, sum);
    }
    cta_json_end_arr(j);
}

/* The device's plot series (cta_dev.util): busy time, and the idle time by gap cause and by host
 * state, per bin. */
static void json_util_series(cta_json *j, const cta_model *m, const cta_dev *dv, uint32_t max_bins)
{
    static const char *const host_names[] = {"in_api", "blocked", "compute", "wait", "unknown"};
    const cta_series *s = &dv->util;
    uint32_t f = series_merge(s, max_bins);
    cta_json_key(j, "series");
    cta_json_obj(j);
    json_series_axis(j, m, s, f);
    json_channel(j, "busy_ns", s, CTA_CH_BUSY, f);
    cta_json_key(j, "idle_by_cause");
    cta_json_obj(j);
    for (int c = 0; c < CTA_GAP_N; c++)
        json_channel(j, cta_gap_names[c], s, CTA_CH_GAP + (uint32_t)c, f);
    cta_json_end_obj(j);
    cta_json_key(j, "idle_by_host");
    cta_json_obj(j);
    for (uint32_t c = 0; c < sizeof host_names / sizeof *host_names; c++)
        json_channel(j, host_names[c], s, CTA_CH_IN_API + c, f);
    cta_json_end_obj(j);
    cta_json_end_obj(j);
}

typedef struct {
    cta_json *j;
    const cta_model *m;
    uint32_t max_bins;
} json_breakdown_ctx;

static void json_dev_breakdown(void *ctx, const cta_proc *p, int d, uint64_t untimed, const cta_breakdown *b)
{
    const json_breakdown_ctx *x = ctx;
    cta_json *j = x->j;
    const cta_model *m = x->m;
    const cta_dev *dv = &p->dev[d];
    cta_json_obj(j);
    CTA_JK_U64(j, "pid", p->pid);
    CTA_JK_I64(j, "device", d);
    CTA_JK_U64(j, "gpu_operations", dv->gpu_ops);
    CTA_JK_U64(j, "gpu_untimed_operations", untimed);
    cta_json_key(j, "complete");
    cta_json_bool(j, !untimed);
    if (untimed) { /* busy, idle and the gaps would hold the untimed work */
        cta_json_end_obj(j);
        return;
    }
    CTA_JK_U64(j, "window_start_ns", dv->first_gpu - m->t0);
    CTA_JK_U64(j, "window_ns", b->window);
    CTA_JK_U64(j, "gpu_busy_ns", b->busy);
    CTA_JK_U64(j, "gpu_end_bounded_operations", dv->bounded_ops);
    CTA_JK_U64(j, "gpu_busy_bounded_ns", b->busy_bounded);
    CTA_JK_U64(j, "gpu_idle_ns", b->idle);
    json_split(j, &b->host, cta_kineto_source(m->rd, p->file) != NULL);
    json_speedup(j, "max_speedup_gpu", b->max_speedup_gpu);
    json_speedup(j, "max_speedup_host", b->max_speedup_host);
    cta_json_key(j, "gaps");
    cta_json_obj(j);
    for (int c = 0; c < CTA_GAP_N; c++) {
        cta_json_key(j, cta_gap_names[c]);
        cta_json_obj(j);
        CTA_JK_U64(j, "count", dv->gap_count[c]);
        CTA_JK_U64(j, "total_ns", dv->gap_ns[c]);
        cta_feature_gap_json(j, m, p, d, c, CTA_SPAN_ALL);
        cta_json_end_obj(j);
    }
    cta_json_end_obj(j);
    cta_json_key(j, "longest_gaps");
    cta_json_arr(j);
    for (int g = 0; g < dv->ntop; g++) {
        cta_json_obj(j);
        CTA_JK_U64(j, "start_ns", dv->top[g].start - m->t0);
        CTA_JK_U64(j, "len_ns", dv->top[g].len);
        CTA_JK_STR(j, "cause", cta_gap_names[dv->top[g].cls]);
        json_split(j, &dv->top[g].host, cta_kineto_source(m->rd, p->file) != NULL);
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
    if (dv->util.started)
        json_util_series(j, m, dv, x->max_bins);
    cta_json_end_obj(j);
}

static void json_breakdown(cta_json *j, const cta_model *m, uint32_t max_bins)
{
    cta_json_key(j, "breakdown");
    cta_json_arr(j);
    json_breakdown_ctx x = {j, m, max_bins};
    for (size_t i = 0; i < m->nprocs; i++)
        cta_report_breakdowns(&m->procs[i], json_dev_breakdown, &x);
    cta_json_end_arr(j);
}

static void json_ranks(cta_json *j, const cta_model *m)
{
    cta_json_key(j, "ranks");
    cta_json_arr(j);
    for (size_t i = 0; m->nprocs > 1 && i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        cta_breakdown b;
        int known = cta_report_proc_breakdown(p, &b) && b.window;
        cta_json_obj(j);
        cta_json_key(j, "rank");
        if (p->rank >= 0)
            cta_json_i64(j, p->rank);
        else
            cta_json_null(j);
        CTA_JK_U64(j, "pid", p->pid);
        CTA_JK_STR(j, "host", p->host);
        CTA_JK_U64(j, "wall_ns", cta_wall_of(p));
        cta_json_key(j, "gpu_busy_pct");
        if (known)
            cta_json_num(j, 100.0 * (double)b.busy / (double)b.window);
        else
            cta_json_null(j);
        cta_json_key(j, "gpu_idle_pct");
        if (known)
            cta_json_num(j, 100.0 * (double)b.idle / (double)b.window);
        else
            cta_json_null(j);
        CTA_JK_U64(j, "peak_vram_bytes", cta_report_proc_peak(p));
        CTA_JK_STR(j, "top_kernel", p->top_kernel);
        const char *s = cta_report_straggler(m, p);
        cta_json_key(j, "straggler");
        if (s)
            cta_json_str(j, s);
        else
            cta_json_null(j);
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
}

void cta_report_json(FILE *f, const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o)
{
    cta_json j;
    cta_json_init(&j, f, 1);
    cta_json_obj(&j);
    CTA_JK_I64(&j, "schema_version", CTA_SCHEMA_VERSION);
    CTA_JK_STR(&j, "tool", "cutrace summary");
    CTA_JK_U64(&j, "records", m->records);
    CTA_JK_NUM(&j, "min_saving_pct", o->diag ? o->diag->min_saving_pct : 1.0);
    json_processes(&j, m);
    json_stats(&j, "kernels", m->kernels, &m->kernel_names, cta_map_count(&m->kernel_names), 0, 0, m);
    if (o->variants)
        json_stats(&j, "kernel_variants", m->variant_stats, &m->variants, cta_map_count(&m->variants),
                   0, 0, m);
    cta_feature_json(&j, m, CTA_AT_KERNELS);
    cta_json_key(&j, "copies");
    cta_json_arr(&j);
    for (int op = 0; op < CTA_OP_N; op++)
        for (int hk = 0; hk < CTA_HK_N; hk++) {
            const cta_copystat *c = &m->copies[op][hk];
            if (!c->count)
                continue;
            cta_json_obj(&j);
            CTA_JK_STR(&j, "op", cta_op_names[op]);
            CTA_JK_STR(&j, "host_kind", cta_hk_names[hk]);
            CTA_JK_U64(&j, "count", c->count);
            CTA_JK_U64(&j, "bytes", c->bytes);
            CTA_JK_U64(&j, "graph_count", c->in_graphs);
            cta_copyshown sh = cta_copy_shown(c);
            CTA_JK_U64(&j, "timed_count", c->timed + c->bounded);
            CTA_JK_U64(&j, "end_bounded", c->bounded);
            cta_json_key(&j, "upper_bounds");
            cta_json_bool(&j, sh.upper);
            CTA_JK_U64(&j, "timed_bytes", sh.bytes);
            cta_json_key(&j, "total_ns");
            if (sh.n)
                cta_json_u64(&j, sh.ns);
            else
                cta_json_null(&j);
            cta_json_key(&j, "gbps");
            if (sh.n && sh.ns)
                cta_json_num(&j, cta_gbps(sh.bytes, sh.ns));
            else
                cta_json_null(&j);
            cta_json_key(&j, "peak_gbps");
            if (c->peak_bps > 0)
                cta_json_num(&j, c->peak_bps / 1e9);
            else
                cta_json_null(&j);
            cta_json_key(&j, "peak_pct");
            if (sh.n && sh.ns && c->peak_bps > 0)
                cta_json_num(&j, 100.0 * cta_gbps(sh.bytes, sh.ns) * 1e9 / c->peak_bps);
            else
                cta_json_null(&j);
            cta_json_end_obj(&j);
        }
    cta_json_end_arr(&j);
    json_stats(&j, "api", m->api, &m->api_names, cta_map_count(&m->api_names), 0, 1, m);
    json_vram(&j, m, o->series_bins);
    json_breakdown(&j, m, o->series_bins);
    cta_feature_json(&j, m, CTA_AT_BREAKDOWN);
    json_ranks(&j, m);
    cta_diag_report_json(&j, m, dg, ndiag);
    if (o->overview)
        cta_overview_json(&j, m, o->overview);
    if (o->hta)
        cta_kineto_hta_json(&j, o->hta);
    cta_json_end_obj(&j);
}
