/* NVIDIA's cuda-samples, built from ../shared at test time with nvcc, run on the simulated
 * driver untraced and under cutrace: the same exit status and output (but the lines that print
 * timings), and the trace has the calls the program made, its profiler range included. Each
 * sample runs on the simulated runtime (build/tests/fakecuda/libcudart.so.13, first on
 * LD_LIBRARY_PATH) and on NVIDIA's (TR_NV_CUDART, the toolkit's libcudart.so.13, found on the
 * default library path while LD_LIBRARY_PATH names a directory holding only the simulated
 * libcuda.so.1); the driver's FAKECUDA_CUDART_REPORT proves which one each process mapped. */
#define _GNU_SOURCE
#include "tr.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum { RT_OURS, RT_NVIDIA } sample_rt;

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

/* The LD_LIBRARY_PATH that makes bin load rt's libcudart.so.13 over the simulated driver, and
 * the path that libcudart resolves to, into want (skips the test when NVIDIA's is absent). */
static int runtime_env(sample_rt rt, char llp[4200], char want[PATH_MAX])
{
    char fake[4096], drv[4096], lib[4200];
    if (rt == RT_OURS) {
        snprintf(llp, 4200, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
        ASSERT(realpath(ctt_path(fake, "tests/fakecuda/libcudart.so.13"), want));
        return 0;
    }
    if (!realpath(TR_NV_CUDART, want))
        ctt_skip("NVIDIA's libcudart.so.13 (" TR_NV_CUDART ") is not installed");
    snprintf(drv, sizeof drv, "%s/nvidia-runtime-driver", ctt_tmpdir());
    snprintf(lib, sizeof lib, "%s/libcuda.so.1", drv);
    ASSERT_INT(mkdir(drv, 0755) == 0 || errno == EEXIST, ==, 1);
    ASSERT_INT(symlink(ctt_path(fake, "tests/fakecuda/libcuda.so.1"), lib) == 0 || errno == EEXIST, ==, 1);
    snprintf(llp, 4200, "LD_LIBRARY_PATH=%s", drv);
    return 0;
}

/* Every line of the driver's report ("PID PATH BUILD-ID" per process that mapped a
 * libcudart.so.13) names want; two lines (the untraced and the traced run) at least. */
static int mapped_runtime(const char *report, const char *want)
{
    char *text = ctt_read_file(report, NULL);
    ASSERT(text);
    int lines = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char path[PATH_MAX];
        int pid;
        if (sscanf(l, "%d %4095s", &pid, path) != 2 || strcmp(path, want)) {
            ctt_fail_at(__FILE__, __LINE__, "%s: expected \"PID %s BUILD-ID\", found \"%s\"",
                        report, want, l);
            free(text);
            return 1;
        }
        lines++;
    }
    free(text);
    ASSERT_INT(lines, >=, 2);
    return 0;
}

/* Runs bin on runtime rt untraced and traced (into dir) with env; the two end alike (*code:
 * the untraced exit status) and print the same but for the timed lines; the traced run's trace
 * is loaded into t. Returns 0, or 1 after failing the test. */
static int sample_runs(const char *bin, const char *dir, sample_rt rt, char *const env[],
                       const char *const timed[], int *code, tr_trace *t)
{
    char llp[4200], want[PATH_MAX], report[4200], rep[4300];
    if (runtime_env(rt, llp, want))
        return 1;
    snprintf(report, sizeof report, "%s.cudart", dir);
    snprintf(rep, sizeof rep, "FAKECUDA_CUDART_REPORT=%s", report);
    unlink(report);
    char *all_env[8] = {llp, rep};
    for (size_t i = 0; env && env[i] && i < 5; i++)
        all_env[i + 2] = env[i];
    char *cmd[] = {(char *)bin, NULL};
    ctt_proc plain, p;
    ASSERT_INT(ctt_run(&plain, cmd, all_env, 60), ==, 0);
    ASSERT_INT(tr_run(&p, dir, NULL, cmd, all_env, 60), ==, 0);
    ASSERT_INT(p.exited, ==, plain.exited);
    ASSERT_INT(p.code, ==, plain.code);
    char *a = untimed(p.out, timed), *b = untimed(plain.out, timed);
    ASSERT_STR(a, b);
    free(a);
    free(b);
    ASSERT_CONTAINS(p.err, "cutrace: 1 trace file in ");
    if (mapped_runtime(report, want))
        return 1;
    ASSERT_INT(tr_load(t, dir), ==, 0);
    ASSERT_INT(t->stats[0].complete, ==, 1);
    *code = plain.code;
    ctt_proc_free(&plain);
    ctt_proc_free(&p);
    return 0;
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

/* What a sample does, as its source says. */
typedef struct {
    const char *name;
    const char *const *timed; /* prefixes of the lines that print timings */
    int host_kernels;         /* runs its kernel on libsample_kernels.so */
    int code;                 /* its exit status */
    size_t launches;
} sample;

/* matrixMul: 1 warm-up and 300 timed kernels; its kernel has no host implementation
 * (sample_kernels.c says why), so its result check fails, with and without cutrace alike; up to
 * there every call succeeds. */
static const char *const mm_timed[] = {"Performance=", NULL};
static const sample matrixMul = {"matrixMul", mm_timed, 0, 1, 301};
/* asyncAPI: one kernel between cudaProfilerStart and Stop, its result checked by the program
 * (exit status 0) with the host implementation of sample_kernels.c. */
static const char *const async_timed[] = {"time spent", "CPU executed", NULL};
static const sample asyncAPI = {"asyncAPI", async_timed, 1, 0, 1};

/* Builds and runs s on rt and checks its trace: its profiler range and kernel launches. */
static int sample_trace(const sample *s, sample_rt rt, tr_trace *t)
{
    char bin[4096], dir[4096], lib[4096], hk[4200];
    sample_build(s->name, bin);
    snprintf(dir, sizeof dir, "%s/%s-%s", ctt_tmpdir(), s->name, rt == RT_OURS ? "ours" : "nvidia");
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", ctt_path(lib, "tests/tracer/libsample_kernels.so"));
    char *env[] = {s->host_kernels ? hk : NULL, NULL};
    int code;
    if (sample_runs(bin, dir, rt, env, s->timed, &code, t))
        return 1;
    ASSERT_INT(code, ==, s->code);
    ASSERT_INT(tr_result(t, "cudaGetDeviceCount"), ==, 0);
    ASSERT_INT(tr_result(t, "cudaSetDevice"), ==, 0);
    if (profiler_range(t))
        return 1;
    ASSERT_UINT(tr_count(t, CT_REC_LAUNCH, NULL), ==, s->launches);
    return 0;
}

/* The GPU work of two traces of one sample is the same: kernels by name, copies and sets by
 * operation, direction and bytes, in program order, each with its GPU interval. */
static int same_work(const tr_trace *a, const tr_trace *b)
{
    size_t i = 0, j = 0, n = 0;
    for (;; i++, j++, n++) {
        while (i < a->n && a->v[i].r.type != CT_REC_LAUNCH && a->v[i].r.type != CT_REC_COPY)
            i++;
        while (j < b->n && b->v[j].r.type != CT_REC_LAUNCH && b->v[j].r.type != CT_REC_COPY)
            j++;
        if (i == a->n || j == b->n)
            break;
        const ct_rec *x = &a->v[i].r, *y = &b->v[j].r;
        ASSERT_UINT(y->type, ==, x->type);
        if (x->type == CT_REC_LAUNCH) {
            ASSERT_STR(b->v[j].name, a->v[i].name);
        } else {
            ASSERT_UINT(y->u.copy.op, ==, x->u.copy.op);
            ASSERT_UINT(y->u.copy.dir, ==, x->u.copy.dir);
            ASSERT_UINT(y->u.copy.bytes, ==, x->u.copy.bytes);
        }
    }
    ASSERT_UINT(i, ==, a->n);
    ASSERT_UINT(j, ==, b->n);
    ASSERT_UINT(tr_count(b, CT_REC_GPU, NULL), ==, n);
    ASSERT_UINT(tr_count(a, CT_REC_GPU, NULL), ==, n);
    return 0;
}

/* s on NVIDIA's runtime: it passes as on ours, its cudaProfilerStart/Stop reach the driver
 * (cuProfilerStart/Stop nested in them) and its kernels and copies are traced as on ours. */
static int on_nvidia_runtime(const sample *s)
{
    tr_trace ours, nv;
    if (sample_trace(s, RT_NVIDIA, &nv) || sample_trace(s, RT_OURS, &ours))
        return 1;
    if (same_work(&ours, &nv))
        return 1;
    tr_free(&ours);
    tr_free(&nv);
    return 0;
}

TEST_IMPL(cuda_samples_matrixMul)
{
    tr_trace t;
    if (sample_trace(&matrixMul, RT_OURS, &t))
        return 1;
    tr_free(&t);
    return 0;
}

TEST_IMPL(cuda_samples_asyncAPI)
{
    tr_trace t;
    if (sample_trace(&asyncAPI, RT_OURS, &t))
        return 1;
    tr_free(&t);
    return 0;
}

TEST_IMPL(cuda_samples_matrixMul_nvidia_runtime) { return on_nvidia_runtime(&matrixMul); }

TEST_IMPL(cuda_samples_asyncAPI_nvidia_runtime) { return on_nvidia_runtime(&asyncAPI); }
