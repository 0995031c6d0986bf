/* A cuda-python program (tests/pytorch/driver_ptx.py) on the driver API, its kernels PTX linked
 * with the linker API: traced like a C program, its kernels by their PTX names and its launches
 * and copies counted as it made them. */
#include "pt.h"

#include <string.h>

#define ITERS 5
#define BYTES (4 * 65536)

TEST_IMPL(cuda_python_ptx)
{
    const char *args[] = {"--iters", "5", "--n", "65536", NULL};
    ctt_proc p;
    char dir[4096], one[4096];
    if (pt_run_both(&p, dir, "ptx", "driver_ptx.py", args, NULL))
        return 1;
    ASSERT_CONTAINS(p.out, "launches 10 kernels 2 copies 10 bytes per copy 262144\n");
    ASSERT_INT(pt_trace_files(dir, one), ==, 1);
    /* cuda-python's Cython bindings between the script and the driver: its lines are the call
     * sites all the same */
    ASSERT_INT(pt_python_frame_at(one, "driver_ptx.py", "alloc"), ==, 0);
    ASSERT_INT(pt_python_frame_at(one, "driver_ptx.py", "h2d"), ==, 0);
    ASSERT_INT(pt_python_frame_at(one, "driver_ptx.py", "sync"), ==, 0);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *k = tj_get(s, "kernels");
    ASSERT_UINT(k->n, ==, 2);
    ASSERT_INT(tj_num(tj_find(k, "name", "scale_by_two"), "instances"), ==, ITERS);
    ASSERT_INT(tj_num(tj_find(k, "name", "add_one"), "instances"), ==, ITERS);
    ASSERT_INT(tj_num(tj_find(k, "name", "add_one"), "grid.0"), ==, 65536 / 256);
    ASSERT_INT(tj_num(tj_find(k, "name", "add_one"), "block.0"), ==, 256);
    const tj *c = tj_get(s, "copies");
    ASSERT_UINT(c->n, ==, 2);
    for (size_t i = 0; i < c->n; i++) {
        const char *op = tj_str(c->v[i], "op");
        ASSERT(!strcmp(op, "H2D") || !strcmp(op, "D2H"));
        ASSERT_STR(tj_str(c->v[i], "host_kind"), "pageable");
        ASSERT_INT(tj_num(c->v[i], "count"), ==, ITERS);
        ASSERT_INT(tj_num(c->v[i], "bytes"), ==, ITERS * BYTES);
    }
    ASSERT_INT(tj_num(s, "vram.0.allocations"), ==, 1);
    ASSERT_INT(tj_num(s, "vram.0.frees"), ==, 1);
    ASSERT_INT(tj_num(s, "vram.0.peak_bytes"), ==, BYTES);
    /* a driver-API program: the process loaded no CUDA runtime, and the driver is the simulated one */
    const tj *libs = tj_get(tj_get(s, "processes")->v[0], "libraries");
    ASSERT(!tj_find(libs, "kind", "cudart"));
    ASSERT(tj_find(libs, "kind", "cuda"));
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}
