/* Copies in one direction share the host link (one copy engine per direction): two pinned
 * H2D copies on two streams run one after the other, while an H2D and a D2H copy overlap.
 * The copies are of 256 KiB, on memory touched before, which the simulation's worker moves
 * well within the model's 22 us: a copy whose bytes take the host longer than the model
 * occupies its stream and engine that long (README, Time). */
#include "sd.h"

#include <string.h>

#define SD_CE_BYTES (256 << 10)

/* Queues one copy per stream behind one gate (stream 1 waits for an event recorded on stream
 * 0 after it, so both copies become ready at the same simulated time however late the host
 * wakes), opens it, returns each copy's a->b time. */
static int two_copies(CUstream s[2], CUdeviceptr d[2], void *h[2], int d2h_second,
                      double out[2])
{
    sd_gate g;
    CUevent a[2], b[2];
    if (sd_gate_close(&g, s[0]))
        return -1;
    for (int i = 0; i < 2; i++) {
        if (cuEventCreate(&a[i], 0) || cuEventCreate(&b[i], 0) ||
            (i == 1 && cuStreamWaitEvent(s[1], a[0], 0)) || cuEventRecord(a[i], s[i]))
            return -1;
        CUresult r = i == 1 && d2h_second ? cuMemcpyDtoHAsync_v2(h[i], d[i], SD_CE_BYTES, s[i])
                                          : cuMemcpyHtoDAsync_v2(d[i], h[i], SD_CE_BYTES, s[i]);
        if (r || cuEventRecord(b[i], s[i]))
            return -1;
    }
    sd_gate_open(&g);
    for (int i = 0; i < 2; i++) {
        if (cuEventSynchronize(b[i]))
            return -1;
        out[i] = sd_elapsed_ns(a[i], b[i]);
    }
    return 0;
}

TEST_IMPL(copy_engines_per_direction)
{
    sd_env("FAKECUDA_DEVICES", "t4");
    ASSERT_INT(sd_init(), ==, 0);
    CUstream s[2];
    CUdeviceptr d[2];
    void *h[2];
    for (int i = 0; i < 2; i++) {
        CK(cuStreamCreate(&s[i], CU_STREAM_NON_BLOCKING));
        CK(cuMemAlloc_v2(&d[i], SD_CE_BYTES));
        CK(cuMemAllocHost_v2(&h[i], SD_CE_BYTES));
        memset(h[i], i + 1, SD_CE_BYTES);
        /* the device pages touched: a first touch's faults cost the host more than the model */
        CK(cuMemcpyHtoD_v2(d[i], h[i], SD_CE_BYTES));
    }
    double one = 1500 + SD_CE_BYTES * 1e9 / SD_T4_LINK, t[2];
    /* Same direction: one waits for the other. */
    ASSERT_INT(two_copies(s, d, h, 0, t), ==, 0);
    double lo = t[0] < t[1] ? t[0] : t[1], hi = t[0] < t[1] ? t[1] : t[0];
    ASSERT_NEAR(lo, one, one / 4);
    ASSERT_NEAR(hi, 2 * one, one / 4);
    /* Opposite directions: both at full speed at once. */
    ASSERT_INT(two_copies(s, d, h, 1, t), ==, 0);
    ASSERT_NEAR(t[0], one, one / 4);
    ASSERT_NEAR(t[1], one, one / 4);
    return 0;
}
