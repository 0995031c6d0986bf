/* Advice in the program's own terms: PyTorch's only when PyTorch's CUDA library was loaded in the
 * traced process (the trace header's frameworks field, set by the tracer), CUDA's otherwise; the
 * caching-allocator note under VRAM only with PyTorch. The same starved train_loop, once with a
 * stand-in libtorch_cuda.so dlopen'ed before its first CUDA call. */
#include "an_helpers.h"

#include <stdlib.h>

static const char *const TORCH_WORDS[] = {"DataLoader", "pin_memory", "torch.", "PyTorch", NULL};

static int text_has_torch(const char *s)
{
    for (int i = 0; TORCH_WORDS[i]; i++)
        if (strstr(s, TORCH_WORDS[i]))
            return 1;
    return 0;
}

/* Runs the loop (with or without the stand-in), checks the starvation advice's terms and the
 * VRAM note; returns 0 on success. */
static int check(int torch)
{
    char dir[4096], lib[4096], args[8192], *out;
    ctt_path(lib, "tests/workloads/torch/libtorch_cuda.so");
    snprintf(args, sizeof args, "train_loop --iters 6 --loader-ms 20 --memory pinned%s%s",
             torch ? " --dlopen " : "", torch ? lib : "");
    /* no host samples: the advice is then the plain one, whatever the machine's load (beside
     * CPU-bound processes they told a cause, and the message said that instead) */
    char *env[] = {"CUTRACE_HOST_SAMPLE_MS=0", NULL};
    ASSERT(an_trace_workload(dir, torch ? "torch" : "cuda", args, env, &out));
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *flag = tj_path(s, "processes.0.pytorch");
    ASSERT(flag && flag->type == TJ_BOOL);
    ASSERT_INT(tj_num(s, "processes.0.pytorch"), ==, torch);
    const tj *d = an_diag(s, "dataloader-starvation");
    ASSERT(d);
    if (torch) {
        ASSERT_CONTAINS(tj_str(d, "fix"), "DataLoader(num_workers");
        ASSERT_CONTAINS(tj_str(d, "message"), "DataLoader worker");
    } else {
        ASSERT_CONTAINS(tj_str(d, "message"), "loader thread");
    }
    /* every diagnosis, fix and message alike */
    const tj *all = tj_get(s, "diagnoses");
    for (size_t i = 0; !torch && i < all->n; i++) {
        ASSERT(!text_has_torch(tj_str(all->v[i], "fix")));
        ASSERT(!text_has_torch(tj_str(all->v[i], "message")));
    }
    tj_free(s);
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", dir), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "== VRAM ==");
    if (torch)
        ASSERT_CONTAINS(p.out, "caching allocator");
    else
        ASSERT(!strstr(p.out, "caching allocator") && !text_has_torch(p.out));
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(advice_in_pytorch_terms_only_with_pytorch)
{
    ASSERT_INT(check(0), ==, 0);
    ASSERT_INT(check(1), ==, 0);
    return 0;
}
