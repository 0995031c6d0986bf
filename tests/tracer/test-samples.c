/* NVIDIA's cuda-samples, built from ../shared at test time with nvcc, run on the simulated
 * driver untraced and under cutrace: the same exit status and output (but the lines that print
 * timings), and the trace has the calls the program made, its profiler range included. Each
 * sample runs on the simulated runtime (build/tests/fakecuda/libcudart.so.13, first on
 * LD_LIBRARY_PATH) and on NVIDIA's (TR_NV_CUDART, the toolkit's libcudart.so.13, found on the
 * default library path while LD_LIBRARY_PATH names a directory holding only the simulated
 * libcuda.so.1); the driver's FAKECUDA_CUDART_REPORT proves which one each process mapped. */
#define _GNU_SOURCE
#include "tjson.h"
#include "tr.h"
#include "tr_confine.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* RT_NONE: a driver API program, which maps no libcudart (on the simulated driver) */
typedef enum { RT_OURS, RT_NVIDIA, RT_NONE } sample_rt;

/* Runs cmd (what: its name in a failure), which must exit 0; its output goes to the test's log. */
static int run_ok(char *const cmd[], const char *what, int timeout_s)
{
    ctt_proc c;
    ASSERT_INT(ctt_run(&c, cmd, NULL, timeout_s), ==, 0);
    if (!c.exited || c.code != 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s: expected exit status 0, found %s %d; stderr:\n%s",
                    what, c.exited ? "status" : "signal", c.code, c.err);
        return 1;
    }
    fputs(c.out, stderr);
    ctt_proc_free(&c);
    return 0;
}

/* samples_cache.sh's op ("restore" or "store") on the build directory's samples, out. */
static int samples_cache(const char *op, const char *out)
{
    char *cmd[] = {TR_SRCDIR "/samples_cache.sh", (char *)op, TR_SAMPLES_CACHE, (char *)out,
                   TR_SAMPLES, TR_NVCC, NULL};
    return run_ok(cmd, op[0] == 'r' ? "samples_cache.sh restore" : "samples_cache.sh store", 60);
}

/* Brings build/tests/tracer/samples/TARGET up to date with samples.mk (TARGET "all": every
 * sample, two nvcc at a time; a sample's name: that one, normally found up to date) and puts
 * the program's path in bin (TARGET a sample), after samples_cache.sh restored an earlier clone's
 * build if there is one. Skips the test only when nvcc is not installed; a sample that does not
 * build fails it. */
static int samples_make(const char *target, char bin[4096])
{
    char out[4096], o[4200], s[4200], n[4200];
    if (access(TR_NVCC, X_OK) != 0)
        ctt_skip("nvcc (" TR_NVCC ") is not installed: cuda-samples cannot be built");
    ctt_path(out, "tests/tracer/samples");
    if (samples_cache("restore", out))
        return 1;
    snprintf(o, sizeof o, "OUT=%s", out);
    snprintf(s, sizeof s, "SAMPLES=%s", TR_SAMPLES);
    snprintf(n, sizeof n, "NVCC=%s", TR_NVCC);
    char *make[] = {"make", "-s", "-j2", "-f", TR_SRCDIR "/samples.mk", o, s, n, (char *)target, NULL};
    char what[128];
    snprintf(what, sizeof what, "make -f samples.mk %s", target);
    if (run_ok(make, what, 110))
        return 1;
    if (bin)
        ASSERT_INT(snprintf(bin, 4096, "%s/%s/%s", out, target, target), <, 4096);
    return 0;
}

/* text without the lines that start with one of the prefixes (timings), or, for a prefix
 * "*REST", contain REST (a rate printed after its number), malloc'd */
static char *untimed(const char *text, const char *const prefixes[])
{
    char *o = malloc(strlen(text) + 1), *w = o;
    for (const char *l = text; *l;) {
        size_t len = strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n');
        int timed = 0;
        for (size_t i = 0; prefixes[i]; i++)
            timed |= prefixes[i][0] == '*' ? memmem(l, len, prefixes[i] + 1, strlen(prefixes[i] + 1)) != NULL
                                           : !strncmp(l, prefixes[i], strlen(prefixes[i]));
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
 * the path that libcudart resolves to, into want ("" for RT_NONE; skips the test when NVIDIA's
 * is absent). */
static int runtime_env(sample_rt rt, char llp[4200], char want[PATH_MAX])
{
    char fake[4096], drv[4096], lib[4200];
    if (rt != RT_NVIDIA) {
        snprintf(llp, 4200, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
        want[0] = 0;
        if (rt == RT_OURS)
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
 * libcudart.so.13) names want; two lines (the untraced and the traced run) at least; none if
 * want is "". */
static int mapped_runtime(const char *report, const char *want)
{
    char *text = ctt_read_file(report, NULL);
    if (!text && !*want)
        return 0;
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
    ASSERT_INT(lines, >=, *want ? 2 : 0);
    return 0;
}

/* Runs cmd on runtime rt untraced and traced (into dir) with env; the two end alike (*code:
 * the untraced exit status) and print the same but for the timed lines; the traced run's trace
 * is loaded into t; *out and *err (if not NULL) get the untraced run's stdout and stderr,
 * malloc'd. Returns 0, or 1
 * after failing the test. */
static int sample_runs(char *const cmd[], const char *dir, sample_rt rt, char *const env[],
                       const char *const timed[], int *code, tr_trace *t, char **out, char **err)
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
    if (out) {
        *out = plain.out;
        plain.out = NULL;
    }
    if (err) {
        *err = plain.err;
        plain.err = NULL;
    }
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

/* matrixMul: 1 warm-up and 300 timed kernels, run here without libsample_kernels.so (its 301
 * products take the host seconds; cuda_samples_intro_matrixMul checks the result), so its
 * result check fails, with and without cutrace alike; up to there every call succeeds. */
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
    if (samples_make(s->name, bin))
        return 1;
    snprintf(dir, sizeof dir, "%s/%s-%s", ctt_tmpdir(), s->name, rt == RT_OURS ? "ours" : "nvidia");
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", ctt_path(lib, "tests/tracer/libsample_kernels.so"));
    char *env[] = {s->host_kernels ? hk : NULL, NULL};
    int code;
    char *cmd[] = {bin, NULL};
    if (sample_runs(cmd, dir, rt, env, s->timed, &code, t, NULL, NULL))
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

/* ---- Samples/0_Introduction, all of it ------------------------------------------------------
 * Every sample of the directory is in intro[] (in scope) or named "out" in samples.txt with the
 * reason. Each in-scope sample runs from a directory holding links to its sources and data and
 * to the fatbin it loads (samples.mk), as its own directory would, with the host kernels of
 * libsample_kernels.so, untraced and traced: the same exit status and output but for its timed
 * lines. It must exit 0 unless samples.txt says why not: "needs F[,F...]" (it stops at these
 * unsimulated functions, which the untraced run must report with FAKECUDA_TRACE_UNSUPPORTED) or
 * "fails" (its result check needs what the simulation does not do). A listed sample that exits
 * 0 fails its test until samples.txt is updated, so the list stays true: such a sample is
 * expected to pass once its functions are simulated, and then it is checked as a passing one.
 * Its trace: every kernel launched is one of the sample's (names in intro[]), a passing
 * sample's kernels are exactly those of its source (name and count), and the launches, copies
 * and sets that succeeded are as many as the simulation executed (FAKECUDA_TRUTH) but those
 * still running at exit, whose GPU timings the trace counts lost. */
typedef struct {
    const char *name;
    const char *kernels; /* "SYMBOL*COUNT ..." launched by a run that passes, from its source */
    const char *timed[12]; /* prefixes of the lines that differ from run to run */
} intro_sample;

/* Samples run without libsample_kernels.so: their kernels have the names of other samples'
 * kernels there (simplePrintf's testKernel(int), simpleAtomicIntrinsics_nvrtc's testKernel),
 * which compute something else. */
static int bare(const char *name)
{
    return !strcmp(name, "simpleAssert") || !strcmp(name, "simpleAssert_nvrtc");
}


/* Samples passing with no host implementation of some kernel, whose output then differs from a
 * GPU's: clock and clock_nvrtc (timedReduction reads the SM clock: "Average clocks/block =
 * 0.000000"). */
static const intro_sample intro[] = {
    {"asyncAPI", "_Z16increment_kernelPii*1", {"time spent", "CPU executed"}},
    {"clock", "_Z14timedReductionPKfPfPl*1", {0}},
    {"clock_nvrtc", "timedReduction*1", {0}},
    {"cudaOpenMP", "_Z17kernelAddConstantPii*1", {0}},
    {"fp16ScalarProduct", "_Z26scalarProductKernel_nativePK7__half2S1_Pfm*1 "
                          "_Z30scalarProductKernel_intrinsicsPK7__half2S1_Pfm*1",
     {"Result native", "Result intrinsics"}}, /* its input is seeded by time(NULL) */
    {"matrixMul", "_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii*301", {"Performance="}},
    {"matrixMulDrv", "matrixMul_bs32_64bit*1", {"Processing time"}},
    {"matrixMulDynlinkJIT", "matrixMul_bs32_32bit*1", {0}},
    {"matrixMul_nvrtc", "matrixMulCUDA_block32*300", {0}},
    {"mergeSort", "_Z21mergeSortSharedKernelILj1EEvPjS0_S0_S0_j*1 _Z25generateSampleRanksKernelILj1EEvPjS0_S0_jjj*12 "
                  "_Z26mergeRanksAndIndicesKernelPjS_jjj*24 _Z30mergeElementaryIntervalsKernelILj1EEvPjS0_S0_S0_S0_S0_jj*12",
     {"Time: "}},
    {"simpleAWBarrier", "_Z28normVecByDotProductAWBarrierPfS_Pdi*1", {0}},
    {"simpleAssert", "_Z10testKerneli*1", {0}},
    {"simpleAssert_nvrtc", "testKernel*1", {0}},
    {"simpleAtomicIntrinsics", "_Z10testKernelPi*1", {"Processing time"}},
    {"simpleAtomicIntrinsics_nvrtc", "testKernel*1", {"Processing time"}},
    {"simpleAttributes", "_Z20kernCacheSegmentTestPiiS_ii*1", {"Processing time"}},
    {"simpleCallback", "_Z9incKernelPii*8", {0}},
    {"simpleCooperativeGroups", "_Z8cgkernelv*1", {0}},
    {"simpleCubemapTexture", "_Z15transformKernelPfiy*2", {"Processing time", "*Mtexlookups/sec"}},
    {"simpleDrvRuntime", "VecAdd_kernel*1", {0}},
    {"simpleHyperQ", "_Z8kernel_APll*32 _Z8kernel_BPll*32 _Z3sumPli*1", {"Measured time"}},
    {"simpleLayeredTexture", "_Z15transformKernelPfiiiy*6", {"Processing time", "*Mtexlookups/sec"}},
    {"simpleMultiCopy", "_Z9incKernelPiS_ii*22",
     {" Memcpy", " Kernel", "No overlap", "Compute can overlap", " Avg. time", " Avg. speedup",
      " Fully serialized", " Overlapped using"}},
    {"simpleMultiGPU", "_Z12reduceKernelPfS_i*1", {"  GPU Processing time"}},
    {"simpleOccupancy", "_Z6squarePii*2", {"Elapsed time"}},
    {"simplePitchLinearTexture", "_Z16shiftPitchLinearPfiiiiiy*100 _Z10shiftArrayPfiiiiiy*100", {"Bandwidth (GB/s)", "Texture fetch rate"}},
    {"simplePrintf", "_Z10testKerneli*1", {0}},
    {"simpleStreams", "_Z10init_arrayPiS_i*501", {"memcopy:", "kernel:", "non-streamed:", "4 streams:"}},
    {"simpleSurfaceWrite", "_Z18surfaceWriteKernelPfiiy*1 _Z15transformKernelPfiify*2", {"Processing time"}},
    {"simpleTemplates", "_Z10testKernelIfEvPT_S1_*1 _Z10testKernelIiEvPT_S1_*1", {"Processing time"}},
    {"simpleTexture", "_Z15transformKernelPfiify*2", {"Processing time"}},
    {"simpleTextureDrv", "transformKernel*2", {"Processing time"}},
    {"simpleVoteIntrinsics", "_Z14VoteAnyKernel1PjS_i*1 _Z14VoteAllKernel2PjS_i*1 _Z14VoteAnyKernel3Pbi*1", {0}},
    {"simpleZeroCopy", "_Z12vectorAddGPUPfS_S_i*1", {0}},
    {"systemWideAtomics", "_Z12atomicKernelPi*1", {0}},
    {"template", "_Z10testKernelPfS_*1", {"Processing time"}},
    {"vectorAdd", "_Z9vectorAddPKfS0_Pfi*1", {0}},
    {"vectorAddDrv", "VecAdd_kernel*1", {0}},
    {"vectorAddMMAP", "VecAdd_kernel*1", {0}},
    {"vectorAdd_nvrtc", "vectorAdd*1", {0}},
};

/* The line a sample prints when its check passes, for one whose exit status does not say
 * (fp16ScalarProduct compares its two kernels' results, prints PASSED or FAILED, exits 0); NULL
 * for the others. */
static const char *passed_line(const char *name)
{
    return !strcmp(name, "fp16ScalarProduct") ? "&&&& fp16ScalarProduct PASSED\n" : NULL;
}

/* The samples.txt line of name ("NAME STATE REST"): state and rest into the buffers; 0 if none. */
static int listed(const char *name, char state[32], char rest[512])
{
    char *text = ctt_read_file(TR_SRCDIR "/samples.txt", NULL), *save = NULL;
    int found = 0;
    for (char *l = text ? strtok_r(text, "\n", &save) : NULL; l && !found; l = strtok_r(NULL, "\n", &save)) {
        char n[128];
        int off = 0;
        if (l[0] != '#' && sscanf(l, "%127s %31s %n", n, state, &off) == 2 && !strcmp(n, name)) {
            snprintf(rest, 512, "%s", l + off);
            found = 1;
        }
    }
    free(text);
    return found;
}

static const intro_sample *intro_find(const char *name)
{
    for (size_t i = 0; i < sizeof intro / sizeof intro[0]; i++)
        if (!strcmp(intro[i].name, name))
            return &intro[i];
    return NULL;
}

/* links dir/NAME to each regular file of src (or, with only, to src/only) */
static int link_files(const char *src, const char *dir, const char *only)
{
    DIR *d = opendir(src);
    ASSERT(d);
    for (struct dirent *e; (e = readdir(d));) {
        char from[4200], to[4200];
        struct stat st;
        snprintf(from, sizeof from, "%s/%s", src, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || (only && strcmp(e->d_name, only)) || stat(from, &st))
            continue;
        if ((S_ISREG(st.st_mode) || only) && symlink(from, to)) {
            ctt_fail_at(__FILE__, __LINE__, "symlink %s %s: %s", from, to, strerror(errno));
            closedir(d);
            return 1;
        }
    }
    closedir(d);
    return 0;
}

/* The sample's working directory, as in its source tree: its files, data/ (a directory of
 * links: some samples write their output images beside the input), the fatbin samples.mk built,
 * and the cooperative groups headers (and theirs) matrixMul_nvrtc's NVRTC compile looks for
 * there. */
static int intro_workdir(const char *name, char dir[4096])
{
    char src[4200], data[4200], built[4200];
    snprintf(dir, 4096, "%s/run", ctt_tmpdir());
    snprintf(src, sizeof src, "%s/Samples/0_Introduction/%s", TR_SAMPLES, name);
    snprintf(data, sizeof data, "%s/data", dir);
    ASSERT_INT(mkdir(dir, 0755), ==, 0);
    ASSERT_INT(mkdir(data, 0755), ==, 0);
    snprintf(built, sizeof built, "%s/tests/tracer/samples/%s", ctt_build(), name);
    static const char *const headers[][2] = {{TR_CUDA_INC, "cooperative_groups.h"},
                                             {TR_CUDA_INC, "cooperative_groups"},
                                             {TR_CUDA_INC, "nv"},
                                             {TR_CUDA_INC "/cccl", "cuda"}};
    if (link_files(src, dir, NULL) || link_files(built, dir, NULL))
        return 1;
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        if (link_files(headers[i][0], dir, headers[i][1]))
            return 1;
    snprintf(src + strlen(src), sizeof src - strlen(src), "/data");
    struct stat st;
    if (!stat(src, &st) && link_files(src, data, NULL))
        return 1;
    return 0;
}

/* Kernels, copies and sets of process pid in the simulation's truth file. */
static int truth_counts(const char *truth, uint32_t pid, size_t *kernels, size_t *copies)
{
    FILE *f = fopen(truth, "r");
    ASSERT(f);
    unsigned p;
    char kind[8];
    *kernels = *copies = 0;
    while (fscanf(f, "%u %*u %*u %7s %*u %*d %*d %*d %*d", &p, kind) == 2)
        if (p == pid)
            *(strcmp(kind, "kernel") ? copies : kernels) += 1;
    fclose(f);
    return 0;
}

/* The next "SYMBOL*COUNT" of a kernel spec, *k moved past it; 0 at its end. */
static int spec_next(const char **k, char sym[256], unsigned long *count)
{
    int len;
    if (sscanf(*k, "%255[^*]*%lu%n", sym, count, &len) != 2)
        return 0;
    *k += len + strspn(*k + len, " ");
    return 1;
}

/* COUNT of symbol in spec, or -1 if spec does not name it */
static long spec_count(const char *spec, const char *symbol)
{
    char sym[256];
    unsigned long count;
    while (spec_next(&spec, sym, &count))
        if (!strcmp(sym, symbol))
            return (long)count;
    return -1;
}

/* The trace's kernels against the sample's: each launched one is in its spec; with exact, each
 * symbol of the spec is launched COUNT times. Launches and copies that succeeded are those the
 * simulation executed. */
static int intro_work(const intro_sample *s, const tr_trace *t, int exact, const char *truth)
{
    size_t launched = 0, copied = 0, want = 0;
    for (size_t i = 0; i < t->n; i++) {
        const ct_rec *r = &t->v[i].r;
        if (r->type != CT_REC_LAUNCH && r->type != CT_REC_COPY)
            continue;
        const tr_rec *api = tr_api(t, r->type == CT_REC_LAUNCH ? r->u.launch.corr : r->u.copy.corr);
        ASSERT(api);
        if (api->r.u.api.result != 0)
            continue;
        if (r->type == CT_REC_COPY) {
            copied++;
            continue;
        }
        launched++;
        if (spec_count(s->kernels, t->v[i].symbol) < 0) {
            ctt_fail_at(__FILE__, __LINE__, "%s: launched kernel %s is not one of the sample's "
                        "(%s)", s->name, t->v[i].symbol, s->kernels);
            return 1;
        }
    }
    char sym[256];
    unsigned long count;
    for (const char *k = s->kernels; exact && spec_next(&k, sym, &count);) {
        size_t got = 0;
        for (size_t i = 0; i < t->n; i++)
            got += t->v[i].r.type == CT_REC_LAUNCH && !strcmp(t->v[i].symbol, sym);
        if (got != count) {
            ctt_fail_at(__FILE__, __LINE__, "%s: kernel %s: expected %lu launches, found %zu",
                        s->name, sym, count, got);
            return 1;
        }
        want += count;
    }
    if (exact)
        ASSERT_UINT(launched, ==, want);
    size_t true_kernels, true_copies;
    if (truth_counts(truth, t->pids[0], &true_kernels, &true_copies))
        return 1;
    /* an operation still running when the process ended is in neither the truth nor the
     * trace's GPU timings (counted lost): a sample may exit without synchronizing */
    ASSERT_UINT(true_kernels, <=, launched);
    ASSERT_UINT(true_copies, <=, copied);
    ASSERT_UINT(launched - true_kernels + copied - true_copies, <=, t->stats[0].lost);
    return 0;
}

static int intro_run(const char *name)
{
    const intro_sample *s = intro_find(name);
    ASSERT(s);
    char state[32] = "", rest[512] = "", bin[4096], dir[4096], lib[4096], out[4200];
    char hk[4200], truth[4200], tenv[4300];
    int is_listed = listed(name, state, rest);
    if (samples_make(name, bin) || intro_workdir(name, dir))
        return 1;
    ASSERT_INT(chdir(dir), ==, 0);
    snprintf(out, sizeof out, "%s/trace", ctt_tmpdir());
    snprintf(truth, sizeof truth, "%s/truth", ctt_tmpdir());
    snprintf(tenv, sizeof tenv, "FAKECUDA_TRUTH=%s", truth);
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", ctt_path(lib, "tests/tracer/libsample_kernels.so"));
    char *env[] = {bare(name) ? "FAKECUDA_HOST_KERNELS=" : hk, "FAKECUDA_TRACE_UNSUPPORTED=1", tenv, NULL};
    int code;
    char *err = NULL, *out_text = NULL;
    tr_trace t;
    char *cmd[] = {bin, NULL};
    /* in a cgroup favoured over other work (tr_confine.h), where one can be made: the kernels
     * run on the host, and simplePitchLinearTexture's 200 launches outlasted the time limit
     * beside two CPU-bound processes */
    tr_cgroup g;
    tr_cgroup_hasten(&g);
    int failed = sample_runs(cmd, out, RT_OURS, env, s->timed, &code, &t, &out_text, &err);
    tr_cgroup_leave(&g);
    if (failed)
        return 1;
    if (!is_listed && code != 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s: expected exit status 0 (samples.txt does not list "
                    "it), found %d; stderr:\n%s", name, code, err);
        return 1;
    }
    if (!is_listed && passed_line(name))
        ASSERT_CONTAINS(out_text, passed_line(name));
    if (is_listed && code == 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s: samples.txt says \"%s %s\" but it passes now: "
                    "remove its line", name, state, rest);
        return 1;
    }
    if (!strcmp(state, "needs")) {
        char fns[512];
        ASSERT_INT(sscanf(rest, "%511[^ ;]", fns), ==, 1);
        for (char *save = NULL, *f = strtok_r(fns, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
            char says[600];
            snprintf(says, sizeof says, ": %s is not simulated", f);
            ASSERT_CONTAINS(err, says);
        }
    } else if (is_listed)
        ASSERT_STR(state, "fails");
    if (intro_work(s, &t, !is_listed, truth))
        return 1;
    free(out_text);
    free(err);
    tr_free(&t);
    return 0;
}

/* Builds half the samples (two at a time; samples.mk's "half"), so that each half of the build
 * stays well within a test's time limit. */
TEST_IMPL(cuda_samples_intro_build_half) { return samples_make("half", NULL); }

/* Builds every sample not built yet (two at a time), and checks the lists: each directory of
 * 0_Introduction is in intro[] or listed "out" in samples.txt with a reason, never both. */
TEST_IMPL(cuda_samples_intro_build)
{
    char built[4096];
    if (samples_make("all", NULL) || samples_cache("store", ctt_path(built, "tests/tracer/samples")))
        return 1;
    char *list = ctt_read_file(TR_SRCDIR "/samples.txt", NULL);
    ASSERT(list);
    free(list);
    char src[4200], state[32], rest[512];
    snprintf(src, sizeof src, "%s/Samples/0_Introduction", TR_SAMPLES);
    DIR *d = opendir(src);
    ASSERT(d);
    size_t in = 0, out = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR)
            continue;
        int is_out = listed(e->d_name, state, rest) && !strcmp(state, "out");
        if (is_out == !!intro_find(e->d_name)) {
            ctt_fail_at(__FILE__, __LINE__, "%s: expected in test-samples.c's intro[] or \"out\" "
                        "in samples.txt, found %s", e->d_name, is_out ? "both" : "neither");
            closedir(d);
            return 1;
        }
        if (is_out)
            ASSERT(strlen(rest) > 0);
        in += !is_out;
        out += is_out;
    }
    closedir(d);
    ASSERT_UINT(in, ==, sizeof intro / sizeof intro[0]);
    return 0;
}

#define INTRO_TEST(name) TEST_IMPL(cuda_samples_intro_##name) { return intro_run(#name); }
INTRO_TEST(asyncAPI)
INTRO_TEST(clock)
INTRO_TEST(clock_nvrtc)
INTRO_TEST(cudaOpenMP)
INTRO_TEST(fp16ScalarProduct)
INTRO_TEST(matrixMul)
INTRO_TEST(matrixMulDrv)
INTRO_TEST(matrixMulDynlinkJIT)
INTRO_TEST(matrixMul_nvrtc)
INTRO_TEST(mergeSort)
INTRO_TEST(simpleAWBarrier)
INTRO_TEST(simpleAssert)
INTRO_TEST(simpleAssert_nvrtc)
INTRO_TEST(simpleAtomicIntrinsics)
INTRO_TEST(simpleAtomicIntrinsics_nvrtc)
INTRO_TEST(simpleAttributes)
INTRO_TEST(simpleCallback)
INTRO_TEST(simpleCooperativeGroups)
INTRO_TEST(simpleCubemapTexture)
INTRO_TEST(simpleDrvRuntime)
INTRO_TEST(simpleHyperQ)
INTRO_TEST(simpleLayeredTexture)
INTRO_TEST(simpleMultiCopy)
INTRO_TEST(simpleMultiGPU)

/* simpleMultiCopy times itself with events (cudaEventRecord around each pass,
 * cudaEventSynchronize, cudaEventElapsedTime), as benchmarks do: its event synchronizations are
 * how it reads its own timings, not a defect to fix (excessive-sync once claimed 65% of its
 * window for them, its fix the call it flagged). Whatever else is found, no [high] sync finding,
 * and the time after those synchronizations is said and left out. */
TEST_IMPL(cuda_samples_simpleMultiCopy_own_timing_is_no_defect)
{
    if (intro_run("simpleMultiCopy"))
        return 1;
    char out[4200], e[256];
    snprintf(out, sizeof out, "%s/trace", ctt_tmpdir());
    char *args[] = {"summary", "--json", "--min-saving", "0", out, NULL};
    char *text = tr_analyze(args);
    ASSERT(text);
    tj *s = tj_parse(text, e, sizeof e);
    free(text);
    ASSERT(s);
    const tj *dg = tj_get(s, "diagnoses");
    int found = 0;
    for (size_t i = 0; dg && i < dg->n; i++) {
        const tj *d = dg->v[i];
        if (strcmp(tj_str(d, "id"), "excessive-sync"))
            continue;
        found = 1;
        ASSERT(strcmp(tj_str(d, "severity"), "high"));
        ASSERT(tj_num(d, "evidence.idle_after_timing_syncs_ns") > 0);
        ASSERT(tj_num(d, "evidence.idle_after_timing_syncs_ns") > tj_num(d, "estimated_saving_ns"));
    }
    ASSERT(found);
    tj_free(s);
    return 0;
}
INTRO_TEST(simpleOccupancy)
INTRO_TEST(simplePitchLinearTexture)
INTRO_TEST(simplePrintf)
INTRO_TEST(simpleStreams)
INTRO_TEST(simpleSurfaceWrite)
INTRO_TEST(simpleTemplates)
INTRO_TEST(simpleTexture)
INTRO_TEST(simpleTextureDrv)
INTRO_TEST(simpleVoteIntrinsics)
INTRO_TEST(simpleZeroCopy)
INTRO_TEST(systemWideAtomics)
INTRO_TEST(template)
INTRO_TEST(vectorAdd)
INTRO_TEST(vectorAddDrv)
INTRO_TEST(vectorAddMMAP)
INTRO_TEST(vectorAdd_nvrtc)

/* NVIDIA's NVRTC compiles vectorAdd_nvrtc's kernel source to PTX (nvrtc_ptx.c), the simulated
 * driver's loader takes it and runs the kernel by its name (its host implementation): the
 * program's own check passes untraced and traced alike, and the trace has the kernel found in
 * the PTX module and its one launch, named. */
TEST_IMPL(cuda_samples_nvrtc_ptx)
{
    char bin[4096], dir[4096], lib[4096], hk[4200], src[4200];
    if (access(ctt_path(bin, "tests/tracer/nvrtc_ptx"), X_OK) != 0)
        ctt_skip("NVRTC (libnvrtc.so in the CUDA toolkit) is not installed: nvrtc_ptx was not built");
    snprintf(src, sizeof src, "%s/Samples/0_Introduction/vectorAdd_nvrtc/vectorAdd_kernel.cu", TR_SAMPLES);
    snprintf(dir, sizeof dir, "%s/trace", ctt_tmpdir());
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", ctt_path(lib, "tests/tracer/libsample_kernels.so"));
    char *cmd[] = {bin, src, NULL}, *env[] = {hk, NULL};
    static const char *const untimed_all[] = {NULL};
    int code;
    tr_trace t;
    if (sample_runs(cmd, dir, RT_NONE, env, untimed_all, &code, &t, NULL, NULL))
        return 1;
    ASSERT_INT(code, ==, 0);
    ASSERT_INT(tr_result(&t, "cuModuleGetFunction"), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, "vectorAdd"), ==, 1);
    tr_free(&t);
    return 0;
}
