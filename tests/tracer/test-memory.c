/* vram_peak under cutrace run: allocations and frees with sizes (frees sized from what cutrace
 * saw allocated), the exact peak the workload states, and the failed allocation recorded with
 * its size and CUDA_ERROR_OUT_OF_MEMORY. */
#include "tr.h"

TEST_IMPL(vram_peak_and_oom)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "vram_peak"), NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    int64_t in_use = 0, peak = 0;
    int ok = 0, failed = 0, frees = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type != CT_REC_MEM || r->u.mem.kind != CT_ALLOC_DEVICE)
            continue;
        if (r->u.mem.op == CT_MEM_ALLOC && r->u.mem.result == 0) {
            in_use += (int64_t)r->u.mem.size;
            ok++;
        } else if (r->u.mem.op == CT_MEM_ALLOC) {
            ASSERT_UINT(r->u.mem.result, ==, 2); /* CUDA_ERROR_OUT_OF_MEMORY */
            ASSERT_UINT(r->u.mem.size, ==, 80530636800ull);
            ASSERT_UINT(r->u.mem.address, ==, 0);
            ASSERT_INT(in_use, ==, 8589934592ll); /* held when it failed */
            failed++;
        } else {
            in_use -= (int64_t)r->u.mem.size;
            frees++;
        }
        if (in_use > peak)
            peak = in_use;
    }
    ASSERT_INT(ok, ==, 6);
    /* Default stacks: every allocation and free, symbolized (static functions from .symtab),
     * with the runtime's frame but none of cutrace's own. */
    size_t with_stack = 0;
    for (size_t i = 0; i < t.n; i++) {
        const tr_rec *x = &t.v[i];
        if (x->r.type != CT_REC_MEM)
            continue;
        ASSERT(x->r.u.mem.stack != 0);
        ASSERT_CONTAINS(x->stack, x->r.u.mem.op == CT_MEM_ALLOC ? "cudaMalloc@libcudart.so.13;"
                                                                : "cudaFree@libcudart.so.13;");
        if (x->r.u.mem.result == 0) /* the failing one is called from main directly */
            ASSERT_CONTAINS(x->stack, x->r.u.mem.op == CT_MEM_ALLOC ? "must_alloc@vram_peak;"
                                                                    : "must_free@vram_peak;");
        ASSERT_CONTAINS(x->stack, "main@vram_peak;");
        ASSERT(!strstr(x->stack, "libcutrace"));
        with_stack++;
    }
    ASSERT_UINT(with_stack, ==, 13);
    ASSERT_INT(failed, ==, 1);
    ASSERT_INT(frees, ==, 6);
    ASSERT_INT(peak, ==, 12079607866ll);
    ASSERT_INT(in_use, ==, 0);
    /* The runtime's failed cudaMalloc is the parent of the failed driver allocation. */
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cudaMalloc"), ==, 7);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(stacks_none)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *opts[] = {"--stacks", "none", NULL};
    char *cmd[] = {(char *)tr_workload(prog, "vram_peak"), NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, opts, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_MEM, NULL), ==, 13);
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_MEM)
            ASSERT_UINT(t.v[i].r.u.mem.stack, ==, 0);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
