/* The per-thread default stream: each host thread gets its own, they run concurrently with
 * each other, and each synchronizes with the legacy default stream. */
#include "sd.h"

#include <pthread.h>

static CUcontext ctx;
static CUfunction k50;

typedef struct {
    unsigned long long id;
    CUevent start, end;
    CUresult r;
} ptds_arg;

static void *ptds_thread(void *p)
{
    ptds_arg *a = p;
    a->r = cuCtxSetCurrent(ctx);
    if (a->r == CUDA_SUCCESS)
        a->r = cuStreamGetId_ptsz(NULL, &a->id);
    if (a->r == CUDA_SUCCESS)
        a->r = cuEventRecord_ptsz(a->start, NULL);
    if (a->r == CUDA_SUCCESS)
        a->r = cuLaunchKernel_ptsz(k50, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    if (a->r == CUDA_SUCCESS)
        a->r = cuEventRecord_ptsz(a->end, CU_STREAM_PER_THREAD);
    if (a->r == CUDA_SUCCESS)
        a->r = cuStreamSynchronize_ptsz(NULL);
    return NULL;
}

TEST_IMPL(per_thread_default_streams)
{
    sd_env("FAKECUDA_KERNEL_NS", "k50=50000000");
    ASSERT_INT(sd_init(), ==, 0);
    CK(cuCtxGetCurrent(&ctx));
    k50 = sd_kernel("k50", 0);
    ASSERT(k50);
    ptds_arg args[2];
    pthread_t th[2];
    long long t0 = sd_now_ns();
    for (int i = 0; i < 2; i++) {
        CK(cuEventCreate(&args[i].start, 0));
        CK(cuEventCreate(&args[i].end, 0));
        ASSERT_INT(pthread_create(&th[i], NULL, ptds_thread, &args[i]), ==, 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CK(args[i].r);
    }
    long long wall = sd_now_ns() - t0;
    ASSERT_UINT(args[0].id, !=, args[1].id);
    ASSERT_INT(wall, <, 90000000); /* the two 50 ms kernels overlapped */
    ASSERT(sd_elapsed_ns(args[0].start, args[0].end) >= 50000000 - 1000);
    ASSERT(sd_elapsed_ns(args[0].start, args[0].end) < 50000000 + 30000000); /* + submission gaps */
    ASSERT(sd_elapsed_ns(args[1].start, args[1].end) >= 50000000 - 1000);
    ASSERT(sd_elapsed_ns(args[1].start, args[1].end) < 50000000 + 30000000); /* + submission gaps */

    /* This thread's per-thread stream differs from the legacy one, and waits for it. */
    unsigned long long mine, legacy;
    CK(cuStreamGetId_ptsz(NULL, &mine));
    CK(cuStreamGetId(NULL, &legacy));
    ASSERT_UINT(mine, !=, legacy);
    CUevent a, b;
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CK(cuEventRecord(a, CU_STREAM_LEGACY));
    CK(cuLaunchKernel(k50, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, NULL, NULL));
    CK(cuLaunchKernel_ptsz(k50, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuEventRecord_ptsz(b, NULL));
    CK(cuEventSynchronize(b));
    ASSERT(sd_elapsed_ns(a, b) >= 100000000 - 1000);
    ASSERT(sd_elapsed_ns(a, b) < 100000000 + 20000000); /* + submission gaps */
    return 0;
}
