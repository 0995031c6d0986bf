/* GPU timing of kernels, copies and sets (CUTRACE_GPU_TIMING).
 *
 * Not implemented yet: ct_gpu_begin leaves c->gpu_ev0 NULL and ct_gpu_end records nothing, so
 * traces carry CPU times only. The hooks are where the event pair of each operation will be
 * recorded on its stream (see preload/README.md, "GPU timing"). */
#ifndef CT_GPU_H
#define CT_GPU_H

#include <cuda.h>
#include "ct_trace.h"

void ct_gpu_begin(ct_call *c, uint64_t stream);
void ct_gpu_end(ct_call *c, CUresult r, unsigned kind, uint32_t device);

#endif
