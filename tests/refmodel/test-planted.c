/* The differential test can fail: with the analyzer's test-only planted bug
 * (CUTRACE_TEST_SWEEP_FAULT=1, analyzer/model/cta_model.c: zero-length intervals end before they begin)
 * the comparison must find differences on the recorded trace and on random shapes. */
#include <stdlib.h>

#include "an_helpers.h"
#include "refmodel.h"

TEST_IMPL(planted_bug_is_detected)
{
    ASSERT_INT(setenv("CUTRACE_TEST_SWEEP_FAULT", "1", 1), ==, 0);
    int caught = 0;
    for (int seed = 1; seed <= 10; seed++) {
        char dir[4096], name[32], args[64];
        snprintf(name, sizeof name, "planted%d", seed);
        snprintf(args, sizeof args, "--random %d", seed);
        ASSERT(an_gen(dir, name, args));
        int n = rm_check(dir, NULL, "with the planted bug (expected to differ)", NULL);
        ASSERT_INT(n, >=, 0);
        caught += n > 0;
    }
    fprintf(stderr, "the planted bug was detected on %d of 10 random traces\n", caught);
    ASSERT_INT(caught, >=, 5);
    return 0;
}
