/* graph_unlisted: graphs whose work the trace cannot list, for the tracer suite (test-graphs.c).
 *
 *   graph_unlisted MODULE_FILE
 *
 * MODULE_FILE holds an image with the kernel "step" (no parameters). A graph of one "step"
 * kernel node, instantiated and launched twice; the node switched off in the exec
 * (cuGraphNodeSetEnabled) and the exec launched twice more (nothing runs); then a graph of a
 * "step" kernel node and an IF conditional node (default value 1) whose body is a "step" kernel
 * node, launched 3 times.
 * stdout: "graph_unlisted: launches=2+2+3"; exit status 0 if every call succeeded. */
#include <cuda.h>
#include <stdio.h>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                         \
            fprintf(stderr, "graph_unlisted: %s failed: %d\n", #call, (int)r_);          \
            return 2;                                                                     \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: graph_unlisted MODULE_FILE\n");
        return 2;
    }
    static char image[4096];
    FILE *f = fopen(argv[1], "r");
    size_t n = f ? fread(image, 1, sizeof image - 1, f) : 0;
    if (!f || !n) {
        fprintf(stderr, "graph_unlisted: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(f);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction step;
    CUstream s;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, image));
    CHECK(cuModuleGetFunction(&step, mod, "step"));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUDA_KERNEL_NODE_PARAMS k = {.func = step, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                                 .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};

    CUgraph g;
    CUgraphNode node;
    CUgraphExec x;
    CHECK(cuGraphCreate(&g, 0));
    CHECK(cuGraphAddKernelNode(&node, g, NULL, 0, &k));
    CHECK(cuGraphInstantiate(&x, g, 0));
    for (int i = 0; i < 2; i++)
        CHECK(cuGraphLaunch(x, s));
    CHECK(cuGraphNodeSetEnabled(x, node, 0));
    for (int i = 0; i < 2; i++)
        CHECK(cuGraphLaunch(x, s));

    CUgraph c;
    CUgraphNode cond, body_node, plain;
    CUgraphExec cx;
    CUgraphConditionalHandle h;
    CHECK(cuGraphCreate(&c, 0));
    CHECK(cuGraphAddKernelNode(&plain, c, NULL, 0, &k));
    CHECK(cuGraphConditionalHandleCreate(&h, c, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUgraphNodeParams p = {.type = CU_GRAPH_NODE_TYPE_CONDITIONAL,
                           .conditional = {.handle = h, .type = CU_GRAPH_COND_TYPE_IF, .size = 1,
                                           .ctx = ctx}};
    CHECK(cuGraphAddNode(&cond, c, NULL, NULL, 0, &p));
    CHECK(cuGraphAddKernelNode(&body_node, p.conditional.phGraph_out[0], NULL, 0, &k));
    CHECK(cuGraphInstantiate(&cx, c, 0));
    for (int i = 0; i < 3; i++)
        CHECK(cuGraphLaunch(cx, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuGraphExecDestroy(cx));
    CHECK(cuGraphDestroy(c));
    CHECK(cuGraphExecDestroy(x));
    CHECK(cuGraphDestroy(g));
    printf("graph_unlisted: launches=2+2+3\n");
    return 0;
}
