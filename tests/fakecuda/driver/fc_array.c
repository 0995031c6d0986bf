/* CUDA arrays, texture objects and surface objects.
 *
 * An array is device memory (from its context's device budget, like cuMemAlloc) holding
 * width x max(height,1) x max(depth,1) elements of its format and channel count, rows packed
 * (pitch = width x element size), slices packed; a layered array's layers and a cubemap's faces
 * are its slices (face f of cubemap layer l is slice 6l + f). Copies reach it through the 2D/3D
 * copy paths (fc_copy.c: fc_array_side), as device memory.
 *
 * Texture and surface objects are handles into a fixed table (slot + 1; 0 is never a valid
 * object): fakecuda_tex_fetch and fakecuda_surf_ptr (fakecuda.h) read them without a lock, as a
 * host kernel's inner loop does, and a destroyed slot reads as invalid. */
#include "fc.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FC_ARRAY_MAGIC 0xa77a7a77u

struct CUarray_st {
    uint32_t magic;
    CUDA_ARRAY3D_DESCRIPTOR d;
    CUdeviceptr mem;
    size_t elem;   /* bytes per element: format size x channels */
    size_t bytes;
};

static size_t fc_format_size(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
        return 4;
    default: return 0; /* planar, block-compressed and packed formats are not simulated */
    }
}

static int fc_channels_ok(unsigned n)
{
    return n == 1 || n == 2 || n == 4;
}

/* The documented constraints of cuArray3DCreate: a layered array's depth is its layer count; a
 * cubemap is square with depth 6 (a multiple of 6 if also layered). */
static CUresult fc_array_check(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!fc_format_size(d->Format) || !fc_channels_ok(d->NumChannels) || !d->Width)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned known = CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP |
                     CUDA_ARRAY3D_TEXTURE_GATHER;
    if (d->Flags & ~known)
        return CUDA_ERROR_INVALID_VALUE;
    if (d->Flags & CUDA_ARRAY3D_CUBEMAP) {
        int layered = d->Flags & CUDA_ARRAY3D_LAYERED;
        if (d->Width != d->Height || !d->Depth || (layered ? d->Depth % 6 : d->Depth != 6))
            return CUDA_ERROR_INVALID_VALUE;
    } else if (d->Flags & CUDA_ARRAY3D_LAYERED) {
        if (!d->Depth)
            return CUDA_ERROR_INVALID_VALUE;
    } else if (d->Depth && !d->Height) {
        return CUDA_ERROR_INVALID_VALUE; /* 3D needs a height */
    }
    return CUDA_SUCCESS;
}

static CUresult fc_array_create(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out || !d)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_array_check(d);
    if (r != CUDA_SUCCESS)
        return r;
    fc_ctx *c;
    if ((r = fc_ctx_get(&c)) != CUDA_SUCCESS)
        return r;
    struct CUarray_st *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->d = *d;
    a->elem = fc_format_size(d->Format) * d->NumChannels;
    a->bytes = a->elem * d->Width * (d->Height ? d->Height : 1) * (d->Depth ? d->Depth : 1);
    if ((r = fc_mem_alloc_device(c, a->bytes, &a->mem)) != CUDA_SUCCESS) {
        free(a);
        return r;
    }
    a->magic = FC_ARRAY_MAGIC;
    *out = a;
    return CUDA_SUCCESS;
}

static int fc_array_valid(CUarray a)
{
    return a && a->magic == FC_ARRAY_MAGIC;
}

static CUresult fc_array_create_2d(CUarray *out, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = d->Width, .Height = d->Height, .Depth = 0,
                                  .Format = d->Format, .NumChannels = d->NumChannels};
    return fc_array_create(out, &d3);
}

static CUresult fc_array_destroy(CUarray a)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_array_valid(a))
        return CUDA_ERROR_INVALID_HANDLE;
    a->magic = 0;
    fc_mem_free_device(a->mem);
    free(a);
    return CUDA_SUCCESS;
}

static CUresult fc_array_desc3d(CUDA_ARRAY3D_DESCRIPTOR *out, CUarray a)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_array_valid(a))
        return CUDA_ERROR_INVALID_HANDLE;
    *out = a->d;
    return CUDA_SUCCESS;
}

/* cuArrayGetDescriptor describes 1D and 2D arrays only, as documented. */
static CUresult fc_array_desc2d(CUDA_ARRAY_DESCRIPTOR *out, CUarray a)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_array_valid(a) || a->d.Depth)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = (CUDA_ARRAY_DESCRIPTOR){.Width = a->d.Width, .Height = a->d.Height,
                                   .Format = a->d.Format, .NumChannels = a->d.NumChannels};
    return CUDA_SUCCESS;
}

static CUresult fc_array_requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *m, CUarray a, CUdevice dev)
{
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_array_valid(a))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    *m = (CUDA_ARRAY_MEMORY_REQUIREMENTS){.size = fc_round(a->bytes, 512), .alignment = 512};
    return CUDA_SUCCESS;
}

FC_DEF(cuArrayCreate_v2, (CUarray *a, const CUDA_ARRAY_DESCRIPTOR *d), fc_array_create_2d(a, d))
FC_DEF(cuArray3DCreate_v2, (CUarray *a, const CUDA_ARRAY3D_DESCRIPTOR *d), fc_array_create(a, d))
FC_DEF(cuArrayDestroy, (CUarray a), fc_array_destroy(a))
FC_DEF(cuArrayGetDescriptor_v2, (CUDA_ARRAY_DESCRIPTOR *d, CUarray a), fc_array_desc2d(d, a))
FC_DEF(cuArray3DGetDescriptor_v2, (CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a), fc_array_desc3d(d, a))
FC_DEF_INIT(cuArrayGetMemoryRequirements,
            (CUDA_ARRAY_MEMORY_REQUIREMENTS *m, CUarray a, CUdevice dev),
            fc_array_requirements(m, a, dev))

CUresult fc_array_side(CUmemorytype *type, CUarray a, CUdeviceptr *dev, size_t *pitch,
                       size_t x_bytes, size_t y, size_t z, size_t width_bytes, size_t height,
                       size_t depth, size_t *slice_rows)
{
    if (*type != CU_MEMORYTYPE_ARRAY)
        return CUDA_SUCCESS;
    if (!fc_array_valid(a))
        return CUDA_ERROR_INVALID_HANDLE;
    size_t rows = a->d.Height ? a->d.Height : 1, slices = a->d.Depth ? a->d.Depth : 1;
    size_t row_bytes = a->d.Width * a->elem;
    if (x_bytes % a->elem || width_bytes % a->elem || x_bytes + width_bytes > row_bytes ||
        y + height > rows || z + depth > slices)
        return CUDA_ERROR_INVALID_VALUE;
    *type = CU_MEMORYTYPE_DEVICE;
    *dev = a->mem;
    *pitch = row_bytes;
    if (slice_rows)
        *slice_rows = rows;
    return CUDA_SUCCESS;
}

/* ---- texture and surface objects ------------------------------------------------------- */

#define FC_OBJ_SLOTS 4096

typedef struct {
    CUDA_RESOURCE_DESC res;
    CUDA_TEXTURE_DESC tex;
    int surface;
    /* the resolved resource: base, format, channels, extent, pitches */
    const char *base;
    CUarray_format format;
    unsigned channels;
    size_t elem, w, h, d, pitch, slice;
    unsigned flags; /* the array's CUDA_ARRAY3D_* (layered, cubemap) */
} fc_obj;

static _Atomic(fc_obj *) fc_objs[FC_OBJ_SLOTS];

/* The resource a texture or surface reads: an array, linear memory or 2D pitched memory. */
static CUresult fc_obj_resource(fc_obj *o, const CUDA_RESOURCE_DESC *rd)
{
    switch (rd->resType) {
    case CU_RESOURCE_TYPE_ARRAY: {
        CUarray a = rd->res.array.hArray;
        if (!fc_array_valid(a))
            return CUDA_ERROR_INVALID_HANDLE;
        o->base = (const char *)(uintptr_t)a->mem;
        o->format = a->d.Format;
        o->channels = a->d.NumChannels;
        o->w = a->d.Width;
        o->h = a->d.Height ? a->d.Height : 1;
        o->d = a->d.Depth ? a->d.Depth : 1;
        o->flags = a->d.Flags;
        o->elem = a->elem;
        o->pitch = o->w * o->elem;
        o->slice = o->pitch * o->h;
        return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_LINEAR:
        o->base = (const char *)(uintptr_t)rd->res.linear.devPtr;
        o->format = rd->res.linear.format;
        o->channels = rd->res.linear.numChannels;
        o->elem = fc_format_size(o->format) * o->channels;
        if (!o->base || !o->elem || !fc_channels_ok(o->channels) ||
            rd->res.linear.sizeInBytes < o->elem)
            return CUDA_ERROR_INVALID_VALUE;
        o->w = rd->res.linear.sizeInBytes / o->elem;
        o->h = o->d = 1;
        o->pitch = o->slice = rd->res.linear.sizeInBytes;
        return CUDA_SUCCESS;
    case CU_RESOURCE_TYPE_PITCH2D:
        o->base = (const char *)(uintptr_t)rd->res.pitch2D.devPtr;
        o->format = rd->res.pitch2D.format;
        o->channels = rd->res.pitch2D.numChannels;
        o->elem = fc_format_size(o->format) * o->channels;
        o->w = rd->res.pitch2D.width;
        o->h = rd->res.pitch2D.height;
        o->d = 1;
        o->pitch = rd->res.pitch2D.pitchInBytes;
        if (!o->base || !o->elem || !fc_channels_ok(o->channels) || !o->w || !o->h ||
            o->pitch < o->w * o->elem)
            return CUDA_ERROR_INVALID_VALUE;
        o->slice = o->pitch * o->h;
        return CUDA_SUCCESS;
    default: /* mipmapped arrays are not simulated */
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult fc_obj_create(unsigned long long *out, const CUDA_RESOURCE_DESC *rd,
                              const CUDA_TEXTURE_DESC *td, int surface)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out || !rd || (!surface && !td))
        return CUDA_ERROR_INVALID_VALUE;
    fc_obj *o = calloc(1, sizeof *o);
    if (!o)
        return CUDA_ERROR_OUT_OF_MEMORY;
    o->res = *rd;
    o->surface = surface;
    CUresult r = fc_obj_resource(o, rd);
    /* a surface needs an array made for surface load/store */
    if (r == CUDA_SUCCESS && surface &&
        (rd->resType != CU_RESOURCE_TYPE_ARRAY || !(o->flags & CUDA_ARRAY3D_SURFACE_LDST)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS && !surface) {
        o->tex = *td;
        for (int k = 0; k < 3; k++)
            if ((unsigned)td->addressMode[k] > CU_TR_ADDRESS_MODE_BORDER)
                r = CUDA_ERROR_INVALID_VALUE;
        if ((unsigned)td->filterMode > CU_TR_FILTER_MODE_LINEAR)
            r = CUDA_ERROR_INVALID_VALUE;
        /* linear filtering returns floats: integer reads of integer formats cannot filter */
        if (td->filterMode == CU_TR_FILTER_MODE_LINEAR && (td->flags & CU_TRSF_READ_AS_INTEGER) &&
            o->format != CU_AD_FORMAT_FLOAT && o->format != CU_AD_FORMAT_HALF)
            r = CUDA_ERROR_INVALID_VALUE;
    }
    if (r != CUDA_SUCCESS) {
        free(o);
        return r;
    }
    for (unsigned i = 0; i < FC_OBJ_SLOTS; i++) {
        fc_obj *none = NULL;
        if (atomic_compare_exchange_strong(&fc_objs[i], &none, o)) {
            *out = i + 1;
            return CUDA_SUCCESS;
        }
    }
    free(o);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

static fc_obj *fc_obj_get(unsigned long long h, int surface)
{
    if (!h || h > FC_OBJ_SLOTS)
        return NULL;
    fc_obj *o = atomic_load(&fc_objs[h - 1]);
    return o && o->surface == surface ? o : NULL;
}

static CUresult fc_obj_destroy(unsigned long long h, int surface)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_obj *o = fc_obj_get(h, surface);
    if (!o || !atomic_compare_exchange_strong(&fc_objs[h - 1], &o, NULL))
        return CUDA_ERROR_INVALID_VALUE;
    free(o);
    return CUDA_SUCCESS;
}

static CUresult fc_obj_res(CUDA_RESOURCE_DESC *out, unsigned long long h, int surface)
{
    fc_obj *o = fc_obj_get(h, surface);
    if (!out || !o)
        return CUDA_ERROR_INVALID_VALUE;
    *out = o->res;
    return CUDA_SUCCESS;
}

static CUresult fc_tex_desc(CUDA_TEXTURE_DESC *out, CUtexObject h)
{
    fc_obj *o = fc_obj_get(h, 0);
    if (!out || !o)
        return CUDA_ERROR_INVALID_VALUE;
    *out = o->tex;
    return CUDA_SUCCESS;
}

FC_DEF(cuTexObjectCreate,
       (CUtexObject *t, const CUDA_RESOURCE_DESC *rd, const CUDA_TEXTURE_DESC *td,
        const CUDA_RESOURCE_VIEW_DESC *view),
       view ? fc_unsupported("cuTexObjectCreate with a resource view") : fc_obj_create(t, rd, td, 0))
FC_DEF(cuTexObjectDestroy, (CUtexObject t), fc_obj_destroy(t, 0))
FC_DEF(cuTexObjectGetResourceDesc, (CUDA_RESOURCE_DESC *d, CUtexObject t), fc_obj_res(d, t, 0))
FC_DEF(cuTexObjectGetTextureDesc, (CUDA_TEXTURE_DESC *d, CUtexObject t), fc_tex_desc(d, t))
FC_DEF(cuSurfObjectCreate, (CUsurfObject *s, const CUDA_RESOURCE_DESC *rd),
       fc_obj_create(s, rd, NULL, 1))
FC_DEF(cuSurfObjectDestroy, (CUsurfObject s), fc_obj_destroy(s, 1))
FC_DEF(cuSurfObjectGetResourceDesc, (CUDA_RESOURCE_DESC *d, CUsurfObject s), fc_obj_res(d, s, 1))

/* ---- sampling (fakecuda.h) -------------------------------------------------------------- */

static float fc_half_to_float(uint16_t h)
{
    unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 0x400), (int)e - 25);
    return h & 0x8000 ? -v : v;
}

/* One channel as the texture returns it: normalized to [0,1] / [-1,1] for 8- and 16-bit
 * integers unless read as integers; 32-bit integers as their value. */
static float fc_channel(const fc_obj *o, const char *p, unsigned c)
{
    int norm = !(o->tex.flags & CU_TRSF_READ_AS_INTEGER);
    switch (o->format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: { uint8_t v = ((const uint8_t *)p)[c];
        return norm ? v / 255.0f : v; }
    case CU_AD_FORMAT_SIGNED_INT8: { int8_t v = ((const int8_t *)p)[c];
        return norm ? fmaxf(v / 127.0f, -1.0f) : v; }
    case CU_AD_FORMAT_UNSIGNED_INT16: { uint16_t v; memcpy(&v, p + 2 * c, 2);
        return norm ? v / 65535.0f : v; }
    case CU_AD_FORMAT_SIGNED_INT16: { int16_t v; memcpy(&v, p + 2 * c, 2);
        return norm ? fmaxf(v / 32767.0f, -1.0f) : v; }
    case CU_AD_FORMAT_HALF: { uint16_t v; memcpy(&v, p + 2 * c, 2);
        return fc_half_to_float(v); }
    case CU_AD_FORMAT_UNSIGNED_INT32: { uint32_t v; memcpy(&v, p + 4 * c, 4); return (float)v; }
    case CU_AD_FORMAT_SIGNED_INT32: { int32_t v; memcpy(&v, p + 4 * c, 4); return (float)v; }
    default: { float v; memcpy(&v, p + 4 * c, 4); return v; }
    }
}

/* Index i along an axis of n texels under address mode m; -1: outside, the border colour. Wrap
 * and mirror apply to normalized coordinates only (CUDA clamps unnormalized ones). */
static long fc_address(long i, long n, CUaddress_mode m, int normalized)
{
    if (i >= 0 && i < n)
        return i; /* every mode's answer inside, and a host kernel's inner loop: no division */
    if (!normalized && (m == CU_TR_ADDRESS_MODE_WRAP || m == CU_TR_ADDRESS_MODE_MIRROR))
        m = CU_TR_ADDRESS_MODE_CLAMP;
    switch (m) {
    case CU_TR_ADDRESS_MODE_WRAP: return ((i % n) + n) % n;
    case CU_TR_ADDRESS_MODE_MIRROR: { long k = ((i % (2 * n)) + 2 * n) % (2 * n);
        return k < n ? k : 2 * n - 1 - k; }
    case CU_TR_ADDRESS_MODE_BORDER: return i < 0 || i >= n ? -1 : i;
    default: return i < 0 ? 0 : i >= n ? n - 1 : i;
    }
}

/* Texel (x, y, z) of slice of o, whose extent as sampled is n (o's, one for an axis the fetch
 * does not have). */
static fakecuda_float4 fc_texel(const fc_obj *o, const long n[3], long x, long y, long z, size_t slice)
{
    int norm = o->tex.flags & CU_TRSF_NORMALIZED_COORDINATES;
    long i[3] = {x, y, z};
    for (int k = 0; k < 3; k++)
        if ((i[k] = fc_address(i[k], n[k], o->tex.addressMode[k], norm)) < 0)
            return (fakecuda_float4){o->tex.borderColor[0], o->tex.borderColor[1],
                                     o->tex.borderColor[2], o->tex.borderColor[3]};
    const char *p = o->base + (slice + (size_t)i[2]) * o->slice + (size_t)i[1] * o->pitch +
                    (size_t)i[0] * o->elem;
    float v[4] = {0, 0, 0, 0};
    for (unsigned c = 0; c < o->channels; c++)
        v[c] = fc_channel(o, p, c);
    return (fakecuda_float4){v[0], v[1], v[2], v[3]};
}

static fakecuda_float4 fc_lerp4(fakecuda_float4 a, fakecuda_float4 b, float t)
{
    return (fakecuda_float4){a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z),
                             a.w + t * (b.w - a.w)};
}

/* The interpolation weight as the hardware has it: 9-bit fixed point, 8 fraction bits (CUDA
 * Programming Guide, "Linear Filtering"). */
static float fc_weight(float f)
{
    return roundf(f * 256.0f) / 256.0f;
}

/* What a fetch needs of its texture that does not depend on the coordinates: the object, the
 * slice its layer and face choose, the axes it samples and their extents. */
typedef struct {
    const fc_obj *o;
    size_t slice;
    int dims, linear;
    long n[3];
} fc_sampler;

static fc_sampler fc_sampler_of(unsigned long long tex, float z, int face)
{
    fc_sampler sm = {.o = fc_obj_get(tex, 0)};
    const fc_obj *o = sm.o;
    if (!o)
        fc_fatal("fakecuda_tex_fetch: expected a live texture object, found handle %llu", tex);
    int cube = o->flags & CUDA_ARRAY3D_CUBEMAP, layered = o->flags & CUDA_ARRAY3D_LAYERED;
    /* layers and faces are slices chosen whole; a 3D array's z is a filtered coordinate */
    sm.dims = o->res.resType == CU_RESOURCE_TYPE_LINEAR ? 1 : o->h > 1 || o->d > 1 ? 2 : 1;
    if (cube || layered) {
        long layer = layered ? (long)z : 0;
        sm.slice = (size_t)(cube ? 6 * layer + face : layer);
        if (sm.slice >= o->d)
            fc_fatal("fakecuda_tex_fetch: layer %ld face %d outside the array's %zu slices",
                     layer, face, o->d);
        if (!cube && o->h == 1)
            sm.dims = 1;
    } else if (o->d > 1) {
        sm.dims = 3;
    }
    sm.n[0] = (long)o->w;
    sm.n[1] = sm.dims > 1 ? (long)o->h : 1;
    sm.n[2] = sm.dims > 2 ? (long)o->d : 1;
    sm.linear = o->tex.filterMode == CU_TR_FILTER_MODE_LINEAR && o->res.resType != CU_RESOURCE_TYPE_LINEAR;
    return sm;
}

static fakecuda_float4 fc_sample(const fc_sampler *sm, float x, float y, float z)
{
    const fc_obj *o = sm->o;
    int dims = sm->dims;
    const long *n = sm->n;
    float c[3] = {x, dims > 1 ? y : 0, dims > 2 ? z : 0};
    if (o->tex.flags & CU_TRSF_NORMALIZED_COORDINATES)
        for (int k = 0; k < dims; k++)
            c[k] *= (float)n[k];
    if (!sm->linear) {
        long i[3];
        for (int k = 0; k < 3; k++)
            i[k] = k < dims ? (long)floorf(c[k]) : 0;
        return fc_texel(o, n, i[0], i[1], i[2], sm->slice);
    }
    long i0[3] = {0, 0, 0};
    float t[3] = {0, 0, 0};
    for (int k = 0; k < dims; k++) {
        float b = c[k] - 0.5f;
        i0[k] = (long)floorf(b);
        t[k] = fc_weight(b - floorf(b));
    }
    fakecuda_float4 plane[2];
    for (int dz = 0; dz < (dims > 2 ? 2 : 1); dz++) {
        fakecuda_float4 row[2];
        for (int dy = 0; dy < (dims > 1 ? 2 : 1); dy++)
            row[dy] = fc_lerp4(fc_texel(o, n, i0[0], i0[1] + dy, i0[2] + dz, sm->slice),
                               fc_texel(o, n, i0[0] + 1, i0[1] + dy, i0[2] + dz, sm->slice), t[0]);
        plane[dz] = dims > 1 ? fc_lerp4(row[0], row[1], t[1]) : row[0];
    }
    return dims > 2 ? fc_lerp4(plane[0], plane[1], t[2]) : plane[0];
}

FC_EXPORT fakecuda_float4 fakecuda_tex_fetch(unsigned long long tex, float x, float y, float z,
                                             int face)
{
    fc_sampler sm = fc_sampler_of(tex, z, face);
    return fc_sample(&sm, x, y, z);
}

/* fc_sample's answers for a row of point-sampled fetches of one 32-bit float channel, the row
 * found once and each texel by its x alone: such rows are host kernels' inner loops
 * (simplePitchLinearTexture fetches 840 million texels, 40 s through fc_sample). 0: not such a
 * fetch, or the row is the border's, left to fc_sample. */
static int fc_fetch_row_f32(const fc_sampler *sm, size_t count, const float *x, float y,
                            fakecuda_float4 *out)
{
    const fc_obj *o = sm->o;
    if (sm->linear || sm->dims > 2 || o->channels != 1 || o->format != CU_AD_FORMAT_FLOAT)
        return 0;
    int norm = o->tex.flags & CU_TRSF_NORMALIZED_COORDINATES;
    long iy = 0;
    if (sm->dims > 1 &&
        (iy = fc_address((long)floorf(norm ? y * (float)sm->n[1] : y), sm->n[1],
                         o->tex.addressMode[1], norm)) < 0)
        return 0;
    const char *row = o->base + sm->slice * o->slice + (size_t)iy * o->pitch;
    for (size_t k = 0; k < count; k++) {
        long i = fc_address((long)floorf(norm ? x[k] * (float)sm->n[0] : x[k]), sm->n[0],
                            o->tex.addressMode[0], norm);
        float v = o->tex.borderColor[0];
        if (i >= 0)
            memcpy(&v, row + (size_t)i * sizeof v, sizeof v);
        out[k] = i >= 0 ? (fakecuda_float4){v, 0, 0, 0}
                        : (fakecuda_float4){v, o->tex.borderColor[1], o->tex.borderColor[2],
                                            o->tex.borderColor[3]};
    }
    return 1;
}

FC_EXPORT void fakecuda_tex_fetch_row(unsigned long long tex, size_t count, const float *x,
                                      float y, float z, int face, fakecuda_float4 *out)
{
    fc_sampler sm = fc_sampler_of(tex, z, face);
    if (fc_fetch_row_f32(&sm, count, x, y, out))
        return;
    for (size_t i = 0; i < count; i++)
        out[i] = fc_sample(&sm, x[i], y, z);
}

FC_EXPORT fakecuda_float4 fakecuda_tex_cubemap(unsigned long long tex, float x, float y, float z,
                                               int layer)
{
    float ax = fabsf(x), ay = fabsf(y), az = fabsf(z), m, s, t;
    int face;
    if (ax >= ay && ax >= az) {
        face = x >= 0 ? 0 : 1, m = ax, s = x >= 0 ? -z : z, t = -y;
    } else if (ay >= az) {
        face = y >= 0 ? 2 : 3, m = ay, s = x, t = y >= 0 ? z : -z;
    } else {
        face = z >= 0 ? 4 : 5, m = az, s = z >= 0 ? x : -x, t = -y;
    }
    const fc_obj *o = fc_obj_get(tex, 0);
    if (!o || !(o->flags & CUDA_ARRAY3D_CUBEMAP))
        fc_fatal("fakecuda_tex_cubemap: expected a live cubemap texture, found handle %llu", tex);
    /* face coordinates are normalized whatever the descriptor says */
    float u = (s / m + 1) / 2, v = (t / m + 1) / 2;
    if (!(o->tex.flags & CU_TRSF_NORMALIZED_COORDINATES))
        u *= (float)o->w, v *= (float)o->h;
    return fakecuda_tex_fetch(tex, u, v, (float)layer, face);
}

FC_EXPORT void *fakecuda_surf_ptr(unsigned long long surf, long x_bytes, long y, long layer)
{
    const fc_obj *o = fc_obj_get(surf, 1);
    if (!o)
        fc_fatal("fakecuda_surf_ptr: expected a live surface object, found handle %llu", surf);
    if (x_bytes < 0 || x_bytes % (long)o->elem || (size_t)x_bytes >= o->pitch || y < 0 ||
        (size_t)y >= o->h || layer < 0 || (size_t)layer >= o->d)
        fc_fatal("fakecuda_surf_ptr: (%ld bytes, %ld, %ld) outside the surface's %zu x %zu x %zu "
                 "elements of %zu bytes (a GPU traps)", x_bytes, y, layer, o->w, o->h, o->d,
                 o->elem);
    return (char *)o->base + (size_t)layer * o->slice + (size_t)y * o->pitch + (size_t)x_bytes;
}

void fc_textures_bind(void *lib)
{
    fakecuda_texture_api *api = dlsym(lib, FAKECUDA_TEXTURE_API_SYMBOL);
    if (api)
        *api = (fakecuda_texture_api){fakecuda_tex_fetch, fakecuda_tex_cubemap, fakecuda_surf_ptr,
                                      fakecuda_tex_fetch_row};
}
