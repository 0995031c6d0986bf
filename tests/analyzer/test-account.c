/* One account of the idle time (issue 28): every idle nanosecond of a device has one cause, and
 * the findings are drawn from it. On random traces (tracegen --random: devices, ranks, loaders,
 * synchronizations and copies of random shapes), with every finding reported however small:
 * each device's findings together claim no more than its window (a launch's wait and a small
 * synchronous copy's wake-up lie in intervals recorded as busy, which are bounds holding host
 * time, so the idle time alone is not their bound), a synchronization finding
 * no more than the time the synchronizations blocked the host, a data-loading finding no more
 * than its gaps, and the gap causes add up to the idle time. */
#include "an_helpers.h"

#define ACCOUNT_SEEDS 40

TEST_IMPL(diag_savings_within_the_idle_account)
{
    for (int seed = 1; seed <= ACCOUNT_SEEDS; seed++) {
        char dir[4096], args[32], name[32];
        snprintf(args, sizeof args, "--random %d", seed);
        snprintf(name, sizeof name, "r%d", seed);
        ASSERT(an_gen(dir, name, args));
        tj *s = an_summary(dir, "--min-saving 0");
        ASSERT(s);
        const tj *bd = tj_get(s, "breakdown"), *dg = tj_get(s, "diagnoses");
        for (size_t b = 0; b < bd->n; b++) {
            const tj *x = bd->v[b];
            double pid = tj_num(x, "pid"), dev = tj_num(x, "device"), idle = tj_num(x, "gpu_idle_ns"),
                   win = tj_num(x, "window_ns");
            double causes = 0;
            const tj *g = tj_get(x, "gaps");
            for (size_t c = 0; c < g->n; c++)
                causes += tj_num(g->v[c], "total_ns");
            /* (a gap's time outside a windowed trace's capture windows is in neither) */
            ASSERT(causes <= idle + 1);
            double claimed = 0;
            for (size_t i = 0; i < dg->n; i++) {
                const tj *d = dg->v[i], *dv = tj_get(d, "device");
                if (tj_num(d, "pid") != pid || !dv || dv->type != TJ_NUM || dv->num != dev)
                    continue;
                double save = tj_num(d, "estimated_saving_ns");
                claimed += save;
                if (!strcmp(tj_str(d, "id"), "excessive-sync"))
                    ASSERT(save <= tj_num(d, "evidence.host_blocked_ns"));
                /* the program's start before its first batch is counted, never priced */
                if (!strcmp(tj_str(d, "id"), "dataloader-starvation"))
                    ASSERT(save <= tj_num(d, "evidence.gap_ns") - tj_num(d, "evidence.startup_gap_ns") + 1);
            }
            if (claimed > win + 1) {
                ctt_fail_at(__FILE__, __LINE__, "seed %d pid %.0f GPU %.0f: the findings claim %.0f ns of "
                            "a %.0f ns window", seed, pid, dev, claimed, win);
                tj_free(s);
                return 1;
            }
        }
        tj_free(s);
    }
    return 0;
}
