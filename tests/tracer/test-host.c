/* Host sampling (issue 19, FORMAT.md 4.11): loader_tree's workers, forked children that never
 * use CUDA, report their own CPU time and the bytes their read() calls returned; the traced
 * process's trace must hold them (and the summary show them) as they reported, with the right
 * roles, while the workers write no trace of their own and the program behaves as untraced. */
#include "tr.h"

#include <stdlib.h>
#include <unistd.h>

#include "an_helpers.h"

#define HT_WORKERS 3
#define HT_PERIOD_MS "50"

typedef struct {
    long long pid, cpu_ns, read;
} ht_report;

/* The workers' "worker pid=P cpu_ns=C read=B" lines of stderr; how many. */
static int ht_reports(const char *err, ht_report *r, int max)
{
    int n = 0;
    for (const char *s = strstr(err, "worker pid="); s && n < max; s = strstr(s + 1, "worker pid=")) {
        char line[160];
        size_t len = strcspn(s, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), s);
        r[n++] = (ht_report){tr_value(line, "pid"), tr_value(line, "cpu_ns"), tr_value(line, "read")};
    }
    return n;
}

/* Runs the workload prog (loader_tree or py_loader_tree) under cutrace run, sampling every
 * period ms. */
static int ht_run_env(ctt_proc *p, const char *out, const char *prog_name, const char *period,
                      char *extra)
{
    char prog[4096], data[4096], env0[64];
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    snprintf(env0, sizeof env0, "CUTRACE_HOST_SAMPLE_MS=%s", period);
    /* 300 ms of CPU and 3000000 bytes each; the main process holds 300 ms (6 periods) after the
     * last report, so that a reading of each worker follows its work */
    char *cmd[] = {(char *)tr_workload(prog, prog_name), "3", "300", "3000000", "300", data, NULL};
    char *env[] = {env0, extra, NULL};
    return tr_run(p, out, NULL, cmd, env, 60);
}

static int ht_run(ctt_proc *p, const char *out, const char *prog_name, const char *period)
{
    return ht_run_env(p, out, prog_name, period, NULL);
}

/* The last whole-process reading of pid in the trace, or NULL. */
static const ct_rec_proc_sample *ht_last(const tr_trace *t, long long pid)
{
    const ct_rec_proc_sample *last = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == CT_REC_PROC_SAMPLE && t->v[i].r.u.proc_sample.pid == pid &&
            !t->v[i].r.u.proc_sample.tid)
            last = &t->v[i].r.u.proc_sample;
    return last;
}

static const ct_rec_proc *ht_proc(const tr_trace *t, long long pid)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == CT_REC_PROC && t->v[i].r.u.proc.pid == pid)
            return &t->v[i].r.u.proc;
    return NULL;
}

/* The kernel's user and system times are each cut to the clock tick, so their sum reads up to
 * 2 ticks below the CPU time at the reading; the reading follows the worker's own measurement
 * by its report and its wait, well under 1 ms of CPU. */
static int ht_cpu_ok(long long table_ns, long long reported_ns)
{
    long long tick = 1000000000LL / sysconf(_SC_CLK_TCK);
    return table_ns > reported_ns - 2 * tick && table_ns <= reported_ns + 1000000;
}

/* prog's run (extra: an environment variable, or NULL): its trace and summary against its
 * workers' reports. */
static int ht_workers(const char *prog, char *extra)
{
    char out[4096], want[64];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(want, sizeof want, "%s: workers=3 ok\n", prog);
    ctt_proc p;
    ASSERT_INT(ht_run_env(&p, out, prog, HT_PERIOD_MS, extra), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_STR(p.out, want);
    ht_report rep[8];
    ASSERT_INT(ht_reports(p.err, rep, 8), ==, HT_WORKERS);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1); /* the workers never used CUDA: no file of their own */
    const ct_rec_proc *self = ht_proc(&t, t.pids[0]);
    ASSERT(self != NULL);
    ASSERT_UINT(self->relation, ==, CT_PROC_SELF);
    for (int w = 0; w < HT_WORKERS; w++) {
        const ct_rec_proc *pr = ht_proc(&t, rep[w].pid);
        ASSERT(pr != NULL);
        ASSERT_UINT(pr->relation, ==, CT_PROC_FORKED);
        ASSERT_UINT(pr->ppid, ==, t.pids[0]);
        ASSERT_UINT(pr->root, ==, t.pids[0]);
        const ct_rec_proc_sample *s = ht_last(&t, rep[w].pid);
        ASSERT(s != NULL);
        /* forked during the trace: its counters started at 0 with it */
        if (!ht_cpu_ok((long long)(s->user_ns + s->sys_ns), rep[w].cpu_ns))
            ASSERT_INT((long long)(s->user_ns + s->sys_ns), ==, rep[w].cpu_ns);
        ASSERT_UINT(s->flags & CT_PS_NO_IO, ==, 0);
        ASSERT_INT((long long)s->rchar, ==, rep[w].read);
    }
    if (!strcmp(prog, "loader_tree")) {
        /* the main process's last reading, at its exit, has reaped the workers: its children's
         * CPU is theirs, summed in ns and cut to the tick once per field (user, system), plus
         * what each did after measuring (its report and _exit, well under 1 ms). Python's
         * workers run the interpreter's exit after measuring: no such bound for them. */
        const ct_rec_proc_sample *m = ht_last(&t, t.pids[0]);
        ASSERT(m != NULL);
        long long sum = 0, tick = 1000000000LL / sysconf(_SC_CLK_TCK);
        for (int w = 0; w < HT_WORKERS; w++)
            sum += rep[w].cpu_ns;
        if ((long long)m->children_ns <= sum - 2 * tick ||
            (long long)m->children_ns > sum + HT_WORKERS * 1000000LL)
            ASSERT_INT((long long)m->children_ns, ==, sum);
    }
    tr_free(&t);

    tj *j = an_summary(out, NULL);
    ASSERT(j != NULL);
    const tj *tree = tj_path(j, "processes.0.process_tree.processes");
    ASSERT(tree != NULL);
    ASSERT_UINT(tree->n, ==, 1 + HT_WORKERS);
    ASSERT_STR(tj_str(tree, "0.role"), "main");
    for (int w = 0; w < HT_WORKERS; w++) {
        const tj *row = NULL;
        for (size_t k = 0; k < tree->n; k++)
            if (tj_num(tj_at(tree, k), "pid") == (double)rep[w].pid)
                row = tj_at(tree, k);
        ASSERT(row != NULL);
        ASSERT_STR(tj_str(row, "role"), "loader worker");
        long long cpu = (long long)tj_num(row, "cpu_ns");
        if (!ht_cpu_ok(cpu, rep[w].cpu_ns))
            ASSERT_INT(cpu, ==, rep[w].cpu_ns);
        ASSERT_INT((long long)tj_num(row, "rchar_bytes"), ==, rep[w].read);
    }
    ASSERT(tj_num(j, "processes.0.process_tree.machine.cpus") >= 1);
    tj_free(j);
    char *targs[] = {"summary", out, NULL};
    char *text = tr_analyze(targs);
    ASSERT(text != NULL);
    ASSERT_CONTAINS(text, "== Process tree (host samples) ==");
    ASSERT_CONTAINS(text, "loader worker");
    free(text);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(host_workers_match_their_own_reports)
{
    return ht_workers("loader_tree", NULL);
}

/* The same with the tree found by scanning /proc, as on a kernel without children files. */
TEST_IMPL(host_workers_found_by_scanning_proc)
{
    return ht_workers("loader_tree", "CUTRACE_HOST_CHILDREN=scan");
}

/* The same of Python's multiprocessing workers (the "fork" context, as PyTorch's DataLoader
 * starts its workers), which read only their file and the main process's pipe. */
TEST_IMPL(host_python_workers_match_their_own_reports)
{
    return ht_workers("py_loader_tree", NULL);
}

/* The timeline's counter tracks: each value holds from its event to the next of its track. A
 * worker's CPU track integrates to the CPU time it reported (its last interval, after its work,
 * reads 0), within the 2 ticks of its readings; the machine's busy cores never exceed its CPUs. */
TEST_IMPL(host_timeline_tracks_integrate_to_the_workers_cpu)
{
    char out[4096], json[4200];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(json, sizeof json, "%s/tl.json", ctt_tmpdir());
    ctt_proc p;
    ASSERT_INT(ht_run(&p, out, "loader_tree", HT_PERIOD_MS), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ht_report rep[8];
    ASSERT_INT(ht_reports(p.err, rep, 8), ==, HT_WORKERS);
    char *args[] = {"timeline", "-o", json, out, NULL};
    free(tr_analyze(args));
    char *text = ctt_read_file(json, NULL), err[256];
    ASSERT(text != NULL);
    tj *j = tj_parse(text, err, sizeof err);
    free(text);
    ASSERT(j != NULL);
    const tj *ev = tj_get(j, "traceEvents");
    ASSERT(ev != NULL);
    /* The machine's busy cores over each interval, up to the next sample's (the last: up to the
     * process's end, its last record, at or after its final sample): at most its CPUs, and one
     * clock tick more on each, as the kernel counts CPU time in ticks, over the interval; 1 ms
     * more for the sample's stamp, taken beside its reading rather than at it. */
    double end = -1, tick_us = 1e6 / (double)sysconf(_SC_CLK_TCK);
    double cpus = (double)sysconf(_SC_NPROCESSORS_ONLN);
    for (size_t i = 0; i < ev->n; i++)
        if (tj_str(ev->v[i], "name") && !strncmp(tj_str(ev->v[i], "name"), "ended: ", 7))
            end = tj_num(ev->v[i], "ts");
    ASSERT(end > 0);
    size_t busy = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const tj *e = ev->v[i];
        if (!tj_str(e, "name") || strcmp(tj_str(e, "name"), "machine: cores busy"))
            continue;
        double to = end;
        for (size_t k = i + 1; k < ev->n && to == end; k++)
            if (tj_str(ev->v[k], "name") && !strcmp(tj_str(ev->v[k], "name"), "machine: cores busy"))
                to = tj_num(ev->v[k], "ts");
        double dt = to - tj_num(e, "ts"), most = cpus * (dt + tick_us + 1000) / dt;
        ASSERT(dt > 0);
        if (tj_num(e, "args.cores") > most) {
            fprintf(stderr, "machine: cores busy %.3f over %.1f ms from %.0f us, more than %.3f\n",
                    tj_num(e, "args.cores"), dt / 1000, tj_num(e, "ts"), most);
            ASSERT(tj_num(e, "args.cores") <= most);
        }
        busy++;
    }
    ASSERT_UINT(busy, >, 3);
    for (int w = 0; w < HT_WORKERS; w++) {
        char name[96];
        snprintf(name, sizeof name, "CPU of pid %lld, loader worker (cores)", rep[w].pid);
        double integral = 0, prev_ts = -1, prev_v = 0;
        size_t n = 0;
        for (size_t i = 0; i < ev->n; i++) {
            const tj *e = ev->v[i];
            if (!tj_str(e, "name") || strcmp(tj_str(e, "name"), name))
                continue;
            double ts = tj_num(e, "ts"); /* us; the track's events come in time order */
            if (prev_ts >= 0)
                integral += prev_v * (ts - prev_ts) * 1000;
            prev_ts = ts;
            prev_v = tj_num(e, "args.cores");
            n++;
        }
        ASSERT_UINT(n, >, 3);
        ASSERT_NEAR(prev_v, 0, 1e-9);
        if (!ht_cpu_ok((long long)(integral + 0.5), rep[w].cpu_ns))
            ASSERT_INT((long long)(integral + 0.5), ==, rep[w].cpu_ns);
    }
    tj_free(j);
    ctt_proc_free(&p);
    return 0;
}

/* The program's output and status as without the tracer (errno across the sampled stretch is
 * checked by the program itself). */
TEST_IMPL(host_sampling_keeps_the_program_as_it_was)
{
    char out[4096], prog[4096], data[4096], fake[4096], llp[4200];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *cmd[] = {(char *)tr_workload(prog, "loader_tree"), "3", "300", "3000000", "300", data, NULL};
    char *env[] = {llp, NULL};
    ctt_proc plain, traced;
    ASSERT_INT(ctt_run(&plain, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(plain, 0);
    ASSERT_INT(ht_run(&traced, out, "loader_tree", "10"), ==, 0);
    TR_ASSERT_EXIT(traced, 0);
    ASSERT_STR(traced.out, plain.out);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

TEST_IMPL(host_sampling_off_records_none)
{
    char out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    ctt_proc p;
    ASSERT_INT(ht_run(&p, out, "loader_tree", "0"), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_PROC, NULL) + tr_count(&t, CT_REC_PROC_SAMPLE, NULL) +
                tr_count(&t, CT_REC_HOST_SAMPLE, NULL), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_API, NULL), >, 0);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* The analyzer's figures from records written by hand, against the arithmetic done here: a
 * worker that began in the trace counts from 0 at its start, the traced process from its first
 * reading; counters flagged unknown are null, never 0; the machine's averages are over its first
 * to last reading. */
TEST_IMPL(host_summary_of_written_records)
{
    char path[4096], scratch[1 << 14];
    snprintf(path, sizeof path, "%s/hand.cutrace", ctt_tmpdir());
    ct_header h;
    ASSERT_INT(ct_header_collect(&h, "test", "", scratch, sizeof scratch), ==, 0);
    ct_writer *w;
    ct_writer_opts o = {0};
    ASSERT_INT(ct_writer_open(&w, path, &h, &o), ==, 0);
    static uint8_t buf[1 << 16];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    const uint64_t t = 1000000000000ull, ms = 1000000;
    ASSERT_INT(ct_enc_string(&e, t, 1, "main", 4), ==, 0);
    ASSERT_INT(ct_enc_string(&e, t, 2, "worker", 6), ==, 0);
    ASSERT_INT(ct_enc_string(&e, t, 3, "cuInit", 6), ==, 0);
    ct_rec_api api = {t - 1000, 3, 0, 1, 0, CT_API_DRIVER, 0};
    ASSERT_INT(ct_enc_api(&e, t, &api), ==, 0);
    ct_rec_proc self = {100, 1, 100, CT_PROC_SELF, t - 5000 * ms, 1, 0};
    ct_rec_proc worker = {101, 100, 100, CT_PROC_FORKED, t + 50 * ms, 2, 0};
    ASSERT_INT(ct_enc_proc(&e, t + 100 * ms, &self), ==, 0);
    ASSERT_INT(ct_enc_proc(&e, t + 100 * ms, &worker), ==, 0);
    for (int k = 0; k < 2; k++) {
        uint64_t ts = t + (k ? 300 : 100) * ms;
        ct_rec_proc_sample m = {.pid = 100, .user_ns = (k ? 1100 : 1000) * ms, .sys_ns = 500 * ms,
                                .state = 'R', .threads = 2, .running = 1, .blocked = (uint32_t)k,
                                .rchar = k ? 3000000 : 1000000, .majflt = k ? 9 : 4};
        ct_rec_proc_sample wk = {.pid = 101, .user_ns = (k ? 150 : 100) * ms,
                                 .sys_ns = 50 * ms, .state = k ? 'D' : 'R', .threads = 1,
                                 .blocked = (uint32_t)k, .flags = CT_PS_NO_IO | CT_PS_NO_SCHED};
        ct_rec_host_sample hs = {.cpus = 4, .busy_ns = (k ? 10600 : 10000) * ms,
                                 .iowait_ns = (k ? 1200 : 1000) * ms, .mem_total = 16ull << 30,
                                 .mem_available = (k ? 6ull : 8ull) << 30, .flags = CT_HS_NO_PSI,
                                 .job_cpus = 2, .job_busy_ns = (k ? 7300 : 7000) * ms,
                                 .job_iowait_ns = (k ? 520 : 500) * ms, .quota_mcpu = 1500,
                                 .cg_cpu_ns = (k ? 560 : 300) * ms,
                                 .throttled_ns = (k ? 150 : 100) * ms};
        ASSERT_INT(ct_enc_proc_sample(&e, ts, &m), ==, 0);
        ASSERT_INT(ct_enc_proc_sample(&e, ts, &wk), ==, 0);
        ASSERT_INT(ct_enc_host_sample(&e, ts, &hs), ==, 0);
    }
    ct_rec_end end = {CT_END_EXIT, 0, 12, 0};
    ASSERT_INT(ct_enc_end(&e, t + 301 * ms, &end), ==, 0);
    ct_chunk_info info = {.tid = 100};
    ASSERT_INT(ct_writer_chunk(w, &e, &info, 1), ==, 0);
    ASSERT_INT(ct_writer_close(w), ==, 0);

    tj *j = an_summary(path, NULL);
    ASSERT(j != NULL);
    const tj *tree = tj_path(j, "processes.0.process_tree.processes");
    ASSERT(tree != NULL);
    ASSERT_UINT(tree->n, ==, 2);
    const tj *m = tj_at(tree, 0), *wk = tj_at(tree, 1);
    ASSERT_STR(tj_str(m, "role"), "main");
    ASSERT_STR(tj_str(m, "name"), "main");
    ASSERT_INT((long long)tj_num(m, "cpu_ns"), ==, 100 * (long long)ms); /* from its first reading */
    ASSERT_INT((long long)tj_num(m, "span_ns"), ==, 200 * (long long)ms);
    ASSERT_NEAR(tj_num(m, "cpu_pct"), 50.0, 1e-9);
    ASSERT_INT((long long)tj_num(m, "rchar_bytes"), ==, 2000000);
    ASSERT_NEAR(tj_num(m, "read_gbps"), 0.01, 1e-12); /* 2 MB in 0.2 s */
    ASSERT_INT((long long)tj_num(m, "major_faults"), ==, 5);
    ASSERT_INT((long long)tj_num(m, "iowait_samples"), ==, 1);
    ASSERT_STR(tj_str(wk, "role"), "loader worker");
    ASSERT_INT((long long)tj_num(wk, "cpu_ns"), ==, 200 * (long long)ms); /* from 0 at its start */
    ASSERT_INT((long long)tj_num(wk, "span_ns"), ==, 250 * (long long)ms);
    ASSERT_INT(tj_path(wk, "rchar_bytes")->type, ==, TJ_NULL);
    ASSERT_INT(tj_path(wk, "read_gbps")->type, ==, TJ_NULL);
    ASSERT_INT(tj_path(wk, "runqueue_wait_ns")->type, ==, TJ_NULL);
    ASSERT_INT(tj_path(m, "runqueue_wait_ns")->type, ==, TJ_NUM); /* read, and 0 */
    const tj *mc = tj_path(j, "processes.0.process_tree.machine");
    ASSERT(mc != NULL);
    ASSERT_NEAR(tj_num(mc, "busy_cores"), 3.0, 1e-9);
    ASSERT_NEAR(tj_num(mc, "iowait_cores"), 1.0, 1e-9);
    ASSERT_INT((long long)tj_num(mc, "mem_available_min_bytes"), ==, 6ll << 30);
    ASSERT_INT(tj_path(mc, "pressure_cpu_some")->type, ==, TJ_NULL);
    /* the process's 2 CPUs and its cgroup's limit of 1.5, over the same 0.2 s */
    ASSERT_INT((long long)tj_num(mc, "job_cpus"), ==, 2);
    ASSERT_NEAR(tj_num(mc, "job_busy_cores"), 1.5, 1e-9);
    ASSERT_NEAR(tj_num(mc, "job_iowait_cores"), 0.1, 1e-9);
    ASSERT_NEAR(tj_num(mc, "cpu_limit_cores"), 1.5, 1e-9);
    ASSERT_NEAR(tj_num(mc, "cgroup_cpu_cores"), 1.3, 1e-9);
    ASSERT_NEAR(tj_num(mc, "throttled_share"), 0.25, 1e-9);
    tj_free(j);
    return 0;
}
