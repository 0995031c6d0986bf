/* The runtime's error state: per-thread last error, sticky errors, names and strings. */
#include "simrt.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

static void *fc_fail_in_thread(void *out)
{
    *(cudaError_t *)out = cudaSetDevice(-5);
    return NULL;
}

/* Peek reads the last error, Get reads and clears it, success does not clear it, and each
 * thread has its own. */
TEST_IMPL(last_error_peek_get_per_thread)
{
    if (simrt_setup(NULL))
        return 1;
    ASSERT_INT(cudaGetLastError(), ==, cudaSuccess);
    ASSERT_INT(cudaSetDevice(7), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaPeekAtLastError(), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaPeekAtLastError(), ==, cudaErrorInvalidDevice);
    int n;
    CU(cudaGetDeviceCount(&n));
    ASSERT_INT(cudaPeekAtLastError(), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaGetLastError(), ==, cudaSuccess);

    pthread_t t;
    cudaError_t in_thread = cudaSuccess;
    ASSERT_INT(pthread_create(&t, NULL, fc_fail_in_thread, &in_thread), ==, 0);
    ASSERT_INT(pthread_join(t, NULL), ==, 0);
    ASSERT_INT(in_thread, ==, cudaErrorInvalidDevice);
    ASSERT_INT(cudaPeekAtLastError(), ==, cudaSuccess);

    /* an export the simulation does not implement (unsupported.txt) fails the same way */
    cudaIpcMemHandle_t h;
    ASSERT_INT(cudaIpcGetMemHandle(&h, NULL), ==, cudaErrorNotSupported);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorNotSupported);
    return 0;
}

/* A launch failure (here injected into the driver's synchronize) corrupts the context: every
 * later call needing it returns the same error, and cudaGetLastError does not clear it. */
TEST_IMPL(sticky_error_persists)
{
    setenv("FAKECUDA_FAIL", "cuCtxSynchronize:1:719", 1);
    if (simrt_setup(NULL))
        return 1;
    void *p;
    CU(cudaMalloc(&p, 64));
    ASSERT_INT(cudaDeviceSynchronize(), ==, cudaErrorLaunchFailure);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorLaunchFailure);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorLaunchFailure);
    ASSERT_INT(cudaPeekAtLastError(), ==, cudaErrorLaunchFailure);
    ASSERT_INT(cudaMalloc(&p, 64), ==, cudaErrorLaunchFailure);
    ASSERT_INT(cudaDeviceSynchronize(), ==, cudaErrorLaunchFailure);
    /* calls that need no context still work */
    int n = 0;
    CU(cudaGetDeviceCount(&n));
    ASSERT_INT(n, ==, 1);
    return 0;
}

TEST_IMPL(error_names_and_strings)
{
    ASSERT_STR(cudaGetErrorName(cudaSuccess), "cudaSuccess");
    ASSERT_STR(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
    ASSERT_STR(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure");
    ASSERT_STR(cudaGetErrorName((cudaError_t)12345), "unrecognized error code");
    ASSERT_CONTAINS(cudaGetErrorString(cudaErrorInvalidValue), "not within an acceptable range");
    ASSERT_CONTAINS(cudaGetErrorString(cudaErrorNotSupported), "not supported");
    ASSERT_STR(cudaGetErrorString((cudaError_t)-3), "unrecognized error code");
    return 0;
}
