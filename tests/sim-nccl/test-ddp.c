/* PyTorch's DDP tutorial (multigpu_torchrun.py, unmodified) under torchrun with 2 ranks, on
 * NVIDIA's runtime over the simulated driver (two simulated H100s) and the simulated NCCL,
 * preloaded: PyTorch finds NVIDIA's libnccl.so.2 through its DT_RPATH, searched before
 * LD_LIBRARY_PATH, and only a preloaded library of that soname replaces it. Every rank runs
 * every collective, and each collective's ranks agree on who arrived last. */
#include "sn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST_IMPL(ddp_tutorial_trains_on_two_ranks)
{
    const char *venv = ctt_status_ok(SN_PT_STATUS, "PyTorch virtual environment",
                                     "tests/pytorch/venv.sh");
    char torchrun[4200], drv[4096], lib[4096], ld[4200], pre[4200], truth[4096], tr[4200];
    snprintf(torchrun, sizeof torchrun, "%s/bin/torchrun", venv);
    ctt_path(drv, "tests/nvrt/driver");
    ctt_path(lib, "tests/fakenccl/libnccl.so.2");
    snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", drv);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", lib);
    snprintf(tr, sizeof tr, "FAKENCCL_TRUTH=%s", sn_tmp_env(truth, "FAKENCCL_TRUTH", "nccl-truth.txt"));
    char *env[] = {ld, pre, tr, "FAKECUDA_DEVICES=h100,h100", "PYTHONDONTWRITEBYTECODE=1",
                   "OMP_NUM_THREADS=1", NULL};
    char *argv[] = {torchrun, "--standalone", "--nproc_per_node", "2",
                    SN_REPO "/../shared/third_party/pytorch-examples/distributed/"
                            "ddp-tutorial-series/multigpu_torchrun.py",
                    "2", "1", NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, env, 600), ==, 0);
    if (!p.exited || p.code != 0)
        fprintf(stderr, "torchrun: %s %d; stderr:\n%s\n", p.exited ? "exit status" : "signal",
                p.code, p.err);
    ASSERT(p.exited && p.code == 0);
    ASSERT_CONTAINS(p.out, "[GPU0] Epoch 1 | Batchsize: 32 | Steps: 32");
    ASSERT_CONTAINS(p.out, "[GPU1] Epoch 1 | Batchsize: 32 | Steps: 32");
    ASSERT_CONTAINS(p.out, "Epoch 1 | Training snapshot saved at snapshot.pt");
    ctt_proc_free(&p);
    static sn_truth t[4096];
    int nt = sn_truth_read(truth, t, 4096), allreduces = 0;
    ASSERT(nt > 0);
    ASSERT_INT(nt % 2, ==, 0);
    for (int i = 0; i < nt; i++) {
        const sn_truth *peer = sn_truth_find(t, nt, 1 - t[i].rank, t[i].kind, t[i].seq);
        ASSERT(peer && peer->comm == t[i].comm);
        ASSERT_STR(peer->func, t[i].func);
        ASSERT_INT(peer->last, ==, t[i].last);
        ASSERT_INT(t[i].end, >, t[i].last);
        allreduces += strcmp(t[i].func, "AllReduce") == 0;
    }
    /* 2048 samples, batches of 32 on 2 ranks: 32 steps an epoch, a gradient bucket each. */
    ASSERT_INT(allreduces, ==, 2 * 2 * 32);
    return 0;
}
