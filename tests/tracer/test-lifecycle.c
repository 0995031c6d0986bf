/* fork, exec and the ways a process ends: each CUDA process has its own complete file, a
 * fatal signal or abort() loses nothing recorded and keeps the program's own death, SIGKILL
 * loses at most the last second, and `cutrace run` hands back exit statuses and signals. */
#include "tr.h"

#include <signal.h>

static size_t count_file(const tr_trace *t, uint32_t file, uint32_t type)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->v[i].r.file == file && t->v[i].r.type == type;
    return n;
}

TEST_IMPL(fork_exec_one_file_per_process)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "fork_exec"), NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.out, "failed=0");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    /* The parent, 2 job children, the exec'd train_loop; not the CPU-only worker. */
    ASSERT_UINT(t.nfiles, ==, 4);
    int jobs = 0, train = 0;
    for (uint32_t f = 0; f < t.nfiles; f++) {
        ASSERT_INT(t.stats[f].complete, ==, 1);
        for (uint32_t g = 0; g < f; g++)
            ASSERT(t.pids[f] != t.pids[g]);
        size_t launches = count_file(&t, f, CT_REC_LAUNCH);
        if (launches == 2)
            jobs++;
        else if (launches == 39)
            train++;
        else
            ASSERT_UINT(launches, ==, 2); /* shows the odd count */
    }
    ASSERT_INT(jobs, ==, 3);
    ASSERT_INT(train, ==, 1);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* Forks from the very start while 4 threads make the first CUDA calls (starting the trace):
 * no child hangs or crashes (on a tracer lock inherited held; on the loader's lock, held by a
 * tracer walk of the loaded objects, which the probe makes 200 us longer; in the driver half
 * loaded by the tracer in another thread; or in a driver that missed the fork because the
 * tracer's fork handler made fork wait), 10 rounds. Without ctp_loader.h's wait, 5 runs of 5
 * failed. */
TEST_IMPL(fork_while_trace_starts)
{
    char prog[4096], out[4096];
    for (int round = 0; round < 10; round++) {
        snprintf(out, sizeof out, "%s/out%d", ctt_tmpdir(), round);
        char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "forkstart", NULL};
        ctt_proc p;
        ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 20), ==, 0);
        TR_ASSERT_EXIT(p, 0);
        ASSERT_CONTAINS(p.out, "probe: mode=forkstart children=20 ok=20\n");
        tr_trace t;
        ASSERT_INT(tr_load(&t, out), ==, 0);
        /* the parent's trace has every call of its threads */
        ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemsetD8_v2"), >=, 4 * 50);
        for (uint32_t f = 0; f < t.nfiles; f++)
            ASSERT_INT(t.stats[f].complete, ==, 1);
        tr_free(&t);
        ctt_proc_free(&p);
    }
    return 0;
}

static size_t count_api_file(const tr_trace *t, uint32_t file, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->v[i].r.file == file && t->v[i].r.type == CT_REC_API && !strcmp(t->v[i].name, name);
    return n;
}

/* exec runs no destructor: the image's trace is ended before it (every record, END "tracer
 * detached"); a failed exec returns the C library's result and errno and the image is traced
 * on into a second file; the new image (no CUDA) writes nothing. */
TEST_IMPL(exec_keeps_records_made_just_before)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "exec", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 7);
    ASSERT_CONTAINS(p.out, "probe: mode=exec failed_exec=-1 errno=2\n");
    ASSERT_CONTAINS(p.out, "probe: mode=nocuda");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 2);
    ASSERT_UINT(t.pids[0], ==, t.pids[1]);
    size_t memsets[2] = {0, 0}, allocs[2] = {0, 0};
    for (uint32_t f = 0; f < 2; f++) {
        ASSERT_INT(t.stats[f].complete, ==, 1);
        ASSERT_UINT(t.stats[f].lost, ==, 0);
        memsets[f] = count_api_file(&t, f, "cuMemsetD8_v2");
        allocs[f] = count_api_file(&t, f, "cuMemAlloc_v2");
    }
    /* before the failed exec: the allocation and 100 sets; after it: 1 set */
    uint32_t first = memsets[0] == 100 ? 0 : 1;
    ASSERT_UINT(memsets[first], ==, 100);
    ASSERT_UINT(allocs[first], ==, 1);
    ASSERT_UINT(memsets[1 - first], ==, 1);
    ASSERT_UINT(allocs[1 - first], ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_COPY, NULL), ==, 101);
    size_t ends = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_END) {
            ends++;
            ASSERT_UINT(t.v[i].r.u.end.how, ==, CT_END_DETACH);
        }
    ASSERT_UINT(ends, ==, 2);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* dies --how HOW; gpu: with the default options, which time every operation on the GPU;
 * otherwise --gpu-timing off. */
static int dies(const char *how, int exited, int code, unsigned end_how, int steps,
                const char *step_ms, int gpu)
{
    char prog[4096], out[4096], s[16];
    snprintf(out, sizeof out, "%s/%s%s", ctt_tmpdir(), how, gpu ? "-gpu" : "");
    snprintf(s, sizeof s, "%d", steps);
    char *cmd[] = {(char *)tr_workload(prog, "dies"), "--how", (char *)how, "--steps", s,
                   "--step-ms", (char *)step_ms, NULL};
    char *no_gpu_opts[] = {"--gpu-timing", "off", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, gpu ? NULL : no_gpu_opts, cmd, NULL, 60), ==, 0);
    ASSERT_INT(p.exited, ==, exited);
    ASSERT_INT(p.code, ==, code);
    ASSERT_CONTAINS(p.out, "with work in flight");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    if (gpu) {
        /* Every timed operation (per step 1 H2D, 2 kernels, 1 D2H; then 3 kernels and 1 D2H in
         * flight) has its GPU record or is counted as a lost GPU timing; the synchronized ones
         * (all but the last 4) completed before the death, so they have their GPU record. */
        size_t ops = 4 * (size_t)steps + 4, gpu_recs = 0, kernels = 0;
        uint64_t gpu_lost = 0;
        for (size_t i = 0; i < t.n; i++) {
            const ct_rec *r = &t.v[i].r;
            if (r->type == CT_REC_GPU) {
                gpu_recs++;
                kernels += r->u.gpu.kind == CT_GPU_KERNEL;
            } else if (r->type == CT_REC_LOSS) {
                ASSERT_UINT(r->u.loss.reason, ==, CT_LOSS_GPU_TIMING);
                gpu_lost += r->u.loss.count;
            }
        }
        ASSERT_UINT(gpu_recs + gpu_lost, ==, ops);
        ASSERT_UINT(gpu_recs, >=, 4 * (size_t)steps);
        ASSERT_UINT(kernels, >=, 2 * (size_t)steps);
        ASSERT_UINT(t.stats[0].lost, ==, gpu_lost);
    } else {
        ASSERT_UINT(t.stats[0].lost, ==, 0);
    }
    if (end_how) {
        ASSERT_INT(t.stats[0].complete, ==, 1);
        /* Everything: S steps of 2 kernels and the 3 in flight, S + 1 D2H copies. */
        ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 2 * steps + 3);
        const ct_rec *end = NULL;
        for (size_t i = 0; i < t.n; i++)
            if (t.v[i].r.type == CT_REC_END)
                end = &t.v[i].r;
        ASSERT(end != NULL);
        ASSERT_UINT(end->u.end.how, ==, end_how);
        ASSERT_INT(end->u.end.code, ==, code); /* the exit status, or the signal */
    } else {
        /* SIGKILL: what the writer wrote up to a second before survives. */
        ASSERT_INT(t.stats[0].complete, ==, 0);
        ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), >=, 2 * (steps - 11));
    }
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(dies_abort)
{
    return dies("abort", 0, SIGABRT, CT_END_ABORT, 5, "20", 0) ||
           dies("abort", 0, SIGABRT, CT_END_ABORT, 5, "20", 1);
}

TEST_IMPL(dies_sigterm)
{
    return dies("term", 0, SIGTERM, CT_END_SIGNAL, 5, "20", 0) ||
           dies("term", 0, SIGTERM, CT_END_SIGNAL, 5, "20", 1);
}

TEST_IMPL(dies_exit)
{
    return dies("exit", 1, 3, CT_END_EXIT, 5, "20", 0) ||
           dies("exit", 1, 3, CT_END_EXIT, 5, "20", 1);
}

TEST_IMPL(dies_sigkill_loses_at_most_a_second)
{
    return dies("kill", 0, SIGKILL, 0, 15, "100", 0);
}

/* A signal sent to `cutrace run` reaches the command (probe sleep, which allocated 4 KiB),
 * whose death becomes cutrace's; the trace is complete and says which signal ended it. */
static int killed_while_sleeping(const char *sig, int signo)
{
    char prog[4096], out[4096], cutrace[4096], fake[4096], script[20000], status[32];
    snprintf(out, sizeof out, "%s/%s", ctt_tmpdir(), sig);
    snprintf(script, sizeof script,
             "%s run -o %s -- %s sleep & pid=$!; "
             "for i in $(seq 100); do ls %s/*.cutrace >/dev/null 2>&1 && break; sleep 0.05; done; sleep 0.3; "
             "kill -%s $pid; wait $pid; echo status=$?",
             ctt_path(cutrace, "bin/cutrace"), out,
             ctt_path(prog, "tests/tracer/probe"), out, sig);
    char llp[4200];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *argv[] = {"sh", "-c", script, NULL};
    char *env[] = {llp, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, env, 30), ==, 0);
    ASSERT_CONTAINS(p.out, "probe: mode=sleep ready");
    snprintf(status, sizeof status, "status=%d", 128 + signo); /* as the shell reports it */
    ASSERT_CONTAINS(p.out, status);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemAlloc_v2"), ==, 1);
    const ct_rec *end = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_END)
            end = &t.v[i].r;
    ASSERT(end != NULL);
    ASSERT_UINT(end->u.end.how, ==, CT_END_SIGNAL);
    ASSERT_INT(end->u.end.code, ==, signo);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(run_forwards_signals)
{
    return killed_while_sleeping("TERM", SIGTERM) || killed_while_sleeping("INT", SIGINT);
}

TEST_IMPL(run_usage)
{
    char cutrace[4096];
    char *help[] = {(char *)ctt_path(cutrace, "bin/cutrace"), "run", "--help", NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, help, NULL, 10), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.out, "--output DIR");
    ASSERT_CONTAINS(p.out, "--stacks MODE");
    ASSERT_CONTAINS(p.out, "--gpu-timing MODE");
    ctt_proc_free(&p);
    char *bad[] = {cutrace, "run", "--gpu-timing", "sometimes", "--", "true", NULL};
    ASSERT_INT(ctt_run(&p, bad, NULL, 10), ==, 0);
    TR_ASSERT_EXIT(p, 2);
    ASSERT_CONTAINS(p.err, "--gpu-timing: expected all, off or a count N > 0, found 'sometimes'");
    ctt_proc_free(&p);
    char *none[] = {cutrace, "run", NULL};
    ASSERT_INT(ctt_run(&p, none, NULL, 10), ==, 0);
    TR_ASSERT_EXIT(p, 2);
    ctt_proc_free(&p);
    /* a command that does not exist: said once, 127 as a shell gives, no second word on traces
     * that contradicts it; one that runs and makes no CUDA call still hears of the traces */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/missing", ctt_tmpdir());
    char *missing[] = {cutrace, "run", "-o", dir, "--", "cutrace-no-such-command", NULL};
    ASSERT_INT(ctt_run(&p, missing, NULL, 10), ==, 0);
    TR_ASSERT_EXIT(p, 127);
    ASSERT_STR(p.err, "cutrace run: error: cannot run cutrace-no-such-command: No such file or "
                      "directory\n");
    ctt_proc_free(&p);
    char *nocuda[] = {cutrace, "run", "-o", dir, "--", "true", NULL};
    ASSERT_INT(ctt_run(&p, nocuda, NULL, 10), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.err, "no trace written in");
    ctt_proc_free(&p);
    return 0;
}
