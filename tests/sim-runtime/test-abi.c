/* nvcc's host ABI driven by hand, in process: registration of a module (a text image in the
 * simulated driver's format, behind nvcc's fatbin wrapper), kernel handles, launch
 * configuration, launches and their configuration errors, unregistration. */
#include "simrt.h"

#include <cuda_runtime_api.h>
#include <fatbinary_section.h>
#include <stdlib.h>

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

/* What nvcc's generated code declares (crt/host_runtime.h, crt/device_functions.h), in C. */
void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin);
void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle);
void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                      const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                      dim3 *bDim, dim3 *gDim, int *wSize);
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                               struct CUstream_st *stream);
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream);

static const char fc_image[] = "fakecuda-module 1\nkernel _Z4tickPi 8\n";
static const __fatBinC_Wrapper_t fc_wrapper = {FATBINC_MAGIC, FATBINC_VERSION,
                                               (const unsigned long long *)fc_image, NULL};

/* Stands for nvcc's host stub: only its address matters. */
static void fc_tick_stub(int *runs)
{
    (void)runs;
}

TEST_IMPL(host_abi_register_launch_unregister)
{
    char hk[4096];
    setenv("FAKECUDA_HOST_KERNELS", ctt_path(hk, "tests/sim-runtime/host_kernels.so"), 1);
    if (simrt_setup(NULL))
        return 1;
    void **h = __cudaRegisterFatBinary((void *)&fc_wrapper);
    __cudaRegisterFunction(h, (const char *)fc_tick_stub, (char *)"_Z4tickPi", "_Z4tickPi", -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(h);

    const char *name = NULL;
    CU(cudaFuncGetName(&name, (const void *)fc_tick_stub));
    ASSERT_STR(name, "_Z4tickPi");
    cudaKernel_t k1 = NULL, k2 = NULL;
    CU(__cudaGetKernel(&k1, (const void *)fc_tick_stub));
    CU(__cudaGetKernel(&k2, (const void *)fc_tick_stub));
    ASSERT(k1 != NULL && k1 == k2);

    /* <<<g, b, s, st>>>: pushed at the call site, popped in the stub, nested pairs in order */
    cudaStream_t st;
    CU(cudaStreamCreate(&st));
    ASSERT_UINT(__cudaPushCallConfiguration((dim3){3, 1, 1}, (dim3){64, 1, 1}, 128, st), ==, 0);
    ASSERT_UINT(__cudaPushCallConfiguration((dim3){5, 1, 1}, (dim3){32, 1, 1}, 0, NULL), ==, 0);
    dim3 g, b;
    size_t shmem;
    cudaStream_t s = (cudaStream_t)1;
    CU(__cudaPopCallConfiguration(&g, &b, &shmem, &s));
    ASSERT_UINT(g.x, ==, 5);
    ASSERT(s == NULL);
    CU(__cudaPopCallConfiguration(&g, &b, &shmem, &s));
    ASSERT_UINT(g.x, ==, 3);
    ASSERT_UINT(b.x, ==, 64);
    ASSERT_UINT(shmem, ==, 128);
    ASSERT(s == st);
    ASSERT_INT(__cudaPopCallConfiguration(&g, &b, &shmem, &s), ==, cudaErrorMissingConfiguration);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorMissingConfiguration);

    int *runs, host = 0;
    CU(cudaMalloc((void **)&runs, sizeof(int)));
    CU(cudaMemset(runs, 0, sizeof(int)));
    void *args[] = {&runs};
    CU(__cudaLaunchKernel(k1, g, b, args, shmem, s));
    CU(cudaLaunchKernel((const void *)fc_tick_stub, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, st));
    ASSERT_INT(cudaLaunchKernel((const void *)fc_tick_stub, (dim3){0, 1, 1}, (dim3){1, 1, 1}, args, 0, st), ==,
               cudaErrorInvalidConfiguration);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidConfiguration);
    ASSERT_INT(cudaLaunchKernel((const void *)fc_tick_stub, (dim3){1, 1, 1}, (dim3){32, 32, 2}, args, 0, st), ==,
               cudaErrorInvalidConfiguration);
    CU(cudaStreamSynchronize(st));
    CU(cudaMemcpy(&host, runs, sizeof(int), cudaMemcpyDeviceToHost));
    ASSERT_INT(host, ==, 2);

    struct cudaFuncAttributes fa;
    CU(cudaFuncGetAttributes(&fa, (const void *)fc_tick_stub));
    ASSERT_INT(fa.maxThreadsPerBlock, >, 0);

    CU(cudaStreamDestroy(st));
    CU(cudaFree(runs));
    __cudaUnregisterFatBinary(h);
    ASSERT_INT(cudaFuncGetName(&name, (const void *)fc_tick_stub), ==, cudaErrorInvalidDeviceFunction);
    return 0;
}
