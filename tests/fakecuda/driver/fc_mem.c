/* Memory. Device memory is host address space reserved with mmap(MAP_NORESERVE), so a card
 * larger than the machine works as long as a program does not touch all of it, and device
 * pointers are host-addressable (host kernels and copies use them directly). Each device has
 * a byte budget (its capacity, or FAKECUDA_MEM_LIMIT); allocations beyond it fail with
 * CUDA_ERROR_OUT_OF_MEMORY and cuMemGetInfo reports what is left.
 *
 * Every allocation the driver knows of (device, pinned, registered, managed, pool, VMM
 * reservation) is in one address-range map, which classifies pointers for copies and
 * cuPointerGetAttribute(s); an address in no range is pageable host memory. Stream-ordered
 * allocation and pools are in fc_pool.c, virtual memory management in fc_vmm.c. */
#define _GNU_SOURCE
#include "fc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Device allocations are aligned and accounted in these units, like the real allocator's
 * minimum alignment. */
#define FC_ALLOC_ALIGN 512u

/* ---- the range map: a sorted array under a rwlock ------------------------------------ */

static pthread_rwlock_t fc_map_lock = PTHREAD_RWLOCK_INITIALIZER;
static fc_range *fc_map;
static size_t fc_map_n, fc_map_cap;
static _Atomic unsigned long long fc_buffer_ids = 1;

/* Index of the first range with base > p. */
static size_t fc_map_upper(uintptr_t p)
{
    size_t lo = 0, hi = fc_map_n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (fc_map[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int fc_map_insert(fc_range r)
{
    pthread_rwlock_wrlock(&fc_map_lock);
    size_t i = fc_map_upper(r.base);
    if ((i > 0 && fc_map[i - 1].base + fc_map[i - 1].size > r.base) ||
        (i < fc_map_n && r.base + r.size > fc_map[i].base)) {
        pthread_rwlock_unlock(&fc_map_lock);
        return -1;
    }
    if (fc_map_n == fc_map_cap) {
        size_t cap = fc_map_cap ? 2 * fc_map_cap : 256;
        fc_range *m = realloc(fc_map, cap * sizeof *m);
        if (!m)
            fc_fatal("out of host memory for the allocation map");
        fc_map = m;
        fc_map_cap = cap;
    }
    memmove(&fc_map[i + 1], &fc_map[i], (fc_map_n - i) * sizeof *fc_map);
    r.id = atomic_fetch_add(&fc_buffer_ids, 1);
    fc_map[i] = r;
    fc_map_n++;
    pthread_rwlock_unlock(&fc_map_lock);
    return 0;
}

/* Removes the range starting exactly at base with one of the given kinds; returns 0 and the
 * removed range, or -1. */
int fc_map_remove(uintptr_t base, unsigned kinds_mask, fc_range *out)
{
    pthread_rwlock_wrlock(&fc_map_lock);
    size_t i = fc_map_upper(base);
    if (i == 0 || fc_map[i - 1].base != base || !(kinds_mask & (1u << fc_map[i - 1].kind))) {
        pthread_rwlock_unlock(&fc_map_lock);
        return -1;
    }
    *out = fc_map[i - 1];
    memmove(&fc_map[i - 1], &fc_map[i], (fc_map_n - i) * sizeof *fc_map);
    fc_map_n--;
    pthread_rwlock_unlock(&fc_map_lock);
    return 0;
}

int fc_mem_lookup(uintptr_t p, fc_range *out)
{
    pthread_rwlock_rdlock(&fc_map_lock);
    size_t i = fc_map_upper(p);
    int found = i > 0 && p < fc_map[i - 1].base + fc_map[i - 1].size;
    if (found)
        *out = fc_map[i - 1];
    pthread_rwlock_unlock(&fc_map_lock);
    return found ? 0 : -1;
}

int fc_mem_is_pinned_kind(fc_mem_kind k)
{
    return k == FC_MEM_PINNED || k == FC_MEM_REGISTERED;
}

/* ---- budget -------------------------------------------------------------------------- */

size_t fc_round(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

int fc_budget_take(fc_device *d, size_t n)
{
    size_t used = atomic_load(&d->used);
    do {
        if (n > d->budget || used > d->budget - n)
            return -1;
    } while (!atomic_compare_exchange_weak(&d->used, &used, used + n));
    return 0;
}

void fc_budget_give(fc_device *d, size_t n)
{
    atomic_fetch_sub(&d->used, n);
}

static void *fc_reserve(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- device memory ------------------------------------------------------------------- */

CUresult fc_alloc_device(CUdeviceptr *dptr, size_t bytesize, fc_mem_kind kind,
                         struct CUmemPoolHandle_st *pool, fc_ctx *c)
{
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (bytesize == 0)
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = fc_ctx_dev(c);
    size_t n = fc_round(bytesize, FC_ALLOC_ALIGN);
    if (kind != FC_MEM_MANAGED && fc_budget_take(d, n) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = fc_reserve(n);
    if (!p) {
        if (kind != FC_MEM_MANAGED)
            fc_budget_give(d, n);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    fc_range r = {.base = (uintptr_t)p, .size = n, .kind = kind, .dev = c->dev, .ctx = c,
                  .pool = pool};
    if (fc_map_insert(r) != 0)
        fc_fatal("mmap returned %p, which overlaps a tracked allocation", p);
    if (pool) {
        size_t used = atomic_fetch_add(&pool->used, n) + n, high = atomic_load(&pool->used_high);
        while (used > high && !atomic_compare_exchange_weak(&pool->used_high, &high, used)) {
        }
    }
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult fc_mem_alloc_device(fc_ctx *c, size_t bytesize, CUdeviceptr *out)
{
    return fc_alloc_device(out, bytesize, FC_MEM_DEVICE, NULL, c);
}

void fc_mem_free_device(uintptr_t p)
{
    fc_range r;
    if (fc_map_remove(p, FC_KIND(FC_MEM_DEVICE) | FC_KIND(FC_MEM_MANAGED), &r) != 0)
        return;
    munmap((void *)r.base, r.size);
    if (r.kind == FC_MEM_DEVICE)
        fc_budget_give(&fc_devs[r.dev], r.size);
    if (r.pool)
        atomic_fetch_sub(&r.pool->used, r.size);
}

static CUresult fc_free_device(CUdeviceptr dptr)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!dptr)
        return CUDA_SUCCESS;
    fc_range r;
    if (fc_mem_lookup((uintptr_t)dptr, &r) != 0 || r.base != (uintptr_t)dptr ||
        (r.kind != FC_MEM_DEVICE && r.kind != FC_MEM_MANAGED))
        return CUDA_ERROR_INVALID_VALUE;
    /* cuMemFree synchronizes: memory may be in use by queued work. */
    fc_ctx_sync(r.ctx);
    fc_mem_free_device((uintptr_t)dptr);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    FC_ENTER("cuMemAlloc_v2");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    return r != CUDA_SUCCESS ? r : fc_alloc_device(dptr, bytesize, FC_MEM_DEVICE, NULL, c);
}

FC_EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    FC_ENTER("cuMemAlloc");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr p;
    r = fc_alloc_device(&p, bytesize, FC_MEM_DEVICE, NULL, c);
    if (r == CUDA_SUCCESS && p > 0xffffffffu) {
        /* The 32-bit ABI cannot return this address. */
        fc_mem_free_device((uintptr_t)p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)p;
    return r;
}

/* Entry points call these helpers, never each other: a tracer interposing on the exported
 * names must see only the calls the program made. */
static CUresult fc_alloc_pitch(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                               size_t Height, unsigned ElementSizeBytes)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pPitch || !WidthInBytes || !Height ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = fc_round(WidthInBytes, FC_ALLOC_ALIGN);
    r = fc_alloc_device(dptr, pitch * Height, FC_MEM_DEVICE, NULL, c);
    if (r == CUDA_SUCCESS)
        *pPitch = pitch;
    return r;
}

FC_EXPORT CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
                                              size_t WidthInBytes, size_t Height,
                                              unsigned int ElementSizeBytes)
{
    FC_ENTER("cuMemAllocPitch_v2");
    return fc_alloc_pitch(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch,
                                           unsigned int WidthInBytes, unsigned int Height,
                                           unsigned int ElementSizeBytes)
{
    FC_ENTER("cuMemAllocPitch");
    if (!dptr || !pPitch)
        return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr p;
    size_t pitch;
    CUresult r = fc_alloc_pitch(&p, &pitch, WidthInBytes, Height, ElementSizeBytes);
    if (r == CUDA_SUCCESS && p > 0xffffffffu) {
        fc_mem_free_device((uintptr_t)p); /* the 32-bit ABI cannot return this address */
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (r == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr_v1)p;
        *pPitch = (unsigned)pitch;
    }
    return r;
}

FC_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    FC_ENTER("cuMemFree_v2");
    return fc_free_device(dptr);
}

FC_EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr_v1 dptr)
{
    FC_ENTER("cuMemFree");
    return fc_free_device(dptr);
}

static CUresult fc_mem_info(size_t *free_bytes, size_t *total)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = fc_ctx_dev(c);
    *total = d->budget;
    *free_bytes = d->budget - atomic_load(&d->used);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    FC_ENTER("cuMemGetInfo_v2");
    return fc_mem_info(free_bytes, total);
}

/* The 32-bit ABI: byte counts saturate at 4 GiB - 1. */
FC_EXPORT CUresult CUDAAPI cuMemGetInfo(unsigned int *free_bytes, unsigned int *total)
{
    FC_ENTER("cuMemGetInfo");
    size_t f, t;
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_mem_info(&f, &t);
    if (r == CUDA_SUCCESS) {
        *free_bytes = f > 0xffffffffu ? 0xffffffffu : (unsigned)f;
        *total = t > 0xffffffffu ? 0xffffffffu : (unsigned)t;
    }
    return r;
}

FC_EXPORT CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
                                                   CUdeviceptr dptr)
{
    FC_ENTER_INIT("cuMemGetAddressRange_v2");
    fc_range r;
    if (fc_mem_lookup((uintptr_t)dptr, &r) != 0 || fc_mem_is_pinned_kind(r.kind))
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = r.base;
    if (psize)
        *psize = r.size;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    FC_ENTER("cuMemAllocManaged");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    /* Managed memory may oversubscribe the device, so it takes no budget. */
    return fc_alloc_device(dptr, bytesize, FC_MEM_MANAGED, NULL, c);
}

/* ---- pinned and registered host memory ----------------------------------------------- */

static CUresult fc_host_alloc(void **pp, size_t bytesize, unsigned flags)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pp || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                            CU_MEMHOSTALLOC_WRITECOMBINED))
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = fc_round(bytesize, (size_t)sysconf(_SC_PAGESIZE));
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_range rg = {.base = (uintptr_t)p, .size = n, .kind = FC_MEM_PINNED, .dev = c->dev,
                   .ctx = c, .flags = flags};
    if (fc_map_insert(rg) != 0)
        fc_fatal("mmap returned %p, which overlaps a tracked allocation", p);
    *pp = p;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    FC_ENTER("cuMemAllocHost_v2");
    return fc_host_alloc(pp, bytesize, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocHost(void **pp, unsigned int bytesize)
{
    FC_ENTER("cuMemAllocHost");
    return fc_host_alloc(pp, bytesize, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    FC_ENTER("cuMemHostAlloc");
    return fc_host_alloc(pp, bytesize, Flags);
}

FC_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    FC_ENTER_INIT("cuMemFreeHost");
    fc_range r;
    if (fc_mem_lookup((uintptr_t)p, &r) != 0 || r.base != (uintptr_t)p || r.kind != FC_MEM_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    fc_ctx_sync(r.ctx);
    if (fc_map_remove((uintptr_t)p, FC_KIND(FC_MEM_PINNED), &r) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    munmap(p, r.size);
    return CUDA_SUCCESS;
}

static CUresult fc_host_register(void *p, size_t bytesize, unsigned flags)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!p || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)(CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                            CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY))
        return CUDA_ERROR_INVALID_VALUE;
    fc_range rg = {.base = (uintptr_t)p, .size = bytesize, .kind = FC_MEM_REGISTERED,
                   .dev = c->dev, .ctx = c, .flags = flags};
    return fc_map_insert(rg) == 0 ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
}

FC_EXPORT CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    FC_ENTER("cuMemHostRegister_v2");
    return fc_host_register(p, bytesize, Flags);
}

FC_EXPORT CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    FC_ENTER("cuMemHostRegister");
    return fc_host_register(p, bytesize, Flags);
}

FC_EXPORT CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    FC_ENTER_INIT("cuMemHostUnregister");
    fc_range r;
    if (fc_mem_lookup((uintptr_t)p, &r) != 0 || r.base != (uintptr_t)p ||
        r.kind != FC_MEM_REGISTERED)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    fc_ctx_sync(r.ctx);
    fc_map_remove((uintptr_t)p, FC_KIND(FC_MEM_REGISTERED), &r);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
                                                        unsigned int Flags)
{
    FC_ENTER_INIT("cuMemHostGetDevicePointer_v2");
    fc_range r;
    if (!pdptr || Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_mem_lookup((uintptr_t)p, &r) != 0 || !fc_mem_is_pinned_kind(r.kind))
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    FC_ENTER_INIT("cuMemHostGetFlags");
    fc_range r;
    if (!pFlags || fc_mem_lookup((uintptr_t)p, &r) != 0 || r.kind != FC_MEM_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    *pFlags = r.flags;
    return CUDA_SUCCESS;
}

/* ---- pointer attributes -------------------------------------------------------------- */

/* One attribute of ptr. `known` is whether the driver tracks the address. */
static CUresult fc_pointer_attribute(void *data, CUpointer_attribute a, uintptr_t ptr,
                                     const fc_range *r, int known)
{
    int device_side = known && (r->kind == FC_MEM_DEVICE || r->kind == FC_MEM_MANAGED ||
                                r->kind == FC_MEM_VMM);
    switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = known ? r->ctx : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = !known ? 0 : device_side ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        /* Unified addressing: the same address on both sides where it is accessible. */
        *(void **)data = known && (a == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ||
                                   r->kind != FC_MEM_DEVICE)
                             ? (void *)ptr
                             : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = known ? r->id : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = known && r->kind == FC_MEM_MANAGED;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = known ? r->dev : -2;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(int *)data = known && r->kind == FC_MEM_DEVICE && !r->pool;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(void **)data = known ? (void *)r->base : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = known ? r->size : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = known;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        *(unsigned *)data = known ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
                                  : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = known ? r->pool : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        *(size_t *)data = known ? r->size : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        *(void **)data = known ? (void *)r->base : NULL;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        *(unsigned long long *)data = known ? r->id : 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
        *(int *)data = 0;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

FC_EXPORT CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                                                 CUdeviceptr ptr)
{
    FC_ENTER_INIT("cuPointerGetAttribute");
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    fc_range r;
    /* Memory the driver does not know (pageable host memory) is an invalid argument for
     * cuPointerGetAttribute, unlike cuPointerGetAttributes. */
    if (fc_mem_lookup((uintptr_t)ptr, &r) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (attribute == CU_POINTER_ATTRIBUTE_HOST_POINTER && r.kind == FC_MEM_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_pointer_attribute(data, attribute, (uintptr_t)ptr, &r, 1);
}

FC_EXPORT CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
                                                  CUpointer_attribute *attributes, void **data,
                                                  CUdeviceptr ptr)
{
    FC_ENTER_INIT("cuPointerGetAttributes");
    if (!attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    fc_range r;
    int known = fc_mem_lookup((uintptr_t)ptr, &r) == 0;
    for (unsigned i = 0; i < numAttributes; i++) {
        CUresult res = fc_pointer_attribute(data[i], attributes[i], (uintptr_t)ptr, &r, known);
        if (res != CUDA_SUCCESS)
            return res;
    }
    return CUDA_SUCCESS;
}
