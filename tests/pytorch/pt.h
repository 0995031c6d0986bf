/* Running Python programs (tests/pytorch/ programs) from the suite's virtual environment on the
 * simulated driver, traced by `cutrace run` or not, and reading what they and their traces say. */
#ifndef PT_H
#define PT_H

#include "an_helpers.h"

/* Runs PT_SRC/SCRIPT (SCRIPT itself when it is an absolute path) with args (NULL-terminated, may be NULL) under the venv's python, with
 * LD_LIBRARY_PATH naming the directory that holds only the simulated libcuda.so.1 (PyTorch's
 * own NVIDIA runtime, cuBLAS and cuDNN stay), and extra env (may be NULL). traced: under
 * `cutrace run -q --gpu-timing all -o DIR` with DIR the test's tmpdir/NAME (written to dir).
 * Fails the test unless the program exits 0. Skips the test when the venv could not be made
 * (PyPI unreachable: tests/pytorch/venv.sh). Returns 0, or nonzero after a message. */
int pt_run(ctt_proc *p, char dir[4096], const char *name, int traced, const char *script,
           const char *const args[], const char *const env[]);

/* Runs the program untraced, then traced into DIR, and asserts both exited 0 with the same
 * stdout; p gets the traced run. Returns 0, or nonzero after a message. */
int pt_run_both(ctt_proc *p, char dir[4096], const char *name, const char *script,
                const char *const args[], const char *const env[]);

/* The number of trace files (*.cutrace) in dir, and in *one the path of the last. */
int pt_trace_files(const char *dir, char one[4096]);

/* Of a summary's kernels, the instances of those whose name contains part (0 if none). */
double pt_kernel_instances(const tj *summary, const char *part);

/* The median of the values of the lines "PREFIX N" in text; -1 if there are none. */
double pt_median_of(const char *text, const char *prefix);
/* The median of v[0..n) (sorted in place); -1 if n is 0. */
double pt_median(double *v, size_t n);

/* The line of PT_SRC/SCRIPT whose comment is "# cutrace: MARKER"; 0 after a message if none. */
int pt_marker_line(const char *script, const char *marker);

/* Whether the trace file's stacks hold a Python frame (FRAME kind 1, read with `cutrace dump`)
 * at the line of PT_SRC/SCRIPT whose comment is "# cutrace: MARKER". Returns 0, or nonzero after
 * a message. */
int pt_python_frame_at(const char *trace, const char *script, const char *marker);

#endif
