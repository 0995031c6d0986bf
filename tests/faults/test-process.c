/* What programs do to their own process: close or dup2 over descriptors they did not open,
 * fork while other threads are inside CUDA calls, exec themselves in a chain, and see CUDA
 * calls fail. The program's output, its own files and its results are those of an untraced run. */
#define _GNU_SOURCE
#include "fl.h"

#include <stdlib.h>

/* victim MODE 20 FILE traced and untraced: the same output and end, and FILE holds exactly what
 * the program wrote (no trace byte landed in it through a descriptor number the tracer used to
 * own). gap: the program left the tracer no descriptor for a while (exhaust); otherwise the
 * trace goes on through the closes whole: every call recorded, END, nothing lost. */
static int fl_fds(const char *mode, int gap)
{
    char dir[4096], victim[4096], data[4096], data2[4096];
    snprintf(dir, sizeof dir, "%s/%s", ctt_tmpdir(), mode);
    snprintf(data, sizeof data, "%s/%s-plain.txt", ctt_tmpdir(), mode);
    snprintf(data2, sizeof data2, "%s/%s-traced.txt", ctt_tmpdir(), mode);
    char *cmd[] = {(char *)fl_victim(victim), (char *)mode, "20", data, NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    cmd[3] = data2;
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    char *a = ctt_read_file(data, NULL), *b = ctt_read_file(data2, NULL);
    ASSERT(a && b);
    ASSERT_CONTAINS(a, "data 39\n");
    ASSERT_STR(b, a);
    free(a);
    free(b);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    size_t syncs = fl_count(&t, 0, "cudaStreamSynchronize");
    const ct_rec *loss = NULL;
    for (size_t i = 0; i < t.n && !loss; i++)
        if (t.v[i].r.type == CT_REC_LOSS && t.v[i].r.u.loss.reason == CT_LOSS_WRITE)
            loss = &t.v[i].r;
    printf("%s: %zu synchronizations traced, %llu records lost\n", mode, syncs,
           (unsigned long long)t.stats[0].lost);
    if (!strcmp(mode, "closerange")) /* the tracer closed none of them (its samplers') */
        ASSERT_CONTAINS(plain.out, "own descriptors open 30 of 30\n");
    if (!gap) {
        ASSERT_UINT(syncs, ==, 40 + 2 * !strcmp(mode, "closerange")); /* + its thread's */
        ASSERT_UINT(t.stats[0].lost, ==, 0);
        ASSERT(loss == NULL);
    } else {
        /* The tracer said so when it happened, and the trace says how much the gap took: the
         * steps before the closes (long enough before) and those after the program gave
         * descriptors back (within the writer's 100 ms) are there. */
        ASSERT_CONTAINS(traced.err, "none is left to reopen it with");
        ASSERT(loss != NULL);
        ASSERT_UINT(loss->u.loss.why, ==, CT_WRITE_LOST_FD);
        ASSERT_UINT(loss->u.loss.count, >, 0);
        ASSERT_UINT(syncs, >=, 8);
        ASSERT_UINT(syncs, <, 40);
    }
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

TEST_IMPL(program_closes_descriptors)
{
    return fl_fds("closefds", 0) || fl_fds("closerange", 0);
}

TEST_IMPL(program_dup2s_over_descriptors)
{
    return fl_fds("dup2fds", 0);
}

/* A program that closes everything and then takes every descriptor its limit allows: with room
 * under the hard limit the tracer still gets one, nothing lost; without, the records of the
 * gap are counted and the trace goes on once the program closes some. */
TEST_IMPL(program_exhausts_descriptors)
{
    return fl_fds("exhaust-soft", 0) || fl_fds("exhaust", 1);
}

/* 20 forks while 4 threads are inside CUDA calls, starting delay_ms after the threads: no
 * child hangs on a lock a parent thread held (the time limit would catch it), each child's CUDA
 * call returns and gets its own complete trace, and the parent's trace holds every call of its
 * threads. */
static int fl_fork(const char *delay_ms)
{
    char dir[4096], victim[4096];
    snprintf(dir, sizeof dir, "%s/fork", ctt_tmpdir());
    char *cmd[] = {(char *)fl_victim(victim), "fork", "50", (char *)delay_ms, NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_CONTAINS(plain.out, "children=20 ok=20");
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 20), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 21);
    size_t parents = 0;
    for (uint32_t f = 0; f < t.nfiles; f++) {
        ASSERT_INT(t.stats[f].complete, ==, 1);
        ASSERT_UINT(t.stats[f].lost, ==, 0);
        size_t syncs = fl_count(&t, (int)f, "cudaStreamSynchronize");
        if (syncs) {
            ASSERT_UINT(syncs, ==, 4 * 50);
            parents++;
        } else {
            ASSERT_UINT(fl_count(&t, (int)f, "cudaMalloc"), ==, 1);
        }
    }
    ASSERT_UINT(parents, ==, 1);
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

/* Forks once the threads' calls are traced (the trace is running). */
TEST_IMPL(fork_while_threads_in_cuda)
{
    return fl_fork("100");
}

/* Forks from the start, while the threads' first calls may be starting the trace. */
TEST_IMPL(fork_while_trace_starts)
{
    return fl_fork("0");
}

/* exec keeps the pid: each image of the chain writes its own complete trace (exec runs no
 * destructor, so the tracer must flush before it), under a fresh name. */
TEST_IMPL(exec_chain)
{
    char dir[4096], victim[4096];
    snprintf(dir, sizeof dir, "%s/exec", ctt_tmpdir());
    char *cmd[] = {(char *)fl_victim(victim), "exec", "3", NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 3);
    for (uint32_t f = 0; f < t.nfiles; f++) {
        ASSERT_UINT(t.pids[f], ==, t.pids[0]);
        ASSERT_UINT(fl_count(&t, (int)f, "cudaStreamSynchronize"), ==, 1);
        ASSERT_INT(t.stats[f].complete, ==, 1);
    }
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

/* CUDA calls made to fail by the simulation (FAKECUDA_FAIL) return the same errors traced, and
 * the trace records those results for the runtime call and the driver call inside it. */
TEST_IMPL(cuda_failures_passed_back)
{
    char dir[4096], victim[4096];
    snprintf(dir, sizeof dir, "%s/fail", ctt_tmpdir());
    char *env[] = {"FAKECUDA_FAIL=cuMemAlloc_v2:2:2,cuMemcpyHtoD_v2:1:1,cuStreamSynchronize:1:999",
                   NULL};
    char *cmd[] = {(char *)fl_victim(victim), "fail", NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, env, 60), ==, 0);
    ASSERT_CONTAINS(plain.out, "cudaMalloc -> 0\nvictim: cudaMalloc -> 2\n");
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, env, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    /* Each failed call, runtime and driver, with the result the program saw or its driver
     * source; and the calls around it untouched. */
    static const struct { const char *name; uint32_t result; size_t n; } want[] = {
        {"cudaMalloc", 2, 1}, {"cudaMalloc", 0, 2}, {"cuMemAlloc_v2", 2, 1},
        {"cuMemAlloc_v2", 0, 2}, {"cuMemcpyHtoD_v2", 1, 1}, {"cuStreamSynchronize", 999, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t n = 0;
        for (size_t k = 0; k < t.n; k++)
            n += t.v[k].r.type == CT_REC_API && t.v[k].name &&
                 !strcmp(t.v[k].name, want[i].name) && t.v[k].r.u.api.result == want[i].result;
        if (n != want[i].n) {
            ctt_fail_at(__FILE__, __LINE__, "%s returning %u: %zu records, expected %zu",
                            want[i].name, want[i].result, n, want[i].n);
            return 1;
        }
    }
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

/* fork+exec chains: the fork_exec workload (children forked before and after CUDA starts, one
 * exec'ing train_loop) ends the same and reports the same results traced (its other lines hold
 * pids and timings), and every CUDA process is complete. */
TEST_IMPL(fork_exec_workload_unchanged)
{
    char dir[4096], prog[4096];
    snprintf(dir, sizeof dir, "%s/forkexec", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "fork_exec"), NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 60), ==, 0);
    ASSERT_INT(traced.exited, ==, plain.exited);
    ASSERT_INT(traced.code, ==, plain.code);
    const char *result = tr_line(plain.out, "fork_exec: children=");
    ASSERT_CONTAINS(result, "failed=0");
    ASSERT_CONTAINS(traced.out, result);
    /* The exec'd training loop computed the same losses. */
    const char *losses = tr_line(plain.out, "train_loop: loss_first=");
    ASSERT(*losses);
    ASSERT_CONTAINS(traced.out, losses);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 4); /* parent, 2 children, the exec'd train_loop */
    for (uint32_t f = 0; f < t.nfiles; f++)
        ASSERT_INT(t.stats[f].complete, ==, 1);
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}
