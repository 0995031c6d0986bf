/* A rank that never joins a collective leaves the others' kernels running until the job is
 * killed; ncclCommAbort releases them, and the other ranks learn of it from
 * ncclCommGetAsyncError. */
#include "sn.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    int skipper;
    int abort;                /* the others abort rather than wait */
    _Atomic int in_sync[4];   /* the rank reached cuStreamSynchronize after collective 2 */
    _Atomic int past_sync[4]; /* ... and it returned */
    _Atomic int aborted;
    long long all_in_sync_ns; /* the test's: when every waiting rank had reached its sync */
} sn_hang;

/* The rank's rig and buffer, after collective 1. */
static int sn_setup(int rank, int n, const ncclUniqueId *id, sn_rig *g, CUdeviceptr *d)
{
    ASSERT_INT(sn_rig_up(g, rank, n, id), ==, 0);
    CK(cuMemAlloc_v2(d, 1024 * sizeof(float)));
    CK(cuMemsetD32_v2(*d, 0, 1024));
    NK(ncclAllReduce((void *)*d, (void *)*d, 1024, ncclFloat32, ncclSum, g->comm, (cudaStream_t)g->s));
    CK(cuStreamSynchronize(g->s));
    return 0;
}

static int sn_hang_part(sn_hang *H, int rank, ncclComm_t comm, CUstream s, CUdeviceptr d)
{
    if (rank == H->skipper)
        for (;;)
            pause(); /* busy elsewhere, never joining collective 2 */
    NK(ncclAllReduce((void *)d, (void *)d, 1024, ncclFloat32, ncclSum, comm, (cudaStream_t)s));
    atomic_store(&H->in_sync[rank], 1);
    CK(cuStreamSynchronize(s));
    atomic_store(&H->past_sync[rank], 1);
    return 0;
}

static int sn_abort_part(sn_hang *H, int rank, ncclComm_t comm, CUstream s, CUdeviceptr d);

/* Collective 1, then the test's part. */
static int sn_hang_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    sn_hang *H = arg;
    sn_rig g;
    CUdeviceptr d;
    ASSERT_INT(sn_setup(rank, n, id, &g, &d), ==, 0);
    return (H->abort ? sn_abort_part : sn_hang_part)(H, rank, g.comm, g.s, d);
}

/* The ranks' shared state, FAKENCCL_TRUTH set to truth. */
static sn_hang *sn_hang_new(char truth[4096], int skipper, int abort)
{
    sn_tmp_env(truth, "FAKENCCL_TRUTH", "nccl-truth.txt");
    sn_hang *H = sn_shared(sizeof *H);
    if (H) {
        H->skipper = skipper;
        H->abort = abort;
    }
    return H;
}

/* The job's time limit: the waiting ranks have all been in cuStreamSynchronize for 300 ms. */
static int sn_hung(void *arg)
{
    sn_hang *H = arg;
    for (int r = 0; r < 4; r++)
        if (r != H->skipper && !atomic_load(&H->in_sync[r]))
            return 0;
    if (!H->all_in_sync_ns)
        H->all_in_sync_ns = sd_now_ns();
    return sd_now_ns() - H->all_in_sync_ns > 300 * 1000000ll;
}

TEST_IMPL(skipped_collective_blocks_until_killed)
{
    char truth[4096];
    sn_hang *H = sn_hang_new(truth, 2, 0);
    ASSERT(H);
    int st[4];
    ASSERT_INT(sn_ranks_until(4, sn_hang_rank, H, 120, st, sn_hung), ==, SN_KILLED);
    sn_truth t[64];
    int nt = sn_truth_read(truth, t, 64);
    ASSERT_INT(nt, ==, 4); /* collective 1 on every rank; collective 2 never ended */
    for (int r = 0; r < 4; r++) {
        ASSERT_INT(st[r], ==, -1);
        ASSERT(sn_truth_find(t, nt, r, "coll", 1));
        if (r != H->skipper) {
            ASSERT_INT(atomic_load(&H->in_sync[r]), ==, 1);
            ASSERT_INT(atomic_load(&H->past_sync[r]), ==, 0);
        }
    }
    return 0;
}

static int sn_abort_part(sn_hang *H, int rank, ncclComm_t comm, CUstream s, CUdeviceptr d)
{
    ncclResult_t async;
    if (rank == H->skipper) {
        /* Skips collective 2, and sees the other rank's abort as a remote error. */
        for (int i = 0; i < 6000; i++) {
            NK(ncclCommGetAsyncError(comm, &async));
            if (async != ncclSuccess)
                break;
            usleep(5000);
        }
        ASSERT_INT(atomic_load(&H->aborted), ==, 1);
        ASSERT_INT(async, ==, ncclRemoteError);
        NK(ncclCommAbort(comm));
        return 0;
    }
    NK(ncclAllReduce((void *)d, (void *)d, 1024, ncclFloat32, ncclSum, comm, (cudaStream_t)s));
    /* The kernel stays on the stream, as a watchdog polling it would see. */
    for (int i = 0; i < 20; i++) {
        ASSERT_INT(cuStreamQuery(s), ==, CUDA_ERROR_NOT_READY);
        usleep(10000);
    }
    NK(ncclCommGetAsyncError(comm, &async));
    ASSERT_INT(async, ==, ncclSuccess);
    atomic_store(&H->aborted, 1);
    NK(ncclCommAbort(comm));
    CK(cuStreamSynchronize(s));
    return 0;
}

TEST_IMPL(abort_releases_blocked_kernels)
{
    char truth[4096];
    sn_hang *H = sn_hang_new(truth, 1, 1);
    ASSERT(H);
    ASSERT_INT(sn_ranks(2, sn_hang_rank, H, 60, NULL), ==, SN_PASSED);
    sn_truth t[16];
    int nt = sn_truth_read(truth, t, 16);
    ASSERT_INT(nt, ==, 3);
    const sn_truth *x = sn_truth_find(t, nt, 0, "coll", 2);
    ASSERT(x);
    ASSERT_INT(x->aborted, ==, 1);
    ASSERT(!sn_truth_find(t, nt, 1, "coll", 2));
    return 0;
}
