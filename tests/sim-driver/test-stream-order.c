/* Each stream runs its work in order; distinct non-blocking streams overlap. Times come from
 * events (exact) and from the host clock (real). */
#include "sd.h"

TEST_IMPL(streams_order_and_overlap)
{
    sd_env("FAKECUDA_KERNEL_NS", "k10=10000000,k50=50000000");
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction k = sd_kernel("k10", 0), k50 = sd_kernel("k50", 0);
    ASSERT(k && k50);
    CUstream s1, s2;
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent e[6];
    for (int i = 0; i < 6; i++)
        CK(cuEventCreate(&e[i], 0));

    /* Same stream: back to back, 10 ms each (queued behind a gate, so exactly). */
    sd_gate g;
    ASSERT_INT(sd_gate_close(&g, s1), ==, 0);
    long long t0 = sd_now_ns();
    CK(cuEventRecord(e[0], s1));
    CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CK(cuEventRecord(e[1], s1));
    CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CK(cuEventRecord(e[2], s1));
    sd_gate_open(&g);
    CK(cuStreamSynchronize(s1));
    ASSERT_INT(sd_now_ns() - t0, >=, 20000000);
    ASSERT_NEAR(sd_elapsed_ns(e[0], e[1]), 10000000, 1000);
    ASSERT_NEAR(sd_elapsed_ns(e[1], e[2]), 10000000, 1000);

    /* Two non-blocking streams: the 50 ms kernels overlap (margins allow a loaded host). */
    t0 = sd_now_ns();
    CK(cuEventRecord(e[3], s1));
    CK(cuLaunchKernel(k50, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CK(cuLaunchKernel(k50, 1, 1, 1, 1, 1, 1, 0, s2, NULL, NULL));
    CK(cuEventRecord(e[4], s1));
    CK(cuEventRecord(e[5], s2));
    CK(cuCtxSynchronize());
    long long wall = sd_now_ns() - t0;
    ASSERT_INT(wall, >=, 50000000);
    ASSERT_INT(wall, <, 90000000);
    ASSERT_NEAR(sd_elapsed_ns(e[3], e[4]), 50000000, 5000000); /* + submission gap */
    ASSERT_NEAR(sd_elapsed_ns(e[4], e[5]), 0, 20000000);

    /* Data effects follow stream order: memset, copy, memset again. */
    CUdeviceptr a, b;
    CK(cuMemAlloc_v2(&a, 4096));
    CK(cuMemAlloc_v2(&b, 4096));
    CK(cuMemsetD8Async(a, 1, 4096, s1));
    CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CK(cuMemcpyDtoDAsync_v2(b, a, 4096, s1));
    CK(cuMemsetD8Async(a, 2, 4096, s1));
    unsigned char out[2];
    CK(cuMemcpyDtoHAsync_v2(&out[0], b, 1, s1));
    CK(cuMemcpyDtoHAsync_v2(&out[1], a, 1, s1));
    CK(cuStreamSynchronize(s1));
    ASSERT_INT(out[0], ==, 1);
    ASSERT_INT(out[1], ==, 2);
    return 0;
}
