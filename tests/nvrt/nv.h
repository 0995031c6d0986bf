/* Running programs traced by cutrace on NVIDIA's runtime or on the simulated one (both over the
 * simulated driver), proving which libcudart.so.13 each ran, and comparing what the two
 * summaries counted. */
#ifndef NV_H
#define NV_H

#include "an_helpers.h"

typedef enum { NV_OURS, NV_NVIDIA } nv_runtime;

/* Traces PROG (a path under the build directory, e.g. "tests/workloads/train_loop") with args
 * (NULL-terminated, may be NULL) under `cutrace run --gpu-timing all` into DIR (the test's
 * tmpdir/NAME), on runtime rt, with the workloads' host kernels and extra env (may be NULL).
 * Fills p (the cutrace run: the program's output, exit status). Checks, failing the test with
 * a message otherwise, that every process of the run mapped exactly the libcudart.so.13 of rt
 * (the driver's FAKECUDA_CUDART_REPORT: resolved path and GNU build id; NVIDIA's is NV_CUDART
 * on this machine's default library path, ours only reachable through LD_LIBRARY_PATH). Skips
 * the test when NVIDIA's runtime is not installed. Returns 0, or nonzero after a message. */
int nv_trace(ctt_proc *p, char dir[4096], const char *name, nv_runtime rt, const char *prog,
             const char *const args[], const char *const env[]);

/* Runs PROG (a path under the build directory) untraced on runtime rt, as nv_trace does
 * (environment, the check of which libcudart.so.13 it mapped; name names the report). */
int nv_run(ctt_proc *p, const char *name, nv_runtime rt, const char *prog);

/* Asserts (failing the test, naming the field) that two summaries of the same workload count
 * the same: kernels by name and instances, copies by operation, host memory kind, count and
 * bytes, VRAM allocations, frees, failures and (same_peak: for workloads whose peak does not
 * depend on how their threads interleave) peak, and runtime synchronization calls by name. */
int nv_same_counts(const tj *ours, const tj *nvidia, int same_peak);

#endif
