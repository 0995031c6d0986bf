/* libsample_kernels.so: host implementations (tests/fakecuda/fakecuda.h) of the kernels of the
 * cuda-samples the tracer suite runs (test-samples.c), so their own result checks run on the
 * simulation. matrixMul's is left out: its 301 launches of a 320 x 640 x 320 product would take
 * the host tens of seconds; its check then fails alike with and without the tracer. */
#include "../fakecuda/fakecuda.h"

/* asyncAPI's increment_kernel(int *g_data, int inc_value): one element per thread */
void fakecuda_kernel__Z16increment_kernelPii(void **params, const fakecuda_launch *launch);
void fakecuda_kernel__Z16increment_kernelPii(void **params, const fakecuda_launch *launch)
{
    int *data = *(int **)params[0], inc = *(int *)params[1];
    unsigned long n = (unsigned long)launch->grid[0] * launch->block[0];
    for (unsigned long i = 0; i < n; i++)
        data[i] += inc;
}
