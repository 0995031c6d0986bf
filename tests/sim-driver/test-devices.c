/* The device table: real cards' published figures, from which peak bandwidth and FP32
 * FLOP/s follow as on the real card; errors and unimplemented functions. */
#include "sd.h"

#include <math.h>

static double attr(CUdevice d, CUdevice_attribute a)
{
    int v = -1;
    cuDeviceGetAttribute(&v, a, d);
    return v;
}

TEST_IMPL(device_table_and_derived_peaks)
{
    sd_env("FAKECUDA_DEVICES", "h100,a100,v100,t4");
    int n;
    ASSERT_INT(cuDeviceGetCount(&n), ==, CUDA_ERROR_NOT_INITIALIZED);
    CK(cuInit(0));
    CK(cuDeviceGetCount(&n));
    ASSERT_INT(n, ==, 4);
    static const struct {
        const char *name;
        int cc, lanes;
        double bw, flops;
    } want[] = {
        {"NVIDIA H100 80GB HBM3", 90, 128, 3.35e12, 66.9e12},
        {"NVIDIA A100-SXM4-80GB", 80, 64, 2.039e12, 19.5e12},
        {"Tesla V100-SXM2-32GB", 70, 64, 0.898e12, 15.7e12},
        {"Tesla T4", 75, 64, 0.320e12, 8.1e12},
    };
    for (int d = 0; d < 4; d++) {
        char name[128];
        CK(cuDeviceGetName(name, sizeof name, d));
        ASSERT_STR(name, want[d].name);
        int cc = (int)(attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
                       attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
        ASSERT_INT(cc, ==, want[d].cc);
        double bw = 2.0 * attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3 *
                    attr(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8;
        ASSERT_NEAR(bw / want[d].bw, 1.0, 0.01);
        double flops = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) * want[d].lanes * 2 *
                       attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) * 1e3;
        ASSERT_NEAR(flops / want[d].flops, 1.0, 0.01);
    }
    CUuuid u0, u1;
    CK(cuDeviceGetUuid_v2(&u0, 0));
    CK(cuDeviceGetUuid_v2(&u1, 1));
    ASSERT(memcmp(&u0, &u1, sizeof u0) != 0);
    ASSERT_INT(cuDeviceGetName(NULL, 0, 4), ==, CUDA_ERROR_INVALID_DEVICE);

    const char *s;
    CK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
    ASSERT_STR(s, "CUDA_ERROR_OUT_OF_MEMORY");
    CK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
    ASSERT_STR(s, "out of memory");
    ASSERT_INT(cuGetErrorName((CUresult)12345, &s), ==, CUDA_ERROR_INVALID_VALUE);
    /* Every code of cuda.h has its name and a description. */
    CK(cuGetErrorName(CUDA_ERROR_ECC_UNCORRECTABLE, &s));
    ASSERT_STR(s, "CUDA_ERROR_ECC_UNCORRECTABLE");
    CK(cuGetErrorString(CUDA_ERROR_ECC_UNCORRECTABLE, &s));
    ASSERT_CONTAINS(s, "ECC");
    /* A function the simulation does not implement answers NOT_SUPPORTED. */
    CUmipmappedArray a;
    CUDA_ARRAY3D_DESCRIPTOR ad = {16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    ASSERT_INT(cuMipmappedArrayCreate(&a, &ad, 2), ==, CUDA_ERROR_NOT_SUPPORTED);
    int v;
    CK(cuDriverGetVersion(&v));
    ASSERT_INT(v, ==, 13000);
    return 0;
}
