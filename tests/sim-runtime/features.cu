// A program built by nvcc -cudart shared that uses the runtime API beyond plain launches and
// copies: device variables (cudaMemcpyTo/FromSymbol, cudaGetSymbolAddress/Size), launches with
// a configuration (cudaLaunchKernelEx) and cooperative launches, occupancy, stream capture into
// a graph and its launch. Kernels run through host implementations (host_kernels.c), so every
// result is compared with the same computation on the CPU. Prints one line:
// "features n=1000 symbol_size=S initial=I after_bump=B mismatches=M blocks_per_sm=K nodes=G
//  capture_ran=C graph_launches=L".
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "fakecudart.h"

__device__ int counter = 42;
__constant__ float coef[4];

__global__ void saxpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void bump(int *p)
{
    atomicAdd(p, 1);
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "features.cu:%d: %s returned %s (%d)\n", __LINE__, #call,          \
                    cudaGetErrorName(e_), (int)e_);                                            \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    // --any-runtime: also on NVIDIA's libcudart.so.13 (over the simulated driver), to compare.
    if (argc < 2 || strcmp(argv[1], "--any-runtime") != 0)
        fakecudart_require();
    const int n = 1000;
    int mismatches = 0;

    // Device variables: the image's initial value, a write through the symbol, one through the
    // address cudaGetSymbolAddress gives (a kernel's), and reads back both ways.
    size_t symbol_size = 0;
    CHECK(cudaGetSymbolSize(&symbol_size, coef));
    int initial = 0;
    CHECK(cudaMemcpyFromSymbol(&initial, counter, sizeof initial));
    const float c_in[4] = {1.5f, -2.0f, 0.25f, 8.0f};
    float c_out[4] = {0, 0, 0, 0};
    CHECK(cudaMemcpyToSymbol(coef, c_in, sizeof c_in));
    CHECK(cudaMemcpyFromSymbol(c_out + 1, coef, 3 * sizeof(float), sizeof(float)));
    mismatches += c_out[0] != 0 || memcmp(c_out + 1, c_in + 1, 3 * sizeof(float)) != 0;
    int *counter_addr = NULL;
    CHECK(cudaGetSymbolAddress((void **)&counter_addr, counter));
    bump<<<1, 1>>>(counter_addr);
    bump<<<1, 1>>>(counter_addr);
    CHECK(cudaGetLastError());
    int after_bump = 0;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMemcpyFromSymbolAsync(&after_bump, counter, sizeof after_bump, 0, cudaMemcpyDeviceToHost, 0));
    CHECK(cudaDeviceSynchronize());
    // Beyond the variable's end: the documented invalid value, and nothing copied.
    float too_many[5];
    mismatches += cudaMemcpyToSymbol(coef, too_many, sizeof too_many) != cudaErrorInvalidValue;
    mismatches += cudaGetLastError() != cudaErrorInvalidValue;

    // y = 2x + y through cudaLaunchKernelEx, then y = -1x + y cooperatively: y = x + y0.
    const size_t bytes = n * sizeof(float);
    float *hx = (float *)malloc(bytes), *hy = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    for (int i = 0; i < n; i++) {
        hx[i] = (float)i;
        hy[i] = 3.0f * i + 1.0f;
    }
    float *x, *y;
    CHECK(cudaMalloc(&x, bytes));
    CHECK(cudaMalloc(&y, bytes));
    CHECK(cudaMemcpy(x, hx, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(y, hy, bytes, cudaMemcpyHostToDevice));
    // A copy from pageable memory may return before its DMA lands, and s does not wait for the
    // default stream (non-blocking): wait for the copies.
    CHECK(cudaDeviceSynchronize());
    const int block = 128, grid = (n + block - 1) / block;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributePriority;
    attr[0].val.priority = 0;
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, saxpy, 2.0f, (const float *)x, y, n));
    float minus_one = -1.0f;
    void *args[] = {&minus_one, &x, &y, (void *)&n};
    CHECK(cudaLaunchCooperativeKernel((const void *)saxpy, dim3(grid), dim3(block), args, 0, s));
    CHECK(cudaMemcpyAsync(out, y, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < n; i++)
        mismatches += out[i] != hx[i] + hy[i];

    int blocks_per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, saxpy, 256, 0));

    // Capture three launches: they are recorded, not run, so y is unchanged until the graph runs.
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long capture_id = 0;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < 3; k++)
        saxpy<<<grid, block, 0, s>>>(1.0f, x, y, n);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamIsCapturing(s, &status));
    mismatches += status != cudaStreamCaptureStatusActive;
    CHECK(cudaStreamGetCaptureInfo(s, &status, &capture_id));
    mismatches += status != cudaStreamCaptureStatusActive || capture_id == 0;
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaStreamIsCapturing(s, &status));
    mismatches += status != cudaStreamCaptureStatusNone;
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
    CHECK(cudaMemcpy(out, y, bytes, cudaMemcpyDeviceToHost));
    int capture_ran = 0;
    for (int i = 0; i < n; i++)
        capture_ran += out[i] != hx[i] + hy[i];
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const int graph_launches = 2;
    for (int k = 0; k < graph_launches; k++)
        CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));

    printf("features n=%d symbol_size=%zu initial=%d after_bump=%d mismatches=%d blocks_per_sm=%d nodes=%zu "
           "capture_ran=%d graph_launches=%d\n",
           n, symbol_size, initial, after_bump, mismatches, blocks_per_sm, nodes, capture_ran, graph_launches);
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    free(hx);
    free(hy);
    free(out);
    return mismatches != 0;
}
