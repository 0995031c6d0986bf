/* CUDA arrays (copies in and out through cuMemcpy2D/3D, byte-exact; descriptors; errors) and
 * texture objects sampled by fakecuda_tex_fetch (fakecuda.h) against a CPU reference written
 * here from the CUDA Programming Guide's texture-fetching appendix. */
#include "sd.h"

#include "fakecuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Copies n bytes of pattern (seed) into the whole array as a 3D copy from host, reads them back
 * as a 3D copy and compares byte for byte. */
static int roundtrip(CUarray a, size_t row_bytes, size_t rows, size_t slices, unsigned seed)
{
    size_t n = row_bytes * rows * slices;
    unsigned char *in = malloc(n), *out = calloc(1, n);
    for (size_t i = 0; i < n; i++)
        in[i] = (unsigned char)(i * 7 + seed);
    CUDA_MEMCPY3D up = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = in, .srcPitch = row_bytes,
                        .srcHeight = rows, .dstMemoryType = CU_MEMORYTYPE_ARRAY, .dstArray = a,
                        .WidthInBytes = row_bytes, .Height = rows, .Depth = slices};
    CUDA_MEMCPY3D down = {.srcMemoryType = CU_MEMORYTYPE_ARRAY, .srcArray = a,
                          .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = out,
                          .dstPitch = row_bytes, .dstHeight = rows, .WidthInBytes = row_bytes,
                          .Height = rows, .Depth = slices};
    int ok = cuMemcpy3D_v2(&up) == CUDA_SUCCESS && cuMemcpy3D_v2(&down) == CUDA_SUCCESS &&
             memcmp(in, out, n) == 0;
    /* the last row of the last slice alone: the layout is rows, then slices, packed */
    CUDA_MEMCPY3D one = down;
    one.srcY = rows - 1;
    one.srcZ = slices - 1;
    one.Height = one.Depth = 1;
    ok = ok && cuMemcpy3D_v2(&one) == CUDA_SUCCESS &&
         memcmp(out, in + n - row_bytes, row_bytes) == 0;
    free(in);
    free(out);
    return ok;
}

TEST_IMPL(arrays_copies_descriptors_errors)
{
    ASSERT_INT(sd_init(), ==, 0);
    /* 1D and 2D (cuArrayCreate), float2 and uchar4 */
    CUarray a1, a2;
    CUDA_ARRAY_DESCRIPTOR d1 = {.Width = 37, .Height = 0, .Format = CU_AD_FORMAT_FLOAT,
                                .NumChannels = 2};
    CK(cuArrayCreate_v2(&a1, &d1));
    ASSERT(roundtrip(a1, 37 * 8, 1, 1, 1));
    CUDA_ARRAY_DESCRIPTOR d2 = {.Width = 19, .Height = 11, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                .NumChannels = 4};
    CK(cuArrayCreate_v2(&a2, &d2));
    ASSERT(roundtrip(a2, 19 * 4, 11, 1, 2));
    CUDA_ARRAY_DESCRIPTOR back;
    CK(cuArrayGetDescriptor_v2(&back, a2));
    ASSERT_UINT(back.Width, ==, 19);
    ASSERT_UINT(back.Height, ==, 11);
    ASSERT_INT(back.Format, ==, CU_AD_FORMAT_UNSIGNED_INT8);
    ASSERT_UINT(back.NumChannels, ==, 4);

    /* A sub-rectangle with cuMemcpy2D: device -> array at (x 2 elements, y 3), array -> host. */
    CUdeviceptr dev;
    CK(cuMemAlloc_v2(&dev, 4096));
    unsigned char rect[5 * 4 * 4], got[5 * 4 * 4];
    for (size_t i = 0; i < sizeof rect; i++)
        rect[i] = (unsigned char)(200 - i);
    CK(cuMemcpyHtoD_v2(dev, rect, sizeof rect));
    CUDA_MEMCPY2D in = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = dev,
                        .srcPitch = 5 * 4, .dstMemoryType = CU_MEMORYTYPE_ARRAY, .dstArray = a2,
                        .dstXInBytes = 2 * 4, .dstY = 3, .WidthInBytes = 5 * 4, .Height = 4};
    CK(cuMemcpy2D_v2(&in));
    CUDA_MEMCPY2D out = {.srcMemoryType = CU_MEMORYTYPE_ARRAY, .srcArray = a2,
                         .srcXInBytes = 2 * 4, .srcY = 3, .dstMemoryType = CU_MEMORYTYPE_HOST,
                         .dstHost = got, .dstPitch = 5 * 4, .WidthInBytes = 5 * 4, .Height = 4};
    CK(cuMemcpy2D_v2(&out));
    ASSERT(memcmp(rect, got, sizeof rect) == 0);
    /* the element before the rectangle kept the round trip's pattern: (3*19+1)*4 */
    unsigned char whole[19 * 4 * 11];
    CUDA_MEMCPY2D all = {.srcMemoryType = CU_MEMORYTYPE_ARRAY, .srcArray = a2,
                         .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = whole,
                         .dstPitch = 19 * 4, .WidthInBytes = 19 * 4, .Height = 11};
    CK(cuMemcpy2D_v2(&all));
    ASSERT_INT(whole[(3 * 19 + 1) * 4], ==, (unsigned char)((3 * 19 + 1) * 4 * 7 + 2));
    ASSERT_INT(whole[(3 * 19 + 2) * 4], ==, 200);

    /* 3D, layered, cubemap, layered cubemap (cuArray3DCreate) */
    CUDA_ARRAY3D_DESCRIPTOR d3[] = {
        {.Width = 9, .Height = 5, .Depth = 4, .Format = CU_AD_FORMAT_SIGNED_INT16, .NumChannels = 1},
        {.Width = 8, .Height = 6, .Depth = 3, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
         .Flags = CUDA_ARRAY3D_LAYERED},
        {.Width = 7, .Height = 0, .Depth = 5, .Format = CU_AD_FORMAT_HALF, .NumChannels = 2,
         .Flags = CUDA_ARRAY3D_LAYERED},
        {.Width = 4, .Height = 4, .Depth = 6, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
         .Flags = CUDA_ARRAY3D_CUBEMAP},
        {.Width = 3, .Height = 3, .Depth = 12, .Format = CU_AD_FORMAT_UNSIGNED_INT32,
         .NumChannels = 4, .Flags = CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED},
    };
    size_t esize[] = {2, 4, 4, 4, 16};
    for (unsigned k = 0; k < sizeof d3 / sizeof *d3; k++) {
        CUarray a;
        CK(cuArray3DCreate_v2(&a, &d3[k]));
        ASSERT(roundtrip(a, d3[k].Width * esize[k], d3[k].Height ? d3[k].Height : 1, d3[k].Depth,
                         k));
        CUDA_ARRAY3D_DESCRIPTOR b;
        CK(cuArray3DGetDescriptor_v2(&b, a));
        ASSERT(memcmp(&b, &d3[k], sizeof b) == 0);
        CUDA_ARRAY_MEMORY_REQUIREMENTS m;
        CK(cuArrayGetMemoryRequirements(&m, a, 0));
        ASSERT_UINT(m.size, >=, d3[k].Width * esize[k] * (d3[k].Height ? d3[k].Height : 1) *
                                    d3[k].Depth);
        CK(cuArrayDestroy(a));
    }

    /* errors: descriptors CUDA documents as invalid, copies outside the array, dead handles */
    CUarray bad;
    CUDA_ARRAY3D_DESCRIPTOR inval[] = {
        {.Width = 4, .Height = 4, .Depth = 6, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 3},
        {.Width = 4, .Height = 5, .Depth = 6, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
         .Flags = CUDA_ARRAY3D_CUBEMAP},
        {.Width = 4, .Height = 4, .Depth = 5, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
         .Flags = CUDA_ARRAY3D_CUBEMAP},
        {.Width = 4, .Height = 4, .Depth = 0, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
         .Flags = CUDA_ARRAY3D_LAYERED},
        {.Width = 0, .Height = 4, .Depth = 1, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1},
        {.Width = 4, .Height = 0, .Depth = 2, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1},
        {.Width = 4, .Height = 4, .Depth = 1, .Format = (CUarray_format)0x77, .NumChannels = 1},
    };
    for (unsigned k = 0; k < sizeof inval / sizeof *inval; k++)
        ASSERT_INT(cuArray3DCreate_v2(&bad, &inval[k]), ==, CUDA_ERROR_INVALID_VALUE);
    ASSERT_INT(cuArrayCreate_v2(&bad, NULL), ==, CUDA_ERROR_INVALID_VALUE);
    out.srcY = 8; /* 8 + 4 rows > 11 */
    ASSERT_INT(cuMemcpy2D_v2(&out), ==, CUDA_ERROR_INVALID_VALUE);
    out.srcY = 0;
    out.srcXInBytes = 15 * 4; /* 15 + 5 elements > 19 */
    ASSERT_INT(cuMemcpy2D_v2(&out), ==, CUDA_ERROR_INVALID_VALUE);
    out.srcXInBytes = 2; /* not on an element */
    ASSERT_INT(cuMemcpy2D_v2(&out), ==, CUDA_ERROR_INVALID_VALUE);
    CK(cuArrayDestroy(a2));
    ASSERT_INT(cuArrayDestroy(NULL), ==, CUDA_ERROR_INVALID_HANDLE);
    CUarray a3;
    CK(cuArray3DCreate_v2(&a3, &d3[0]));
    ASSERT_INT(cuArrayGetDescriptor_v2(&back, a3), ==, CUDA_ERROR_INVALID_HANDLE); /* 3D */
    CK(cuArrayDestroy(a3));
    CK(cuArrayDestroy(a1));
    CK(cuMemFree_v2(dev));
    return 0;
}

/* ---- texture sampling reference ---- */

static float ref_texel(const float *img, long w, long h, long x, long y, CUaddress_mode m,
                       int normalized, float border)
{
    long c[2] = {x, y}, n[2] = {w, h};
    for (int k = 0; k < 2; k++) {
        if (!normalized && (m == CU_TR_ADDRESS_MODE_WRAP || m == CU_TR_ADDRESS_MODE_MIRROR))
            m = CU_TR_ADDRESS_MODE_CLAMP;
        if (m == CU_TR_ADDRESS_MODE_BORDER && (c[k] < 0 || c[k] >= n[k]))
            return border;
        if (m == CU_TR_ADDRESS_MODE_CLAMP)
            c[k] = c[k] < 0 ? 0 : c[k] >= n[k] ? n[k] - 1 : c[k];
        else if (m == CU_TR_ADDRESS_MODE_WRAP)
            c[k] = c[k] - n[k] * (long)floor((double)c[k] / (double)n[k]);
        else if (m == CU_TR_ADDRESS_MODE_MIRROR) {
            long p = c[k] - 2 * n[k] * (long)floor((double)c[k] / (double)(2 * n[k]));
            c[k] = p < n[k] ? p : 2 * n[k] - 1 - p;
        }
    }
    return img[c[1] * w + c[0]];
}

/* tex2D<float> by the Programming Guide: nearest texel floor(x), or the 2x2 texels around
 * x - 0.5 weighted by its fraction in 1/256 steps. */
static float ref_tex2d(const float *img, long w, long h, float x, float y, CUaddress_mode m,
                       int linear, int normalized, float border)
{
    if (normalized)
        x *= (float)w, y *= (float)h;
    if (!linear)
        return ref_texel(img, w, h, (long)floorf(x), (long)floorf(y), m, normalized, border);
    float xb = x - 0.5f, yb = y - 0.5f;
    long i = (long)floorf(xb), j = (long)floorf(yb);
    float a = roundf((xb - floorf(xb)) * 256) / 256, b = roundf((yb - floorf(yb)) * 256) / 256;
    float t00 = ref_texel(img, w, h, i, j, m, normalized, border);
    float t10 = ref_texel(img, w, h, i + 1, j, m, normalized, border);
    float t01 = ref_texel(img, w, h, i, j + 1, m, normalized, border);
    float t11 = ref_texel(img, w, h, i + 1, j + 1, m, normalized, border);
    return (1 - a) * (1 - b) * t00 + a * (1 - b) * t10 + (1 - a) * b * t01 + a * b * t11;
}

TEST_IMPL(texture_objects_sample_like_the_hardware)
{
    ASSERT_INT(sd_init(), ==, 0);
    enum { W = 6, H = 5 };
    float img[W * H];
    for (int i = 0; i < W * H; i++)
        img[i] = (float)(i * i % 17) - 3.5f;
    CUarray a;
    CUDA_ARRAY_DESCRIPTOR d = {.Width = W, .Height = H, .Format = CU_AD_FORMAT_FLOAT,
                               .NumChannels = 1};
    CK(cuArrayCreate_v2(&a, &d));
    CUDA_MEMCPY2D up = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = img, .srcPitch = W * 4,
                        .dstMemoryType = CU_MEMORYTYPE_ARRAY, .dstArray = a,
                        .WidthInBytes = W * 4, .Height = H};
    CK(cuMemcpy2D_v2(&up));
    CK(cuCtxSynchronize()); /* a pageable upload returns before its DMA; host code fetches next */
    CUDA_RESOURCE_DESC rd = {.resType = CU_RESOURCE_TYPE_ARRAY, .res.array.hArray = a};
    CUaddress_mode modes[] = {CU_TR_ADDRESS_MODE_WRAP, CU_TR_ADDRESS_MODE_CLAMP,
                              CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_BORDER};
    int checked = 0;
    for (int mi = 0; mi < 4; mi++)
        for (int linear = 0; linear < 2; linear++)
            for (int norm = 0; norm < 2; norm++) {
                CUDA_TEXTURE_DESC td = {.addressMode = {modes[mi], modes[mi], modes[mi]},
                                        .filterMode = linear ? CU_TR_FILTER_MODE_LINEAR
                                                             : CU_TR_FILTER_MODE_POINT,
                                        .flags = norm ? CU_TRSF_NORMALIZED_COORDINATES : 0,
                                        .borderColor = {7.25f, 0, 0, 0}};
                CUtexObject t;
                CK(cuTexObjectCreate(&t, &rd, &td, NULL));
                CUDA_TEXTURE_DESC tb;
                CK(cuTexObjectGetTextureDesc(&tb, t));
                ASSERT(memcmp(&tb, &td, sizeof tb) == 0);
                /* coordinates from well outside to well outside, off the texel grid; each
                 * row fetched one texel at a time and whole (fakecuda_tex_fetch_row, which
                 * has a path of its own for point-sampled floats) */
                for (float v = -1.9f; v < H + 2.5f; v += 0.61f) {
                    float xs[32], wants[32], y = norm ? v / H : v;
                    size_t n = 0;
                    for (float u = -2.3f; u < W + 2.5f; u += 0.37f, n++) {
                        ASSERT(n < 32);
                        xs[n] = norm ? u / W : u;
                        wants[n] = ref_tex2d(img, W, H, xs[n], y, modes[mi], linear, norm, 7.25f);
                        fakecuda_float4 got = fakecuda_tex_fetch(t, xs[n], y, 0, 0);
                        ASSERT_NEAR(got.x, wants[n], 1e-5);
                        ASSERT(got.y == 0 && got.w == 0);
                        checked++;
                    }
                    fakecuda_float4 row[32];
                    fakecuda_tex_fetch_row(t, n, xs, y, 0, 0, row);
                    for (size_t k = 0; k < n; k++) {
                        ASSERT_NEAR(row[k].x, wants[k], 1e-5);
                        ASSERT(row[k].y == 0 && row[k].w == 0);
                    }
                }
                CK(cuTexObjectDestroy(t));
                ASSERT_INT(cuTexObjectGetTextureDesc(&tb, t), ==, CUDA_ERROR_INVALID_VALUE);
            }
    ASSERT_INT(checked, >, 4 * 2 * 2 * 100);
    /* Values worked out by hand: point at texel (1,2); linear halfway between (0,0) and (1,0);
     * clamp and border beyond the edge. */
    CUDA_TEXTURE_DESC td = {.filterMode = CU_TR_FILTER_MODE_LINEAR,
                            .addressMode = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_CLAMP}};
    CUtexObject t;
    CK(cuTexObjectCreate(&t, &rd, &td, NULL));
    ASSERT_NEAR(fakecuda_tex_fetch(t, 1.5f, 2.5f, 0, 0).x, img[2 * W + 1], 0);
    ASSERT_NEAR(fakecuda_tex_fetch(t, 1.0f, 0.5f, 0, 0).x, (img[0] + img[1]) / 2, 1e-6);
    ASSERT_NEAR(fakecuda_tex_fetch(t, -5.0f, 0.5f, 0, 0).x, img[0], 0);
    CUDA_RESOURCE_DESC rb;
    CK(cuTexObjectGetResourceDesc(&rb, t));
    ASSERT(rb.resType == CU_RESOURCE_TYPE_ARRAY && rb.res.array.hArray == a);
    CK(cuTexObjectDestroy(t));

    /* uchar4 read as normalized float, pitch2D and linear resources, point sampling */
    unsigned char px[4 * 3 * 2];
    for (int i = 0; i < 24; i++)
        px[i] = (unsigned char)(i * 11);
    CUdeviceptr dp;
    CK(cuMemAlloc_v2(&dp, 64 * 2));
    for (int r = 0; r < 2; r++)
        CK(cuMemcpyHtoD_v2(dp + 64 * r, px + 12 * r, 12));
    CK(cuCtxSynchronize());
    CUDA_RESOURCE_DESC pr = {.resType = CU_RESOURCE_TYPE_PITCH2D,
                             .res.pitch2D = {.devPtr = dp, .format = CU_AD_FORMAT_UNSIGNED_INT8,
                                             .numChannels = 4, .width = 3, .height = 2,
                                             .pitchInBytes = 64}};
    CUDA_TEXTURE_DESC pt = {.addressMode = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_CLAMP}};
    CK(cuTexObjectCreate(&t, &pr, &pt, NULL));
    fakecuda_float4 c = fakecuda_tex_fetch(t, 2.5f, 1.5f, 0, 0);
    ASSERT_NEAR(c.x, px[20] / 255.0f, 1e-7);
    ASSERT_NEAR(c.w, px[23] / 255.0f, 1e-7);
    CK(cuTexObjectDestroy(t));
    pt.flags = CU_TRSF_READ_AS_INTEGER;
    CUDA_RESOURCE_DESC lr = {.resType = CU_RESOURCE_TYPE_LINEAR,
                             .res.linear = {.devPtr = dp, .format = CU_AD_FORMAT_UNSIGNED_INT8,
                                            .numChannels = 4, .sizeInBytes = 12}};
    CK(cuTexObjectCreate(&t, &lr, &pt, NULL));
    ASSERT_NEAR(fakecuda_tex_fetch(t, 2, 0, 0, 0).y, px[9], 0);
    ASSERT_NEAR(fakecuda_tex_fetch(t, 9, 0, 0, 0).y, px[9], 0); /* clamped to element 2 */
    CK(cuTexObjectDestroy(t));

    /* layered: z picks the layer whole; cubemap: the direction picks the face */
    CUDA_ARRAY3D_DESCRIPTOR ld = {.Width = 2, .Height = 2, .Depth = 6,
                                  .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1,
                                  .Flags = CUDA_ARRAY3D_CUBEMAP};
    CUarray cube;
    CK(cuArray3DCreate_v2(&cube, &ld));
    float faces[24];
    for (int i = 0; i < 24; i++)
        faces[i] = (float)(i / 4 * 10 + i % 4);
    CUDA_MEMCPY3D c3 = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = faces, .srcPitch = 8,
                        .srcHeight = 2, .dstMemoryType = CU_MEMORYTYPE_ARRAY, .dstArray = cube,
                        .WidthInBytes = 8, .Height = 2, .Depth = 6};
    CK(cuMemcpy3D_v2(&c3));
    CK(cuCtxSynchronize());
    CUDA_RESOURCE_DESC cr = {.resType = CU_RESOURCE_TYPE_ARRAY, .res.array.hArray = cube};
    CUDA_TEXTURE_DESC ct = {.flags = CU_TRSF_NORMALIZED_COORDINATES};
    CK(cuTexObjectCreate(&t, &cr, &ct, NULL));
    /* +x face (0): s = -z, t = -y; direction (1, -0.5, 0.5): s = -0.5 -> u 0.25, t = 0.5 -> v 0.75:
     * texel (0, 1) */
    ASSERT_NEAR(fakecuda_tex_cubemap(t, 1, -0.5f, 0.5f, 0).x, 0 * 10 + 2, 0);
    /* -z face (5): s = -x, t = -y; direction (0.5, 0.5, -1): u 0.25, v 0.25: texel (0, 0) */
    ASSERT_NEAR(fakecuda_tex_cubemap(t, 0.5f, 0.5f, -1, 0).x, 5 * 10 + 0, 0);
    /* +y face (2): s = x, t = z; direction (0.5, 1, 0.5): texel (1, 1) */
    ASSERT_NEAR(fakecuda_tex_cubemap(t, 0.5f, 1, 0.5f, 0).x, 2 * 10 + 3, 0);
    ASSERT_NEAR(fakecuda_tex_fetch(t, 0.75f, 0.25f, 0, 4).x, 4 * 10 + 1, 0);
    CK(cuTexObjectDestroy(t));
    ld.Flags = CUDA_ARRAY3D_LAYERED;
    CUarray lay;
    CK(cuArray3DCreate_v2(&lay, &ld));
    c3.dstArray = lay;
    CK(cuMemcpy3D_v2(&c3));
    CK(cuCtxSynchronize());
    cr.res.array.hArray = lay;
    ct.filterMode = CU_TR_FILTER_MODE_LINEAR;
    CK(cuTexObjectCreate(&t, &cr, &ct, NULL));
    /* the centre of layer 3: the mean of its four texels, no blending with layers 2 or 4 */
    ASSERT_NEAR(fakecuda_tex_fetch(t, 0.5f, 0.5f, 3, 0).x, 3 * 10 + 1.5f, 1e-6);

    /* errors */
    CUtexObject bad;
    ASSERT_INT(cuTexObjectCreate(&bad, &cr, NULL, NULL), ==, CUDA_ERROR_INVALID_VALUE);
    CUDA_TEXTURE_DESC badmode = {.addressMode = {(CUaddress_mode)9}};
    ASSERT_INT(cuTexObjectCreate(&bad, &cr, &badmode, NULL), ==, CUDA_ERROR_INVALID_VALUE);
    CUDA_TEXTURE_DESC intlin = {.filterMode = CU_TR_FILTER_MODE_LINEAR,
                                .flags = CU_TRSF_READ_AS_INTEGER};
    ASSERT_INT(cuTexObjectCreate(&bad, &pr, &intlin, NULL), ==, CUDA_ERROR_INVALID_VALUE);
    CUsurfObject s;
    ASSERT_INT(cuSurfObjectCreate(&s, &cr), ==, CUDA_ERROR_INVALID_VALUE); /* no SURFACE_LDST */
    CK(cuTexObjectDestroy(t));
    ASSERT_INT(cuTexObjectDestroy(t), ==, CUDA_ERROR_INVALID_VALUE);

    /* surfaces: writes through fakecuda_surf_ptr land where a copy out finds them */
    ld.Flags = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST;
    CUarray sa;
    CK(cuArray3DCreate_v2(&sa, &ld));
    cr.res.array.hArray = sa;
    CK(cuSurfObjectCreate(&s, &cr));
    *(float *)fakecuda_surf_ptr(s, 4, 1, 5) = 42.5f;
    float back[24];
    c3.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    c3.srcArray = sa;
    c3.dstMemoryType = CU_MEMORYTYPE_HOST;
    c3.dstHost = back;
    c3.dstPitch = 8;
    c3.dstHeight = 2;
    CK(cuMemcpy3D_v2(&c3));
    ASSERT_NEAR(back[5 * 4 + 3], 42.5f, 0);
    CK(cuSurfObjectDestroy(s));
    CK(cuArrayDestroy(sa));
    CK(cuArrayDestroy(lay));
    CK(cuArrayDestroy(cube));
    CK(cuArrayDestroy(a));
    CK(cuMemFree_v2(dp));
    return 0;
}
