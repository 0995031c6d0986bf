/* The arithmetic of every workload kernel, written once and compiled three ways: into the device
 * code of the .cu programs (each CUDA thread applies the element function to its index), into
 * libworkload_kernels.so (host implementations the simulated driver runs in place of the device
 * code, see tests/fakecuda/fakecuda.h), and into the programs' own CPU checks. Because the host
 * implementations and the CPU checks run the same wl_host_* loops, a program that verifies its
 * results on the simulation compares like with like; on a real GPU only reductions differ (in
 * summation order), which the programs' tolerances allow for. */
#ifndef WL_KERNELS_H
#define WL_KERNELS_H

#ifdef __CUDACC__
#define WL_HD __host__ __device__ static inline
#else
#define WL_HD static inline
#endif

/* ---- train_loop: a diagonal multi-layer perceptron trained by SGD on a squared error ----
 * The batch is rows x WL_TL_WIDTH floats; the model reduces it to its column means, then each
 * layer computes a = relu(w * x) elementwise. */
#define WL_TL_WIDTH 1024
#define WL_TL_TARGET 0.75f
#define WL_TL_LR 0.5f

/* Element (row, col) of batch number `batch`: deterministic so the CPU check regenerates it. */
WL_HD float wl_tl_batch_value(long long batch, long long row, int col)
{
    return (float)((row * 31 + col * 17 + batch * 7) % 97) / 97.0f;
}

WL_HD float wl_tl_column_mean(const float *batch, int rows, int col)
{
    float s = 0.0f;
    for (int r = 0; r < rows; r++)
        s += batch[(long long)r * WL_TL_WIDTH + col];
    return s / (float)rows;
}

WL_HD float wl_tl_relu(float y) { return y > 0.0f ? y : 0.0f; }
WL_HD float wl_tl_relu_grad(float g, float y) { return y > 0.0f ? g : 0.0f; }
WL_HD float wl_tl_loss_term(float a) { return (a - WL_TL_TARGET) * (a - WL_TL_TARGET); }
WL_HD float wl_tl_loss_grad(float a, int n) { return 2.0f * (a - WL_TL_TARGET) / (float)n; }
WL_HD float wl_tl_sgd(float w, float gw) { return w - WL_TL_LR * gw; }
/* Initial weights of layer l: near 1 so activations neither vanish nor explode. */
WL_HD float wl_tl_init_weight(int layer, int col)
{
    return 0.9f + (float)((layer * 13 + col * 7) % 23) / 100.0f;
}

/* Row by row for the cache; each column still sums in row order, as wl_tl_column_mean does. */
static inline void wl_host_reduce_batch(float *x, const float *batch, int rows)
{
    for (int j = 0; j < WL_TL_WIDTH; j++)
        x[j] = 0.0f;
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < WL_TL_WIDTH; j++)
            x[j] += batch[(long long)r * WL_TL_WIDTH + j];
    for (int j = 0; j < WL_TL_WIDTH; j++)
        x[j] /= (float)rows;
}
static inline void wl_host_forward_linear(float *y, const float *x, const float *w, int n)
{
    for (int j = 0; j < n; j++)
        y[j] = w[j] * x[j];
}
static inline void wl_host_forward_relu(float *a, const float *y, int n)
{
    for (int j = 0; j < n; j++)
        a[j] = wl_tl_relu(y[j]);
}
/* Mean squared error, summed in index order (the device sums in a tree). */
static inline void wl_host_loss_forward(float *loss, const float *a, int n)
{
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += wl_tl_loss_term(a[j]);
    *loss = s / (float)n;
}
static inline void wl_host_loss_backward(float *g, const float *a, int n)
{
    for (int j = 0; j < n; j++)
        g[j] = wl_tl_loss_grad(a[j], n);
}
static inline void wl_host_backward_relu(float *gy, const float *g, const float *y, int n)
{
    for (int j = 0; j < n; j++)
        gy[j] = wl_tl_relu_grad(g[j], y[j]);
}
/* gx may alias gy: each element is read before it is written. */
static inline void wl_host_backward_linear(float *gx, float *gw, const float *gy, const float *x,
                                           const float *w, int n)
{
    for (int j = 0; j < n; j++) {
        float g = gy[j];
        gw[j] = g * x[j];
        gx[j] = g * w[j];
    }
}
static inline void wl_host_sgd_update(float *w, const float *gw, int n)
{
    for (int j = 0; j < n; j++)
        w[j] = wl_tl_sgd(w[j], gw[j]);
}
/* One training step of L layers, kernel by kernel in train_loop's order: its CPU check, and
 * the host form of its fused train_step kernel */
static inline void wl_host_train_step(float *w, float *gw, float *y, float *a, float *g,
                                      float *loss, const float *batch, int rows, int L)
{
    const int W = WL_TL_WIDTH;
    wl_host_reduce_batch(a, batch, rows);
    for (int l = 0; l < L; l++) {
        wl_host_forward_linear(y + l * W, a + l * W, w + l * W, W);
        wl_host_forward_relu(a + (l + 1) * W, y + l * W, W);
    }
    wl_host_loss_forward(loss, a + L * W, W);
    wl_host_loss_backward(g, a + L * W, W);
    for (int l = L - 1; l >= 0; l--) {
        wl_host_backward_relu(g, g, y + l * W, W);
        wl_host_backward_linear(g, gw + l * W, g, a + l * W, w + l * W, W);
    }
    for (int l = 0; l < L; l++)
        wl_host_sgd_update(w + l * W, gw + l * W, W);
}

/* ---- threads and fork_exec: x = a * x + b, exact in floats for the values used ---- */
WL_HD float wl_affine(float x, float a, float b) { return a * x + b; }
static inline void wl_host_affine(float *x, float a, float b, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = wl_affine(x[i], a, b);
}
#ifdef __CUDACC__
/* The kernel itself, shared by the three programs: affine<float> is _Z6affineIfEvPT_S0_S0_i. */
template <typename T> __global__ void affine(T *x, T a, T b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = wl_affine(x[i], a, b);
}
#endif

/* ---- driver_api: c = a + b, and x = s * x ---- */
static inline void wl_host_vec_add(float *c, const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        c[i] = a[i] + b[i];
}
static inline void wl_host_scale(float *x, float s, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = s * x[i];
}

#endif
