#include "wl_run.h"

/* The programs carry code for every architecture CUDA 13 supports (sm_75, sm_80, sm_90): they
 * compute right on the simulated T4 and A100 as on the H100, and on a V100 (cc 7.0, which CUDA
 * 13 no longer supports) they fail the way CUDA says, with no kernel image for the device. */
TEST_IMPL(devices)
{
    const char *devs[] = {"FAKECUDA_DEVICES=t4", "FAKECUDA_DEVICES=a100"};
    const char *cc[] = {"cc=7.5", "cc=8.0"};
    const char *tl[] = {"--iters", "2", "--loader-ms", "1", "--layers", "1", "--verify", NULL};
    for (int d = 0; d < 2; d++) {
        ctt_proc p;
        double ms;
        const char *env[] = {devs[d], NULL};
        ASSERT_INT(wl_run(&p, "driver_api", NULL, env, &ms), ==, 0);
        ASSERT_STR(p.err, "");
        ASSERT_INT(p.code, ==, 0);
        ASSERT_CONTAINS(p.out, cc[d]);
        ASSERT_CONTAINS(p.out, "driver_api: verify=ok");
        ctt_proc_free(&p);
        ASSERT_INT(wl_run(&p, "train_loop", tl, env, &ms), ==, 0);
        ASSERT_STR(p.err, "");
        ASSERT_INT(p.code, ==, 0);
        ASSERT_CONTAINS(p.out, "train_loop: verify=ok");
        ctt_proc_free(&p);
    }
    ctt_proc p;
    double ms;
    const char *volta[] = {"FAKECUDA_DEVICES=v100", NULL};
    ASSERT_INT(wl_run(&p, "train_loop", tl, volta, &ms), ==, 0);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "cudaErrorNoKernelImageForDevice (209)");
    ASSERT_STR(p.out, "");
    ctt_proc_free(&p);
    return 0;
}
