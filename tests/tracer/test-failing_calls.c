/* A process whose CUDA calls all fail still leaves a trace showing them: the calls that bring
 * CUDA up (cuInit, cudaGetDeviceCount, cudaSetDevice) and the profiler's (cudaProfilerStart)
 * are traced, and a failed call starts the trace as any call does. Checked on probe setup with
 * every call failing. */
#include "tr.h"

#include <stdlib.h>

TEST_IMPL(all_calls_failing_leave_a_trace)
{
    char prog[4096], dir[4096];
    char *env[] = {"FAKECUDA_FAIL=cuInit:1:100", NULL}; /* CUDA_ERROR_NO_DEVICE, then for good */
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "setup", NULL};
    ctt_proc plain;
    char fake[4096], llp[4200];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *plain_env[] = {llp, env[0], NULL};
    ASSERT_INT(ctt_run(&plain, cmd, plain_env, 30), ==, 0);
    TR_ASSERT_EXIT(plain, 1);
    int r[3];
    const char *line = tr_line(plain.out, "probe: cudaGetDeviceCount=");
    ASSERT_INT(sscanf(line, "probe: cudaGetDeviceCount=%d cudaSetDevice=%d cudaProfilerStart=%d",
                      &r[0], &r[1], &r[2]), ==, 3);
    for (int i = 0; i < 3; i++)
        ASSERT_INT(r[i], !=, 0);
    for (int mode = 0; mode < 2; mode++) {
        snprintf(dir, sizeof dir, "%s/setup%d", ctt_tmpdir(), mode);
        ctt_proc p;
        ASSERT_INT(mode ? tr_run_preloaded(&p, dir, cmd, env, 30) : tr_run(&p, dir, NULL, cmd, env, 30),
                   ==, 0);
        TR_ASSERT_EXIT(p, 1);
        ASSERT_STR(p.out, plain.out);
        if (!mode)
            ASSERT_CONTAINS(p.err, "cutrace: 1 trace file in ");
        tr_trace t;
        ASSERT_INT(tr_load(&t, dir), ==, 0);
        ASSERT_UINT(t.nfiles, ==, 1);
        ASSERT_INT(t.stats[0].complete, ==, 1);
        ASSERT_INT(tr_result(&t, "cuInit"), ==, 100);
        ASSERT_INT(tr_result(&t, "cudaGetDeviceCount"), ==, r[0]);
        ASSERT_INT(tr_result(&t, "cudaSetDevice"), ==, r[1]);
        ASSERT_INT(tr_result(&t, "cudaProfilerStart"), ==, r[2]);
        tr_free(&t);
        char *summary[] = {"summary", dir, NULL};
        char *text = tr_analyze(summary);
        ASSERT(text != NULL);
        ASSERT_CONTAINS(text, ", ended: exit status 1, ");
        free(text);
        ctt_proc_free(&p);
    }
    ctt_proc_free(&plain);
    return 0;
}
