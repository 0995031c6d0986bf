/* The baseline interposers' wrappers (one header, three probes): each bench interposer
 * (ib_floor.c, ib_naive.c, ib_lttng.c) includes this file and defines its probes, declared here:
 * ib_before runs before the real call, ib_after after it with what ib_before returned. This
 * file defines, with the ABI of CUDA 13's headers, the five entry points bench_calls exercises:
 * cuLaunchKernel, cuMemcpyHtoDAsync_v2, cuMemAlloc_v2, cuMemFree_v2 and cudaLaunchKernel. Preloaded
 * (LD_PRELOAD), they take the program's calls and reach the real function through
 * dlsym(RTLD_NEXT) once per function. Like any LD_PRELOAD interposer they see only calls made
 * through the dynamic linker: the runtime's own driver calls (through cuGetProcAddress) pass by. */
#ifndef IB_WRAPPERS_H
#define IB_WRAPPERS_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { IB_LAUNCH, IB_MEMCPY, IB_ALLOC, IB_FREE, IB_RTLAUNCH, IB_NFN };
static const char *const ib_names[IB_NFN] = {"cuLaunchKernel", "cuMemcpyHtoDAsync_v2",
                                             "cuMemAlloc_v2", "cuMemFree_v2", "cudaLaunchKernel"};
static void *ib_real_fn[IB_NFN];

static void *ib_resolve_slow(int fn)
{
    void *p = dlsym(RTLD_NEXT, ib_names[fn]);
    if (!p) {
        fprintf(stderr, "bench interposer: dlsym(RTLD_NEXT, \"%s\") found nothing: expected the "
                "CUDA library after this one\n", ib_names[fn]);
        abort();
    }
    __atomic_store_n(&ib_real_fn[fn], p, __ATOMIC_RELEASE);
    return p;
}

static inline void *ib_real(int fn)
{
    void *p = __atomic_load_n(&ib_real_fn[fn], __ATOMIC_ACQUIRE);
    return __builtin_expect(p != NULL, 1) ? p : ib_resolve_slow(fn);
}

static inline uint64_t ib_before(int fn, uint64_t arg);
static inline void ib_after(int fn, uint64_t t0, uint64_t arg, int result);

#define IB_EXPORT __attribute__((visibility("default")))

/* One wrapper: probe, real call, probe. */
#define IB_WRAP(fn, name, arg, call_args)                                                     \
    do {                                                                                      \
        uint64_t ib_t0 = ib_before(fn, (uint64_t)(uintptr_t)(arg));                           \
        __typeof__(name call_args) ib_r = ((__typeof__(&name))ib_real(fn))call_args;          \
        ib_after(fn, ib_t0, (uint64_t)(uintptr_t)(arg), (int)ib_r);                           \
        return ib_r;                                                                          \
    } while (0)

IB_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                  CUstream s, void **params, void **extra)
{
    IB_WRAP(IB_LAUNCH, cuLaunchKernel, f, (f, gx, gy, gz, bx, by, bz, shared, s, params, extra));
}

IB_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s)
{
    IB_WRAP(IB_MEMCPY, cuMemcpyHtoDAsync_v2, dst, (dst, src, bytes, s));
}

IB_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    IB_WRAP(IB_ALLOC, cuMemAlloc_v2, bytes, (p, bytes));
}

IB_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    IB_WRAP(IB_FREE, cuMemFree_v2, p, (p));
}

IB_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                       size_t shared, cudaStream_t s)
{
    IB_WRAP(IB_RTLAUNCH, cudaLaunchKernel, func, (func, grid, block, args, shared, s));
}

#endif
