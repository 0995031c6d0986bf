/* Running the workload programs (tests/workloads) on the simulated CUDA stack and reading the
 * "PROG: key=value ..." lines they print. */
#ifndef WL_RUN_H
#define WL_RUN_H

#include "ctt.h"

/* Runs BUILD/tests/workloads/PROG with `args` (NULL-terminated, may be NULL) under
 * LD_LIBRARY_PATH=BUILD/tests/fakecuda and FAKECUDA_HOST_KERNELS=BUILD/tests/workloads/
 * libworkload_kernels.so, then `env` (ctt_run's format, which can override or unset those).
 * Sets *wall_ms to the measured run time. Returns 0, or -1 (with a message) if the simulation
 * or the program is missing or could not be started. */
int wl_run(ctt_proc *p, const char *prog, const char *const args[], const char *const env[],
           double *wall_ms);

/* The number after " KEY=" on the first line of `out` that starts with `line` (e.g.
 * "train_loop: totals "); NAN, with a message naming both, if there is none. */
double wl_num(const char *out, const char *line, const char *key);

/* Runs `dies --how HOW --steps 3 --step-ms 10` and checks it ended as wanted (exited with
 * `code`, or killed by signal `code` if !exited) after reporting every step. */
int wl_check_death(const char *how, int exited, int code);

/* CPU seconds (user + system) of the children this process has waited for. */
double wl_children_cpu_s(void);

#endif
