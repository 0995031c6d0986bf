/* tracegen --random SEED: shapes a training loop never has (tracegen_random.c) against the
 * reference, over fixed seeds. A process whose breakdown the analyzer reports approximate
 * (late_points) would be compared on its tables only; the reader delivers every record of
 * these traces in time order and the chunk headers declare the longest span, so every process
 * must be compared in full. */
#include <stdlib.h>

#include "an_helpers.h"
#include "refmodel.h"

#define SEEDS 120

TEST_IMPL(random_shapes)
{
    int exact = 0, procs = 0;
    for (int seed = 1; seed <= SEEDS; seed++) {
        char dir[4096], name[32], args[64], what[64];
        snprintf(name, sizeof name, "random%d", seed);
        snprintf(args, sizeof args, "--random %d", seed);
        snprintf(what, sizeof what, "tracegen --random %d", seed);
        ASSERT(an_gen(dir, name, args));
        tj *s = an_summary(dir, NULL);
        ASSERT(s);
        const tj *p = tj_get(s, "processes");
        for (size_t i = 0; p && i < p->n; i++, procs++)
            exact += tj_num(p->v[i], "late_points") == 0;
        tj_free(s);
        ASSERT_INT(rm_check(dir, NULL, what, NULL), ==, 0);
    }
    fprintf(stderr, "%d of %d processes compared in full\n", exact, procs);
    ASSERT_INT(exact, ==, procs);
    return 0;
}
