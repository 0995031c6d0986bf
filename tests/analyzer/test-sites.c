/* Call sites on a real trace: train_loop's pageable batch and loss copies, traced with the
 * tracer's default stacks, are named by the runtime function the program called and the
 * program's own frames (main), not the runtime's or cutrace's. */
#include <stdlib.h>
#include <string.h>

#include "an_helpers.h"

TEST_IMPL(workload_train_loop_call_sites)
{
    char dir[4096], *out;
    ASSERT(an_trace_workload(dir, "sites", "train_loop --iters 10 --loader-ms 0", NULL, &out));
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *d = an_diag(s, "async-memcpy-pageable");
    ASSERT(d);
    ASSERT_INT(tj_num(d, "evidence.copies"), ==, 20);
    /* two sites: the 4 MiB batch and the 4-byte loss, 10 calls each, both in main */
    ASSERT_UINT(tj_len(d, "sites"), ==, 2);
    uint64_t bytes = 0;
    for (size_t i = 0; i < 2; i++) {
        const tj *st = tj_at(tj_get(d, "sites"), i);
        ASSERT_STR(tj_str(st, "call"), "cudaMemcpyAsync");
        ASSERT_INT(tj_num(st, "count"), ==, 10);
        const char *stack = tj_str(st, "stack");
        ASSERT(strncmp(stack, "main (train_loop+0x", 19) == 0);
        ASSERT(!strstr(stack, "libcudart") && !strstr(stack, "libcutrace") && !strstr(stack, "fc_"));
        bytes += (uint64_t)tj_num(st, "bytes");
    }
    ASSERT_UINT(bytes, ==, 10 * 4194304ull + 10 * 4);
    /* distinct sites are distinct places in main */
    ASSERT(strcmp(tj_str(d, "sites.0.stack"), tj_str(d, "sites.1.stack")) != 0);
    ASSERT_CONTAINS(tj_str(d, "call_sites.0"), "cudaMemcpyAsync at main (train_loop+0x");
    tj_free(s);
    return 0;
}
