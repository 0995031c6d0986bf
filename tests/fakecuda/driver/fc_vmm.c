/* Virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess ...),
 * as PyTorch's expandable segments use it. Apart from fc_mem.c because it maps its own memory
 * (a sparse memfd per physical allocation) and only shares the range map and the budget. */
#define _GNU_SOURCE
#include "fc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* cuMemCreate sizes and reservation alignment are multiples of this. */
#define FC_VMM_GRANULARITY (2u << 20)

/* ---- virtual memory management (PyTorch expandable segments) ------------------------- */

struct fc_phys {
    uint32_t magic;
    int fd;         /* memfd: sparse, so mapping it costs nothing until touched */
    size_t size;
    int dev;
};
#define FC_PHYS_MAGIC 0x9495a1c0u

static CUresult fc_check_prop(const CUmemAllocationProp *prop)
{
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_check_device(prop->location.id);
}

FC_EXPORT CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity,
                                                         const CUmemAllocationProp *prop,
                                                         CUmemAllocationGranularity_flags option)
{
    FC_ENTER("cuMemGetAllocationGranularity");
    CUresult r = fc_check_prop(prop);
    if (r != CUDA_SUCCESS)
        return r;
    if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                         option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = FC_VMM_GRANULARITY;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                               CUdeviceptr addr, unsigned long long flags)
{
    FC_ENTER_INIT("cuMemAddressReserve");
    if (!ptr || !size || size % FC_VMM_GRANULARITY || flags ||
        (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t align = alignment > FC_VMM_GRANULARITY ? alignment : FC_VMM_GRANULARITY;
    /* Over-reserve to align, then trim: mmap only guarantees page alignment. */
    char *p = mmap(addr ? (void *)(uintptr_t)addr : NULL, size + align, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t base = fc_round((uintptr_t)p, align);
    if (base > (uintptr_t)p)
        munmap(p, base - (uintptr_t)p);
    uintptr_t end = (uintptr_t)p + size + align;
    if (end > base + size)
        munmap((void *)(base + size), end - (base + size));
    fc_ctx *c = fc_ctx_current();
    fc_range rg = {.base = base, .size = size, .kind = FC_MEM_VMM, .dev = c ? c->dev : 0, .ctx = c};
    if (fc_map_insert(rg) != 0)
        fc_fatal("mmap returned %#lx, which overlaps a tracked allocation", (unsigned long)base);
    *ptr = base;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    FC_ENTER_INIT("cuMemAddressFree");
    fc_range r;
    if (fc_mem_lookup((uintptr_t)ptr, &r) != 0 || r.base != (uintptr_t)ptr || r.size != size ||
        r.kind != FC_MEM_VMM)
        return CUDA_ERROR_INVALID_VALUE;
    fc_map_remove((uintptr_t)ptr, FC_KIND(FC_MEM_VMM), &r);
    munmap((void *)r.base, r.size);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                       const CUmemAllocationProp *prop, unsigned long long flags)
{
    FC_ENTER_INIT("cuMemCreate");
    CUresult r = fc_check_prop(prop);
    if (r != CUDA_SUCCESS)
        return r;
    if (!handle || !size || size % FC_VMM_GRANULARITY || flags)
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = &fc_devs[prop->location.id];
    if (fc_budget_take(d, size) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct fc_phys *ph = calloc(1, sizeof *ph);
    int fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
    if (!ph || fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
            close(fd);
        free(ph);
        fc_budget_give(d, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    ph->magic = FC_PHYS_MAGIC;
    ph->fd = fd;
    ph->size = size;
    ph->dev = prop->location.id;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)ph;
    return CUDA_SUCCESS;
}

static struct fc_phys *fc_phys_get(CUmemGenericAllocationHandle h)
{
    struct fc_phys *ph = (struct fc_phys *)(uintptr_t)h;
    return ph && ph->magic == FC_PHYS_MAGIC ? ph : NULL;
}

FC_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    FC_ENTER_INIT("cuMemRelease");
    struct fc_phys *ph = fc_phys_get(handle);
    if (!ph)
        return CUDA_ERROR_INVALID_VALUE;
    /* Mappings keep the memfd's pages alive; the budget returns now, as the handle's
     * memory is released once unmapped. */
    fc_budget_give(&fc_devs[ph->dev], ph->size);
    close(ph->fd);
    ph->magic = 0;
    free(ph);
    return CUDA_SUCCESS;
}

static int fc_in_reservation(uintptr_t p, size_t size)
{
    fc_range r;
    return fc_mem_lookup(p, &r) == 0 && r.kind == FC_MEM_VMM && p + size <= r.base + r.size;
}

FC_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    FC_ENTER_INIT("cuMemMap");
    struct fc_phys *ph = fc_phys_get(handle);
    if (!ph || flags || !size || offset + size > ph->size || ptr % FC_VMM_GRANULARITY ||
        !fc_in_reservation((uintptr_t)ptr, size))
        return CUDA_ERROR_INVALID_VALUE;
    /* Mapped but inaccessible until cuMemSetAccess, as on the real driver. */
    void *p = mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, ph->fd,
                   (off_t)offset);
    return p == MAP_FAILED ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size,
                                          const CUmemAccessDesc *desc, size_t count)
{
    FC_ENTER_INIT("cuMemSetAccess");
    if (!desc || !count || !fc_in_reservation((uintptr_t)ptr, size))
        return CUDA_ERROR_INVALID_VALUE;
    int prot = PROT_NONE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
            fc_check_device(desc[i].location.id) != CUDA_SUCCESS)
            return CUDA_ERROR_INVALID_VALUE;
        if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            prot = PROT_READ | PROT_WRITE;
        else if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ && prot == PROT_NONE)
            prot = PROT_READ;
    }
    return mprotect((void *)(uintptr_t)ptr, size, prot) == 0 ? CUDA_SUCCESS
                                                              : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FC_ENTER_INIT("cuMemUnmap");
    if (!size || !fc_in_reservation((uintptr_t)ptr, size))
        return CUDA_ERROR_INVALID_VALUE;
    void *p = mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    return p == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
