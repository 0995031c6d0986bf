/* A stand-in libcuda.so.1 that sits between the simulated runtime and the simulated driver, to
 * observe what the runtime asks of the driver. Placed first on LD_LIBRARY_PATH (its directory is
 * build/tests/sim-runtime/shim), it exports only cuGetProcAddress_v2, forwards every request to
 * the driver named by FC_SHIM_DRIVER (an absolute path) and appends to FC_SHIM_LOG:
 *   gpa SYMBOL VERSION FLAGS    for each request ('-' for an empty symbol), in the format of
 *                               tests/fakecuda/runtime/getprocaddress.txt
 *   call NAME FLAGS             for each call of a watched entry point (copies and launches),
 *                               FLAGS being those it was requested with (2: per-thread stream) */
#define _GNU_SOURCE
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fc_log(const char *fmt, const char *s, long a, long b)
{
    const char *path = getenv("FC_SHIM_LOG");
    if (!path)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, fmt, s, a, b);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n)
        perror("shim_driver: write to FC_SHIM_LOG");
    close(fd);
}

/* One wrapper per watched entry point and flags value; [0] legacy, [1] per-thread. */
#define FC_WATCH(name, pfn, params, args)                                   \
    static pfn fc_real_##name[2];                                           \
    static CUresult fc_w0_##name params                                     \
    {                                                                       \
        fc_log("call %s %ld\n", #name, 0, 0);                               \
        return fc_real_##name[0] args;                                      \
    }                                                                       \
    static CUresult fc_w2_##name params                                     \
    {                                                                       \
        fc_log("call %s %ld\n", #name, 2, 0);                               \
        return fc_real_##name[1] args;                                      \
    }

#define FC_P_COPY (CUdeviceptr d, CUdeviceptr s, size_t n)
#define FC_P_COPY_ASYNC (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
FC_WATCH(cuMemcpy, PFN_cuMemcpy_v4000, FC_P_COPY, (d, s, n))
FC_WATCH(cuMemcpyAsync, PFN_cuMemcpyAsync_v4000, FC_P_COPY_ASYNC, (d, s, n, st))
FC_WATCH(cuMemcpyDtoD, PFN_cuMemcpyDtoD_v3020, FC_P_COPY, (d, s, n))
FC_WATCH(cuMemcpyDtoDAsync, PFN_cuMemcpyDtoDAsync_v3020, FC_P_COPY_ASYNC, (d, s, n, st))
FC_WATCH(cuMemcpyHtoD, PFN_cuMemcpyHtoD_v3020, (CUdeviceptr d, const void *s, size_t n), (d, s, n))
FC_WATCH(cuMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020, (CUdeviceptr d, const void *s, size_t n, CUstream st),
         (d, s, n, st))
FC_WATCH(cuMemcpyDtoH, PFN_cuMemcpyDtoH_v3020, (void *d, CUdeviceptr s, size_t n), (d, s, n))
FC_WATCH(cuMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020, (void *d, CUdeviceptr s, size_t n, CUstream st),
         (d, s, n, st))
FC_WATCH(cuLaunchKernel, PFN_cuLaunchKernel_v4000,
         (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
          unsigned sh, CUstream st, void **kp, void **ex),
         (f, gx, gy, gz, bx, by, bz, sh, st, kp, ex))

typedef struct {
    const char *name;
    void **real; /* two slots */
    void *wrap[2];
} fc_watched;

#define FC_ENTRY(name) {#name, (void **)fc_real_##name, {(void *)fc_w0_##name, (void *)fc_w2_##name}}
static const fc_watched fc_watch[] = {
    FC_ENTRY(cuMemcpy),          FC_ENTRY(cuMemcpyAsync),     FC_ENTRY(cuMemcpyDtoD),
    FC_ENTRY(cuMemcpyDtoDAsync), FC_ENTRY(cuMemcpyHtoD),      FC_ENTRY(cuMemcpyHtoDAsync),
    FC_ENTRY(cuMemcpyDtoH),      FC_ENTRY(cuMemcpyDtoHAsync), FC_ENTRY(cuLaunchKernel),
};

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    static PFN_cuGetProcAddress_v12000 real;
    if (!real) {
        const char *path = getenv("FC_SHIM_DRIVER");
        void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
        real = h ? (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2") : NULL;
        if (!real) {
            fprintf(stderr, "shim_driver: FC_SHIM_DRIVER=%s: expected a driver exporting "
                            "cuGetProcAddress_v2, found %s\n", path ? path : "(unset)",
                    path ? dlerror() : "nothing");
            abort();
        }
    }
    fc_log("gpa %s %ld %ld\n", symbol && *symbol ? symbol : "-", version, (long)flags);
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r != CUDA_SUCCESS || !symbol || (flags != 0 && flags != 2))
        return r;
    for (size_t i = 0; i < sizeof fc_watch / sizeof fc_watch[0]; i++)
        if (strcmp(symbol, fc_watch[i].name) == 0) {
            int pt = flags == 2;
            fc_watch[i].real[pt] = *pfn;
            *pfn = fc_watch[i].wrap[pt];
        }
    return r;
}
