/* FAKECUDA_FAIL fails the Nth call of a function, by exported or base name. */
#include "sd.h"

TEST_IMPL(fault_injection_fails_the_nth_call)
{
    sd_env("FAKECUDA_FAIL", "cuMemAlloc_v2:2:2,cuLaunchKernel:1:719,cuStreamCreate:3:999");
    ASSERT_INT(sd_init(), ==, 0);
    CUdeviceptr p;
    CK(cuMemAlloc_v2(&p, 4096));
    ASSERT_INT(cuMemAlloc_v2(&p, 4096), ==, CUDA_ERROR_OUT_OF_MEMORY);
    CK(cuMemAlloc_v2(&p, 4096));
    CUfunction f = sd_kernel("k", 0);
    ASSERT(f);
    /* cuLaunchKernel matches the _ptsz variant by base name: calls are counted together. */
    ASSERT_INT(cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), ==,
               CUDA_ERROR_LAUNCH_FAILED);
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamCreate(&s, 0));
    ASSERT_INT(cuStreamCreate(&s, 0), ==, CUDA_ERROR_UNKNOWN);
    CK(cuStreamCreate(&s, 0));
    return 0;
}
