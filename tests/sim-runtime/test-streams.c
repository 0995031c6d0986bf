/* Streams, events and host functions through the runtime, in process. */
#include "simrt.h"

#include <cuda_runtime_api.h>
#include <stdatomic.h>
#include <time.h>

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

static atomic_int fc_gate;
static atomic_int fc_order[4];
static atomic_int fc_norder;

/* Blocks its stream until the test opens the gate (bounded, so a bug cannot hang the suite). */
static void fc_wait_gate(void *unused)
{
    (void)unused;
    for (int i = 0; i < 5000 && !atomic_load(&fc_gate); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static void fc_note(void *tag)
{
    fc_order[atomic_fetch_add(&fc_norder, 1) & 3] = (int)(intptr_t)tag;
}

/* Pending work makes the queries answer cudaErrorNotReady, which is not recorded as an error;
 * a stream waiting on another's event runs after it. */
TEST_IMPL(queries_and_cross_stream_order)
{
    if (simrt_setup(NULL))
        return 1;
    cudaStream_t a, b;
    cudaEvent_t done, t0, t1;
    CU(cudaStreamCreate(&a));
    CU(cudaStreamCreateWithPriority(&b, cudaStreamNonBlocking, 0));
    unsigned flags = 99;
    CU(cudaStreamGetFlags(b, &flags));
    ASSERT_UINT(flags, ==, cudaStreamNonBlocking);
    CU(cudaEventCreate(&t0));
    CU(cudaEventCreate(&t1));
    CU(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));

    CU(cudaEventRecord(t0, a));
    CU(cudaLaunchHostFunc(a, fc_wait_gate, NULL));
    CU(cudaLaunchHostFunc(a, fc_note, (void *)1));
    CU(cudaEventRecord(done, a));
    CU(cudaEventRecord(t1, a));
    CU(cudaStreamWaitEvent(b, done, 0));
    CU(cudaLaunchHostFunc(b, fc_note, (void *)2));

    ASSERT_INT(cudaStreamQuery(a), ==, cudaErrorNotReady);
    ASSERT_INT(cudaStreamQuery(b), ==, cudaErrorNotReady);
    ASSERT_INT(cudaEventQuery(done), ==, cudaErrorNotReady);
    ASSERT_INT(cudaGetLastError(), ==, cudaSuccess);
    ASSERT_INT(atomic_load(&fc_norder), ==, 0);

    atomic_store(&fc_gate, 1);
    CU(cudaStreamSynchronize(b));
    ASSERT_INT(atomic_load(&fc_norder), ==, 2);
    ASSERT_INT(fc_order[0], ==, 1);
    ASSERT_INT(fc_order[1], ==, 2);
    CU(cudaEventSynchronize(t1));
    CU(cudaStreamQuery(a));
    CU(cudaEventQuery(done));
    float ms = -1;
    CU(cudaEventElapsedTime(&ms, t0, t1));
    ASSERT(ms >= 0.0f);
    ASSERT_INT(cudaEventElapsedTime(&ms, t0, done), !=, cudaSuccess); /* no timing on `done` */
    CU(cudaEventDestroy(t0));
    CU(cudaEventDestroy(t1));
    CU(cudaEventDestroy(done));
    CU(cudaStreamDestroy(a));
    CU(cudaStreamDestroy(b));
    CU(cudaDeviceSynchronize());
    return 0;
}
