/* A rank that never joins a collective leaves the others' kernels running until the job is
 * killed; ncclCommAbort releases them, and the other ranks learn of it from
 * ncclCommGetAsyncError. */
#include "sn.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    int skipper;
    _Atomic int in_sync[4];   /* the rank reached cuStreamSynchronize after collective 2 */
    _Atomic int past_sync[4]; /* ... and it returned */
    _Atomic int aborted;
} sn_hang;

static int sn_setup(int rank, int n, const ncclUniqueId *id, ncclComm_t *comm, CUstream *s,
                    CUdeviceptr *d)
{
    NK(ncclCommInitRank(comm, n, *id, rank));
    CK(cuStreamCreate(s, 0));
    CK(cuMemAlloc_v2(d, 1024 * sizeof(float)));
    CK(cuMemsetD32_v2(*d, 0, 1024));
    NK(ncclAllReduce((void *)*d, (void *)*d, 1024, ncclFloat32, ncclSum, *comm, (cudaStream_t)*s));
    CK(cuStreamSynchronize(*s));
    return 0;
}

static int sn_hang_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    sn_hang *H = arg;
    ncclComm_t comm;
    CUstream s;
    CUdeviceptr d;
    ASSERT_INT(sn_setup(rank, n, id, &comm, &s, &d), ==, 0);
    if (rank == H->skipper)
        for (;;)
            pause(); /* busy elsewhere, never joining collective 2 */
    NK(ncclAllReduce((void *)d, (void *)d, 1024, ncclFloat32, ncclSum, comm, (cudaStream_t)s));
    atomic_store(&H->in_sync[rank], 1);
    CK(cuStreamSynchronize(s));
    atomic_store(&H->past_sync[rank], 1);
    return 0;
}

TEST_IMPL(skipped_collective_blocks_until_killed)
{
    char truth[4096];
    snprintf(truth, sizeof truth, "%s/nccl-truth.txt", ctt_tmpdir());
    setenv("FAKENCCL_TRUTH", truth, 1);
    sn_hang *H = sn_shared(sizeof *H);
    ASSERT(H);
    H->skipper = 2;
    int st[4];
    ASSERT_INT(sn_ranks(4, sn_hang_rank, H, 3, st), ==, SN_KILLED);
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

static int sn_abort_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    sn_hang *H = arg;
    ncclComm_t comm;
    CUstream s;
    CUdeviceptr d;
    ASSERT_INT(sn_setup(rank, n, id, &comm, &s, &d), ==, 0);
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
    snprintf(truth, sizeof truth, "%s/nccl-truth.txt", ctt_tmpdir());
    setenv("FAKENCCL_TRUTH", truth, 1);
    sn_hang *H = sn_shared(sizeof *H);
    ASSERT(H);
    H->skipper = 1;
    ASSERT_INT(sn_ranks(2, sn_abort_rank, H, 60, NULL), ==, SN_PASSED);
    sn_truth t[16];
    int nt = sn_truth_read(truth, t, 16);
    ASSERT_INT(nt, ==, 3);
    const sn_truth *x = sn_truth_find(t, nt, 0, "coll", 2);
    ASSERT(x);
    ASSERT_INT(x->aborted, ==, 1);
    ASSERT(!sn_truth_find(t, nt, 1, "coll", 2));
    return 0;
}
