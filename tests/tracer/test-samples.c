/* NVIDIA's cuda-samples, built from ../shared at test time with nvcc, run on the simulated
 * runtime untraced and under cutrace: the same exit status and output (but the lines that print
 * timings), and the trace has the calls the program made, its profiler range included. */
#include "tr.h"

#include <stdlib.h>

/* Builds Samples/0_Introduction/NAME/NAME.cu into build/tests/tracer/NAME; skips the test if
 * nvcc cannot. */
static void sample_build(const char *name, char bin[4096])
{
    char src[4200], inc[4200], rel[256];
    snprintf(src, sizeof src, "%s/Samples/0_Introduction/%s/%s.cu", TR_SAMPLES, name, name);
    snprintf(inc, sizeof inc, "-I%s/Common", TR_SAMPLES);
    snprintf(rel, sizeof rel, "tests/tracer/%s", name);
    ctt_path(bin, rel);
    char *nvcc[] = {TR_NVCC, "-cudart", "shared", "-arch=sm_90", inc, "-o", bin, src, NULL};
    ctt_proc b;
    if (ctt_run(&b, nvcc, NULL, 110) != 0 || !b.exited || b.code != 0)
        ctt_skip("nvcc could not build cuda-samples' program (see ../shared/third_party)");
    ctt_proc_free(&b);
}

/* text without the lines that start with one of the prefixes (timings), malloc'd */
static char *untimed(const char *text, const char *const prefixes[])
{
    char *o = malloc(strlen(text) + 1), *w = o;
    for (const char *l = text; *l;) {
        size_t len = strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n');
        int timed = 0;
        for (size_t i = 0; prefixes[i]; i++)
            timed |= !strncmp(l, prefixes[i], strlen(prefixes[i]));
        if (!timed) {
            memcpy(w, l, len);
            w += len;
        }
        l += len;
    }
    *w = 0;
    return o;
}

/* Runs bin untraced and traced (into dir) with env; the two end alike and print the same but
 * for the timed lines; the traced run's trace is loaded into t. Returns the untraced exit
 * status, or -1 after failing the test. */
static int sample_runs(const char *bin, const char *dir, char *const env[],
                       const char *const timed[], tr_trace *t)
{
    char fake[4096], llp[4200];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *plain_env[8] = {llp};
    for (size_t i = 0; env && env[i] && i < 6; i++)
        plain_env[i + 1] = env[i];
    char *cmd[] = {(char *)bin, NULL};
    ctt_proc plain, p;
    ASSERT_INT(ctt_run(&plain, cmd, plain_env, 60), ==, 0);
    ASSERT_INT(tr_run(&p, dir, NULL, cmd, env, 60), ==, 0);
    ASSERT_INT(p.exited, ==, plain.exited);
    ASSERT_INT(p.code, ==, plain.code);
    char *a = untimed(p.out, timed), *b = untimed(plain.out, timed);
    ASSERT_STR(a, b);
    free(a);
    free(b);
    ASSERT_CONTAINS(p.err, "cutrace: 1 trace file in ");
    ASSERT_INT(tr_load(t, dir), ==, 0);
    ASSERT_INT(t->stats[0].complete, ==, 1);
    int code = plain.code;
    ctt_proc_free(&plain);
    ctt_proc_free(&p);
    return code;
}

/* The profiler range: each runtime call succeeded and made its driver call, inside it. */
static int profiler_range(const tr_trace *t)
{
    static const char *const pairs[][2] = {{"cudaProfilerStart", "cuProfilerStart"},
                                           {"cudaProfilerStop", "cuProfilerStop"}};
    for (size_t k = 0; k < 2; k++) {
        ASSERT_INT(tr_result(t, pairs[k][0]), ==, 0);
        ASSERT_INT(tr_result(t, pairs[k][1]), ==, 0);
        for (size_t i = 0; i < t->n; i++)
            if (t->v[i].r.type == CT_REC_API && !strcmp(t->v[i].name, pairs[k][1])) {
                const tr_rec *parent = tr_api(t, t->v[i].r.u.api.parent);
                ASSERT(parent);
                ASSERT_STR(parent->name, pairs[k][0]);
            }
    }
    return 0;
}

/* matrixMul: its kernel has no host implementation (sample_kernels.c says why), so its result
 * check fails, with and without cutrace alike; up to there every call succeeds. */
TEST_IMPL(cuda_samples_matrixMul)
{
    char bin[4096], dir[4096];
    sample_build("matrixMul", bin);
    snprintf(dir, sizeof dir, "%s/mm", ctt_tmpdir());
    static const char *const timed[] = {"Performance=", NULL};
    tr_trace t;
    int code = sample_runs(bin, dir, NULL, timed, &t);
    ASSERT_INT(code, ==, 1);
    ASSERT_INT(tr_result(&t, "cudaGetDeviceCount"), ==, 0);
    ASSERT_INT(tr_result(&t, "cudaSetDevice"), ==, 0);
    if (profiler_range(&t))
        return 1;
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 301);
    tr_free(&t);
    return 0;
}

/* asyncAPI: one kernel between cudaProfilerStart and Stop, its result checked by the program
 * (exit status 0) with the host implementation of sample_kernels.c. */
TEST_IMPL(cuda_samples_asyncAPI)
{
    char bin[4096], dir[4096], lib[4096], hk[4200];
    sample_build("asyncAPI", bin);
    snprintf(dir, sizeof dir, "%s/async", ctt_tmpdir());
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", ctt_path(lib, "tests/tracer/libsample_kernels.so"));
    char *env[] = {hk, NULL};
    static const char *const timed[] = {"time spent", "CPU executed", NULL};
    tr_trace t;
    ASSERT_INT(sample_runs(bin, dir, env, timed, &t), ==, 0);
    if (profiler_range(&t))
        return 1;
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 1);
    tr_free(&t);
    return 0;
}
