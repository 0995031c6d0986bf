/* Pinned vs pageable copies on a T4 (PCIe gen3 x16): the host blocking and the GPU-side
 * durations NVIDIA's "API synchronization behavior" page and the README's cost model give.
 * Exact durations come from events around work held behind a gate; host blocking is measured
 * against a 100 ms kernel, with margins for a loaded machine. The copies are of 64 KiB, which
 * the simulation's worker moves well within the model's 6.8 us: a copy whose bytes take the
 * host longer than the model occupies its stream that long (README, Time), and 16 MiB took
 * this machine's memmove 1.9 ms against the link's 1.3 ms. */
#include "sd.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

TEST_IMPL(pinned_vs_pageable_copy_timing)
{
    sd_env("FAKECUDA_DEVICES", "t4");
    sd_env("FAKECUDA_KERNEL_NS", "busy=100000000");
    ASSERT_INT(sd_init(), ==, 0);
    size_t n = 64 << 10;
    CUdeviceptr d;
    void *pin;
    char *pg = malloc(n);
    CK(cuMemAlloc_v2(&d, n));
    CK(cuMemAllocHost_v2(&pin, n));
    memset(pin, 1, n);
    memset(pg, 2, n);
    CUstream s;
    CUevent a, b;
    sd_gate g;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&a, 0));
    CK(cuEventCreate(&b, 0));
    CUfunction busy = sd_kernel("busy", 0);
    ASSERT(busy);
    CK(cuMemcpyHtoDAsync_v2(d, pin, n, s)); /* touch the memory, start the stream */
    CK(cuStreamSynchronize(s));
    double link = SD_T4_LINK;
    double pinned_ns = 1500 + n * 1e9 / link;

    /* Pinned H2D Async: the call returns while the stream is held; on the GPU the copy
     * takes 1.5 us + bytes / link. */
    ASSERT_INT(sd_gate_close(&g, s), ==, 0);
    long long t0 = sd_now_ns();
    CK(cuEventRecord(a, s));
    CK(cuMemcpyHtoDAsync_v2(d, pin, n, s));
    CK(cuEventRecord(b, s));
    ASSERT_INT(sd_now_ns() - t0, <, 50000000);
    ASSERT_INT(cuEventQuery(b), ==, CUDA_ERROR_NOT_READY);
    sd_gate_open(&g);
    CK(cuEventSynchronize(b));
    ASSERT_NEAR(sd_elapsed_ns(a, b), pinned_ns, 2000);

    /* Pageable H2D Async: no device synchronization (returns while the stream is held), but
     * the host first stages the data at half the link rate; the DMA then runs at the link
     * rate. */
    ASSERT_INT(sd_gate_close(&g, s), ==, 0);
    t0 = sd_now_ns();
    CK(cuEventRecord(a, s));
    CK(cuMemcpyHtoDAsync_v2(d, pg, n, s));
    CK(cuEventRecord(b, s));
    long long call = sd_now_ns() - t0;
    double stage_ns = n * 1e9 / (link / 2);
    ASSERT_INT(call, >=, (long long)stage_ns);
    memset(pg, 3, n); /* the source may be reused once the call returns */
    sd_gate_open(&g);
    CK(cuEventSynchronize(b));
    ASSERT_NEAR(sd_elapsed_ns(a, b), pinned_ns, 2000);
    char probe[4];
    CK(cuMemcpyDtoH_v2(probe, d + n - 4, 4));
    ASSERT_INT(probe[0], ==, 2);

    /* Pageable D2H Async returns only once the copy is done, at a third of the link rate. The
     * 100 ms kernel's time counts from before its launch: it may have run for milliseconds
     * when the launch call returns to a host held off the CPU (beside two CPU hogs the call
     * blocked 96.0 ms counted from after it). */
    double pageable_ns = 1500 + n * 1e9 / (link / 3);
    t0 = sd_now_ns();
    CK(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    CK(cuEventRecord(a, s));
    CK(cuMemcpyDtoHAsync_v2(pg, d, n, s));
    call = sd_now_ns() - t0;
    ASSERT_INT(call, >=, 100000000 + (long long)pageable_ns - 1000000);
    CK(cuEventRecord(b, s)); /* recorded after the host got control back */
    CK(cuEventSynchronize(b));
    ASSERT(sd_elapsed_ns(a, b) >= pageable_ns - 2000);
    ASSERT(sd_elapsed_ns(a, b) < pageable_ns + 50000000);
    ASSERT_INT(pg[12345], ==, 2);

    /* Pinned D2H Async does not block, even behind a 100 ms kernel. */
    CK(cuLaunchKernel(busy, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    t0 = sd_now_ns();
    CK(cuMemcpyDtoHAsync_v2(pin, d, n, s));
    ASSERT_INT(sd_now_ns() - t0, <, 50000000);
    CK(cuStreamSynchronize(s));
    ASSERT_INT(((char *)pin)[n - 1], ==, 2);
    return 0;
}

/* A set whose bytes take the host far longer than the model (256 MiB of fresh pages: tens of
 * milliseconds of page faults and zeroing, against 80 us at an H100's 3352 GB/s) occupies its
 * stream that long: the events around it span the time the host waited for it, as on a GPU,
 * where no stream is idle with its work outstanding. */
TEST_IMPL(slow_data_effect_occupies_the_stream)
{
    ASSERT_INT(sd_init(), ==, 0);
    size_t n = 256u << 20;
    CUdeviceptr d;
    CUstream s;
    CUevent a, b;
    ASSERT_INT(sd_buffer_stream_events(n, &d, &s, &a, &b), ==, 0);
    long long ta = sd_now_ns();
    CK(cuEventRecord(a, s));
    CK(cuStreamSynchronize(s));
    long long t0 = sd_now_ns();
    CK(cuMemsetD8Async(d, 7, n, s));
    CK(cuEventRecord(b, s));
    CK(cuStreamSynchronize(s));
    long long waited = sd_now_ns() - t0;
    double model = 1500 + n * 1e9 / 3352e9;
    ASSERT(waited > 2 * model + 1000000);
    /* the set's recorded time holds the host's wait but for its wake-ups, and no more than the
     * time since the event before it */
    ASSERT(sd_elapsed_ns(a, b) >= waited / 2);
    ASSERT(sd_elapsed_ns(a, b) <= sd_now_ns() - ta);
    return 0;
}

/* A set to zero of whole pages of the driver's own memory drops them (they read as zeros) and
 * writes only its partial pages: PyTorch zeroes each step's gradients (137 MB a step for
 * resnet18 at batch 32), which an H100 does in 40 us and writing them took this machine 40-55
 * ms, holding the stream through the step's data wait. The span's pages leave memory, a set of
 * pages already dropped (the next step's) occupies its stream no longer than the model, the
 * span reads as zeros and the bytes around it keep their values. */
TEST_IMPL(zero_set_drops_whole_pages)
{
    ASSERT_INT(sd_init(), ==, 0);
    size_t n = 64u << 20, off = 100, len = n - 300, page = (size_t)sysconf(_SC_PAGESIZE);
    CUdeviceptr d;
    CUstream s;
    CUevent a, b;
    ASSERT_INT(sd_buffer_stream_events(n, &d, &s, &a, &b), ==, 0);
    unsigned char *p = (unsigned char *)(uintptr_t)d;
    memset(p, 0x5a, n); /* resident and written, as a step's gradients are */
    CK(cuMemsetD8Async(d + off, 0, len, s));
    CK(cuStreamSynchronize(s));
    size_t pages = n / page, resident = 0;
    unsigned char *in = malloc(pages);
    ASSERT(in && mincore(p, n, in) == 0);
    for (size_t i = 1; i + 1 < pages; i++)
        resident += in[i] & 1;
    free(in);
    ASSERT_INT(resident, ==, 0);
    CK(cuEventRecord(a, s));
    CK(cuMemsetD8Async(d + off, 0, len, s));
    CK(cuEventRecord(b, s));
    CK(cuStreamSynchronize(s));
    /* not extended, which takes an effect of twice the model and a millisecond (fc_exec.c) */
    double model = 1500 + len * 1e9 / 3352e9;
    printf("dropped again: events %.0f ns apart, model %.0f\n", sd_elapsed_ns(a, b), model);
    ASSERT(sd_elapsed_ns(a, b) < 2 * model + 1000000);
    for (size_t i = 0; i < n; i += 4093)
        ASSERT_INT(p[i], ==, i >= off && i < off + len ? 0 : 0x5a);
    for (size_t i = off - 2; i < off + 2; i++)
        ASSERT_INT(p[i], ==, i >= off ? 0 : 0x5a);
    for (size_t i = off + len - 2; i < off + len + 2; i++)
        ASSERT_INT(p[i], ==, i < off + len ? 0 : 0x5a);
    return 0;
}
