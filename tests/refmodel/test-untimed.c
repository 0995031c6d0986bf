/* tracegen --random SEED --gpu-timing N: the random shapes with GPU records for one operation in
 * N (0: none), as the tracer's sampled or disabled GPU timing leaves them. Every kernel and copy
 * still counts from its LAUNCH / COPY record, and a device with untimed work gets no breakdown
 * figures; cutrace must agree with the reference on all of it. */
#include "an_helpers.h"
#include "refmodel.h"

#define SEEDS 20

TEST_IMPL(random_shapes_untimed)
{
    static const int timing[] = {0, 2, 3};
    uint64_t entries = 0, incomplete = 0, recorded = 0, timed = 0;
    for (size_t t = 0; t < sizeof timing / sizeof *timing; t++)
        for (int seed = 1; seed <= SEEDS; seed++) {
            char dir[4096], name[32], args[64];
            snprintf(name, sizeof name, "untimed%d-%d", timing[t], seed);
            snprintf(args, sizeof args, "--random %d --gpu-timing %d", seed, timing[t]);
            ASSERT(an_gen(dir, name, args));
            rm_result *r = NULL;
            ASSERT_INT(rm_check(dir, "--variants", args, &r), ==, 0);
            for (size_t i = 0; i < r->nbd; i++, entries++) {
                incomplete += r->bd[i].untimed > 0;
                /* with timing off nothing on any device was timed */
                if (timing[t] == 0)
                    ASSERT_UINT(r->bd[i].untimed, ==, r->bd[i].ops);
            }
            for (size_t i = 0; i < r->nkernels; i++) {
                recorded += r->kernels[i].recorded;
                timed += rm_timed(&r->kernels[i]);
                if (timing[t] == 0)
                    ASSERT_UINT(rm_timed(&r->kernels[i]), ==, 0);
            }
            rm_free(r);
        }
    fprintf(stderr, "%llu of %llu breakdown entries incomplete; %llu of %llu kernels timed\n",
            (unsigned long long)incomplete, (unsigned long long)entries, (unsigned long long)timed,
            (unsigned long long)recorded);
    /* the shapes exercise what they are for: incomplete entries, and kernels timed and not */
    ASSERT_UINT(incomplete, >, 0);
    ASSERT_UINT(timed, >, 0);
    ASSERT_UINT(timed, <, recorded);
    return 0;
}
