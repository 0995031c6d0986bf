/* nvrtc_ptx: PTX from NVIDIA's NVRTC, loaded by the driver, for the tracer suite
 * (test-samples.c). The cuda-samples' NVRTC programs compile to CUBIN (nvrtc_helper.h); this is
 * the other route NVRTC users take, PTX for a virtual architecture that the driver JIT-compiles.
 *
 *   nvrtc_ptx KERNEL_SOURCE
 *
 * KERNEL_SOURCE defines extern "C" vectorAdd(const float *A, const float *B, float *C, int n)
 * (cuda-samples' vectorAdd_nvrtc/vectorAdd_kernel.cu). Compiles it with nvrtcCompileProgram for
 * compute_90, takes nvrtcGetPTX's text, loads it with cuModuleLoadData, launches vectorAdd on
 * 50000 elements (its host implementation, libsample_kernels.so, computes it in the simulation)
 * and checks C = A + B.
 *
 * stdout: "ptx: BYTES bytes, .entry vectorAdd" then "vectorAdd: 50000 elements correct"; exit
 * status 0 if all of it worked, 1 if the result is wrong, 2 if a call failed (named on stderr). */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                         \
            fprintf(stderr, "nvrtc_ptx: %s failed: %d\n", #call, (int)r_);               \
            return 2;                                                                     \
        }                                                                                 \
    } while (0)

#define NVRTC(call)                                                                       \
    do {                                                                                  \
        nvrtcResult r_ = (call);                                                          \
        if (r_ != NVRTC_SUCCESS) {                                                        \
            fprintf(stderr, "nvrtc_ptx: %s failed: %s\n", #call, nvrtcGetErrorString(r_)); \
            return 2;                                                                     \
        }                                                                                 \
    } while (0)

enum { N = 50000 };

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: nvrtc_ptx KERNEL_SOURCE\n");
        return 2;
    }
    static char src[1 << 16];
    FILE *f = fopen(argv[1], "r");
    size_t n = f ? fread(src, 1, sizeof src - 1, f) : 0;
    if (!f || !n) {
        fprintf(stderr, "nvrtc_ptx: %s: expected a kernel source, found %s\n", argv[1],
                f ? "an empty file" : "no readable file");
        return 2;
    }
    fclose(f);

    nvrtcProgram prog;
    const char *opts[] = {"--gpu-architecture=compute_90"};
    NVRTC(nvrtcCreateProgram(&prog, src, argv[1], 0, NULL, NULL));
    NVRTC(nvrtcCompileProgram(prog, 1, opts));
    size_t ptx_size;
    NVRTC(nvrtcGetPTXSize(prog, &ptx_size));
    char *ptx = malloc(ptx_size);
    NVRTC(nvrtcGetPTX(prog, ptx));
    NVRTC(nvrtcDestroyProgram(&prog));
    if (!strstr(ptx, ".entry vectorAdd(")) {
        fprintf(stderr, "nvrtc_ptx: NVRTC's PTX: expected \".entry vectorAdd(\", found:\n%s\n", ptx);
        return 2;
    }
    printf("ptx: %zu bytes, .entry vectorAdd\n", ptx_size);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, ptx));
    CHECK(cuModuleGetFunction(&fn, mod, "vectorAdd"));

    static float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }
    CUdeviceptr da, db, dc;
    CHECK(cuMemAlloc(&da, sizeof a));
    CHECK(cuMemAlloc(&db, sizeof b));
    CHECK(cuMemAlloc(&dc, sizeof c));
    CHECK(cuMemcpyHtoD(da, a, sizeof a));
    CHECK(cuMemcpyHtoD(db, b, sizeof b));
    int count = N;
    void *args[] = {&da, &db, &dc, &count};
    CHECK(cuLaunchKernel(fn, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CHECK(cuMemcpyDtoH(c, dc, sizeof c));
    for (int i = 0; i < N; i++)
        if (c[i] != a[i] + b[i]) {
            printf("vectorAdd: element %d: expected %g, found %g\n", i, a[i] + b[i], c[i]);
            return 1;
        }
    printf("vectorAdd: %d elements correct\n", N);
    CHECK(cuMemFree(da));
    CHECK(cuMemFree(db));
    CHECK(cuMemFree(dc));
    CHECK(cuModuleUnload(mod));
    free(ptx);
    CHECK(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
