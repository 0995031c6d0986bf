/* A stream not capturing says so; managed-memory advice and prefetch are validated and accepted;
 * cache preferences round-trip; handles lead back to their module and library. */
#include "sd.h"

TEST_IMPL(capture_status_advice_and_handles)
{
    ASSERT_INT(sd_init(), ==, 0);
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CK(cuStreamIsCapturing(s, &st));
    ASSERT_INT(st, ==, CU_STREAM_CAPTURE_STATUS_NONE);
    st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    cuuint64_t id = 7;
    size_t ndeps = 9;
    CK(cuStreamGetCaptureInfo_v3_ptsz(NULL, &st, &id, NULL, NULL, NULL, &ndeps));
    ASSERT_INT(st, ==, CU_STREAM_CAPTURE_STATUS_NONE);
    ASSERT_UINT(ndeps, ==, 0);
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    ASSERT_INT(mode, ==, CU_STREAM_CAPTURE_MODE_GLOBAL);
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    ASSERT_INT(mode, ==, CU_STREAM_CAPTURE_MODE_RELAXED);

    CUdeviceptr man, dev;
    CK(cuMemAllocManaged(&man, 1 << 20, CU_MEM_ATTACH_GLOBAL));
    CK(cuMemAlloc_v2(&dev, 1 << 20));
    CUmemLocation loc = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CK(cuMemPrefetchAsync_v2(man, 1 << 20, loc, 0, s));
    CK(cuMemAdvise_v2(man, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, loc));
    ASSERT_INT(cuMemPrefetchAsync_v2(dev, 1 << 20, loc, 0, s), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuMemAdvise_v2(man, 2 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, loc), ==,
               CUDA_ERROR_INVALID_VALUE);

    CUfunc_cache cfg;
    CK(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED));
    CK(cuCtxGetCacheConfig(&cfg));
    ASSERT_INT(cfg, ==, CU_FUNC_CACHE_PREFER_SHARED);

    const char *img = "fakecuda-module 1\nkernel k 8\n";
    CUmodule m, m2;
    CUfunction f;
    CUlibrary lib, lib2;
    CUkernel k;
    CK(cuModuleLoadData(&m, img));
    CK(cuModuleGetFunction(&f, m, "k"));
    CK(cuFuncGetModule(&m2, f));
    ASSERT(m2 == m);
    CK(cuLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel(&k, lib, "k"));
    CK(cuKernelGetLibrary(&lib2, k));
    ASSERT(lib2 == lib);
    return 0;
}
