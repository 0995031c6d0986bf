/* PyTorch running out of device memory (tests/pytorch/oom.py): the caching allocator's segments
 * in the trace exactly as PyTorch lists them (torch.cuda.memory_snapshot()), and the failed
 * request, caught as torch.cuda.OutOfMemoryError, with the size the program asked for. */
#include "pt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define REQUEST_GIB 10240

TEST_IMPL(pytorch_oom)
{
    const char *args[] = {"--request-gib", "10240", NULL};
    ctt_proc p;
    char dir[4096];
    if (pt_run_both(&p, dir, "oom", "oom.py", args, NULL))
        return 1;
    ASSERT_CONTAINS(p.out, "caught torch.cuda.OutOfMemoryError for 10240 GiB\n");
    /* every segment PyTorch holds is a device allocation of the trace, at its address and
     * size, and the trace has no other successful one */
    ctt_proc d;
    ASSERT_INT(an_run(&d, "dump {}", dir), ==, 0);
    int segments = 0, allocs = 0;
    uint64_t seg_bytes = 0;
    for (const char *l = strstr(p.err, "segment "); l; l = strstr(l + 1, "\nsegment ")) {
        if (*l == '\n')
            l++;
        unsigned long long addr, size;
        ASSERT_INT(sscanf(l, "segment %llu %llu", &addr, &size), ==, 2);
        char at[96];
        snprintf(at, sizeof at, " address=0x%llx size=%llu device=0 result=0 ", addr, size);
        ASSERT_CONTAINS(d.out, at);
        segments++;
        seg_bytes += size;
    }
    ASSERT_INT(segments, ==, 3);
    for (char *save = NULL, *l = strtok_r(d.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        allocs += strstr(l, " mem ") && strstr(l, " op=alloc kind=1 ") && strstr(l, " result=0 ");
    ASSERT_INT(allocs, ==, segments);
    ctt_proc_free(&d);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_UINT(tj_num(s, "vram.0.peak_bytes"), ==, seg_bytes);
    /* the request that failed: 10240 GiB (a multiple of the allocator's 2 MiB rounding) */
    ASSERT(tj_num(s, "vram.0.failed_count") >= 1);
    ASSERT_UINT(tj_num(s, "vram.0.failed_allocs.0.requested_bytes"), ==, (uint64_t)REQUEST_GIB << 30);
    ASSERT_INT(tj_num(s, "vram.0.failed_allocs.0.result"), ==, 2); /* CUDA_ERROR_OUT_OF_MEMORY */
    const tj *x = an_diag(s, "oom");
    ASSERT(x);
    ASSERT_UINT(tj_num(x, "evidence.requested_bytes"), ==, (uint64_t)REQUEST_GIB << 30);
    /* the largest holders at the script's lines that allocated them: the 33 MiB tensor's
     * segment, then the line before, whose two tensors hold the 20 MiB and 2 MiB segments (one
     * site: a Python line is one call site whatever native paths reach it) */
    char want[2][128];
    snprintf(want[0], sizeof want[0], "oom.py:%d in <module>", pt_marker_line("oom.py", "held-large"));
    snprintf(want[1], sizeof want[1], "oom.py:%d in <module>", pt_marker_line("oom.py", "held"));
    ASSERT_INT(tj_get(x, "sites")->n, ==, 2);
    for (int i = 0; i < 2; i++) {
        const tj *site = tj_get(x, "sites")->v[i];
        ASSERT_STR(tj_str(site, "call"), "cudaMalloc");
        ASSERT_STR(tj_str(site, "stack"), want[i]);
        ASSERT_INT(tj_num(site, "count"), ==, i + 1);
    }
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}
