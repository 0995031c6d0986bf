/* Stream-ordered allocation from the default pool. */
#include "sd.h"

TEST_IMPL(stream_ordered_allocation)
{
    sd_env("FAKECUDA_KERNEL_NS", "k20=20000000");
    ASSERT_INT(sd_init(), ==, 0);
    CUmemoryPool def, cur;
    CK(cuDeviceGetDefaultMemPool(&def, 0));
    CK(cuDeviceGetMemPool(&cur, 0));
    ASSERT(def == cur);
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    size_t free0, free1, total;
    CK(cuMemGetInfo_v2(&free0, &total));
    CUdeviceptr a, b;
    CK(cuMemAllocAsync(&a, 1 << 20, s));
    CK(cuMemAllocFromPoolAsync(&b, 1 << 20, def, s));
    CUmemoryPool pa;
    CK(cuPointerGetAttribute(&pa, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
    ASSERT(pa == def);
    CK(cuMemsetD8Async(a, 7, 1 << 20, s));
    CK(cuMemcpyDtoDAsync_v2(b, a, 1 << 20, s));
    CUfunction k = sd_kernel("k20", 0);
    ASSERT(k);
    CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    CK(cuMemFreeAsync(a, s));
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free0 - free1, ==, 2u << 20); /* the free waits for the kernel */
    unsigned char x;
    CK(cuMemcpyDtoHAsync_v2(&x, b, 1, s));
    CK(cuStreamSynchronize(s));
    ASSERT_INT(x, ==, 7);
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free0 - free1, ==, 1u << 20);
    CK(cuMemFreeAsync(b, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free1, ==, free0);
    ASSERT_INT(cuMemFreeAsync(b, s), ==, CUDA_ERROR_INVALID_VALUE);
    return 0;
}
