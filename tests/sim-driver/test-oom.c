/* Device memory is reserved address space: an 80 GB H100 works on a small machine, the
 * capacity is enforced, cuMemGetInfo tells the truth, and FAKECUDA_MEM_LIMIT caps it. */
#include "sd.h"

#include <stdlib.h>

TEST_IMPL(oom_at_capacity_and_meminfo)
{
    ASSERT_INT(sd_init(), ==, 0);
    size_t free0, total, free1;
    CK(cuMemGetInfo_v2(&free0, &total));
    size_t card;
    CK(cuDeviceTotalMem_v2(&card, 0));
    ASSERT_UINT(total, ==, card);
    ASSERT_UINT(total, ==, 81559ull << 20); /* H100 80GB HBM3 */
    ASSERT_UINT(free0, ==, total);
    CUdeviceptr big, small, too_much;
    size_t big_n = 70ull << 30;
    CK(cuMemAlloc_v2(&big, big_n));
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free0 - free1, ==, big_n);
    /* Touch both ends: the memory is real where used. */
    CK(cuMemsetD8_v2(big, 0xab, 4096));
    CK(cuMemsetD8_v2(big + big_n - 4096, 0xcd, 4096));
    unsigned char b[2];
    CK(cuMemcpyDtoH_v2(&b[0], big, 1));
    CK(cuMemcpyDtoH_v2(&b[1], big + big_n - 1, 1));
    ASSERT_INT(b[0], ==, 0xab);
    ASSERT_INT(b[1], ==, 0xcd);
    ASSERT_INT(cuMemAlloc_v2(&too_much, free1 + 1), ==, CUDA_ERROR_OUT_OF_MEMORY);
    CK(cuMemAlloc_v2(&small, 1000)); /* rounded to the 512-byte allocation unit */
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free0 - free1, ==, big_n + 1024);
    CK(cuMemFree_v2(big));
    CK(cuMemFree_v2(small));
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free1, ==, free0);
    ASSERT_INT(cuMemFree_v2(small), ==, CUDA_ERROR_INVALID_VALUE);
    return 0;
}
