/* GPU records against ground truth: every workload runs under `cutrace run` with the default
 * options and FAKECUDA_TRUTH, which logs each kernel, copy and set the simulation executed with
 * its true interval, when the host submitted it, when its stream let it start, its submitting
 * thread and its index among that thread's operations. The Nth traced kernel/copy/set call of a
 * thread that succeeded (and was not captured into a graph) is that thread's Nth truth line.
 * Every truth line must have its GPU record and every GPU record its truth line, and each record
 * must be what preload/README.md ("Accuracy of GPU times") states, to TR_GPU_ERR_NS (the
 * anchor's error, well above the half of a record call it is on this machine):
 *
 *   - it encloses the true interval;
 *   - its start is the true one when the operation waited for earlier work on its stream (for a
 *     transfer: the time it became ready, before any wait for its copy engine);
 *   - its end is the true one unless the record says it is only a bound (CT_GPU_END_BOUND: the
 *     operation had completed when its end event was enqueued).
 *
 * TR_HOST_NS bounds the host's time from handing an operation to the driver to enqueuing the
 * tracer's start event of the next (a few microseconds; a preempted host takes longer, so 1% of
 * the checked starts and ends, plus one, may miss the last two points, never the first). */
#include "tr.h"

#include <stdlib.h>

#define TR_GPU_ERR_NS 5000
#define TR_HOST_NS 50000

typedef struct {
    uint32_t pid, tid;
    uint64_t idx;
    char kind[8];
    int64_t start, end, submit, ready;
    int matched;
} truth_op;

typedef struct {
    uint32_t pid, tid;
    uint64_t corr;
    const ct_rec *detail; /* LAUNCH or COPY */
    const ct_rec *gpu;
} traced_op;

static int traced_cmp(const void *x, const void *y)
{
    const traced_op *a = x, *b = y;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int truth_check(const char *name, char *const cmd[], int status)
{
    char out[4096], truth[4096], env0[4200];
    snprintf(out, sizeof out, "%s/%s", ctt_tmpdir(), name);
    snprintf(truth, sizeof truth, "%s/%s.truth", ctt_tmpdir(), name);
    snprintf(env0, sizeof env0, "FAKECUDA_TRUTH=%s", truth);
    char *env[] = {env0, NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 120), ==, 0);
    TR_ASSERT_EXIT(p, status);

    truth_op *tv = NULL;
    size_t nt = 0, cap = 0;
    FILE *f = fopen(truth, "r");
    ASSERT(f != NULL);
    truth_op o = {0};
    while (fscanf(f, "%u %u %lu %7s %*u %ld %ld %ld %ld", &o.pid, &o.tid, &o.idx, o.kind,
                  &o.start, &o.end, &o.submit, &o.ready) == 8) {
        if (nt == cap)
            tv = realloc(tv, (cap = cap ? 2 * cap : 256) * sizeof *tv);
        tv[nt++] = o;
    }
    fclose(f);

    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    traced_op *ov = calloc(t.n + 1, sizeof *ov);
    size_t no = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        int launch = r->type == CT_REC_LAUNCH;
        if (!launch && r->type != CT_REC_COPY)
            continue;
        if (launch ? r->u.launch.flags & CT_LAUNCH_CAPTURED : r->u.copy.flags & CT_COPY_CAPTURED)
            continue;
        uint64_t corr = launch ? r->u.launch.corr : r->u.copy.corr;
        const tr_rec *api = tr_api(&t, corr);
        ASSERT(api != NULL);
        if (api->r.u.api.result != 0)
            continue;
        ov[no++] = (traced_op){t.pids[r->file], r->tid, corr, r, NULL};
    }
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *g = &t.v[i].r;
        if (g->type != CT_REC_GPU)
            continue;
        size_t k = 0;
        while (k < no && !(ov[k].pid == t.pids[g->file] && ov[k].corr == g->u.gpu.corr))
            k++;
        if (k == no)
            ctt_fail_at(__FILE__, __LINE__, "%s: GPU record of corr %llu has no call", name,
                            (unsigned long long)g->u.gpu.corr);
        if (k == no)
            return 1;
        ASSERT(ov[k].gpu == NULL);
        ov[k].gpu = g;
    }
    qsort(ov, no, sizeof *ov, traced_cmp);
    size_t missed = 0, checked = 0;
    int64_t worst = 0;
    for (size_t k = 0, idx = 0; k < no; k++) {
        idx = k && ov[k].pid == ov[k - 1].pid && ov[k].tid == ov[k - 1].tid ? idx + 1 : 1;
        truth_op *tr = NULL;
        for (size_t j = 0; j < nt && !tr; j++)
            if (tv[j].pid == ov[k].pid && tv[j].tid == ov[k].tid && tv[j].idx == idx)
                tr = &tv[j];
        if (!tr || !ov[k].gpu) {
            ctt_fail_at(__FILE__, __LINE__, "%s: pid %u tid %u operation %zu (corr %llu): "
                            "%s", name, ov[k].pid, ov[k].tid, idx,
                            (unsigned long long)ov[k].corr,
                            !tr ? "traced, but the simulation executed no such operation"
                                : "executed, but the trace has no GPU record of it");
            return 1;
        }
        tr->matched = 1;
        const ct_rec *g = ov[k].gpu;
        ASSERT_STR(tr->kind, g->u.gpu.kind == CT_GPU_KERNEL   ? "kernel"
                             : g->u.gpu.kind == CT_GPU_MEMSET ? "set"
                                                              : "copy");
        int64_t ds = (int64_t)g->u.gpu.start - tr->start, de = (int64_t)g->ts - tr->end;
        /* enclosing, to the error */
        if (ds > TR_GPU_ERR_NS || de < -TR_GPU_ERR_NS) {
            ctt_fail_at(__FILE__, __LINE__, "%s: pid %u tid %u %s %zu: GPU record "
                            "[%lld, %lld] does not enclose the truth [%lld, %lld] (start %+lld "
                            "ns, end %+lld ns)", name, ov[k].pid, ov[k].tid, tr->kind, idx,
                            (long long)g->u.gpu.start, (long long)g->ts, (long long)tr->start,
                            (long long)tr->end, (long long)ds, (long long)de);
            return 1;
        }
        int check_start = tr->ready > tr->submit + TR_HOST_NS;
        int check_end = !(g->u.gpu.flags & CT_GPU_END_BOUND);
        int64_t es = (int64_t)g->u.gpu.start - tr->ready;
        checked += check_start + check_end;
        if ((check_start && llabs(es) > TR_GPU_ERR_NS) ||
            (check_end && llabs(de) > TR_GPU_ERR_NS)) {
            missed++;
            fprintf(stderr, "%s: %s %zu of pid %u tid %u: start %+lld ns from ready%s, end "
                    "%+lld ns%s\n", name, tr->kind, idx, ov[k].pid, ov[k].tid, (long long)es,
                    check_start ? "" : " (not checked)", (long long)de,
                    check_end ? "" : " (not checked)");
            continue;
        }
        if (check_start && llabs(es) > worst)
            worst = llabs(es);
        if (check_end && llabs(de) > worst)
            worst = llabs(de);
    }
    for (size_t j = 0; j < nt; j++)
        if (!tv[j].matched) {
            ctt_fail_at(__FILE__, __LINE__, "%s: pid %u tid %u %s %lu was executed but "
                            "never traced", name, tv[j].pid, tv[j].tid, tv[j].kind,
                            (unsigned long)tv[j].idx);
            return 1;
        }
    fprintf(stderr, "%s: %zu operations, %zu starts and ends checked (worst %lld ns), %zu "
            "missed\n", name, nt, checked, (long long)worst, missed);
    ASSERT_UINT(missed, <=, checked / 100 + 1);
    free(ov);
    free(tv);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* Every workload of tests/workloads, with its default arguments (dies: the one way it ends by
 * itself, exit(3) with work in flight). */
#define TRUTH_TEST(name, status, ...)                                          \
    TEST_IMPL(gpu_truth_##name)                                                \
    {                                                                          \
        char prog[4096];                                                       \
        char *cmd[] = {(char *)tr_workload(prog, #name), __VA_ARGS__};         \
        return truth_check(#name, cmd, status);                                \
    }

TRUTH_TEST(train_loop, 0, NULL)
TRUTH_TEST(vram_peak, 0, NULL)
TRUTH_TEST(threads, 0, NULL)
TRUTH_TEST(fork_exec, 0, NULL)
TRUTH_TEST(driver_api, 0, NULL)
TRUTH_TEST(dies, 3, "--how", "exit", NULL)
