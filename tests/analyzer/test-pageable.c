/* pageable-memcpy and async-memcpy-pageable: 64 MiB batches from pageable memory (8 GB/s) are
 * re-costed at the host link's peak (no large pinned copy is measured); pinned batches are not
 * reported. */
#include "an_helpers.h"

TEST_IMPL(diag_pageable_memcpy)
{
    const char *bad = "--loader-ms 0 --batch-bytes 67108864 --iters 20";
    const char *good = "--loader-ms 0 --batch-bytes 67108864 --iters 20 --pinned";
    tj *s = an_fires("pageable-memcpy", bad, good);
    ASSERT(s);
    const tj *d = an_diag(s, "pageable-memcpy");
    ASSERT_INT(tj_num(d, "evidence.copies"), ==, 20);
    ASSERT_INT(tj_num(d, "evidence.bytes"), ==, 20 * 67108864LL);
    ASSERT_NEAR(tj_num(d, "evidence.achieved_gbps"), 8.0, 0.05);
    ASSERT_NEAR(tj_num(d, "evidence.pinned_gbps"), 63.008, 0.01);
    /* the copies are Async: async-memcpy-pageable prices the same pinning, the message says so */
    ASSERT_INT(tj_num(d, "evidence.async_copies"), ==, 20);
    ASSERT(an_diag(s, "async-memcpy-pageable"));
    ASSERT_CONTAINS(tj_str(d, "message"), "These are the Async copies of async-memcpy-pageable");
    ASSERT_CONTAINS(tj_str(d, "message"), "do not add the two");
    double t = tj_num(d, "evidence.time_ns");
    ASSERT_NEAR(tj_num(d, "estimated_saving_ns"), t - 20 * 67108864 / 63.008, 20 * 2000);
    /* the site: the function the user called and the user's frames, not the runtime's */
    ASSERT_CONTAINS(tj_str(d, "call_sites.0"), "cudaMemcpyAsync at load_batch (train+0x100) <- "
                                               "train_step (train+0x200) <- main (train+0x300): 20 calls");
    ASSERT_STR(tj_str(d, "sites.0.call"), "cudaMemcpyAsync");
    ASSERT_CONTAINS(tj_str(d, "sites.0.stack"), "load_batch (train+0x100) <- train_step");
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 20);
    ASSERT_INT(tj_num(d, "sites.0.bytes"), ==, 20 * 67108864LL);
    ASSERT_NEAR(tj_num(d, "sites.0.total_ns"), t, 1);
    /* the traced process had no PyTorch: CUDA's terms only */
    ASSERT_CONTAINS(tj_str(d, "fix"), "cudaHostAlloc");
    ASSERT(!strstr(tj_str(d, "fix"), "pin_memory"));
    tj_free(s);
    return 0;
}

TEST_IMPL(diag_async_memcpy_pageable)
{
    const char *bad = "--loader-ms 0 --batch-bytes 67108864 --iters 20";
    const char *good = "--loader-ms 0 --batch-bytes 67108864 --iters 20 --pinned";
    tj *s = an_fires("async-memcpy-pageable", bad, good);
    ASSERT(s);
    const tj *d = an_diag(s, "async-memcpy-pageable");
    ASSERT_INT(tj_num(d, "evidence.copies"), ==, 20);
    ASSERT_INT(tj_num(d, "evidence.bytes"), ==, 20 * 67108864LL);
    /* each call returned after its copy: >= 8.39 ms of 8 GB/s copying */
    double blocked = tj_num(d, "evidence.host_blocked_ns");
    ASSERT(blocked >= 20 * 8.38e6);
    /* the saving is the copies' own time (their GPU intervals: 64 MiB at 8 GB/s + 1.5 us each)
     * less the same copies pinned (at the link's 63.008 GB/s), not the host time, which also
     * waited for the GPU to reach them; each call returns 2 us after its copy ended, which
     * counts (the host was held) */
    double own = 20 * (67108864 / 8.0 + 1500), pinned = 20 * (67108864 / 63.008);
    ASSERT_NEAR(tj_num(d, "evidence.copy_ns"), own - pinned + 20 * 2000, 40);
    ASSERT_NEAR(tj_num(d, "estimated_saving_ns"), own - pinned + 20 * 2000, 40);
    ASSERT(blocked > own);
    ASSERT_STR(tj_str(d, "sites.0.call"), "cudaMemcpyAsync");
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 20);
    ASSERT_CONTAINS(tj_str(d, "sites.0.stack"), "load_batch");
    tj_free(s);
    return 0;
}
