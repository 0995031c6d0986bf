/* launch-bound: 2 us kernels behind 8 us launches; with 50 us kernels the queue stays fed. */
#include "an_helpers.h"

TEST_IMPL(diag_launch_bound)
{
    const char *common = "--launch-us 8 --loader-ms 0 --pinned --batch-bytes 65536 --host-us 0";
    char bad[256], good[256];
    snprintf(bad, sizeof bad, "--kernel-us 2 %s", common);
    snprintf(good, sizeof good, "--kernel-us 50 %s", common);
    tj *s = an_fires("launch-bound", bad, good);
    ASSERT(s);
    const tj *d = an_diag(s, "launch-bound");
    ASSERT_INT(tj_num(d, "evidence.kernels"), ==, 1500);
    ASSERT_INT(tj_num(d, "evidence.short_kernels"), ==, 1500);
    ASSERT_NEAR(tj_num(d, "evidence.avg_launch_ns"), 8000, 1);
    /* each kernel (2.0-2.4 us) waits for the next 8 us launch: ~5.8 us idle per kernel */
    ASSERT_NEAR(tj_num(d, "evidence.idle_while_launching_ns"), 1450 * 5.8e3, 1450 * 0.5e3);
    /* each kernel starts 3 us into its call, before the call returned: as the tracer's bound of
     * an idle stream's start, the wait runs to the return, past the gap */
    ASSERT_INT(tj_num(d, "evidence.launches_waited_for"), ==, 1500);
    ASSERT(tj_num(d, "evidence.waited_for_launch_ns") > tj_num(d, "evidence.idle_while_launching_ns"));
    ASSERT_NEAR(tj_num(d, "estimated_saving_ns"), tj_num(d, "evidence.waited_for_launch_ns"), 0);
    ASSERT_STR(tj_str(s, "diagnoses.0.id"), "launch-bound");
    /* default stacks: launches carry no call site */
    ASSERT(!tj_path(d, "sites.0"));
    tj_free(s);
    /* --stacks all: the site of the launches, from the driver call nested in each runtime call */
    char all[300];
    snprintf(all, sizeof all, "%s --stacks-all", bad);
    char dir[4096];
    ASSERT(an_gen(dir, "stacks-all", all));
    s = an_summary(dir, "");
    ASSERT(s);
    d = an_diag(s, "launch-bound");
    ASSERT(d);
    ASSERT_STR(tj_str(d, "sites.0.call"), "cudaLaunchKernel");
    ASSERT_STR(tj_str(d, "sites.0.stack"), "run_layer (train+0x100) <- train_step (train+0x200) <- main (train+0x300)");
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 1500);
    ASSERT_NEAR(tj_num(d, "sites.0.total_ns"), 1500 * 8000.0, 1);
    tj_free(s);
    return 0;
}
