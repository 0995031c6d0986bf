/* Kernel durations follow the link model: bus bandwidth worked out by hand from each rank's
 * CUDA events, with nccl-tests' definitions (algbw = bytes / time; busbw = algbw x 2(n-1)/n for
 * all-reduce, x (n-1)/n for all-gather and reduce-scatter, x 1 for broadcast and send/recv,
 * bytes being the whole buffer's), matches FAKENCCL_BW within 5%. The last rank to arrive
 * waits for nobody: the least time over the ranks is the model's plus at most the skew. Each
 * rank's events and kernel are queued behind a host function that waits until every rank's host
 * has queued its own: a host descheduled between two launches (four ranks on two loaded cores)
 * then delays no stream, and the last stream through starts its kernel at its event's time. */
#include "sn.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SN_BW 2e9
#define SN_BYTES (32u << 20)

enum { SN_AR, SN_AG, SN_RS, SN_BC, SN_SR, SN_NOPS };

typedef struct {
    atomic_int queued[SN_NOPS]; /* per operation: the ranks whose host has queued it whole */
    int n;
    double elapsed_ns[SN_NOPS][4];
} sn_model;

static ncclResult_t sn_op(int op, int rank, int n, CUdeviceptr in, CUdeviceptr out,
                          ncclComm_t comm, cudaStream_t s)
{
    size_t floats = SN_BYTES / 4;
    switch (op) {
    case SN_AR: return ncclAllReduce((void *)in, (void *)out, floats, ncclFloat32, ncclSum, comm, s);
    case SN_AG: return ncclAllGather((void *)in, (void *)out, floats / (size_t)n, ncclFloat32, comm, s);
    case SN_RS:
        return ncclReduceScatter((void *)in, (void *)out, floats / (size_t)n, ncclFloat32, ncclSum,
                                 comm, s);
    case SN_BC: return ncclBroadcast((void *)in, (void *)out, floats, ncclFloat32, 0, comm, s);
    default: {
        ncclResult_t r = ncclGroupStart();
        if (r == ncclSuccess)
            r = ncclSend((void *)in, floats, ncclFloat32, rank ^ 1, comm, s);
        if (r == ncclSuccess)
            r = ncclRecv((void *)out, floats, ncclFloat32, rank ^ 1, comm, s);
        ncclResult_t e = ncclGroupEnd();
        return r == ncclSuccess ? e : r;
    }
    }
}

typedef struct {
    sn_model *M;
    int op;
} sn_gate;

/* On the stream, before event a: until every rank's host has queued operation op. */
static void CUDA_CB sn_model_gate(void *arg)
{
    const sn_gate *g = arg;
    while (atomic_load(&g->M->queued[g->op]) < g->M->n)
        usleep(50);
}

static int sn_model_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    sn_model *M = arg;
    sn_rig g;
    ASSERT_INT(sn_rig_up(&g, rank, n, id), ==, 0);
    ncclComm_t comm = g.comm;
    CUstream s = g.s;
    CUdeviceptr in, out;
    CK(cuMemAlloc_v2(&in, SN_BYTES));
    CK(cuMemAlloc_v2(&out, SN_BYTES));
    CK(cuMemsetD32_v2(in, 0x3f800000u, SN_BYTES / 4));
    /* A warm-up, as nccl-tests runs: the first call also loads the kernels. */
    NK(ncclAllReduce((void *)in, (void *)out, 1, ncclFloat32, ncclSum, comm, (cudaStream_t)s));
    CK(cuCtxSynchronize());
    for (int op = 0; op < SN_NOPS; op++) {
        sn_gate gate = {M, op};
        CK(cuLaunchHostFunc(s, sn_model_gate, &gate));
        CK(cuEventRecord(g.a, s));
        NK(sn_op(op, rank, n, in, out, comm, (cudaStream_t)s));
        CK(cuEventRecord(g.b, s));
        atomic_fetch_add(&M->queued[op], 1);
        CK(cuStreamSynchronize(s));
        M->elapsed_ns[op][rank] = sd_elapsed_ns(g.a, g.b);
    }
    NK(ncclCommDestroy(comm));
    return 0;
}

TEST_IMPL(durations_match_the_link_model)
{
    setenv("FAKENCCL_BW", "2G", 1);
    setenv("FAKENCCL_LAT_NS", "20000", 1);
    setenv("FAKENCCL_SKEW_NS", "3000", 1);
    static const char *const names[] = {"all-reduce", "all-gather", "reduce-scatter",
                                        "broadcast", "send/recv"};
    for (int n = 2; n <= 4; n += 2) {
        sn_model *M = sn_shared(sizeof *M);
        ASSERT(M);
        M->n = n;
        ASSERT_INT(sn_ranks(n, sn_model_rank, M, 120, NULL), ==, SN_PASSED);
        double factor[SN_NOPS] = {2.0 * (n - 1) / n, (double)(n - 1) / n, (double)(n - 1) / n,
                                  1, 1};
        for (int op = 0; op < SN_NOPS; op++) {
            double t = M->elapsed_ns[op][0];
            for (int r = 1; r < n; r++)
                if (M->elapsed_ns[op][r] < t)
                    t = M->elapsed_ns[op][r];
            double algbw = SN_BYTES / (t * 1e-9), busbw = algbw * factor[op];
            printf("%d ranks %-14s time %.3f ms  algbw %.3f GB/s  busbw %.3f GB/s\n", n,
                   names[op], t * 1e-6, algbw * 1e-9, busbw * 1e-9);
            ASSERT_NEAR(busbw / SN_BW, 1.0, 0.05);
        }
    }
    return 0;
}
