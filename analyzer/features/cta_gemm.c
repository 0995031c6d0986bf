#include "cta_gemm.h"

#include <library_types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_names.h" /* and cta_model.h, cta_map.h */

/* cublasComputeType_t (cublas_api.h), by value: the trace format records the number. */
enum {
    GEMM_COMPUTE_16F = 64, GEMM_COMPUTE_16F_PEDANTIC = 65, GEMM_COMPUTE_32F = 68,
    GEMM_COMPUTE_32F_PEDANTIC = 69, GEMM_COMPUTE_32F_FAST_16F = 74,
    GEMM_COMPUTE_32F_FAST_16BF = 75, GEMM_COMPUTE_32F_FAST_TF32 = 77, GEMM_COMPUTE_64F = 70,
    GEMM_COMPUTE_64F_PEDANTIC = 71,
};

/* Hashed as bytes: no padding. */
typedef struct {
    uint64_t corr;
    uint32_t file, zero;
} gemm_key;

typedef struct {
    ct_rec_gemm shape;
    int have_shape, have_api, nested, failed;
    const char *api;              /* owned copy */
    uint32_t device;
    int have_device;
    uint64_t kernels, gpu_ns;
} gemm_call;

struct cta_gemms {
    cta_map calls;                 /* gemm_key -> index in call */
    gemm_call *call;
    size_t cap;
    cta_map links;                 /* gemm_key of a nested call -> index in link_to */
    uint32_t *link_to;            /* the top-level GEMM call it nests in */
    size_t link_cap;
};

cta_gemms *cta_gemm_new(void)
{
    cta_gemms *g = cta_xmalloc(sizeof *g, "the GEMM table");
    cta_map_init(&g->calls);
    cta_map_init(&g->links);
    return g;
}

void cta_gemm_free(cta_gemms *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < cta_map_count(&g->calls); i++)
        free((char *)g->call[i].api);
    free(g->call);
    free(g->link_to);
    cta_map_free(&g->calls);
    cta_map_free(&g->links);
    free(g);
}

static gemm_call *call_of(cta_gemms *g, uint32_t file, uint64_t corr)
{
    gemm_key k = {corr, file, 0};
    int added;
    uint32_t i = cta_map_get(&g->calls, &k, sizeof k, &added);
    if (i >= g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 64;
        g->call = cta_xrealloc(g->call, cap * sizeof *g->call, "the GEMM table");
        memset(g->call + g->cap, 0, (cap - g->cap) * sizeof *g->call);
        g->cap = cap;
    }
    return &g->call[i];
}

void cta_gemm_merge(cta_gemms *dst, cta_gemms *src)
{
    size_t n = cta_map_count(&src->calls);
    uint32_t *at = cta_xmalloc((n + 1) * sizeof *at, "the GEMM table");
    for (size_t i = 0; i < n; i++) {
        const gemm_key *k = (const gemm_key *)cta_map_key(&src->calls, (uint32_t)i);
        gemm_call *c = call_of(dst, k->file, k->corr);
        *c = src->call[i];
        src->call[i].api = NULL; /* moved */
        at[i] = cta_map_find(&dst->calls, k, sizeof *k);
    }
    for (size_t l = 0; l < cta_map_count(&src->links); l++) {
        int added;
        uint32_t d = cta_map_take(&dst->links, &src->links, (uint32_t)l, &added);
        if (d >= dst->link_cap) {
            dst->link_cap = dst->link_cap ? 2 * dst->link_cap : 64;
            dst->link_to = cta_xrealloc(dst->link_to, dst->link_cap * sizeof *dst->link_to, "the GEMM table");
        }
        dst->link_to[d] = at[src->link_to[l]];
    }
    free(at);
}

void cta_gemm_api(cta_gemms *g, uint32_t file, const ct_rec_api *a, const char *name,
                 const uint64_t *nested, size_t nnested)
{
    gemm_call *c = call_of(g, file, a->corr);
    uint32_t top = cta_map_find(&g->calls, &(gemm_key){a->corr, file, 0}, sizeof(gemm_key));
    c->have_api = 1;
    c->nested = a->parent != 0;
    c->failed = a->result != 0;
    if (!c->api) {
        size_t n = strlen(name) + 1;
        c->api = memcpy(cta_xmalloc(n, "the GEMM table"), name, n);
    }
    if (c->nested)
        return;
    for (size_t i = 0; i < nnested; i++) {
        gemm_key k = {nested[i], file, 0};
        int added;
        uint32_t l = cta_map_get(&g->links, &k, sizeof k, &added);
        if (l >= g->link_cap) {
            g->link_cap = g->link_cap ? 2 * g->link_cap : 64;
            g->link_to = cta_xrealloc(g->link_to, g->link_cap * sizeof *g->link_to, "the GEMM table");
        }
        g->link_to[l] = top;
    }
}

void cta_gemm_rec(cta_gemms *g, uint32_t file, const ct_rec_gemm *r)
{
    gemm_call *c = call_of(g, file, r->corr);
    c->shape = *r;
    c->have_shape = 1;
}

void cta_gemm_gpu(cta_gemms *g, uint32_t file, const ct_rec_gpu *r, uint64_t end)
{
    if (r->kind != CT_GPU_KERNEL)
        return;
    uint32_t l = cta_map_find(&g->links, &(gemm_key){r->corr, file, 0}, sizeof(gemm_key));
    if (l == UINT32_MAX)
        return;
    gemm_call *c = &g->call[g->link_to[l]];
    c->kernels++;
    c->gpu_ns += end - (r->start <= end ? r->start : end);
    if (!c->have_device) {
        c->device = r->device;
        c->have_device = 1;
    }
}

/* ---- figures ------------------------------------------------------------------------------ */

unsigned cta_gemm_elem_bytes(uint32_t type)
{
    switch (type) {
    case CUDA_R_8I: case CUDA_R_8U: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2: return 1;
    case CUDA_R_16F: case CUDA_R_16BF: case CUDA_C_8I: case CUDA_C_8U: return 2;
    case CUDA_R_32F: case CUDA_C_16F: case CUDA_C_16BF: case CUDA_R_32I: return 4;
    case CUDA_R_64F: case CUDA_C_32F: case CUDA_C_32I: return 8;
    case CUDA_C_64F: return 16;
    default: return 0;
    }
}

const char *cta_gemm_type_name(uint32_t type, char *buf, size_t n)
{
    switch (type) {
    case CUDA_R_16F: return "FP16";
    case CUDA_R_16BF: return "BF16";
    case CUDA_R_32F: return "FP32";
    case CUDA_R_64F: return "FP64";
    case CUDA_C_16F: return "C16";
    case CUDA_C_32F: return "C32";
    case CUDA_C_64F: return "C64";
    case CUDA_R_8I: return "INT8";
    case CUDA_R_32I: return "INT32";
    case CUDA_R_8F_E4M3: return "FP8-E4M3";
    case CUDA_R_8F_E5M2: return "FP8-E5M2";
    default: snprintf(buf, n, "type %u", type); return buf;
    }
}

static int is_complex(uint32_t t)
{
    return t == CUDA_C_16F || t == CUDA_C_16BF || t == CUDA_C_32F || t == CUDA_C_64F ||
           t == CUDA_C_8I || t == CUDA_C_8U || t == CUDA_C_32I;
}

/* Dense peaks in TFLOP/s from NVIDIA's datasheets (the sparsity figures halved where a
 * datasheet gives only those):
 *   H100 SXM5 (NVIDIA H100 Tensor Core GPU datasheet): FP64 tensor core 67, FP32 67, TF32 tensor
 *     core 494.5 (989 with sparsity), FP16 and BF16 tensor core 989.5 (1979), FP8 1979 (3958);
 *   A100 SXM4 and PCIe (NVIDIA A100 datasheet): FP64 tensor core 19.5, FP32 19.5, TF32 156,
 *     FP16 and BF16 tensor core 312;
 *   V100 SXM2 (NVIDIA V100 datasheet): FP64 7.8, FP32 15.7, tensor (FP16) 125;
 *   T4 (NVIDIA T4 datasheet): FP32 8.1, mixed precision (FP16/FP32) tensor 65.
 * A data type a datasheet does not give (FP64 on T4, TF32, BF16 or FP8 before them) has no peak. */
enum { PK_FP64, PK_FP32, PK_TF32, PK_FP16, PK_BF16, PK_FP8, PK_N };
static const char *const pk_name[PK_N] = {"FP64", "FP32", "TF32 tensor core", "FP16 tensor core",
                                          "BF16 tensor core", "FP8 tensor core"};
static const struct {
    const char *match, *also; /* the device name contains both (also may be NULL) */
    double tf[PK_N];
} pk_table[] = {
    {"H100", "HBM3", {67, 67, 494.5, 989.5, 989.5, 1979}},
    {"H100", "SXM", {67, 67, 494.5, 989.5, 989.5, 1979}},
    {"A100", NULL, {19.5, 19.5, 156, 312, 312, 0}},
    {"V100", "SXM2", {7.8, 15.7, 0, 125, 0, 0}},
    {"Tesla T4", NULL, {0, 8.1, 0, 65, 0, 0}},
};

static int peak_class(const ct_rec_gemm *s)
{
    uint32_t a = s->a_type, ct = s->compute_type;
    if (a == CUDA_R_8F_E4M3 || a == CUDA_R_8F_E5M2)
        return PK_FP8;
    if (ct == GEMM_COMPUTE_64F || ct == GEMM_COMPUTE_64F_PEDANTIC)
        return a == CUDA_R_64F || a == CUDA_C_64F ? PK_FP64 : -1;
    if (a == CUDA_R_16BF || a == CUDA_C_16BF || ct == GEMM_COMPUTE_32F_FAST_16BF)
        return PK_BF16;
    if (a == CUDA_R_16F || a == CUDA_C_16F || ct == GEMM_COMPUTE_16F ||
        ct == GEMM_COMPUTE_16F_PEDANTIC || ct == GEMM_COMPUTE_32F_FAST_16F)
        return PK_FP16;
    if (ct == GEMM_COMPUTE_32F_FAST_TF32)
        return PK_TF32;
    if ((a == CUDA_R_32F || a == CUDA_C_32F) &&
        (ct == GEMM_COMPUTE_32F || ct == GEMM_COMPUTE_32F_PEDANTIC))
        return PK_FP32;
    return -1;
}

double cta_gemm_peak(const char *device, const ct_rec_gemm *s, const char **what)
{
    *what = NULL;
    int k = peak_class(s);
    if (k < 0 || !device)
        return 0;
    for (size_t i = 0; i < sizeof pk_table / sizeof *pk_table; i++)
        if (strstr(device, pk_table[i].match) &&
            (!pk_table[i].also || strstr(device, pk_table[i].also))) {
            if (pk_table[i].tf[k] > 0)
                *what = pk_name[k];
            return pk_table[i].tf[k];
        }
    return 0;
}

/* The grouping key of a call: function, device name and the whole shape record but its corr
 * (the same product on the same kind of device, whichever process ran it). */
typedef struct {
    char api[64], device[128];
    ct_rec_gemm shape;
} row_key;

static int row_cmp(const void *a, const void *b)
{
    const cta_gemm_row *x = a, *y = b;
    if (x->gpu_ns != y->gpu_ns)
        return x->gpu_ns > y->gpu_ns ? -1 : 1;
    double fx = x->flops * (double)x->calls, fy = y->flops * (double)y->calls;
    return fx > fy ? -1 : fx < fy;
}

size_t cta_gemm_rows(const cta_gemms *g, cta_gemm_devfn dev, void *ctx, cta_gemm_row **rows)
{
    cta_map keys;
    cta_map_init(&keys);
    size_t n = 0, cap = 0;
    cta_gemm_row *out = NULL;
    double *timed_flops = NULL;
    for (size_t i = 0; g && i < cta_map_count(&g->calls); i++) {
        const gemm_call *c = &g->call[i];
        if (!c->have_shape || !c->have_api || c->nested || c->failed ||
            (c->shape.flags & CT_GEMM_UNREAD))
            continue;
        const gemm_key *ck = (const gemm_key *)cta_map_key(&g->calls, (uint32_t)i);
        const char *name = NULL;
        const ct_rec_device *d = c->have_device ? dev(ctx, ck->file, c->device, &name) : NULL;
        row_key k;
        memset(&k, 0, sizeof k);
        snprintf(k.api, sizeof k.api, "%s", c->api);
        snprintf(k.device, sizeof k.device, "%s", name ? name : "");
        k.shape = c->shape;
        k.shape.corr = 0;
        int added;
        uint32_t r = cta_map_get(&keys, &k, sizeof k, &added);
        if (added) {
            if (r >= cap) {
                cap = cap ? 2 * cap : 16;
                out = cta_xrealloc(out, cap * sizeof *out, "the GEMM rows");
                timed_flops = cta_xrealloc(timed_flops, cap * sizeof *timed_flops, "the GEMM rows");
            }
            memset(&out[r], 0, sizeof out[r]);
            timed_flops[r] = 0;
            n++;
            cta_gemm_row *w = &out[r];
            w->api = c->api;
            w->shape = k.shape;
            const ct_rec_gemm *s = &k.shape;
            double mult = is_complex(s->a_type) ? 4 : 1;
            w->flops = 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)s->batch * mult;
            unsigned ea = cta_gemm_elem_bytes(s->a_type), eb = cta_gemm_elem_bytes(s->b_type),
                     ec = cta_gemm_elem_bytes(s->c_type), ed = cta_gemm_elem_bytes(s->d_type);
            if (ea && eb && ec && ed)
                w->bytes = (double)s->batch * ((double)ea * (double)s->m * (double)s->k +
                                               (double)eb * (double)s->k * (double)s->n +
                                               (double)(ec + ed) * (double)s->m * (double)s->n);
            w->intensity = w->bytes > 0 ? w->flops / w->bytes : 0;
            w->device = name ? name : "";
            w->peak_tflops = cta_gemm_peak(name, s, &w->peak_name);
            if (d) {
                double bw = cta_dev_mem_peak(d);
                w->mem_gbps = bw / 1e9;
                if (w->peak_name && bw > 0) {
                    w->ridge = w->peak_tflops * 1e12 / bw;
                    if (w->intensity > 0)
                        w->verdict = w->intensity >= w->ridge ? "compute-bound" : "memory-bound";
                }
            }
        }
        cta_gemm_row *w = &out[r];
        w->calls++;
        w->kernels += c->kernels;
        w->gpu_ns += c->gpu_ns;
        if (c->gpu_ns) {
            w->timed_calls++;
            timed_flops[r] += w->flops;
        }
    }
    for (size_t r = 0; r < n; r++)
        out[r].tflops = out[r].gpu_ns ? timed_flops[r] / (double)out[r].gpu_ns / 1e3 : 0;
    free(timed_flops);
    cta_map_free(&keys);
    if (n > 1)
        qsort(out, n, sizeof *out, row_cmp);
    *rows = out;
    return n;
}
