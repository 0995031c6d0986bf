/* The CPUs a traced process may use (FORMAT.md 4.11, HOST_SAMPLE since 1.9): a batch job's
 * cpuset (its affinity mask) and a container's or job's cgroup CPU limit make the machine's
 * cores the wrong measure of "every core busy" and of how many workers fit. loader_tree's
 * workers spin a known CPU time; the tests confine the run and check the samples against what
 * the confinement allows and against the tree's own CPU time. */
#define _GNU_SOURCE
#include "tr.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "an_helpers.h"

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

/* ---- a cgroup of our own with a CPU limit ---- */

typedef struct {
    int v2;
    char dir[2][320];  /* the cpu controller's cgroup; v1: cpuacct's when mounted apart */
    char back[2][320]; /* where this process was */
} hl_cgroup;

static int hl_write(const char *dir, const char *file, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* This process's cgroup path in the hierarchy whose controllers line is ctrls ("" for v2). */
static int hl_path_of(const char *ctrls, char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 && (size_t)(c2 - c1 - 1) == strlen(ctrls) && !strncmp(c1 + 1, ctrls, strlen(ctrls)) &&
            (*ctrls || line[0] == '0')) {
            snprintf(out, n, "%s", c2 + 1);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

/* Makes a cgroup limited to 0.5 CPU and moves this process into it; ctt_skip when the machine
 * cannot (not root, no cpu controller where systemd mounts it). */
static void hl_enter(hl_cgroup *g)
{
    memset(g, 0, sizeof *g);
    char name[48], path[256];
    snprintf(name, sizeof name, "cutrace-test-%d", (int)getpid());
    struct stat st;
    const char *v1cpu = stat("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", &st) == 0 ? "cpu,cpuacct"
                        : stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &st) == 0     ? "cpu"
                                                                                     : NULL;
    if (v1cpu) {
        if (hl_path_of(v1cpu, path, sizeof path) != 0)
            ctt_skip("the cgroup v1 cpu controller is mounted but /proc/self/cgroup has no line for it");
        snprintf(g->back[0], sizeof g->back[0], "/sys/fs/cgroup/%s%s", v1cpu, path);
        snprintf(g->dir[0], sizeof g->dir[0], "/sys/fs/cgroup/%s/%s", v1cpu, name);
        if (!strcmp(v1cpu, "cpu") && hl_path_of("cpuacct", path, sizeof path) == 0) {
            snprintf(g->back[1], sizeof g->back[1], "/sys/fs/cgroup/cpuacct%s", path);
            snprintf(g->dir[1], sizeof g->dir[1], "/sys/fs/cgroup/cpuacct/%s", name);
        }
    } else {
        FILE *f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "re");
        char ctl[256] = "";
        if (!f || !fgets(ctl, sizeof ctl, f) || !strstr(ctl, "cpu"))
            ctt_skip("no cgroup cpu controller at /sys/fs/cgroup (v1 cpu/ or v2 with cpu enabled)");
        fclose(f);
        g->v2 = 1;
        if (hl_path_of("", path, sizeof path) != 0)
            ctt_skip("/proc/self/cgroup has no cgroup v2 line");
        snprintf(g->back[0], sizeof g->back[0], "/sys/fs/cgroup%s", strcmp(path, "/") ? path : "");
        snprintf(g->dir[0], sizeof g->dir[0], "/sys/fs/cgroup/%s", name);
    }
    for (int i = 0; i < 2; i++)
        if (g->dir[i][0] && mkdir(g->dir[i], 0755) != 0) {
            int e = errno;
            if (i)
                rmdir(g->dir[0]);
            char why[700];
            snprintf(why, sizeof why, "cannot make a cgroup (%s: %s)", g->dir[i], strerror(e));
            ctt_skip(why);
        }
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    int rc = g->v2 ? hl_write(g->dir[0], "cpu.max", "50000 100000\n")
                   : hl_write(g->dir[0], "cpu.cfs_quota_us", "50000\n");
    for (int i = 0; i < 2 && rc == 0; i++)
        if (g->dir[i][0])
            rc = hl_write(g->dir[i], "cgroup.procs", pid);
    if (rc != 0) {
        char why[700];
        snprintf(why, sizeof why, "cannot limit %s and move into it: %s", g->dir[0], strerror(errno));
        for (int i = 0; i < 2; i++)
            if (g->dir[i][0]) {
                hl_write(g->back[i], "cgroup.procs", pid);
                rmdir(g->dir[i]);
            }
        ctt_skip(why);
    }
}

static void hl_leave(hl_cgroup *g)
{
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    for (int i = 0; i < 2; i++)
        if (g->dir[i][0]) {
            hl_write(g->back[i], "cgroup.procs", pid);
            rmdir(g->dir[i]);
        }
}

/* In a cgroup limited to half a CPU, two spinning workers: the samples give the limit, the
 * cgroup's CPU time (the tree's, nothing else runs in it) within the limit, and throttling. */
TEST_IMPL(host_cgroup_cpu_limit_is_read)
{
    hl_cgroup g;
    hl_enter(&g);
    char out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    tr_trace t;
    int failed = hl_run(out, &t);
    hl_leave(&g);
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
