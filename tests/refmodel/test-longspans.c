/* Intervals longer than every earlier one and than the sweep's minimum lag: a first call that
 * creates the context (300 ms), a stream synchronization waiting ~1.1 s for queued kernels while
 * their GPU records arrive, CPU readings 700 ms apart (a stall). The chunk headers declare the
 * longest span (FORMAT.md 3.2), so the analyzer's sweep lags enough from the first record: no
 * point may be late, and the breakdown must agree with the reference exactly. */
#include <stdlib.h>

#include "an_helpers.h"
#include "refmodel.h"

/* The largest max_ns of API function `name` over the summary's API table. */
static double api_max(const tj *s, const char *name)
{
    const tj *a = tj_get(s, "api");
    double m = 0;
    for (size_t i = 0; a && i < a->n; i++)
        if (!strcmp(tj_str(a->v[i], "name"), name) && tj_num(a->v[i], "max_ns") > m)
            m = tj_num(a->v[i], "max_ns");
    return m;
}

TEST_IMPL(long_spans_exact)
{
    /* the longest call of each kind the shape must have (0: no check) */
    static const struct {
        const char *args;
        double free_ns, sync_ns;
    } c[] = {
        {"--init-ms 300 --iters 4 --kernels 100 --kernel-us 10000", 300e6, 1e9},
        {"--init-ms 300 --iters 6 --kernels 100 --kernel-us 10000 --stall-ms 700 --ranks 2",
         300e6, 1e9},
        /* only the CPU readings around the stall are far apart: calls stay under 30 ms */
        {"--iters 6 --stall-ms 700", 0, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char dir[4096], name[32];
        snprintf(name, sizeof name, "longspan%zu", i);
        ASSERT(an_gen(dir, name, c[i].args));
        tj *s = an_summary(dir, NULL);
        ASSERT(s);
        /* the shapes are there: calls longer than the 200 ms minimum lag, each the longest so far */
        ASSERT(api_max(s, "cudaFree") >= c[i].free_ns);
        ASSERT(api_max(s, "cudaStreamSynchronize") >= c[i].sync_ns);
        const tj *p = tj_get(s, "processes");
        ASSERT(p && p->n > 0);
        for (size_t k = 0; k < p->n; k++)
            ASSERT_INT((long long)tj_num(p->v[k], "late_points"), ==, 0);
        tj_free(s);
        ASSERT_INT(rm_check(dir, NULL, c[i].args, NULL), ==, 0);
    }
    return 0;
}

/* The same under `cutrace run`: train_loop on the simulation with 40 ms kernels, whose loss
 * read-back (a pageable cudaMemcpyAsync) waits over a second for the queued step while the
 * harvester's GPU records arrive; and with a 400 ms sleeping loader, where the main thread's CPU
 * readings are far apart and every call is short. The tracer's writer declares the spans. */
TEST_IMPL(long_spans_traced)
{
    static const struct {
        const char *name, *args, *env;
        double copy_ns; /* the longest cudaMemcpyAsync at least */
    } w[] = {
        {"longspan_queue", "train_loop --iters 3 --loader-ms 1", "FAKECUDA_KERNEL_NS=*=40000000", 1e9},
        {"longspan_loader", "train_loop --iters 4 --loader-ms 400", "FAKECUDA_DEVICES=h100", 0},
    };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
        char dir[4096], *out;
        char *const env[] = {(char *)w[i].env, NULL};
        ASSERT(an_trace_workload(dir, w[i].name, w[i].args, env, &out));
        free(out);
        tj *s = an_summary(dir, NULL);
        ASSERT(s);
        ASSERT(api_max(s, "cudaMemcpyAsync") >= w[i].copy_ns);
        const tj *p = tj_get(s, "processes");
        ASSERT(p && p->n == 1);
        ASSERT_INT((long long)tj_num(p->v[0], "late_points"), ==, 0);
        tj_free(s);
        ASSERT_INT(rm_check(dir, NULL, w[i].args, NULL), ==, 0);
    }
    return 0;
}
