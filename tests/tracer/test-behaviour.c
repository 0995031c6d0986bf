/* The program's behaviour is its own: errno across wrappers, no file for a process that never
 * uses CUDA, and an unwritable trace directory costs one warning and nothing else. */
#include "tr.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

TEST_IMPL(errno_preserved)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "errno", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.out, "result=0 errno=4242");
    ASSERT_CONTAINS(p.out, "instantiate=0 errno=4242"); /* the node listing after it */
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(no_cuda_no_file)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "nocuda", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 7);
    ASSERT_STR(p.out, "probe: mode=nocuda\n");
    struct stat st;
    ASSERT_INT(stat(out, &st), ==, -1); /* not even the directory */
    ASSERT_CONTAINS(p.err, "no trace written");
    ctt_proc_free(&p);
    return 0;
}

/* The output directory cannot exist (its parent is a file): cutrace run refuses it before the
 * command runs; preloaded, one warning, then the program runs exactly as untraced, same output
 * and exit status. */
TEST_IMPL(unwritable_dir_runs_untraced)
{
    char prog[4096], file[4000], out[4096];
    snprintf(file, sizeof file, "%s/a-file", ctt_tmpdir());
    FILE *f = fopen(file, "w");
    ASSERT(f != NULL);
    fclose(f);
    snprintf(out, sizeof out, "%s/traces", file);
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "dlopen", NULL};
    ctt_proc p;
    /* cutrace run refuses it before running anything */
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 1);
    ASSERT_STR(p.out, "");
    ASSERT_CONTAINS(p.err, "cutrace run: error: output directory ");
    ASSERT_CONTAINS(p.err, "Not a directory");
    ctt_proc_free(&p);
    /* preloaded, the program runs untraced */
    ASSERT_INT(tr_run_preloaded(&p, out, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_STR(p.out, "probe: mode=dlopen allocs=1 bytes=1048576 sets=1\n");
    ASSERT_CONTAINS(p.err, "cutrace: warning: cannot create a trace file in");
    /* Exactly one warning line from the traced process. */
    const char *w = strstr(p.err, "cutrace: warning:");
    ASSERT(w && !strstr(w + 1, "cutrace: warning:"));
    ctt_proc_free(&p);
    return 0;
}

/* The disk fills while tracing (a 16 KiB tmpfs in a private mount namespace): one warning,
 * then the program runs on untraced with its own output and exit status. */
TEST_IMPL(disk_full_runs_on)
{
    char prog[4096], cutrace[4096], fake[4096], script[16384];
    const char *dir = ctt_tmpdir();
    snprintf(script, sizeof script,
             "mount -t tmpfs -o size=16k tmpfs %s || exit 99; "
             "LD_LIBRARY_PATH=%s FAKECUDA_INSTANT=1 %s run -o %s/traces -- %s stress 8 8000",
             dir, ctt_path(fake, "tests/fakecuda"), ctt_path(cutrace, "bin/cutrace"), dir,
             ctt_path(prog, "tests/tracer/probe"));
    char *argv[] = {"unshare", "-m", "sh", "-c", script, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    if (p.exited && p.code == 99)
        ctt_skip("cannot mount a small tmpfs here (needs root and mount namespaces)");
    TR_ASSERT_EXIT(p, 0);
    ASSERT_STR(p.out, "probe: mode=stress threads=8 sets=64000\n");
    const char *w = strstr(p.err, "cutrace: warning: writing ");
    ASSERT(w != NULL);
    ASSERT_CONTAINS(w, "failed");
    ASSERT(!strstr(w + 1, "cutrace: warning:"));
    ctt_proc_free(&p);
    return 0;
}

/* The tracer's own driver calls (GPU-timing events, context and device queries, DEVICE
 * properties, pointer kinds) go to the real driver and are never recorded, also when the driver
 * calls its own exports internally (NVIDIA's libcuda binds them to itself, -Bsymbolic). */
TEST_IMPL(tracer_calls_not_recorded)
{
    static const char *const own[] = {
        "cuEventCreate", "cuEventRecord", "cuEventQuery", "cuEventElapsedTime",
        "cuEventElapsedTime_v2", "cuEventSynchronize", "cuEventDestroy_v2", "cuStreamIsCapturing",
        "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
        "cuDeviceGetAttribute", "cuDeviceGetName", "cuDeviceGetUuid_v2", "cuDeviceTotalMem_v2",
        "cuPointerGetAttribute", "cuFuncGetName", "cuKernelGetName"};
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--iters", "2", "--loader-ms", "1",
                   "--memory", "pageable", NULL};
    char *opts[] = {"--gpu-timing", "all", "--stacks", "all", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, opts, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    /* the tracer did make those calls: devices described, kernels timed */
    ASSERT_UINT(tr_count(&t, CT_REC_DEVICE, NULL), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_GPU, NULL), >=, tr_count(&t, CT_REC_LAUNCH, NULL));
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 2 * (5 * 6 + 3));
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (tr_count(&t, CT_REC_API, own[i]) != 0) {
            ctt_fail_at(__FILE__, __LINE__, "%zu API records of %s, which only the tracer "
                            "calls", tr_count(&t, CT_REC_API, own[i]), own[i]);
            return 1;
        }
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* A program that closes every descriptor it did not open and opens a file of its own: it gets
 * the number it would untraced (3), the file holds only what the program wrote, and the tracer
 * reopens its file and goes on, silently: every call traced, the trace complete. */
TEST_IMPL(closed_trace_descriptor_not_reused)
{
    char prog[4096], out[4096], data[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(data, sizeof data, "%s/data.txt", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "closefds", data, NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.out, "probe: mode=closefds fd=3\n");
    ASSERT(strstr(p.err, "warning") == NULL);
    char *text = ctt_read_file(data, NULL);
    ASSERT(text);
    ASSERT_STR(text, "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\n");
    free(text);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(t.stats[0].lost, ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemsetD8_v2"), ==, 16);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
