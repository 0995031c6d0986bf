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
#ifndef CT_REAL_H
#define CT_REAL_H

/* Opens the real driver once per process (thread-safe, idempotent). Returns 0, or -1 after
 * printing one warning naming every place searched; wrappers of symbols with no real
 * definition then return CUDA_ERROR_NOT_FOUND. */
int ct_real_open(void);
/* The real driver's handle (NULL before a successful ct_real_open). */
void *ct_real_handle(void);
/* Path of the real driver that was opened ("" before). */
const char *ct_real_path(void);
/* The real driver's definition of name, or NULL. */
void *ct_real_sym(const char *name);
/* The real runtime's definition of name at version node libcudart.so.13 (or unversioned), or
 * NULL if no runtime defines it yet. */
void *ct_rt_sym(const char *name);

#endif
