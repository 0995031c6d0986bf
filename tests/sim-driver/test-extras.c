/* 2D/3D copies (pitched, from pageable memory), 2D memsets, stream callbacks, context limits
 * and the default pool's attributes. */
#include "sd.h"

#include <stdlib.h>

static int callback_calls;
static CUstream callback_stream;

static void CUDA_CB on_done(CUstream h, CUresult status, void *user)
{
    callback_stream = h;
    callback_calls += status == CUDA_SUCCESS && user == &callback_calls;
}

TEST_IMPL(pitched_copies_memsets_callbacks_limits_pools)
{
    ASSERT_INT(sd_init(), ==, 0);
    size_t pitch;
    CUdeviceptr d;
    CK(cuMemAllocPitch_v2(&d, &pitch, 100, 8, 4));
    ASSERT_UINT(pitch, ==, 512);
    CK(cuMemsetD2D32_v2(d, pitch, 0xdeadbeefu, 25, 8)); /* 100 bytes per row */
    CK(cuMemsetD2D8Async(d + 96, pitch, 0x11, 4, 8, NULL));
    /* Copy rows 2..5, 100 bytes each, into a packed pageable buffer. */
    unsigned char *host = malloc(400);
    CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d, .srcPitch = pitch,
                       .srcY = 2, .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = host,
                       .dstPitch = 100, .WidthInBytes = 100, .Height = 4};
    CK(cuMemcpy2D_v2(&c));
    ASSERT_UINT(*(unsigned *)(host + 300), ==, 0xdeadbeefu);
    ASSERT_INT(host[399], ==, 0x11);
    /* Back, from pageable memory, as a 3D copy of 2 slices of 2 rows. */
    for (int i = 0; i < 400; i++)
        host[i] = (unsigned char)i;
    CUDA_MEMCPY3D c3 = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = host, .srcPitch = 100,
                        .srcHeight = 2, .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = d,
                        .dstPitch = pitch, .dstHeight = 2, .WidthInBytes = 100, .Height = 2,
                        .Depth = 2};
    CK(cuMemcpy3D_v2(&c3));
    unsigned char row3[100];
    CK(cuMemcpyDtoH_v2(row3, d + 3 * pitch, 100));
    ASSERT_INT(row3[0], ==, 300 & 0xff);
    ASSERT_INT(row3[99], ==, 399 & 0xff);

    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CK(cuStreamAddCallback(s, on_done, &callback_calls, 0));
    CK(cuStreamSynchronize(s));
    ASSERT_INT(callback_calls, ==, 1);
    ASSERT(callback_stream == s);

    size_t v;
    CK(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
    ASSERT_UINT(v, ==, 8u << 20);
    CK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
    CK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    ASSERT_UINT(v, ==, 4096);

    CUmemoryPool pool;
    CK(cuDeviceGetDefaultMemPool(&pool, 0));
    cuuint64_t thr = 1 << 30, got;
    CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got));
    ASSERT_UINT(got, ==, 1u << 30);
    CUdeviceptr a;
    CK(cuMemAllocAsync(&a, 3 << 20, s));
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &got));
    ASSERT_UINT(got, ==, 3u << 20);
    CK(cuMemFreeAsync(a, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &got));
    ASSERT_UINT(got, ==, 0);
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &got));
    ASSERT_UINT(got, ==, 3u << 20);
    free(host);
    return 0;
}

/* The runtime header's cudaOccupancyMaxPotentialBlockSizeVariableSMem, written out over
 * cuOccupancyMaxActiveBlocksPerMultiprocessor: every warp multiple from the limit down, the
 * most resident threads (the largest block on a tie), and the grid that fills the device. */
static size_t smem_per_block(int bs) { return (size_t)bs * 32; }

static void reference_block_size(CUfunction f, int limit, CUoccupancyB2DSize smem, int *grid,
                                 int *block)
{
    int best = 0, best_blocks = 0, sms;
    cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0);
    for (int bs = (limit ? limit : 1024) / 32 * 32; bs > 0; bs -= 32) {
        int n = 0;
        cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, bs, smem ? smem(bs) : 0);
        if (n * bs > best_blocks * best)
            best = bs, best_blocks = n;
    }
    *block = best;
    *grid = best_blocks * sms;
}

TEST_IMPL(occupancy_potential_block_size)
{
    sd_env("FAKECUDA_DEVICES", "h100");
    ASSERT_INT(sd_init(), ==, 0);
    CUfunction f = sd_kernel("busy", 0);
    static const struct {
        int limit;
        CUoccupancyB2DSize smem;
    } cases[] = {{0, NULL}, {200, NULL}, {0, smem_per_block}, {96, smem_per_block}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int grid, block, want_grid, want_block;
        CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, cases[i].smem, 0, cases[i].limit));
        reference_block_size(f, cases[i].limit, cases[i].smem, &want_grid, &want_block);
        ASSERT_INT(block, ==, want_block);
        ASSERT_INT(grid, ==, want_grid);
        ASSERT_INT(block % 32, ==, 0);
        ASSERT(block > 0 && (!cases[i].limit || block <= cases[i].limit));
        CK(cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &block, f, cases[i].smem, 0,
                                                     cases[i].limit, CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
        ASSERT_INT(block, ==, want_block);
    }
    int grid, block;
    ASSERT_INT(cuOccupancyMaxPotentialBlockSize(NULL, &block, f, NULL, 0, 0), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &block, f, NULL, 0, 0, 8), ==,
               CUDA_ERROR_INVALID_VALUE);
    return 0;
}

/* Stream attributes are read back as set (nothing in the simulation runs differently for them),
 * with CUDA's defaults before, copied between streams of one context, and checked. */
TEST_IMPL(stream_attributes_set_get_copy)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUstream a, b;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CUstreamAttrValue v;
    CK(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    ASSERT_INT(v.syncPolicy, ==, CU_SYNC_POLICY_AUTO);
    CK(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
    ASSERT_UINT(v.accessPolicyWindow.num_bytes, ==, 0);
    static int buf[1024];
    CUstreamAttrValue w = {.accessPolicyWindow = {.base_ptr = buf, .num_bytes = sizeof buf,
                                                  .hitRatio = 0.6f, .hitProp = CU_ACCESS_PROPERTY_PERSISTING,
                                                  .missProp = CU_ACCESS_PROPERTY_STREAMING}};
    CK(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &w));
    CK(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
                            &(CUstreamAttrValue){.syncPolicy = CU_SYNC_POLICY_YIELD}));
    CK(cuStreamCopyAttributes(b, a));
    CK(cuStreamGetAttribute(b, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
    ASSERT(v.accessPolicyWindow.base_ptr == buf && v.accessPolicyWindow.num_bytes == sizeof buf);
    ASSERT(v.accessPolicyWindow.hitRatio == 0.6f);
    CK(cuStreamGetAttribute(b, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    ASSERT_INT(v.syncPolicy, ==, CU_SYNC_POLICY_YIELD);
    /* out of range, or not a stream attribute */
    w.accessPolicyWindow.hitRatio = 1.5f;
    ASSERT_INT(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &w), ==,
               CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuStreamSetAttribute(a, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuStreamGetAttribute(a, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, NULL), ==,
               CUDA_ERROR_INVALID_VALUE);
    CK(cuCtxResetPersistingL2Cache());
    CK(cuStreamDestroy(a));
    CK(cuStreamDestroy(b));
    return 0;
}
