/* libsample_kernels.so: host implementations (tests/fakecuda/fakecuda.h) of the kernels of the
 * cuda-samples the tracer suite runs (test-samples.c), so their own result checks
 * run on the simulation. Each computes what the sample's kernel source computes for the launch's
 * grid; threads run one after another, which is one of the orders a GPU may run them in (the
 * atomics use the host's atomics: systemWideAtomics' CPU threads update the same words while its
 * kernel runs). Kernels left out are listed in samples.txt with the reason. */
#include "../fakecuda/fakecuda.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_KERNEL(name) \
    void fakecuda_kernel_##name(void **params, const fakecuda_launch *launch); \
    void fakecuda_kernel_##name(void **params, const fakecuda_launch *launch)

#define ARG(i, type) (*(type *)params[i])

/* threads in the launch (all samples here use 1-D grids of 1-D blocks) */
static unsigned long threads(const fakecuda_launch *l)
{
    return (unsigned long)l->grid[0] * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
}

/* asyncAPI's increment_kernel(int *g_data, int inc_value): one element per thread */
HOST_KERNEL(_Z16increment_kernelPii)
{
    int *data = ARG(0, int *), inc = ARG(1, int);
    for (unsigned long i = 0, n = threads(launch); i < n; i++)
        data[i] += inc;
}

/* C[i] = A[i] + B[i] for i < n, one element per thread: vectorAdd, vectorAdd_nvrtc, the driver
 * samples' VecAdd_kernel, simpleZeroCopy's vectorAddGPU */
static void vector_add(void **params, const fakecuda_launch *launch)
{
    const float *a = ARG(0, const float *), *b = ARG(1, const float *);
    float *c = ARG(2, float *);
    unsigned long n = (unsigned long)ARG(3, int), t = threads(launch);
    for (unsigned long i = 0; i < n && i < t; i++)
        c[i] = a[i] + b[i];
}
HOST_KERNEL(_Z9vectorAddPKfS0_Pfi) { vector_add(params, launch); }
HOST_KERNEL(vectorAdd) { vector_add(params, launch); }
HOST_KERNEL(VecAdd_kernel) { vector_add(params, launch); }
HOST_KERNEL(_Z12vectorAddGPUPfS_S_i) { vector_add(params, launch); }

/* simpleOccupancy's square(int *array, int arrayCount): array[i] *= array[i] for i < arrayCount */
HOST_KERNEL(_Z6squarePii)
{
    int *a = ARG(0, int *);
    unsigned long n = (unsigned long)ARG(1, int), t = threads(launch);
    for (unsigned long i = 0; i < n && i < t; i++)
        a[i] *= a[i];
}

/* simpleAWBarrier's normVecByDotProductAWBarrier(float *vecA, float *vecB, double *partial, int
 * size): each block's share of the dot product (thread r of the grid sums elements r, r + G, ...)
 * into partial[block], their sum's square root into partial[0], then both vectors divided by it */
HOST_KERNEL(_Z28normVecByDotProductAWBarrierPfS_Pdi)
{
    float *a = ARG(0, float *), *b = ARG(1, float *);
    double *partial = ARG(2, double *), total = 0;
    unsigned long n = (unsigned long)ARG(3, int), g = threads(launch), bs = launch->block[0];
    for (unsigned long k = 0; k < launch->grid[0]; k++)
        partial[k] = 0;
    for (unsigned long i = 0; i < n; i++)
        partial[(i % g) / bs] += (double)(a[i] * b[i]);
    for (unsigned long k = 0; k < launch->grid[0]; k++)
        total += partial[k];
    partial[0] = sqrt(total);
    for (unsigned long i = 0; i < n; i++) {
        a[i] = (float)(a[i] / partial[0]);
        b[i] = (float)(b[i] / partial[0]);
    }
}

/* template's and simpleTemplates' testKernel(T *in, T *out): one block; out[t] = blockDim.x * in[t] */
#define SCALE_BY_BLOCK(name, T) \
    HOST_KERNEL(name) \
    { \
        const T *in = ARG(0, const T *); \
        T *out = ARG(1, T *); \
        for (unsigned t = 0; t < launch->block[0]; t++) \
            out[t] = (T)launch->block[0] * in[t]; \
    }
SCALE_BY_BLOCK(_Z10testKernelPfS_, float)
SCALE_BY_BLOCK(_Z10testKernelIfEvPT_S1_, float)
SCALE_BY_BLOCK(_Z10testKernelIiEvPT_S1_, int)

/* cudaOpenMP's kernelAddConstant(int *g_a, const int b) */
HOST_KERNEL(_Z17kernelAddConstantPii)
{
    int *a = ARG(0, int *), b = ARG(1, int);
    for (unsigned long i = 0, n = threads(launch); i < n; i++)
        a[i] += b;
}

/* C = A B, one element of C per thread of a 2-D grid of 2-D blocks, as (float *C, float *A,
 * float *B, int wA, int wB): each element's products summed in k order, as the kernels do (row
 * by row, k outer, so the host vectorizes the inner loop) */
static void matrix_mul(void **params, const fakecuda_launch *launch, int wide)
{
    float *c = ARG(0, float *);
    const float *a = ARG(1, const float *), *b = ARG(2, const float *);
    long wa = wide ? (long)ARG(3, size_t) : ARG(3, int), wb = wide ? (long)ARG(4, size_t) : ARG(4, int);
    long rows = (long)launch->grid[1] * launch->block[1], cols = (long)launch->grid[0] * launch->block[0];
    for (long r = 0; r < rows; r++) {
        float *restrict row = c + r * wb;
        for (long col = 0; col < cols; col++)
            row[col] = 0;
        for (long k = 0; k < wa; k++) {
            const float x = a[r * wa + k], *restrict bk = b + k * wb;
            for (long col = 0; col < cols; col++)
                row[col] += x * bk[col];
        }
    }
}
/* matrixMul's MatrixMulCUDA<32>, matrixMul_nvrtc's matrixMulCUDA_block32, matrixMulDynlinkJIT's
 * matrixMul_bs32_32bit */
HOST_KERNEL(_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii) { matrix_mul(params, launch, 0); }
HOST_KERNEL(matrixMulCUDA_block32) { matrix_mul(params, launch, 0); }
HOST_KERNEL(matrixMul_bs32_32bit) { matrix_mul(params, launch, 0); }
/* matrixMulDrv's, with size_t widths */
HOST_KERNEL(matrixMul_bs32_64bit) { matrix_mul(params, launch, 1); }

/* simpleHyperQ's kernel_A and kernel_B(clock_t *d_o, clock_t clock_count) spin until the SM
 * clock has advanced clock_count and store how far it did: at least clock_count, here exactly;
 * sum(clock_t *d_clocks, int N) leaves the N values' sum in d_clocks[0]. */
static void clock_block(void **params) { *ARG(0, long *) = ARG(1, long); }
HOST_KERNEL(_Z8kernel_APll) { (void)launch; clock_block(params); }
HOST_KERNEL(_Z8kernel_BPll) { (void)launch; clock_block(params); }
HOST_KERNEL(_Z3sumPli)
{
    (void)launch;
    long *clocks = ARG(0, long *), total = 0;
    for (int i = 0; i < ARG(1, int); i++)
        total += clocks[i];
    clocks[0] = total;
}

/* simpleStreams' init_array(int *g_data, int *factor, int num_iterations) */
HOST_KERNEL(_Z10init_arrayPiS_i)
{
    int *data = ARG(0, int *), factor = *ARG(1, int *), iterations = ARG(2, int);
    for (unsigned long i = 0, n = threads(launch); i < n; i++)
        data[i] += factor * iterations;
}

/* simpleMultiCopy's incKernel(int *g_out, int *g_in, int N, int inner_reps) */
HOST_KERNEL(_Z9incKernelPiS_ii)
{
    int *out = ARG(0, int *), *in = ARG(1, int *);
    unsigned long n = (unsigned long)ARG(2, int), t = threads(launch);
    for (unsigned long i = 0; i < n && i < t; i++)
        out[i] = in[i] + 1;
}

/* simpleCallback's incKernel(int *data, int N) */
HOST_KERNEL(_Z9incKernelPii)
{
    int *data = ARG(0, int *);
    unsigned long n = (unsigned long)ARG(1, int), t = threads(launch);
    for (unsigned long i = 0; i < n && i < t; i++)
        data[i]++;
}

/* simpleMultiGPU's reduceKernel(float *d_Result, float *d_Input, int N): thread tid sums the
 * elements tid, tid + threads, ... in that order */
HOST_KERNEL(_Z12reduceKernelPfS_i)
{
    float *result = ARG(0, float *);
    const float *in = ARG(1, const float *);
    long n = ARG(2, int), t = (long)threads(launch);
    for (long tid = 0; tid < t; tid++) {
        float sum = 0;
        for (long pos = tid; pos < n; pos += t)
            sum += in[pos];
        result[tid] = sum;
    }
}

/* One atomic operation of simpleAtomicIntrinsics / systemWideAtomics by thread tid on *w:
 * '+' add 10, '-' sub 10, 'x' exchange, 'M' max, 'm' min, 'i' inc (limit 17), 'd' dec (limit
 * 137), 'c' CAS(tid - 1 -> tid), '&' and 2 tid + 7, '|' or 1 << tid (0 from 32 on, as PTX's shl
 * gives), '^' xor tid. */
static void atomic_op(char op, int *w, int tid)
{
    int old = __atomic_load_n(w, __ATOMIC_RELAXED), new;
    switch (op) {
    case '+': __atomic_fetch_add(w, 10, __ATOMIC_SEQ_CST); return;
    case '-': __atomic_fetch_sub(w, 10, __ATOMIC_SEQ_CST); return;
    case 'x': __atomic_exchange_n(w, tid, __ATOMIC_SEQ_CST); return;
    case '&': __atomic_fetch_and(w, 2 * tid + 7, __ATOMIC_SEQ_CST); return;
    case '|': __atomic_fetch_or(w, tid < 32 ? (int)(1u << tid) : 0, __ATOMIC_SEQ_CST); return;
    case '^': __atomic_fetch_xor(w, tid, __ATOMIC_SEQ_CST); return;
    }
    do {
        switch (op) {
        case 'M': new = old > tid ? old : tid; break;
        case 'm': new = old < tid ? old : tid; break;
        case 'i': new = (unsigned)old >= 17 ? 0 : old + 1; break;
        case 'd': new = old == 0 || (unsigned)old > 137 ? 137 : old - 1; break;
        default: /* 'c' */
            if (old != tid - 1)
                return;
            new = tid;
        }
    } while (!__atomic_compare_exchange_n(w, &old, new, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

/* Each thread applies ops[k] to words[k], for every k, `loops` times. */
static void atomic_threads(int *words, const char *ops, int loops, const fakecuda_launch *launch)
{
    for (unsigned long tid = 0, n = threads(launch); tid < n; tid++)
        for (int l = 0; l < loops; l++)
            for (int k = 0; ops[k]; k++)
                atomic_op(ops[k], &words[k], (int)tid);
}

/* simpleAtomicIntrinsics(_nvrtc)' testKernel(int *g_odata) */
HOST_KERNEL(_Z10testKernelPi) { atomic_threads(ARG(0, int *), "+-xMmidc&|^", 1, launch); }
HOST_KERNEL(testKernel) { atomic_threads(ARG(0, int *), "+-xMmidc&|^", 1, launch); }
/* systemWideAtomics' atomicKernel(int *atom_arr): LOOP_NUM (50) rounds */
HOST_KERNEL(_Z12atomicKernelPi) { atomic_threads(ARG(0, int *), "+xMmidc&|^", 50, launch); }

/* simpleVoteIntrinsics: one block; __any_sync / __all_sync over each warp of 32 threads */
static void vote(void **params, const fakecuda_launch *launch, int all)
{
    const unsigned *in = ARG(0, const unsigned *);
    unsigned *result = ARG(1, unsigned *);
    for (unsigned w = 0; w < launch->block[0]; w += 32) {
        unsigned v = all;
        for (unsigned t = w; t < w + 32; t++)
            v = all ? v && in[t] : v || in[t];
        for (unsigned t = w; t < w + 32; t++)
            result[t] = v;
    }
}
HOST_KERNEL(_Z14VoteAnyKernel1PjS_i) { vote(params, launch, 0); }
HOST_KERNEL(_Z14VoteAllKernel2PjS_i) { vote(params, launch, 1); }

/* VoteAnyKernel3(bool *info, int warp_size): per thread, any and all over its warp of
 * tx >= 3 warp_size / 2, and its own value */
HOST_KERNEL(_Z14VoteAnyKernel3Pbi)
{
    bool *info = ARG(0, bool *);
    unsigned ws = (unsigned)ARG(1, int), edge = ws * 3 / 2;
    for (unsigned w = 0; w < launch->block[0]; w += ws) {
        bool any = false, all = true;
        for (unsigned t = w; t < w + ws; t++) {
            any |= t >= edge;
            all &= t >= edge;
        }
        for (unsigned t = w; t < w + ws; t++) {
            info[3 * t] = any;
            info[3 * t + 1] = t >= edge;
            if (all)
                info[3 * t + 2] = true;
        }
    }
}

/* mergeSort (ascending: the <1> instances): the two kernels that write the result. Sorting
 * SHARED_SIZE_LIMIT (1024) element blocks and merging pairs of sorted runs are what they compute;
 * the rank and limit kernels between them (generateSampleRanks, mergeRanksAndIndices) only split
 * a merge into pieces for the GPU's blocks, and the merge here, done whole, does not need them. */
static void merge_runs(unsigned *dk, unsigned *dv, const unsigned *ak, const unsigned *av,
                       unsigned long na, const unsigned *bk, const unsigned *bv, unsigned long nb)
{
    unsigned long i = 0, j = 0, o = 0;
    while (i < na || j < nb) /* stable: A's element first on equal keys */
        if (j == nb || (i < na && ak[i] <= bk[j])) {
            dk[o] = ak[i];
            dv[o++] = av[i++];
        } else {
            dk[o] = bk[j];
            dv[o++] = bv[j++];
        }
}

/* mergeSortSharedKernel<1>(dstKey, dstVal, srcKey, srcVal, arrayLength): each block stably
 * sorts its 1024 elements, as runs of arrayLength */
HOST_KERNEL(_Z21mergeSortSharedKernelILj1EEvPjS0_S0_S0_j)
{
    enum { LIMIT = 1024 };
    unsigned *dk = ARG(0, unsigned *), *dv = ARG(1, unsigned *);
    const unsigned *sk = ARG(2, const unsigned *), *sv = ARG(3, const unsigned *);
    unsigned length = ARG(4, unsigned);
    unsigned k[2][LIMIT], v[2][LIMIT];
    for (unsigned long b = 0; b < launch->grid[0]; b++) {
        int cur = 0;
        memcpy(k[0], sk + b * LIMIT, sizeof k[0]);
        memcpy(v[0], sv + b * LIMIT, sizeof v[0]);
        for (unsigned width = 1; width < length; width *= 2, cur ^= 1)
            for (unsigned lo = 0; lo < LIMIT; lo += 2 * width)
                merge_runs(k[cur ^ 1] + lo, v[cur ^ 1] + lo, k[cur] + lo, v[cur] + lo, width,
                           k[cur] + lo + width, v[cur] + lo + width, width);
        memcpy(dk + b * LIMIT, k[cur], sizeof k[cur]);
        memcpy(dv + b * LIMIT, v[cur], sizeof v[cur]);
    }
}

/* mergeElementaryIntervalsKernel<1>(dstKey, dstVal, srcKey, srcVal, limitsA, limitsB, stride,
 * N): each pair of sorted runs of stride elements merged; a last run without a partner is the
 * host's to copy (mergeSort.cu) */
HOST_KERNEL(_Z30mergeElementaryIntervalsKernelILj1EEvPjS0_S0_S0_S0_S0_jj)
{
    (void)launch;
    unsigned *dk = ARG(0, unsigned *), *dv = ARG(1, unsigned *);
    const unsigned *sk = ARG(2, const unsigned *), *sv = ARG(3, const unsigned *);
    unsigned long stride = ARG(6, unsigned), n = ARG(7, unsigned);
    for (unsigned long base = 0; base + stride < n; base += 2 * stride) {
        unsigned long nb = n - base - stride < stride ? n - base - stride : stride;
        merge_runs(dk + base, dv + base, sk + base, sv + base, stride, sk + base + stride,
                   sv + base + stride, nb);
    }
}

/* Device printf: a GPU prints a kernel's lines when the host synchronizes with it, after what the
 * program printed before; the host implementations print on the simulation thread that runs the
 * kernel, into the same stdout buffer, before the launch is complete. Threads in block order. */

/* simplePrintf's testKernel(int val) */
HOST_KERNEL(_Z10testKerneli)
{
    int val = ARG(0, int);
    const unsigned *g = launch->grid, *b = launch->block;
    for (unsigned by = 0; by < g[1]; by++)
        for (unsigned bx = 0; bx < g[0]; bx++)
            for (unsigned t = 0; t < b[0] * b[1] * b[2]; t++)
                printf("[%u, %u]:\t\tValue is:%d\n", by * g[0] + bx, t, val);
}

/* sum of the thread ranks lo .. hi - 1, as simpleCooperativeGroups' sumReduction adds them */
static int rank_sum(int lo, int hi)
{
    int sum = 0;
    for (int r = lo; r < hi; r++)
        sum += r - lo;
    return sum;
}

/* simpleCooperativeGroups' cgkernel(): one block; its ranks summed, then each tile of 16's */
HOST_KERNEL(_Z8cgkernelv)
{
    (void)params;
    int n = (int)launch->block[0];
    printf(" Sum of all ranks 0..%d in threadBlockGroup is %d (expected %d)\n\n", n - 1,
           rank_sum(0, n), (n - 1) * n / 2);
    printf(" Now creating %d groups, each of size 16 threads:\n\n", n / 16);
    for (int t = 0; t < n; t += 16)
        printf("   Sum of all ranks 0..15 in this tiledPartition16 group is %d (expected %d)\n",
               rank_sum(t, t + 16), 15 * 16 / 2);
}

/* fp16ScalarProduct's scalarProductKernel_intrinsics and _native(const half2 *a, const half2 *b,
 * float *results, size_t size): per thread, from element tid + blockDim.x + blockIdx.x (sic) by
 * the grid's stride, value = a b + value in half precision (__hfma2; nvcc contracts the native
 * a[i] * b[i] + value to it too, -fmad=true being its default), then the block's 128 values
 * summed pairwise in halves (__hadd2, 64 down to 1) and results[block] = x + y in float. Each
 * half operation is computed exactly in double and rounded once to _Float16, as the GPU rounds
 * it. */
typedef struct {
    _Float16 x, y;
} half2;

static _Float16 hfma(_Float16 a, _Float16 b, _Float16 c) { return (_Float16)((double)a * b + c); }
static _Float16 hadd(_Float16 a, _Float16 b) { return (_Float16)((double)a + b); }

static void scalar_product(void **params, const fakecuda_launch *launch)
{
    enum { THREADS = 128 };
    const half2 *a = ARG(0, const half2 *), *b = ARG(1, const half2 *);
    float *results = ARG(2, float *);
    unsigned long size = ARG(3, unsigned long), stride = threads(launch);
    for (unsigned blk = 0; blk < launch->grid[0]; blk++) {
        half2 v[THREADS];
        for (unsigned t = 0; t < THREADS && t < launch->block[0]; t++) {
            half2 value = {0, 0};
            for (unsigned long i = t + launch->block[0] + blk; i < size; i += stride) {
                value.x = hfma(a[i].x, b[i].x, value.x);
                value.y = hfma(a[i].y, b[i].y, value.y);
            }
            v[t] = value;
        }
        for (unsigned s = THREADS / 2; s > 0; s /= 2)
            for (unsigned t = 0; t < s; t++) {
                v[t].x = hadd(v[t].x, v[t + s].x);
                v[t].y = hadd(v[t].y, v[t + s].y);
            }
        results[blk] = (float)v[0].x + (float)v[0].y;
    }
}
HOST_KERNEL(_Z30scalarProductKernel_intrinsicsPK7__half2S1_Pfm) { scalar_product(params, launch); }
HOST_KERNEL(_Z26scalarProductKernel_nativePK7__half2S1_Pfm) { scalar_product(params, launch); }

/* ---- textures (the driver's sampler, fakecuda.h, as the texture unit does) ---- */

fakecuda_texture_api fakecuda_textures; /* filled in by the driver when it loads this library */

/* the launch's 2-D thread indices, x fastest */
#define FOR_2D(launch, x, y)                                                            \
    for (unsigned y = 0; y < (launch)->grid[1] * (launch)->block[1]; y++)              \
        for (unsigned x = 0; x < (launch)->grid[0] * (launch)->block[0]; x++)

/* simplePitchLinearTexture's shiftPitchLinear and shiftArray(float *odata, int pitch, int width,
 * int height, int shiftX, int shiftY, cudaTextureObject_t tex): odata[y * pitch + x] =
 * tex2D<float>(tex, (x + shiftX) / (float)width, (y + shiftY) / (float)height) */
static void shift(void **params, const fakecuda_launch *launch)
{
    float *out = ARG(0, float *);
    int pitch = ARG(1, int), width = ARG(2, int), height = ARG(3, int), sx = ARG(4, int), sy = ARG(5, int);
    unsigned long long tex = ARG(6, unsigned long long);
    unsigned w = launch->grid[0] * launch->block[0], h = launch->grid[1] * launch->block[1];
    float *u = malloc(w * sizeof *u);
    fakecuda_float4 *got = malloc(w * sizeof *got);
    if (!u || !got)
        abort();
    for (unsigned x = 0; x < w; x++)
        u[x] = (x + sx) / (float)width;
    for (unsigned y = 0; y < h; y++) {
        fakecuda_textures.tex_fetch_row(tex, w, u, (y + sy) / (float)height, 0, 0, got);
        for (unsigned x = 0; x < w; x++)
            out[y * pitch + x] = got[x].x;
    }
    free(u);
    free(got);
}
HOST_KERNEL(_Z16shiftPitchLinearPfiiiiiy) { shift(params, launch); }
HOST_KERNEL(_Z10shiftArrayPfiiiiiy) { shift(params, launch); }

/* simpleLayeredTexture's transformKernel(float *g_odata, int width, int height, int layer,
 * cudaTextureObject_t tex): -tex2DLayered<float>(tex, u, v, layer) + layer at texel centres */
HOST_KERNEL(_Z15transformKernelPfiiiy)
{
    float *out = ARG(0, float *);
    int width = ARG(1, int), height = ARG(2, int), layer = ARG(3, int);
    unsigned long long tex = ARG(4, unsigned long long);
    FOR_2D(launch, x, y) {
        float u = (x + 0.5f) / (float)width, v = (y + 0.5f) / (float)height;
        out[layer * width * height + y * width + x] = -fakecuda_textures.tex_fetch(tex, u, v, (float)layer, 0).x + layer;
    }
}

/* simpleCubemapTexture's transformKernel(float *g_odata, int width, cudaTextureObject_t tex):
 * for each face, the direction through texel (x, y) of that face, g_odata = -texCubemap(...) */
HOST_KERNEL(_Z15transformKernelPfiy)
{
    float *out = ARG(0, float *);
    int width = ARG(1, int);
    unsigned long long tex = ARG(2, unsigned long long);
    FOR_2D(launch, x, y) {
        float u = ((x + 0.5f) / (float)width) * 2.f - 1.f, v = ((y + 0.5f) / (float)width) * 2.f - 1.f;
        const float dir[6][3] = {{1, -v, -u}, {-1, -v, u}, {u, 1, v}, {u, -1, -v}, {u, -v, 1}, {-u, -v, -1}};
        for (unsigned face = 0; face < 6; face++)
            out[face * width * width + y * width + x] =
                -fakecuda_textures.tex_cubemap(tex, dir[face][0], dir[face][1], dir[face][2], 0).x;
    }
}
