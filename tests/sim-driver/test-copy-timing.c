/* Pinned vs pageable copies on a T4 (PCIe gen3 x16): the host blocking and the GPU-side
 * durations NVIDIA's "API synchronization behavior" page and the README's cost model give. */
#include "sd.h"

#include <stdlib.h>
#include <string.h>

TEST_IMPL(pinned_vs_pageable_copy_timing)
{
    sd_env("FAKECUDA_DEVICES", "t4");
    sd_env("FAKECUDA_KERNEL_NS", "busy=30000000,long=400000000");
    ASSERT_INT(sd_init(), ==, 0);
    size_t n = 16 << 20;
    CUdeviceptr d;
    void *pin;
    char *pg = malloc(n);
    CK(cuMemAlloc_v2(&d, n));
    CK(cuMemAllocHost_v2(&pin, n));
    memset(pin, 1, n);
    memset(pg, 2, n);
    CUstream s;
    CUevent a, b;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CUfunction busy = sd_kernel("busy", 0), lng = sd_kernel("long", 0);
    ASSERT(busy && lng);
    CK(cuMemcpyHtoDAsync_v2(d, pin, n, s)); /* touch the memory, start the stream */
    CK(cuStreamSynchronize(s));
    double link = SD_T4_LINK;
    double pinned_ns = 1500 + n * 1e9 / link;

    /* Pinned H2D behind a 30 ms kernel: the call returns at once; the copy takes
     * bytes / link on the GPU. */
    CK(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    long long t0 = sd_now_ns();
    CK(cuEventRecord(a, s));
    CK(cuMemcpyHtoDAsync_v2(d, pin, n, s));
    CK(cuEventRecord(b, s));
    long long call = sd_now_ns() - t0;
    ASSERT_INT(call, <, 5000000);
    ASSERT_INT(cuEventQuery(b), ==, CUDA_ERROR_NOT_READY);
    CK(cuEventSynchronize(b));
    ASSERT_INT(sd_now_ns() - t0, >=, 30000000 + (long long)pinned_ns - 1000000);
    ASSERT_NEAR(sd_elapsed_ns(a, b), pinned_ns, 2000);

    /* Pageable H2D Async: no device synchronization (the call returns well before a 400 ms
     * kernel ends), but the host stages the data first (half the link rate), then the DMA
     * runs at the link rate. */
    CK(cuLaunchKernel(lng, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    t0 = sd_now_ns();
    CK(cuEventRecord(a, s));
    CK(cuMemcpyHtoDAsync_v2(d, pg, n, s));
    CK(cuEventRecord(b, s));
    call = sd_now_ns() - t0;
    double stage_ns = n * 1e9 / (link / 2);
    ASSERT_INT(call, >=, (long long)stage_ns);
    ASSERT_INT(call, <, 300000000); /* did not wait for the kernel */
    memset(pg, 3, n);              /* the source may be reused once the call returns */
    CK(cuEventSynchronize(b));
    ASSERT_NEAR(sd_elapsed_ns(a, b), pinned_ns, 2000);
    char probe[4];
    CK(cuMemcpyDtoH_v2(probe, d + n - 4, 4));
    ASSERT_INT(probe[0], ==, 2);

    /* Pageable D2H Async returns only once the copy is done, at a third of the link rate. */
    CK(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    t0 = sd_now_ns();
    CK(cuEventRecord(a, s));
    CK(cuMemcpyDtoHAsync_v2(pg, d, n, s));
    call = sd_now_ns() - t0;
    double pageable_ns = 1500 + n * 1e9 / (link / 3);
    ASSERT_INT(call, >=, 30000000 + (long long)pageable_ns - 1000000);
    CK(cuEventRecord(b, s)); /* recorded after the host got control back */
    CK(cuEventSynchronize(b));
    ASSERT(sd_elapsed_ns(a, b) >= pageable_ns - 2000);
    ASSERT(sd_elapsed_ns(a, b) < pageable_ns + 2000000);
    ASSERT_INT(pg[12345], ==, 2);

    /* Pinned D2H Async does not block. */
    CK(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    t0 = sd_now_ns();
    CK(cuMemcpyDtoHAsync_v2(pin, d, n, s));
    ASSERT_INT(sd_now_ns() - t0, <, 5000000);
    CK(cuStreamSynchronize(s));
    ASSERT_INT(((char *)pin)[n - 1], ==, 2);
    return 0;
}
