/* For tests and workloads (C or C++): make sure the CUDA runtime in this process is the simulated
 * libcudart.so.13, not NVIDIA's (which is on the default library path of these machines and,
 * against the simulated driver, fails every call with error 801, so a run that picked it would
 * test nothing). The simulated runtime exports fakecuda_runtime_version(), which NVIDIA's lacks.
 *
 *   fakecudart_loaded()  -> 1 if the simulated runtime is loaded, else 0
 *   fakecudart_require() -> returns if it is; otherwise prints which libcudart was loaded and how
 *                           to pick the simulated one, and exits with status 3
 * Call fakecudart_require() at the start of main() in any program meant to run on the
 * simulation (run it with LD_LIBRARY_PATH=<build>/tests/fakecuda). Link with -ldl on glibc < 2.34. */
#ifndef FAKECUDART_H
#define FAKECUDART_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define FAKECUDART_EXIT_WRONG_RUNTIME 3

static inline int fakecudart_loaded(void)
{
    return dlsym(RTLD_DEFAULT, "fakecuda_runtime_version") != NULL;
}

static inline void fakecudart_require(void)
{
    if (fakecudart_loaded())
        return;
    Dl_info info;
    const char *which = dladdr((void *)&cudaGetDeviceCount, &info) && info.dli_fname ? info.dli_fname
                                                                                        : "(unknown)";
    fprintf(stderr,
            "error: this program must run on the simulated CUDA runtime, but the libcudart.so.13 "
            "loaded is %s (no fakecuda_runtime_version symbol); run it with "
            "LD_LIBRARY_PATH=<build>/tests/fakecuda\n",
            which);
    exit(FAKECUDART_EXIT_WRONG_RUNTIME);
}

#endif
