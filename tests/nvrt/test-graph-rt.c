/* NVIDIA's libcudart.so.13 drives the simulated driver's graphs: graph_rt captures a copy, two
 * kernels, a host function and a copy into a graph, launches it three times, changes a kernel
 * node's parameters in the executable graph, and checks every result against the CPU; it runs
 * with only our libcuda.so.1 on LD_LIBRARY_PATH, and the driver's report proves it mapped
 * NVIDIA's runtime. */
#include "gr_truth.h"
#include "nv.h"

TEST_IMPL(nvidia_runtime_graphs)
{
    ctt_proc p;
    ASSERT_INT(nv_run(&p, "graph_rt", NV_NVIDIA, "tests/nvrt/graph_rt"), ==, 0);
    if (!p.exited || p.code != 0)
        fprintf(stderr, "graph_rt: %s%s", p.out, p.err);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "graph ok");
    ctt_proc_free(&p);
    return 0;
}

/* graph_built (tests/workloads/graph_built.cu: graphs built node by node with a child graph, a
 * memcpy and a memset node, an exec kernel node update, a re-instantiation, and a capture)
 * traced on our runtime and on NVIDIA's: each run's graph launches ran exactly what the
 * simulation's truth says (gr_built_check), and the two summaries count the same. */
TEST_IMPL(nvidia_runtime_graph_nodes_counted)
{
    static const nv_runtime rts[2] = {NV_OURS, NV_NVIDIA};
    tj *s[2];
    for (int i = 0; i < 2; i++) {
        char dir[4096], truth[4096], env0[4200], sub[64];
        snprintf(sub, sizeof sub, "graph_built-%s", i ? "nvidia" : "ours");
        snprintf(truth, sizeof truth, "%s/%s.truth", ctt_tmpdir(), sub);
        snprintf(env0, sizeof env0, "FAKECUDA_TRUTH=%s", truth);
        const char *const env[] = {env0, NULL};
        ctt_proc p;
        if (nv_trace(&p, dir, sub, rts[i], "tests/workloads/graph_built", NULL, env) != 0)
            return 1;
        if (!p.exited || p.code != 0)
            fprintf(stderr, "graph_built on %s: %s%s", sub, p.out, p.err);
        ASSERT_INT(p.exited, ==, 1);
        ASSERT_INT(p.code, ==, 0);
        ASSERT_CONTAINS(p.out, "graph_built: launches=11 ");
        ctt_proc_free(&p);
        if (gr_built_check(dir, truth))
            return 1;
        s[i] = an_summary(dir, NULL);
        ASSERT(s[i] != NULL);
    }
    int rc = nv_same_counts(s[0], s[1], 1);
    tj_free(s[0]);
    tj_free(s[1]);
    return rc;
}
