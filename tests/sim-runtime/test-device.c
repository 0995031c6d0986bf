/* Device management and cudaGetDeviceProperties on the simulated driver, in process. */
#include "simrt.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <stdint.h>

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

/* Every attribute-backed field of cudaDeviceProp (the header's layout) holds what the driver's
 * cuDeviceGetAttribute says, for two different simulated GPUs. */
TEST_IMPL(device_properties_match_driver)
{
    if (simrt_setup("h100,t4"))
        return 1;
    int n = -1;
    CU(cudaGetDeviceCount(&n));
    ASSERT_INT(n, ==, 2);
    PFN_cuDeviceGetAttribute_v2000 attr;
    PFN_cuDeviceGetName_v2000 get_name;
    PFN_cuDeviceTotalMem_v3020 total_mem;
    CU(cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", (void **)&attr, 2000, cudaEnableDefault, NULL));
    CU(cudaGetDriverEntryPointByVersion("cuDeviceGetName", (void **)&get_name, 2000, cudaEnableDefault, NULL));
    CU(cudaGetDriverEntryPointByVersion("cuDeviceTotalMem", (void **)&total_mem, 3020, cudaEnableDefault, NULL));
    static const int want_cc[2][2] = {{9, 0}, {7, 5}};
    for (int d = 0; d < 2; d++) {
        struct cudaDeviceProp p;
        memset(&p, 0xcd, sizeof p);
        CU(cudaGetDeviceProperties(&p, d));
        char name[256];
        size_t mem = 0;
        ASSERT_INT(get_name(name, sizeof name, d), ==, CUDA_SUCCESS);
        ASSERT_STR(p.name, name);
        ASSERT_INT(total_mem(&mem, d), ==, CUDA_SUCCESS);
        ASSERT_UINT(p.totalGlobalMem, ==, mem);
        ASSERT_INT(p.major, ==, want_cc[d][0]);
        ASSERT_INT(p.minor, ==, want_cc[d][1]);
        struct {
            long long field;
            CUdevice_attribute a;
        } checks[] = {
            {p.multiProcessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
            {p.warpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE},
            {p.maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
            {p.maxThreadsDim[2], CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z},
            {p.maxGridSize[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
            {(long long)p.sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
            {(long long)p.sharedMemPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
            {p.l2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
            {p.memoryBusWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
            {p.maxThreadsPerMultiProcessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR},
            {p.pciBusID, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID},
            {p.unifiedAddressing, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING},
            {p.managedMemory, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY},
            {p.concurrentKernels, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS},
            {p.asyncEngineCount, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT},
            {p.memoryPoolsSupported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED},
        };
        for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
            int v = -1, rv = -2;
            ASSERT_INT(attr(&v, checks[i].a, d), ==, CUDA_SUCCESS);
            CU(cudaDeviceGetAttribute(&rv, (enum cudaDeviceAttr)checks[i].a, d));
            ASSERT_INT(checks[i].field, ==, v);
            ASSERT_INT(rv, ==, v);
        }
        /* the fields past the attributes, reserved for NVIDIA's future use, are cleared */
        ASSERT_INT(p.reserved[0], ==, 0);
        ASSERT_INT(p.reserved[55], ==, 0);
        ASSERT_INT(p.multiProcessorCount, >, 0);
    }
    struct cudaDeviceProp p0, p1;
    CU(cudaGetDeviceProperties(&p0, 0));
    CU(cudaGetDeviceProperties(&p1, 1));
    ASSERT(strcmp(p0.name, p1.name) != 0);
    ASSERT(memcmp(&p0.uuid, &p1.uuid, sizeof p0.uuid) != 0);
    ASSERT_INT(cudaGetDeviceProperties(&p0, 2), ==, cudaErrorInvalidDevice);
    return 0;
}

/* cudaSetDevice selects the device whose primary context later calls use, per thread. */
TEST_IMPL(set_device_selects_context)
{
    if (simrt_setup("a100,a100"))
        return 1;
    int d = -1;
    CU(cudaGetDevice(&d));
    ASSERT_INT(d, ==, 0);
    ASSERT_INT(cudaSetDevice(2), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDevice);
    CU(cudaSetDevice(1));
    CU(cudaGetDevice(&d));
    ASSERT_INT(d, ==, 1);
    void *p1;
    CU(cudaMalloc(&p1, 256));
    struct cudaPointerAttributes a;
    CU(cudaPointerGetAttributes(&a, p1));
    ASSERT_INT(a.device, ==, 1);
    CU(cudaSetDevice(0));
    void *p0;
    CU(cudaMalloc(&p0, 256));
    CU(cudaPointerGetAttributes(&a, p0));
    ASSERT_INT(a.device, ==, 0);
    CU(cudaFree(p0));
    CU(cudaSetDevice(1));
    CU(cudaFree(p1));
    CU(cudaDeviceSynchronize());
    int drv = 0, rt = 0;
    CU(cudaDriverGetVersion(&drv));
    CU(cudaRuntimeGetVersion(&rt));
    ASSERT_INT(rt, ==, 13000);
    ASSERT_INT(drv, >=, 13000);
    return 0;
}

/* cudaDeviceReset releases the primary context (the driver reports it inactive); the next call
 * that needs a context makes it active again. */
TEST_IMPL(device_reset_recreates_context)
{
    if (simrt_setup(NULL))
        return 1;
    PFN_cuDevicePrimaryCtxGetState_v7000 get_state;
    CU(cudaGetDriverEntryPointByVersion("cuDevicePrimaryCtxGetState", (void **)&get_state, 7000,
                                        cudaEnableDefault, NULL));
    unsigned flags;
    int active = -1;
    ASSERT_INT(get_state(0, &flags, &active), ==, CUDA_SUCCESS);
    ASSERT_INT(active, ==, 0); /* lazily: nothing has needed the context yet */
    void *p;
    CU(cudaMalloc(&p, 4096));
    ASSERT_INT(get_state(0, &flags, &active), ==, CUDA_SUCCESS);
    ASSERT_INT(active, ==, 1);
    CU(cudaDeviceReset());
    ASSERT_INT(get_state(0, &flags, &active), ==, CUDA_SUCCESS);
    ASSERT_INT(active, ==, 0);
    void *q;
    CU(cudaMalloc(&q, 4096));
    CU(cudaMemset(q, 1, 4096));
    CU(cudaDeviceSynchronize());
    ASSERT_INT(get_state(0, &flags, &active), ==, CUDA_SUCCESS);
    ASSERT_INT(active, ==, 1);
    CU(cudaFree(q));
    return 0;
}
