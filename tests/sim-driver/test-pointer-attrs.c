/* cuPointerGetAttribute(s) classify device, pinned, registered, managed and pageable memory
 * as the real driver does. */
#include "sd.h"

#include <stdlib.h>

static int mem_type(void *p, unsigned *type, int *managed, CUcontext *ctx)
{
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_CONTEXT};
    void *data[] = {type, managed, ctx};
    return cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)(uintptr_t)p);
}

TEST_IMPL(pointer_attributes_by_memory_kind)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUcontext ctx, got;
    CK(cuCtxGetCurrent(&ctx));
    CUdeviceptr dev, man;
    void *pin;
    CK(cuMemAlloc_v2(&dev, 1 << 20));
    CK(cuMemAllocManaged(&man, 1 << 20, CU_MEM_ATTACH_GLOBAL));
    CK(cuMemHostAlloc(&pin, 1 << 20, CU_MEMHOSTALLOC_PORTABLE));
    char *reg = aligned_alloc(4096, 1 << 20), *pageable = malloc(4096);
    CK(cuMemHostRegister_v2(reg, 1 << 20, 0));
    unsigned type;
    int managed;

    CK(mem_type((void *)(uintptr_t)(dev + 100), &type, &managed, &got));
    ASSERT_UINT(type, ==, CU_MEMORYTYPE_DEVICE);
    ASSERT_INT(managed, ==, 0);
    ASSERT(got == ctx);
    CK(mem_type((void *)(uintptr_t)man, &type, &managed, &got));
    ASSERT_UINT(type, ==, CU_MEMORYTYPE_DEVICE);
    ASSERT_INT(managed, ==, 1);
    CK(mem_type(pin, &type, &managed, &got));
    ASSERT_UINT(type, ==, CU_MEMORYTYPE_HOST);
    ASSERT(got == ctx);
    CK(mem_type(reg + 5000, &type, &managed, &got));
    ASSERT_UINT(type, ==, CU_MEMORYTYPE_HOST);
    /* Pageable memory: cuPointerGetAttributes succeeds with empty values... */
    got = ctx;
    CK(mem_type(pageable, &type, &managed, &got));
    ASSERT_UINT(type, ==, 0);
    ASSERT(got == NULL);
    /* ...and cuPointerGetAttribute refuses it. */
    ASSERT_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     (CUdeviceptr)(uintptr_t)pageable),
               ==, CUDA_ERROR_INVALID_VALUE);

    CUdeviceptr start;
    size_t size;
    CK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, dev + 4096));
    CK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, dev + 4096));
    ASSERT_UINT(start, ==, dev);
    ASSERT_UINT(size, ==, 1 << 20);
    int ordinal;
    CK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dev));
    ASSERT_INT(ordinal, ==, 0);
    unsigned long long id1, id2;
    CK(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, dev));
    CK(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, man));
    ASSERT_UINT(id1, !=, id2);
    void *hp;
    CK(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, (CUdeviceptr)(uintptr_t)pin));
    ASSERT(hp == pin);
    ASSERT_INT(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, dev), ==,
               CUDA_ERROR_INVALID_VALUE);
    unsigned flags;
    CK(cuMemHostGetFlags(&flags, pin));
    ASSERT_UINT(flags, ==, CU_MEMHOSTALLOC_PORTABLE);

    /* Unregistering makes it pageable again; a second registration overlapping fails. */
    ASSERT_INT(cuMemHostRegister_v2(reg + 4096, 4096, 0), ==,
               CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CK(cuMemHostUnregister(reg));
    CK(mem_type(reg, &type, &managed, &got));
    ASSERT_UINT(type, ==, 0);
    ASSERT_INT(cuMemHostUnregister(reg), ==, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CK(cuMemFreeHost(pin));
    CK(mem_type(pin, &type, &managed, &got));
    ASSERT_UINT(type, ==, 0);
    return 0;
}
