/* gpu-gaps and low-gpu-utilization. */
#include "an_helpers.h"

TEST_IMPL(diag_gpu_gaps)
{
    /* 5 ms of host work mid-step while the 15 queued 20 us kernels finish */
    tj *s = an_fires("gpu-gaps", "--loader-ms 0 --pinned --host-us 5000 --kernel-us 20",
                     "--loader-ms 0 --pinned --host-us 0 --kernel-us 20");
    ASSERT(s);
    const tj *d = an_diag(s, "gpu-gaps");
    ASSERT_INT(tj_num(d, "evidence.gaps"), ==, 50);
    /* each gap: the 5 ms of host work less the ~0.4 ms the queued kernels still ran */
    ASSERT_NEAR(tj_num(d, "evidence.gap_ns") / 50, 4.6e6, 0.15e6);
    ASSERT_NEAR(tj_num(s, "breakdown.0.longest_gaps.0.len_ns"), 4.6e6, 0.15e6);
    ASSERT_STR(tj_str(s, "breakdown.0.longest_gaps.0.cause"), "host");
    ASSERT(tj_num(s, "breakdown.0.longest_gaps.0.idle_host_compute_ns") > 4e6);
    tj_free(s);
    return 0;
}

TEST_IMPL(diag_low_gpu_utilization)
{
    /* a 600 ms evaluation-like stall halfway through an otherwise regular loop */
    tj *s = an_fires("low-gpu-utilization", "--stall-ms 600", "");
    ASSERT(s);
    const tj *d = an_diag(s, "low-gpu-utilization");
    ASSERT(tj_num(d, "evidence.low_windows") >= 2);
    ASSERT(tj_num(d, "estimated_saving_ns") > 0.1e9);
    ASSERT_CONTAINS(tj_str(d, "detail"), "low utilization from +");
    tj_free(s);
    return 0;
}
