/* A late rank delays every rank's kernel: none ends before the last rank has launched its
 * part (checked with each rank's CUDA events and with FAKENCCL_TRUTH, whose intervals the
 * driver's FAKECUDA_TRUTH repeats). */
#include "sn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SN_LAT_NS 20000

typedef struct {
    int late;
    long long late_launch_ns; /* the late rank's host time just before its call */
    long long before_ns[4];   /* each rank's host time before recording its first event */
    double elapsed_ns[4];     /* each rank's events around collective 2 */
} sn_late;

static int sn_late_rank(int rank, int n, const ncclUniqueId *id, void *arg)
{
    sn_late *L = arg;
    sn_rig g;
    ASSERT_INT(sn_rig_up(&g, rank, n, id), ==, 0);
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 4096 * sizeof(float)));
    CK(cuMemsetD32_v2(d, 0, 4096));
    void *p = (void *)d;
    NK(ncclAllReduce(p, p, 4096, ncclFloat32, ncclSum, g.comm, (cudaStream_t)g.s));
    CK(cuStreamSynchronize(g.s));
    if (rank == L->late) {
        usleep(100 * 1000);
        L->late_launch_ns = sd_now_ns();
    }
    L->before_ns[rank] = sd_now_ns();
    CK(cuEventRecord(g.a, g.s));
    NK(ncclAllReduce(p, p, 4096, ncclFloat32, ncclSum, g.comm, (cudaStream_t)g.s));
    CK(cuEventRecord(g.b, g.s));
    CK(cuStreamSynchronize(g.s));
    L->elapsed_ns[rank] = sd_elapsed_ns(g.a, g.b);
    NK(ncclCommDestroy(g.comm));
    return 0;
}

/* Whether the simulated driver's FAKECUDA_TRUTH holds a kernel of pid from start to end. */
static int sn_driver_saw(const char *path, int pid, long long start, long long end)
{
    FILE *f = fopen(path, "r");
    char line[512], kind[16];
    int p, found = 0;
    long long s, e;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "%d %*u %*u %15s %*u %lld %lld", &p, kind, &s, &e) == 4 &&
                p == pid && strcmp(kind, "kernel") == 0 && s == start && e == end;
    if (f)
        fclose(f);
    return found;
}

static int sn_late_case(int n, int late)
{
    char truth[4096], driver[4096];
    sn_tmp_env(truth, "FAKENCCL_TRUTH", n == 2 ? "nccl-truth-2.txt" : "nccl-truth-4.txt");
    sn_tmp_env(driver, "FAKECUDA_TRUTH", n == 2 ? "cuda-truth-2.txt" : "cuda-truth-4.txt");
    setenv("FAKENCCL_LAT_NS", "20000", 1);
    sn_late *L = sn_shared(sizeof *L);
    ASSERT(L);
    L->late = late;
    ASSERT_INT(sn_ranks(n, sn_late_rank, L, 60, NULL), ==, SN_PASSED);
    sn_truth t[64];
    int nt = sn_truth_read(truth, t, 64);
    ASSERT_INT(nt, ==, 2 * n);
    const sn_truth *lt = sn_truth_find(t, nt, late, "coll", 2);
    ASSERT(lt);
    ASSERT_INT(lt->start, >=, L->late_launch_ns);
    for (int r = 0; r < n; r++) {
        /* Events: the kernel ended at event a's time plus the elapsed time, and a was
         * recorded after before_ns. */
        ASSERT(L->elapsed_ns[r] > 0);
        ASSERT_INT(L->before_ns[r] + (long long)L->elapsed_ns[r], >=, L->late_launch_ns);
        const sn_truth *x = sn_truth_find(t, nt, r, "coll", 2);
        ASSERT(x);
        ASSERT_INT(x->last_rank, ==, late);
        ASSERT_INT(x->last, ==, lt->start);
        ASSERT_INT(x->end, >=, lt->start + SN_LAT_NS);
        if (r != late)
            ASSERT_INT(x->start, <, lt->start);
        /* The stream took the kernel's end: the driver's record of it is the same. */
        ASSERT(sn_driver_saw(driver, x->pid, x->start, x->end));
    }
    return 0;
}

TEST_IMPL(late_rank_delays_every_kernel_end)
{
    ASSERT_INT(sn_late_case(2, 1), ==, 0);
    ASSERT_INT(sn_late_case(4, 2), ==, 0);
    return 0;
}
