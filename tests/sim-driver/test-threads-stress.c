/* Thread safety: threads allocating, copying, launching, recording and freeing on their own
 * streams and on the shared legacy stream at once, with every result checked. */
#include "sd.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static CUcontext ctx;
static CUfunction kern;

static void *worker(void *arg)
{
    long id = (long)arg;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return (void *)1;
    CUstream s;
    CUevent e;
    if (cuStreamCreate(&s, id % 2 ? CU_STREAM_NON_BLOCKING : 0) != CUDA_SUCCESS ||
        cuEventCreate(&e, 0) != CUDA_SUCCESS)
        return (void *)2;
    unsigned char *host = malloc(8192), *back = malloc(8192);
    for (int it = 0; it < 150; it++) {
        CUdeviceptr d;
        unsigned char v = (unsigned char)(id * 31 + it);
        memset(host, v, 8192);
        if (cuMemAlloc_v2(&d, 8192) != CUDA_SUCCESS ||
            cuMemcpyHtoDAsync_v2(d, host, 8192, s) != CUDA_SUCCESS ||
            cuLaunchKernel(kern, 4, 1, 1, 64, 1, 1, 0, it % 3 ? s : NULL, NULL, NULL) !=
                CUDA_SUCCESS ||
            cuEventRecord(e, s) != CUDA_SUCCESS || cuStreamWaitEvent(NULL, e, 0) != CUDA_SUCCESS ||
            cuMemcpyDtoH_v2(back, d, 8192) != CUDA_SUCCESS || cuMemFree_v2(d) != CUDA_SUCCESS)
            return (void *)3;
        if (back[0] != v || back[8191] != v)
            return (void *)4;
    }
    cuStreamDestroy_v2(s);
    cuEventDestroy_v2(e);
    free(host);
    free(back);
    return NULL;
}

TEST_IMPL(threads_share_the_driver_safely)
{
    ASSERT_INT(sd_init(), ==, 0);
    CK(cuCtxGetCurrent(&ctx));
    kern = sd_kernel("k", 0);
    ASSERT(kern);
    size_t free0, free1, total;
    CK(cuMemGetInfo_v2(&free0, &total));
    pthread_t th[8];
    for (long i = 0; i < 8; i++)
        ASSERT_INT(pthread_create(&th[i], NULL, worker, (void *)i), ==, 0);
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(th[i], &r);
        ASSERT_INT((long)r, ==, 0);
    }
    CK(cuCtxSynchronize());
    CK(cuMemGetInfo_v2(&free1, &total));
    ASSERT_UINT(free1, ==, free0);
    return 0;
}
