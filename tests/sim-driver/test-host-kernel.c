/* A host implementation attached to a kernel name runs in stream order with the launch's
 * arguments as they were at launch time. */
#include "sd.h"

#include "fakecuda.h"

/* Exported from the test binary (-rdynamic); the driver finds it in the global scope. */
__attribute__((visibility("default"))) void fakecuda_kernel_axpy(void **params,
                                                                 const fakecuda_launch *l)
{
    float *y = *(float **)params[0];
    float a = *(float *)params[1];
    int n = *(int *)params[2];
    for (int i = 0; i < n && i < (int)(l->grid[0] * l->block[0]); i++)
        y[i] += a;
}

TEST_IMPL(host_kernel_runs_with_launch_time_arguments)
{
    sd_env("FAKECUDA_KERNEL_NS", "busy=20000000");
    ASSERT_INT(sd_init(), ==, 0);
    CUmodule m;
    CUfunction axpy, busy = sd_kernel("busy", 0);
    CK(cuModuleLoadData(&m, "fakecuda-module 1\n# y += a\nkernel axpy 8 4 4\n"));
    CK(cuModuleGetFunction(&axpy, m, "axpy"));
    ASSERT(busy);
    int n = 1000;
    CUdeviceptr y;
    CK(cuMemAlloc_v2(&y, n * sizeof(float)));
    CK(cuMemsetD32_v2(y, 0, (size_t)n));
    float a = 1.5f;
    void *args[] = {&y, &a, &n};
    CK(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CK(cuLaunchKernel(axpy, 4, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    a = 100; /* after the launch: must not be seen */
    float out[2];
    CK(cuMemcpyDtoH_v2(out, y, 4));
    ASSERT_NEAR(out[0], 1.5, 1e-6);
    /* Grid covering only the first 512 elements. */
    CK(cuLaunchKernel(axpy, 2, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH_v2(&out[0], y + 511 * sizeof(float), 4));
    CK(cuMemcpyDtoH_v2(&out[1], y + 512 * sizeof(float), 4));
    ASSERT_NEAR(out[0], 101.5, 1e-4);
    ASSERT_NEAR(out[1], 1.5, 1e-6);
    return 0;
}

/* Ends 5 ms after it starts, whatever the cost model says (as the simulated NCCL's collectives
 * end when the other ranks allow). */
__attribute__((visibility("default"))) void fakecuda_kernel_settle(void **params,
                                                                   const fakecuda_launch *l)
{
    (void)params;
    *l->end_ns = l->start_ns + 5000000;
}

TEST_IMPL(host_kernel_sets_its_end)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction f = sd_kernel("settle", 0);
    ASSERT(f);
    CUdeviceptr d;
    CUstream s;
    CUevent a, b;
    sd_gate g;
    ASSERT_INT(sd_buffer_stream_events(256, &d, &s, &a, &b), ==, 0);
    ASSERT_INT(sd_gate_close(&g, s), ==, 0);
    CK(cuEventRecord(a, s));
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CK(cuEventRecord(b, s));
    sd_gate_open(&g);
    CK(cuEventSynchronize(b));
    ASSERT_NEAR(sd_elapsed_ns(a, b), 5e6, 1000);
    return 0;
}
