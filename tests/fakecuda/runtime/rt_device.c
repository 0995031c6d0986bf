/* Driver loading, error state, devices and contexts, error strings and driver entry points of
 * the simulated runtime (contract in fc_rt.h). */
#define _GNU_SOURCE
#include "fc_rt.h"

#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FC_MAX_DEVICES 64

fc_rt_driver fc_drv;

static pthread_once_t fc_init_once = PTHREAD_ONCE_INIT;
static cudaError_t fc_init_error;
/* Set once a thread has entered the runtime; in a fork() child, fc_forked says the parent had. */
static _Atomic int fc_started;
static _Atomic int fc_forked;
static int fc_ndevices;

/* Every device's properties as read at init: NVIDIA's runtime learns them then, and still
 * answers cudaGetDeviceProperties in a fork() child, where every call needing the driver fails. */
static struct cudaDeviceProp fc_prop_at_init[FC_MAX_DEVICES];
static int fc_prop_learnt[FC_MAX_DEVICES];
static void fc_rt_learn_properties(void);

static _Atomic int fc_sticky;
static __thread cudaError_t fc_last;

static pthread_mutex_t fc_ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext _Atomic fc_primary[FC_MAX_DEVICES];
static __thread int fc_dev;
static __thread int fc_dev_set; /* cudaSetDevice was called on this thread */
/* The device of threads that never called cudaSetDevice: the first of cudaSetValidDevices' list. */
static _Atomic int fc_default_dev;
static __thread CUcontext fc_bound;

FC_EXPORT const char *fakecuda_runtime_version(void)
{
    return "fakecuda libcudart.so.13 (simulated CUDA 13.0 runtime)";
}

static void fc_load_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    PFN_cuGetProcAddress_v12000 gpa = h ? (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa) {
        fc_init_error = cudaErrorInsufficientDriver;
        return;
    }
    for (size_t i = 0; i < fc_rt_nrequests; i++) {
        const fc_rt_request *q = &fc_rt_requests[i];
        void *fn = NULL;
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CUresult r = gpa(q->symbol, &fn, q->version, q->flags, &found);
        if (q->offset != FC_RT_NO_SLOT && r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS)
            memcpy((char *)&fc_drv + q->offset, &fn, sizeof fn);
    }
    if (!fc_drv.cuInit_v2000 || !fc_drv.cuDeviceGetCount_v2000) {
        fc_init_error = cudaErrorInsufficientDriver;
        return;
    }
    CUresult r = fc_drv.cuInit_v2000(0);
    if (r == CUDA_SUCCESS)
        r = fc_drv.cuDeviceGetCount_v2000(&fc_ndevices);
    if (r == CUDA_SUCCESS && fc_ndevices == 0)
        r = CUDA_ERROR_NO_DEVICE;
    fc_init_error = fc_rt_map(r);
    if (fc_ndevices > FC_MAX_DEVICES)
        fc_ndevices = FC_MAX_DEVICES;
    if (r == CUDA_SUCCESS)
        fc_rt_learn_properties();
}

/* Like NVIDIA's runtime, a fork() child of a process that used CUDA gets
 * cudaErrorInitializationError from every call; the flag is checked before any lock or once,
 * which another thread of the parent may have been holding at the fork and the child never
 * sees released. */
static void fc_after_fork_child(void)
{
    if (atomic_load(&fc_started))
        atomic_store(&fc_forked, 1);
}

__attribute__((constructor)) static void fc_rt_setup(void)
{
    pthread_atfork(NULL, NULL, fc_after_fork_child);
}

int fc_rt_forked(void)
{
    return atomic_load_explicit(&fc_forked, memory_order_relaxed);
}

cudaError_t fc_rt_init(void)
{
    if (fc_rt_forked())
        return cudaErrorInitializationError;
    atomic_store_explicit(&fc_started, 1, memory_order_relaxed);
    pthread_once(&fc_init_once, fc_load_driver);
    return fc_init_error;
}

int fc_rt_device(void)
{
    return fc_dev_set ? fc_dev : atomic_load(&fc_default_dev);
}

static const fc_rt_error_desc *fc_error_desc(int value)
{
    for (size_t i = 0; i < fc_rt_nerrors; i++)
        if (fc_rt_error_table[i].value == value)
            return &fc_rt_error_table[i];
    return NULL;
}

/* The two enums share their values since CUDA 11, except for the few driver results the
 * runtime has no name for. */
cudaError_t fc_rt_map(CUresult r)
{
    if (r == CUDA_SUCCESS)
        return cudaSuccess;
    return fc_error_desc((int)r) ? (cudaError_t)r : cudaErrorUnknown;
}

cudaError_t fc_rt_ret(cudaError_t e)
{
    if (e == cudaSuccess)
        return e;
    const fc_rt_error_desc *d = fc_error_desc(e);
    if (d && d->sticky) {
        int none = cudaSuccess;
        atomic_compare_exchange_strong(&fc_sticky, &none, (int)e);
    }
    fc_last = e;
    return e;
}

cudaError_t fc_rt_err(CUresult r)
{
    return fc_rt_ret(fc_rt_map(r));
}

/* FAKECUDA_TRACE_UNSUPPORTED is the driver's switch too: one place to ask what a run missed. */
cudaError_t fc_rt_unsupported(const char *api, cudaError_t e, const char *why)
{
    if (getenv("FAKECUDA_TRACE_UNSUPPORTED"))
        fprintf(stderr, "fakecuda libcudart.so.13: %s is not simulated (%s): %s\n", api, cudaGetErrorName(e), why);
    return fc_rt_ret(e);
}

cudaError_t fc_rt_primary(int d, CUcontext *out)
{
    CUcontext c = atomic_load(&fc_primary[d]);
    if (!c) {
        pthread_mutex_lock(&fc_ctx_lock);
        c = atomic_load(&fc_primary[d]);
        CUresult r = CUDA_SUCCESS;
        CUdevice dev;
        if (!c) {
            r = FC_DRV(fc_drv.cuDeviceGet_v2000, &dev, d);
            if (r == CUDA_SUCCESS)
                r = FC_DRV(fc_drv.cuDevicePrimaryCtxRetain_v7000, &c, dev);
            if (r == CUDA_SUCCESS)
                atomic_store(&fc_primary[d], c);
        }
        pthread_mutex_unlock(&fc_ctx_lock);
        if (r != CUDA_SUCCESS)
            return fc_rt_map(r);
    }
    *out = c;
    return cudaSuccess;
}

cudaError_t fc_rt_ctx(void)
{
    cudaError_t e = fc_rt_init();
    if (e != cudaSuccess)
        return e;
    int sticky = atomic_load(&fc_sticky);
    if (sticky != cudaSuccess)
        return (cudaError_t)sticky;
    CUcontext c;
    if ((e = fc_rt_primary(fc_rt_device(), &c)) != cudaSuccess)
        return e;
    if (fc_bound != c) {
        CUresult r = FC_DRV(fc_drv.cuCtxSetCurrent_v4000, c);
        if (r != CUDA_SUCCESS)
            return fc_rt_map(r);
        fc_bound = c;
    }
    return cudaSuccess;
}

/* ---- errors ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaGetLastError(void)
{
    int sticky = atomic_load(&fc_sticky);
    cudaError_t e = fc_last;
    fc_last = cudaSuccess;
    return sticky != cudaSuccess ? (cudaError_t)sticky : e;
}

FC_EXPORT cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
    int sticky = atomic_load(&fc_sticky);
    return sticky != cudaSuccess ? (cudaError_t)sticky : fc_last;
}

FC_EXPORT const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
    const fc_rt_error_desc *d = fc_error_desc(error);
    return d ? d->name : "unrecognized error code";
}

FC_EXPORT const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
    const fc_rt_error_desc *d = fc_error_desc(error);
    return d ? d->description : "unrecognized error code";
}

/* ---- versions and devices ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return fc_rt_ret(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}

FC_EXPORT cudaError_t CUDARTAPI cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return fc_rt_ret(cudaErrorInvalidValue);
    *driverVersion = 0; /* NVIDIA's answer when there is no driver */
    if (fc_rt_init() == cudaErrorInsufficientDriver)
        return cudaSuccess;
    return fc_rt_err(FC_DRV(fc_drv.cuDriverGetVersion_v2020, driverVersion));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
    if (!count)
        return fc_rt_ret(cudaErrorInvalidValue);
    /* NVIDIA's runtime still answers the count in a fork() child: it was learnt at init */
    if (fc_rt_forked()) {
        *count = fc_ndevices;
        return cudaSuccess;
    }
    cudaError_t e = fc_rt_init();
    *count = e == cudaSuccess ? fc_ndevices : 0;
    return fc_rt_ret(e);
}

cudaError_t fc_rt_cudevice(int ordinal, CUdevice *dev)
{
    cudaError_t e = fc_rt_init();
    if (e != cudaSuccess)
        return e;
    if (ordinal < 0 || ordinal >= fc_ndevices)
        return cudaErrorInvalidDevice;
    return fc_rt_map(FC_DRV(fc_drv.cuDeviceGet_v2000, dev, ordinal));
}

cudaError_t fc_rt_ordinal(CUdevice dev, int *ordinal)
{
    for (int d = 0; d < fc_ndevices; d++) {
        CUdevice cand;
        if (fc_rt_cudevice(d, &cand) == cudaSuccess && cand == dev) {
            *ordinal = d;
            return cudaSuccess;
        }
    }
    return cudaErrorInvalidDevice;
}

FC_EXPORT cudaError_t CUDARTAPI cudaSetDevice(int device)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    fc_dev = device;
    fc_dev_set = 1;
    /* Since CUDA 12 cudaSetDevice initializes the device's primary context at once. */
    return fc_rt_ret(fc_rt_ctx());
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
    if (!device)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_rt_init();
    *device = fc_rt_device();
    return fc_rt_ret(e);
}

FC_EXPORT cudaError_t CUDARTAPI cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
    CUdevice dev;
    CUcontext c;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e == cudaSuccess && (deviceFlags != 0 || flags != 0))
        e = cudaErrorInvalidValue; /* flags would need cuDevicePrimaryCtxSetFlags: not simulated */
    if (e == cudaSuccess)
        e = fc_rt_primary(device, &c);
    return fc_rt_ret(e);
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    cudaError_t e = fc_rt_ctx();
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuCtxSynchronize_v2000));
}

/* The profiler's capture range (cuda_profiler_api.h): the driver's, in the current context. */
FC_EXPORT cudaError_t CUDARTAPI cudaProfilerStart(void)
{
    cudaError_t e = fc_rt_ctx();
    return fc_rt_ret(e != cudaSuccess ? e : fc_rt_map(FC_DRV(fc_drv.cuProfilerStart_v4000)));
}

FC_EXPORT cudaError_t CUDARTAPI cudaProfilerStop(void)
{
    cudaError_t e = fc_rt_ctx();
    return fc_rt_ret(e != cudaSuccess ? e : fc_rt_map(FC_DRV(fc_drv.cuProfilerStop_v4000)));
}

/* Destroys the current device's primary context; the next call that needs one makes a new one.
 * A sticky error stays: NVIDIA documents that only a new process clears it. */
FC_EXPORT cudaError_t CUDARTAPI cudaDeviceReset(void)
{
    CUdevice dev;
    int d = fc_rt_device();
    cudaError_t e = fc_rt_cudevice(d, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    pthread_mutex_lock(&fc_ctx_lock);
    CUresult r = CUDA_SUCCESS;
    if (atomic_load(&fc_primary[d])) {
        r = FC_DRV(fc_drv.cuDevicePrimaryCtxReset_v7000, dev);
        atomic_store(&fc_primary[d], NULL);
        fc_bound = NULL;
    }
    pthread_mutex_unlock(&fc_ctx_lock);
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    CUdevice dev;
    if (!value)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    /* cudaDeviceAttr and CUdevice_attribute share their values. */
    return fc_rt_err(FC_DRV(fc_drv.cuDeviceGetAttribute_v2000, value, (CUdevice_attribute)attr, dev));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    cudaError_t e = fc_rt_ctx();
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuCtxGetStreamPriorityRange_v5050, leastPriority, greatestPriority));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free, size_t *total)
{
    cudaError_t e = fc_rt_ctx();
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuMemGetInfo_v3020, free, total));
}

/* Where each attribute-backed field of cudaDeviceProp lives (the header's layout) and which
 * driver attribute fills it. */
typedef struct {
    size_t offset, size;
    CUdevice_attribute attr;
} fc_prop_field;

#define FC_F(field, attr) \
    {offsetof(struct cudaDeviceProp, field), sizeof(((struct cudaDeviceProp *)0)->field), \
     CU_DEVICE_ATTRIBUTE_##attr}

static const fc_prop_field fc_prop_fields[] = {
    FC_F(sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK),
    FC_F(regsPerBlock, MAX_REGISTERS_PER_BLOCK),
    FC_F(warpSize, WARP_SIZE),
    FC_F(memPitch, MAX_PITCH),
    FC_F(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK),
    FC_F(maxThreadsDim[0], MAX_BLOCK_DIM_X),
    FC_F(maxThreadsDim[1], MAX_BLOCK_DIM_Y),
    FC_F(maxThreadsDim[2], MAX_BLOCK_DIM_Z),
    FC_F(maxGridSize[0], MAX_GRID_DIM_X),
    FC_F(maxGridSize[1], MAX_GRID_DIM_Y),
    FC_F(maxGridSize[2], MAX_GRID_DIM_Z),
    FC_F(totalConstMem, TOTAL_CONSTANT_MEMORY),
    FC_F(major, COMPUTE_CAPABILITY_MAJOR),
    FC_F(minor, COMPUTE_CAPABILITY_MINOR),
    FC_F(textureAlignment, TEXTURE_ALIGNMENT),
    FC_F(texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT),
    FC_F(multiProcessorCount, MULTIPROCESSOR_COUNT),
    FC_F(integrated, INTEGRATED),
    FC_F(canMapHostMemory, CAN_MAP_HOST_MEMORY),
    FC_F(maxTexture1D, MAXIMUM_TEXTURE1D_WIDTH),
    FC_F(maxTexture1DMipmap, MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH),
    FC_F(maxTexture2D[0], MAXIMUM_TEXTURE2D_WIDTH),
    FC_F(maxTexture2D[1], MAXIMUM_TEXTURE2D_HEIGHT),
    FC_F(maxTexture2DMipmap[0], MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH),
    FC_F(maxTexture2DMipmap[1], MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT),
    FC_F(maxTexture2DLinear[0], MAXIMUM_TEXTURE2D_LINEAR_WIDTH),
    FC_F(maxTexture2DLinear[1], MAXIMUM_TEXTURE2D_LINEAR_HEIGHT),
    FC_F(maxTexture2DLinear[2], MAXIMUM_TEXTURE2D_LINEAR_PITCH),
    FC_F(maxTexture2DGather[0], MAXIMUM_TEXTURE2D_GATHER_WIDTH),
    FC_F(maxTexture2DGather[1], MAXIMUM_TEXTURE2D_GATHER_HEIGHT),
    FC_F(maxTexture3D[0], MAXIMUM_TEXTURE3D_WIDTH),
    FC_F(maxTexture3D[1], MAXIMUM_TEXTURE3D_HEIGHT),
    FC_F(maxTexture3D[2], MAXIMUM_TEXTURE3D_DEPTH),
    FC_F(maxTexture3DAlt[0], MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE),
    FC_F(maxTexture3DAlt[1], MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE),
    FC_F(maxTexture3DAlt[2], MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE),
    FC_F(maxTextureCubemap, MAXIMUM_TEXTURECUBEMAP_WIDTH),
    FC_F(maxTexture1DLayered[0], MAXIMUM_TEXTURE1D_LAYERED_WIDTH),
    FC_F(maxTexture1DLayered[1], MAXIMUM_TEXTURE1D_LAYERED_LAYERS),
    FC_F(maxTexture2DLayered[0], MAXIMUM_TEXTURE2D_LAYERED_WIDTH),
    FC_F(maxTexture2DLayered[1], MAXIMUM_TEXTURE2D_LAYERED_HEIGHT),
    FC_F(maxTexture2DLayered[2], MAXIMUM_TEXTURE2D_LAYERED_LAYERS),
    FC_F(maxTextureCubemapLayered[0], MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH),
    FC_F(maxTextureCubemapLayered[1], MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS),
    FC_F(maxSurface1D, MAXIMUM_SURFACE1D_WIDTH),
    FC_F(maxSurface2D[0], MAXIMUM_SURFACE2D_WIDTH),
    FC_F(maxSurface2D[1], MAXIMUM_SURFACE2D_HEIGHT),
    FC_F(maxSurface3D[0], MAXIMUM_SURFACE3D_WIDTH),
    FC_F(maxSurface3D[1], MAXIMUM_SURFACE3D_HEIGHT),
    FC_F(maxSurface3D[2], MAXIMUM_SURFACE3D_DEPTH),
    FC_F(maxSurface1DLayered[0], MAXIMUM_SURFACE1D_LAYERED_WIDTH),
    FC_F(maxSurface1DLayered[1], MAXIMUM_SURFACE1D_LAYERED_LAYERS),
    FC_F(maxSurface2DLayered[0], MAXIMUM_SURFACE2D_LAYERED_WIDTH),
    FC_F(maxSurface2DLayered[1], MAXIMUM_SURFACE2D_LAYERED_HEIGHT),
    FC_F(maxSurface2DLayered[2], MAXIMUM_SURFACE2D_LAYERED_LAYERS),
    FC_F(maxSurfaceCubemap, MAXIMUM_SURFACECUBEMAP_WIDTH),
    FC_F(maxSurfaceCubemapLayered[0], MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH),
    FC_F(maxSurfaceCubemapLayered[1], MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS),
    FC_F(surfaceAlignment, SURFACE_ALIGNMENT),
    FC_F(concurrentKernels, CONCURRENT_KERNELS),
    FC_F(ECCEnabled, ECC_ENABLED),
    FC_F(pciBusID, PCI_BUS_ID),
    FC_F(pciDeviceID, PCI_DEVICE_ID),
    FC_F(pciDomainID, PCI_DOMAIN_ID),
    FC_F(tccDriver, TCC_DRIVER),
    FC_F(asyncEngineCount, ASYNC_ENGINE_COUNT),
    FC_F(unifiedAddressing, UNIFIED_ADDRESSING),
    FC_F(memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH),
    FC_F(l2CacheSize, L2_CACHE_SIZE),
    FC_F(persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE),
    FC_F(maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR),
    FC_F(streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED),
    FC_F(globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED),
    FC_F(localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED),
    FC_F(sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
    FC_F(regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR),
    FC_F(managedMemory, MANAGED_MEMORY),
    FC_F(isMultiGpuBoard, MULTI_GPU_BOARD),
    FC_F(multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID),
    FC_F(hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED),
    FC_F(pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS),
    FC_F(concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS),
    FC_F(computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED),
    FC_F(canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
    FC_F(cooperativeLaunch, COOPERATIVE_LAUNCH),
    FC_F(sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
    FC_F(pageableMemoryAccessUsesHostPageTables, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
    FC_F(directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
    FC_F(maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR),
    FC_F(accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE),
    FC_F(reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK),
    FC_F(hostRegisterSupported, HOST_REGISTER_SUPPORTED),
    FC_F(sparseCudaArraySupported, SPARSE_CUDA_ARRAY_SUPPORTED),
    FC_F(hostRegisterReadOnlySupported, READ_ONLY_HOST_REGISTER_SUPPORTED),
    FC_F(timelineSemaphoreInteropSupported, TIMELINE_SEMAPHORE_INTEROP_SUPPORTED),
    FC_F(memoryPoolsSupported, MEMORY_POOLS_SUPPORTED),
    FC_F(gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED),
    FC_F(gpuDirectRDMAFlushWritesOptions, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
    FC_F(gpuDirectRDMAWritesOrdering, GPU_DIRECT_RDMA_WRITES_ORDERING),
    FC_F(memoryPoolSupportedHandleTypes, MEMPOOL_SUPPORTED_HANDLE_TYPES),
    FC_F(deferredMappingCudaArraySupported, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED),
    FC_F(ipcEventSupported, IPC_EVENT_SUPPORTED),
    FC_F(clusterLaunch, CLUSTER_LAUNCH),
    FC_F(unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS),
    FC_F(deviceNumaConfig, NUMA_CONFIG),
    FC_F(deviceNumaId, NUMA_ID),
    FC_F(mpsEnabled, MPS_ENABLED),
    FC_F(hostNumaId, HOST_NUMA_ID),
    FC_F(gpuPciDeviceID, GPU_PCI_DEVICE_ID),
    FC_F(gpuPciSubsystemID, GPU_PCI_SUBSYSTEM_ID),
    FC_F(hostNumaMultinodeIpcSupported, HOST_NUMA_MULTINODE_IPC_SUPPORTED),
};

static CUresult fc_read_properties(struct cudaDeviceProp *prop, CUdevice dev)
{
    memset(prop, 0, sizeof *prop);
    CUresult r = FC_DRV(fc_drv.cuDeviceGetName_v2000, prop->name, (int)sizeof prop->name, dev);
    if (r == CUDA_SUCCESS)
        r = FC_DRV(fc_drv.cuDeviceGetUuid_v9020, (CUuuid *)&prop->uuid, dev);
    if (r == CUDA_SUCCESS)
        r = FC_DRV(fc_drv.cuDeviceTotalMem_v3020, &prop->totalGlobalMem, dev);
    for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof fc_prop_fields / sizeof fc_prop_fields[0]; i++) {
        const fc_prop_field *f = &fc_prop_fields[i];
        int v = 0;
        r = FC_DRV(fc_drv.cuDeviceGetAttribute_v2000, &v, f->attr, dev);
        fc_rt_set_field(prop, f->offset, f->size, v);
    }
    return r;
}

static void fc_rt_learn_properties(void)
{
    for (int d = 0; d < fc_ndevices; d++) {
        CUdevice dev;
        fc_prop_learnt[d] = FC_DRV(fc_drv.cuDeviceGet_v2000, &dev, d) == CUDA_SUCCESS &&
                            fc_read_properties(&fc_prop_at_init[d], dev) == CUDA_SUCCESS;
    }
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    CUdevice dev;
    if (!prop)
        return fc_rt_ret(cudaErrorInvalidValue);
    if (fc_rt_forked() && device >= 0 && device < fc_ndevices && fc_prop_learnt[device]) {
        *prop = fc_prop_at_init[device];
        return cudaSuccess;
    }
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(fc_read_properties(prop, dev));
}

void fc_rt_set_field(void *base, size_t offset, size_t size, int v)
{
    char *at = (char *)base + offset;
    if (size == sizeof(size_t)) {
        size_t wide = (size_t)(unsigned)v;
        memcpy(at, &wide, sizeof wide);
    } else {
        assert(size == sizeof v);
        memcpy(at, &v, sizeof v);
    }
}

/* ---- driver entry points ---- */

/* flags is cudaEnableDefault / cudaEnableLegacyStream / cudaEnablePerThreadDefaultStream, whose
 * values are the driver's CU_GET_PROC_ADDRESS_* flags; cudaEnableDefault means per-thread in the
 * _ptsz exports, which programs built with --default-stream per-thread call. */
static cudaError_t fc_entry_point(const char *symbol, void **funcPtr, int version,
                                  unsigned long long flags, enum cudaDriverEntryPointQueryResult *status,
                                  int pt)
{
    if (!symbol || !funcPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    if (flags > cudaEnablePerThreadDefaultStream)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_rt_init();
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    if (flags == cudaEnableDefault && pt)
        flags = cudaEnablePerThreadDefaultStream;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *funcPtr = NULL;
    CUresult r = FC_DRV(fc_drv.cuGetProcAddress_v12000, symbol, funcPtr, version, flags, &found);
    if (status)
        *status = (enum cudaDriverEntryPointQueryResult)found;
    /* A symbol the driver lacks is reported through status, not as a failure. */
    if (r == CUDA_ERROR_NOT_FOUND)
        return cudaSuccess;
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                                        enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return fc_entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return fc_entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                                 unsigned long long flags,
                                                                 enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return fc_entry_point(symbol, funcPtr, (int)cudaVersion, flags, driverStatus, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                                      unsigned int cudaVersion, unsigned long long flags,
                                                                      enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return fc_entry_point(symbol, funcPtr, (int)cudaVersion, flags, driverStatus, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaSetDeviceFlags(unsigned int flags)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(fc_rt_device(), &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    /* cudaDeviceMapHost is always on since CUDA 12 and has no context flag. */
    return fc_rt_err(FC_DRV(fc_drv.cuDevicePrimaryCtxSetFlags_v11000, dev, flags & ~cudaDeviceMapHost));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetDeviceFlags(unsigned int *flags)
{
    CUdevice dev;
    int active;
    if (!flags)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_rt_cudevice(fc_rt_device(), &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUresult r = FC_DRV(fc_drv.cuDevicePrimaryCtxGetState_v7000, dev, flags, &active);
    *flags |= cudaDeviceMapHost;
    return fc_rt_err(r);
}

/* cudaLimit and CUlimit share their values. */
FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetLimit(size_t *pValue, enum cudaLimit limit)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuCtxGetLimit_v3010, pValue, (CUlimit)limit));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceSetLimit(enum cudaLimit limit, size_t value)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuCtxSetLimit_v3010, (CUlimit)limit, value));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
    CUdevice dev, peer;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e == cudaSuccess)
        e = fc_rt_cudevice(peerDevice, &peer);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuDeviceCanAccessPeer_v4000, canAccessPeer, dev, peer));
}

static cudaError_t fc_peer_access(int peerDevice, unsigned flags, int enable)
{
    FC_CTX();
    CUdevice peer;
    CUcontext peer_ctx;
    cudaError_t e = fc_rt_cudevice(peerDevice, &peer);
    if (e == cudaSuccess)
        e = fc_rt_primary(peerDevice, &peer_ctx);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(enable ? FC_DRV(fc_drv.cuCtxEnablePeerAccess_v4000, peer_ctx, flags)
                            : FC_DRV(fc_drv.cuCtxDisablePeerAccess_v4000, peer_ctx));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
    return fc_peer_access(peerDevice, flags, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceDisablePeerAccess(int peerDevice)
{
    return fc_peer_access(peerDevice, 0, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuDeviceGetDefaultMemPool_v11020, (CUmemoryPool *)memPool, dev));
}

/* cudaMemPoolAttr and CUmemPool_attribute share their values. */
FC_EXPORT cudaError_t CUDARTAPI cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemPoolSetAttribute_v11020, (CUmemoryPool)memPool, (CUmemPool_attribute)attr,
                            value));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemPoolGetAttribute_v11020, (CUmemoryPool)memPool, (CUmemPool_attribute)attr,
                            value));
}

FC_EXPORT cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuMemPoolTrimTo_v11020, (CUmemoryPool)memPool, minBytesToKeep));
}

/* Validates the list and makes its first device the one threads use until they call
 * cudaSetDevice; an empty list restores device 0. */
FC_EXPORT cudaError_t CUDARTAPI cudaSetValidDevices(int *device_arr, int len)
{
    CUdevice dev;
    if (len < 0 || (len > 0 && !device_arr))
        return fc_rt_ret(cudaErrorInvalidValue);
    for (int i = 0; i < len; i++) {
        cudaError_t e = fc_rt_cudevice(device_arr[i], &dev);
        if (e != cudaSuccess)
            return fc_rt_ret(e);
    }
    atomic_store(&fc_default_dev, len ? device_arr[0] : 0);
    return cudaSuccess;
}

/* The best match for the fields of *prop a program sets (NVIDIA's matching is not documented
 * field by field): the device of the requested compute capability with the most
 * multiprocessors, else the one of the highest capability. */
FC_EXPORT cudaError_t CUDARTAPI cudaChooseDevice(int *device, const struct cudaDeviceProp *prop)
{
    if (!device || !prop)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_rt_init();
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    int best = -1;
    long best_score = -1;
    for (int d = 0; d < fc_ndevices; d++) {
        CUdevice dev;
        int major = 0, minor = 0, sms = 0;
        CUresult r = FC_DRV(fc_drv.cuDeviceGet_v2000, &dev, d);
        if (r == CUDA_SUCCESS)
            r = FC_DRV(fc_drv.cuDeviceGetAttribute_v2000, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        if (r == CUDA_SUCCESS)
            r = FC_DRV(fc_drv.cuDeviceGetAttribute_v2000, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        if (r == CUDA_SUCCESS)
            r = FC_DRV(fc_drv.cuDeviceGetAttribute_v2000, &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
        if (r != CUDA_SUCCESS)
            return fc_rt_err(r);
        int exact = major == prop->major && minor == prop->minor;
        long score = (long)exact << 40 | (long)(major * 10 + minor) << 20 | sms;
        if (score > best_score)
            best = d, best_score = score;
    }
    if (best < 0)
        return fc_rt_ret(cudaErrorNoDevice);
    *device = best;
    return cudaSuccess;
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{
    if (!device || !pciBusId)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_rt_init();
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    CUdevice found;
    CUresult r = FC_DRV(fc_drv.cuDeviceGetByPCIBusId_v4010, &found, pciBusId);
    if (r != CUDA_SUCCESS)
        return fc_rt_err(r);
    return fc_rt_ret(fc_rt_ordinal(found, device));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuDeviceGetPCIBusId_v4010, pciBusId, len, dev));
}

/* cudaDeviceP2PAttr and CUdevice_P2PAttribute share their values. */
FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int srcDevice,
                                                          int dstDevice)
{
    CUdevice src, dst;
    cudaError_t e = fc_rt_cudevice(srcDevice, &src);
    if (e == cudaSuccess)
        e = fc_rt_cudevice(dstDevice, &dst);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuDeviceGetP2PAttribute_v8000, value, (CUdevice_P2PAttribute)attr, src, dst));
}


/* cudaAtomicOperation and CUatomicOperation share their values. */
FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetHostAtomicCapabilities(unsigned int *capabilities,
                                                                    const enum cudaAtomicOperation *operations,
                                                                    unsigned int count, int device)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    return e != cudaSuccess ? fc_rt_ret(e)
                            : fc_rt_err(FC_DRV(fc_drv.cuDeviceGetHostAtomicCapabilities_v13000, capabilities,
                                               (const CUatomicOperation *)operations, count, dev));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetP2PAtomicCapabilities(unsigned int *capabilities,
                                                                   const enum cudaAtomicOperation *operations,
                                                                   unsigned int count, int srcDevice, int dstDevice)
{
    CUdevice src, dst;
    cudaError_t e = fc_rt_cudevice(srcDevice, &src);
    if (e == cudaSuccess)
        e = fc_rt_cudevice(dstDevice, &dst);
    return e != cudaSuccess ? fc_rt_ret(e)
                            : fc_rt_err(FC_DRV(fc_drv.cuDeviceGetP2PAtomicCapabilities_v13000, capabilities,
                                               (const CUatomicOperation *)operations, count, src, dst));
}

/* cudaAsyncCallback and CUasyncCallback differ only in their types' names. */
FC_EXPORT cudaError_t CUDARTAPI cudaDeviceRegisterAsyncNotification(int device, cudaAsyncCallback callbackFunc,
                                                                    void *userData,
                                                                    cudaAsyncCallbackHandle_t *callback)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    return e != cudaSuccess ? fc_rt_ret(e)
                            : fc_rt_err(FC_DRV(fc_drv.cuDeviceRegisterAsyncNotification_v12040, dev,
                                               (CUasyncCallback)callbackFunc, userData,
                                               (CUasyncCallbackHandle *)callback));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceUnregisterAsyncNotification(int device, cudaAsyncCallbackHandle_t callback)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    return e != cudaSuccess ? fc_rt_ret(e)
                            : fc_rt_err(FC_DRV(fc_drv.cuDeviceUnregisterAsyncNotification_v12040, dev,
                                               (CUasyncCallbackHandle)callback));
}

FC_EXPORT cudaError_t CUDARTAPI cudaDeviceGetNvSciSyncAttributes(void *nvSciSyncAttrList, int device, int flags)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    return e != cudaSuccess ? fc_rt_ret(e)
                            : fc_rt_err(FC_DRV(fc_drv.cuDeviceGetNvSciSyncAttributes_v10020, nvSciSyncAttrList, dev,
                                               flags));
}
