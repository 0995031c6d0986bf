// Two host threads each launch a kernel on "the default stream" and wait for it. Built twice:
// with the legacy default stream the two kernels share one stream and run one after the other;
// with --default-stream per-thread each thread has its own and they overlap. Kernel durations
// come from FAKECUDA_KERNEL_NS; the kernel's host implementation (host_kernels.c) counts runs.
// Prints one line: "threads=2 runs=R elapsed_ms=MS".
#include <chrono>
#include <cstdio>
#include <thread>
#include <cuda_runtime.h>

#include "fakecudart.h"

__global__ void tick(int *runs)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        atomicAdd(runs, 1);
}

static void worker(int *runs, cudaError_t *status)
{
    tick<<<1, 32>>>(runs);
    *status = cudaGetLastError();
    if (*status == cudaSuccess)
        *status = cudaStreamSynchronize(0);
}

int main()
{
    fakecudart_require();
    int *runs, host = -1;
    cudaError_t s[2] = {cudaSuccess, cudaSuccess}, e;
    if ((e = cudaMalloc(&runs, sizeof(int))) != cudaSuccess || (e = cudaMemset(runs, 0, sizeof(int))) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess) {
        fprintf(stderr, "threads.cu: setup failed: %s\n", cudaGetErrorName(e));
        return 1;
    }
    auto t0 = std::chrono::steady_clock::now();
    std::thread a(worker, runs, &s[0]), b(worker, runs, &s[1]);
    a.join();
    b.join();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    for (cudaError_t st : s)
        if (st != cudaSuccess) {
            fprintf(stderr, "threads.cu: a worker failed: %s\n", cudaGetErrorName(st));
            return 1;
        }
    if ((e = cudaMemcpy(&host, runs, sizeof(int), cudaMemcpyDeviceToHost)) != cudaSuccess) {
        fprintf(stderr, "threads.cu: copy back failed: %s\n", cudaGetErrorName(e));
        return 1;
    }
    printf("threads=2 runs=%d elapsed_ms=%lld\n", host, (long long)ms);
    return 0;
}
