/* The kernel cost model: waves of blocks by default, FAKECUDA_KERNEL_NS overrides matched as
 * substrings or fnmatch patterns, first rule winning. Durations are read from events queued
 * behind a gate, so they are exact. */
#include "sd.h"

static double timed(CUfunction f, unsigned grid, unsigned block, CUstream s)
{
    CUevent a, b;
    sd_gate g;
    CUdeviceptr arg = 0;
    void *args[] = {&arg};
    if (cuEventCreate(&a, 0) || cuEventCreate(&b, 0) || sd_gate_close(&g, s) ||
        cuEventRecord(a, s) || cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, args, NULL) ||
        cuEventRecord(b, s))
        return -1;
    sd_gate_open(&g);
    if (cuEventSynchronize(b))
        return -1;
    return sd_elapsed_ns(a, b);
}

TEST_IMPL(kernel_cost_model)
{
    sd_env("FAKECUDA_KERNEL_NS", "_Z4gemm*=7000000,gemm=1000,attn=250000");
    ASSERT_INT(sd_init(), ==, 0);
    CUmodule m;
    CUfunction plain, gemm_mangled, gemm_c, attn;
    CK(cuModuleLoadData(&m, "fakecuda-module 1\nkernel plain\nkernel _Z4gemmPf 8\n"
                            "kernel my_gemm_kernel\nkernel flash_attn_fwd\n"));
    CK(cuModuleGetFunction(&plain, m, "plain"));
    CK(cuModuleGetFunction(&gemm_mangled, m, "_Z4gemmPf"));
    CK(cuModuleGetFunction(&gemm_c, m, "my_gemm_kernel"));
    CK(cuModuleGetFunction(&attn, m, "flash_attn_fwd"));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    /* H100: 132 SMs; 1024-thread blocks fit 2 per SM, so 264 blocks are one wave. */
    ASSERT_NEAR(timed(plain, 1, 32, s), 5000, 1);
    ASSERT_NEAR(timed(plain, 264, 1024, s), 5000, 1);
    ASSERT_NEAR(timed(plain, 265, 1024, s), 8000, 1);
    /* 128-thread blocks: 16 per SM by threads, capped at 32 blocks per SM: 2112 a wave. */
    ASSERT_NEAR(timed(plain, 2112 * 10, 128, s), 2000 + 10 * 3000, 1);
    /* Overrides: fnmatch for the mangled name (before the substring rule), substring else. */
    ASSERT_NEAR(timed(gemm_mangled, 1, 1, s), 7000000, 1);
    ASSERT_NEAR(timed(gemm_c, 1000, 256, s), 1000, 1);
    ASSERT_NEAR(timed(attn, 1, 1, s), 250000, 1);
    return 0;
}
