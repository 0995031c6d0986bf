/* The default text output: every section, aligned tables, human units, the diagnosis. */
#include "an_helpers.h"

TEST_IMPL(summary_text_sections)
{
    char dir[4096];
    ASSERT(an_gen(dir, "t", "--iters 10"));
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", dir), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    static const char *const want[] = {
        "== Run ==", "== Kernels ==", "== Copies and sets ==", "== CUDA runtime API ==", "== CUDA driver API ==", "== VRAM ==",
        "== Breakdown (first to last GPU activity) ==", "== Diagnoses (by estimated saving) ==",
        "process 1000 on node0, rank 0: python train.py --rank 0",
        "NVIDIA H100 80GB HBM3", "host link 63.0 GB/s (PCIe gen 5 x16)",
        "reduce_batch", "H2D        pageable", "4.00 GiB (4294967296 bytes)",
        "alloc_optimizer <- Optimizer::init <- main", "Amdahl:", "dataloader-starvation",
        "loader threads filling pinned buffers"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ASSERT_CONTAINS(p.out, want[i]);
    /* the kernel name with a tab and invalid UTF-8 is shown without them */
    ASSERT_CONTAINS(p.out, "ampere_sgemm_128x64_nn \"quoted\"?name ?? end");
    ASSERT(!strchr(p.out, '\t'));
    ASSERT(!strstr(p.out, "\xff"));
    /* no PyTorch in the traced process (the header says so): neither its terms nor its
     * caching allocator */
    ASSERT(!strstr(p.out, "DataLoader"));
    ASSERT(!strstr(p.out, "caching allocator"));
    ctt_proc_free(&p);
    return 0;
}
