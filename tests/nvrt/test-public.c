/* Public driver functions NVIDIA's runtime, cuBLAS and cuBLASLt call, answered as NVIDIA's
 * driver answers them (/work/shared/reference/nvidia-private-driver-tables.md). */
#define _GNU_SOURCE
#include "ctt.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static const char text_image[] = "fakecuda-module 1\nkernel k 8\n";

/* NVIDIA's default since 12.2 is lazy; CUDA_MODULE_LOADING=EAGER or LAZY selects, read once
 * per process (each test is a process of its own). */
static int loading_mode_with(const char *env, CUmoduleLoadingMode want)
{
    if (env)
        setenv("CUDA_MODULE_LOADING", env, 1);
    else
        unsetenv("CUDA_MODULE_LOADING");
    CUmoduleLoadingMode m = 0;
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuModuleGetLoadingMode(&m), ==, CUDA_SUCCESS);
    ASSERT_INT(m, ==, want);
    ASSERT_INT(cuModuleGetLoadingMode(NULL), ==, CUDA_ERROR_INVALID_VALUE);
    return 0;
}

TEST_IMPL(loading_mode)
{
    return loading_mode_with(NULL, CU_MODULE_LAZY_LOADING);
}

TEST_IMPL(loading_mode_eager)
{
    return loading_mode_with("EAGER", CU_MODULE_EAGER_LOADING);
}

TEST_IMPL(cig_limit_and_library_options)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUcontext c;
    ASSERT_INT(cuCtxCreate(&c, NULL, 0, 0), ==, CUDA_SUCCESS);
    /* an ordinary context is not CIG-enabled; cuBLASLt needs success and 0 */
    size_t v = 77;
    ASSERT_INT(cuCtxGetLimit(&v, CU_LIMIT_CIG_ENABLED), ==, CUDA_SUCCESS);
    ASSERT_UINT(v, ==, 0);
    ASSERT_INT(cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1), ==, CUDA_ERROR_UNSUPPORTED_LIMIT);
    /* CU_LIBRARY_BINARY_IS_PRESERVED takes no value: NULL values are fine (cuBLASLt) */
    CUlibrary lib;
    CUlibraryOption opt = CU_LIBRARY_BINARY_IS_PRESERVED;
    ASSERT_INT(cuLibraryLoadData(&lib, text_image, NULL, NULL, 0, &opt, NULL, 1), ==, CUDA_SUCCESS);
    CUkernel k;
    CUfunction f;
    ASSERT_INT(cuLibraryGetKernel(&k, lib, "k"), ==, CUDA_SUCCESS);
    ASSERT_INT(cuKernelGetFunction(&f, k), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLibraryUnload(lib), ==, CUDA_SUCCESS);
    /* an option with a value still needs the values array */
    opt = CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE;
    ASSERT_INT(cuLibraryLoadData(&lib, text_image, NULL, NULL, 0, &opt, NULL, 1), ==, CUDA_ERROR_INVALID_VALUE);
    opt = CU_LIBRARY_NUM_OPTIONS;
    void *val = NULL;
    ASSERT_INT(cuLibraryLoadData(&lib, text_image, NULL, NULL, 0, &opt, &val, 1), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuCtxDestroy(c), ==, CUDA_SUCCESS);
    return 0;
}

/* The SM in a cubin's e_flags: bits 8-15 from ELF ABI version 8 (nvcc 13), bits 0-7 before
 * (cuBLASLt's cubins, ABI 7). A copy of nvcc 13's sm_90 cubin is rewritten to ABI 7. */
TEST_IMPL(cubin_abi_versions)
{
    char path[4096];
    size_t n;
    unsigned char *img = (unsigned char *)ctt_read_file(
        ctt_path(path, "tests/workloads/driver_api_kernels.sm_90.cubin"), &n);
    ASSERT(img && n > 64);
    ASSERT_INT(img[8], ==, 8);
    uint32_t flags;
    memcpy(&flags, img + 48, 4);
    ASSERT_UINT((flags >> 8) & 0xff, ==, 90);
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUcontext c;
    CUmodule m;
    ASSERT_INT(cuCtxCreate(&c, NULL, 0, 0), ==, CUDA_SUCCESS); /* an H100 */
    ASSERT_INT(cuModuleLoadData(&m, img), ==, CUDA_SUCCESS);
    ASSERT_INT(cuModuleUnload(m), ==, CUDA_SUCCESS);
    img[8] = 7;
    flags = 0x5a055a; /* as cuBLASLt's sm_90 cubins */
    memcpy(img + 48, &flags, 4);
    ASSERT_INT(cuModuleLoadData(&m, img), ==, CUDA_SUCCESS);
    ASSERT_INT(cuModuleUnload(m), ==, CUDA_SUCCESS);
    flags = 0x5a0550; /* ABI 7, sm_80: not for an H100 */
    memcpy(img + 48, &flags, 4);
    ASSERT_INT(cuModuleLoadData(&m, img), ==, CUDA_ERROR_NO_BINARY_FOR_GPU);
    free(img);
    ASSERT_INT(cuCtxDestroy(c), ==, CUDA_SUCCESS);
    return 0;
}

typedef CUresult (*occ_flags_fn)(int *, CUfunction, int, size_t, unsigned);

/* cuBLASLt reaches the occupancy functions both through cuGetProcAddress and by dlsym on
 * libcuda.so.1: the answers must agree, and count shared memory (H100: 233472 bytes per SM,
 * 1 KiB reserved per block). */
TEST_IMPL(occupancy_shared_memory)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUcontext c;
    CUmodule m;
    CUfunction f;
    ASSERT_INT(cuCtxCreate(&c, NULL, 0, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuModuleLoadData(&m, text_image), ==, CUDA_SUCCESS);
    ASSERT_INT(cuModuleGetFunction(&f, m, "k"), ==, CUDA_SUCCESS);
    void *proc = NULL;
    CUdriverProcAddressQueryResult st;
    ASSERT_INT(cuGetProcAddress("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", &proc, 13000, 0, &st), ==, CUDA_SUCCESS);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT(lib);
    occ_flags_fn via_proc = (occ_flags_fn)proc,
                 via_dlsym = (occ_flags_fn)dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    ASSERT(via_proc && via_dlsym);
    static const struct {
        int block;
        size_t smem;
        int want;
    } cases[] = {
        {128, 232448, 1},   /* cuBLAS's biggest tiles: once per SM, not 32 times */
        {128, 115712, 2},   /* (233472 / 2) - 1024 */
        {128, 115713, 1},
        {1024, 0, 2},       /* 2048 threads per SM */
        {32, 0, 32},        /* 32 blocks per SM */
        {256, 48 * 1024, 4}, /* 233472 / (49152 + 1024) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int a = -1, b = -1, d = -1;
        ASSERT_INT(cuOccupancyMaxActiveBlocksPerMultiprocessor(&a, f, cases[i].block, cases[i].smem), ==, 0);
        ASSERT_INT(via_proc(&b, f, cases[i].block, cases[i].smem, 0), ==, 0);
        ASSERT_INT(via_dlsym(&d, f, cases[i].block, cases[i].smem, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE), ==, 0);
        ASSERT_INT(a, ==, cases[i].want);
        ASSERT_INT(b, ==, cases[i].want);
        ASSERT_INT(d, ==, cases[i].want);
    }
    size_t dyn = 0;
    ASSERT_INT(cuOccupancyAvailableDynamicSMemPerBlock(&dyn, f, 1, 128), ==, CUDA_SUCCESS);
    ASSERT_UINT(dyn, ==, 232448); /* the opt-in maximum per block */
    ASSERT_INT(cuOccupancyAvailableDynamicSMemPerBlock(&dyn, f, 2, 128), ==, CUDA_SUCCESS);
    ASSERT_UINT(dyn, ==, 115712);
    ASSERT_INT(cuOccupancyAvailableDynamicSMemPerBlock(&dyn, f, 3, 1024), ==, CUDA_SUCCESS);
    ASSERT_UINT(dyn, ==, 0); /* 3 blocks of 1024 threads never fit */
    ASSERT_INT(cuCtxDestroy(c), ==, CUDA_SUCCESS);
    return 0;
}

static int clusters(CUfunction f, unsigned size, unsigned smem, int *n)
{
    CUlaunchAttribute at = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
    at.value.clusterDim.x = size, at.value.clusterDim.y = 1, at.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {.gridDimX = size * 8, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128,
                          .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = smem,
                          .attrs = &at, .numAttrs = 1};
    return cuOccupancyMaxActiveClusters(n, f, &cfg);
}

/* A cluster lives in one GPC. H100 SXM5: 66 TPCs over 8 GPCs, so two GPCs of 18 SMs and six
 * of 16 (the model's layout); cuBLAS asks cluster sizes 3 to 16. */
TEST_IMPL(occupancy_clusters)
{
    setenv("FAKECUDA_DEVICES", "h100,a100", 1);
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUcontext c;
    CUlibrary lib;
    CUkernel k;
    ASSERT_INT(cuCtxCreate(&c, NULL, 0, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLibraryLoadData(&lib, text_image, NULL, NULL, 0, NULL, NULL, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLibraryGetKernel(&k, lib, "k"), ==, CUDA_SUCCESS);
    CUfunction f = (CUfunction)k;
    int n = -1;
    /* one 232448-byte block per SM */
    ASSERT_INT(clusters(f, 2, 232448, &n), ==, CUDA_SUCCESS);
    ASSERT_INT(n, ==, 2 * 9 + 6 * 8);
    ASSERT_INT(clusters(f, 3, 232448, &n), ==, CUDA_SUCCESS);
    ASSERT_INT(n, ==, 2 * 6 + 6 * 5);
    ASSERT_INT(clusters(f, 8, 232448, &n), ==, CUDA_SUCCESS);
    ASSERT_INT(n, ==, 2 * 2 + 6 * 2);
    /* 16 is beyond the portable 8 until the kernel allows it (cuKernelSetAttribute) */
    ASSERT_INT(clusters(f, 16, 232448, &n), ==, CUDA_ERROR_INVALID_CLUSTER_SIZE);
    ASSERT_INT(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, k, 0), ==, CUDA_SUCCESS);
    int allowed = 0;
    ASSERT_INT(cuKernelGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, k, 0), ==, 0);
    ASSERT_INT(allowed, ==, 1);
    ASSERT_INT(clusters(f, 16, 232448, &n), ==, CUDA_SUCCESS);
    ASSERT_INT(n, ==, 8);
    ASSERT_INT(clusters(f, 17, 232448, &n), ==, CUDA_ERROR_INVALID_CLUSTER_SIZE);
    /* no shared memory: 16 blocks of 128 threads per SM */
    ASSERT_INT(clusters(f, 16, 0, &n), ==, CUDA_SUCCESS);
    ASSERT_INT(n, ==, 2 * 18 + 6 * 16);
    /* the maximum dynamic shared memory is kept per kernel, up to the opt-in limit */
    ASSERT_INT(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232448, k, 0), ==, 0);
    int smem = 0;
    ASSERT_INT(cuKernelGetAttribute(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 0), ==, 0);
    ASSERT_INT(smem, ==, 232448);
    ASSERT_INT(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 232449, k, 0), ==, CUDA_ERROR_INVALID_VALUE);
    /* an A100 has no clusters */
    CUcontext a;
    ASSERT_INT(cuCtxCreate(&a, NULL, 0, 1), ==, CUDA_SUCCESS);
    ASSERT_INT(clusters(f, 2, 0, &n), ==, CUDA_ERROR_INVALID_CLUSTER_SIZE);
    return 0;
}

static void log_cb(void *data, CUlogLevel level, char *message, size_t length)
{
    (void)data, (void)level, (void)message, (void)length;
}

TEST_IMPL(harmless_refusals)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUlogsCallbackHandle h;
    ASSERT_INT(cuLogsRegisterCallback(log_cb, NULL, &h), ==, CUDA_ERROR_NOT_SUPPORTED);
    CUdevice d = -1;
    ASSERT_INT(cuCtxGetDevice(&d), ==, CUDA_ERROR_INVALID_CONTEXT); /* 201: no context yet */
    CUcontext c;
    ASSERT_INT(cuCtxCreate(&c, NULL, 0, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuCtxGetDevice(&d), ==, CUDA_SUCCESS);
    ASSERT_INT(d, ==, 0);
    /* beyond the device's memory: out of memory (2), not a pretend success */
    CUdeviceptr p;
    ASSERT_INT(cuMemAlloc(&p, (size_t)96 << 30), ==, CUDA_ERROR_OUT_OF_MEMORY);
    return 0;
}

/* The linker API as cuda-python and numba use it: PTX in, an image for cuModuleLoadData out. */
TEST_IMPL(linker)
{
    static const char ptx_a[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                ".visible .entry add_one(.param .u64 p, .param .u32 n)\n{\n ret;\n}\n";
    static const char ptx_b[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                                ".visible .entry scale(.param .u64 p, .param .f32 s, .param .u32 n)\n{\n ret;\n}\n";
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUlinkState l;
    ASSERT_INT(cuLinkCreate(0, NULL, NULL, &l), ==, CUDA_ERROR_INVALID_CONTEXT); /* needs one */
    CUcontext c;
    ASSERT_INT(cuCtxCreate(&c, NULL, 0, 0), ==, CUDA_SUCCESS);
    CUjit_option opt = CU_JIT_OPTIMIZATION_LEVEL;
    void *val = (void *)(uintptr_t)3;
    ASSERT_INT(cuLinkCreate(1, &opt, &val, &l), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkAddData(l, CU_JIT_INPUT_PTX, (void *)ptx_a, sizeof ptx_a, "a.ptx", 0, NULL, NULL), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkAddData(l, CU_JIT_INPUT_PTX, (void *)ptx_b, sizeof ptx_b, "b.ptx", 0, NULL, NULL), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkAddData(l, CU_JIT_INPUT_PTX, (void *)"not ptx", 8, "bad", 0, NULL, NULL), ==, CUDA_ERROR_INVALID_IMAGE);
    ASSERT_INT(cuLinkAddData(l, CU_JIT_INPUT_OBJECT, (void *)ptx_a, sizeof ptx_a, "o", 0, NULL, NULL), ==, CUDA_ERROR_NOT_SUPPORTED);
    void *image;
    size_t size;
    ASSERT_INT(cuLinkComplete(l, &image, &size), ==, CUDA_SUCCESS);
    ASSERT(size > sizeof ptx_a + sizeof ptx_b - 2);
    CUmodule m;
    CUfunction f;
    size_t off, psize;
    ASSERT_INT(cuModuleLoadData(&m, image), ==, CUDA_SUCCESS);
    ASSERT_INT(cuModuleGetFunction(&f, m, "add_one"), ==, CUDA_SUCCESS);
    ASSERT_INT(cuModuleGetFunction(&f, m, "scale"), ==, CUDA_SUCCESS);
    ASSERT_INT(cuFuncGetParamInfo(f, 2, &off, &psize), ==, CUDA_SUCCESS);
    ASSERT_UINT(off, ==, 12);
    ASSERT_UINT(psize, ==, 4);
    ASSERT_INT(cuModuleUnload(m), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkDestroy(l), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkDestroy(l), ==, CUDA_ERROR_INVALID_HANDLE);
    /* a cubin file: for this device it links; for another, it fails where it is added */
    char path[4096];
    ASSERT_INT(cuLinkCreate(0, NULL, NULL, &l), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkAddFile(l, CU_JIT_INPUT_CUBIN, ctt_path(path, "tests/workloads/driver_api_kernels.sm_80.cubin"), 0, NULL, NULL), ==, CUDA_ERROR_NO_BINARY_FOR_GPU);
    ASSERT_INT(cuLinkAddFile(l, CU_JIT_INPUT_CUBIN, ctt_path(path, "tests/workloads/driver_api_kernels.sm_90.cubin"), 0, NULL, NULL), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkComplete(l, &image, &size), ==, CUDA_SUCCESS);
    ASSERT_INT(memcmp(image, "\177ELF", 4), ==, 0);
    ASSERT_INT(cuModuleLoadData(&m, image), ==, CUDA_SUCCESS);
    unsigned count = 0;
    ASSERT_INT(cuModuleGetFunctionCount(&count, m), ==, CUDA_SUCCESS);
    ASSERT(count > 0);
    /* two binaries would need a real linker */
    ASSERT_INT(cuLinkAddFile(l, CU_JIT_INPUT_CUBIN, path, 0, NULL, NULL), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkComplete(l, &image, &size), ==, CUDA_ERROR_NOT_SUPPORTED);
    ASSERT_INT(cuLinkDestroy(l), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLinkAddFile(l, CU_JIT_INPUT_CUBIN, path, 0, NULL, NULL), ==, CUDA_ERROR_INVALID_HANDLE);
    return 0;
}

/* A library is loaded for whichever device runs it: one with code only for other
 * architectures loads (in eager mode too: cuBLAS ships sm_75-only fatbins, and failing them
 * would fail the runtime's whole load), and its kernels fail with NO_BINARY_FOR_GPU when
 * used. A module, bound to its context's device, fails to load, as documented. */
static int foreign_code(const char *file)
{
    char path[4096];
    size_t n;
    char *img = ctt_read_file(ctt_path(path, file), &n);
    ASSERT(img);
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUcontext c;
    ASSERT_INT(cuCtxCreate(&c, NULL, 0, 0), ==, CUDA_SUCCESS); /* an H100 */
    CUmodule m;
    ASSERT_INT(cuModuleLoadData(&m, img), ==, CUDA_ERROR_NO_BINARY_FOR_GPU);
    CUlibrary lib;
    CUkernel k;
    CUfunction f;
    ASSERT_INT(cuLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuLibraryGetKernel(&k, lib, "vec_add"), ==, CUDA_SUCCESS);
    ASSERT_INT(cuKernelGetFunction(&f, k), ==, CUDA_ERROR_NO_BINARY_FOR_GPU);
    ASSERT_INT(cuLaunchKernel((CUfunction)k, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), ==, CUDA_ERROR_NO_BINARY_FOR_GPU);
    ASSERT_INT(cuLibraryUnload(lib), ==, CUDA_SUCCESS);
    free(img);
    return 0;
}

TEST_IMPL(library_without_code_for_the_device)
{
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    return foreign_code("tests/nvrt/sm75_only.fatbin") ||
           foreign_code("tests/workloads/driver_api_kernels.sm_80.cubin");
}
