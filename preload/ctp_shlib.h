/* SHLIB records (trace-format/FORMAT.md section 4.6): which CUDA runtime (libcudart.so*), driver
 * (libcuda.so*), cuBLAS, cuBLASLt and cuDNN libraries (libcudnn*: cuDNN 9 loads its engines'
 * libraries as it makes a handle, so their records say when: the analyzer's library loading)
 * the process has mapped, each object's resolved path and
 * GNU build id, once per object per trace file. A program may run NVIDIA's runtime from the
 * toolkit, the copy a Python wheel ships or a simulation; only the file tells.
 *
 * Contract: ctp_shlib_scan walks the loaded objects with dl_iterate_phdr, which takes the
 * dynamic loader's lock, so it is called only off the hot path: when a thread registers, when
 * a device is first described, and after a kernel lookup returns a handle not seen before (a
 * module or library just loaded: cuBLAS is loaded after the trace starts and looks its
 * kernels up then). A scan that
 * finds no object loaded since the previous one stops at the first object. Leaves errno as it
 * was. Safe from any thread. */
#ifndef CTP_SHLIB_H
#define CTP_SHLIB_H

#include "ctp_state.h"

/* Appends to th's ring a SHLIB record for each CUDA library mapped now and not yet described
 * in this trace file. */
void ctp_shlib_scan(ctp_thread *th);
/* Forgets what was described (a forked child starts a new file). */
void ctp_shlib_reset(void);
/* In a forked child, before ctp_shlib_reset: the scan's lock may have been held by a thread the
 * child does not have. */
void ctp_shlib_fork_child(void);

#endif
