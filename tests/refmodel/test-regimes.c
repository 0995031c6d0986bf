/* tracegen's training-loop regimes (the analyzer suite's traces, with GPU timing all, off and
 * 1 in 3) against the reference. */
#include "an_helpers.h"
#include "refmodel.h"

TEST_IMPL(tracegen_regimes)
{
    static const char *const args[] = {
        "--iters 20", "--iters 20 --pinned --prefetch --loader-ms 1", "--iters 10 --sync-every-kernel",
        "--iters 10 --sync-copy-bytes 1048576 --compute-loader", "--iters 10 --churn --stall-ms 30",
        "--iters 10 --ranks 3 --straggler 1.5", "--iters 5 --oom --kernel-us 2 --launch-us 8",
        "--iters 40 --kernels 40 --workers 0 --loader-ms 0.1", "--iters 10 --gpu-timing 0",
        "--iters 10 --gpu-timing 3"};
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        char dir[4096], name[32];
        snprintf(name, sizeof name, "regime%zu", i);
        ASSERT(an_gen(dir, name, args[i]));
        ASSERT_INT(rm_check(dir, "--variants", args[i], NULL), ==, 0);
    }
    return 0;
}
