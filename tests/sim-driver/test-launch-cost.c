/* FAKECUDA_LAUNCH_NS: the launch call keeps the host that long before the GPU sees the kernel,
 * so on an idle stream an event recorded before the call is at least that far from the
 * kernel's end. */
#include "sd.h"

TEST_IMPL(launch_cost_holds_the_host)
{
    sd_env("FAKECUDA_LAUNCH_NS", "200000");
    sd_env("FAKECUDA_KERNEL_NS", "plain=1000");
    ASSERT_INT(sd_init(), ==, 0);
    CUmodule m;
    CUfunction f;
    CK(cuModuleLoadData(&m, "fakecuda-module 1\nkernel plain\n"));
    CK(cuModuleGetFunction(&f, m, "plain"));
    CUstream s;
    CUevent a, b;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CK(cuEventRecord(a, s));
    long long t0 = sd_now_ns();
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    long long call = sd_now_ns() - t0;
    CK(cuEventRecord(b, s));
    CK(cuEventSynchronize(b));
    ASSERT(call >= 200000);
    ASSERT(sd_elapsed_ns(a, b) >= 200000 + 1000);
    return 0;
}
