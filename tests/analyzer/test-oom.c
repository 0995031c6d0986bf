/* oom: a 100 GiB cudaMalloc fails while 9 GiB are held; the post-mortem names the holders. */
#include "an_helpers.h"

TEST_IMPL(diag_oom_post_mortem)
{
    tj *s = an_fires("oom", "--oom --loader-ms 0 --pinned --iters 5", "--loader-ms 0 --pinned --iters 5");
    ASSERT(s);
    ASSERT_STR(tj_str(s, "diagnoses.0.id"), "oom");
    ASSERT_STR(tj_str(s, "diagnoses.0.severity"), "error");
    const tj *v = tj_at(tj_get(s, "vram"), 0);
    ASSERT_INT(tj_num(v, "failed_count"), ==, 1);
    ASSERT_INT(tj_num(v, "failed_allocs.0.requested_bytes"), ==, 100 * 1073741824LL);
    ASSERT_INT(tj_num(v, "failed_allocs.0.in_use_bytes"), ==, 9 * 1073741824LL);
    ASSERT_INT(tj_num(v, "failed_allocs.0.result"), ==, 2);
    ASSERT_CONTAINS(tj_str(v, "failed_allocs.0.stack"), "alloc_activations");
    ASSERT_INT(tj_num(v, "failed_allocs.0.holders.0.bytes"), ==, 5 * 1073741824LL);
    ASSERT_CONTAINS(tj_str(v, "failed_allocs.0.holders.0.stack"), "alloc_activations <- train_step");
    ASSERT_INT(tj_num(v, "failed_allocs.0.holders.1.bytes"), ==, 2 * 1073741824LL);
    ASSERT_INT(tj_num(v, "peak_bytes"), ==, 9 * 1073741824LL);
    ASSERT_INT(tj_num(s, "diagnoses.0.evidence.requested_bytes"), ==, 100 * 1073741824LL);
    ASSERT_INT(tj_num(tj_find(tj_get(s, "api"), "name", "cudaMalloc"), "failures"), ==, 1);
    tj_free(s);
    return 0;
}
