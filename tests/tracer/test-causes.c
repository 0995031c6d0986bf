/* Why the loader starved the GPU (issue 19, part 4): loader_tree's training loop (--steps), in C and
 * in Python (py_loader_tree), run
 * under cutrace on the simulated CUDA in the four cases, each built with wide margins so that a
 * loaded 2-core machine does not blur them; `dataloader-starvation` must name the case's cause
 * and no other, with figures that agree with what the workload reports of itself. */
#include "tr.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "sf.h"
#include "tjson.h"

/* steps of a case; the CPU-bound one has twice as many: its 4 workers sharing 2 cores deliver
 * their batches less evenly, and the diagnosis needs most gaps alike */
#define CZ_STEPS 12

/* The summary's dataloader-starvation diagnosis, or NULL. */
static const tj *cz_starvation(const tj *s)
{
    const tj *ds = tj_get(s, "diagnoses");
    for (size_t i = 0; ds && i < ds->n; i++)
        if (tj_str(ds->v[i], "id") && !strcmp(tj_str(ds->v[i], "id"), "dataloader-starvation"))
            return ds->v[i];
    return NULL;
}

/* The cause of the one dataloader-starvation diagnosis, after checking it names exactly want. */
static const tj *cz_cause(const tj *s, const char *want)
{
    const tj *d = cz_starvation(s);
    const tj *c = d ? tj_get(d, "cause") : NULL, *v = c ? tj_get(c, "causes") : NULL;
    if (!v || v->n != 1 || !v->v[0]->str || strcmp(v->v[0]->str, want)) {
        fprintf(stderr, "expected dataloader-starvation with cause [%s] alone; found %s\n", want,
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

/* Runs prog_name with args (after --steps steps) sampling every 50 ms (want NULL: not sampling):
 * the summary's JSON (caller frees), its starvation's cause through *cause (checked by cz_cause
 * against want), the
 * program's stderr (malloc'd, caller frees) through *err. NULL after failing. */
static tj *cz_run(const char *prog_name, int steps, char *const args[], const char *want,
                  const tj **cause, char **err)
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
    if (j && want && !(*cause = cz_cause(j, want))) {
        tj_free(j);
        return NULL;
    }
    return j;
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

/* Four workers spending 150 ms of CPU per batch on 2 cores: every core busy, the workers
 * waiting for one; the CPU per batch the diagnosis states is the workers' own over the steps. */
static int cz_cpu_bound(const char *prog)
{
    char data[4096], *err = NULL;
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    char *args[] = {"4", "150", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, 2 * CZ_STEPS, args, "cpu-bound", &c, &err);
    ASSERT(s != NULL);
    double cpu, bytes;
    ASSERT_INT(cz_workers(err, &cpu, &bytes), ==, 4);
    ASSERT_NEAR(tj_num(c, "worker_cpu_per_batch_ns"), cpu / (2 * CZ_STEPS), 0.05 * cpu / (2 * CZ_STEPS));
    ASSERT(tj_num(c, "worker_runqueue_wait_cores") >= 0.2 * tj_num(c, "worker_cpu_cores"));
    ASSERT_UINT((uint64_t)tj_num(c, "workers"), ==, 4);
    tj_free(s);
    free(err);
    return 0;
}

/* One worker spending 80 ms of CPU per batch, the other core free of the tree: add workers, as
 * many as the arithmetic from the worker's reported cost and the GPU step gives, bounded by the
 * 2 cores (the main process waits: it uses none). */
static int cz_few_workers(const char *prog)
{
    char data[4096], *err = NULL;
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    char *args[] = {"1", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, "add-workers", &c, &err);
    ASSERT(s != NULL);
    double cpu, bytes;
    ASSERT_INT(cz_workers(err, &cpu, &bytes), ==, 1);
    double cpb = cpu / CZ_STEPS, step = tj_num(c, "gpu_step_ns");
    ASSERT_NEAR(tj_num(c, "worker_cpu_per_batch_ns"), cpb, 0.05 * cpb);
    ASSERT_NEAR(cpb, 80e6, 8e6);
    double need = ceil(cpb / step), cpus = tj_num(c, "cpus");
    int want = (int)(need < cpus ? need : cpus);
    ASSERT_INT((int)tj_num(c, "workers_recommended"), ==, want);
    ASSERT_INT(want, >=, 2);
    /* the saving, from the worker's reported cost: a batch every cpb / want instead of every
     * cpb, each gap shrinking by the difference (at most its average length) */
    const tj *d = cz_starvation(s);
    double gaps = tj_num(d, "evidence.gaps") + tj_num(d, "evidence.set_aside_gaps");
    double per = cpb - fmax(step, cpb / want), avg = tj_num(c, "gap_ns") / gaps;
    double saving = gaps * (per < avg ? per : avg);
    ASSERT_NEAR(tj_num(c, "estimated_saving_ns"), saving, 0.1 * saving);
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
    tj *s = cz_run(prog, CZ_STEPS, args, "storage-bound", &c, &err);
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
    char data[4096], *err = NULL;
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    char *args[] = {"--main-ms", "80", "2", "0", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run(prog, CZ_STEPS, args, "main-busy", &c, &err);
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

TEST_IMPL(causes_cpu_bound) { return cz_cpu_bound("loader_tree"); }
TEST_IMPL(causes_few_workers) { return cz_few_workers("loader_tree"); }
TEST_IMPL(causes_storage_bound) { return cz_storage("loader_tree"); }
TEST_IMPL(causes_main_busy) { return cz_main_busy("loader_tree"); }
/* Without host samples the diagnosis is as before, its detail saying the cause cannot be told,
 * and has no cause object. */
TEST_IMPL(causes_unknown_without_samples)
{
    char data[4096], *err = NULL;
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    char *args[] = {"1", "80", "0", "150", data, NULL};
    const tj *c = NULL;
    tj *s = cz_run("loader_tree", CZ_STEPS, args, NULL, &c, &err);
    ASSERT(s != NULL);
    const tj *d = cz_starvation(s);
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
TEST_IMPL(causes_python_cpu_bound) { return cz_cpu_bound("py_loader_tree"); }
TEST_IMPL(causes_python_few_workers) { return cz_few_workers("py_loader_tree"); }
TEST_IMPL(causes_python_storage_bound) { return cz_storage("py_loader_tree"); }
TEST_IMPL(causes_python_main_busy) { return cz_main_busy("py_loader_tree"); }
