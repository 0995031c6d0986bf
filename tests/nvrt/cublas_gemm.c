/* A plain C program on cuBLAS, built and linked as a user would (gcc, -lcublas -lcudart):
 * C = A * B for 64 x 64 single-precision matrices with cublasSgemm, then C read back and
 * compared with a CPU product; then a half-precision cublasGemmEx (FP32 compute, which cuBLAS
 * hands to cuBLASLt) and a cublasSgemmStridedBatched of 4. Prints the status codes and the
 * comparison:
 *
 *   cublas_gemm: create=S malloc=E h2d=E gemm=S d2h=E sync=E gemm_ex=S batched=S destroy=S
 *   cublas_gemm: c_matches_cpu=0|1 c_unchanged=0|1
 *
 * (c_unchanged: C still holds the sentinel written before the GEMM, i.e. no kernel wrote it.)
 * Exits 0 when every status is success, whatever the comparison says. */
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

int main(void)
{
    static float a[N * N], b[N * N], c[N * N], ref[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)(i % 7) - 3.0f;
        b[i] = (float)(i % 5) * 0.5f;
        c[i] = -12345.0f; /* the sentinel */
    }
    for (int i = 0; i < N; i++) /* column-major, as cuBLAS */
        for (int j = 0; j < N; j++) {
            float s = 0;
            for (int k = 0; k < N; k++)
                s += a[k * N + i] * b[j * N + k];
            ref[j * N + i] = s;
        }
    size_t bytes = sizeof a;
    cublasHandle_t h;
    int create = cublasCreate(&h);
    float *da, *db, *dc;
    int malloc_err = cudaMalloc((void **)&da, bytes) | cudaMalloc((void **)&db, bytes) |
                     cudaMalloc((void **)&dc, bytes);
    int h2d = cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice) |
              cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice) |
              cudaMemcpy(dc, c, bytes, cudaMemcpyHostToDevice);
    const float alpha = 1.0f, beta = 0.0f;
    int gemm = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, da, N, db, N, &beta, dc, N);
    int d2h = cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost);
    int sync = cudaDeviceSynchronize();
    /* the same buffers as 64 x 64 halves, and as a batch of 4 16 x 16 products */
    int gemm_ex = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &alpha, da, CUDA_R_16F, N, db,
                               CUDA_R_16F, N, &beta, dc, CUDA_R_16F, N, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT);
    int batched = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &alpha, da,
                                            16, 256, db, 16, 256, &beta, dc, 16, 256, 4);
    sync |= cudaDeviceSynchronize();
    int destroy = cublasDestroy(h);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    printf("cublas_gemm: create=%d malloc=%d h2d=%d gemm=%d d2h=%d sync=%d gemm_ex=%d batched=%d "
           "destroy=%d\n", create, malloc_err, h2d, gemm, d2h, sync, gemm_ex, batched, destroy);
    int matches = 1, unchanged = 1;
    for (int i = 0; i < N * N; i++) {
        matches &= fabsf(c[i] - ref[i]) <= 1e-3f * (1.0f + fabsf(ref[i]));
        unchanged &= c[i] == -12345.0f;
    }
    printf("cublas_gemm: c_matches_cpu=%d c_unchanged=%d\n", matches, unchanged);
    return create || malloc_err || h2d || gemm || d2h || sync || gemm_ex || batched || destroy;
}
