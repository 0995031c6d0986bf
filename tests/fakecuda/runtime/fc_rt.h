/* Internals shared by the simulated libcudart.so.13's source files (see README.md).
 *
 * Driver access. The runtime reaches the driver only through fc_drv, filled once by fc_rt_init():
 * dlopen("libcuda.so.1"), dlsym(h, "cuGetProcAddress_v2"), then one request per line of
 * getprocaddress.txt with NVIDIA's versions and flags, in NVIDIA's order. A slot the driver did
 * not provide stays NULL; FC_DRV() turns a call through it into CUDA_ERROR_NOT_SUPPORTED.
 *
 * Error state, as NVIDIA documents it: every exported call returns through fc_rt_ret() (or
 * fc_rt_err() for a CUresult), which records a failure as the calling thread's last error
 * (read by cudaPeekAtLastError, read and cleared by cudaGetLastError). A sticky error (the
 * context is corrupt: illegal address, launch failure, ...) is process-wide and permanent: every
 * later call that needs the context returns it, and cudaGetLastError never clears it.
 *
 * Contexts. Each thread has a current device (0 until cudaSetDevice). fc_rt_ctx() makes that
 * device's primary context (retained once per device, on first need) current on the thread. */
#ifndef FC_RT_H
#define FC_RT_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stddef.h>

#include "fc_rt_drv.h"

/* Marks a hand-written exported function; gen.py stubs every export not so marked. */
#define FC_EXPORT __attribute__((visibility("default")))

extern fc_rt_driver fc_drv;

#define FC_DRV(fn, ...) ((fn) ? (fn)(__VA_ARGS__) : CUDA_ERROR_NOT_SUPPORTED)
/* The legacy or the per-thread-default-stream variant of a driver entry point. */
#define FC_PT(pt, legacy, per_thread) ((pt) ? (per_thread) : (legacy))

/* Loads the driver and calls cuInit once per process; cudaSuccess or why not
 * (cudaErrorInitializationError in a fork() child of a process that had used the runtime). */
cudaError_t fc_rt_init(void);
/* Whether this process is such a child: calls that take a lock without fc_rt_init ask first. */
int fc_rt_forked(void);
/* fc_rt_init, then the sticky error if any, then the current device's primary context. */
cudaError_t fc_rt_ctx(void);
/* Returns from the calling API function with fc_rt_ctx()'s failure, recorded. */
#define FC_CTX()                            \
    do {                                    \
        cudaError_t ctx_e_ = fc_rt_ctx();   \
        if (ctx_e_ != cudaSuccess)          \
            return fc_rt_ret(ctx_e_);       \
    } while (0)

/* The calling thread's current device ordinal. */
int fc_rt_device(void);
/* The primary context of device ordinal d (valid), retained on first need. Not recorded. */
cudaError_t fc_rt_primary(int d, CUcontext *out);
/* Validates a device ordinal (after fc_rt_init); *dev is its CUdevice. Not recorded. */
cudaError_t fc_rt_cudevice(int ordinal, CUdevice *dev);
/* The ordinal of a CUdevice (after fc_rt_init); cudaErrorInvalidDevice if none. Not recorded. */
cudaError_t fc_rt_ordinal(CUdevice dev, int *ordinal);

/* Stores a driver attribute's int into a struct field of sizeof(int) or sizeof(size_t) bytes
 * (size_t fields hold sizes, which the driver reports as non-negative ints). */
void fc_rt_set_field(void *base, size_t offset, size_t size, int v);

/* Records e as the thread's last error if it is a failure (sticky if it is one); returns e. */
cudaError_t fc_rt_ret(cudaError_t e);
/* NVIDIA's CUresult -> cudaError_t mapping (same value where the runtime names it, else
 * cudaErrorUnknown), not recorded. */
cudaError_t fc_rt_map(CUresult r);
/* fc_rt_map, then fc_rt_ret. */
cudaError_t fc_rt_err(CUresult r);
/* For generated stubs (one per line of unsupported.txt): records and returns e, the error the
 * documentation gives for what is not simulated; with FAKECUDA_TRACE_UNSUPPORTED set, also
 * names the function and why on stderr. */
cudaError_t fc_rt_unsupported(const char *api, cudaError_t e, const char *why);

/* The CUkernel of a registered kernel's host stub, loading its module on first use (after
 * fc_rt_ctx); cudaErrorInvalidDeviceFunction for an unknown stub. Not recorded. */
cudaError_t fc_rt_kernel(const void *host_fun, CUkernel *out);
/* Whether a launch's grid and block are valid (else the runtime's cudaErrorInvalidConfiguration,
 * before the driver sees it, as NVIDIA's runtime answers). */
int fc_rt_config_ok(dim3 grid, dim3 block);
/* The host stub of a kernel fc_rt_kernel returned, or NULL. */
const void *fc_rt_host_fun(CUkernel k);
/* The device address and size of a variable registered by __cudaRegisterVar (its host shadow's
 * address), loading its module on first use; cudaErrorInvalidSymbol if none. Not recorded. */
cudaError_t fc_rt_symbol(const void *symbol, CUdeviceptr *dptr, size_t *size);
/* The device address of `count` bytes at `offset` into a variable, for a copy to it (to_symbol)
 * or from it of that kind: cudaErrorInvalidValue outside the variable,
 * cudaErrorInvalidMemcpyDirection for a kind whose variable side is the host. Not recorded. */
cudaError_t fc_rt_symbol_span(int to_symbol, const void *symbol, size_t count, size_t offset,
                              enum cudaMemcpyKind kind, void **var);

/* A cudaMemcpy3DParms as the driver's CUDA_MEMCPY3D (cudaMemcpyDefault resolved from where the
 * pointers live; a CUDA array's position and the extent in elements, as documented, made bytes).
 * Not recorded. */
cudaError_t fc_rt_copy3d(const struct cudaMemcpy3DParms *p, CUDA_MEMCPY3D *m);
/* A CUDA array's driver descriptor and, if elem is not NULL, its element's bytes (rt_array.c);
 * cudaErrorInvalidResourceHandle for what is not a live array. Not recorded. */
cudaError_t fc_rt_array_desc(cudaArray_const_t array, CUDA_ARRAY3D_DESCRIPTOR *d, size_t *elem);

typedef struct {
    int value;
    int sticky; /* the header says the process must be restarted */
    const char *name;
    const char *description;
} fc_rt_error_desc;
extern const fc_rt_error_desc fc_rt_error_table[];
extern const size_t fc_rt_nerrors;

#endif
