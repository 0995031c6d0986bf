/* The naive baseline: the tracer someone writes in an afternoon. The real function comes from
 * dlsym; every call prints one line (time, function, argument, result, duration) with fprintf
 * on stderr, which the benchmark sends to a file. */
#include <time.h>

#include "ib_wrappers.h"

static inline uint64_t ib_before(int fn, uint64_t arg)
{
    (void)fn, (void)arg;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void ib_after(int fn, uint64_t t0, uint64_t arg, int result)
{
    uint64_t t1 = ib_before(fn, arg);
    fprintf(stderr, "%llu %s(0x%llx) = %d [%llu ns]\n", (unsigned long long)t0, ib_names[fn],
            (unsigned long long)arg, result, (unsigned long long)(t1 - t0));
}
