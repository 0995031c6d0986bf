/* Advice in PyTorch's terms at the user's line (issue 14 item 3), on tests/pytorch/sites.py: a
 * pageable batch copied with .cuda() and a loss read with .item() each step, then a failed 1 TiB
 * tensor. The fix names the method only because the trace's native frames under the line show it
 * (THPVariable_cuda, _local_scalar_dense / THPVariable_item); the out-of-memory report names the
 * lines that failed and that held the memory; the lines from the script's `# cutrace:` markers. */
#include "pt.h"

#include <string.h>

TEST_IMPL(pytorch_advice_names_the_line)
{
    const char *args[] = {"--steps", "10", NULL};
    /* each step's multiply 6 ms on the GPU, which its .item() waits for: the simulated H100
     * runs it in microseconds, and the synchronizations blocked the host only while the
     * simulation's stream thread waited for a core (before fakecuda ran it at real-time
     * priority, excessive-sync here rested on that) */
    const char *env[] = {"FAKECUDA_KERNEL_NS=elementwise_kernel=6000000", NULL};
    ctt_proc p;
    char dir[4096], want[512];
    if (pt_run(&p, dir, "sites", 1, "sites.py", args, env))
        return 1;
    ASSERT_CONTAINS(p.out, "sites: steps=10\ncaught OutOfMemoryError\n");
    ctt_proc_free(&p);
    int copy = an_marker_line(PT_SRC "/sites.py", "cuda-copy");
    int item = an_marker_line(PT_SRC "/sites.py", "item");
    int oom = an_marker_line(PT_SRC "/sites.py", "oom");
    int weights = an_marker_line(PT_SRC "/sites.py", "weights");
    int module = an_marker_line(PT_SRC "/sites.py", "module-cuda");
    int format = an_marker_line(PT_SRC "/sites.py", "format");
    ASSERT(copy > 0 && item > 0 && oom > 0 && weights > 0 && module > 0 && format > 0);
    /* what the wording rests on: the frames are in the trace */
    ctt_proc d;
    ASSERT_INT(an_run(&d, "dump {}", dir), ==, 0);
    ASSERT_CONTAINS(d.out, "torch::autograd::THPVariable_cuda(");
    ASSERT_CONTAINS(d.out, "_local_scalar_dense");
    ctt_proc_free(&d);
    /* the wording at the lines is what this test is for, not the 1% bar, which the .item()
     * waits (60 ms, in a window a busy machine lengthens) missed once in a two-suite run */
    tj *s = an_summary(dir, "--min-saving 0.1");
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.pytorch"), ==, 1);
    const tj *pg = an_diag(s, "pageable-memcpy");
    ASSERT(pg);
    static const char advice[] = ": pin the host tensor (DataLoader(pin_memory=True), or "
                                 "tensor.pin_memory()) and copy with `.cuda(non_blocking=True)`";
    snprintf(want, sizeof want, "`x.cuda()` at sites.py:%d in <module> copies from pageable memory (10 calls)",
             copy);
    ASSERT_CONTAINS(tj_str(pg, "fix"), want);
    ASSERT_CONTAINS(tj_str(pg, "fix"), advice);
    const tj *apg = an_diag(s, "async-memcpy-pageable");
    ASSERT(apg);
    ASSERT_CONTAINS(tj_str(apg, "fix"), want);
    ASSERT_CONTAINS(tj_str(apg, "fix"), advice);
    /* Module.cuda() calls .cuda() from PyTorch's Python code: the line is named, not as x.cuda() */
    snprintf(want, sizeof want, "the copy at sites.py:%d in <module> copies from pageable memory (", module);
    ASSERT_CONTAINS(tj_str(apg, "fix"), want);
    snprintf(want, sizeof want, "`x.cuda()` at sites.py:%d", module);
    ASSERT(!strstr(tj_str(apg, "fix"), want));
    /* the full stack reaches the user's frame through libtorch's long C++ names */
    snprintf(want, sizeof want, "sites.py:%d in <module>", copy);
    const tj *at = tj_find(tj_get(pg, "sites"), "stack", want);
    ASSERT(at);
    ASSERT_CONTAINS(tj_str(at, "stacks.0"),
                    "THPVariable_cuda(_object*, _object*, _object*) (libtorch_python.so+");
    snprintf(want, sizeof want, " <- <module> (sites.py:%d) <- ", copy);
    ASSERT_CONTAINS(tj_str(at, "stacks.0"), want);
    /* down to the process's entry, each frame's name cut at 200 characters ("..." added; with
     * its module and offset, a frame stays under 300) */
    ASSERT_CONTAINS(tj_str(at, "stacks.0"), " <- _start (");
    ASSERT_CONTAINS(tj_str(at, "stacks.0"), "...");
    for (const char *f = tj_str(at, "stacks.0"), *e; f; f = e ? e + 4 : NULL) {
        e = strstr(f, " <- ");
        ASSERT_INT(e ? (int)(e - f) : (int)strlen(f), <, 300);
    }
    /* the .cuda() line waits for its staged copy, the .item() line for the step's work: each
     * named by its own method, never .item() for the copy */
    const tj *y = an_diag(s, "excessive-sync");
    ASSERT(y);
    snprintf(want, sizeof want, "`.item()` at sites.py:%d in <module> waits for the GPU (10 calls) - "
             "instead, add the value into a tensor on the GPU", item);
    ASSERT_CONTAINS(tj_str(y, "fix"), want);
    /* formatting the loss reads it as .item() does, under PyTorch's Tensor.__format__ */
    snprintf(want, sizeof want, "formatting a GPU tensor (`format()`, `print()`, `str()`) at "
             "sites.py:%d in <module> waits for the GPU (10 calls) - instead, format numbers "
             "already on the host", format);
    ASSERT_CONTAINS(tj_str(y, "fix"), want);
    snprintf(want, sizeof want, "`x.cuda()` at sites.py:%d in <module> waits for the GPU (10 calls)", copy);
    ASSERT_CONTAINS(tj_str(y, "fix"), want);
    /* the failed request at its line; the weights' line held the largest segment, and the
     * holders add up to the memory in use */
    snprintf(want, sizeof want, "sites.py:%d in <module>", oom);
    ASSERT_STR(tj_str(s, "vram.0.failed_allocs.0.site"), want);
    const tj *x = an_diag(s, "oom");
    ASSERT(x);
    snprintf(want, sizeof want, "failing call: sites.py:%d in <module>\n", oom);
    ASSERT_CONTAINS(tj_str(x, "detail"), want);
    snprintf(want, sizeof want, "sites.py:%d in <module>", weights);
    ASSERT_STR(tj_str(x, "sites.0.stack"), want);
    ASSERT_STR(tj_str(s, "vram.0.failed_allocs.0.holders.0.site"), want);
    double held = 0;
    for (size_t i = 0; i < tj_len(s, "vram.0.failed_allocs.0.holders"); i++) {
        char path[96];
        snprintf(path, sizeof path, "vram.0.failed_allocs.0.holders.%zu.bytes", i);
        held += tj_num(s, path);
    }
    ASSERT(held == tj_num(s, "vram.0.failed_allocs.0.in_use_bytes"));
    tj_free(s);
    return 0;
}
