/* Synchronous copies and memsets block the host exactly where NVIDIA documents. Blocking is
 * measured against a 100 ms kernel queued first, with margins for a loaded machine. */
#include "sd.h"

TEST_IMPL(synchronous_calls_block_as_documented)
{
    sd_env("FAKECUDA_KERNEL_NS", "busy=100000000");
    ASSERT_INT(sd_init(), ==, 0);
    size_t n = 1 << 20;
    CUdeviceptr d, d2;
    void *pin;
    CK(cuMemAlloc_v2(&d, n));
    CK(cuMemAlloc_v2(&d2, n));
    CK(cuMemAllocHost_v2(&pin, n));
    CUfunction busy = sd_kernel("busy", 0);
    ASSERT(busy);

    /* D2D: no host synchronization. */
    long long t0 = sd_now_ns();
    CK(cuLaunchKernel(busy, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cuMemcpyDtoD_v2(d2, d, n));
    ASSERT_INT(sd_now_ns() - t0, <, 50000000);
    /* Memset of device memory: asynchronous too. */
    CK(cuMemsetD8_v2(d, 0x5a, n));
    ASSERT_INT(sd_now_ns() - t0, <, 50000000);
    ASSERT_INT(cuStreamQuery(NULL), ==, CUDA_ERROR_NOT_READY);
    /* D2H returns once the copy is done, i.e. after the kernel and the memset. */
    CK(cuMemcpyDtoH_v2(pin, d, n));
    ASSERT_INT(sd_now_ns() - t0, >=, 100000000);
    ASSERT_INT(((unsigned char *)pin)[n - 1], ==, 0x5a);
    CK(cuStreamQuery(NULL));

    /* Pinned H2D is synchronous with the host. */
    t0 = sd_now_ns();
    CK(cuLaunchKernel(busy, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cuMemcpyHtoD_v2(d, pin, n));
    ASSERT_INT(sd_now_ns() - t0, >=, 100000000);

    /* Memsets of pinned host memory are fully synchronous. */
    t0 = sd_now_ns();
    CK(cuLaunchKernel(busy, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cuMemsetD32_v2((CUdeviceptr)(uintptr_t)pin, 0x01020304u, n / 4));
    ASSERT_INT(sd_now_ns() - t0, >=, 100000000);
    ASSERT_UINT(((unsigned *)pin)[7], ==, 0x01020304u);
    return 0;
}
