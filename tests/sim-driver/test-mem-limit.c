/* FAKECUDA_MEM_LIMIT caps the device budget. */
#include "sd.h"

TEST_IMPL(mem_limit_caps_the_budget)
{
    sd_env("FAKECUDA_MEM_LIMIT", "64M");
    ASSERT_INT(sd_init(), ==, 0);
    size_t fr, total;
    CK(cuMemGetInfo_v2(&fr, &total));
    ASSERT_UINT(total, ==, 64u << 20);
    CUdeviceptr a, b;
    CK(cuMemAlloc_v2(&a, 48u << 20));
    ASSERT_INT(cuMemAlloc_v2(&b, 17u << 20), ==, CUDA_ERROR_OUT_OF_MEMORY);
    CK(cuMemAlloc_v2(&b, 16u << 20));
    CK(cuMemGetInfo_v2(&fr, &total));
    ASSERT_UINT(fr, ==, 0);
    return 0;
}
