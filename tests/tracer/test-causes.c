/* Why the loader starved the GPU (issue 19, part 4): loader_tree's training loop (--steps), in C and
 * in Python (py_loader_tree), run
 * under cutrace on the simulated CUDA in the four cases, each built with wide margins so that a
 * loaded 2-core machine does not blur them; `dataloader-starvation` must name the case's cause
 * and no other, with figures that agree with what the workload reports of itself. The same for
 * a loop with no loader workers (the main process loads: PyTorch's num_workers=0), and for
 * `gpu-gaps`: a loop whose main process, between steps that copy no batch (--memset-step),
 * computes, reads a slow file, or waits for a core that processes outside the tree hold. */
#define _GNU_SOURCE
#include "tr.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sf.h"
#include "tjson.h"
#include "tr_confine.h"

/* steps of a case; the CPU-bound one has twice as many: its 4 workers sharing 2 cores deliver
 * their batches less evenly, and the diagnosis needs most gaps alike */
#define CZ_STEPS 12

#define STARVE "dataloader-starvation"

/* The summary's diagnosis id, or NULL. */
static const tj *cz_diag(const tj *s, const char *id)
{
    const tj *ds = tj_get(s, "diagnoses");
    for (size_t i = 0; ds && i < ds->n; i++)
        if (tj_str(ds->v[i], "id") && !strcmp(tj_str(ds->v[i], "id"), id))
            return ds->v[i];
    return NULL;
}

/* The cause of the one diagnosis id, after checking it names exactly want. */
static const tj *cz_cause(const tj *s, const char *id, const char *want)
{
    const tj *d = cz_diag(s, id);
    const tj *c = d ? tj_get(d, "cause") : NULL, *v = c ? tj_get(c, "causes") : NULL;
    if (!v || v->n != 1 || !v->v[0]->str || strcmp(v->v[0]->str, want)) {
        fprintf(stderr, "expected %s with cause [%s] alone; found %s\n", id, want,
                !d ? "no such diagnosis" : !v ? "no cause" : "other causes:");
        for (size_t i = 0; v && i < v->n; i++)
            fprintf(stderr, "  %s\n", v->v[i]->str ? v->v[i]->str : "?");
        if (d)
            fprintf(stderr, "detail:\n%s\n", tj_str(d, "detail"));
        return NULL;
    }
    /* the samples cover nearly all the gap time (samples every 50 ms, gaps ~80 ms) */
    if (tj_num(c, "covered_gap_ns") < 0.8 * tj_num(c, "gap_ns")) {
        fprintf(stderr, "covered %.0f of %.0f ns\n", tj_num(c, "covered_gap_ns"), tj_num(c, "gap_ns"));
        return NULL;
    }
    return c;
}

/* Runs prog_name with args (after --steps steps) sampling every 50 ms (want NULL: not sampling;
 * "": sampling, the cause left to the caller):
 * the summary's JSON (caller frees), the cause of its diagnosis id through *cause (checked by
 * cz_cause against want), the
 * program's stderr (malloc'd, caller frees) through *err. NULL after failing. */
static tj *cz_run_in(const char *prog_name, int steps, char *const args[], const char *id,
                     const char *want, const tj **cause, char **err)
{
    char out[4096], prog[4096], *cmd[16], nsteps[16];
    snprintf(nsteps, sizeof nsteps, "%d", steps);
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    int n = 0;
    cmd[n++] = (char *)tr_workload(prog, prog_name);
    cmd[n++] = "--steps";
    cmd[n++] = nsteps;
    for (int i = 0; args[i] && n < 15; i++)
        cmd[n++] = args[i];
    cmd[n] = NULL;
    char *env[] = {want ? "CUTRACE_HOST_SAMPLE_MS=50" : "CUTRACE_HOST_SAMPLE_MS=0", NULL};
    ctt_proc p;
    if (tr_run(&p, out, NULL, cmd, env, 120) != 0 || !p.exited || p.code != 0) {
        fprintf(stderr, "%s failed: stderr:\n%s\n", prog_name, p.err);
        return NULL;
    }
    *err = strdup(p.err);
    ctt_proc_free(&p);
    char *sargs[] = {"summary", "--json", out, NULL};
    char *text = tr_analyze(sargs), e[256];
    if (!text)
        return NULL;
    tj *j = tj_parse(text, e, sizeof e);
    free(text);
    if (j && want && *want && !(*cause = cz_cause(j, id, want))) {
        tj_free(j);
        return NULL;
    }
    return j;
}

/* cz_run_in in a cgroup favoured over the rest of the machine (tr_confine.h), where one can be
 * made: each case is the tree's own use of the cores (workers sharing them, the main process
 * computing, a core left free), which other work on a busy machine would otherwise change into
 * another case, rightly diagnosed as such (beside two CPU-bound processes: cpu-bound, the cores
 * held by processes outside the tree). The cases about such processes, or about a cgroup of their
 * own, call cz_run_in. */
static tj *cz_run(const char *prog_name, int steps, char *const args[], const char *id,
                  const char *want, const tj **cause, char **err)
{
    tr_cgroup g;
    tr_cgroup_favour(&g);
    tj *s = cz_run_in(prog_name, steps, args, id, want, cause, err);
    tr_cgroup_leave(&g);
    return s;
}

/* The workload's data file, in the test's directory (a static buffer). */
static char *cz_data(void)
{
    static char data[4096];
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    return data;
}

/* The workers' CPU time and bytes read, summed from their reports; how many reported. */
static int cz_workers(const char *err, double *cpu_ns, double *bytes)
{
    int n = 0;
    *cpu_ns = *bytes = 0;
    for (const char *s = strstr(err, "worker pid="); s; s = strstr(s + 1, "worker pid=")) {
        char line[200];
        size_t len = strcspn(s, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), s);
        *cpu_ns += (double)tr_value(line, "cpu_ns");
        *bytes += (double)tr_value(line, "read");
        n++;
    }
    return n;
}

/* add-workers' figures against the arithmetic from the loading's own CPU per batch, cpb, as the
 * workload reports it, and the loop's step between batches, checked against the workload: a
 * copy of 1 MiB and nothing else, under 2 ms, and beside processes holding the cores (hogged)
 * its waits for a core as well, no more than the main process's samples show it waiting per
 * step. N = ceil(cpb / step) workers, at most the CPUs, deliver a batch every max(step, cpb / N,
 * (cpb + step) / CPUs) (the workers share the cores with the main thread's step) instead of
 * a step now: every cpb at least (one worker: the step within it; its read and its waits for a
 * core add to it) and the gap and the step at most, or every gap + step (the main process
 * loads, then steps: main_loads; its gap at least its CPU), each gap shrinking by the difference
 * (at most its average length); N through *want. */
static int cz_add_workers(const tj *c, double cpb, int main_loads, int hogged, int *want_out)
{
    double step = tj_num(c, "loop_step_ns"), cpus = tj_num(c, "cpus");
    double gaps = tj_num(c, "gaps"), avg = tj_num(c, "gap_ns") / gaps;
    double most = 2e6 + (hogged ? tj_num(c, "main_runqueue_wait_cores") * (avg + step) : 0);
    if (!(step > 0 && step < most)) {
        ctt_fail_at(__FILE__, __LINE__, "expected the loop's step under %.0f ns, found %.0f",
                    most, step);
        return 1;
    }
    if (main_loads)
        ASSERT(avg >= 0.9 * cpb);
    double need = ceil(cpb / step);
    int want = *want_out = (int)(need < cpus ? need : cpus);
    ASSERT_INT((int)tj_num(c, "workers_recommended"), ==, want);
    double then = fmax(fmax(step, cpb / want), (cpb + step) / cpus);
    double lo = (main_loads ? avg + step : cpb) - then, hi = avg + step - then;
    lo = gaps * (lo < avg ? lo : avg);
    hi = gaps * (hi < avg ? hi : avg);
    double got = tj_num(c, "estimated_saving_ns");
    if (!(got >= 0.9 * lo && got <= 1.1 * hi)) {
        ctt_fail_at(__FILE__, __LINE__, "expected a saving of %.0f to %.0f ns (10%% either way), "
                    "found %.0f", lo, hi, got);
        return 1;
    }
    return 0;
}

/* Four workers spending 150 ms of CPU per batch on 2 cores: every core busy, the workers
 * waiting for one; the CPU per batch the diagnosis states is the workers' own over the steps.
 * The fix is cheaper batches, not more workers. (Unfavoured, with other work taking most of the
 * cores, the workers got unequal shares and their batches came in bunches, two at once then a
 * long wait.) Over two epochs (py_loader_tree --epochs 2), four workers of each, never more
 * than four alive: four are counted, not the eight of the run (counted eight, they could not be
 * busy on two cores and the loading was not called CPU-bound). */
static int cz_cpu_bound(const char *prog, int epochs)
{
    char *err = NULL, *data = cz_data(), n[16];
    snprintf(n, sizeof n, "%d", epochs);
    char *args[] = {"--epochs", n, "4", "150", "0", "150", data, NULL};
    const tj *c = NULL;
    int steps = 2 * CZ_STEPS / epochs;
    tj *s = cz_run(prog, steps, epochs > 1 ? args : args + 2, STARVE, "cpu-bound", &c, &err);
    ASSERT(s != NULL);
    double cpu, bytes;
    ASSERT_INT(cz_workers(err, &cpu, &bytes), ==, 4 * epochs);
    ASSERT_NEAR(tj_num(c, "worker_cpu_per_batch_ns"), cpu / (2 * CZ_STEPS), 0.05 * cpu / (2 * CZ_STEPS));
    ASSERT(tj_num(c, "worker_runqueue_wait_cores") >= 0.2 * tj_num(c, "worker_cpu_cores"));
    ASSERT_UINT((uint64_t)tj_num(c, "workers"), ==, 4);
    ASSERT_CONTAINS(tj_str(cz_diag(s, STARVE), "fix"), "will not help");
    tj_free(s);
    free(err);
    return 0;
}

/* One worker spending 80 ms of CPU per batch, the other core free of the tree: add workers, as
 * many as the arithmetic from the worker's reported cost and the GPU step gives, bounded by the
 * 2 cores (the main process waits: it uses none). */
static int cz_few_workers(const char *prog)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"1", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, STARVE, "add-workers", &c, &err);
    ASSERT(s != NULL);
    double cpu, bytes;
    ASSERT_INT(cz_workers(err, &cpu, &bytes), ==, 1);
    double cpb = cpu / CZ_STEPS;
    ASSERT_NEAR(tj_num(c, "worker_cpu_per_batch_ns"), cpb, 0.05 * cpb);
    ASSERT_NEAR(cpb, 80e6, 8e6);
    const tj *d = cz_diag(s, STARVE);
    ASSERT_UINT((uint64_t)tj_num(c, "gaps"), ==, (uint64_t)tj_num(d, "evidence.gaps"));
    /* one worker delivers a batch every cpb: a step every cpb, the step's copy within it */
    int n;
    ASSERT_INT(cz_add_workers(c, cpb, 0, 0, &n), ==, 0);
    ASSERT_INT(n, >=, 2);
    tj_free(s);
    free(err);
    return 0;
}

/* One worker reading 200 KB per batch through slowfs at 2 MB/s, no CPU work: storage-bound, at
 * the rate slowfs serves. */
static int cz_storage(const char *prog)
{
    const uint64_t bytes = 200000, rate = 2000000;
    sf_mount m;
    ASSERT_INT(sf_start(&m, bytes * CZ_STEPS, rate), ==, 0);
    char *err = NULL;
    char *args[] = {"--existing", "1", "0", "200000", "150", m.file, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, STARVE, "storage-bound", &c, &err);
    ASSERT_INT(sf_stop(&m), ==, 0);
    ASSERT(s != NULL);
    double cpu, got;
    ASSERT_INT(cz_workers(err, &cpu, &got), ==, 1);
    ASSERT_NEAR(got, (double)(bytes * CZ_STEPS), 0.5);
    /* reading through the page cache, the worker reads ahead of its batch now and then: the
     * rate during the gaps is the storage's within a wide margin, never above it by much */
    double bps = tj_num(c, "worker_read_bps");
    ASSERT(bps > 0.5 * (double)rate && bps < 1.25 * (double)rate);
    tj_free(s);
    free(err);
    return 0;
}

/* Two idle workers (batches cost nothing) and a main process spinning 80 ms between batches:
 * main-busy; its CPU during the gaps is the gaps' length (the gaps are its spinning). */
static int cz_main_busy(const char *prog)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"--main-ms", "80", "2", "0", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, STARVE, "main-busy", &c, &err);
    ASSERT(s != NULL);
    const char *m = strstr(err, "main cpu_ns=");
    ASSERT(m != NULL);
    ASSERT_NEAR((double)tr_value(m, "cpu_ns") / CZ_STEPS, 80e6, 8e6);
    ASSERT(tj_num(c, "main_cpu_cores") > 0.7 && tj_num(c, "main_cpu_cores") < 1.05);
    ASSERT(tj_num(c, "main_compute_share") > 0.8);
    tj_free(s);
    free(err);
    return 0;
}

/* The main process's report: its CPU time over the steps and the bytes it read itself. */
static int cz_main(const char *err, double *cpu_ns, double *bytes)
{
    const char *m = strstr(err, "main cpu_ns=");
    if (!m)
        return -1;
    *cpu_ns = (double)tr_value(m, "cpu_ns");
    *bytes = (double)tr_value(m, "read");
    return 0;
}

/* ---- no loader workers (num_workers=0): the main process loads each batch itself ---- */

/* The processes spinning outside the traced tree, 4 per CPU the tests may use (at most max). */
static int cz_hogs(pid_t *pids, int max)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? 4 * CPU_COUNT(&set) : 8;
    n = n > max ? max : n;
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (volatile uint64_t x = 1;; x = x * 6364136223846793005ull + 1)
                ;
        }
        if (pids[i] < 0)
            return i;
    }
    return n;
}

static void cz_hogs_stop(pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
}

/* It spends 80 ms of CPU per batch: add workers, as many as the main process's own cost per
 * batch and the GPU step give (bounded by the CPUs: the main process then waits), saving what
 * that arithmetic says. Hogged: a process spinning on each CPU outside the tree, every core busy
 * and the main process short of one: still add workers, which take the loading off the GPU's
 * critical path, not cpu-bound (imagenet -j 0 so called was 3.5 times faster with -j 2). */
static int cz_no_workers_cpu(const char *prog, int hogged)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"0", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    pid_t hogs[64];
    cpu_set_t set;
    int nh = hogged ? cz_hogs(hogs, sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 2) : 0;
    tj *s = (hogged ? cz_run_in : cz_run)(prog, CZ_STEPS, args, STARVE, "add-workers", &c, &err);
    cz_hogs_stop(hogs, nh);
    ASSERT(s != NULL);
    if (hogged) /* every core busy, the main process short of one: still workers, not cpu-bound */
        ASSERT(tj_num(c, "main_runqueue_wait_cores") >= 0.2 * tj_num(c, "main_cpu_cores"));
    double cpu, bytes;
    ASSERT_INT(cz_main(err, &cpu, &bytes), ==, 0);
    double cpb = cpu / CZ_STEPS;
    ASSERT_NEAR(cpb, 80e6, 8e6);
    ASSERT_STR(tj_str(c, "told_by"), "main");
    ASSERT_UINT((uint64_t)tj_num(c, "workers"), ==, 0);
    ASSERT_NEAR(tj_num(c, "main_cpu_per_gap_ns"), cpb, 0.1 * cpb);
    /* the main process loads a batch, then steps */
    int n;
    ASSERT_INT(cz_add_workers(c, cpb, 1, hogged, &n), ==, 0);
    ASSERT_INT(n, >=, 2);
    ASSERT(strstr(tj_str(cz_diag(s, STARVE), "detail"), "the loading ran in the main process") != NULL);
    tj_free(s);
    free(err);
    return 0;
}

/* It reads 200 KB per batch through slowfs at 2 MB/s: storage-bound, told by the main process's
 * own I/O wait, at the rate slowfs serves. */
static int cz_no_workers_storage(const char *prog, const char *id, char *step_opt)
{
    const uint64_t bytes = 200000, rate = 2000000;
    sf_mount m;
    ASSERT_INT(sf_start(&m, bytes * CZ_STEPS, rate), ==, 0);
    char *err = NULL;
    char *args[] = {"--existing", "0", "0", "200000", "150", m.file, NULL, NULL};
    if (step_opt) {
        memmove(args + 1, args, 6 * sizeof *args);
        args[0] = step_opt;
    }
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, id, "storage-bound", &c, &err);
    ASSERT_INT(sf_stop(&m), ==, 0);
    ASSERT(s != NULL);
    double cpu, got;
    ASSERT_INT(cz_main(err, &cpu, &got), ==, 0);
    ASSERT_NEAR(got, (double)(bytes * CZ_STEPS), 0.5);
    ASSERT_STR(tj_str(c, "told_by"), "main");
    ASSERT(tj_num(c, "main_iowait_share") >= 0.3);
    double bps = tj_num(c, "main_read_bps");
    ASSERT(bps > 0.5 * (double)rate && bps < 1.25 * (double)rate);
    tj_free(s);
    free(err);
    return 0;
}

/* ---- gpu-gaps: the main process's own work between steps that copy no batch ---- */

/* It computes 80 ms between steps: main-busy; the CPU the diagnosis finds in the gaps is the
 * main process's own over the steps. */
static int cz_gaps_main_busy(const char *prog)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"--memset-step", "0", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, "gpu-gaps", "main-busy", &c, &err);
    ASSERT(s != NULL);
    ASSERT(cz_diag(s, STARVE) == NULL);
    double cpu, bytes;
    ASSERT_INT(cz_main(err, &cpu, &bytes), ==, 0);
    ASSERT_NEAR(cpu / CZ_STEPS, 80e6, 8e6);
    /* the gaps hold its spinning (and the hold's short sleeps, computing nothing) */
    ASSERT_NEAR(tj_num(c, "main_cpu_per_gap_ns") * tj_num(c, "gaps"), cpu, 0.05 * cpu);
    ASSERT(tj_num(c, "main_compute_share") > 0.8);
    ASSERT(strstr(tj_str(cz_diag(s, "gpu-gaps"), "detail"), "host work between its GPU launches") != NULL);
    tj_free(s);
    free(err);
    return 0;
}


/* It computes 30 ms between steps while processes outside the tree keep every core busy, 4 per
 * core: cpu-bound, the main process waiting for a core longer than it runs (a fair share of a
 * core among 5 is a fifth of it); not main-busy: its computing is the lesser part. */
static int cz_gaps_cpu_bound(const char *prog)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"--memset-step", "0", "30", "0", "150", data, NULL};
    pid_t hogs[64];
    int nh = cz_hogs(hogs, 64);
    const tj *c = NULL;
    tj *s = cz_run_in(prog, CZ_STEPS, args, "gpu-gaps", "cpu-bound", &c, &err);
    cz_hogs_stop(hogs, nh);
    ASSERT(s != NULL);
    ASSERT(cz_diag(s, STARVE) == NULL);
    double cpu, bytes;
    ASSERT_INT(cz_main(err, &cpu, &bytes), ==, 0);
    ASSERT_NEAR(cpu / CZ_STEPS, 30e6, 6e6);
    ASSERT(tj_num(c, "busy_cores") > tj_num(c, "cpus") - 0.3);
    ASSERT(tj_num(c, "outside_tree_cores") > 0.5 * tj_num(c, "cpus"));
    ASSERT(tj_num(c, "main_runqueue_wait_cores") > tj_num(c, "main_cpu_cores"));
    /* its computing in the gaps is its own over the steps, however long it waited */
    ASSERT_NEAR(tj_num(c, "main_cpu_per_gap_ns") * tj_num(c, "gaps"), cpu, 0.1 * cpu);
    ASSERT(strstr(tj_str(cz_diag(s, "gpu-gaps"), "detail"), "the main process waited") != NULL);
    tj_free(s);
    free(err);
    return 0;
}

/* Four workers spending 150 ms of CPU per batch on 2 cores, and the main thread spinning 30 ms
 * after each batch's copy (loader_tree --after-ms) before queuing its step: the loading
 * CPU-bound, and the gaps between the copy and the step cpu-bound too, the main thread waiting
 * for the cores the workers hold. That wait is the loading's (cheaper batches give it back):
 * dataloader-starvation holds it, as the main thread's own run-queue wait in those spins
 * (schedstat) by the workers' share of the cores others used (beside CPU hogs: not all of
 * it), and gpu-gaps the rest. */
static int cz_gaps_owed_to_loading(const char *prog)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"--after-ms", "30", "4", "150", "0", "150", data, NULL};
    const tj *c = NULL;
    /* beside processes outside the tree, which hold a share of the cores the main thread
     * waits for: that share is not the loading's */
    pid_t hogs[64];
    int nh = cz_hogs(hogs, 64);
    tj *s = cz_run_in(prog, CZ_STEPS, args, STARVE, "cpu-bound", &c, &err);
    cz_hogs_stop(hogs, nh);
    ASSERT(s != NULL);
    const char *line = strstr(err, "main after_ns=");
    ASSERT(line);
    double after_ns = 0, waited = 0;
    ASSERT_INT(sscanf(line, "main after_ns=%lf after_wait_ns=%lf", &after_ns, &waited), ==, 2);
    const tj *g = cz_diag(s, "gpu-gaps"), *ld = cz_diag(s, STARVE);
    ASSERT(g && ld);
    const tj *gc = tj_get(g, "cause");
    ASSERT(cz_cause(s, "gpu-gaps", "cpu-bound"));
    double others = tj_num(gc, "busy_cores") - tj_num(gc, "main_cpu_cores");
    double share = others > tj_num(gc, "worker_cpu_cores") ? tj_num(gc, "worker_cpu_cores") / others : 1;
    double moved = tj_num(ld, "evidence.main_wait_for_workers_ns");
    printf("main thread waited %.3f s of its %.3f s of spins; workers' share %.2f; moved %.3f s\n",
           waited / 1e9, after_ns / 1e9, share, moved / 1e9);
    ASSERT_NEAR(moved, waited * share, 0.25 * waited * share);
    ASSERT_NEAR(tj_num(g, "estimated_saving_ns"), tj_num(g, "evidence.gap_ns") - moved, 1e6);
    ASSERT(tj_num(ld, "estimated_saving_ns") <= tj_num(ld, "evidence.gap_ns") + moved);
    ASSERT_CONTAINS(tj_str(ld, "detail"), "waited");
    tj_free(s);
    free(err);
    return 0;
}

/* Its one worker spends 80 ms of CPU per batch while the main process waits on the batch pipe
 * between steps that copy no batch: gpu-gaps, and none of the main process's causes held (not
 * computing, not short of a core, not in I/O wait): the detail says it waited for something
 * else. */
static int cz_gaps_none(const char *prog)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"--memset-step", "1", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, "gpu-gaps", "", &c, &err);
    ASSERT(s != NULL);
    const tj *d = cz_diag(s, "gpu-gaps");
    ASSERT(d != NULL);
    c = tj_get(d, "cause");
    ASSERT(c != NULL);
    ASSERT_UINT((uint64_t)tj_get(c, "causes")->n, ==, 0);
    ASSERT(tj_num(c, "covered_gap_ns") >= 0.8 * tj_num(c, "gap_ns"));
    ASSERT(tj_num(c, "main_compute_share") < 0.2);
    ASSERT(strstr(tj_str(d, "detail"), "it waited for something else") != NULL);
    tj_free(s);
    free(err);
    return 0;
}

/* The few-workers case (one worker, 80 ms of CPU a batch) confined as a batch job or a container
 * is: the cores it may use are full, so more workers would not help (cpu-bound), where on the
 * machine's free cores it gets add-workers (cz_few_workers). On one CPU of its affinity the one
 * worker fills the process's only core (waiting for none, when nothing else runs there); in a
 * cgroup limited to half a CPU it waits for the limit, its CPUs idle while it is throttled. */
static int cz_confined(int in_cgroup)
{
    cpu_set_t mine, one;
    tr_cgroup g;
    if (in_cgroup) {
        tr_cgroup_enter(&g);
    } else {
        if (sched_getaffinity(0, sizeof mine, &mine) != 0 || CPU_COUNT(&mine) < 2)
            ctt_skip("needs two CPUs in this process's affinity mask");
        CPU_ZERO(&one);
        for (int k = 0; k < CPU_SETSIZE; k++)
            if (CPU_ISSET(k, &mine)) {
                CPU_SET(k, &one);
                break;
            }
        ASSERT_INT(sched_setaffinity(0, sizeof one, &one), ==, 0);
    }
    char *err = NULL, *data = cz_data();
    char *args[] = {"1", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = (in_cgroup ? cz_run_in : cz_run)("loader_tree", CZ_STEPS, args, STARVE, "cpu-bound",
                                              &c, &err);
    if (in_cgroup)
        tr_cgroup_leave(&g);
    else
        sched_setaffinity(0, sizeof mine, &mine);
    ASSERT(s != NULL);
    double cpu, bytes;
    ASSERT_INT(cz_workers(err, &cpu, &bytes), ==, 1);
    ASSERT_NEAR(tj_num(c, "worker_cpu_per_batch_ns"), cpu / CZ_STEPS, 0.05 * cpu / CZ_STEPS);
    ASSERT(tj_num(c, "free_cores") < 0.3);
    if (in_cgroup) {
        ASSERT_NEAR(tj_num(c, "cpu_limit_cores"), 0.5, 1e-9);
        ASSERT(tj_num(c, "throttled_share") > 0.2);
        ASSERT(tj_num(c, "worker_cpu_cores") < 0.5 + 0.05);
    } else {
        ASSERT_INT((long long)tj_num(c, "cpus"), ==, 1);
        ASSERT_INT((long long)tj_num(c, "machine_cpus"), >=, 2);
    }
    tj_free(s);
    free(err);
    return 0;
}

TEST_IMPL(causes_cpu_bound) { return cz_cpu_bound("loader_tree", 1); }
TEST_IMPL(causes_few_workers) { return cz_few_workers("loader_tree"); }
TEST_IMPL(causes_cpu_bound_on_one_cpu_of_its_affinity) { return cz_confined(0); }
TEST_IMPL(causes_cpu_bound_at_its_cgroup_cpu_limit) { return cz_confined(1); }
TEST_IMPL(causes_storage_bound) { return cz_storage("loader_tree"); }
TEST_IMPL(causes_main_busy) { return cz_main_busy("loader_tree"); }
/* Without host samples the diagnosis is as before, its detail saying the cause cannot be told,
 * and has no cause object. */
TEST_IMPL(causes_unknown_without_samples)
{
    char *err = NULL, *data = cz_data();
    char *args[] = {"1", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run("loader_tree", CZ_STEPS, args, STARVE, NULL, &c, &err);
    ASSERT(s != NULL);
    const tj *d = cz_diag(s, STARVE);
    ASSERT(d != NULL);
    ASSERT(tj_get(d, "cause") == NULL);
    ASSERT(strstr(tj_str(d, "detail"), "cause: cannot be told without host samples") != NULL);
    ASSERT(strstr(tj_str(d, "message"), "preparing batches one step ahead") != NULL);
    tj_free(s);
    free(err);
    return 0;
}

/* The same in Python: py_loader_tree's workers are a fork-context multiprocessing pool's
 * processes, as PyTorch's DataLoader starts them. */
TEST_IMPL(causes_python_cpu_bound) { return cz_cpu_bound("py_loader_tree", 1); }
TEST_IMPL(causes_python_cpu_bound_over_two_epochs) { return cz_cpu_bound("py_loader_tree", 2); }
TEST_IMPL(causes_python_few_workers) { return cz_few_workers("py_loader_tree"); }
TEST_IMPL(causes_python_storage_bound) { return cz_storage("py_loader_tree"); }
TEST_IMPL(causes_python_main_busy) { return cz_main_busy("py_loader_tree"); }

TEST_IMPL(causes_no_workers_cpu) { return cz_no_workers_cpu("loader_tree", 0); }
TEST_IMPL(causes_no_workers_cpu_all_cores_busy) { return cz_no_workers_cpu("loader_tree", 1); }
TEST_IMPL(causes_no_workers_storage) { return cz_no_workers_storage("loader_tree", STARVE, NULL); }
TEST_IMPL(causes_gaps_main_busy) { return cz_gaps_main_busy("loader_tree"); }
TEST_IMPL(causes_gaps_storage) { return cz_no_workers_storage("loader_tree", "gpu-gaps", "--memset-step"); }
TEST_IMPL(causes_gaps_cpu_bound) { return cz_gaps_cpu_bound("loader_tree"); }
TEST_IMPL(causes_python_no_workers_cpu) { return cz_no_workers_cpu("py_loader_tree", 0); }
TEST_IMPL(causes_python_no_workers_storage) { return cz_no_workers_storage("py_loader_tree", STARVE, NULL); }
TEST_IMPL(causes_python_gaps_main_busy) { return cz_gaps_main_busy("py_loader_tree"); }
TEST_IMPL(causes_python_gaps_storage)
{
    return cz_no_workers_storage("py_loader_tree", "gpu-gaps", "--memset-step");
}
TEST_IMPL(causes_python_gaps_cpu_bound) { return cz_gaps_cpu_bound("py_loader_tree"); }
TEST_IMPL(causes_gaps_none_while_waiting) { return cz_gaps_none("loader_tree"); }
TEST_IMPL(causes_gaps_owed_to_loading) { return cz_gaps_owed_to_loading("loader_tree"); }
TEST_IMPL(causes_python_gaps_none_while_waiting) { return cz_gaps_none("py_loader_tree"); }
