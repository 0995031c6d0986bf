/* Legacy default stream: it waits for earlier work in blocking streams and they wait for it;
 * non-blocking streams are independent of it. */
#include "sd.h"

TEST_IMPL(legacy_default_stream_synchronizes_blocking_streams)
{
    sd_env("FAKECUDA_KERNEL_NS", "k20=20000000,k5=5000000");
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction k20 = sd_kernel("k20", 0), k5 = sd_kernel("k5", 0);
    ASSERT(k20 && k5);
    CUstream blocking, nonblocking;
    CK(cuStreamCreate(&blocking, 0));
    CK(cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING));
    CUevent b0, l1, n0, n1;
    CK(cuEventCreate(&b0, 0));
    CK(cuEventCreate(&l1, 0));
    CK(cuEventCreate(&n0, 0));
    CK(cuEventCreate(&n1, 0));

    /* blocking (held by a gate): b0, k20; then the legacy stream's k5 must start after k20. */
    sd_gate g;
    ASSERT_INT(sd_gate_close(&g, blocking), ==, 0);
    CK(cuEventRecord(b0, blocking));
    CK(cuLaunchKernel(k20, 1, 1, 1, 1, 1, 1, 0, blocking, NULL, NULL));
    CK(cuLaunchKernel(k5, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, NULL, NULL));
    CK(cuEventRecord(l1, CU_STREAM_LEGACY));
    sd_gate_open(&g);
    CK(cuEventSynchronize(l1));
    ASSERT_NEAR(sd_elapsed_ns(b0, l1), 25000000, 1000);

    /* The legacy stream held: work on a blocking stream waits for it, work on a non-blocking
     * stream completes meanwhile. */
    CUevent l0, bb;
    CK(cuEventCreate(&l0, 0));
    CK(cuEventCreate(&bb, 0));
    ASSERT_INT(sd_gate_close(&g, NULL), ==, 0);
    CK(cuEventRecord(l0, NULL));
    CK(cuLaunchKernel(k20, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuLaunchKernel(k5, 1, 1, 1, 1, 1, 1, 0, blocking, NULL, NULL));
    CK(cuEventRecord(bb, blocking));
    CK(cuEventRecord(n0, nonblocking));
    CK(cuLaunchKernel(k5, 1, 1, 1, 1, 1, 1, 0, nonblocking, NULL, NULL));
    CK(cuEventRecord(n1, nonblocking));
    CK(cuEventSynchronize(n1));
    ASSERT_INT(cuEventQuery(bb), ==, CUDA_ERROR_NOT_READY);
    ASSERT(sd_elapsed_ns(n0, n1) >= 5000000 - 1000); /* + the submission gap after n0 */
    sd_gate_open(&g);
    CK(cuCtxSynchronize());
    ASSERT_NEAR(sd_elapsed_ns(l0, bb), 25000000, 1000);
    return 0;
}
