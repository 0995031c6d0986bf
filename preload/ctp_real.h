/* Finding and calling the real CUDA driver and runtime.
 *
 * libcutrace carries the soname libcuda.so.1, so the dynamic loader hands it to every program
 * linked against the driver and to every dlopen("libcuda.so.1"). The real driver is therefore
 * opened here by absolute path with RTLD_LOCAL (so its symbols never become global and never
 * shadow cutrace's): CUTRACE_LIBCUDA if set, else the directories of LD_LIBRARY_PATH, the
 * ld.so cache and the usual driver directories (distributions, NVIDIA containers, WSL), skipping
 * any candidate that is this very file (same st_dev/st_ino, or the same cuGetProcAddress_v2).
 *
 * The runtime (libcudart.so.13) is not replaced, only interposed: cutrace's cuda* and __cuda*
 * exports carry the version node libcudart.so.13 and forward with dlvsym to the next definition
 * of the same name and version (RTLD_NEXT, else the loaded libcudart.so.13 itself, for runtimes
 * that were dlopened with RTLD_LOCAL). */
#ifndef CTP_REAL_H
#define CTP_REAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "ctp_fns.h"

/* Opens the real driver once per process (thread-safe, idempotent). Returns 0, or -1 after
 * printing one warning naming every place searched; wrappers of symbols with no real
 * definition then return CUDA_ERROR_NOT_FOUND. */
int ctp_real_open(void);
/* The real driver's handle (NULL before a successful ctp_real_open). */
void *ctp_real_handle(void);
/* Path of the real driver that was opened ("" before). */
const char *ctp_real_path(void);
/* The real driver's definition of name, or NULL. */
void *ctp_real_sym(const char *name);
/* The real definition of name in the library of that soname (libcudart.so.13, libcublas.so.13,
 * ...), at the version node of that name (or unversioned), or NULL if no library loaded yet
 * defines it. */
void *ctp_lib_sym(const char *name, const char *soname);

/* The function table: every exported driver, runtime and library function by id (CTP_FN_*,
 * ctp_fns.h, generated), its name and flags, the library a runtime or library function forwards
 * to (its soname, NULL for the driver's), and the real definition it forwards to. RUNTIME: its
 * call is the parent of the calls made inside it; LIBRARY: cuBLAS or cuBLASLt; KEEP: recorded
 * outside the windows of a windowed trace too (ctp_capture.h). */
enum { CTP_FN_DRIVER = 1, CTP_FN_RUNTIME = 2, CTP_FN_LIBRARY = 4, CTP_FN_KEEP = 8 };
typedef struct {
    const char *name;
    unsigned flags;
} ctp_fn_info;
extern const ctp_fn_info ctp_fns[];
extern const char *const ctp_fn_soname[];
extern const unsigned ctp_nfns;

extern void *ctp_real_fn[];              /* by function id (ctp_fns.h) */
extern _Atomic int ctp_real_loaded;
void ctp_real_load_all(void);            /* opens the driver, resolves every driver id */
void *ctp_rt_resolve_slow(unsigned fid); /* a runtime or library function's real definition */

static inline void *ctp_resolve(unsigned fid)
{
    if (__builtin_expect(!atomic_load_explicit(&ctp_real_loaded, memory_order_acquire), 0))
        ctp_real_load_all();
    return ctp_real_fn[fid];
}
static inline void *ctp_rt_resolve(unsigned fid)
{
    void *p = __atomic_load_n(&ctp_real_fn[fid], __ATOMIC_RELAXED);
    return p ? p : ctp_rt_resolve_slow(fid);
}
/* The real driver function with this exported name (the tracer's own calls). */
#define CTP_REAL(name) ((__typeof__(&name))ctp_resolve(CTP_FN_##name))

/* cuGetProcAddress / cudaGetDriverEntryPoint: if ok and *pfn is the real driver's entry point of
 * a traced variant, replace it by cutrace's wrapper of that same variant. */
void ctp_gpa_fix(int ok, void **pfn);

#endif
