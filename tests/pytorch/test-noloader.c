/* A PyTorch loop with no DataLoader (tests/pytorch/noloader.py): its 96-byte input copies are not
 * batches, since the thread samples show the host in its own Python, not in a loader; the GPU's
 * wait is the host's own work, and the .item() synchronization is owed no more than it blocked.
 * (Which lines the samples name is not checked here: half or more of the samples of build()'s
 * tight loop come back unread, and a gap all of whose samples did is left to its copy; one or
 * two such gaps make no finding.) */
#include "pt.h"

#include <stdlib.h>
#include <string.h>

TEST_IMPL(pytorch_no_dataloader_no_loader_finding)
{
    const char *args[] = {"12", NULL};
    ctt_proc p;
    char dir[4096];
    if (pt_run(&p, dir, "noloader", 1, "noloader.py", args, NULL))
        return 1;
    ASSERT_CONTAINS(p.out, "noloader: steps 12 build_ns ");
    double built = atof(strstr(p.out, "build_ns ") + 9);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT(an_diag(s, "dataloader-starvation") == NULL);
    /* the host's own work leads: the 11 builds after the first GPU work at least (the window also
     * holds the start, the first forward's imports, which no finding tells apart yet) */
    ASSERT_STR(tj_str(s, "diagnoses.0.id"), "gpu-gaps");
    ASSERT(tj_num(s, "diagnoses.0.estimated_saving_ns") >= built * 11 / 12 * 0.9);
    ASSERT(tj_path(s, "diagnoses.0.host_activity"));
    /* the first forward imports PyTorch's lazily loaded modules, deeper than the frames a sample
     * reads, so without a line of the script: said as the package being imported */
    const tj *acts = tj_path(s, "breakdown.0.gaps.host.host_activity");
    ASSERT(acts && acts->n);
    ASSERT(tj_find(acts, "site", "importing torch"));
    for (size_t i = 0; i < acts->n; i++)
        ASSERT(!strstr(tj_str(acts->v[i], "site"), "<frozen importlib"));
    const tj *y = an_diag(s, "excessive-sync");
    ASSERT(!y || tj_num(y, "estimated_saving_ns") <= tj_num(y, "evidence.host_blocked_ns"));
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}
