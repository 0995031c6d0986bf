/* The virtual memory management calls PyTorch's expandable segments use. */
#include "sd.h"

TEST_IMPL(vmm_reserve_create_map_access)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    size_t gran;
    CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    ASSERT_UINT(gran, ==, 2u << 20);
    size_t free0, free1, total;
    CK(cuMemGetInfo_v2(&free0, &total));
    CUdeviceptr va;
    size_t span = 64 * gran;
    CK(cuMemAddressReserve(&va, span, 0, 0, 0));
    ASSERT_UINT(va % gran, ==, 0);
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free1, ==, free0); /* reserving takes no memory */
    CUmemGenericAllocationHandle h1, h2;
    CK(cuMemCreate(&h1, 2 * gran, &prop, 0));
    CK(cuMemCreate(&h2, gran, &prop, 0));
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free0 - free1, ==, 3 * gran);
    CK(cuMemMap(va, 2 * gran, 0, h1, 0));
    CK(cuMemMap(va + 2 * gran, gran, 0, h2, 0));
    CUmemAccessDesc acc = {.location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0},
                           .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CK(cuMemSetAccess(va, 3 * gran, &acc, 1));
    /* One contiguous device range across two physical allocations. */
    CK(cuMemsetD32_v2(va, 0x11223344u, 3 * gran / 4));
    unsigned v[2];
    CK(cuMemcpyDtoH_v2(&v[0], va + gran - 4, 4));
    CK(cuMemcpyDtoH_v2(&v[1], va + 3 * gran - 4, 4));
    ASSERT_UINT(v[0], ==, 0x11223344u);
    ASSERT_UINT(v[1], ==, 0x11223344u);
    unsigned type;
    CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + gran));
    ASSERT_UINT(type, ==, CU_MEMORYTYPE_DEVICE);
    ASSERT_INT(cuMemMap(va + 100, gran, 0, h2, 0), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuMemCreate(&h2, gran + 1, &prop, 0), ==, CUDA_ERROR_INVALID_VALUE);
    CK(cuMemUnmap(va, 3 * gran));
    CK(cuMemRelease(h1));
    CK(cuMemRelease(h2));
    CK(cuMemAddressFree(va, span));
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free1, ==, free0);
    return 0;
}
