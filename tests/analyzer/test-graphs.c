/* CUDA graphs whose nodes the trace knows only from their capture (tracegen --graph: the step's
 * launches and loss copy captured once, no node list, each step one graph launch): every launch
 * runs the captured kernels and copy, counted untimed in the kernel and copy tables. */
#include "an_helpers.h"

#include <math.h>

#define TG_ITERS 10
#define TG_KERNELS 6

TEST_IMPL(graph_nodes_from_capture)
{
    char dir[4096], args[128];
    snprintf(args, sizeof args, "--graph --iters %d --kernels %d --loader-ms 1", TG_ITERS,
             TG_KERNELS);
    ASSERT(an_gen(dir, "graph", args));
    tj *s = an_summary(dir, NULL);
    ASSERT(s != NULL);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launches"), TG_ITERS, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launch_kernels"), TG_ITERS * TG_KERNELS, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launch_copies"), TG_ITERS, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.unknown_launches"), 0, 0);
    /* tracegen's kernels 0-5: one node each, so TG_ITERS instances each, all inside graphs */
    static const char *const names[TG_KERNELS] = {
        "void nn::forward_linear<float>(float*, float const*, float const*, int)",
        "forward_relu(float*, float const*, int)", "loss_forward(float*, float const*, int)",
        "void nn::backward_linear<float>(float*, float*, float const*, float const*, float const*, int)",
        "backward_relu(float*, float const*, float const*, int)",
        "void nn::sgd_update<float>(float*, float const*, int)"};
    const tj *ks = tj_get(s, "kernels");
    for (int k = 0; k < TG_KERNELS; k++) {
        const tj *row = tj_find(ks, "name", names[k]);
        ASSERT(row != NULL);
        ASSERT_NEAR(tj_num(row, "instances"), TG_ITERS, 0);
        ASSERT_NEAR(tj_num(row, "graph_instances"), TG_ITERS, 0);
        ASSERT_NEAR(tj_num(row, "timed_instances"), 0, 0);
    }
    ASSERT_NEAR(tj_num(tj_find(ks, "name", "[CUDA graph]"), "instances"), TG_ITERS, 0);
    /* the loss copy: a node of the graph, 4 bytes per launch, never timed */
    const tj *d2h = tj_find(tj_get(s, "copies"), "op", "D2H");
    ASSERT(d2h != NULL);
    ASSERT_NEAR(tj_num(d2h, "count"), TG_ITERS, 0);
    ASSERT_NEAR(tj_num(d2h, "graph_count"), TG_ITERS, 0);
    ASSERT_NEAR(tj_num(d2h, "bytes"), 4 * TG_ITERS, 0);
    ASSERT_NEAR(tj_num(d2h, "timed_count"), 0, 0);
    tj_free(s);
    return 0;
}

/* The instantiation's node records were lost: its launches' nodes are unknown, not the capture's
 * (the node list, had it arrived, was what the driver ran) nor a part of the list. */
TEST_IMPL(graph_nodes_lost_unknown)
{
    char dir[4096], args[128];
    snprintf(args, sizeof args, "--graph-nodes-lost --iters %d --kernels %d --loader-ms 1",
             TG_ITERS, TG_KERNELS);
    ASSERT(an_gen(dir, "graph_lost", args));
    tj *s = an_summary(dir, NULL);
    ASSERT(s != NULL);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launches"), TG_ITERS, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.unknown_launches"), TG_ITERS, 0);
    ASSERT_NEAR(tj_num(s, "processes.0.graphs.launch_kernels"), 0, 0);
    /* captured, never known to run: no instance */
    const tj *row = tj_find(tj_get(s, "kernels"), "name", "forward_relu(float*, float const*, int)");
    ASSERT(row == NULL || tj_num(row, "instances") == 0);
    tj_free(s);
    return 0;
}
