/* Host implementations of the kernels of vecadd.cu and threads.cu, loaded by the simulated
 * driver through FAKECUDA_HOST_KERNELS (see tests/fakecuda/fakecuda.h). Each covers exactly the
 * threads its launch would run, so a wrong grid shows up as wrong results. */
#include "fakecuda.h"

static unsigned fc_threads(const fakecuda_launch *l)
{
    return l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
}

/* vecadd(const float *a, const float *b, float *c, int n) */
void fakecuda_kernel__Z6vecaddPKfS0_Pfi(void **p, const fakecuda_launch *l)
{
    const float *a = *(const float **)p[0], *b = *(const float **)p[1];
    float *c = *(float **)p[2];
    int n = *(int *)p[3];
    for (unsigned i = 0; i < fc_threads(l) && (int)i < n; i++)
        c[i] = a[i] + b[i];
}

/* scale<float>(float *x, float factor, int n) */
void fakecuda_kernel__Z5scaleIfEvPT_S0_i(void **p, const fakecuda_launch *l)
{
    float *x = *(float **)p[0];
    float f = *(float *)p[1];
    int n = *(int *)p[2];
    for (unsigned i = 0; i < fc_threads(l) && (int)i < n; i++)
        x[i] *= f;
}

/* tick(int *runs): one increment per launch; launches may run concurrently. */
void fakecuda_kernel__Z4tickPi(void **p, const fakecuda_launch *l)
{
    (void)l;
    __atomic_fetch_add(*(int **)p[0], 1, __ATOMIC_SEQ_CST);
}

/* saxpy(float a, const float *x, float *y, int n) of features.cu */
void fakecuda_kernel__Z5saxpyfPKfPfi(void **p, const fakecuda_launch *l)
{
    float a = *(float *)p[0];
    const float *x = *(const float **)p[1];
    float *y = *(float **)p[2];
    int n = *(int *)p[3];
    for (unsigned i = 0; i < fc_threads(l) && (int)i < n; i++)
        y[i] = a * x[i] + y[i];
}

/* bump(int *p) of features.cu: one increment per thread. */
void fakecuda_kernel__Z4bumpPi(void **p, const fakecuda_launch *l)
{
    __atomic_fetch_add(*(int **)p[0], (int)fc_threads(l), __ATOMIC_SEQ_CST);
}
