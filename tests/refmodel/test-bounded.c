/* End-bounded GPU records (CT_GPU_END_BOUND) against the reference: tracegen --random flags
 * about 1 in 8 GPU records, so over its seeds rows mix exact and bounded instances, some rows
 * have bounded ones only (statistics of the bounds, upper_bounds), and devices have busy time
 * only bounded intervals cover. Every field is compared by random_shapes; this test makes sure
 * the shapes cover each of those cases, with --variants (whose Time % has its own total). */
#include <stdlib.h>

#include "an_helpers.h"
#include "refmodel.h"

#define SEEDS 30

TEST_IMPL(end_bounded_shapes)
{
    uint64_t mixed = 0, upper = 0, bounded = 0, busy_bounded = 0;
    for (int seed = 1; seed <= SEEDS; seed++) {
        char dir[4096], args[64], name[32];
        rm_result *r = NULL;
        snprintf(args, sizeof args, "--random %d", seed);
        snprintf(name, sizeof name, "bounded%d", seed);
        ASSERT(an_gen(dir, name, args));
        ASSERT_INT(rm_check(dir, "--variants", args, &r), ==, 0);
        const rm_stat *rows[2] = {r->kernels, r->copies};
        size_t n[2] = {r->nkernels, r->ncopies};
        for (int t = 0; t < 2; t++)
            for (size_t i = 0; i < n[t]; i++) {
                uint64_t nb = rm_timed(&rows[t][i]) - rows[t][i].n;
                bounded += nb;
                mixed += nb && rows[t][i].n;
                upper += nb && !rows[t][i].n;
            }
        for (size_t i = 0; i < r->nbd; i++)
            busy_bounded += !r->bd[i].untimed && r->bd[i].busy_bounded > 0;
        rm_free(r);
    }
    fprintf(stderr, "%llu bounded instances; %llu rows mixed, %llu bounded only; %llu devices with "
                    "busy time only bounded intervals cover\n", (unsigned long long)bounded,
            (unsigned long long)mixed, (unsigned long long)upper, (unsigned long long)busy_bounded);
    ASSERT_UINT(mixed, >, 0);
    ASSERT_UINT(upper, >, 0);
    ASSERT_UINT(busy_bounded, >, 0);
    return 0;
}
