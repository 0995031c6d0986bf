/* Several processes: every rank in the tables, merged on one axis, the straggler named. */
#include "an_helpers.h"

TEST_IMPL(summary_ranks_and_straggler)
{
    char dir[4096];
    ASSERT(an_gen(dir, "r", "--ranks 4 --straggler 1.5 --iters 10 --loader-ms 2"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_UINT(tj_len(s, "processes"), ==, 4);
    ASSERT_UINT(tj_len(s, "ranks"), ==, 4);
    double inst = 0;
    const tj *k = tj_get(s, "kernels");
    for (size_t i = 0; i < k->n; i++)
        inst += tj_num(k->v[i], "instances");
    ASSERT_INT(inst, ==, 4 * 10 * 30);
    for (int r = 0; r < 4; r++) {
        char path[64];
        snprintf(path, sizeof path, "ranks.%d.rank", r);
        ASSERT_INT(tj_num(s, path), ==, r);
        snprintf(path, sizeof path, "ranks.%d.straggler", r);
        if (r == 1)
            ASSERT_STR(tj_str(s, path), "GPU work");
        else
            ASSERT(tj_str(s, path) == NULL);
        snprintf(path, sizeof path, "ranks.%d.peak_vram_bytes", r);
        ASSERT_INT(tj_num(s, path), ==, 4294967296LL);
    }
    ASSERT_UINT(tj_len(s, "breakdown"), ==, 4);
    tj_free(s);
    /* files named one by one, and the text table */
    char f0[4200], f2[4200];
    snprintf(f0, sizeof f0, "%s/rank-0.cutrace", dir);
    snprintf(f2, sizeof f2, "%s/rank-2.cutrace", dir);
    char *argv[] = {(char *)an_cutrace(), "summary", f0, f2, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "cutrace summary: 2 processes");
    ASSERT_CONTAINS(p.out, "== Ranks ==");
    ASSERT_CONTAINS(p.out, "dataloader-starvation (pid 1002, rank 2)");
    ASSERT_CONTAINS(p.out, "1002"); /* rank 2's pid in the table */
    ctt_proc_free(&p);
    return 0;
}
