#include "wl_run.h"

/* The peak is exact to the byte, the out-of-memory is reported while 8 GiB are held, and every
 * allocation is given back. */
TEST_IMPL(vram_peak)
{
    ctt_proc p;
    double ms;
    ASSERT_INT(wl_run(&p, "vram_peak", NULL, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "vram_peak: alloc workspace bytes=268435457 in_use=12079607866\n");
    ASSERT_UINT(wl_num(p.out, "vram_peak: peak=", "live"), ==, 5);
    ASSERT_UINT(wl_num(p.out, "vram_peak: allocs=", "peak"), ==, 12079607866ULL);
    const char *oom = "vram_peak: oom ";
    ASSERT_CONTAINS(p.out, "error=cudaErrorMemoryAllocation");
    ASSERT_UINT(wl_num(p.out, oom, "requested"), ==, 80530636800ULL);
    ASSERT_UINT(wl_num(p.out, oom, "in_use"), ==, 8589934592ULL);
    double free_b = wl_num(p.out, oom, "free"), total_b = wl_num(p.out, oom, "total");
    /* An 80 GB H100 has 79-80 GiB; what is free excludes the 8 GiB held. */
    ASSERT(total_b >= 79.0 * 1073741824 && total_b <= 80.0 * 1073741824);
    ASSERT(free_b <= total_b - 8589934592.0);
    ASSERT_UINT(wl_num(p.out, "vram_peak: allocs=", "frees"), ==, 6);
    ASSERT_UINT(wl_num(p.out, "vram_peak: allocs=", "final_in_use"), ==, 0);
    ASSERT_CONTAINS(p.out, "vram_peak: free small_acts bytes=2147483648 in_use=6442450944\n"
                           "vram_peak: free optimizer bytes=3221225472 in_use=3221225472\n"
                           "vram_peak: free grads bytes=1610612736 in_use=1610612736\n"
                           "vram_peak: free weights bytes=1610612736 in_use=0\n");
    ctt_proc_free(&p);
    return 0;
}
