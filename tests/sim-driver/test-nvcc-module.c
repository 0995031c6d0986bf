/* Real nvcc output: a cubin, a multi-architecture fatbin (sm_80 code + compute_90 PTX, which
 * nvcc 13 zstd-compresses by default), and fatbins with every entry compressed with zstd
 * (-Xfatbin -compress-all) and LZ4 (-compress-mode=speed).
 * Kernel names come from the ELF symbol table (or PTX), parameter layouts from .nv.info. */
#include "sd.h"

#include <stdlib.h>

/* __device__ and __constant__ variables, with their initial values. */
static int check_globals(CUmodule m)
{
    CUdeviceptr p;
    size_t size;
    float f;
    int i;
    CK(cuModuleGetGlobal_v2(&p, &size, m, "gscale"));
    ASSERT_UINT(size, ==, 4);
    CK(cuMemcpyDtoH_v2(&f, p, 4));
    ASSERT_NEAR(f, 3.5, 0);
    CK(cuModuleGetGlobal_v2(&p, &size, m, "counter"));
    ASSERT_UINT(size, ==, 4);
    CK(cuMemcpyDtoH_v2(&i, p, 4));
    ASSERT_INT(i, ==, 0);
    CK(cuModuleGetGlobal_v2(&p, &size, m, "coeffs"));
    ASSERT_UINT(size, ==, 64);
    CK(cuMemcpyDtoH_v2(&f, p + 4, 4));
    ASSERT_NEAR(f, 2, 0);
    ASSERT_INT(cuModuleGetGlobal_v2(&p, &size, m, "nothing"), ==, CUDA_ERROR_NOT_FOUND);
    return 0;
}

static int check_kernels(const void *img, CUresult expect_load)
{
    CUmodule m;
    ASSERT_INT(cuModuleLoadData(&m, img), ==, expect_load);
    if (expect_load != CUDA_SUCCESS)
        return 0;
    unsigned count;
    CK(cuModuleGetFunctionCount(&count, m));
    ASSERT_UINT(count, ==, 3);
    CUfunction f;
    const char *name;
    size_t off, size;
    CK(cuModuleGetFunction(&f, m, "add_one"));
    CK(cuFuncGetName(&name, f));
    ASSERT_STR(name, "add_one");
    CK(cuFuncGetParamInfo(f, 1, &off, &size));
    ASSERT_UINT(off, ==, 8);
    ASSERT_UINT(size, ==, 4);
    ASSERT_INT(cuModuleGetFunction(&f, m, "scale"), ==, CUDA_ERROR_NOT_FOUND);
    if (check_globals(m))
        return 1;
    CUlibrary lib;
    CUkernel k;
    CK(cuLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel(&k, lib, "_Z5scalePddl"));
    CK(cuKernelGetName(&name, k));
    ASSERT_STR(name, "_Z5scalePddl");
    for (size_t i = 0; i < 3; i++) {
        CK(cuKernelGetParamInfo(k, i, &off, &size));
        ASSERT_UINT(off, ==, 8 * i);
        ASSERT_UINT(size, ==, 8);
    }
    /* A CUkernel launches when cast to CUfunction, and so does its CUfunction. */
    CUdeviceptr y;
    double a = 2;
    long n = 1;
    CK(cuMemAlloc_v2(&y, 8));
    void *args[] = {&y, &a, &n};
    CK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuKernelGetFunction(&f, k));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuLibraryUnload(lib));
    CK(cuModuleUnload(m));
    return 0;
}

static char *load(const char *rel)
{
    char path[4096];
    return ctt_read_file(ctt_path(path, rel), NULL);
}

TEST_IMPL(nvcc_cubin_and_fatbins)
{
    sd_env("FAKECUDA_DEVICES", "h100,a100,t4");
    ASSERT_INT(sd_init(), ==, 0);
    char *cubin = load("tests/sim-driver/kernels.sm90.cubin");
    char *fat = load("tests/sim-driver/kernels.fatbin");
    char *zstd = load("tests/sim-driver/kernels.zstd.fatbin");
    char *lz4 = load("tests/sim-driver/kernels.lz4.fatbin");
    ASSERT(cubin && fat && zstd && lz4);
    /* What nvcc 13 produced (entry flags): by default the cubin is stored plain and the PTX
     * zstd-compressed; -compress-all compresses the cubin too, with zstd or LZ4. */
    unsigned long long f1, f2, f0, fptx, size0;
    memcpy(&f0, fat + 16 + 40, 8);
    memcpy(&size0, fat + 16 + 8, 8);
    memcpy(&fptx, fat + 16 + 64 + size0 + 40, 8);
    memcpy(&f1, zstd + 16 + 40, 8);
    memcpy(&f2, lz4 + 16 + 40, 8);
    ASSERT_UINT(f0 & 0xa000, ==, 0);
    ASSERT_UINT(fptx & 0x8000, ==, 0x8000);
    ASSERT_UINT(f1 & 0x8000, ==, 0x8000);
    ASSERT_UINT(f2 & 0x2000, ==, 0x2000);

    /* H100 (9.0): everything loads. */
    if (check_kernels(cubin, CUDA_SUCCESS) || check_kernels(fat, CUDA_SUCCESS) ||
        check_kernels(zstd, CUDA_SUCCESS) || check_kernels(lz4, CUDA_SUCCESS))
        return 1;
    /* A100 (8.0): the sm_90 cubin cannot run; the fatbin's sm_80 cubin can. */
    CUcontext c;
    CK(cuCtxCreate_v2(&c, 0, 1));
    if (check_kernels(cubin, CUDA_ERROR_NO_BINARY_FOR_GPU) || check_kernels(fat, CUDA_SUCCESS))
        return 1;
    /* T4 (7.5): no usable code in the fatbin (sm_80 cubin, compute_90 PTX). */
    CK(cuCtxCreate_v2(&c, 0, 2));
    if (check_kernels(fat, CUDA_ERROR_NO_BINARY_FOR_GPU))
        return 1;
    free(cubin);
    free(fat);
    free(zstd);
    free(lz4);
    return 0;
}
