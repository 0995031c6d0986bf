/* The CPUs a traced process may use (FORMAT.md 4.11, HOST_SAMPLE since 1.9): a batch job's
 * cpuset (its affinity mask) and a container's or job's cgroup CPU limit make the machine's
 * cores the wrong measure of "every core busy" and of how many workers fit. loader_tree's
 * workers spin a known CPU time; the tests confine the run and check the samples against what
 * the confinement allows and against the tree's own CPU time. */
#define _GNU_SOURCE
#include "tr.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "an_helpers.h"
#include "tr_confine.h"

#define HL_TICK_NS 10000000ll /* the kernel's CPU accounting granularity (USER_HZ 100) */

/* Traces loader_tree with 2 workers of 300 ms CPU each, sampled every 50 ms, into out and
 * loads the trace into t: 0, or 1 after failing the test. */
static int hl_run(const char *out, tr_trace *t)
{
    char prog[4096], data[4096];
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "loader_tree"), "2", "300", "1000000", "300", data, NULL};
    char *env[] = {"CUTRACE_HOST_SAMPLE_MS=50", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ctt_proc_free(&p);
    ASSERT_INT(tr_load(t, out), ==, 0);
    return 0;
}

/* From the trace's first to its last machine reading: those readings, and the CPU time the
 * tree's processes spent in between (a process's from its reading in the first round, or from
 * 0 if it began later: each round reads every process, then the machine, at one ts). */
typedef struct {
    const ct_rec_host_sample *a, *b;
    long long dt, tree_cpu, procs;
} hl_span;

static int hl_span_of(const tr_trace *t, hl_span *s)
{
    memset(s, 0, sizeof *s);
    uint64_t ta = 0, tb = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == CT_REC_HOST_SAMPLE) {
            if (!s->a) {
                s->a = &t->v[i].r.u.host_sample;
                ta = t->v[i].r.ts;
            }
            s->b = &t->v[i].r.u.host_sample;
            tb = t->v[i].r.ts;
        }
    if (!s->a || tb <= ta)
        return -1;
    s->dt = (long long)(tb - ta);
    uint32_t pids[64];
    long long first[64], last[64];
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const ct_rec *r = &t->v[i].r;
        if (r->type != CT_REC_PROC_SAMPLE || r->u.proc_sample.tid || r->ts < ta || r->ts > tb)
            continue;
        long long cpu = (long long)(r->u.proc_sample.user_ns + r->u.proc_sample.sys_ns);
        size_t k = 0;
        while (k < n && pids[k] != r->u.proc_sample.pid)
            k++;
        if (k == n) {
            if (n == 64)
                return -1;
            pids[n] = r->u.proc_sample.pid;
            first[n] = r->ts == ta ? cpu : 0;
            n++;
        }
        last[k] = cpu;
    }
    for (size_t k = 0; k < n; k++)
        s->tree_cpu += last[k] - first[k];
    s->procs = (long long)n;
    return 0;
}

static const tj *hl_machine(tj *j) { return tj_path(j, "processes.0.process_tree.machine"); }

/* Pinned to one CPU while a spinning process holds another: the samples count one CPU, whose
 * busy time holds the tree's CPU time and no more than the span, while the machine's holds the
 * spinner's too. */
TEST_IMPL(host_job_cpus_follow_the_affinity_mask)
{
    cpu_set_t mine, one, other;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0 || CPU_COUNT(&mine) < 2)
        ctt_skip("needs two CPUs in this process's affinity mask");
    int a = -1, b = -1;
    for (int c = 0; c < CPU_SETSIZE && b < 0; c++)
        if (CPU_ISSET(c, &mine))
            *(a < 0 ? &a : &b) = c;
    CPU_ZERO(&one);
    CPU_SET(a, &one);
    CPU_ZERO(&other);
    CPU_SET(b, &other);
    pid_t spinner = fork();
    ASSERT(spinner >= 0);
    if (spinner == 0) {
        sched_setaffinity(0, sizeof other, &other);
        for (;;)
            ;
    }
    char out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    tr_trace t;
    int pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    int failed = pinned ? hl_run(out, &t) : 0;
    sched_setaffinity(0, sizeof mine, &mine);
    kill(spinner, SIGKILL);
    waitpid(spinner, NULL, 0);
    ASSERT(pinned);
    if (failed)
        return 1;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_HOST_SAMPLE) {
            ASSERT_UINT(t.v[i].r.u.host_sample.job_cpus, ==, 1);
            ASSERT_UINT(t.v[i].r.u.host_sample.cpus, >=, 2);
        }
    hl_span s;
    ASSERT_INT(hl_span_of(&t, &s), ==, 0);
    long long job = (long long)(s.b->job_busy_ns - s.a->job_busy_ns);
    long long machine = (long long)(s.b->busy_ns - s.a->busy_ns);
    long long tol = (2 * s.procs + 2) * HL_TICK_NS;
    ASSERT_INT(s.tree_cpu, >=, 500 * 1000000ll); /* the workers' 600 ms, most of it sampled */
    ASSERT_INT(job, >=, s.tree_cpu - tol);
    ASSERT_INT(job, <=, s.dt + 2 * HL_TICK_NS);
    ASSERT_INT(machine - job, >=, s.dt / 2); /* the spinner, on the other CPU */
    tr_free(&t);

    tj *j = an_summary(out, NULL);
    ASSERT(j != NULL);
    const tj *mc = hl_machine(j);
    ASSERT(mc != NULL);
    ASSERT_INT((long long)tj_num(mc, "job_cpus"), ==, 1);
    ASSERT(tj_num(mc, "job_busy_cores") <= 1.0 + 0.05);
    ASSERT_INT(tj_path(mc, "cpu_limit_cores")->type, ==, TJ_NULL);
    tj_free(j);
    return 0;
}

/* In a cgroup limited to half a CPU, two spinning workers: the samples give the limit, the
 * cgroup's CPU time (the tree's, nothing else runs in it) within the limit, and throttling. */
TEST_IMPL(host_cgroup_cpu_limit_is_read)
{
    tr_cgroup g;
    tr_cgroup_enter(&g);
    char out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    tr_trace t;
    int failed = hl_run(out, &t);
    tr_cgroup_leave(&g);
    if (failed)
        return 1;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_HOST_SAMPLE) {
            ASSERT_UINT(t.v[i].r.u.host_sample.quota_mcpu, ==, 500);
            ASSERT_UINT(t.v[i].r.u.host_sample.flags & CT_HS_NO_CG_USAGE, ==, 0);
        }
    hl_span s;
    ASSERT_INT(hl_span_of(&t, &s), ==, 0);
    long long cg = (long long)(s.b->cg_cpu_ns - s.a->cg_cpu_ns);
    long long tol = (2 * s.procs + 2) * HL_TICK_NS;
    ASSERT_INT(s.tree_cpu, >=, 500 * 1000000ll);
    /* the cgroup's time is exact; the tree's to the tick; the limit holds per 100 ms period */
    ASSERT_INT(cg, >=, s.tree_cpu - tol);
    ASSERT_INT(cg, <=, s.dt / 2 + 50 * 1000000ll);
    ASSERT_INT((long long)(s.b->throttled_ns - s.a->throttled_ns), >, 0);
    tr_free(&t);

    tj *j = an_summary(out, NULL);
    ASSERT(j != NULL);
    const tj *mc = hl_machine(j);
    ASSERT(mc != NULL);
    ASSERT_NEAR(tj_num(mc, "cpu_limit_cores"), 0.5, 1e-9);
    ASSERT(tj_num(mc, "cgroup_cpu_cores") <= 0.5 + 0.05);
    ASSERT(tj_num(mc, "throttled_share") > 0);
    tj_free(j);
    return 0;
}
