#define _GNU_SOURCE
#include "ctp_blas.h"

#include "ctp_emit.h"
#include "ctp_real.h"

void ctp_on_gemm(ctp_call *c, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                int64_t k, cudaDataType a_type, cudaDataType b_type, cudaDataType c_type,
                cublasComputeType_t compute, int64_t batch)
{
    if (!c->th)
        return;
    ct_rec_gemm *g = ctp_emit_begin(c, CT_REC_GEMM, sizeof *g);
    if (!g)
        return;
    *g = (ct_rec_gemm){.corr = c->corr, .m = (uint64_t)m, .n = (uint64_t)n, .k = (uint64_t)k,
                       .batch = (uint64_t)batch, .a_type = (uint32_t)a_type,
                       .b_type = (uint32_t)b_type, .c_type = (uint32_t)c_type,
                       .d_type = (uint32_t)c_type, .compute_type = (uint32_t)compute,
                       .trans_a = (uint32_t)ta, .trans_b = (uint32_t)tb};
    ctp_emit_end(c);
}

typedef cublasStatus_t (*ctp_layout_get)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t,
                                        void *, size_t, size_t *);
typedef cublasStatus_t (*ctp_desc_get)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                      void *, size_t, size_t *);
static void *ctp_layout_get_fn, *ctp_desc_get_fn;

/* The getters from the cuBLASLt the program loaded (it called cublasLtMatmul, so it is loaded:
 * found by its soname, never loaded here). Resolved once; a race resolves twice, harmlessly.
 * errno is the program's again when the wrapper's ctp_finish runs. */
static void *ctp_lt_getter(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (!p) {
        p = ctp_lib_sym(name, "libcublasLt.so.13");
        __atomic_store_n(slot, p, __ATOMIC_RELAXED);
    }
    return p;
}

/* One attribute of `size` bytes (the size the header documents for it), 0 on success. */
static int ctp_layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                          void *buf, size_t size)
{
    ctp_layout_get get = (ctp_layout_get)ctp_lt_getter(&ctp_layout_get_fn,
                                                    "cublasLtMatrixLayoutGetAttribute");
    size_t written = 0;
    return !get || get(l, attr, buf, size, &written) != CUBLAS_STATUS_SUCCESS || written != size;
}

static int ctp_desc_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, int32_t *v)
{
    ctp_desc_get get = (ctp_desc_get)ctp_lt_getter(&ctp_desc_get_fn, "cublasLtMatmulDescGetAttribute");
    size_t written = 0;
    return !get || get(d, attr, v, sizeof *v, &written) != CUBLAS_STATUS_SUCCESS ||
           written != sizeof *v;
}

void ctp_on_gemm_lt(ctp_call *c, cublasStatus_t r, cublasLtMatmulDesc_t desc,
                   cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t cl,
                   cublasLtMatrixLayout_t d)
{
    if (!c->th)
        return;
    /* cublasLt.h: TYPE uint32_t, ROWS/COLS uint64_t, BATCH_COUNT int32_t; the descriptor's
     * COMPUTE_TYPE, TRANSA, TRANSB int32_t. op(A) is m x k and D m x n, so m and n are D's
     * rows and columns and k is A's columns, or its rows when A is transposed. */
    uint32_t type[4] = {0};
    uint64_t a_rows = 0, a_cols = 0, m = 0, n = 0;
    int32_t batch = 0, compute = 0, ta = 0, tb = 0;
    cublasLtMatrixLayout_t lay[4] = {a, b, cl, d};
    int bad = r != CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 4 && !bad; i++)
        bad = ctp_layout_attr(lay[i], CUBLASLT_MATRIX_LAYOUT_TYPE, &type[i], sizeof type[i]);
    bad = bad || ctp_layout_attr(a, CUBLASLT_MATRIX_LAYOUT_ROWS, &a_rows, sizeof a_rows) ||
          ctp_layout_attr(a, CUBLASLT_MATRIX_LAYOUT_COLS, &a_cols, sizeof a_cols) ||
          ctp_layout_attr(d, CUBLASLT_MATRIX_LAYOUT_ROWS, &m, sizeof m) ||
          ctp_layout_attr(d, CUBLASLT_MATRIX_LAYOUT_COLS, &n, sizeof n) ||
          ctp_layout_attr(d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch) ||
          ctp_desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute) ||
          ctp_desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta) ||
          ctp_desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb);
    ct_rec_gemm *g = ctp_emit_begin(c, CT_REC_GEMM, sizeof *g);
    if (!g)
        return;
    if (bad)
        *g = (ct_rec_gemm){.corr = c->corr, .flags = CT_GEMM_UNREAD};
    else
        *g = (ct_rec_gemm){.corr = c->corr, .m = m, .n = n,
                           .k = ta == CUBLAS_OP_N ? a_cols : a_rows, .batch = (uint64_t)batch,
                           .a_type = type[0], .b_type = type[1], .c_type = type[2],
                           .d_type = type[3], .compute_type = (uint32_t)compute,
                           .trans_a = (uint32_t)ta, .trans_b = (uint32_t)tb};
    ctp_emit_end(c);
}
