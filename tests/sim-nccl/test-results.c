/* Every collective and send/receive computes what NCCL documents, with 2 and 4 ranks. */
#include "sn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000 /* elements per rank */

static CUdeviceptr sn_alloc_copy(const void *host, size_t bytes)
{
    CUdeviceptr d = 0;
    if (cuMemAlloc_v2(&d, bytes) != CUDA_SUCCESS)
        return 0;
    if (host && cuMemcpyHtoD_v2(d, host, bytes) != CUDA_SUCCESS)
        return 0;
    return d;
}

/* x[r][i]: rank r's input element i. */
static float sn_x(int r, int i)
{
    return (float)(r + 1) + (float)(i % 7);
}

/* The sum over the n ranks of their element i. */
static float sn_sum(int n, int i)
{
    float want = 0;
    for (int r = 0; r < n; r++)
        want += sn_x(r, i);
    return want;
}

static int sn_results_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    (void)arg;
    ncclComm_t comm;
    NK(ncclCommInitRank(&comm, n, *id, rank));
    int nr, dev, me;
    NK(ncclCommCount(comm, &nr));
    NK(ncclCommUserRank(comm, &me));
    NK(ncclCommCuDevice(comm, &dev));
    ASSERT_INT(nr, ==, n);
    ASSERT_INT(me, ==, rank);
    ASSERT_INT(dev, ==, 0);
    CUstream s; /* blocking: ordered after the legacy stream's copies, which may return early */
    CK(cuStreamCreate(&s, 0));
    cudaStream_t cs = (cudaStream_t)s;
    size_t nn = (size_t)n;
    float *in = malloc(N * nn * sizeof(float)), *out = malloc(N * nn * sizeof(float));
    ASSERT(in && out);
    for (int i = 0; i < N * n; i++)
        in[i] = sn_x(rank, i);
    CUdeviceptr din = sn_alloc_copy(in, N * nn * sizeof(float));
    CUdeviceptr dout = sn_alloc_copy(NULL, N * nn * sizeof(float));
    ASSERT(din && dout);

    /* All-reduce: sum, then max in place (int32). */
    NK(ncclAllReduce((void *)din, (void *)dout, N, ncclFloat32, ncclSum, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        ASSERT_NEAR(out[i], sn_sum(n, i), 1e-4);
    int32_t iv[4] = {rank, -rank, 10 * rank, 7};
    CUdeviceptr di = sn_alloc_copy(iv, sizeof iv);
    NK(ncclAllReduce((void *)di, (void *)di, 4, ncclInt32, ncclMax, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(iv, di, sizeof iv));
    ASSERT_INT(iv[0], ==, n - 1);
    ASSERT_INT(iv[1], ==, 0);
    ASSERT_INT(iv[2], ==, 10 * (n - 1));
    ASSERT_INT(iv[3], ==, 7);

    /* Average in double, PreMulSum in float. */
    double dv = rank;
    CUdeviceptr dd = sn_alloc_copy(&dv, sizeof dv);
    NK(ncclAllReduce((void *)dd, (void *)dd, 1, ncclFloat64, ncclAvg, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(&dv, dd, sizeof dv));
    ASSERT_NEAR(dv, (n - 1) / 2.0, 1e-12);
    ncclRedOp_t pm;
    float half = 0.5f;
    NK(ncclRedOpCreatePreMulSum(&pm, &half, ncclFloat32, ncclScalarHostImmediate, comm));
    NK(ncclAllReduce((void *)din, (void *)dout, N, ncclFloat32, pm, comm, cs));
    NK(ncclRedOpDestroy(pm, comm));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, sizeof(float)));
    float want0 = 0;
    for (int r = 0; r < n; r++)
        want0 += 0.5f * sn_x(r, 0);
    ASSERT_NEAR(out[0], want0, 1e-5);

    /* All-gather: rank r's N elements at r * N. */
    NK(ncclAllGather((void *)din, (void *)dout, N, ncclFloat32, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, N * nn * sizeof(float)));
    for (int r = 0; r < n; r++)
        for (int i = 0; i < N; i++)
            ASSERT_NEAR(out[r * N + i], sn_x(r, i), 0);

    /* Reduce-scatter: block `rank` of the sum of the n * N inputs. */
    NK(ncclReduceScatter((void *)din, (void *)dout, N, ncclFloat32, ncclSum, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        ASSERT_NEAR(out[i], sn_sum(n, rank * N + i), 1e-4);

    /* Broadcast from the last rank; reduce (product) to rank 0. */
    NK(ncclBroadcast((void *)din, (void *)dout, N, ncclFloat32, n - 1, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        ASSERT_NEAR(out[i], sn_x(n - 1, i), 0);
    CK(cuMemsetD32_v2(dout, 0, N));
    NK(ncclReduce((void *)din, (void *)dout, N, ncclFloat32, ncclProd, 0, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, N * sizeof(float)));
    float prod = 1;
    for (int r = 0; r < n; r++)
        prod *= sn_x(r, 3);
    ASSERT_NEAR(out[3], rank == 0 ? prod : 0, 1e-3);

    /* Half precision sums round as the GPU's: 1 + 2 + ... in f16. */
    uint16_t h = 0x3c00; /* 1.0 */
    CUdeviceptr dh = sn_alloc_copy(&h, sizeof h);
    NK(ncclAllReduce((void *)dh, (void *)dh, 1, ncclFloat16, ncclSum, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(&h, dh, sizeof h));
    ASSERT_INT(h, ==, n == 2 ? 0x4000 : 0x4400); /* 2.0, 4.0 */

    /* A ring of sends and receives in one group, and an all-to-all. */
    NK(ncclGroupStart());
    NK(ncclSend((void *)din, N, ncclFloat32, (rank + 1) % n, comm, cs));
    NK(ncclRecv((void *)dout, N, ncclFloat32, (rank + n - 1) % n, comm, cs));
    NK(ncclGroupEnd());
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, N * sizeof(float)));
    for (int i = 0; i < N; i++)
        ASSERT_NEAR(out[i], sn_x((rank + n - 1) % n, i), 0);
    NK(ncclAlltoAll((void *)din, (void *)dout, N / 4, ncclFloat32, comm, cs));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH_v2(out, dout, N / 4 * nn * sizeof(float)));
    for (int r = 0; r < n; r++)
        for (int i = 0; i < N / 4; i++)
            ASSERT_NEAR(out[r * (N / 4) + i], sn_x(r, rank * (N / 4) + i), 0);

    ncclResult_t async;
    NK(ncclCommGetAsyncError(comm, &async));
    ASSERT_INT(async, ==, ncclSuccess);
    NK(ncclCommFinalize(comm));
    NK(ncclCommDestroy(comm));
    return 0;
}

TEST_IMPL(collectives_compute_what_nccl_documents)
{
    for (int n = 2; n <= 4; n += 2) {
        int st[4];
        int r = sn_ranks(n, sn_results_rank, NULL, 60, st);
        if (r != SN_PASSED)
            fprintf(stderr, "%d ranks: exit codes %d %d %d %d\n", n, st[0], st[1],
                    n > 2 ? st[2] : 0, n > 2 ? st[3] : 0);
        ASSERT_INT(r, ==, SN_PASSED);
    }
    return 0;
}

/* Four ranks split into even and odd halves, keys reversing their order; each half sums its
 * ranks. */
static int sn_split_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    (void)arg;
    ncclComm_t comm, half, none;
    NK(ncclCommInitRank(&comm, n, *id, rank));
    NK(ncclCommSplit(comm, rank % 2, -rank, &half, NULL));
    NK(ncclCommSplit(comm, rank == 0 ? 0 : NCCL_SPLIT_NOCOLOR, 0, &none, NULL));
    ASSERT((none != NULL) == (rank == 0));
    int hn, hr;
    NK(ncclCommCount(half, &hn));
    NK(ncclCommUserRank(half, &hr));
    ASSERT_INT(hn, ==, 2);
    ASSERT_INT(hr, ==, rank < 2 ? 1 : 0);
    int32_t v = rank;
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, sizeof v));
    CK(cuMemcpyHtoD_v2(d, &v, sizeof v));
    NK(ncclAllReduce((void *)d, (void *)d, 1, ncclInt32, ncclSum, half, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH_v2(&v, d, sizeof v));
    ASSERT_INT(v, ==, rank % 2 ? 1 + 3 : 0 + 2);
    NK(ncclCommDestroy(half));
    if (none)
        NK(ncclCommDestroy(none));
    NK(ncclCommDestroy(comm));
    return 0;
}

TEST_IMPL(split_groups_ranks_by_color_and_key)
{
    ASSERT_INT(sn_ranks(4, sn_split_rank, NULL, 60, NULL), ==, SN_PASSED);
    return 0;
}

/* ncclCommInitAll: two simulated devices in one process, one stream on each, in a group. */
TEST_IMPL(init_all_runs_several_devices_in_one_process)
{
    setenv("FAKECUDA_DEVICES", "h100,h100", 1);
    CK(cuInit(0));
    ncclComm_t comms[2];
    int devs[2] = {0, 1};
    NK(ncclCommInitAll(comms, 2, devs));
    CUcontext ctx[2];
    CUstream s[2];
    CUdeviceptr d[2];
    for (int i = 0; i < 2; i++) {
        int dev;
        NK(ncclCommCuDevice(comms[i], &dev));
        ASSERT_INT(dev, ==, i);
        CK(cuDevicePrimaryCtxRetain(&ctx[i], i));
        CK(cuCtxSetCurrent(ctx[i]));
        CK(cuStreamCreate(&s[i], 0));
        double v = 1.5 + i;
        CK(cuMemAlloc_v2(&d[i], sizeof v));
        CK(cuMemcpyHtoD_v2(d[i], &v, sizeof v));
    }
    NK(ncclGroupStart());
    for (int i = 0; i < 2; i++)
        NK(ncclAllReduce((void *)d[i], (void *)d[i], 1, ncclFloat64, ncclSum, comms[i],
                         (cudaStream_t)s[i]));
    NK(ncclGroupEnd());
    for (int i = 0; i < 2; i++) {
        double v;
        CK(cuStreamSynchronize(s[i]));
        CK(cuCtxSetCurrent(ctx[i]));
        CK(cuMemcpyDtoH_v2(&v, d[i], sizeof v));
        ASSERT_NEAR(v, 4.0, 0);
        NK(ncclCommDestroy(comms[i]));
    }
    return 0;
}

/* Ranks that disagree on a collective's count (a mismatch) all complete it, as NVIDIA's kernels
 * do, with what was staged: the elements every rank sent are reduced, the rest of the output is
 * left alone; FAKENCCL_TRUTH records each rank's own count. */
static int sn_mismatch_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    (void)arg;
    ncclComm_t comm;
    NK(ncclCommInitRank(&comm, n, *id, rank));
    float v[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, sizeof v));
    CK(cuMemcpyHtoD_v2(d, v, sizeof v));
    /* 2 everywhere; each rank's staging area then holds 8 ones, which the mismatch must not
     * read back. */
    NK(ncclAllReduce((void *)d, (void *)d, 8, ncclFloat32, ncclSum, comm, NULL));
    NK(ncclAllReduce((void *)d, (void *)d, rank ? 4 : 8, ncclFloat32, ncclSum, comm, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH_v2(v, d, sizeof v));
    ASSERT_NEAR(v[3], 4, 0);
    ASSERT_NEAR(v[4], 2, 0);
    NK(ncclCommDestroy(comm));
    return 0;
}

TEST_IMPL(mismatched_counts_complete)
{
    char truth[4096];
    sn_tmp_env(truth, "FAKENCCL_TRUTH", "nccl-truth.txt");
    ASSERT_INT(sn_ranks(2, sn_mismatch_rank, NULL, 60, NULL), ==, SN_PASSED);
    sn_truth t[8];
    ASSERT_INT(sn_truth_read(truth, t, 8), ==, 4);
    const sn_truth *r0 = sn_truth_find(t, 4, 0, "coll", 2), *r1 = sn_truth_find(t, 4, 1, "coll", 2);
    ASSERT(r0 && r1);
    ASSERT_UINT(r0->count, ==, 8);
    ASSERT_UINT(r1->count, ==, 4);
    return 0;
}
