// Device code for the module-loading test: only its compiled form matters (kernel names,
// parameter layouts); the simulation never runs it.
extern "C" __global__ void add_one(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0f;
}

__global__ void scale(double *y, double a, long n)
{
    long i = blockIdx.x;
    if (i < n)
        y[i] *= a;
}

__device__ float gscale = 3.5f;
__device__ int counter;
__constant__ float coeffs[16] = {1, 2, 3};

__global__ void use_globals(float *x)
{
    x[0] = gscale * coeffs[1] + counter;
}
