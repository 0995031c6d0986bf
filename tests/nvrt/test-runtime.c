/* Runtime workloads (tests/workloads) traced by cutrace twice, over the simulated driver: on
 * the simulated runtime and on NVIDIA's own libcudart.so.13. Each run proves which runtime it
 * had (nv_trace), each program checks its own results, and the two summaries must count the
 * same kernels, copies, allocations and synchronizations. */
#include "nv.h"
#include "tr.h"

#include <limits.h>
#include <stdlib.h>

/* Traces prog args on both runtimes; both must exit 0 with `ok` in their output, and every
 * process's trace must name the runtime it ran (its SHLIB record: the path the simulated driver
 * also reported, nv_trace). Returns the two summaries in s[0] (ours) and s[1] (NVIDIA's). */
static int both(const char *name, const char *prog, const char *const args[], const char *ok,
                tj *s[2])
{
    static const nv_runtime rts[2] = {NV_OURS, NV_NVIDIA};
    for (int i = 0; i < 2; i++) {
        char dir[4096], sub[256];
        snprintf(sub, sizeof sub, "%s-%s", name, i ? "nvidia" : "ours");
        ctt_proc p;
        if (nv_trace(&p, dir, sub, rts[i], prog, args, NULL) != 0)
            return 1;
        if (!p.exited || p.code != 0)
            fprintf(stderr, "%s on %s: %s", prog, sub, p.err);
        ASSERT_INT(p.exited, ==, 1);
        ASSERT_INT(p.code, ==, 0);
        ASSERT_CONTAINS(p.out, ok);
        ctt_proc_free(&p);
        s[i] = an_summary(dir, NULL);
        ASSERT(s[i]);
        ASSERT_INT(tj_num(s[i], "processes.0.complete"), ==, 1);
        char want[PATH_MAX], ours[4096];
        ASSERT(realpath(rts[i] == NV_NVIDIA ? NV_CUDART
                                            : ctt_path(ours, "tests/fakecuda/libcudart.so.13"),
                        want));
        /* fork_exec's job children never call the runtime: each process that did names it */
        const tj *procs = tj_get(s[i], "processes");
        size_t named = 0;
        for (size_t k = 0; k < procs->n; k++) {
            const tj *rt = tj_find(tj_get(procs->v[k], "libraries"), "kind", "cudart");
            if (rt)
                ASSERT_STR(tj_str(rt, "path"), want);
            named += rt != NULL;
        }
        ASSERT(named >= 1);
    }
    return 0;
}

/* In the trace of NVIDIA's run of `name` (both() wrote it): every driver call named drv was
 * made inside a runtime call named rt (its parent), and there are n of each. */
static int inside(const char *name, const char *rt, const char *drv, size_t n)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s-nvidia", ctt_tmpdir(), name);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_API, rt), ==, n);
    ASSERT_UINT(tr_count(&t, CT_REC_API, drv), ==, n);
    for (size_t i = 0; i < t.n; i++) {
        if (t.v[i].r.type != CT_REC_API || strcmp(t.v[i].name, drv))
            continue;
        const tr_rec *parent = tr_api(&t, t.v[i].r.u.api.parent);
        if (!parent || strcmp(parent->name, rt)) {
            ctt_fail_at(__FILE__, __LINE__, "%s: expected inside %s, found inside %s", drv, rt,
                        parent ? parent->name : "no call");
            tr_free(&t);
            return 1;
        }
    }
    tr_free(&t);
    return 0;
}

/* 8 iterations of 33 kernels, a 4 MiB pageable batch and a 4-byte loss each; every loss checked
 * against the CPU (--verify, through the host kernels). */
TEST_IMPL(nvidia_runtime_train_loop)
{
    const char *args[] = {"--iters", "8", "--loader-ms", "1", "--verify", NULL};
    tj *s[2];
    if (both("train_loop", "tests/workloads/train_loop", args, "train_loop: verify=ok", s))
        return 1;
    if (nv_same_counts(s[0], s[1], 1))
        return 1;
    const tj *k = tj_get(s[1], "kernels");
    ASSERT_INT(tj_num(tj_find(k, "name", "reduce_batch"), "instances"), ==, 8);
    ASSERT_INT(tj_num(tj_find(k, "name", "void nn::forward_linear<float>(float*, float const*, float const*, int)"), "instances"), ==, 48);
    ASSERT_INT(tj_num(tj_find(tj_get(s[1], "api"), "name", "cudaStreamSynchronize"), "calls"), ==, 8);
    ASSERT_INT(tj_num(s[1], "vram.0.allocations"), ==, 7);
    ASSERT_INT(tj_num(s[1], "vram.0.peak_bytes"), ==, (26624 + 1) * 4 + 4194304);
    tj_free(s[0]);
    tj_free(s[1]);
    /* nvcc 13's launch stubs call the runtime's __cudaLaunchKernel (the summary shows it as
     * cudaLaunchKernel); NVIDIA's runtime launches each with cuLaunchKernel */
    return inside("train_loop", "__cudaLaunchKernel", "cuLaunchKernel", 8 * 33);
}

/* Pinned batches (cudaMallocHost) prefetched on a second stream, ordered by events. */
TEST_IMPL(nvidia_runtime_train_loop_pinned)
{
    const char *args[] = {"--iters", "6", "--loader-ms", "1", "--memory", "pinned", "--prefetch",
                          "--verify", NULL};
    tj *s[2];
    if (both("train_loop_pinned", "tests/workloads/train_loop", args, "train_loop: verify=ok", s))
        return 1;
    if (nv_same_counts(s[0], s[1], 1))
        return 1;
    /* the batches from pinned memory (the weights' one copy is pageable) */
    const tj *c = tj_get(s[1], "copies"), *pinned = NULL;
    for (size_t i = 0; c && i < c->n; i++)
        if (!strcmp(tj_str(c->v[i], "op"), "H2D") && !strcmp(tj_str(c->v[i], "host_kind"), "pinned"))
            pinned = c->v[i];
    ASSERT(pinned);
    ASSERT_INT(tj_num(pinned, "count"), ==, 6);
    ASSERT_INT(tj_num(pinned, "bytes"), ==, 6 * 4194304);
    const tj *api = tj_get(s[1], "api");
    ASSERT_INT(tj_num(tj_find(api, "name", "cudaStreamWaitEvent"), "calls"), ==, 11);
    ASSERT_INT(tj_num(tj_find(api, "name", "cuStreamWaitEvent"), "calls"), ==, 11);
    /* two batch buffers and the loss, each with the driver call inside */
    ASSERT_INT(tj_num(tj_find(api, "name", "cudaMallocHost"), "calls"), ==, 3);
    ASSERT_INT(tj_num(tj_find(api, "name", "cuMemHostAlloc"), "calls"), ==, 3);
    tj_free(s[0]);
    tj_free(s[1]);
    return 0;
}

/* 8 threads, each on its own non-blocking stream, results checked bit for bit. */
TEST_IMPL(nvidia_runtime_threads)
{
    tj *s[2];
    if (both("threads", "tests/workloads/threads", NULL, "threads: totals h2d=80 d2h=80 h2d_bytes=20971520 kernels=320 stream_syncs=80", s))
        return 1;
    /* every thread holds its buffers at once: the peak is the same on both runtimes */
    if (nv_same_counts(s[0], s[1], 1))
        return 1;
    ASSERT_INT(tj_num(tj_find(tj_get(s[1], "api"), "name", "cudaStreamSynchronize"), "calls"), ==, 80);
    tj_free(s[0]);
    tj_free(s[1]);
    return 0;
}

/* Children forked before CUDA starts each use it; one execs train_loop; every process is
 * traced, and the report names the runtime of each. */
TEST_IMPL(nvidia_runtime_fork_exec)
{
    tj *s[2];
    if (both("fork_exec", "tests/workloads/fork_exec", NULL, "fork_exec: children=4 job_children=2", s))
        return 1;
    ASSERT_UINT(tj_len(s[1], "processes"), ==, tj_len(s[0], "processes"));
    ASSERT(tj_len(s[1], "processes") >= 4);
    if (nv_same_counts(s[0], s[1], 1))
        return 1;
    tj_free(s[0]);
    tj_free(s[1]);
    return 0;
}

/* A C program on the runtime: an exact peak of 12079607866 bytes and one deliberate OOM. */
TEST_IMPL(nvidia_runtime_vram_peak)
{
    tj *s[2];
    if (both("vram_peak", "tests/workloads/vram_peak", NULL,
             "vram_peak: allocs=6 failed_allocs=1 frees=6 peak=12079607866", s))
        return 1;
    if (nv_same_counts(s[0], s[1], 1))
        return 1;
    ASSERT_INT(tj_num(s[1], "vram.0.peak_bytes"), ==, 12079607866LL);
    ASSERT_INT(tj_num(s[1], "vram.0.failed_count"), ==, 1);
    tj_free(s[0]);
    tj_free(s[1]);
    return 0;
}

/* cuBLAS from the toolkit, on NVIDIA's runtime, on the simulated driver: cublasCreate, an
 * SGEMM, a half-precision GEMM-Ex (through cuBLASLt, which needs the 1734dc26 table) and a
 * strided batched SGEMM succeed, and each GEMM's kernel is traced under cuBLAS's own name
 * (loaded through cuLibraryLoadData/cuLibraryGetKernel, launched with cuLaunchKernelEx). The
 * simulation has no host implementation of cuBLAS's kernels, so C is not computed: the
 * program's comparison with the CPU is printed, not asserted. */
static int cublas_gemms(const char *const env[])
{
    char dir[4096];
    ctt_proc p;
    if (nv_trace(&p, dir, "cublas", NV_NVIDIA, "tests/nvrt/cublas_gemm", NULL, env) != 0)
        return 1;
    if (!p.exited || p.code != 0)
        fprintf(stderr, "cublas_gemm: %s%s", p.out, p.err);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "cublas_gemm: create=0 malloc=0 h2d=0 gemm=0 d2h=0 sync=0 gemm_ex=0 batched=0 destroy=0\n");
    ctt_proc_free(&p);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *k = tj_get(s, "kernels");
    ASSERT(k);
    double launches = 0;
    int half = 0;
    for (size_t i = 0; i < k->n; i++) {
        const char *name = tj_str(k->v[i], "name");
        /* cuBLAS's names, e.g. sm80_xmma_gemm_f32f32_..., nvjet_sm90_hsh_... */
        ASSERT(name && strstr(name, "sm") && (strstr(name, "gemm") || strstr(name, "nvjet")));
        half += strstr(name, "hsh") != NULL;
        launches += tj_num(k->v[i], "instances");
    }
    ASSERT_INT(launches, ==, 3);
    ASSERT_INT(half, ==, 1);
    const tj *api = tj_get(s, "api");
    ASSERT(tj_num(tj_find(api, "name", "cuLibraryGetKernel"), "calls") >= 1);
    ASSERT_INT(tj_num(tj_find(api, "name", "cuLaunchKernelEx"), "calls"), ==, 3);
    ASSERT_INT(tj_num(tj_find(api, "name", "cudaMemcpy"), "calls"), ==, 4);
    tj_free(s);
    return 0;
}

TEST_IMPL(cublas_gemms)
{
    return cublas_gemms(NULL);
}

/* Eager loading: the runtime loads every fatbin of cuBLAS at start, sm_75-only ones included. */
TEST_IMPL(cublas_gemms_eager)
{
    const char *const env[] = {"CUDA_MODULE_LOADING=EAGER", NULL};
    return cublas_gemms(env);
}

/* The runtime's other allocators (stream-ordered, from the device's default pool, pinned by
 * cudaMallocHost and cudaHostAlloc, registered by cudaHostRegister) and copies from and into
 * that memory: the same counts on both runtimes, the sizes the program documents, copies of
 * registered and pinned memory counted as pinned, and on NVIDIA's runtime each runtime call the
 * parent of the driver call that did the work. */
TEST_IMPL(nvidia_runtime_memory)
{
    tj *s[2];
    if (both("rt_memory", "tests/workloads/rt_memory", NULL, "rt_memory: ok", s))
        return 1;
    if (nv_same_counts(s[0], s[1], 1))
        return 1;
    const long long mib = 1 << 20;
    /* device: 1 MiB + 7 (async, freed before the pool's 2 MiB), 2 MiB, 1 MiB */
    ASSERT_INT(tj_num(s[1], "vram.0.allocations"), ==, 3);
    ASSERT_INT(tj_num(s[1], "vram.0.frees"), ==, 3);
    ASSERT_INT(tj_num(s[1], "vram.0.peak_bytes"), ==, 2 * mib);
    const tj *host = tj_find(tj_get(s[1], "vram"), "device", "pinned-host");
    ASSERT(host);
    ASSERT_INT(tj_num(host, "allocations"), ==, 3);
    ASSERT_INT(tj_num(host, "peak_bytes"), ==, 3 * mib);
    ASSERT_INT(tj_num(host, "in_use_at_end_bytes"), ==, 0);
    const tj *c = tj_get(s[1], "copies");
    ASSERT_UINT(c->n, ==, 2);
    for (size_t i = 0; i < c->n; i++) {
        ASSERT_STR(tj_str(c->v[i], "host_kind"), "pinned");
        ASSERT_INT(tj_num(c->v[i], "count"), ==, 2);
        ASSERT_INT(tj_num(c->v[i], "bytes"), ==, 2 * mib);
    }
    tj_free(s[0]);
    tj_free(s[1]);
    static const char *const pairs[][2] = {
        {"cudaMallocAsync", "cuMemAllocAsync"},
        {"cudaMallocFromPoolAsync", "cuMemAllocFromPoolAsync"},
        {"cudaHostRegister", "cuMemHostRegister_v2"},
        {"cudaHostUnregister", "cuMemHostUnregister"},
        {"cudaMalloc", "cuMemAlloc_v2"},
        {"cudaFree", "cuMemFree_v2"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (inside("rt_memory", pairs[i][0], pairs[i][1], 1))
            return 1;
    if (inside("rt_memory", "cudaFreeAsync", "cuMemFreeAsync", 2) ||
        inside("rt_memory", "cudaFreeHost", "cuMemFreeHost", 2))
        return 1;
    return 0;
}

/* A fork() child of a CUDA process, on both runtimes: the calls NVIDIA's runtime still answers
 * (device count and properties, versions, peeking at the error) and the ones that fail with
 * cudaErrorInitializationError give the same results on ours, traced; also when the child is
 * forked while another thread's first CUDA call is inside the driver (held there 400 ms), where
 * a runtime that kept a lock across the fork leaves the child waiting forever. */
TEST_IMPL(forked_child_same_answers)
{
    static const char *const modes[] = {"after", "during"};
    static const char *const hold[] = {"FAKECUDA_FAIL=cuDevicePrimaryCtxRetain:1:0:400", NULL};
    for (int m = 0; m < 2; m++) {
        char *out[2];
        for (int i = 0; i < 2; i++) {
            char dir[4096], sub[256];
            snprintf(sub, sizeof sub, "forked-%s-%s", modes[m], i ? "nvidia" : "ours");
            const char *args[] = {modes[m], NULL};
            ctt_proc p;
            if (nv_trace(&p, dir, sub, i ? NV_NVIDIA : NV_OURS, "tests/nvrt/forked", args,
                         m ? hold : NULL) != 0)
                return 1;
            ASSERT_INT(p.exited, ==, 1);
            ASSERT_INT(p.code, ==, 0);
            ASSERT_CONTAINS(p.out, "forked: child done\nforked: child exit 0\n"
                                   "forked: parent cudaMalloc 0\n");
            ASSERT_CONTAINS(p.out, "cudaMalloc(&p, 4096) 3\n");
            out[i] = strdup(p.out);
            ctt_proc_free(&p);
        }
        ASSERT_STR(out[0], out[1]);
        free(out[0]);
        free(out[1]);
    }
    return 0;
}

/* NVIDIA's cudaProfilerStart/Stop reach the driver's cuProfilerStart/Stop (libcutrace's, as the
 * process's libcuda.so.1): with CUTRACE_CAPTURE_RANGE=cudaProfilerApi the trace holds exactly
 * the kernels capture_steps launches between them (4 of each of its two windows, none of the 6
 * outside) and the two windows, as on the simulated runtime. */
TEST_IMPL(nvidia_runtime_capture_range)
{
    static const nv_runtime rts[2] = {NV_OURS, NV_NVIDIA};
    static const char *const args[] = {"--window", "profiler", NULL};
    static const char *const env[] = {"CUTRACE_CAPTURE_RANGE=cudaProfilerApi", NULL};
    for (int i = 0; i < 2; i++) {
        char dir[4096];
        ctt_proc p;
        if (nv_trace(&p, dir, i ? "capture-nvidia" : "capture-ours", rts[i],
                     "tests/workloads/capture_steps", args, env) != 0)
            return 1;
        TR_ASSERT_EXIT(p, 0);
        ASSERT_CONTAINS(p.out, "capture_steps: window=profiler outside=6 win1=4 win2=4");
        ctt_proc_free(&p);
        tr_trace t;
        ASSERT_INT(tr_load(&t, dir), ==, 0);
        ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, "win1_kernel(int*)"), ==, 4);
        ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, "win2_kernel(int*)"), ==, 4);
        ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 8);
        size_t starts = 0, stops = 0;
        for (size_t k = 0; k < t.n; k++)
            if (t.v[k].r.type == CT_REC_CAPTURE && t.v[k].r.u.capture.why == CT_CAPTURE_PROFILER) {
                starts += t.v[k].r.u.capture.op == CT_CAPTURE_START;
                stops += t.v[k].r.u.capture.op == CT_CAPTURE_STOP;
            }
        ASSERT_UINT(starts, ==, 2);
        ASSERT_UINT(stops, ==, 2);
        tr_free(&t);
    }
    return 0;
}
