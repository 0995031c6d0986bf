/* Device code for driver_api, built by nvcc into a cubin (loaded with cuModuleLoadData) and a
 * fatbin (loaded with cuLibraryLoadData); neither is linked into a program. Device names:
 * vec_add (extern "C") and scale<float> = _Z5scaleIfEvPT_S0_i. */
#include "wl_kernels.h"

extern "C" __global__ void vec_add(float *c, const float *a, const float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

template <typename T> __global__ void scale(T *x, T s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = s * x[i];
}

template __global__ void scale<float>(float *, float, int);
