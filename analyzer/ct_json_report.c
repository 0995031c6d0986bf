#include "ct_report_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_out.h"

static void json_u32s(ct_json *j, const char *k, const uint32_t v[3])
{
    ct_json_key(j, k);
    ct_json_arr(j);
    for (int i = 0; i < 3; i++)
        ct_json_u64(j, v[i]);
    ct_json_end_arr(j);
}

/* Kernels: the statistics are of the GPU durations of the timed instances (null when none was
 * timed); API functions: of the calls' host time, each layer's time_pct of its own total. */
static void json_stats(ct_json *j, const char *key, const ct_stat *st, const ct_map *names,
                       size_t n, uint64_t total, int api, const ct_model *m)
{
    ct_json_key(j, key);
    ct_json_arr(j);
    uint32_t *idx = ct_report_sorted(st, n);
    static const char *const layer_name[CT_LAYER_N] = {"runtime", "driver", "library"};
    uint64_t layer[CT_LAYER_N];
    for (int l = 0; l < CT_LAYER_N; l++)
        layer[l] = ct_report_layer_total(m, l);
    if (!api)
        total = ct_report_shown_total(st, n);
    for (size_t r = 0; r < n; r++) {
        const ct_stat *s = &st[idx[r]];
        ct_json_obj(j);
        CT_JK_STR(j, "name", ct_map_key(names, idx[r]));
        if (api) {
            CT_JK_STR(j, "layer", layer_name[s->layer]);
            CT_JK_U64(j, "calls", s->d.count);
            total = layer[s->layer];
        } else {
            CT_JK_U64(j, "instances", s->launched);
            CT_JK_U64(j, "timed_instances", ct_stat_timed(s));
            CT_JK_U64(j, "end_bounded", s->b.count);
            ct_json_key(j, "upper_bounds");
            ct_json_bool(j, ct_stat_upper(s));
            ct_json_key(j, "total_estimated");
            ct_json_bool(j, ct_stat_total_estimated(s));
            CT_JK_U64(j, "launch_calls_ns", s->launch_ns);
            json_u32s(j, "grid", s->grid);
            json_u32s(j, "block", s->block);
            ct_json_key(j, "configurations_vary");
            ct_json_bool(j, s->configs_vary);
        }
        const ct_sketch *d = api ? &s->d : ct_stat_shown(s);
        if (d->count) {
            uint64_t sum = api ? d->sum : ct_stat_total(s);
            CT_JK_U64(j, "total_ns", sum);
            CT_JK_NUM(j, "time_pct", total ? 100.0 * (double)sum / (double)total : 0);
            CT_JK_NUM(j, "avg_ns", (double)d->sum / (double)d->count);
            CT_JK_U64(j, "median_ns", ct_sketch_quantile(d, 0.5));
            CT_JK_U64(j, "min_ns", d->min);
            CT_JK_U64(j, "max_ns", d->max);
            CT_JK_NUM(j, "stddev_ns", ct_sketch_stddev(d));
        } else {
            static const char *const none[] = {"total_ns", "time_pct", "avg_ns", "median_ns",
                                               "min_ns", "max_ns", "stddev_ns"};
            for (size_t k = 0; k < sizeof none / sizeof *none; k++) {
                ct_json_key(j, none[k]);
                ct_json_null(j);
            }
        }
        if (api)
            CT_JK_U64(j, "failures", s->failures);
        ct_json_end_obj(j);
    }
    free(idx);
    ct_json_end_arr(j);
}

static void json_holders(ct_json *j, const ct_model *m, const ct_proc *p, const char *key,
                         const ct_holder *h, int n)
{
    ct_json_key(j, key);
    ct_json_arr(j);
    for (int i = 0; i < n; i++) {
        char st[1024];
        ct_json_obj(j);
        CT_JK_U64(j, "bytes", h[i].bytes);
        CT_JK_U64(j, "allocations", h[i].count);
        CT_JK_STR(j, "stack", ct_model_stack_text(m, p, h[i].stack, st, sizeof st, 16));
        ct_json_end_obj(j);
    }
    ct_json_end_arr(j);
}

static void json_split(ct_json *j, const ct_hostsplit *h)
{
    CT_JK_U64(j, "idle_in_api_ns", h->in_api);
    CT_JK_U64(j, "idle_blocked_ns", h->blocked);
    CT_JK_U64(j, "idle_host_compute_ns", h->compute);
    CT_JK_U64(j, "idle_host_wait_ns", h->wait);
    CT_JK_U64(j, "idle_host_unknown_ns", h->unknown);
}

static void json_speedup(ct_json *j, const char *k, double v)
{
    ct_json_key(j, k);
    if (isinf(v))
        ct_json_null(j);
    else
        ct_json_num(j, v);
}

static void json_processes(ct_json *j, const ct_model *m)
{
    ct_json_key(j, "processes");
    ct_json_arr(j);
    for (size_t i = 0; i < m->nprocs; i++) {
        const ct_proc *p = &m->procs[i];
        ct_json_obj(j);
        CT_JK_STR(j, "host", p->host);
        CT_JK_U64(j, "pid", p->pid);
        ct_json_key(j, "rank");
        if (p->rank >= 0)
            ct_json_i64(j, p->rank);
        else
            ct_json_null(j);
        CT_JK_STR(j, "command", p->command);
        ct_json_key(j, "pytorch");
        ct_json_bool(j, p->torch);
        CT_JK_STR(j, "file", ct_reader_path(m->rd, p->file));
        CT_JK_U64(j, "start_ns", p->t_first == UINT64_MAX ? 0 : p->t_first - m->t0);
        CT_JK_U64(j, "wall_ns", wall_of(p));
        ct_json_key(j, "complete");
        ct_json_bool(j, p->ended);
        if (p->ended) {
            CT_JK_STR(j, "end", ct_report_end_how[p->end.how < CT_REPORT_END_HOWS ? p->end.how : 0]);
            if (ct_report_end_code(m, p) >= 0)
                CT_JK_I64(j, "end_code", ct_report_end_code(m, p));
        }
        const ct_stats *s = p->stats;
        CT_JK_U64(j, "records", s ? s->records : 0);
        CT_JK_U64(j, "lost_records", s ? s->lost : 0);
        CT_JK_U64(j, "corrupt_chunks", s ? s->corrupt_chunks : 0);
        CT_JK_U64(j, "missing_chunks", s ? s->chunks_missing : 0);
        CT_JK_U64(j, "torn_tail_bytes", s ? s->torn_tail : 0);
        CT_JK_U64(j, "late_points", p->late_points);
        CT_JK_U64(j, "unmatched_gpu_records", p->unmatched_gpu);
        CT_JK_U64(j, "unknown_frees", p->unknown_frees);
        CT_JK_U64(j, "pinned_host_peak_bytes", p->dev[CT_HOST_DEV].peak);
        ct_json_key(j, "gpu_timing");
        if (p->gpu_timing >= 0)
            ct_json_i64(j, p->gpu_timing);
        else
            ct_json_null(j);
        const char *sg = ct_report_straggler(m, p);
        ct_json_key(j, "straggler");
        ct_json_bool(j, sg != NULL);
        ct_json_key(j, "devices");
        ct_json_arr(j);
        for (int d = 0; d < CT_MAX_DEV; d++) {
            const ct_dev *dv = &p->dev[d];
            if (!dv->seen)
                continue;
            ct_json_obj(j);
            CT_JK_I64(j, "device", d);
            CT_JK_STR(j, "name", dv->name);
            CT_JK_U64(j, "gpu_operations", dv->gpu_ops);
            CT_JK_U64(j, "gpu_timed_operations", dv->gpu_timed < dv->gpu_ops ? dv->gpu_timed : dv->gpu_ops);
            if (dv->have_prop) {
                CT_JK_U64(j, "memory_bytes", dv->prop.mem_bytes);
                CT_JK_NUM(j, "memory_peak_gbps", ct_dev_mem_peak(&dv->prop) / 1e9);
                CT_JK_NUM(j, "link_peak_gbps", ct_dev_link_peak(&dv->prop) / 1e9);
            }
            ct_json_end_obj(j);
        }
        ct_json_end_arr(j);
        ct_json_key(j, "libraries");
        ct_json_arr(j);
        for (size_t k = 0; k < p->nshlibs; k++) {
            ct_json_obj(j);
            CT_JK_STR(j, "kind", ct_report_shlib_kind(p->shlibs[k].kind));
            CT_JK_STR(j, "path", p->shlibs[k].path);
            ct_json_key(j, "build_id");
            if (p->shlibs[k].build_id[0])
                ct_json_str(j, p->shlibs[k].build_id);
            else
                ct_json_null(j);
            ct_json_end_obj(j);
        }
        ct_json_end_arr(j);
        if (p->launch_queue.count) {
            ct_json_key(j, "launch_queue");
            ct_json_obj(j);
            CT_JK_U64(j, "kernels", p->launch_queue.count);
            CT_JK_NUM(j, "avg_ns", (double)p->launch_queue.sum / (double)p->launch_queue.count);
            CT_JK_U64(j, "median_ns", ct_sketch_quantile(&p->launch_queue, 0.5));
            CT_JK_U64(j, "max_ns", p->launch_queue.max);
            ct_json_end_obj(j);
        }
        ct_json_end_obj(j);
    }
    ct_json_end_arr(j);
}

static void json_vram(ct_json *j, const ct_model *m)
{
    ct_json_key(j, "vram");
    ct_json_arr(j);
    for (size_t i = 0; i < m->nprocs; i++) {
        const ct_proc *p = &m->procs[i];
        for (int d = 0; d <= CT_MAX_DEV; d++) {
            const ct_dev *dv = &p->dev[d];
            if (!dv->allocs && !dv->nfails)
                continue;
            ct_json_obj(j);
            CT_JK_U64(j, "pid", p->pid);
            ct_json_key(j, "device");
            if (d == CT_HOST_DEV)
                ct_json_str(j, "pinned-host");
            else
                ct_json_i64(j, d);
            CT_JK_U64(j, "peak_bytes", dv->peak);
            CT_JK_U64(j, "peak_time_ns", dv->peak ? dv->peak_time - m->t0 : 0);
            CT_JK_U64(j, "allocations", dv->allocs);
            CT_JK_U64(j, "frees", dv->frees);
            CT_JK_U64(j, "in_use_at_end_bytes", dv->in_use);
            json_holders(j, m, p, "peak_holders", dv->peak_holders, dv->npeak_holders);
            ct_json_key(j, "curve");
            ct_json_obj(j);
            CT_JK_U64(j, "start_ns", dv->mem.started ? dv->mem.t0 - (dv->mem.t0 >= m->t0 ? m->t0 : dv->mem.t0) : 0);
            CT_JK_U64(j, "bin_ns", dv->mem.width);
            ct_json_key(j, "max_bytes");
            ct_json_arr(j);
            for (uint32_t k = 0; k < dv->mem.n; k++)
                ct_json_u64(j, dv->mem.max[k]);
            ct_json_end_arr(j);
            ct_json_end_obj(j);
            CT_JK_U64(j, "failed_count", dv->nfails);
            ct_json_key(j, "failed_allocs");
            ct_json_arr(j);
            for (uint64_t k = 0; k < dv->nfails && k < CT_MAX_FAILS; k++) {
                const ct_fail *fl = &dv->fails[k];
                char st[1024];
                ct_json_obj(j);
                CT_JK_U64(j, "requested_bytes", fl->requested);
                CT_JK_U64(j, "in_use_bytes", fl->in_use);
                CT_JK_U64(j, "time_ns", fl->time - m->t0);
                CT_JK_U64(j, "result", fl->result);
                CT_JK_STR(j, "stack", ct_model_stack_text(m, p, fl->stack, st, sizeof st, 16));
                json_holders(j, m, p, "holders", fl->holders, fl->nholders);
                ct_json_end_obj(j);
            }
            ct_json_end_arr(j);
            ct_json_end_obj(j);
        }
    }
    ct_json_end_arr(j);
}

static void json_breakdown(ct_json *j, const ct_model *m)
{
    ct_json_key(j, "breakdown");
    ct_json_arr(j);
    for (size_t i = 0; i < m->nprocs; i++) {
        const ct_proc *p = &m->procs[i];
        for (int d = 0; d < CT_MAX_DEV; d++) {
            const ct_dev *dv = &p->dev[d];
            uint64_t untimed = ct_dev_untimed(dv);
            if (!dv->windowed && !untimed)
                continue;
            ct_breakdown b;
            ct_breakdown_of(dv, &b);
            ct_json_obj(j);
            CT_JK_U64(j, "pid", p->pid);
            CT_JK_I64(j, "device", d);
            CT_JK_U64(j, "gpu_operations", dv->gpu_ops);
            CT_JK_U64(j, "gpu_untimed_operations", untimed);
            ct_json_key(j, "complete");
            ct_json_bool(j, !untimed);
            if (untimed) { /* busy, idle and the gaps would hold the untimed work */
                ct_json_end_obj(j);
                continue;
            }
            CT_JK_U64(j, "window_start_ns", dv->first_gpu - m->t0);
            CT_JK_U64(j, "window_ns", b.window);
            CT_JK_U64(j, "gpu_busy_ns", b.busy);
            CT_JK_U64(j, "gpu_end_bounded_operations", dv->bounded_ops);
            CT_JK_U64(j, "gpu_busy_bounded_ns", b.busy_bounded);
            CT_JK_U64(j, "gpu_idle_ns", b.idle);
            json_split(j, &b.host);
            json_speedup(j, "max_speedup_gpu", b.max_speedup_gpu);
            json_speedup(j, "max_speedup_host", b.max_speedup_host);
            ct_json_key(j, "gaps");
            ct_json_obj(j);
            for (int c = 0; c < CT_GAP_N; c++) {
                ct_json_key(j, ct_gap_names[c]);
                ct_json_obj(j);
                CT_JK_U64(j, "count", dv->gap_count[c]);
                CT_JK_U64(j, "total_ns", dv->gap_ns[c]);
                ct_json_end_obj(j);
            }
            ct_json_end_obj(j);
            ct_json_key(j, "longest_gaps");
            ct_json_arr(j);
            for (int g = 0; g < dv->ntop; g++) {
                ct_json_obj(j);
                CT_JK_U64(j, "start_ns", dv->top[g].start - m->t0);
                CT_JK_U64(j, "len_ns", dv->top[g].len);
                CT_JK_STR(j, "cause", ct_gap_names[dv->top[g].cls]);
                json_split(j, &dv->top[g].host);
                ct_json_end_obj(j);
            }
            ct_json_end_arr(j);
            ct_json_end_obj(j);
        }
    }
    ct_json_end_arr(j);
}

static const char *const unit_names[] = {"count", "ns", "bytes", "pct", "gbps", "ratio"};

static void json_diag(ct_json *j, const ct_diag *dg, int n)
{
    ct_json_key(j, "diagnoses");
    ct_json_arr(j);
    for (int i = 0; i < n; i++) {
        const ct_diag *d = &dg[i];
        ct_json_obj(j);
        CT_JK_STR(j, "id", d->id);
        CT_JK_STR(j, "severity", d->severity);
        CT_JK_U64(j, "pid", d->proc->pid);
        ct_json_key(j, "rank");
        if (d->proc->rank >= 0)
            ct_json_i64(j, d->proc->rank);
        else
            ct_json_null(j);
        ct_json_key(j, "device");
        if (d->dev >= 0)
            ct_json_i64(j, d->dev);
        else
            ct_json_null(j);
        CT_JK_STR(j, "message", d->message);
        CT_JK_U64(j, "estimated_saving_ns", d->saving_ns);
        CT_JK_U64(j, "window_ns", d->window_ns);
        CT_JK_NUM(j, "saving_pct", d->window_ns ? 100.0 * (double)d->saving_ns / (double)d->window_ns : 0);
        ct_json_key(j, "evidence");
        ct_json_obj(j);
        for (int k = 0; k < d->nev; k++)
            CT_JK_NUM(j, d->ev[k].key, d->ev[k].value);
        ct_json_end_obj(j);
        ct_json_key(j, "evidence_units");
        ct_json_obj(j);
        for (int k = 0; k < d->nev; k++)
            CT_JK_STR(j, d->ev[k].key, unit_names[d->ev[k].unit]);
        ct_json_end_obj(j);
        ct_json_key(j, "call_sites");
        ct_json_arr(j);
        for (int k = 0; k < d->nsites; k++)
            ct_json_str(j, d->sites[k].text);
        ct_json_end_arr(j);
        ct_json_key(j, "sites");
        ct_json_arr(j);
        for (int k = 0; k < d->nsites; k++) {
            const ct_diag_site *st = &d->sites[k];
            ct_json_obj(j);
            CT_JK_STR(j, "call", st->call);
            CT_JK_STR(j, "stack", st->stack);
            CT_JK_U64(j, "count", st->count);
            CT_JK_U64(j, "bytes", st->bytes);
            CT_JK_U64(j, "total_ns", st->ns);
            ct_json_end_obj(j);
        }
        ct_json_end_arr(j);
        CT_JK_STR(j, "detail", d->detail);
        CT_JK_STR(j, "fix", d->fix);
        ct_json_end_obj(j);
    }
    ct_json_end_arr(j);
}

static void json_ranks(ct_json *j, const ct_model *m)
{
    ct_json_key(j, "ranks");
    ct_json_arr(j);
    for (size_t i = 0; m->nprocs > 1 && i < m->nprocs; i++) {
        const ct_proc *p = &m->procs[i];
        ct_breakdown b;
        int known = ct_report_proc_breakdown(p, &b) && b.window;
        ct_json_obj(j);
        ct_json_key(j, "rank");
        if (p->rank >= 0)
            ct_json_i64(j, p->rank);
        else
            ct_json_null(j);
        CT_JK_U64(j, "pid", p->pid);
        CT_JK_STR(j, "host", p->host);
        CT_JK_U64(j, "wall_ns", wall_of(p));
        ct_json_key(j, "gpu_busy_pct");
        if (known)
            ct_json_num(j, 100.0 * (double)b.busy / (double)b.window);
        else
            ct_json_null(j);
        ct_json_key(j, "gpu_idle_pct");
        if (known)
            ct_json_num(j, 100.0 * (double)b.idle / (double)b.window);
        else
            ct_json_null(j);
        CT_JK_U64(j, "peak_vram_bytes", ct_report_proc_peak(p));
        CT_JK_STR(j, "top_kernel", p->top_kernel);
        const char *s = ct_report_straggler(m, p);
        ct_json_key(j, "straggler");
        if (s)
            ct_json_str(j, s);
        else
            ct_json_null(j);
        ct_json_end_obj(j);
    }
    ct_json_end_arr(j);
}

static void json_opt_num(ct_json *j, const char *k, int known, double v)
{
    ct_json_key(j, k);
    if (known)
        ct_json_num(j, v);
    else
        ct_json_null(j);
}

/* cuBLAS / cuBLASLt products per shape and type (JSON.md "gemm"). */
static void json_gemm(ct_json *j, const ct_report_opts *o)
{
    ct_json_key(j, "gemm");
    ct_json_arr(j);
    for (size_t i = 0; i < o->ngemm; i++) {
        const ct_gemm_row *r = &o->gemm[i];
        const ct_rec_gemm *s = &r->shape;
        char t[4][16];
        ct_json_obj(j);
        CT_JK_STR(j, "function", r->api);
        CT_JK_STR(j, "device", r->device);
        CT_JK_U64(j, "m", s->m);
        CT_JK_U64(j, "n", s->n);
        CT_JK_U64(j, "k", s->k);
        CT_JK_U64(j, "batch", s->batch);
        CT_JK_STR(j, "a_type", ct_gemm_type_name(s->a_type, t[0], 16));
        CT_JK_STR(j, "b_type", ct_gemm_type_name(s->b_type, t[1], 16));
        CT_JK_STR(j, "c_type", ct_gemm_type_name(s->c_type, t[2], 16));
        CT_JK_STR(j, "d_type", ct_gemm_type_name(s->d_type, t[3], 16));
        CT_JK_U64(j, "compute_type", s->compute_type);
        CT_JK_U64(j, "trans_a", s->trans_a);
        CT_JK_U64(j, "trans_b", s->trans_b);
        CT_JK_U64(j, "calls", r->calls);
        CT_JK_U64(j, "timed_calls", r->timed_calls);
        CT_JK_U64(j, "kernels", r->kernels);
        CT_JK_U64(j, "gpu_ns", r->gpu_ns);
        CT_JK_NUM(j, "flops_per_call", r->flops);
        json_opt_num(j, "bytes_per_call", r->bytes > 0, r->bytes);
        json_opt_num(j, "tflops", r->gpu_ns != 0, r->tflops);
        json_opt_num(j, "intensity", r->intensity > 0, r->intensity);
        ct_json_key(j, "peak_kind");
        if (r->peak_name)
            ct_json_str(j, r->peak_name);
        else
            ct_json_null(j);
        json_opt_num(j, "peak_tflops", r->peak_name != NULL, r->peak_tflops);
        json_opt_num(j, "mem_gbps", r->mem_gbps > 0, r->mem_gbps);
        json_opt_num(j, "ridge", r->ridge > 0, r->ridge);
        CT_JK_STR(j, "verdict", r->verdict ? r->verdict : "peak unknown");
        ct_json_end_obj(j);
    }
    ct_json_end_arr(j);
}

void ct_report_json(FILE *f, const ct_model *m, const ct_diag *dg, int ndiag, const ct_report_opts *o)
{
    ct_json j;
    ct_json_init(&j, f, 1);
    ct_json_obj(&j);
    CT_JK_I64(&j, "schema_version", CT_SCHEMA_VERSION);
    CT_JK_STR(&j, "tool", "cutrace summary");
    CT_JK_U64(&j, "records", m->records);
    CT_JK_NUM(&j, "min_saving_pct", o->diag ? o->diag->min_saving_pct : 1.0);
    json_processes(&j, m);
    json_stats(&j, "kernels", m->kernels, &m->kernel_names, ct_map_count(&m->kernel_names), 0, 0, m);
    if (o->variants)
        json_stats(&j, "kernel_variants", m->variant_stats, &m->variants, ct_map_count(&m->variants),
                   0, 0, m);
    json_gemm(&j, o);
    ct_json_key(&j, "copies");
    ct_json_arr(&j);
    for (int op = 0; op < CT_OP_N; op++)
        for (int hk = 0; hk < CT_HK_N; hk++) {
            const ct_copystat *c = &m->copies[op][hk];
            if (!c->count)
                continue;
            ct_json_obj(&j);
            CT_JK_STR(&j, "op", ct_op_names[op]);
            CT_JK_STR(&j, "host_kind", ct_hk_names[hk]);
            CT_JK_U64(&j, "count", c->count);
            CT_JK_U64(&j, "bytes", c->bytes);
            ct_copyshown sh = ct_copy_shown(c);
            CT_JK_U64(&j, "timed_count", c->timed + c->bounded);
            CT_JK_U64(&j, "end_bounded", c->bounded);
            ct_json_key(&j, "upper_bounds");
            ct_json_bool(&j, sh.upper);
            CT_JK_U64(&j, "timed_bytes", sh.bytes);
            ct_json_key(&j, "total_ns");
            if (sh.n)
                ct_json_u64(&j, sh.ns);
            else
                ct_json_null(&j);
            ct_json_key(&j, "gbps");
            if (sh.n && sh.ns)
                ct_json_num(&j, gbps(sh.bytes, sh.ns));
            else
                ct_json_null(&j);
            ct_json_key(&j, "peak_pct");
            if (sh.n && sh.ns && c->peak_bps > 0)
                ct_json_num(&j, 100.0 * gbps(sh.bytes, sh.ns) * 1e9 / c->peak_bps);
            else
                ct_json_null(&j);
            ct_json_end_obj(&j);
        }
    ct_json_end_arr(&j);
    json_stats(&j, "api", m->api, &m->api_names, ct_map_count(&m->api_names), 0, 1, m);
    json_vram(&j, m);
    json_breakdown(&j, m);
    json_ranks(&j, m);
    json_diag(&j, dg, ndiag);
    ct_json_end_obj(&j);
}
