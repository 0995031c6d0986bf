/* graph_built: CUDA graphs through the runtime API alone, built node by node as well as
 * captured, the way hand-tuned HPC codes and inference servers build theirs.
 *
 *   graph_built
 *
 * Sequence and what a correct trace shows (per graph launch, in launch order):
 *   built graph G (cudaGraphCreate, cudaGraphAdd*Node, in this dependency chain): kernel node
 *     A = a_kernel<<<4, 64>>>, a memset node (N floats of d to 0), a memcpy node (N floats,
 *     pinned host to device d), a child graph node whose graph holds two kernel nodes
 *     c_kernel<<<2, 32>>>, and kernel node B = b_kernel<<<8, 128>>>;
 *   launches 1-3: exec E1 of G: a_kernel, c_kernel x2, b_kernel, 1 memcpy (host to device), 1 memset;
 *   cudaGraphExecKernelNodeSetParams(E1, B, c_kernel<<<8, 128>>>), then (E1 not launched since)
 *     (E1, B, d_kernel<<<8, 128>>>), and (E1, A, a_kernel<<<4, 64>>>) with other arguments;
 *   launches 4-5: E1 again: a_kernel, c_kernel x2, d_kernel, 1 memcpy, 1 memset;
 *   E1 destroyed, G instantiated again (E2: G itself never changed, so B is b_kernel);
 *   launches 6-7: E2: as launches 1-3;
 *   G cloned (cudaGraphClone), the clone's B set to d_kernel (cudaGraphKernelNodeSetParams), E2
 *     updated to the clone (cudaGraphExecUpdate);
 *   launches 8-9: E2: as launches 4-5;
 *   captured graph G2 (cudaStreamBeginCapture, global mode): a_kernel<<<4, 64>>>,
 *     b_kernel<<<8, 128>>>, cudaMemcpyAsync device to pinned host (N floats), cudaMemsetAsync
 *     (N floats), instantiated once;
 *   launches 10-11: a_kernel, b_kernel, 1 memcpy (device to host), 1 memset.
 * The kernels take NULL and do nothing (the simulation needs no host implementation); the
 * copies and sets move real memory, checked after launches 10 and 11.
 * stdout: "graph_built: launches=11 a=11 b=7 c=18 d=4 h2d=9 d2h=2 memset=11 ok". */
#include <cuda_runtime_api.h>
#include <string.h>

#include "wl_common.h"

__global__ void a_kernel(float *w) { if (w) w[threadIdx.x] += 1.0f; }
__global__ void b_kernel(float *w) { if (w) w[threadIdx.x] *= 2.0f; }
__global__ void c_kernel(float *w) { if (w) w[threadIdx.x] -= 1.0f; }
__global__ void d_kernel(float *w) { if (w) w[threadIdx.x] *= 0.5f; }

#define N 1024

static float *no_data = NULL;
static void *no_args[] = {&no_data};

static cudaKernelNodeParams kernel_params(void *fn, unsigned grid, unsigned block)
{
    cudaKernelNodeParams p = {};
    p.func = fn;
    p.gridDim = dim3(grid);
    p.blockDim = dim3(block);
    p.kernelParams = no_args;
    return p;
}

/* One node after prev (none if NULL): the graph is a chain. */
static size_t deps(cudaGraphNode_t prev) { return prev ? 1 : 0; }

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1)
        WL_DIE("usage: graph_built (no arguments)");
    cudaStream_t s;
    WL_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *d, *h, *back;
    WL_RT(cudaMalloc(&d, N * sizeof *d));
    WL_RT(cudaMallocHost(&h, N * sizeof *h));
    WL_RT(cudaMallocHost(&back, N * sizeof *back));
    for (int i = 0; i < N; i++)
        h[i] = (float)i;

    cudaGraph_t child, g;
    WL_RT(cudaGraphCreate(&child, 0));
    cudaKernelNodeParams cp = kernel_params((void *)c_kernel, 2, 32);
    cudaGraphNode_t c1, c2;
    WL_RT(cudaGraphAddKernelNode(&c1, child, NULL, 0, &cp));
    WL_RT(cudaGraphAddKernelNode(&c2, child, &c1, 1, &cp));

    WL_RT(cudaGraphCreate(&g, 0));
    cudaGraphNode_t a, set, copy, sub, b;
    cudaKernelNodeParams ap = kernel_params((void *)a_kernel, 4, 64);
    WL_RT(cudaGraphAddKernelNode(&a, g, NULL, deps(NULL), &ap));
    cudaMemsetParams mp = {};
    mp.dst = d;
    mp.elementSize = sizeof(float);
    mp.width = N;
    mp.height = 1;
    WL_RT(cudaGraphAddMemsetNode(&set, g, &a, deps(a), &mp));
    WL_RT(cudaGraphAddMemcpyNode1D(&copy, g, &set, deps(set), d, h, N * sizeof *h,
                                   cudaMemcpyHostToDevice));
    WL_RT(cudaGraphAddChildGraphNode(&sub, g, &copy, deps(copy), child));
    cudaKernelNodeParams bp = kernel_params((void *)b_kernel, 8, 128);
    WL_RT(cudaGraphAddKernelNode(&b, g, &sub, deps(sub), &bp));

    int launches = 0;
    cudaGraphExec_t x;
    WL_RT(cudaGraphInstantiate(&x, g, 0));
    for (int i = 0; i < 3; i++, launches++)
        WL_RT(cudaGraphLaunch(x, s));
    /* B to c_kernel, then (before any launch ran that) to d_kernel; A to itself with other
     * arguments */
    cudaKernelNodeParams cb = kernel_params((void *)c_kernel, 8, 128);
    WL_RT(cudaGraphExecKernelNodeSetParams(x, b, &cb));
    cudaKernelNodeParams dp = kernel_params((void *)d_kernel, 8, 128);
    WL_RT(cudaGraphExecKernelNodeSetParams(x, b, &dp));
    static float *other_data = NULL;
    static void *other_args[] = {&other_data};
    ap.kernelParams = other_args;
    WL_RT(cudaGraphExecKernelNodeSetParams(x, a, &ap));
    for (int i = 0; i < 2; i++, launches++)
        WL_RT(cudaGraphLaunch(x, s));
    WL_RT(cudaStreamSynchronize(s));
    WL_RT(cudaGraphExecDestroy(x));
    WL_RT(cudaGraphInstantiate(&x, g, 0));
    for (int i = 0; i < 2; i++, launches++)
        WL_RT(cudaGraphLaunch(x, s));
    /* a clone whose B runs d_kernel, the exec updated to it */
    cudaGraph_t g3;
    cudaGraphNode_t b3;
    WL_RT(cudaGraphClone(&g3, g));
    WL_RT(cudaGraphNodeFindInClone(&b3, b, g3));
    WL_RT(cudaGraphKernelNodeSetParams(b3, &dp));
    cudaGraphExecUpdateResultInfo info;
    WL_RT(cudaGraphExecUpdate(x, g3, &info));
    for (int i = 0; i < 2; i++, launches++)
        WL_RT(cudaGraphLaunch(x, s));
    WL_RT(cudaStreamSynchronize(s));
    WL_RT(cudaGraphExecDestroy(x));
    WL_RT(cudaGraphDestroy(g3));

    cudaGraph_t g2;
    WL_RT(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    a_kernel<<<4, 64, 0, s>>>(NULL);
    b_kernel<<<8, 128, 0, s>>>(NULL);
    WL_RT(cudaGetLastError());
    WL_RT(cudaMemcpyAsync(back, d, N * sizeof *d, cudaMemcpyDeviceToHost, s));
    WL_RT(cudaMemsetAsync(d, 0, N * sizeof *d, s));
    WL_RT(cudaStreamEndCapture(s, &g2));
    WL_RT(cudaGraphInstantiate(&x, g2, 0));
    /* the first launch copies back what launch 9's memcpy node left in d (h), then zeroes d;
     * the second copies back those zeros */
    for (int i = 0; i < 2; i++, launches++) {
        WL_RT(cudaGraphLaunch(x, s));
        WL_RT(cudaStreamSynchronize(s));
        for (int k = 0; k < N; k++)
            if (back[k] != (i ? 0.0f : h[k]))
                WL_DIE("launch %d, element %d: expected %g, found %g", launches + 1, k,
                       i ? 0.0 : (double)h[k], (double)back[k]);
    }
    WL_RT(cudaGraphExecDestroy(x));
    WL_RT(cudaGraphDestroy(g2));
    WL_RT(cudaGraphDestroy(g));
    WL_RT(cudaGraphDestroy(child));
    WL_RT(cudaFreeHost(back));
    WL_RT(cudaFreeHost(h));
    WL_RT(cudaFree(d));
    WL_RT(cudaStreamDestroy(s));
    printf("graph_built: launches=%d a=11 b=7 c=18 d=4 h2d=9 d2h=2 memset=11 ok\n", launches);
    return 0;
}
