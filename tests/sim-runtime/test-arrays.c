/* The runtime's CUDA arrays, texture and surface objects (rt_array.c, rt_memory.c) on the
 * simulated driver: copies in and out byte-exact (2D, the deprecated count forms, cudaMemcpy3D
 * with positions and extents in elements), channel descriptors, and textures sampled through the
 * driver's fakecuda_tex_fetch (looked up in the libcuda.so.1 the runtime loaded). */
#include "simrt.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "../fakecuda.h"

/* cudaMemcpyToArray and cudaMemcpyFromArray are deprecated but exported, and samples call them */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define CU(call) ASSERT_INT((call), ==, cudaSuccess)

TEST_IMPL(arrays_copies_and_texture_objects)
{
    if (simrt_setup(NULL))
        return 1;
    enum { W = 7, H = 5 };
    float img[H][W], back[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y][x] = (float)(y * 100 + x);
    struct cudaChannelFormatDesc fd = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t a;
    CU(cudaMallocArray(&a, &fd, W, H, 0));
    CU(cudaMemcpyToArray(a, 0, 0, img, sizeof img, cudaMemcpyHostToDevice)); /* whole rows */
    memset(back, 0, sizeof back);
    CU(cudaMemcpy2DFromArray(back, W * 4, a, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
    ASSERT_INT(memcmp(img, back, sizeof img), ==, 0);
    /* the per-thread-default-stream form (what --default-stream per-thread programs call) */
    cudaError_t CUDARTAPI cudaMemcpy2DFromArray_ptds(void *, size_t, cudaArray_const_t, size_t, size_t, size_t,
                                                     size_t, enum cudaMemcpyKind);
    memset(back, 0, sizeof back);
    CU(cudaMemcpy2DFromArray_ptds(back, W * 4, a, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
    ASSERT_INT(memcmp(img, back, sizeof img), ==, 0);
    /* a 3x2 block at element (2, 1) from device memory, then one row's tail with the count form */
    float blk[2][3] = {{-1, -2, -3}, {-4, -5, -6}}, row[4];
    float *dblk;
    CU(cudaMalloc((void **)&dblk, sizeof blk));
    CU(cudaMemcpy(dblk, blk, sizeof blk, cudaMemcpyHostToDevice));
    CU(cudaMemcpy2DToArray(a, 2 * 4, 1, dblk, 3 * 4, 3 * 4, 2, cudaMemcpyDefault));
    CU(cudaMemcpyFromArray(row, a, 3 * 4, 2, sizeof row, cudaMemcpyDeviceToHost));
    ASSERT(row[0] == -5 && row[1] == -6 && row[2] == 205 && row[3] == 206);
    ASSERT_INT(cudaMemcpyFromArray(row, a, 4, 0, W * 4, cudaMemcpyDeviceToHost), ==, cudaErrorInvalidValue);
    struct cudaChannelFormatDesc got;
    struct cudaExtent ext;
    unsigned flags;
    CU(cudaArrayGetInfo(&got, &ext, &flags, a));
    ASSERT(got.x == 32 && got.y == 0 && got.f == cudaChannelFormatKindFloat);
    ASSERT(ext.width == W && ext.height == H && ext.depth == 0 && flags == 0);

    /* a layered uchar4 array through cudaMemcpy3D: positions and extents in elements */
    enum { LW = 4, LH = 3, LL = 5 };
    unsigned char in[LL][LH][LW][4], out[LL][LH][LW][4];
    for (size_t i = 0; i < sizeof in; i++)
        ((unsigned char *)in)[i] = (unsigned char)(i * 13 + 5);
    struct cudaChannelFormatDesc u4 = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    cudaArray_t la;
    CU(cudaMalloc3DArray(&la, &u4, (struct cudaExtent){LW, LH, LL}, cudaArrayLayered));
    struct cudaMemcpy3DParms up = {0};
    up.srcPtr = (struct cudaPitchedPtr){in, LW * 4, LW, LH};
    up.dstArray = la;
    up.extent = (struct cudaExtent){LW, LH, LL};
    up.kind = cudaMemcpyHostToDevice;
    CU(cudaMemcpy3D(&up));
    struct cudaMemcpy3DParms down = {0};
    down.srcArray = la;
    down.dstPtr = (struct cudaPitchedPtr){out, LW * 4, LW, LH};
    down.extent = (struct cudaExtent){LW, LH, LL};
    down.kind = cudaMemcpyDeviceToHost;
    CU(cudaMemcpy3D(&down));
    ASSERT_INT(memcmp(in, out, sizeof in), ==, 0);
    /* element (1, 2) of layer 3 alone, at its position in elements */
    unsigned char px[4];
    down.srcPos = (struct cudaPos){1, 2, 3};
    down.dstPtr = (struct cudaPitchedPtr){px, 4, 1, 1};
    down.extent = (struct cudaExtent){1, 1, 1};
    CU(cudaMemcpy3D(&down));
    ASSERT_INT(memcmp(px, in[3][2][1], 4), ==, 0);
    CU(cudaGetChannelDesc(&got, la));
    ASSERT(got.x == 8 && got.w == 8 && got.f == cudaChannelFormatKindUnsigned);

    /* textures: the driver's sampler, reached as a host kernel would */
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT(drv != NULL);
    fakecuda_float4 (*fetch)(unsigned long long, float, float, float, int);
    *(void **)&fetch = dlsym(drv, "fakecuda_tex_fetch");
    ASSERT(fetch != NULL);
    struct cudaResourceDesc rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = a;
    struct cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.filterMode = cudaFilterModeLinear;
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t t;
    CU(cudaCreateTextureObject(&t, &rd, &td, NULL));
    /* halfway between elements (0, 0) and (1, 0), and a clamped corner */
    ASSERT_NEAR(fetch(t, 1.0f, 0.5f, 0, 0).x, (img[0][0] + img[0][1]) / 2, 1e-6);
    ASSERT_NEAR(fetch(t, 99.0f, 99.0f, 0, 0).x, img[H - 1][W - 1], 0);
    CU(cudaDestroyTextureObject(t));
    rd.res.array.array = la;
    td.readMode = cudaReadModeNormalizedFloat;
    td.filterMode = cudaFilterModePoint;
    CU(cudaCreateTextureObject(&t, &rd, &td, NULL));
    fakecuda_float4 c = fetch(t, 1.5f, 2.5f, 3, 0);
    ASSERT_NEAR(c.x, in[3][2][1][0] / 255.0f, 1e-7);
    ASSERT_NEAR(c.w, in[3][2][1][3] / 255.0f, 1e-7);
    CU(cudaDestroyTextureObject(t));
    /* linear filtering of integers read as integers is invalid; so is a 3-channel format */
    td.readMode = cudaReadModeElementType;
    td.filterMode = cudaFilterModeLinear;
    ASSERT_INT(cudaCreateTextureObject(&t, &rd, &td, NULL), ==, cudaErrorInvalidValue);
    struct cudaChannelFormatDesc three = cudaCreateChannelDesc(8, 8, 8, 0, cudaChannelFormatKindUnsigned);
    cudaArray_t bad;
    ASSERT_INT(cudaMallocArray(&bad, &three, 4, 4, 0), ==, cudaErrorInvalidChannelDescriptor);
    cudaSurfaceObject_t s;
    ASSERT_INT(cudaCreateSurfaceObject(&s, &rd), ==, cudaErrorInvalidValue); /* no surface flag */
    cudaGetLastError();

    CU(cudaFreeArray(la));
    CU(cudaFreeArray(a));
    CU(cudaFree(dblk));
    dlclose(drv);
    return 0;
}
