/* libworkload_kernels.so: host implementations of the workload kernels, for the simulated CUDA
 * (tests/fakecuda/fakecuda.h). With FAKECUDA_HOST_KERNELS=.../libworkload_kernels.so the
 * simulated driver calls fakecuda_kernel_NAME in place of device kernel NAME (its mangled name),
 * in stream order, so the workloads compute real results their own checks can verify.
 *
 * Each function unpacks the launch's kernelParams (params[i] points at argument i, as for
 * cuLaunchKernel) and runs the arithmetic in wl_kernels.h over the whole problem, whatever the
 * grid. Names are the kernels' device names as listed by `cuobjdump -symbols`; a renamed or
 * re-typed kernel must be renamed here too, which the workloads-run suite detects (its results
 * stop verifying). */
#include "../fakecuda/fakecuda.h"
#include "wl_kernels.h"

#define ARG(type, i) (*(type *)params[(i)])
#define HOST_KERNEL(name)                                                                      \
    void fakecuda_kernel_##name(void **params, const fakecuda_launch *launch);                 \
    void fakecuda_kernel_##name(void **params, const fakecuda_launch *launch)

/* ---- train_loop ---- */

/* reduce_batch(float *x, const float *batch, int rows) */
HOST_KERNEL(reduce_batch)
{
    (void)launch;
    wl_host_reduce_batch(ARG(float *, 0), ARG(const float *, 1), ARG(int, 2));
}

/* nn::forward_linear<float>(float *y, const float *x, const float *w, int n) */
HOST_KERNEL(_ZN2nn14forward_linearIfEEvPT_PKS1_S4_i)
{
    (void)launch;
    wl_host_forward_linear(ARG(float *, 0), ARG(const float *, 1), ARG(const float *, 2),
                           ARG(int, 3));
}

/* forward_relu(float *a, const float *y, int n) */
HOST_KERNEL(_Z12forward_reluPfPKfi)
{
    (void)launch;
    wl_host_forward_relu(ARG(float *, 0), ARG(const float *, 1), ARG(int, 2));
}

/* loss_forward(float *loss, const float *a, int n) */
HOST_KERNEL(_Z12loss_forwardPfPKfi)
{
    (void)launch;
    wl_host_loss_forward(ARG(float *, 0), ARG(const float *, 1), ARG(int, 2));
}

/* loss_backward(float *g, const float *a, int n) */
HOST_KERNEL(_Z13loss_backwardPfPKfi)
{
    (void)launch;
    wl_host_loss_backward(ARG(float *, 0), ARG(const float *, 1), ARG(int, 2));
}

/* backward_relu(float *gy, const float *g, const float *y, int n) */
HOST_KERNEL(_Z13backward_reluPfPKfS1_i)
{
    (void)launch;
    wl_host_backward_relu(ARG(float *, 0), ARG(const float *, 1), ARG(const float *, 2),
                          ARG(int, 3));
}

/* nn::backward_linear<float>(float *gx, float *gw, const float *gy, const float *x,
 *                            const float *w, int n) */
HOST_KERNEL(_ZN2nn15backward_linearIfEEvPT_S2_PKS1_S4_S4_i)
{
    (void)launch;
    wl_host_backward_linear(ARG(float *, 0), ARG(float *, 1), ARG(const float *, 2),
                            ARG(const float *, 3), ARG(const float *, 4), ARG(int, 5));
}

/* nn::sgd_update<float>(float *w, const float *gw, int n) */
HOST_KERNEL(_ZN2nn10sgd_updateIfEEvPT_PKS1_i)
{
    (void)launch;
    wl_host_sgd_update(ARG(float *, 0), ARG(const float *, 1), ARG(int, 2));
}

/* train_step(float *w, float *gw, float *y, float *a, float *g, float *loss,
 *            const float *batch, int rows, int layers), extern "C": the step's kernels in their
 * order, as train_loop launches them without --fuse */
HOST_KERNEL(train_step)
{
    (void)launch;
    wl_host_train_step(ARG(float *, 0), ARG(float *, 1), ARG(float *, 2), ARG(float *, 3),
                       ARG(float *, 4), ARG(float *, 5), ARG(const float *, 6), ARG(int, 7),
                       ARG(int, 8));
}

/* ---- threads, fork_exec, dies: affine<float>(float *x, float a, float b, int n) ---- */
HOST_KERNEL(_Z6affineIfEvPT_S0_S0_i)
{
    (void)launch;
    wl_host_affine(ARG(float *, 0), ARG(float, 1), ARG(float, 2), ARG(int, 3));
}

/* ---- driver_api ---- */

/* vec_add(float *c, const float *a, const float *b, int n), extern "C" */
HOST_KERNEL(vec_add)
{
    (void)launch;
    wl_host_vec_add(ARG(float *, 0), ARG(const float *, 1), ARG(const float *, 2), ARG(int, 3));
}

/* scale<float>(float *x, float s, int n) */
HOST_KERNEL(_Z5scaleIfEvPT_S0_i)
{
    (void)launch;
    wl_host_scale(ARG(float *, 0), ARG(float, 1), ARG(int, 2));
}
