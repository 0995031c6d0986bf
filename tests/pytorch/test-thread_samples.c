/* Where a PyTorch program's thread was (THREAD_SAMPLE, FORMAT.md 4.12), on phases.py: the share
 * of the main thread's sampled time at each phase's function and line (preparing a batch in
 * Python, multiplying and synchronizing on the GPU, sleeping) is the share of the time the
 * program measured for it on its own clock, within 5 points; its samples carry its Python
 * frames, the script's under PyTorch's. */
#include "pt.h"
#include "tr.h"

#include <stdlib.h>

typedef struct {
    char prepare[96], wait[96], step[64];
} pt_lines;

static const char *pt_phase_of(const tr_rec *x, const void *ctx)
{
    const pt_lines *L = ctx;
    if (!x->stack)
        return NULL;
    if (!strncmp(x->stack, L->prepare, strlen(L->prepare)) && !x->name)
        return "prepare";
    if (!strncmp(x->stack, L->wait, strlen(L->wait)) && x->r.u.thread_sample.state == 'S')
        return "wait";
    return !strncmp(x->stack, L->step + 1, strlen(L->step) - 1) || strstr(x->stack, L->step) ? "step"
                                                                                         : NULL;
}

TEST_IMPL(pytorch_thread_samples_phases)
{
    const char *args[] = {"--rounds", "3", NULL};
    /* each kernel 0.3 ms on the GPU, which the step's synchronize waits for: the simulated
     * H100 runs a 256x256 matmul in microseconds, and samples inside it came only while
     * fakecuda's stream thread woke late (before it ran at real-time priority) */
    const char *env[] = {"FAKECUDA_KERNEL_NS=*=300000", NULL};
    ctt_proc p;
    char dir[4096];
    if (pt_run(&p, dir, "phases", 1, "phases.py", args, env))
        return 1;
    ASSERT_CONTAINS(p.out, "phases: rounds=3\n");
    pt_lines L;
    int prepare = an_marker_line(PT_SRC "/phases.py", "prepare");
    int wait = an_marker_line(PT_SRC "/phases.py", "wait");
    ASSERT(prepare > 0 && wait > 0);
    snprintf(L.prepare, sizeof L.prepare, "prepare@phases.py:%d;", prepare);
    snprintf(L.wait, sizeof L.wait, "wait@phases.py:%d;", wait);
    snprintf(L.step, sizeof L.step, ";step@phases.py:");
    tr_phase ph[TR_PHASES];
    size_t nph = tr_phases_of(p.out, "phases:", ph);
    ASSERT_UINT(nph, ==, 9);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    if (tr_sample_shares(&t, t.pids[0], ph, nph, pt_phase_of, &L, "phases.py"))
        return 1;
    /* in the step, inside the synchronization some of the time, under the script's frames */
    size_t sync = 0;
    for (size_t r = 0; r < t.n; r++) {
        const tr_rec *x = &t.v[r];
        if (x->r.type == CT_REC_THREAD_SAMPLE && x->name && strstr(x->name, "Synchronize") &&
            x->stack && pt_phase_of(x, &L) && !strcmp(pt_phase_of(x, &L), "step") && strstr(x->stack, "<module>@phases.py:"))
            sync++;
    }
    ASSERT_UINT(sync, >, 0);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
