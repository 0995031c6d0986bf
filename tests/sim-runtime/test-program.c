/* nvcc-built programs (vecadd.cu, `nvcc -cudart shared`) run unmodified on the simulated stack,
 * and what the simulated runtime asks of the driver while they do. */
#include "simrt.h"

#include <stdlib.h>
#include <unistd.h>

/* a[i] = i, b[i] = 2i: vecadd then scale by 2 gives 6i, summing to 6 * n(n-1)/2 for n = 1000;
 * vecadd(a, a) then scale by 0.5 gives i, summing to n(n-1)/2. */
#define VECADD_OUT \
    "vecadd n=1000 stream_sum=2997000 default_sum=499500 mismatches=0 name=_Z6vecaddPKfS0_Pfi max_threads=1024\n"

TEST_IMPL(program_runs_on_simulation)
{
    ctt_proc p;
    ASSERT_INT(simrt_run(&p, "vecadd", NULL, 0, NULL), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_STR(p.out, VECADD_OUT);
    ctt_proc_free(&p);
    return 0;
}

/* Built for compute capability 7.5 (nvcc's default), the program has no code a V100 (7.0) can
 * run: its first launch fails with the runtime's error for that, seen by cudaGetLastError. */
TEST_IMPL(program_without_image_for_device)
{
    char *env[] = {"FAKECUDA_DEVICES=v100", NULL};
    ctt_proc p;
    ASSERT_INT(simrt_run(&p, "vecadd", env, 0, NULL), ==, 0);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "cudaGetLastError() returned cudaErrorNoKernelImageForDevice (209)");
    ASSERT_STR(p.out, "");
    ctt_proc_free(&p);
    return 0;
}

/* The legacy program copies in the directions cudaMemcpyDefault implies and launches on the
 * legacy entry points; the per-thread one uses the driver's per-thread (flags 2) entry points. */
TEST_IMPL(default_stream_modes_pick_driver_variants)
{
    ctt_proc p;
    char *log;
    ASSERT_INT(simrt_run(&p, "vecadd", NULL, 1, &log), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_STR(p.out, VECADD_OUT);
    ASSERT_INT(simrt_count_lines(log, "call cuLaunchKernel 0"), ==, 4);
    ASSERT_INT(simrt_count_lines(log, "call cuLaunchKernel 2"), ==, 0);
    /* cudaMemcpy(dev, pinned, Default) and cudaMemcpy(dev, pageable, HostToDevice) */
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpyHtoD 0"), ==, 2);
    /* cudaMemcpyAsync(pinned, dev, Default) and cudaMemcpy(pageable, dev, Default) */
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpyDtoHAsync 0"), ==, 1);
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpyDtoH 0"), ==, 1);
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpy 0") + simrt_count_lines(log, "call cuMemcpyDtoD 0"), ==, 0);
    ctt_proc_free(&p);
    free(log);

    ASSERT_INT(simrt_run(&p, "vecadd-ptds", NULL, 1, &log), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_STR(p.out, VECADD_OUT);
    ASSERT_INT(simrt_count_lines(log, "call cuLaunchKernel 2"), ==, 4);
    ASSERT_INT(simrt_count_lines(log, "call cuLaunchKernel 0"), ==, 0);
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpyHtoD 2"), ==, 2);
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpyDtoHAsync 2"), ==, 1);
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpyDtoH 2"), ==, 1);
    ASSERT_INT(simrt_count_lines(log, "call cuMemcpyHtoD 0"), ==, 0);
    ctt_proc_free(&p);
    free(log);
    return 0;
}

/* At initialization the runtime requests exactly NVIDIA's list: the same (symbol, version,
 * flags) in the same order (tests/fakecuda/runtime/getprocaddress.txt). */
TEST_IMPL(init_requests_match_nvidia)
{
    char *ref = ctt_read_file(SIMRT_REQUESTS, NULL);
    ASSERT(ref != NULL);
    ctt_proc p;
    char *log;
    ASSERT_INT(simrt_run(&p, "vecadd", NULL, 1, &log), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    int nref = 0, nlog = 0;
    const char *r = ref, *l = log;
    while (*r) {
        const char *re = strchr(r, '\n');
        size_t rl = re ? (size_t)(re - r) : strlen(r);
        if (*r != '#') {
            const char *le = strchr(l, '\n');
            ASSERT(le != NULL);
            char want[256], got[256];
            snprintf(want, sizeof want, "gpa %.*s", (int)rl, r);
            snprintf(got, sizeof got, "%.*s", (int)(le - l), l);
            if (strcmp(want, got) != 0) {
                ctt_fail_at(__FILE__, __LINE__, "request %d: expected \"%s\", found \"%s\"", nref + 1, want, got);
                return 1;
            }
            nref++;
            l = le + 1;
        }
        r = re ? re + 1 : r + rl;
    }
    for (const char *s = log; (s = strstr(s, "gpa ")); s += 4)
        nlog += s == log || s[-1] == '\n';
    ASSERT_INT(nref, ==, 440);
    ASSERT_INT(nlog, ==, nref); /* the program makes no request of its own after init */
    ctt_proc_free(&p);
    free(log);
    free(ref);
    return 0;
}

/* NVIDIA's libcudart.so.13 is on the default library path: a program run without the
 * simulated directory first must stop with a message, not run against it and test nothing. */
TEST_IMPL(wrong_runtime_fails_loudly)
{
    ctt_proc p;
    char *argv[] = {"sh", "-c", "ldconfig -p | grep -q 'libcudart.so.13 '", NULL};
    ASSERT_INT(ctt_run(&p, argv, NULL, 20), ==, 0);
    int have_real = p.exited && p.code == 0;
    ctt_proc_free(&p);
    if (!have_real)
        ctt_skip("NVIDIA's libcudart.so.13 is not on the default library path here");
    char *env[] = {"LD_LIBRARY_PATH=", NULL};
    ASSERT_INT(simrt_run(&p, "vecadd", env, 0, NULL), ==, 0);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 3);
    ASSERT_CONTAINS(p.err, "must run on the simulated CUDA runtime");
    ASSERT_STR(p.out, "");
    ctt_proc_free(&p);
    return 0;
}

/* Two threads' default-stream kernels (200 ms each) serialize on the legacy default stream and
 * overlap with per-thread default streams. */
TEST_IMPL(per_thread_default_streams_overlap)
{
    char *env[] = {"FAKECUDA_KERNEL_NS=tick=200000000", NULL};
    ctt_proc p;
    long runs = -1, ms = -1;
    ASSERT_INT(simrt_run(&p, "threads", env, 0, NULL), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(sscanf(p.out, "threads=2 runs=%ld elapsed_ms=%ld", &runs, &ms), ==, 2);
    ASSERT_INT(runs, ==, 2);
    ASSERT_INT(ms, >=, 390);
    ctt_proc_free(&p);

    ASSERT_INT(simrt_run(&p, "threads-ptds", env, 0, NULL), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(sscanf(p.out, "threads=2 runs=%ld elapsed_ms=%ld", &runs, &ms), ==, 2);
    ASSERT_INT(runs, ==, 2);
    ASSERT_INT(ms, >=, 195);
    ASSERT_INT(ms, <, 350);
    ctt_proc_free(&p);
    return 0;
}

/* Without a libcuda.so.1 to load, every call needing the driver fails with
 * cudaErrorInsufficientDriver, as NVIDIA's runtime does on a machine without the driver. */
TEST_IMPL(no_driver_is_insufficient_driver)
{
    ctt_proc p;
    char *probe[] = {"sh", "-c", "ldconfig -p | grep -q 'libcuda.so.1 '", NULL};
    ASSERT_INT(ctt_run(&p, probe, NULL, 20), ==, 0);
    int have_driver = p.exited && p.code == 0;
    ctt_proc_free(&p);
    if (have_driver)
        ctt_skip("a libcuda.so.1 is on the default library path here");
    char rt[4096], link[4200], ld[4200];
    ctt_path(rt, "tests/fakecuda/libcudart.so.13");
    snprintf(link, sizeof link, "%s/libcudart.so.13", ctt_tmpdir());
    ASSERT_INT(symlink(rt, link), ==, 0);
    snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", ctt_tmpdir());
    char *env[] = {ld, NULL};
    ASSERT_INT(simrt_run(&p, "vecadd", env, 0, NULL), ==, 0);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, "returned cudaErrorInsufficientDriver (35)");
    ctt_proc_free(&p);
    return 0;
}
