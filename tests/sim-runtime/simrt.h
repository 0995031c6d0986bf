/* Helpers of the sim-runtime suite. In-process tests call the CUDA runtime directly (the runner
 * is linked against the simulated libcudart.so.13); program tests run the nvcc-built programs in
 * build/tests/sim-runtime with the simulated stack first on LD_LIBRARY_PATH. */
#ifndef SIMRT_H
#define SIMRT_H

#include "ctt.h"

/* SIMRT_REQUESTS (set by suite.mk): NVIDIA's request list, tests/fakecuda/runtime/getprocaddress.txt */

/* For in-process tests, before the first CUDA call (the driver reads its environment once):
 * sets FAKECUDA_DEVICES to `devices` (NULL: the driver's default), and fails unless the
 * simulated runtime is the one loaded. The driver runs in its real-time mode (not
 * FAKECUDA_INSTANT), so streams are asynchronous as on a GPU. */
int simrt_setup(const char *devices);

/* Runs build/tests/sim-runtime/PROG with LD_LIBRARY_PATH=build/tests/fakecuda and the host
 * kernels of host_kernels.so (driver in real-time mode), plus `env` (NULL-terminated, may be NULL). With `shim`, the stand-in
 * driver (shim_driver.c) goes first and logs to TMPDIR/shim.log; *log receives that file's text
 * (malloc'd) after the run. */
int simrt_run(ctt_proc *p, const char *prog, char *const env[], int shim, char **log);

/* Runs build/tests/sim-runtime/PROG with `args` (NULL-terminated, may be NULL) on NVIDIA's
 * libcudart.so.13 (SIMRT_NV_CUDART, set by suite.mk) over the simulated driver, with the host
 * kernels. Returns 0 after checking, through the driver's FAKECUDA_CUDART_REPORT, that NVIDIA's
 * runtime and no other ran; otherwise fails the test and returns -1. Callers skip the test first
 * when SIMRT_NV_CUDART is not installed. */
int simrt_run_nvidia(ctt_proc *p, const char *prog, const char *const args[]);

/* Runs a CUDA runtime call that must succeed, but skips the test if it fails with
 * cudaErrorNotSupported: the simulated driver does not simulate `what` (yet). */
#define SIMRT_CALL_OR_SKIP(call, what)                                                      \
    do {                                                                                    \
        int simrt_e_ = (int)(call);                                                         \
        if (simrt_e_ == 801 /* cudaErrorNotSupported */)                                    \
            ctt_skip("the simulated driver does not simulate " what);                   \
        ASSERT_INT(simrt_e_, ==, 0);                                                        \
    } while (0)

/* How many lines of text are exactly `line`. */
int simrt_count_lines(const char *text, const char *line);

#endif
