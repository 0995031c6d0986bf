/* alloc-churn: a 64 MiB cudaMalloc/cudaFree per iteration, from the scratch_alloc call site. */
#include "an_helpers.h"

TEST_IMPL(diag_alloc_churn)
{
    tj *s = an_fires("alloc-churn", "--churn --loader-ms 0 --pinned", "--loader-ms 0 --pinned");
    ASSERT(s);
    const tj *d = an_diag(s, "alloc-churn");
    ASSERT_INT(tj_num(d, "evidence.allocations"), ==, 49); /* the first had no freed twin */
    ASSERT_INT(tj_num(d, "evidence.frees"), ==, 49);
    /* each cudaMalloc overlaps the batch copy; the GPU idles through the last 80 us of each of
     * the 50 cudaFree calls (after the device synchronization they wait for) */
    ASSERT_NEAR(tj_num(d, "evidence.gpu_idle_in_alloc_calls_ns"), 50 * 80e3, 50 * 10e3);
    ASSERT_CONTAINS(tj_str(d, "call_sites.0"), "scratch_alloc <- train_step <- main");
    ASSERT_INT(tj_num(s, "vram.0.allocations"), ==, 53);
    ASSERT_INT(tj_num(s, "vram.0.peak_bytes"), ==, 4294967296LL + (64 << 20));
    tj_free(s);
    return 0;
}
