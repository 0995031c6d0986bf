/* Every table of `cutrace summary --json` against what tracegen wrote (its defaults: 50
 * iterations of a 20 ms sleeping loader, a 4 MiB pageable batch, 30 kernels of 200/220/240 us,
 * a 4-byte pinned loss copy and a stream synchronization; 4 GiB allocated in setup). */
#include "an_helpers.h"

#include <math.h>

TEST_IMPL(summary_tables_match_generator)
{
    char dir[4096];
    ASSERT(an_gen(dir, "t", ""));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "schema_version"), ==, 2);
    /* run */
    ASSERT_UINT(tj_len(s, "processes"), ==, 1);
    ASSERT_INT(tj_num(s, "processes.0.pid"), ==, 1000);
    ASSERT_INT(tj_num(s, "processes.0.rank"), ==, 0);
    ASSERT_STR(tj_str(s, "processes.0.host"), "node0");
    ASSERT_STR(tj_str(s, "processes.0.command"), "python train.py --rank 0");
    ASSERT_INT(tj_num(s, "processes.0.complete"), ==, 1);
    ASSERT(tj_num(s, "processes.0.wall_ns") > 1.0e9);
    /* kernels: 1500 launches of 8 names; reduce_batch is k = 6, 14, 22 of each iteration */
    const tj *k = tj_get(s, "kernels");
    ASSERT_UINT(tj_len(s, "kernels"), ==, 8);
    double inst = 0;
    for (size_t i = 0; i < k->n; i++)
        inst += tj_num(k->v[i], "instances");
    ASSERT_INT(inst, ==, 1500);
    const tj *rb = tj_find(k, "name", "reduce_batch");
    ASSERT(rb);
    ASSERT_INT(tj_num(rb, "instances"), ==, 150);
    ASSERT_INT(tj_num(rb, "total_ns"), ==, 33000000);
    ASSERT_INT(tj_num(rb, "min_ns"), ==, 200000);
    ASSERT_INT(tj_num(rb, "max_ns"), ==, 240000);
    ASSERT_INT(tj_num(rb, "median_ns"), ==, 220000);
    ASSERT_NEAR(tj_num(rb, "avg_ns"), 220000, 1);
    /* copies: 50 x 4 MiB H2D pageable at 8 GB/s (+1.5 us), 50 x 4 B D2H pinned */
    const tj *c = tj_get(s, "copies");
    const tj *h2d = NULL, *d2h = NULL;
    for (size_t i = 0; i < c->n; i++) {
        if (!strcmp(tj_str(c->v[i], "op"), "H2D"))
            h2d = c->v[i];
        if (!strcmp(tj_str(c->v[i], "op"), "D2H"))
            d2h = c->v[i];
    }
    ASSERT(h2d && d2h);
    ASSERT_STR(tj_str(h2d, "host_kind"), "pageable");
    ASSERT_INT(tj_num(h2d, "count"), ==, 50);
    ASSERT_INT(tj_num(h2d, "bytes"), ==, 209715200);
    ASSERT_INT(tj_num(h2d, "total_ns"), ==, 50 * (524288 + 1500));
    ASSERT_NEAR(tj_num(h2d, "gbps"), 7.977, 0.01);
    ASSERT_NEAR(tj_num(h2d, "peak_pct"), 100 * 7.977 / 63.008, 0.1); /* PCIe gen5 x16 */
    ASSERT_STR(tj_str(d2h, "host_kind"), "pinned");
    ASSERT_INT(tj_num(d2h, "count"), ==, 50);
    ASSERT_INT(tj_num(d2h, "bytes"), ==, 200);
    /* API */
    const tj *a = tj_get(s, "api");
    ASSERT_INT(tj_num(tj_find(a, "name", "cudaLaunchKernel"), "calls"), ==, 1500);
    ASSERT_INT(tj_num(tj_find(a, "name", "cudaLaunchKernel"), "total_ns"), ==, 1500 * 5000);
    ASSERT_INT(tj_num(tj_find(a, "name", "cuLaunchKernel"), "calls"), ==, 1500);
    /* two layers, each function in one, each layer's time_pct of its own total */
    ASSERT_STR(tj_str(tj_find(a, "name", "cudaLaunchKernel"), "layer"), "runtime");
    ASSERT_STR(tj_str(tj_find(a, "name", "cuLaunchKernel"), "layer"), "driver");
    double pct[2] = {0, 0}, ns[2] = {0, 0};
    for (size_t i = 0; i < a->n; i++) {
        int drv = !strcmp(tj_str(a->v[i], "layer"), "driver");
        ASSERT(drv || !strcmp(tj_str(a->v[i], "layer"), "runtime"));
        pct[drv] += tj_num(a->v[i], "time_pct");
        ns[drv] += tj_num(a->v[i], "total_ns");
    }
    ASSERT_NEAR(pct[0], 100, 0.01);
    ASSERT_NEAR(pct[1], 100, 0.01);
    ASSERT_NEAR(tj_num(tj_find(a, "name", "cuLaunchKernel"), "time_pct"),
                100 * tj_num(tj_find(a, "name", "cuLaunchKernel"), "total_ns") / ns[1], 0.01);
    ASSERT_INT(tj_num(tj_find(a, "name", "cudaStreamSynchronize"), "calls"), ==, 50);
    ASSERT_INT(tj_num(tj_find(a, "name", "cudaMalloc"), "calls"), ==, 3);
    ASSERT_INT(tj_num(tj_find(a, "name", "cudaMalloc"), "failures"), ==, 0);
    ASSERT_INT(tj_num(tj_find(a, "name", "cudaFree"), "calls"), ==, 3);
    /* VRAM: 1 + 1 + 2 GiB from three call stacks, peak when the third returns (+450 us) */
    ASSERT_UINT(tj_len(s, "vram"), ==, 1);
    ASSERT_INT(tj_num(s, "vram.0.peak_bytes"), ==, 4294967296LL);
    ASSERT_INT(tj_num(s, "vram.0.peak_time_ns"), ==, 450000);
    ASSERT_INT(tj_num(s, "vram.0.in_use_at_end_bytes"), ==, 0);
    ASSERT_INT(tj_num(s, "vram.0.peak_holders.0.bytes"), ==, 2147483648LL);
    ASSERT_CONTAINS(tj_str(s, "vram.0.peak_holders.0.stack"), "alloc_optimizer <- Optimizer::init <- main");
    ASSERT_UINT(tj_len(s, "vram.0.peak_holders"), ==, 3);
    ASSERT_UINT(tj_len(s, "vram.0.failed_allocs"), ==, 0);
    /* breakdown: one stream, so busy is the sum of the GPU work */
    double busy = 330e6 + 50 * (524288 + 1500) + 50 * 1500;
    ASSERT_NEAR(tj_num(s, "breakdown.0.gpu_busy_ns"), busy, 10);
    double win = tj_num(s, "breakdown.0.window_ns"), idle = tj_num(s, "breakdown.0.gpu_idle_ns");
    ASSERT_NEAR(idle, win - busy, 10);
    double parts = tj_num(s, "breakdown.0.idle_in_api_ns") + tj_num(s, "breakdown.0.idle_blocked_ns") +
                   tj_num(s, "breakdown.0.idle_host_compute_ns") + tj_num(s, "breakdown.0.idle_host_wait_ns") +
                   tj_num(s, "breakdown.0.idle_host_unknown_ns");
    ASSERT_NEAR(parts, idle, 10);
    /* 49 loader gaps of 20 ms, sleeping: the host waits (CPU 2% busy) */
    ASSERT_NEAR(tj_num(s, "breakdown.0.idle_host_wait_ns"), 49 * 20e6 * 0.98, 2e6);
    ASSERT_NEAR(tj_num(s, "breakdown.0.max_speedup_host"), win / busy, 0.01);
    ASSERT_NEAR(tj_num(s, "breakdown.0.max_speedup_gpu"), win / idle, 0.01);
    ASSERT_INT(tj_num(s, "processes.0.launch_queue.kernels"), ==, 1500);
    tj_free(s);
    return 0;
}
