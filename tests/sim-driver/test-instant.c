/* FAKECUDA_INSTANT=1: every operation completes inline at no simulated cost. */
#include "sd.h"

TEST_IMPL(instant_mode_completes_inline)
{
    sd_env("FAKECUDA_INSTANT", "1");
    sd_env("FAKECUDA_KERNEL_NS", "slow=50000000");
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction k = sd_kernel("slow", 1);
    ASSERT(k);
    CUstream s;
    CUevent a, b;
    CK(cuStreamCreate(&s, 0));
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CUdeviceptr d;
    void *pin;
    CK(cuMemAlloc_v2(&d, 4096));
    CK(cuMemAllocHost_v2(&pin, 4096));
    long long t0 = sd_now_ns();
    CK(cuEventRecord(a, s));
    for (int i = 0; i < 20000; i++) {
        void *args[] = {&d};
        CK(cuLaunchKernel(k, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
        ((int *)pin)[0] = i;
        CK(cuMemcpyHtoDAsync_v2(d, pin, 4, s));
        ASSERT_INT(*(int *)(uintptr_t)d, ==, i); /* the copy already happened */
    }
    CK(cuEventRecord(b, s));
    CK(cuStreamQuery(s));
    CK(cuEventQuery(b));
    long long wall = sd_now_ns() - t0;
    /* 20000 "50 ms" kernels took no simulated time. */
    ASSERT_INT(wall, <, 1000000000);
    ASSERT(sd_elapsed_ns(a, b) < 1e9);
    return 0;
}
