// NVIDIA's runtime building and launching CUDA graphs on the simulated driver: a stream
// capture of a copy in, two kernels, a host function and a copy out, instantiated and launched
// three times, then a kernel node's parameters changed in the executable graph. Prints
// "graph ok" when every result matches the CPU's; otherwise what differed, and exits 1.
#include <cuda_runtime.h>

#include <stdio.h>

extern "C" __global__ void nv_g_step(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = 2 * x[i] + a;
}

// The simulation's host implementation of nv_g_step (tests/fakecuda/fakecuda.h), found in the
// executable's dynamic symbols.
extern "C" __attribute__((visibility("default"))) void fakecuda_kernel_nv_g_step(void **p,
                                                                                const void *)
{
    float *x = *(float **)p[0];
    float a = *(float *)p[1];
    int n = *(int *)p[2];
    for (int i = 0; i < n; i++)
        x[i] = 2 * x[i] + a;
}

struct observer {
    int calls;
};

static void CUDART_CB observe(void *p)
{
    static_cast<observer *>(p)->calls++;
}

#define CK(call)                                                                      \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,             \
                    cudaGetErrorName(e_));                                            \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

static int check(const float *out, const float *h, int n, float a1, float a2)
{
    for (int i = 0; i < n; i++) {
        float want = 2 * (2 * h[i] + a1) + a2;
        if (out[i] != want) {
            fprintf(stderr, "element %d: expected %g, found %g\n", i, want, out[i]);
            return 1;
        }
    }
    return 0;
}

int main()
{
    const int n = 256;
    const size_t bytes = n * sizeof(float);
    float *h, *out, *d;
    CK(cudaMallocHost(&h, bytes));
    CK(cudaMallocHost(&out, bytes));
    CK(cudaMalloc(&d, bytes));
    for (int i = 0; i < n; i++)
        h[i] = (float)i;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    observer obs = {0};

    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
    nv_g_step<<<1, n, 0, s>>>(d, 1.0f, n);
    nv_g_step<<<1, n, 0, s>>>(d, 3.0f, n);
    CK(cudaGetLastError());
    CK(cudaLaunchHostFunc(s, observe, &obs));
    CK(cudaMemcpyAsync(out, d, bytes, cudaMemcpyDeviceToHost, s));
    cudaGraph_t g;
    CK(cudaStreamEndCapture(s, &g));
    if (obs.calls != 0) {
        fprintf(stderr, "the host function ran during capture\n");
        return 1;
    }
    size_t count = 0;
    CK(cudaGraphGetNodes(g, NULL, &count));
    if (count != 5) {
        fprintf(stderr, "expected 5 nodes, found %zu\n", count);
        return 1;
    }
    cudaGraphNode_t nodes[5];
    CK(cudaGraphGetNodes(g, nodes, &count));
    cudaGraphExec_t x;
    CK(cudaGraphInstantiate(&x, g, 0));
    for (int i = 0; i < 3; i++)
        CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    if (check(out, h, n, 1, 3))
        return 1;
    if (obs.calls != 3) {
        fprintf(stderr, "expected 3 host node calls, found %d\n", obs.calls);
        return 1;
    }

    // the first kernel node's `a` becomes 10 in the executable graph only
    cudaGraphNodeType t;
    CK(cudaGraphNodeGetType(nodes[1], &t));
    if (t != cudaGraphNodeTypeKernel) {
        fprintf(stderr, "expected node 1 to be a kernel, found type %d\n", (int)t);
        return 1;
    }
    cudaKernelNodeParams kp;
    CK(cudaGraphKernelNodeGetParams(nodes[1], &kp));
    float a = 10;
    void *args[] = {&d, &a, kp.kernelParams[2]};
    kp.kernelParams = args;
    CK(cudaGraphExecKernelNodeSetParams(x, nodes[1], &kp));
    CK(cudaGraphLaunch(x, s));
    CK(cudaStreamSynchronize(s));
    if (check(out, h, n, 10, 3))
        return 1;
    CK(cudaGraphExecDestroy(x));
    CK(cudaGraphDestroy(g));
    printf("graph ok\n");
    return 0;
}
