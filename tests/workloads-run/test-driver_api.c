#include "wl_run.h"

/* Module functions and library kernels, by cuLaunchKernel and cuLaunchKernelEx, all computed. */
TEST_IMPL(driver_api)
{
    ctt_proc p;
    double ms;
    ASSERT_INT(wl_run(&p, "driver_api", NULL, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "driver_api: device=NVIDIA H100");
    ASSERT_CONTAINS(p.out, "driver_api: verify=ok mismatches=0");
    ASSERT_INT(wl_num(p.out, "driver_api: launches=", "cuLaunchKernelEx"), ==, 2);
    ASSERT_INT(wl_num(p.out, "driver_api: launches=", "alloc_bytes"), ==, 3 * 262144);
    ctt_proc_free(&p);
    return 0;
}
