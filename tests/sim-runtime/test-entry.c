/* cudaGetDriverEntryPoint[ByVersion], cudaFuncGetName and launches of unknown functions. */
#include "simrt.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

/* cudaGetDriverEntryPoint is deprecated in CUDA 13 but exported and used: it is under test. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The names the header gives these under --default-stream per-thread. */
cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                   enum cudaDriverEntryPointQueryResult *driverStatus);
cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                            unsigned int cudaVersion, unsigned long long flags,
                                                            enum cudaDriverEntryPointQueryResult *driverStatus);

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

TEST_IMPL(driver_entry_points)
{
    if (simrt_setup("a100,t4"))
        return 1;
    PFN_cuDeviceGetCount_v2000 count_fn = NULL;
    enum cudaDriverEntryPointQueryResult st = (enum cudaDriverEntryPointQueryResult)-1;
    CU(cudaGetDriverEntryPoint("cuDeviceGetCount", (void **)&count_fn, cudaEnableDefault, &st));
    ASSERT_INT(st, ==, cudaDriverEntryPointSuccess);
    ASSERT(count_fn != NULL);
    int n = 0, rn = 0;
    ASSERT_INT(count_fn(&n), ==, CUDA_SUCCESS);
    CU(cudaGetDeviceCount(&rn));
    ASSERT_INT(n, ==, 2);
    ASSERT_INT(rn, ==, 2);

    void *fn = (void *)1;
    CU(cudaGetDriverEntryPoint("cuNoSuchEntryPoint", &fn, cudaEnableDefault, &st));
    ASSERT_INT(st, ==, cudaDriverEntryPointSymbolNotFound);
    ASSERT(fn == NULL);
    ASSERT_INT(cudaGetDriverEntryPoint(NULL, &fn, cudaEnableDefault, &st), ==, cudaErrorInvalidValue);
    ASSERT_INT(cudaGetDriverEntryPoint("cuInit", &fn, 8, &st), ==, cudaErrorInvalidValue);

    /* cuLaunchKernelEx appeared in CUDA 11.6: asking for the 11.0 ABI finds no such version */
    CU(cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &fn, 11000, cudaEnableDefault, &st));
    ASSERT_INT(st, ==, cudaDriverEntryPointVersionNotSufficent);
    CU(cudaGetDriverEntryPointByVersion("cuLaunchKernelEx", &fn, 12000, cudaEnableDefault, &st));
    ASSERT_INT(st, ==, cudaDriverEntryPointSuccess);

    /* the per-thread-stream variant is a different entry point; the _ptsz export (what
     * --default-stream per-thread programs call) gives it by default */
    void *legacy = NULL, *per_thread = NULL, *ptsz_default = NULL;
    CU(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &legacy, 12000, cudaEnableLegacyStream, NULL));
    CU(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &per_thread, 12000, cudaEnablePerThreadDefaultStream, NULL));
    CU(cudaGetDriverEntryPointByVersion_ptsz("cuLaunchKernel", &ptsz_default, 12000, cudaEnableDefault, NULL));
    ASSERT(legacy != NULL && per_thread != NULL);
    ASSERT(legacy != per_thread);
    ASSERT(ptsz_default == per_thread);
    CU(cudaGetDriverEntryPoint_ptsz("cuLaunchKernel", &ptsz_default, cudaEnableDefault, NULL));
    ASSERT(ptsz_default == per_thread);
    return 0;
}

static void fc_not_a_kernel(void) {}

TEST_IMPL(unknown_function_is_invalid_device_function)
{
    if (simrt_setup(NULL))
        return 1;
    const char *name = "x";
    ASSERT_INT(cudaFuncGetName(&name, (const void *)fc_not_a_kernel), ==, cudaErrorInvalidDeviceFunction);
    ASSERT(name == NULL);
    dim3 one = {1, 1, 1};
    ASSERT_INT(cudaLaunchKernel((const void *)fc_not_a_kernel, one, one, NULL, 0, NULL), ==,
               cudaErrorInvalidDeviceFunction);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDeviceFunction);
    ASSERT_INT(cudaGetLastError(), ==, cudaSuccess);
    return 0;
}
