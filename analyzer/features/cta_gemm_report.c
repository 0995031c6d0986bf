/* The cuBLAS products as a feature of the model (cta_feature.h): its state, the second pass
 * that gives the products their kernels' GPU time, and its sections of the summary (the table
 * of rows cta_gemm_rows computes, text and JSON "gemm", after the kernel tables). */
#include "cta_enum_names.h"
#include "cta_gemm.h"
#include "cta_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model's state at the feature's slot (made by the first call or record seen). */
typedef struct {
    cta_gemms *g;
    cta_gemm_row *rows;   /* the table, once the second pass is done (cta_gemm_rows) */
    size_t nrows;
} gemm_state;

static cta_gemms *gemm_made(cta_model *m)
{
    gemm_state *st = m->feat[CTA_FEAT_GEMM];
    if (!st) {
        st = m->feat[CTA_FEAT_GEMM] = cta_xmalloc(sizeof *st, "the GEMM table");
        *st = (gemm_state){.g = cta_gemm_new()};
    }
    return st->g;
}

static void gemm_record(cta_model *m, cta_proc *p, const ct_rec *r)
{
    (void)p;
    cta_gemm_rec(gemm_made(m), r->file, &r->u.gemm);
}

static void gemm_library_call(cta_model *m, cta_proc *p, const ct_rec *r, const char *name,
                              const uint64_t *nested, size_t nnested)
{
    (void)p;
    cta_gemm_api(gemm_made(m), r->file, &r->u.api, name, nested, nnested);
}

static void gemm_merge(cta_model *dst, cta_model *src)
{
    const gemm_state *st = src->feat[CTA_FEAT_GEMM];
    if (st)
        cta_gemm_merge(gemm_made(dst), st->g);
}

static void gemm_free(cta_model *m)
{
    gemm_state *st = m->feat[CTA_FEAT_GEMM];
    if (!st)
        return;
    cta_gemm_free(st->g);
    free(st->rows);
    free(st);
}

/* The GPU records of the kernels the calls launched: a kernel's GPU record may come before the
 * call it nests in (cta_gemm.h), so they are joined in the second pass. */
static void gemm_pass2_record(cta_model *m, const ct_rec *r)
{
    cta_gemm_gpu(((gemm_state *)m->feat[CTA_FEAT_GEMM])->g, r->file, &r->u.gpu, r->ts);
}

static const ct_rec_device *gemm_device(void *ctx, uint32_t file, uint32_t device, const char **name)
{
    const cta_model *m = ctx;
    if (file >= m->nprocs || device >= CTA_MAX_DEV || !m->procs[file].dev[device].have_prop)
        return NULL;
    *name = m->procs[file].dev[device].name;
    return &m->procs[file].dev[device].prop;
}

static void gemm_pass2_finish(cta_model *m)
{
    gemm_state *st = m->feat[CTA_FEAT_GEMM];
    st->nrows = cta_gemm_rows(st->g, gemm_device, m, &st->rows);
}

/* One row per shape and type of cuBLAS / cuBLASLt product (cta_gemm.h has the definitions). */
static void gemm_text(FILE *f, const cta_model *m, int top)
{
    const gemm_state *st = m->feat[CTA_FEAT_GEMM];
    if (!st || !st->nrows)
        return;
    fprintf(f, "\n== GEMM (cuBLAS, cuBLASLt) ==\n");
    fprintf(f, "  FLOPs = 2*m*n*k*batch (complex: x4); intensity = FLOPs / bytes of A, B, C read and "
               "C written;\n  ridge = dense peak / memory bandwidth; GPU time: the kernels each "
               "call launched.\n");
    fprintf(f, "  %6s  %-22s %-26s %2s %12s %12s %9s %8s %9s %8s  %-13s  %s\n", "Calls",
            "m x n x k x batch", "A,B,C->D (compute)", "op", "GFLOP/call", "GPU time", "TFLOP/s",
            "FLOP/B", "peak", "ridge", "verdict", "function");
    size_t n = top > 0 && (size_t)top < st->nrows ? (size_t)top : st->nrows;
    for (size_t i = 0; i < n; i++) {
        const cta_gemm_row *r = &st->rows[i];
        const ct_rec_gemm *s = &r->shape;
        char shape[64], types[64], t[4][16], gpu[32], tf[16], pk[16], ridge[16], ai[16];
        snprintf(shape, sizeof shape, "%llux%llux%llux%llu", (unsigned long long)s->m,
                 (unsigned long long)s->n, (unsigned long long)s->k, (unsigned long long)s->batch);
        const char *ctn = cta_cublas_compute_name((int)s->compute_type);
        char ct[16];
        snprintf(ct, sizeof ct, "%u", s->compute_type);
        /* "CUBLAS_COMPUTE_32F_FAST_TF32" as "32F_FAST_TF32": the column says it is the compute */
        snprintf(types, sizeof types, "%s,%s,%s->%s (%s)", cta_gemm_type_name(s->a_type, t[0], 16),
                 cta_gemm_type_name(s->b_type, t[1], 16), cta_gemm_type_name(s->c_type, t[2], 16),
                 cta_gemm_type_name(s->d_type, t[3], 16),
                 ctn && !strncmp(ctn, "CUBLAS_COMPUTE_", 15) ? ctn + 15 : ctn ? ctn : ct);
        char ns[32];
        snprintf(gpu, sizeof gpu, "%s", r->gpu_ns ? cta_fmt_ns(ns, (double)r->gpu_ns) : "-");
        snprintf(tf, sizeof tf, r->gpu_ns ? "%.3f" : "-", r->tflops);
        snprintf(ai, sizeof ai, r->intensity > 0 ? "%.2f" : "-", r->intensity);
        snprintf(pk, sizeof pk, r->peak_name ? "%.1f" : "-", r->peak_tflops);
        snprintf(ridge, sizeof ridge, r->ridge > 0 ? "%.2f" : "-", r->ridge);
        fprintf(f, "  %6llu  %-22s %-26s %c%c %12.6f %12s %9s %8s %9s %8s  %-13s  %s\n",
                (unsigned long long)r->calls, shape, types, "NTC?"[s->trans_a < 3 ? s->trans_a : 3],
                "NTC?"[s->trans_b < 3 ? s->trans_b : 3], r->flops / 1e9, gpu, tf, ai, pk, ridge,
                r->verdict ? r->verdict : "peak unknown", r->api);
        if (r->peak_name)
            fprintf(f, "          on %s: %s dense peak %.1f TFLOP/s, memory %.0f GB/s\n", r->device,
                    r->peak_name, r->peak_tflops, r->mem_gbps);
        else
            fprintf(f, "          on %s: peak unknown for this device and data type\n",
                    *r->device ? r->device : "an unknown device (no kernel timed)");
    }
    cta_text_cut(f, n, st->nrows);
}

/* cuBLAS / cuBLASLt products per shape and type (JSON.md "gemm"). */
static void gemm_json(cta_json *j, const cta_model *m)
{
    const gemm_state *st = m->feat[CTA_FEAT_GEMM];
    size_t n = st ? st->nrows : 0;
    cta_json_key(j, "gemm");
    cta_json_arr(j);
    for (size_t i = 0; i < n; i++) {
        const cta_gemm_row *r = &st->rows[i];
        const ct_rec_gemm *s = &r->shape;
        char t[4][16];
        cta_json_obj(j);
        CTA_JK_STR(j, "function", r->api);
        CTA_JK_STR(j, "device", r->device);
        CTA_JK_U64(j, "m", s->m);
        CTA_JK_U64(j, "n", s->n);
        CTA_JK_U64(j, "k", s->k);
        CTA_JK_U64(j, "batch", s->batch);
        CTA_JK_STR(j, "a_type", cta_gemm_type_name(s->a_type, t[0], 16));
        CTA_JK_STR(j, "b_type", cta_gemm_type_name(s->b_type, t[1], 16));
        CTA_JK_STR(j, "c_type", cta_gemm_type_name(s->c_type, t[2], 16));
        CTA_JK_STR(j, "d_type", cta_gemm_type_name(s->d_type, t[3], 16));
        CTA_JK_U64(j, "compute_type", s->compute_type);
        const char *ctn = cta_cublas_compute_name((int)s->compute_type);
        cta_json_key(j, "compute_type_name");
        ctn ? cta_json_str(j, ctn) : cta_json_null(j);
        CTA_JK_U64(j, "trans_a", s->trans_a);
        CTA_JK_U64(j, "trans_b", s->trans_b);
        CTA_JK_U64(j, "calls", r->calls);
        CTA_JK_U64(j, "timed_calls", r->timed_calls);
        CTA_JK_U64(j, "kernels", r->kernels);
        CTA_JK_U64(j, "gpu_ns", r->gpu_ns);
        CTA_JK_NUM(j, "flops_per_call", r->flops);
        CTA_JK_NUM_IF(j, "bytes_per_call", r->bytes > 0, r->bytes);
        CTA_JK_NUM_IF(j, "tflops", r->gpu_ns != 0, r->tflops);
        CTA_JK_NUM_IF(j, "intensity", r->intensity > 0, r->intensity);
        cta_json_key(j, "peak_kind");
        if (r->peak_name)
            cta_json_str(j, r->peak_name);
        else
            cta_json_null(j);
        CTA_JK_NUM_IF(j, "peak_tflops", r->peak_name != NULL, r->peak_tflops);
        CTA_JK_NUM_IF(j, "mem_gbps", r->mem_gbps > 0, r->mem_gbps);
        CTA_JK_NUM_IF(j, "ridge", r->ridge > 0, r->ridge);
        CTA_JK_STR(j, "verdict", r->verdict ? r->verdict : "peak unknown");
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
}

const cta_feature cta_gemm_feature = {
    .name = "gemm",
    .types = 1ull << CT_REC_GEMM,
    .record = gemm_record,
    .library_call = gemm_library_call,
    .merge = gemm_merge,
    .free = gemm_free,
    .pass2_types = 1ull << CT_REC_GPU,
    .pass2_record = gemm_pass2_record,
    .pass2_finish = gemm_pass2_finish,
    .at = CTA_AT_KERNELS,
    .text = gemm_text,
    .json = gemm_json,
};
