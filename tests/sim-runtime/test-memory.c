/* The runtime's memory API on the simulated driver, in process. */
#include "simrt.h"

#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

/* cudaMemcpyDefault copies correctly in all four directions, whatever kind of memory each side
 * is; cudaPointerGetAttributes classifies each kind as the driver does. */
TEST_IMPL(memcpy_default_all_directions)
{
    if (simrt_setup(NULL))
        return 1;
    enum { N = 4096 };
    unsigned char *dev, *dev2, *pinned, *managed, *pageable = malloc(N), *back = malloc(N);
    CU(cudaMalloc((void **)&dev, N));
    CU(cudaMalloc((void **)&dev2, N));
    CU(cudaMallocHost((void **)&pinned, N));
    CU(cudaMallocManaged((void **)&managed, N, cudaMemAttachGlobal));
    for (int i = 0; i < N; i++)
        pageable[i] = (unsigned char)(i * 7 + 1);
    CU(cudaMemcpy(dev, pageable, N, cudaMemcpyDefault));      /* host -> device */
    CU(cudaMemcpy(dev2, dev, N, cudaMemcpyDefault));          /* device -> device */
    CU(cudaMemcpy(pinned, dev2, N, cudaMemcpyDefault));       /* device -> pinned host */
    CU(cudaMemcpy(managed, pinned, N, cudaMemcpyDefault));    /* host -> managed */
    CU(cudaMemcpy(back, managed, N, cudaMemcpyDefault));      /* managed -> host */
    int diff = 0;
    for (int i = 0; i < N; i++)
        diff += back[i] != pageable[i] || pinned[i] != pageable[i];
    ASSERT_INT(diff, ==, 0);
    memset(back, 0, N);
    CU(cudaMemcpy(back, pageable, N, cudaMemcpyDefault));     /* host -> host */
    ASSERT_INT(memcmp(back, pageable, N), ==, 0);
    ASSERT_INT(cudaMemcpy(back, dev, N, (enum cudaMemcpyKind)7), ==, cudaErrorInvalidMemcpyDirection);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorInvalidMemcpyDirection);

    struct cudaPointerAttributes a;
    CU(cudaPointerGetAttributes(&a, dev + 100));
    ASSERT_INT(a.type, ==, cudaMemoryTypeDevice);
    ASSERT_INT(a.device, ==, 0);
    ASSERT_UINT((uintptr_t)a.devicePointer, ==, (uintptr_t)(dev + 100));
    CU(cudaPointerGetAttributes(&a, pinned));
    ASSERT_INT(a.type, ==, cudaMemoryTypeHost);
    ASSERT_UINT((uintptr_t)a.hostPointer, ==, (uintptr_t)pinned);
    CU(cudaPointerGetAttributes(&a, managed));
    ASSERT_INT(a.type, ==, cudaMemoryTypeManaged);
    CU(cudaPointerGetAttributes(&a, pageable));
    ASSERT_INT(a.type, ==, cudaMemoryTypeUnregistered);

    CU(cudaFree(dev));
    CU(cudaFree(dev2));
    CU(cudaFreeHost(pinned));
    CU(cudaFree(managed));
    free(pageable);
    free(back);
    return 0;
}

/* cudaMallocAsync / cudaMemsetAsync / cudaMemcpyAsync / cudaFreeAsync in one stream's order. */
TEST_IMPL(malloc_async_in_stream_order)
{
    if (simrt_setup(NULL))
        return 1;
    enum { N = 1 << 16 };
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *d, *h;
    CU(cudaMallocHost((void **)&h, N));
    CU(cudaMallocAsync((void **)&d, N, s));
    ASSERT(d != NULL);
    CU(cudaMemsetAsync(d, 0x5a, N, s));
    CU(cudaMemsetAsync(d + 16, 0x01, 16, s));
    CU(cudaMemcpyAsync(h, d, N, cudaMemcpyDeviceToHost, s));
    CU(cudaFreeAsync(d, s));
    CU(cudaStreamSynchronize(s));
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += h[i];
    ASSERT_INT(sum, ==, (long)(N - 16) * 0x5a + 16);
    CU(cudaStreamDestroy(s));
    CU(cudaFreeHost(h));
    return 0;
}

/* A pitched 2D copy moves only width bytes of each row, both ways. */
TEST_IMPL(memcpy2d_pitched_rows)
{
    if (simrt_setup(NULL))
        return 1;
    enum { W = 24, H = 5, HP = 32 };
    unsigned char host[H][HP], out[H][HP];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < HP; x++)
            host[y][x] = (unsigned char)(y * 40 + x);
    void *d;
    size_t pitch;
    CU(cudaMallocPitch(&d, &pitch, W, H));
    ASSERT_UINT(pitch, >=, W);
    CU(cudaMemcpy2D(d, pitch, host, HP, W, H, cudaMemcpyHostToDevice));
    memset(out, 0xee, sizeof out);
    CU(cudaMemcpy2D(out, HP, d, pitch, W, H, cudaMemcpyDefault));
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < HP; x++)
            bad += out[y][x] != (x >= W ? 0xee : host[y][x]);
    ASSERT_INT(bad, ==, 0);
    ASSERT_INT(cudaMemcpy2D(out, 8, d, pitch, W, H, cudaMemcpyDefault), ==, cudaErrorInvalidPitchValue);
    CU(cudaFree(d));
    return 0;
}

/* cudaMemset fills bytes; a 2D fill touches only its rectangle. */
TEST_IMPL(memset_1d_and_2d)
{
    if (simrt_setup(NULL))
        return 1;
    enum { P = 64, H = 4 };
    unsigned char out[H][P];
    void *d;
    CU(cudaMalloc(&d, sizeof out));
    CU(cudaMemset(d, 0x11, sizeof out));
    SIMRT_CALL_OR_SKIP(cudaMemset2D((char *)d + 3, P, 0xab, 5, H - 1), "cuMemsetD2D8");
    CU(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < P; x++)
            bad += out[y][x] != (x >= 3 && x < 8 && y < H - 1 ? 0xab : 0x11);
    ASSERT_INT(bad, ==, 0);
    CU(cudaFree(d));
    return 0;
}

/* The driver's CUDA_ERROR_OUT_OF_MEMORY reaches the program as cudaErrorMemoryAllocation, a
 * non-sticky error: the next allocation works. */
TEST_IMPL(out_of_memory_maps_and_recovers)
{
    setenv("FAKECUDA_MEM_LIMIT", "64M", 1);
    if (simrt_setup(NULL))
        return 1;
    void *big = NULL, *small = NULL;
    ASSERT_INT(cudaMalloc(&big, (size_t)1 << 30), ==, cudaErrorMemoryAllocation);
    ASSERT(big == NULL);
    ASSERT_INT(cudaPeekAtLastError(), ==, cudaErrorMemoryAllocation);
    ASSERT_INT(cudaGetLastError(), ==, cudaErrorMemoryAllocation);
    CU(cudaMalloc(&small, 1 << 20));
    ASSERT_INT(cudaGetLastError(), ==, cudaSuccess);
    size_t free_b, total_b;
    CU(cudaMemGetInfo(&free_b, &total_b));
    ASSERT_UINT(free_b, <=, total_b);
    CU(cudaFree(small));
    return 0;
}

/* Registered pageable memory becomes pinned host memory the device can address. */
TEST_IMPL(host_register_and_device_pointer)
{
    if (simrt_setup(NULL))
        return 1;
    enum { N = 8192 };
    unsigned char *buf = aligned_alloc(4096, N), *mapped_alloc;
    memset(buf, 0, N);
    struct cudaPointerAttributes a;
    CU(cudaPointerGetAttributes(&a, buf));
    ASSERT_INT(a.type, ==, cudaMemoryTypeUnregistered);
    CU(cudaHostRegister(buf, N, cudaHostRegisterMapped));
    CU(cudaPointerGetAttributes(&a, buf + 10));
    ASSERT_INT(a.type, ==, cudaMemoryTypeHost);
    void *dptr = NULL;
    CU(cudaHostGetDevicePointer(&dptr, buf, 0));
    ASSERT(dptr != NULL);
    CU(cudaMemset(dptr, 0x42, N)); /* through the device's view of the same bytes */
    CU(cudaDeviceSynchronize());
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += buf[i];
    ASSERT_INT(sum, ==, 0x42L * N);
    CU(cudaHostUnregister(buf));
    CU(cudaPointerGetAttributes(&a, buf));
    ASSERT_INT(a.type, ==, cudaMemoryTypeUnregistered);
    ASSERT_INT(cudaHostUnregister(buf), ==, cudaErrorHostMemoryNotRegistered);
    free(buf);

    unsigned flags = 0;
    CU(cudaHostAlloc((void **)&mapped_alloc, N, cudaHostAllocMapped | cudaHostAllocPortable));
    CU(cudaHostGetFlags(&flags, mapped_alloc));
    ASSERT_UINT(flags & (cudaHostAllocMapped | cudaHostAllocPortable), ==, cudaHostAllocMapped | cudaHostAllocPortable);
    CU(cudaFreeHost(mapped_alloc));
    return 0;
}
