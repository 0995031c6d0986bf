// A program built by nvcc -cudart shared, run unmodified on the simulation (tests/sim-runtime).
// Its kernels run through host implementations (host_kernels.c, FAKECUDA_HOST_KERNELS), so its
// results are exact and checkable. Built twice: with the legacy default stream, and with
// --default-stream per-thread (which makes nvcc call the _ptds/_ptsz runtime exports).
// Prints one line: "vecadd n=N stream_sum=S default_sum=D mismatches=M name=KERNEL max_threads=T".
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "fakecudart.h"

__global__ void vecadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

template <typename T> __global__ void scale(T *x, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "vecadd.cu:%d: %s returned %s (%d)\n", __LINE__, #call,            \
                    cudaGetErrorName(e_), (int)e_);                                            \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    fakecudart_require();
    const int n = argc > 1 ? atoi(argv[1]) : 1000;
    const size_t bytes = n * sizeof(float);
    float *pinned, *pageable = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    CHECK(cudaMallocHost(&pinned, bytes));
    for (int i = 0; i < n; i++) {
        pinned[i] = (float)i;
        pageable[i] = 2.0f * i;
    }
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMalloc(&c, bytes));
    CHECK(cudaMemcpy(a, pinned, bytes, cudaMemcpyDefault));
    CHECK(cudaMemcpy(b, pageable, bytes, cudaMemcpyHostToDevice));
    // A copy from pageable memory may return before its DMA lands, and a per-thread default
    // stream is not ordered with stream s below as the legacy one is: wait for the copies.
    CHECK(cudaDeviceSynchronize());

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    const int block = 256, grid = (n + block - 1) / block;
    vecadd<<<grid, block, 0, s>>>(a, b, c, n);
    scale<float><<<grid, block, 0, s>>>(c, 2.0f, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(pinned, c, bytes, cudaMemcpyDefault, s));
    CHECK(cudaStreamSynchronize(s));

    int mismatches = 0;
    double stream_sum = 0, default_sum = 0;
    for (int i = 0; i < n; i++) {
        mismatches += pinned[i] != 6.0f * i;
        stream_sum += pinned[i];
    }
    // On the default stream (legacy, or this thread's with per-thread): <<<>>>, then the
    // runtime's own cudaLaunchKernel, which nvcc-generated code never calls.
    vecadd<<<grid, block>>>(a, a, c, n);
    CHECK(cudaGetLastError());
    float half = 0.5f;
    void *args[] = {&c, &half, (void *)&n};
    CHECK(cudaLaunchKernel((const void *)scale<float>, dim3(grid), dim3(block), args, 0, 0));
    CHECK(cudaMemcpy(out, c, bytes, cudaMemcpyDefault));
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; i++) {
        mismatches += out[i] != (float)i;
        default_sum += out[i];
    }
    const char *name = NULL;
    CHECK(cudaFuncGetName(&name, (const void *)vecadd));
    cudaFuncAttributes fa;
    CHECK(cudaFuncSetAttribute((const void *)vecadd, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    CHECK(cudaFuncGetAttributes(&fa, (const void *)vecadd));
    printf("vecadd n=%d stream_sum=%.0f default_sum=%.0f mismatches=%d name=%s max_threads=%d\n", n,
           stream_sum, default_sum, mismatches, name, fa.maxThreadsPerBlock);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFreeHost(pinned));
    free(pageable);
    free(out);
    return mismatches != 0;
}
