/* Device flags and limits, peers, memory pools, stream callbacks and ids, in process. */
#include "simrt.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

TEST_IMPL(device_flags_and_limits)
{
    if (simrt_setup(NULL))
        return 1;
    CU(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    unsigned flags = 0;
    CU(cudaGetDeviceFlags(&flags));
    ASSERT_UINT(flags, ==, cudaDeviceScheduleBlockingSync | cudaDeviceMapHost);
    SIMRT_CALL_OR_SKIP(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16u << 20), "cuCtxSetLimit");
    size_t v = 0;
    CU(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize));
    ASSERT_UINT(v, ==, 16u << 20);
    return 0;
}

/* cudaMemcpyPeer moves bytes between two devices' allocations even without peer access (the
 * simulated GPUs have no peer link, so enabling it fails). */
TEST_IMPL(peer_copy_between_devices)
{
    if (simrt_setup("a100,a100"))
        return 1;
    int can = -1;
    CU(cudaDeviceCanAccessPeer(&can, 0, 1));
    ASSERT_INT(can, ==, 0);
    enum { N = 1000 };
    int host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = i * i;
    void *d0, *d1;
    CU(cudaSetDevice(1));
    CU(cudaMalloc(&d1, sizeof host));
    CU(cudaSetDevice(0));
    ASSERT_INT(cudaDeviceEnablePeerAccess(1, 0), !=, cudaSuccess);
    ASSERT_INT(cudaGetLastError(), !=, cudaSuccess);
    CU(cudaMalloc(&d0, sizeof host));
    CU(cudaMemcpy(d0, host, sizeof host, cudaMemcpyHostToDevice));
    CU(cudaMemcpyPeer(d1, 1, d0, 0, sizeof host));
    CU(cudaMemcpy(back, d1, sizeof back, cudaMemcpyDefault));
    ASSERT_INT(memcmp(back, host, sizeof host), ==, 0);
    CU(cudaFree(d0));
    CU(cudaFree(d1));
    return 0;
}

TEST_IMPL(default_mem_pool_attributes)
{
    if (simrt_setup(NULL))
        return 1;
    cudaMemPool_t pool = NULL;
    CU(cudaDeviceGetDefaultMemPool(&pool, 0));
    ASSERT(pool != NULL);
    uint64_t threshold = 1u << 20, got = 0;
    SIMRT_CALL_OR_SKIP(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                       "cuMemPoolSetAttribute");
    CU(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &got));
    ASSERT_UINT(got, ==, 1u << 20);
    CU(cudaMemPoolTrimTo(pool, 0));
    return 0;
}

static cudaStream_t fc_cb_stream;
static int fc_cb_status = -1;

static void CUDART_CB fc_callback(cudaStream_t s, cudaError_t status, void *data)
{
    fc_cb_stream = s;
    fc_cb_status = (int)status;
    *(int *)data += 1;
}

TEST_IMPL(stream_callback_and_ids)
{
    if (simrt_setup(NULL))
        return 1;
    cudaStream_t a, b;
    CU(cudaStreamCreate(&a));
    CU(cudaStreamCreate(&b));
    unsigned long long ida = 0, idb = 0;
    CU(cudaStreamGetId(a, &ida));
    CU(cudaStreamGetId(b, &idb));
    ASSERT(ida != idb);
    int calls = 0;
    SIMRT_CALL_OR_SKIP(cudaStreamAddCallback(a, fc_callback, &calls, 0), "cuStreamAddCallback");
    CU(cudaStreamSynchronize(a));
    ASSERT_INT(calls, ==, 1);
    ASSERT_INT(fc_cb_status, ==, cudaSuccess);
    ASSERT(fc_cb_stream == a);
    CU(cudaStreamDestroy(a));
    CU(cudaStreamDestroy(b));
    return 0;
}
