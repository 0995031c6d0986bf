/* Events recorded in one thread are waited for, queried and synchronized in others. */
#include "sd.h"

#include <pthread.h>

static CUcontext ctx;
static CUevent ev, after;
static CUstream other;
static CUfunction k5;
static CUresult thread_r;
static long long synced_at;

static void *waiter(void *p)
{
    (void)p;
    thread_r = cuCtxSetCurrent(ctx);
    if (thread_r == CUDA_SUCCESS)
        thread_r = cuStreamWaitEvent(other, ev, 0);
    if (thread_r == CUDA_SUCCESS)
        thread_r = cuLaunchKernel(k5, 1, 1, 1, 1, 1, 1, 0, other, NULL, NULL);
    if (thread_r == CUDA_SUCCESS)
        thread_r = cuEventRecord(after, other);
    if (thread_r == CUDA_SUCCESS)
        thread_r = cuEventSynchronize(ev);
    synced_at = sd_now_ns();
    return NULL;
}

TEST_IMPL(events_across_threads)
{
    sd_env("FAKECUDA_KERNEL_NS", "k200=200000000,k5=5000000");
    ASSERT_INT(sd_init(), ==, 0);
    CK(cuCtxGetCurrent(&ctx));
    CUfunction k200 = sd_kernel("k200", 0);
    k5 = sd_kernel("k5", 0);
    ASSERT(k200 && k5);
    CUstream s;
    CUevent start;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&start, 0));
    CK(cuEventCreate(&ev, 0));
    CK(cuEventCreate(&after, 0));
    /* An event never recorded is complete. */
    CK(cuEventQuery(ev));
    sd_gate g;
    ASSERT_INT(sd_gate_close(&g, s), ==, 0);
    long long t0 = sd_now_ns();
    CK(cuEventRecord(start, s));
    CK(cuLaunchKernel(k200, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    CK(cuEventRecord(ev, s));
    ASSERT_INT(cuEventQuery(ev), ==, CUDA_ERROR_NOT_READY);
    float ms;
    ASSERT_INT(cuEventElapsedTime_v2(&ms, start, ev), ==, CUDA_ERROR_NOT_READY);
    sd_gate_open(&g);
    pthread_t th;
    ASSERT_INT(pthread_create(&th, NULL, waiter, NULL), ==, 0);
    pthread_join(th, NULL);
    CK(thread_r);
    ASSERT_INT(synced_at - t0, >=, 200000000);
    CK(cuEventQuery(ev));
    CK(cuEventSynchronize(after));
    ASSERT_NEAR(sd_elapsed_ns(start, ev), 200000000, 1000);
    /* The other stream's kernel started when ev completed. */
    ASSERT_NEAR(sd_elapsed_ns(ev, after), 5000000, 1000);
    /* Timing disabled: elapsed time is refused. */
    CUevent nt;
    CK(cuEventCreate(&nt, CU_EVENT_DISABLE_TIMING));
    CK(cuEventRecord(nt, s));
    CK(cuEventSynchronize(nt));
    ASSERT_INT(cuEventElapsedTime_v2(&ms, start, nt), ==, CUDA_ERROR_INVALID_HANDLE);
    CK(cuEventDestroy_v2(nt));
    return 0;
}
