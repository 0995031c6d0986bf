/* The recorded trace of a Python program driving the driver through ctypes (20 steps: a 4 MiB
 * pageable cuMemcpyHtoD whose first took 41 ms, 8 launches, a 4-byte cuMemcpyDtoH,
 * cuCtxSynchronize, a 20 ms sleep), on which the summary once reported 386.91 ms busy of a
 * 507.33 ms window: the union of its GPU intervals is 71.48 ms. */
#include <unistd.h>

#include "an_helpers.h"
#include "refmodel.h"

TEST_IMPL(recorded_python_trace)
{
    const char *path = RM_SHARED_TRACES "/python-ctypes-busy-386ms.cutrace";
    if (access(path, R_OK))
        ctt_skip("the recorded trace is not present (../shared/data/traces)");
    rm_result *r = NULL;
    ASSERT_INT(rm_check(path, NULL, "python-ctypes-busy-386ms", &r), ==, 0);
    ASSERT_UINT(r->nbd, ==, 1);
    ASSERT_UINT(r->bd[0].window, ==, 507330103);
    ASSERT_UINT(r->bd[0].busy / 10000, ==, 7148); /* 71.48 ms */
    rm_free(r);
    return 0;
}
