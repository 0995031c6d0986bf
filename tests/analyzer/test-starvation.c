/* dataloader-starvation: the starved loop (a 20 ms loader per iteration, the GPU busy ~7 ms)
 * is diagnosed first, as waiting or computing; the prefetching variant is not. */
#include "an_helpers.h"

TEST_IMPL(diag_dataloader_starvation)
{
    tj *s = an_fires("dataloader-starvation", "", "--loader-ms 1 --pinned --prefetch");
    ASSERT(s);
    ASSERT_STR(tj_str(s, "diagnoses.0.id"), "dataloader-starvation");
    ASSERT_STR(tj_str(s, "diagnoses.0.severity"), "high");
    ASSERT_INT(tj_num(s, "diagnoses.0.evidence.gaps"), ==, 49);
    ASSERT_NEAR(tj_num(s, "diagnoses.0.evidence.avg_gap_ns"), 20e6, 0.1e6);
    ASSERT(tj_num(s, "diagnoses.0.evidence.host_wait_ns") > 10 * tj_num(s, "diagnoses.0.evidence.host_compute_ns"));
    ASSERT_CONTAINS(tj_str(s, "diagnoses.0.message"), "waiting");
    /* the saving is the gap time, and the bound is the breakdown's window/busy */
    ASSERT_NEAR(tj_num(s, "diagnoses.0.estimated_saving_ns"), 49 * 20.02e6, 0.5e6);
    ASSERT_NEAR(tj_num(s, "diagnoses.0.evidence.max_speedup"), tj_num(s, "breakdown.0.max_speedup_host"), 0.01);
    tj_free(s);
    /* a loader computing on the main thread */
    char dir[4096];
    ASSERT(an_gen(dir, "compute", "--compute-loader"));
    s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_STR(tj_str(s, "diagnoses.0.id"), "dataloader-starvation");
    ASSERT_CONTAINS(tj_str(s, "diagnoses.0.message"), "computing");
    tj_free(s);
    /* the fixed variant has nothing to report at all */
    ASSERT(an_gen(dir, "fixed", "--loader-ms 1 --pinned --prefetch"));
    s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_UINT(tj_len(s, "diagnoses"), ==, 0);
    tj_free(s);
    return 0;
}

/* A loop starved by a 20 ms loader, with one 2 s stall in the middle (an evaluation phase): the
 * stall's gap is far longer than a step's, so it is set aside, not allowed to hide the loop's
 * 18 regular gaps (19 gaps in the window: 20 iterations, the first before any GPU work). */
TEST_IMPL(diag_dataloader_starvation_despite_a_stall)
{
    char dir[4096];
    ASSERT(an_gen(dir, "stall", "--iters 20 --loader-ms 20 --stall-ms 2000"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *x = an_diag(s, "dataloader-starvation");
    ASSERT(x);
    ASSERT_INT(tj_num(x, "evidence.gaps"), ==, 18);
    ASSERT_NEAR(tj_num(x, "evidence.median_gap_ns"), 20e6, 0.1e6);
    ASSERT_NEAR(tj_num(x, "evidence.gap_ns"), 18 * 20e6, 18 * 0.1e6);
    ASSERT_INT(tj_num(x, "evidence.set_aside_gaps"), ==, 1);
    ASSERT_NEAR(tj_num(x, "evidence.set_aside_gap_ns"), 2020e6, 1e6);
    ASSERT_CONTAINS(tj_str(x, "message"), "1 other gap before batch copies");
    tj_free(s);
    return 0;
}
