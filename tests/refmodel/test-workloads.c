/* The workloads under `cutrace run` on the simulation (as the analyzer suite traces them)
 * against the reference: every figure the reference computes, with no late points. */
#include <stdlib.h>

#include "an_helpers.h"
#include "refmodel.h"

/* rm_check on a traced directory, and no process approximate. */
static int check_traced(const char *dir, const char *what)
{
    tj *s = an_summary(dir, NULL);
    if (!s)
        return -1;
    const tj *p = tj_get(s, "processes");
    int late = 0;
    for (size_t i = 0; p && i < p->n; i++)
        late += tj_num(p->v[i], "late_points") != 0;
    tj_free(s);
    if (late)
        fprintf(stderr, "%s: %d processes with late points\n", what, late);
    return late ? -1 : rm_check(dir, "--variants", what, NULL);
}

TEST_IMPL(workloads_traced)
{
    static const struct {
        const char *name, *args, *env;
    } w[] = {
        {"starved", "train_loop --iters 10", NULL},
        {"fed", "train_loop --iters 10 --loader-ms 0 --memory pinned --prefetch", "FAKECUDA_KERNEL_NS=*=300000"},
        {"compute", "train_loop --iters 6 --loader-ms 5 --loader compute", NULL},
        {"vram", "vram_peak", NULL},
        {"threads", "threads", NULL},
        {"driver", "driver_api", NULL},
        {"fork", "fork_exec", NULL},
    };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
        char dir[4096], *out, env0[256];
        snprintf(env0, sizeof env0, "%s", w[i].env ? w[i].env : "");
        char *env[] = {env0, NULL};
        ASSERT(an_trace_workload(dir, w[i].name, w[i].args, w[i].env ? env : NULL, &out));
        free(out);
        ASSERT_INT(check_traced(dir, w[i].args), ==, 0);
    }
    /* a process ended by a signal, with work in flight */
    char dir[4096], *out;
    an_trace_workload(dir, "term", "dies --how term", NULL, &out);
    free(out);
    snprintf(dir, sizeof dir, "%s/term", ctt_tmpdir());
    ASSERT_INT(check_traced(dir, "dies --how term"), ==, 0);
    return 0;
}
