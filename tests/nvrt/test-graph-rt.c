/* NVIDIA's libcudart.so.13 drives the simulated driver's graphs: graph_rt captures a copy, two
 * kernels, a host function and a copy into a graph, launches it three times, changes a kernel
 * node's parameters in the executable graph, and checks every result against the CPU; it runs
 * with only our libcuda.so.1 on LD_LIBRARY_PATH, and the driver's report proves it mapped
 * NVIDIA's runtime. */
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
