/* Traces without GPU timing, or with 1 operation in N timed: every kernel, copy and set is still
 * in the tables (from its LAUNCH / COPY record), the GPU columns say what was not collected, and
 * nothing is drawn from the gaps the missing intervals leave. tracegen --iters 10 writes per
 * iteration a 4 MiB H2D copy, 30 launches and a 4-byte D2H copy: 320 operations, 300 kernels. */
#include "an_helpers.h"

#include <stdlib.h>

/* `cutrace summary DIR` (text), in p */
static int text_of(ctt_proc *p, const char *dir)
{
    return an_run(p, "summary {}", dir) == 0 && p->exited && p->code == 0;
}

static double sum_of(const tj *arr, const char *key)
{
    double s = 0;
    for (size_t i = 0; i < arr->n; i++)
        s += tj_num(arr->v[i], key);
    return s;
}

TEST_IMPL(summary_without_gpu_timing)
{
    char dir[4096];
    ASSERT(an_gen(dir, "off", "--iters 10 --gpu-timing 0"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.gpu_timing"), ==, 0);
    ASSERT_INT(tj_num(s, "processes.0.devices.0.gpu_operations"), ==, 320);
    ASSERT_INT(tj_num(s, "processes.0.devices.0.gpu_timed_operations"), ==, 0);
    /* every kernel from its launches: instances, configuration, launch call time (5 us each) */
    const tj *k = tj_get(s, "kernels");
    ASSERT_UINT(k->n, ==, 8);
    ASSERT_INT(sum_of(k, "instances"), ==, 300);
    ASSERT_INT(sum_of(k, "timed_instances"), ==, 0);
    const tj *rb = tj_find(k, "name", "reduce_batch"); /* launches 6, 14, 22 of each step */
    ASSERT(rb);
    ASSERT_INT(tj_num(rb, "instances"), ==, 30);
    ASSERT_INT(tj_num(rb, "launch_calls_ns"), ==, 30 * 5000);
    ASSERT_INT(tj_num(rb, "grid.0"), ==, 4); /* the first, launch 6: 4 << (6 % 3) */
    ASSERT_INT(tj_num(rb, "block.0"), ==, 256);
    ASSERT(tj_get(rb, "configurations_vary")->num == 1);
    ASSERT(tj_get(rb, "total_ns")->type == TJ_NULL);
    ASSERT(tj_get(rb, "time_pct")->type == TJ_NULL);
    /* every copy from its record */
    const tj *h2d = tj_find(tj_get(s, "copies"), "op", "H2D");
    ASSERT(h2d);
    ASSERT_INT(tj_num(h2d, "count"), ==, 10);
    ASSERT_INT(tj_num(h2d, "bytes"), ==, 10 * 4194304);
    ASSERT_INT(tj_num(h2d, "timed_count"), ==, 0);
    ASSERT(tj_get(h2d, "total_ns")->type == TJ_NULL && tj_get(h2d, "gbps")->type == TJ_NULL);
    ASSERT_INT(tj_num(tj_find(tj_get(s, "copies"), "op", "D2H"), "count"), ==, 10);
    /* no breakdown figures, and no diagnosis from the device's gaps (the timed trace has
     * dataloader-starvation) */
    ASSERT_UINT(tj_len(s, "breakdown"), ==, 1);
    ASSERT(tj_get(tj_at(tj_get(s, "breakdown"), 0), "complete")->num == 0);
    ASSERT_INT(tj_num(s, "breakdown.0.gpu_untimed_operations"), ==, 320);
    ASSERT(!tj_path(s, "breakdown.0.gpu_busy_ns"));
    ASSERT(!an_diag(s, "dataloader-starvation"));
    tj_free(s);
    char timed[4096];
    ASSERT(an_gen(timed, "all", "--iters 10"));
    s = an_summary(timed, NULL);
    ASSERT(s && an_diag(s, "dataloader-starvation"));
    tj_free(s);

    ctt_proc p;
    ASSERT(text_of(&p, dir));
    ASSERT_CONTAINS(p.out, "GPU durations were not collected (traced with GPU timing off, cutrace "
                           "run's default)");
    ASSERT_CONTAINS(p.out, "cutrace run --gpu-timing all");
    ASSERT_CONTAINS(p.out, "reduce_batch");
    ASSERT_CONTAINS(p.out, "several (--variants)");
    ASSERT_CONTAINS(p.out, "H2D        pageable        10  40.00 MiB          0");
    ASSERT_CONTAINS(p.out, "no breakdown: it needs the GPU interval of every kernel, copy and set, "
                           "and 320 of 320 have none");
    ASSERT(!strstr(p.out, "(no kernels)") && !strstr(p.out, "(no copies or sets)") &&
           !strstr(p.out, "(no GPU activity traced)"));
    ctt_proc_free(&p);

    /* the timeline: each of the 320 as an instant event on the calling thread */
    char out[4096], arg[4200];
    snprintf(out, sizeof out, "%s/tl.json", ctt_tmpdir());
    snprintf(arg, sizeof arg, "timeline {} -o %s", out);
    ASSERT_INT(an_run(&p, arg, dir), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    char *argv[] = {"grep", "-c", "\"gpu_time\":\"not collected", out, NULL};
    ASSERT_INT(ctt_run(&p, argv, NULL, 30), ==, 0);
    ASSERT_INT(atoi(p.out), ==, 320);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(summary_partial_gpu_timing)
{
    char dir[4096];
    ASSERT(an_gen(dir, "third", "--iters 10 --gpu-timing 3 --ranks 2"));
    /* tracegen times operations 0, 3, 6 ... of each rank's sequence: copy, 30 kernels, copy */
    uint64_t timed = 0, ktimed = 0;
    for (int i = 0; i < 320; i++)
        if (i % 3 == 0) {
            timed++;
            ktimed += i % 32 != 0 && i % 32 != 31;
        }
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.gpu_timing"), ==, 3);
    ASSERT_INT(tj_num(s, "processes.0.devices.0.gpu_timed_operations"), ==, timed);
    const tj *k = tj_get(s, "kernels");
    ASSERT_INT(sum_of(k, "instances"), ==, 600);
    ASSERT_INT(sum_of(k, "timed_instances"), ==, 2 * ktimed);
    ASSERT_INT(tj_num(s, "breakdown.0.gpu_untimed_operations"), ==, 320 - timed);
    ASSERT(!tj_path(s, "breakdown.0.window_ns"));
    /* the ranks' busy share is unknown, so is a straggler by GPU work */
    ASSERT(tj_path(s, "ranks.0.gpu_busy_pct")->type == TJ_NULL);
    ASSERT(!an_diag(s, "dataloader-starvation"));
    tj_free(s);
    ctt_proc p;
    ASSERT(text_of(&p, dir));
    char want[200];
    snprintf(want, sizeof want, "GPU durations were collected for %llu of 600 kernel instances "
                                "(traced with --gpu-timing 3, which times 1 in 3)",
             (unsigned long long)(2 * ktimed));
    ASSERT_CONTAINS(p.out, want);
    snprintf(want, sizeof want, "and %llu of 320 have none", (unsigned long long)(320 - timed));
    ASSERT_CONTAINS(p.out, want);
    ASSERT_CONTAINS(p.out, "the findings drawn from GPU idle gaps need every GPU interval");
    ctt_proc_free(&p);
    return 0;
}
