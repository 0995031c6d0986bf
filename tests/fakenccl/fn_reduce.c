/* Reductions over NCCL's datatypes (fn.h). Native types reduce in their own arithmetic
 * (integers wrap, as on the GPU); half, bfloat16 and the 8-bit floats go through float with
 * round-to-nearest-even on the way back, as NVIDIA's kernels convert them. */
#include "fn.h"

#include <math.h>
#include <string.h>

static float fn_bits_float(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float fn_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (man << 13);
    else if (exp)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (!man)
        bits = sign;
    else
        return sign ? -ldexpf((float)man, -24) : ldexpf((float)man, -24);
    return fn_bits_float(bits);
}

static uint16_t fn_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    float a = fabsf(f);
    if (isnan(f))
        return sign | 0x7e00;
    if (a >= 65520.0f)
        return sign | 0x7c00;
    if (a < 6.103515625e-05f) /* subnormal: a multiple of 2^-24, rounded to even */
        return sign | (uint16_t)nearbyintf(a * 16777216.0f);
    uint32_t ax = x & 0x7fffffffu;
    uint32_t r = ax + 0xfff + ((ax >> 13) & 1);
    return sign | (uint16_t)(((r >> 23) - 112) << 10 | ((r >> 13) & 0x3ff));
}


static uint16_t fn_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f))
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* e4m3 (no infinities, 0x7f/0xff NaN, largest 448) and e5m2 (half's upper byte). */
static float fn_e4m3_to_float(uint8_t v)
{
    int sign = v >> 7, exp = (v >> 3) & 0xf, man = v & 7;
    if (exp == 0xf && man == 7)
        return NAN;
    float f = exp ? ldexpf(1.0f + man / 8.0f, exp - 7) : ldexpf(man / 8.0f, -6);
    return sign ? -f : f;
}

static uint8_t fn_float_to_e4m3(float f)
{
    if (isnan(f))
        return 0x7f;
    uint8_t sign = signbit(f) ? 0x80 : 0, best = 0;
    float a = fabsf(f), err = INFINITY;
    for (uint8_t c = 0; c < 0x7f; c++) { /* nearest, ties to the even code; saturates */
        float e = fabsf(fn_e4m3_to_float(c) - a);
        if (e < err || (e == err && !(c & 1))) {
            err = e;
            best = c;
        }
    }
    return sign | best;
}

double fn_load(const void *p, size_t i, ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: return ((const int8_t *)p)[i];
    case ncclUint8: return ((const uint8_t *)p)[i];
    case ncclInt32: return ((const int32_t *)p)[i];
    case ncclUint32: return ((const uint32_t *)p)[i];
    case ncclInt64: return (double)((const int64_t *)p)[i];
    case ncclUint64: return (double)((const uint64_t *)p)[i];
    case ncclFloat16: return fn_half_to_float(((const uint16_t *)p)[i]);
    case ncclBfloat16: return fn_bits_float((uint32_t)((const uint16_t *)p)[i] << 16);
    case ncclFloat32: return ((const float *)p)[i];
    case ncclFloat64: return ((const double *)p)[i];
    case ncclFloat8e4m3: return fn_e4m3_to_float(((const uint8_t *)p)[i]);
    case ncclFloat8e5m2: return fn_half_to_float((uint16_t)(((const uint8_t *)p)[i] << 8));
    default: return 0;
    }
}

static void fn_store_small(void *p, size_t i, ncclDataType_t t, float v)
{
    switch (t) {
    case ncclFloat16: ((uint16_t *)p)[i] = fn_float_to_half(v); break;
    case ncclBfloat16: ((uint16_t *)p)[i] = fn_float_to_bf16(v); break;
    case ncclFloat8e4m3: ((uint8_t *)p)[i] = fn_float_to_e4m3(v); break;
    default: { /* e5m2: half rounded to its upper byte, to even */
        uint16_t h = fn_float_to_half(v);
        if ((h & 0x7c00) != 0x7c00)
            h = (uint16_t)(h + 0x7f + ((h >> 8) & 1));
        ((uint8_t *)p)[i] = (uint8_t)(h >> 8);
    }
    }
}

/* One native type: T its storage, W the type sums and products wrap in. */
#define FN_NATIVE(name, T, W)                                                               \
    static void name(T *out, const void *const *in, int n, size_t count, ncclRedOp_t op,   \
                     int premul, double scalar)                                            \
    {                                                                                      \
        T s = (T)scalar;                                                                   \
        for (size_t i = 0; i < count; i++)                                                 \
            out[i] = premul ? (T)((W)((const T *)in[0])[i] * (W)s) : ((const T *)in[0])[i]; \
        for (int r = 1; r < n; r++) {                                                      \
            const T *x = in[r];                                                            \
            switch (op) {                                                                  \
            case ncclProd:                                                                 \
                for (size_t i = 0; i < count; i++)                                         \
                    out[i] = (T)((W)out[i] * (W)x[i]);                                     \
                break;                                                                     \
            case ncclMax:                                                                  \
                for (size_t i = 0; i < count; i++)                                         \
                    out[i] = x[i] > out[i] ? x[i] : out[i];                                \
                break;                                                                     \
            case ncclMin:                                                                  \
                for (size_t i = 0; i < count; i++)                                         \
                    out[i] = x[i] < out[i] ? x[i] : out[i];                                \
                break;                                                                     \
            default:                                                                       \
                for (size_t i = 0; i < count; i++)                                         \
                    out[i] = (T)((W)out[i] + (W)(premul ? (T)((W)x[i] * (W)s) : x[i]));    \
            }                                                                              \
        }                                                                                  \
        if (op == ncclAvg)                                                                 \
            for (size_t i = 0; i < count; i++)                                             \
                out[i] = (T)(out[i] / (T)n);                                               \
    }

FN_NATIVE(fn_red_i8, int8_t, uint8_t)
FN_NATIVE(fn_red_u8, uint8_t, uint8_t)
FN_NATIVE(fn_red_i32, int32_t, uint32_t)
FN_NATIVE(fn_red_u32, uint32_t, uint32_t)
FN_NATIVE(fn_red_i64, int64_t, uint64_t)
FN_NATIVE(fn_red_u64, uint64_t, uint64_t)
FN_NATIVE(fn_red_f32, float, float)
FN_NATIVE(fn_red_f64, double, double)

void fn_reduce(void *out, const void *const *in, int n, size_t count, ncclDataType_t t,
               ncclRedOp_t op, int premul, double scalar)
{
    switch (t) {
    case ncclInt8: fn_red_i8(out, in, n, count, op, premul, scalar); return;
    case ncclUint8: fn_red_u8(out, in, n, count, op, premul, scalar); return;
    case ncclInt32: fn_red_i32(out, in, n, count, op, premul, scalar); return;
    case ncclUint32: fn_red_u32(out, in, n, count, op, premul, scalar); return;
    case ncclInt64: fn_red_i64(out, in, n, count, op, premul, scalar); return;
    case ncclUint64: fn_red_u64(out, in, n, count, op, premul, scalar); return;
    case ncclFloat32: fn_red_f32(out, in, n, count, op, premul, scalar); return;
    case ncclFloat64: fn_red_f64(out, in, n, count, op, premul, scalar); return;
    default: break;
    }
    for (size_t i = 0; i < count; i++) {
        float a = (float)fn_load(in[0], i, t) * (premul ? (float)scalar : 1.0f);
        for (int r = 1; r < n; r++) {
            float b = (float)fn_load(in[r], i, t) * (premul ? (float)scalar : 1.0f);
            a = op == ncclProd ? a * b : op == ncclMax ? fmaxf(a, b) : op == ncclMin ? fminf(a, b)
                                                                       : a + b;
        }
        fn_store_small(out, i, t, op == ncclAvg ? a / (float)n : a);
    }
}
