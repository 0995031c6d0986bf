/* No real driver to be found: libcutrace's warning names the options that name one (`cutrace run
 * --libcuda`, CUTRACE_LIBCUDA), the program gets the failures it would get untraced, and the trace
 * shows its failed calls. */
#define _GNU_SOURCE
#include "tr.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

TEST_IMPL(run_names_libcuda_without_driver)
{
    /* A library directory holding the runtime but no driver. */
    char rt[4096], lib[4096], llp[4200], prog[4096], out[4096], cutrace[4096];
    snprintf(lib, sizeof lib, "%s/lib", ctt_tmpdir());
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    ASSERT_INT(mkdir(lib, 0755), ==, 0);
    char link[4200];
    snprintf(link, sizeof link, "%s/libcudart.so.13", lib);
    ASSERT_INT(symlink(ctt_path(rt, "tests/fakecuda/libcudart.so.13"), link), ==, 0);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", lib);
    char *env[] = {llp, NULL};
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "entry", NULL};
    ctt_proc plain;
    ASSERT_INT(ctt_run(&plain, cmd, env, 30), ==, 0);
    if (plain.exited && plain.code == 0)
        ctt_skip("a CUDA driver is installed on this machine");
    char *run[] = {(char *)ctt_path(cutrace, "bin/cutrace"), "run", "-o", out, "--", prog,
                   "entry", NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, run, env, 30), ==, 0);
    ASSERT_INT(p.exited, ==, plain.exited);
    ASSERT_INT(p.code, ==, plain.code);
    ASSERT_CONTAINS(p.err, "cutrace: warning: expected the real CUDA driver libcuda.so.1, found none");
    ASSERT_CONTAINS(p.err, "; name it with cutrace run --libcuda /path/to/libcuda.so.1 (or "
                           "CUTRACE_LIBCUDA=/path/to/libcuda.so.1 with LD_PRELOAD)\n");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    const tr_rec *malloc_call = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_API && !strcmp(t.v[i].name, "cudaMalloc"))
            malloc_call = &t.v[i];
    ASSERT(malloc_call != NULL);
    ASSERT_UINT(malloc_call->r.u.api.result, ==, 35); /* cudaErrorInsufficientDriver */
    tr_free(&t);
    ctt_proc_free(&p);
    /* the summary names what the failed call returned, as NVIDIA's headers name it */
    char *summary[] = {"summary", out, NULL};
    char *text = tr_analyze(summary);
    ASSERT(text != NULL);
    ASSERT_CONTAINS(text, "  cudaMalloc failed 1 of 1 calls: cudaErrorInsufficientDriver (35)\n");
    free(text);
    /* A --libcuda that is no driver: the warning names the option it came from. */
    snprintf(out, sizeof out, "%s/out2", ctt_tmpdir());
    char *bad[] = {cutrace, "run", "--libcuda", "/nonexistent/libcuda.so.1", "-o", out, "--", prog,
                   "entry", NULL};
    ASSERT_INT(ctt_run(&p, bad, env, 30), ==, 0);
    ASSERT_INT(p.code, ==, plain.code);
    ASSERT_CONTAINS(p.err, "cutrace: warning: CUTRACE_LIBCUDA=/nonexistent/libcuda.so.1 (cutrace "
                           "run --libcuda): expected a CUDA driver");
    ctt_proc_free(&p);
    ctt_proc_free(&plain);
    return 0;
}
