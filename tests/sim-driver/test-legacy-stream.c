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

    /* blocking: k20, then the legacy stream's k5 must start after it. */
    CK(cuEventRecord(b0, blocking));
    CK(cuLaunchKernel(k20, 1, 1, 1, 1, 1, 1, 0, blocking, NULL, NULL));
    CK(cuLaunchKernel(k5, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, NULL, NULL));
    CK(cuEventRecord(l1, CU_STREAM_LEGACY));
    CK(cuEventSynchronize(l1));
    ASSERT_NEAR(sd_elapsed_ns(b0, l1), 25000000, 1000000);

    /* The legacy stream's k20, then work on a blocking stream waits for it, work on a
     * non-blocking stream does not. */
    CUevent l0, bb;
    CK(cuEventCreate(&l0, 0));
    CK(cuEventCreate(&bb, 0));
    CK(cuEventRecord(l0, NULL));
    CK(cuLaunchKernel(k20, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuLaunchKernel(k5, 1, 1, 1, 1, 1, 1, 0, blocking, NULL, NULL));
    CK(cuEventRecord(bb, blocking));
    CK(cuEventRecord(n0, nonblocking));
    CK(cuLaunchKernel(k5, 1, 1, 1, 1, 1, 1, 0, nonblocking, NULL, NULL));
    CK(cuEventRecord(n1, nonblocking));
    CK(cuCtxSynchronize());
    ASSERT_NEAR(sd_elapsed_ns(l0, bb), 25000000, 1000000);
    ASSERT_NEAR(sd_elapsed_ns(l0, n1), 5000000, 1000000);
    return 0;
}
