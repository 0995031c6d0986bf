/* The LTTng-UST baseline, the mechanism THAPI uses: an entry and an exit tracepoint around each
 * call (provider cutrace_bench, ib_lttng_tp.h), recorded by an LTTng session the benchmark
 * creates (run_bench.py). This one file both defines the tracepoints and registers the probes. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ib_lttng_tp.h"

#include "ib_wrappers.h"

static inline uint64_t ib_before(int fn, uint64_t arg)
{
    lttng_ust_tracepoint(cutrace_bench, entry, fn, arg);
    return 0;
}

static inline void ib_after(int fn, uint64_t t0, uint64_t arg, int result)
{
    (void)t0, (void)arg;
    lttng_ust_tracepoint(cutrace_bench, exit, fn, result);
}
