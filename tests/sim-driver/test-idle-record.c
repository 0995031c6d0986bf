/* An event recorded on an idle stream is complete when its record call returns, dated within
 * that call, as on a GPU (fc_exec.c, fc_record_idle): waking the stream's worker for it cost the
 * recording thread a preemption and dated the event by the wake's latency. Behind queued work, or
 * on the legacy stream behind another stream's work, it still waits for that work. */
#include "sd.h"

#define SD_IDLE_N 64

TEST_IMPL(idle_stream_record_completes_at_once)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUstream s, t;
    CUevent e[SD_IDLE_N], held;
    long long at[SD_IDLE_N][2];
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&t, CU_STREAM_DEFAULT));
    CK(cuEventCreate(&held, 0));
    int ready = 0;
    for (int i = 0; i < SD_IDLE_N; i++) {
        CK(cuEventCreate(&e[i], 0));
        at[i][0] = sd_now_ns();
        CK(cuEventRecord(e[i], s));
        at[i][1] = sd_now_ns();
        ready += cuEventQuery(e[i]) == CUDA_SUCCESS;
    }
    ASSERT_INT(ready, ==, SD_IDLE_N);
    /* each is dated within its own call: the span between two is within the span between the
     * first's call began and the second's ended */
    for (int i = 1; i < SD_IDLE_N; i++) {
        double ns = sd_elapsed_ns(e[i - 1], e[i]);
        ASSERT(ns >= -1000.0);
        ASSERT(ns <= (double)(at[i][1] - at[i - 1][0]) + 1000.0);
    }

    /* behind a held stream's work: not complete until that work is */
    sd_gate g;
    ASSERT_INT(sd_gate_close(&g, s), ==, 0);
    CK(cuEventRecord(held, s));
    ASSERT_INT(cuEventQuery(held), ==, CUDA_ERROR_NOT_READY);
    sd_gate_open(&g);
    CK(cuEventSynchronize(held));

    /* on the idle legacy stream, behind a blocking stream's held work: waits for it too */
    ASSERT_INT(sd_gate_close(&g, t), ==, 0);
    CK(cuEventRecord(held, NULL));
    ASSERT_INT(cuEventQuery(held), ==, CUDA_ERROR_NOT_READY);
    sd_gate_open(&g);
    CK(cuEventSynchronize(held));
    return 0;
}
