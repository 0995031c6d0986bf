/* rt_memory: the runtime's other ways to get memory, each used once with a known size, so that
 * a trace of it can be checked call by call on any runtime (ours or NVIDIA's libcudart.so.13):
 *
 *   cudaMallocAsync        1048583 bytes (1 MiB + 7) on a stream, then cudaFreeAsync
 *   the default pool       of device 0 (cudaDeviceGetDefaultMemPool) told to keep 64 MiB
 *                          (cudaMemPoolAttrReleaseThreshold); cudaMallocFromPoolAsync 2097152
 *                          bytes from it, cudaFreeAsync, cudaMemPoolTrimTo 0
 *   cudaMalloc             1048576 bytes (the device side of the copies)
 *   cudaMallocHost         1048576 bytes          -> pinned
 *   cudaHostAlloc          1048576 bytes, default -> pinned
 *   cudaHostRegister       1048576 bytes of malloc'd memory -> registered (pinned for copies)
 *
 * Copies (all on the stream, 1048576 bytes each): registered -> device, device -> cudaHostAlloc
 * memory, cudaMallocHost memory -> device, device -> registered memory; the bytes that come back
 * are compared with what went out. One cudaStreamSynchronize after each pair. Then everything is
 * released: cudaHostUnregister, cudaFreeHost twice, cudaFree, the stream destroyed.
 * Prints "rt_memory: ok" and exits 0. */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "wl_common.h"

#define MiB ((size_t)1 << 20)

int main(void)
{
    cudaStream_t s;
    WL_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    void *a = NULL;
    WL_RT(cudaMallocAsync(&a, MiB + 7, s));
    WL_RT(cudaFreeAsync(a, s));

    cudaMemPool_t pool;
    WL_RT(cudaDeviceGetDefaultMemPool(&pool, 0));
    uint64_t keep = 64 * MiB;
    WL_RT(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    void *b = NULL;
    WL_RT(cudaMallocFromPoolAsync(&b, 2 * MiB, pool, s));
    WL_RT(cudaFreeAsync(b, s));
    WL_RT(cudaStreamSynchronize(s));
    WL_RT(cudaMemPoolTrimTo(pool, 0));

    void *dev, *pinned, *alloced;
    WL_RT(cudaMalloc(&dev, MiB));
    WL_RT(cudaMallocHost(&pinned, MiB));
    WL_RT(cudaHostAlloc(&alloced, MiB, cudaHostAllocDefault));
    unsigned char *reg = malloc(MiB);
    if (!reg)
        WL_DIE("malloc of %zu bytes failed", MiB);
    WL_RT(cudaHostRegister(reg, MiB, cudaHostRegisterDefault));

    for (size_t i = 0; i < MiB; i++)
        reg[i] = (unsigned char)(i * 7 + 1);
    WL_RT(cudaMemcpyAsync(dev, reg, MiB, cudaMemcpyHostToDevice, s));
    WL_RT(cudaMemcpyAsync(alloced, dev, MiB, cudaMemcpyDeviceToHost, s));
    WL_RT(cudaStreamSynchronize(s));
    if (memcmp(alloced, reg, MiB))
        WL_DIE("registered -> device -> cudaHostAlloc memory: the bytes differ");

    memset(pinned, 0x5a, MiB);
    WL_RT(cudaMemcpyAsync(dev, pinned, MiB, cudaMemcpyHostToDevice, s));
    WL_RT(cudaMemcpyAsync(reg, dev, MiB, cudaMemcpyDeviceToHost, s));
    WL_RT(cudaStreamSynchronize(s));
    for (size_t i = 0; i < MiB; i++)
        if (reg[i] != 0x5a)
            WL_DIE("cudaMallocHost -> device -> registered memory: byte %zu is %u", i, reg[i]);

    WL_RT(cudaHostUnregister(reg));
    free(reg);
    WL_RT(cudaFreeHost(alloced));
    WL_RT(cudaFreeHost(pinned));
    WL_RT(cudaFree(dev));
    WL_RT(cudaStreamDestroy(s));
    printf("rt_memory: ok\n");
    return 0;
}
