/* driver_api: the driver API the way JIT compilers and libraries use it. It loads nvcc-built
 * device code embedded in the program (driver_api_kernels.cu): with cuModuleLoadData, the cubin
 * for the device's architecture (sm_75, sm_80 or sm_90, chosen by compute capability), and with
 * cuLibraryLoadData, a fatbin for all three; it launches through cuLaunchKernel and
 * cuLaunchKernelEx, with CUfunctions from cuModuleGetFunction and CUkernels from
 * cuLibraryGetKernel (cast to CUfunction, as CUDA 12+ allows).
 *
 * Sequence and what a correct trace shows:
 *   cuInit(0); cuDeviceGet(0); cuDeviceGetName; cuCtxCreate (v4, no parameters);
 *   cuStreamCreate (blocking); 2 cuDeviceGetAttribute (compute capability);
 *   cuModuleLoadData (cubin, 1 module) + cuModuleGetFunction "vec_add", "_Z5scaleIfEvPT_S0_i";
 *   cuLibraryLoadData (fatbin) + cuLibraryGetKernel "vec_add", "_Z5scaleIfEvPT_S0_i";
 *   3 cuMemAlloc of 262144 bytes; 2 cuMemcpyHtoD of 262144 bytes;
 *   4 launches on the stream, each <<<256, 256>>>, in this order:
 *     cuLaunchKernel   (module function) vec_add              c = a + b
 *     cuLaunchKernelEx (module function) scale<float>         c = 2 * c
 *     cuLaunchKernel   (library kernel)  vec_add              c = c + a
 *     cuLaunchKernelEx (library kernel)  scale<float>         c = 0.5 * c
 *   cuStreamSynchronize; 1 cuMemcpyDtoH of 262144 bytes; check c = 1.5 a + b exactly;
 *   3 cuMemFree; cuLibraryUnload; cuModuleUnload; cuStreamDestroy; cuCtxDestroy.
 * Kernel names in the trace: vec_add twice, scale<float> (demangled) twice.
 *
 * stdout: "driver_api: device=NAME ...", "driver_api: launches=4 ..." and "verify=ok|FAILED". */
#include <cuda.h>

#include "wl_common.h"

/* The device code, embedded at build time from the files WL_IMAGES.sm_XX.cubin and
 * WL_IMAGES.fatbin: one cubin per major architecture, and a fatbin holding all of them. */
#define WL_EMBED(sym, suffix)                                                                  \
    ".balign 64\n" #sym ":\n.incbin \"" WL_IMAGES suffix "\"\n"
__asm__(".section .rodata\n" WL_EMBED(wl_cubin_sm75, ".sm_75.cubin")
            WL_EMBED(wl_cubin_sm80, ".sm_80.cubin") WL_EMBED(wl_cubin_sm90, ".sm_90.cubin")
                WL_EMBED(wl_fatbin, ".fatbin") ".previous\n");
extern const unsigned char wl_cubin_sm75[], wl_cubin_sm80[], wl_cubin_sm90[], wl_fatbin[];

/* The cubin for the device, as a JIT picks its target: by compute capability. A cubin runs on
 * its own major version at an equal or higher minor one. */
static const unsigned char *cubin_for(CUdevice dev, int *major, int *minor)
{
    WL_CU(cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    WL_CU(cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    if (*major == 7 && *minor >= 5)
        return wl_cubin_sm75;
    if (*major == 8)
        return wl_cubin_sm80;
    if (*major == 9)
        return wl_cubin_sm90;
    WL_DIE("expected a device of compute capability 7.5, 8.x or 9.x, found %d.%d", *major, *minor);
}

#define N (1 << 16)
#define THREADS 256

static void launch(CUfunction f, int ex, CUstream s, void **params)
{
    if (!ex) {
        WL_CU(cuLaunchKernel(f, N / THREADS, 1, 1, THREADS, 1, 1, 0, s, params, NULL));
        return;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = N / THREADS, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = THREADS, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.hStream = s;
    WL_CU(cuLaunchKernelEx(&cfg, f, params, NULL));
}

int main(void)
{
    static float a[N], b[N], c[N];
    for (int i = 0; i < N; i++) {
        a[i] = (float)(i % 100);
        b[i] = (float)(2 * (i % 50));
    }
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    char name[256];
    WL_CU(cuInit(0));
    WL_CU(cuDeviceGet(&dev, 0));
    WL_CU(cuDeviceGetName(name, sizeof name, dev));
    WL_CU(cuCtxCreate(&ctx, NULL, 0, dev));
    /* A blocking stream: the synchronous copies below run on the legacy default stream and
     * return before their DMA completes, so a non-blocking stream's kernels could overtake them. */
    WL_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT));

    CUmodule mod;
    CUfunction f_add, f_scale;
    int major, minor;
    WL_CU(cuModuleLoadData(&mod, cubin_for(dev, &major, &minor)));
    WL_CU(cuModuleGetFunction(&f_add, mod, "vec_add"));
    WL_CU(cuModuleGetFunction(&f_scale, mod, "_Z5scaleIfEvPT_S0_i"));
    CUlibrary lib;
    CUkernel k_add, k_scale;
    WL_CU(cuLibraryLoadData(&lib, wl_fatbin, NULL, NULL, 0, NULL, NULL, 0));
    WL_CU(cuLibraryGetKernel(&k_add, lib, "vec_add"));
    WL_CU(cuLibraryGetKernel(&k_scale, lib, "_Z5scaleIfEvPT_S0_i"));

    CUdeviceptr da, db, dc;
    WL_CU(cuMemAlloc(&da, sizeof a));
    WL_CU(cuMemAlloc(&db, sizeof b));
    WL_CU(cuMemAlloc(&dc, sizeof c));
    WL_CU(cuMemcpyHtoD(da, a, sizeof a));
    WL_CU(cuMemcpyHtoD(db, b, sizeof b));

    int n = N;
    float two = 2.0f, half = 0.5f;
    void *add_ab[] = {&dc, &da, &db, &n};
    void *scale_two[] = {&dc, &two, &n};
    void *add_ca[] = {&dc, &dc, &da, &n};
    void *scale_half[] = {&dc, &half, &n};
    launch(f_add, 0, s, add_ab);
    launch(f_scale, 1, s, scale_two);
    launch((CUfunction)k_add, 0, s, add_ca);
    launch((CUfunction)k_scale, 1, s, scale_half);
    WL_CU(cuStreamSynchronize(s));
    WL_CU(cuMemcpyDtoH(c, dc, sizeof c));

    long long bad = 0;
    for (int i = 0; i < N; i++)
        bad += c[i] != 1.5f * a[i] + b[i];

    WL_CU(cuMemFree(da));
    WL_CU(cuMemFree(db));
    WL_CU(cuMemFree(dc));
    WL_CU(cuLibraryUnload(lib));
    WL_CU(cuModuleUnload(mod));
    WL_CU(cuStreamDestroy(s));
    WL_CU(cuCtxDestroy(ctx));

    printf("driver_api: device=%s cc=%d.%d modules=1 libraries=1 functions=2 kernels=2\n", name,
           major, minor);
    printf("driver_api: launches=4 cuLaunchKernel=2 cuLaunchKernelEx=2 allocs=3 "
           "alloc_bytes=%zu h2d=2 d2h=1 copy_bytes=%zu\n",
           3 * sizeof a, sizeof a);
    printf("driver_api: verify=%s mismatches=%lld\n", bad ? "FAILED" : "ok", bad);
    return bad ? 1 : 0;
}
