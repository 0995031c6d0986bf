/* sync-memcpy and excessive-sync fire on their problem and not on the fixed variant. */
#include "an_helpers.h"

TEST_IMPL(diag_sync_memcpy)
{
    tj *s = an_fires("sync-memcpy", "--sync-copy-bytes 8000000 --loader-ms 0 --pinned --host-us 2000",
                     "--loader-ms 0 --pinned --host-us 2000");
    ASSERT(s);
    const tj *d = an_diag(s, "sync-memcpy");
    ASSERT_INT(tj_num(d, "evidence.copies"), ==, 50);
    ASSERT_INT(tj_num(d, "evidence.bytes"), ==, 50 * 8000000LL);
    /* after each blocking read-back the host works 2 ms with the GPU idle */
    ASSERT_NEAR(tj_num(d, "evidence.idle_after_copy_ns"), 50 * 2.0e6, 50 * 0.05e6);
    ASSERT_CONTAINS(tj_str(d, "call_sites.0"), "cudaMemcpy at read_metric (train+0x100) <- "
                                               "train_step (train+0x200) <- main");
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 50);
    ASSERT_INT(tj_num(d, "sites.0.bytes"), ==, 50 * 8000000LL);
    tj_free(s);
    return 0;
}

TEST_IMPL(diag_excessive_sync)
{
    tj *s = an_fires("excessive-sync", "--sync-every-kernel --loader-ms 0 --pinned",
                     "--loader-ms 0 --pinned");
    ASSERT(s);
    const tj *d = an_diag(s, "excessive-sync");
    ASSERT_INT(tj_num(d, "evidence.sync_calls"), ==, 50 * 30 + 50);
    ASSERT_INT(tj_num(d, "evidence.device_syncs"), ==, 1500);
    ASSERT_INT(tj_num(d, "evidence.stream_syncs"), ==, 50);
    ASSERT(tj_num(d, "evidence.host_blocked_ns") > 300e6);
    /* sites from the SYNC records joined with their calls' stacks, by blocked time */
    ASSERT_STR(tj_str(d, "sites.0.call"), "cudaDeviceSynchronize (device synchronization)");
    ASSERT_STR(tj_str(d, "sites.0.stack"), "run_layer (train+0x100) <- train_step (train+0x200) <- main (train+0x300)");
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 1500);
    ASSERT_STR(tj_str(d, "sites.1.call"), "cudaStreamSynchronize (stream synchronization)");
    ASSERT_INT(tj_num(d, "sites.1.count"), ==, 50);
    ASSERT_NEAR(tj_num(d, "sites.0.total_ns") + tj_num(d, "sites.1.total_ns"),
                tj_num(d, "evidence.host_blocked_ns"), 1);
    tj_free(s);
    return 0;
}

/* A synchronization is owed the idle time after it up to the time it blocked the host, no more:
 * four 2 ms kernels a step, a device synchronization after each, and 20 ms of host work mid-step
 * (on average: regular, bursty or irregular). The host work (50 x 20 ms in the window) stays the
 * host's (gpu-gaps), and the synchronizations' saving is at most their blocked time and at most
 * what removing them measures: the variant without them, generated beside. */
TEST_IMPL(diag_sync_owes_only_its_blocked_time)
{
    static const char *const shapes[] = {"regular", "bursty", "irregular"};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        char dir[4096], args[160], name[64];
        snprintf(args, sizeof args, "--loader-ms 0 --pinned --kernels 4 --kernel-us 2000 --host-us 20000 --shape %s",
                 shapes[i]);
        snprintf(name, sizeof name, "%s-fixed", shapes[i]);
        ASSERT(an_gen(dir, name, args));
        tj *f = an_summary(dir, NULL);
        ASSERT(f);
        double fixed_win = tj_num(f, "breakdown.0.window_ns");
        tj_free(f);
        char broken[200];
        snprintf(broken, sizeof broken, "%s --sync-every-kernel", args);
        ASSERT(an_gen(dir, shapes[i], broken));
        tj *s = an_summary(dir, "--min-saving 0");
        ASSERT(s);
        const tj *y = an_diag(s, "excessive-sync"), *g = an_diag(s, "gpu-gaps");
        ASSERT(y && g);
        double save = tj_num(y, "estimated_saving_ns");
        ASSERT(save > 0);
        ASSERT(save <= tj_num(y, "evidence.host_blocked_ns"));
        ASSERT(save <= tj_num(s, "breakdown.0.window_ns") - fixed_win);
        ASSERT_NEAR(tj_num(g, "estimated_saving_ns") + save, 50 * 20e6, 50 * 20e6 * 0.05);
        ASSERT_STR(tj_str(s, "diagnoses.0.id"), "gpu-gaps");
        tj_free(s);
    }
    return 0;
}
