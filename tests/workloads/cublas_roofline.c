/* A plain C program on cuBLAS and cuBLASLt, built as a user would (gcc, -lcublasLt -lcublas
 * -lcudart), whose matrix products span the roofline: each GEMM is chosen so that its
 * arithmetic intensity lies clearly on one side of the device's ridge point.
 *
 *   cublasSgemm                1024 x 1024 x 1024, FP32          (intensity 128 FLOP/B)
 *   cublasGemmEx               1024 x 512 x 256, FP16 in and out, FP32 compute, A transposed
 *   cublasSgemmStridedBatched  64 x 64 x 64, batch 8, FP32       (intensity 8)
 *   cublasLtMatmul             2048 x 2048 x 2048, FP16 in and out, FP32 compute, B transposed
 *   cublasLtMatmul             refused: A's 1024 columns do not match B's 2048 rows
 *
 * On the simulation cuBLAS's kernels are launched but not executed (the simulated driver cannot
 * run their SASS), so the products are not computed: the program checks and prints every
 * status, nothing else:
 *
 *   cublas_roofline: create=S malloc=E sgemm=S gemm_ex=S batched=S lt=S lt_refused=S sync=E destroy=S
 *
 * Exits 0 when every status is success but the refused call's, which must be an error. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
    const size_t big = (size_t)2048 * 2048 * 4; /* the largest matrix: 2048^2 FP16, or 1024^2 FP32 */
    void *a, *b, *c;
    int malloc_err = cudaMalloc(&a, big) | cudaMalloc(&b, big) | cudaMalloc(&c, big);
    cublasHandle_t h;
    int create = cublasCreate(&h);
    const float one = 1.0f, zero = 0.0f;
    int sgemm = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, 1024, &one, a, 1024, b, 1024,
                            &zero, c, 1024);
    /* op(A) = A^T is 1024 x 256, so A is 256 x 1024 (lda 256) */
    int gemm_ex = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 1024, 512, 256, &one, a, CUDA_R_16F,
                               256, b, CUDA_R_16F, 256, &zero, c, CUDA_R_16F, 1024,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    int batched = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, a, 64,
                                            64 * 64, b, 64, 64 * 64, &zero, c, 64, 64 * 64, 8);

    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc, lbad;
    cublasOperation_t tb = CUBLAS_OP_T;
    int lts = cublasLtCreate(&lt);
    lts |= cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    lts |= cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    lts |= cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, 2048, 2048, 2048);
    lts |= cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, 2048, 2048, 2048);
    lts |= cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, 2048, 2048, 2048);
    lts |= cublasLtMatrixLayoutCreate(&lbad, CUDA_R_16F, 2048, 1024, 2048);
    size_t ws_size = 32u << 20;
    void *ws = NULL;
    malloc_err |= cudaMalloc(&ws, ws_size);
    lts |= cublasLtMatmul(lt, op, &one, a, la, b, lb, &zero, c, lc, c, lc, NULL, ws, ws_size, 0);
    int refused = cublasLtMatmul(lt, op, &one, a, lbad, b, lb, &zero, c, lc, c, lc, NULL, ws,
                                 ws_size, 0);
    int sync = cudaDeviceSynchronize();
    lts |= cublasLtMatrixLayoutDestroy(la) | cublasLtMatrixLayoutDestroy(lb) |
           cublasLtMatrixLayoutDestroy(lbad) |
           cublasLtMatrixLayoutDestroy(lc) | cublasLtMatmulDescDestroy(op) | cublasLtDestroy(lt);
    int destroy = cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(ws);
    printf("cublas_roofline: create=%d malloc=%d sgemm=%d gemm_ex=%d batched=%d lt=%d "
           "lt_refused=%d sync=%d destroy=%d\n", create, malloc_err, sgemm, gemm_ex, batched, lts,
           refused, sync, destroy);
    return create || malloc_err || sgemm || gemm_ex || batched || lts || !refused || sync ||
           destroy;
}
