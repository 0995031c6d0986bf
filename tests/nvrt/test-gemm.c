/* cuBLAS and cuBLASLt GEMMs traced (tests/workloads/cublas_roofline.c on NVIDIA's runtime over
 * the simulated driver): the GEMM records carry what the program passed, cuBLAS's kernels are
 * children of the calls that launched them, and the summary's FLOPs, TFLOP/s, intensity and
 * roofline verdict equal what this file computes from the program's dimensions, the kernel
 * duration the simulation is told (FAKECUDA_KERNEL_NS) and NVIDIA's datasheets. A synthetic
 * trace covers what the simulation has no device for: a GPU of unknown peak. */
#include "nv.h"
#include "tr.h"

#include <library_types.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Every kernel takes this long on the simulated GPU. */
#define GEMM_KERNEL_NS 2000000.0

typedef struct {
    const char *fn;
    uint64_t m, n, k, batch;
    uint32_t type;                /* A, B, C and D */
    unsigned elem;                /* its size in bytes */
    uint32_t ta, tb;
    double peak_tflops;           /* H100 SXM dense, NVIDIA H100 datasheet: FP32 67, FP16 tensor
                                   * core 1979 with sparsity, 989.5 dense */
} gemm_want;

/* What tests/workloads/cublas_roofline.c passes (compute type 68, CUBLAS_COMPUTE_32F, in all). */
static const gemm_want gemm_wants[] = {
    {"cublasSgemm_v2", 1024, 1024, 1024, 1, CUDA_R_32F, 4, 0, 0, 67},
    {"cublasGemmEx", 1024, 512, 256, 1, CUDA_R_16F, 2, 1, 0, 989.5},
    {"cublasSgemmStridedBatched", 64, 64, 64, 8, CUDA_R_32F, 4, 0, 0, 67},
    {"cublasLtMatmul", 2048, 2048, 2048, 1, CUDA_R_16F, 2, 0, 1, 989.5},
};
#define GEMM_N (sizeof gemm_wants / sizeof gemm_wants[0])

/* Relative difference. The JSON writes non-integral numbers with 6 significant digits: 1e-5
 * is the tolerance of an exact figure. */
#define JSON_EXACT 1e-5
static double rel(double a, double b)
{
    return fabs(a - b) / (fabs(b) > 0 ? fabs(b) : 1);
}

TEST_IMPL(cublas_gemm_roofline)
{
    char dir[4096];
    ctt_proc p;
    const char *const env[] = {"FAKECUDA_KERNEL_NS=*=2000000", NULL};
    if (nv_trace(&p, dir, "roofline", NV_NVIDIA, "tests/workloads/cublas_roofline", NULL, env) != 0)
        return 1;
    if (!p.exited || p.code != 0)
        fprintf(stderr, "cublas_roofline: %s%s", p.out, p.err);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    /* statuses only: the simulation launches cuBLAS's kernels without executing them */
    ASSERT_CONTAINS(p.out, "cublas_roofline: create=0 malloc=0 sgemm=0 gemm_ex=0 batched=0 lt=0 "
                           "lt_refused=7 sync=0 destroy=0\n"); /* CUBLAS_STATUS_INVALID_VALUE */
    ctt_proc_free(&p);

    /* the records: one GEMM per call, as passed; every kernel a child of one of them; the
     * refused call's descriptors left unread */
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    uint64_t corr[GEMM_N] = {0};
    size_t kernels[GEMM_N] = {0}, refused = 0;
    ASSERT_INT(tr_count(&t, CT_REC_GEMM, NULL), ==, GEMM_N + 1);
    for (size_t i = 0; i < t.n; i++) {
        if (t.v[i].r.type != CT_REC_GEMM)
            continue;
        const ct_rec_gemm *g = &t.v[i].r.u.gemm;
        const tr_rec *api = tr_api(&t, g->corr);
        ASSERT(api);
        ASSERT(api->r.u.api.flags & CT_API_LIBRARY);
        if (api->r.u.api.result != 0) {
            ASSERT_STR(api->name, "cublasLtMatmul");
            ASSERT_INT(api->r.u.api.result, ==, 7);
            ASSERT_UINT(g->flags, ==, CT_GEMM_UNREAD);
            ASSERT_UINT(g->m | g->n | g->k | g->batch, ==, 0);
            refused++;
            continue;
        }
        size_t w = 0;
        while (w < GEMM_N && strcmp(gemm_wants[w].fn, api->name) != 0)
            w++;
        if (w == GEMM_N || corr[w]) {
            ctt_fail_at(__FILE__, __LINE__, "GEMM record of %s: expected one of each "
                            "function the program calls", api->name);
            return 1;
        }
        const gemm_want *e = &gemm_wants[w];
        corr[w] = g->corr;
        ASSERT_UINT(g->m, ==, e->m);
        ASSERT_UINT(g->n, ==, e->n);
        ASSERT_UINT(g->k, ==, e->k);
        ASSERT_UINT(g->batch, ==, e->batch);
        ASSERT_UINT(g->a_type, ==, e->type);
        ASSERT_UINT(g->b_type, ==, e->type);
        ASSERT_UINT(g->c_type, ==, e->type);
        ASSERT_UINT(g->d_type, ==, e->type);
        ASSERT_UINT(g->compute_type, ==, 68);
        ASSERT_UINT(g->trans_a, ==, e->ta);
        ASSERT_UINT(g->trans_b, ==, e->tb);
        ASSERT_UINT(g->flags, ==, 0);
    }
    size_t launches = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.v[i].r.type != CT_REC_LAUNCH)
            continue;
        launches++;
        const char *name = t.v[i].name;
        /* cuBLAS's names, e.g. sm80_xmma_gemm_f32f32_..., nvjet_sm90_hsh_... */
        ASSERT(name && strstr(name, "sm") && (strstr(name, "gemm") || strstr(name, "nvjet")));
        const tr_rec *api = tr_api(&t, t.v[i].r.u.launch.corr);
        ASSERT(api);
        size_t w = 0;
        while (w < GEMM_N && corr[w] != api->r.u.api.parent)
            w++;
        if (w == GEMM_N) {
            ctt_fail_at(__FILE__, __LINE__, "kernel %s: its launch's parent %llu is none of "
                            "the GEMM calls", name, (unsigned long long)api->r.u.api.parent);
            return 1;
        }
        kernels[w]++;
    }
    /* what each GEMM's kernel records hold of their launch calls: a kernel on an idle stream is
     * recorded from the call's submission and began somewhere before the call returned */
    double in_call[GEMM_N] = {0};
    for (size_t i = 0; i < t.n; i++) {
        if (t.v[i].r.type != CT_REC_GPU)
            continue;
        const tr_rec *api;
        uint64_t ns = tr_in_call_ns(&t, &t.v[i].r, &api);
        size_t w = 0;
        while (api && w < GEMM_N && corr[w] != api->r.u.api.parent)
            w++;
        if (api && w < GEMM_N)
            in_call[w] += (double)ns;
    }
    tr_free(&t);
    ASSERT_INT(refused, ==, 1);
    ASSERT(launches >= GEMM_N);

    /* the summary's figures, against the program's dimensions and the kernels' duration; the
     * refused call is none of its rows */
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *rows = tj_get(s, "gemm");
    ASSERT(rows && rows->n == GEMM_N);
    /* the simulated H100's memory: 2619 MHz, 5120 bits, two transfers a clock */
    const double bw = 2619000e3 * 2 * 5120 / 8;
    for (size_t w = 0; w < GEMM_N; w++) {
        const gemm_want *e = &gemm_wants[w];
        const tj *r = tj_find(rows, "function", e->fn);
        ASSERT(r);
        double flops = 2.0 * (double)(e->m * e->n * e->k * e->batch);
        double bytes = (double)e->batch * e->elem *
                       (double)(e->m * e->k + e->k * e->n + 2 * e->m * e->n);
        double tflops = flops / ((double)kernels[w] * GEMM_KERNEL_NS) / 1e3;
        double ridge = e->peak_tflops * 1e12 / bw;
        ASSERT_INT(tj_num(r, "calls"), ==, 1);
        ASSERT_INT(tj_num(r, "kernels"), ==, (long long)kernels[w]);
        ASSERT(tj_num(r, "flops_per_call") == flops);
        ASSERT(tj_num(r, "bytes_per_call") == bytes);
        ASSERT(rel(tj_num(r, "intensity"), flops / bytes) < JSON_EXACT);
        /* a GPU record encloses the kernel, early by the driver's submission time (~1 us), or
         * by as much of its launch call as the host spent descheduled before the kernel began
         * (14.5 us of a 2 ms kernel beside two CPU hogs): at most its part inside the call */
        double longest = (double)kernels[w] * GEMM_KERNEL_NS + in_call[w];
        double slowest = flops / longest / 1e3, got = tj_num(r, "tflops");
        if (got > tflops * 1.005 || got < slowest * 0.995) {
            ctt_fail_at(__FILE__, __LINE__, "%s: %.6f TFLOP/s, expected %.6f, at least %.6f "
                            "(%zu kernels of %.0f ns, their records %.0f ns inside their calls)",
                            e->fn, got, tflops, slowest, kernels[w], GEMM_KERNEL_NS, in_call[w]);
            return 1;
        }
        ASSERT(tj_num(r, "peak_tflops") == e->peak_tflops);
        ASSERT(rel(tj_num(r, "ridge"), ridge) < JSON_EXACT);
        ASSERT_STR(tj_str(r, "verdict"), flops / bytes >= ridge ? "compute-bound" : "memory-bound");
    }
    /* the program's shapes lie on both sides of the ridge */
    ASSERT_STR(tj_str(tj_find(rows, "function", "cublasSgemm_v2"), "verdict"), "compute-bound");
    ASSERT_STR(tj_str(tj_find(rows, "function", "cublasGemmEx"), "verdict"), "memory-bound");
    tj_free(s);
    return 0;
}

/* ---- a device the datasheet table does not know, and a GEMM nested in another ---------------- */

static int enc_ok(int rc)
{
    if (rc != 0)
        fprintf(stderr, "test-gemm: encoding a record failed: %d\n", rc);
    return rc == 0;
}

/* Writes dir/gemm.cutrace: one process on an "NVIDIA GeForce RTX 4090" (1313 MHz memory clock,
 * 384-bit bus), a cublasSgemm_v2 of 512^3 (FP32) launching one kernel of 1 ms, and a
 * cublasGemmEx of 256^3 (FP16) whose kernel (0.5 ms) nests in a cublasLtMatmul nested in it,
 * its GPU record ending before the call returns. Returns 0 or -1. */
static int write_trace(const char *dir)
{
    char path[4200], scratch[1 << 14];
    snprintf(path, sizeof path, "%s/gemm.cutrace", dir);
    ct_header h;
    if (ct_header_collect(&h, "test", "", scratch, sizeof scratch) != 0)
        return -1;
    ct_writer *w;
    ct_writer_opts o = {0};
    if (ct_writer_open(&w, path, &h, &o) != 0)
        return -1;
    static uint8_t buf[1 << 16];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    static const char *const strs[] = {"", "cublasSgemm_v2", "cuLaunchKernelEx",
                                       "NVIDIA GeForce RTX 4090", "sm89_xmma_gemm_f32f32",
                                       "cublasGemmEx", "cublasLtMatmul", "nvjet_sm89_hsh"};
    int ok = 1;
    for (uint32_t i = 1; i < sizeof strs / sizeof *strs; i++)
        ok &= enc_ok(ct_enc_string(&e, 1000, i, strs[i], strlen(strs[i])));
    ct_rec_device d = {.device = 0, .name = 3, .cc_major = 8, .cc_minor = 9, .sm_count = 128,
                       .mem_clock_khz = 1313000, .mem_bus_bits = 384, .mem_bytes = 24ull << 30};
    ok &= enc_ok(ct_enc_device(&e, 1000, &d));
    /* t in us from 10 ms */
#define T(us) (10000000ull + (us) * 1000ull)
    ct_rec_api launch = {T(1), 2, 0, 11, 10, CT_API_DRIVER, 0};
    ct_rec_launch l = {.corr = 11, .function = 4, .grid = {8, 8, 1}, .block = {128, 1, 1}};
    ct_rec_api sgemm = {T(0), 1, 0, 10, 0, CT_API_LIBRARY, 0};
    ct_rec_gemm g = {10, 512, 512, 512, 1, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, 68, 0,
                     0, 0};
    ok &= enc_ok(ct_enc_api(&e, T(5), &launch)) && enc_ok(ct_enc_launch(&e, T(5), &l));
    ok &= enc_ok(ct_enc_api(&e, T(6), &sgemm)) && enc_ok(ct_enc_gemm(&e, T(6), &g));
    /* the nested chain: GemmEx (20) > LtMatmul (21) > launch (22) */
    ct_rec_api launch2 = {T(2000), 2, 0, 22, 21, CT_API_DRIVER, 0};
    ct_rec_launch l2 = {.corr = 22, .function = 7, .grid = {4, 4, 1}, .block = {128, 1, 1}};
    ct_rec_api lt = {T(1999), 6, 0, 21, 20, CT_API_LIBRARY, 0};
    ct_rec_gemm g2 = {21, 256, 256, 256, 1, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, 68, 0,
                      0, 0};
    ct_rec_api gemm_ex = {T(1998), 5, 0, 20, 0, CT_API_LIBRARY, 0};
    ct_rec_gemm g3 = g2;
    g3.corr = 20;
    ok &= enc_ok(ct_enc_api(&e, T(2005), &launch2)) && enc_ok(ct_enc_launch(&e, T(2005), &l2));
    ct_rec_gpu k2 = {T(2010), 22, 0, CT_GPU_KERNEL, 0, 0};
    ok &= enc_ok(ct_enc_gpu(&e, T(2510), &k2));
    ok &= enc_ok(ct_enc_api(&e, T(2600), &lt)) && enc_ok(ct_enc_gemm(&e, T(2600), &g2));
    ok &= enc_ok(ct_enc_api(&e, T(2601), &gemm_ex)) && enc_ok(ct_enc_gemm(&e, T(2601), &g3));
    ct_rec_gpu k1 = {T(10), 11, 0, CT_GPU_KERNEL, 0, 0};
    ok &= enc_ok(ct_enc_gpu(&e, T(1010), &k1));
    ct_rec_end end = {CT_END_EXIT, 0, 20, 0};
    ok &= enc_ok(ct_enc_end(&e, T(3000), &end));
#undef T
    ct_chunk_info ci = {.tid = 4242};
    ct_enc_chunk_info(&e, &ci);
    ok &= ct_writer_chunk(w, &e, &ci, 1) == 0;
    return ct_writer_close(w) == 0 && ok ? 0 : -1;
}

TEST_IMPL(gemm_peak_unknown_and_nested_calls)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/gemm", ctt_tmpdir());
    ASSERT_INT(mkdir(dir, 0700), ==, 0);
    ASSERT_INT(write_trace(dir), ==, 0);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *rows = tj_get(s, "gemm");
    /* the cublasLtMatmul inside cublasGemmEx is not a product of its own */
    ASSERT(rows && rows->n == 2);
    const tj *sg = tj_find(rows, "function", "cublasSgemm_v2");
    const tj *ex = tj_find(rows, "function", "cublasGemmEx");
    ASSERT(sg && ex);
    ASSERT_STR(tj_str(sg, "device"), "NVIDIA GeForce RTX 4090");
    ASSERT_INT(tj_num(sg, "gpu_ns"), ==, 1000000);
    ASSERT(rel(tj_num(sg, "tflops"), 2.0 * 512 * 512 * 512 / 1e6 / 1e3) < JSON_EXACT);
    ASSERT(rel(tj_num(sg, "intensity"), 2.0 * 512 / (4 * 4)) < JSON_EXACT);
    /* its memory bandwidth is known, its peak is not */
    ASSERT(rel(tj_num(sg, "mem_gbps"), 1313000e3 * 2 * 384 / 8 / 1e9) < JSON_EXACT);
    ASSERT_STR(tj_str(sg, "verdict"), "peak unknown");
    ASSERT_INT(tj_get(sg, "peak_tflops")->type, ==, TJ_NULL);
    ASSERT_INT(tj_get(sg, "ridge")->type, ==, TJ_NULL);
    /* the nested call's kernel is the outer call's */
    ASSERT_INT(tj_num(ex, "gpu_ns"), ==, 500000);
    ASSERT_INT(tj_num(ex, "kernels"), ==, 1);
    ASSERT_STR(tj_str(ex, "verdict"), "peak unknown");
    tj_free(s);
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", dir), ==, 0);
    ASSERT_CONTAINS(p.out, "on NVIDIA GeForce RTX 4090: peak unknown for this device and data type");
    ctt_proc_free(&p);
    return 0;
}
