/* Names with quotes, control characters and invalid UTF-8 come out as valid JSON strings. */
#include "an_helpers.h"

TEST_IMPL(json_escapes_names)
{
    char dir[4096];
    ASSERT(an_gen(dir, "t", "--iters 3"));
    tj *s = an_summary(dir, "--variants");
    ASSERT(s); /* the strict parser rejects raw control characters and invalid UTF-8 */
    const tj *k = tj_find(tj_get(s, "kernels"), "name",
                          "ampere_sgemm_128x64_nn \"quoted\"\tname \xef\xbf\xbd\xef\xbf\xbd end");
    ASSERT(k);
    ASSERT_INT(tj_num(k, "instances"), ==, 9); /* k = 7, 15, 23 of 3 iterations */
    /* variants: grid 4 << (k % 3); reduce_batch is k = 6, 14, 22: one of each per iteration */
    const tj *v = tj_get(s, "kernel_variants");
    ASSERT_INT(tj_num(tj_find(v, "name", "<<<(4,1,1),(256,1,1)>>> reduce_batch"), "instances"), ==, 3);
    ASSERT_INT(tj_num(tj_find(v, "name", "<<<(16,1,1),(256,1,1)>>> reduce_batch"), "instances"), ==, 3);
    ASSERT_INT(tj_num(tj_find(v, "name", "<<<(8,1,1),(256,1,1)>>> reduce_batch"), "instances"), ==, 3);
    ASSERT_INT(tj_num(tj_find(v, "name", "<<<(8,1,1),(256,1,1)>>> reduce_batch"), "total_ns"), ==, 3 * 220000);
    tj_free(s);
    return 0;
}
