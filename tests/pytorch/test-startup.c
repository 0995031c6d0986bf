/* Start-up's library loading on unmodified PyTorch (issue 28, item 3; analyzer/features/
 * cta_startup.h): cuDNN is not intercepted and PyTorch makes its cuBLAS and cuDNN handles in
 * calls the tracer does not see, yet the start-up tells their loading apart. The small
 * convolutional model (train.py --model conv) loads cuDNN's engine libraries at its first
 * convolution (their SHLIB records, kind 5) and calls cuBLAS for its linear layer: both are
 * start-up parts, before the steady state, cuDNN's loading holding the host's time before the
 * first CUDA calls of its libraries' code (hundreds of milliseconds of mapping on the
 * simulation, at least tens on any machine). */
#include "pt.h"

#include <stdlib.h>
#include <string.h>

TEST_IMPL(pytorch_startup_library_loading)
{
    ctt_proc p;
    char dir[4096];
    const char *args[] = {"--loader", "starved", "--model", "conv", "--steps", "8",
                          "--collate-ms", "5", NULL};
    if (pt_run(&p, dir, "libs", 1, "train.py", args, NULL))
        return 1;
    ctt_proc_free(&p);
    tj *s = an_summary(dir, "--min-saving 0");
    ASSERT(s);
    const tj *su = tj_at(tj_get(s, "startup"), 0);
    ASSERT(su);
    ASSERT(tj_get(su, "steady_from_ns")->type != TJ_NULL);
    double steady = tj_num(su, "steady_from_ns");
    const tj *libs = tj_get(su, "libraries");
    const tj *dnn = tj_find(libs, "name", "cuDNN"), *blas = tj_find(libs, "name", "cuBLAS");
    if (!dnn || !blas) {
        ctt_fail_at(__FILE__, __LINE__, "%s: expected cuDNN and cuBLAS among the start-up's "
                    "libraries, found %s and %s", dir, dnn ? "cuDNN" : "no cuDNN",
                    blas ? "cuBLAS" : "no cuBLAS");
        tj_free(s);
        return 1;
    }
    /* cuDNN's engines mapped as the first convolution ran: timed, in the start-up */
    ASSERT(tj_num(dnn, "objects") >= 2);
    ASSERT(tj_num(dnn, "seen_ns") < steady);
    ASSERT(tj_num(dnn, "first_call_ns") <= steady);
    ASSERT(tj_num(dnn, "host_ns") >= 20e6);
    ASSERT(tj_num(dnn, "host_ns") <= tj_num(su, "startup_ns") + tj_num(dnn, "seen_ns"));
    ASSERT(tj_num(blas, "seen_ns") < steady);
    ASSERT(tj_get(blas, "first_call_ns")->type != TJ_NULL);
    tj_free(s);
    /* and the summary's text says so */
    ctt_proc t;
    ASSERT_INT(an_run(&t, "summary {}", dir), ==, 0);
    ASSERT_CONTAINS(t.out, "library loading: cuDNN in use from +");
    ASSERT_CONTAINS(t.out, "library loading: cuBLAS in use from +");
    ctt_proc_free(&t);
    return 0;
}
