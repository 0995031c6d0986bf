#include "ct_gpu.h"

void ct_gpu_begin(ct_call *c, uint64_t stream)
{
    (void)stream;
    c->gpu_ev0 = NULL;
}

void ct_gpu_end(ct_call *c, CUresult r, unsigned kind, uint32_t device)
{
    (void)c, (void)r, (void)kind, (void)device;
}
