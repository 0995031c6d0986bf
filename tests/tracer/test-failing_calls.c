/* A process whose CUDA calls all fail still leaves a trace showing them: the calls that bring
 * CUDA up (cuInit, cudaGetDeviceCount, cudaSetDevice) and the profiler's (cudaProfilerStart)
 * are traced, and a failed call starts the trace as any call does. Checked on probe setup with
 * every call failing, and on NVIDIA's cuda-samples matrixMul, built from ../shared at test time,
 * which stops at its first failed call. */
#include "tr.h"

#include <stdlib.h>

/* The API record named `name` in t: its result, or -1 if there is none. */
static long long api_result(const tr_trace *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == CT_REC_API && !strcmp(t->v[i].name, name))
            return t->v[i].r.u.api.result;
    return -1;
}

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
        ASSERT_INT(api_result(&t, "cuInit"), ==, 100);
        ASSERT_INT(api_result(&t, "cudaGetDeviceCount"), ==, r[0]);
        ASSERT_INT(api_result(&t, "cudaSetDevice"), ==, r[1]);
        ASSERT_INT(api_result(&t, "cudaProfilerStart"), ==, r[2]);
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

/* The "CUDA error at FILE:LINE code=N(NAME) "CALL"" line of cuda-samples' checkCudaErrors: N,
 * and the call's name into call; -1 if there is none. */
static int sample_error(const char *err, char call[64])
{
    const char *l = strstr(err, "CUDA error at ");
    const char *c = l ? strstr(l, " code=") : NULL;
    const char *q = c ? strchr(c, '"') : NULL;
    if (!q || sscanf(q + 1, "%63[A-Za-z_0-9]", call) != 1)
        return -1;
    return atoi(c + 6);
}

TEST_IMPL(cuda_samples_matrixMul)
{
    char bin[4096], src[4200], inc[4200], dir[4096];
    snprintf(src, sizeof src, "%s/Samples/0_Introduction/matrixMul/matrixMul.cu", TR_SAMPLES);
    snprintf(inc, sizeof inc, "-I%s/Common", TR_SAMPLES);
    ctt_path(bin, "tests/tracer/matrixMul");
    char *nvcc[] = {TR_NVCC, "-cudart", "shared", "-arch=sm_90", inc, "-o", bin, src, NULL};
    ctt_proc b;
    if (ctt_run(&b, nvcc, NULL, 110) != 0 || !b.exited || b.code != 0)
        ctt_skip("nvcc could not build cuda-samples' matrixMul (see ../shared/third_party)");
    ctt_proc_free(&b);
    char fake[4096], llp[4200];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *env[] = {llp, NULL};
    char *cmd[] = {bin, NULL};
    ctt_proc plain, p;
    ASSERT_INT(ctt_run(&plain, cmd, env, 60), ==, 0);
    char call[64] = "";
    int code = sample_error(plain.err, call);
    printf("matrixMul untraced: exit status %d, failed call %s code %d\n", plain.code,
           code >= 0 ? call : "none", code);
    snprintf(dir, sizeof dir, "%s/mm", ctt_tmpdir());
    ASSERT_INT(tr_run(&p, dir, NULL, cmd, NULL, 60), ==, 0);
    ASSERT_INT(p.exited, ==, plain.exited);
    ASSERT_INT(p.code, ==, plain.code);
    ASSERT_STR(p.out, plain.out);
    ASSERT_CONTAINS(p.err, "cutrace: 1 trace file in ");
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_INT(api_result(&t, "cudaGetDeviceCount"), ==, 0);
    ASSERT_INT(api_result(&t, "cudaSetDevice"), ==, 0);
    if (code >= 0)
        ASSERT_INT(api_result(&t, call), ==, code); /* the call it stopped at, as it failed */
    else
        ASSERT_INT(api_result(&t, "cudaProfilerStart"), ==, 0);
    tr_free(&t);
    char *summary[] = {"summary", dir, NULL}, want[64];
    char *text = tr_analyze(summary);
    ASSERT(text != NULL);
    snprintf(want, sizeof want, ", ended: exit status %d, ", plain.code);
    ASSERT_CONTAINS(text, want);
    free(text);
    ctt_proc_free(&plain);
    ctt_proc_free(&p);
    return 0;
}
