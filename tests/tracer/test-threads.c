/* Threads: per-thread buffers lose nothing under 64 concurrent threads, and every thread of the
 * threads workload is recorded with its name and its own stream. */
#include "tr.h"

#include <stdlib.h>

TEST_IMPL(stress_64_threads_lose_nothing)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "stress", "64", "3000", NULL};
    char *env[] = {"FAKECUDA_INSTANT=1", NULL};
    char *opts[] = {"--gpu-timing", "off", NULL}; /* the rings' losses, not GPU timings' */
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, opts, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.stats[0].lost, ==, 0);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemsetD8Async"), ==, 64 * 3000);
    size_t sets = 0;
    for (size_t i = 0; i < t.n; i++)
        sets += t.v[i].r.type == CT_REC_COPY && t.v[i].r.u.copy.op == CT_COPY_MEMSET &&
                t.v[i].r.u.copy.bytes == 64 && (t.v[i].r.u.copy.flags & CT_COPY_ASYNC);
    ASSERT_UINT(sets, ==, 64 * 3000);
    /* The 64 workers and the main thread (its one traced call: cuInit), each announced once. */
    size_t threads = 0;
    for (size_t i = 0; i < t.n; i++)
        threads += t.v[i].r.type == CT_REC_THREAD && !(t.v[i].r.u.thread.flags & CT_THREAD_EXITED);
    ASSERT_UINT(threads, ==, 64 + 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuInit"), ==, 1);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(threads_named_with_own_streams)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "threads"), "--rounds", "3", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    for (int w = 0; w < 8; w++) {
        char name[32];
        snprintf(name, sizeof name, "worker-%d", w);
        ASSERT_UINT(tr_count(&t, CT_REC_THREAD, name), >=, 1);
    }
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 8 * 3 * 4);
    /* Each worker's launches go to one stream, different for every worker. */
    uint32_t tids[8] = {0};
    uint64_t streams[8] = {0};
    int n = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type != CT_REC_LAUNCH)
            continue;
        int k;
        for (k = 0; k < n && tids[k] != r->tid; k++)
            ;
        if (k == n) {
            ASSERT_INT(n, <, 8);
            tids[n] = r->tid;
            streams[n++] = r->u.launch.stream;
        }
        ASSERT_UINT(r->u.launch.stream, ==, streams[k]);
    }
    ASSERT_INT(n, ==, 8);
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            ASSERT(streams[a] != streams[b]);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* One thread calling far faster than the writer drains (the simulation in instant mode, and a
 * 16 KiB ring: the default 1 MiB one may keep up): the ring overflows, and every record that
 * did not fit is counted as lost, none silently. */
TEST_IMPL(overflow_is_counted)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "stress", "1", "300000", NULL};
    char *env[] = {"FAKECUDA_INSTANT=1", "CUTRACE_RING_KB=16", NULL};
    char *opts[] = {"--gpu-timing", "off", NULL}; /* the ring's losses, not GPU timings' */
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, opts, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    size_t api = tr_count(&t, CT_REC_API, "cuMemsetD8Async");
    size_t copies = tr_count(&t, CT_REC_COPY, NULL);
    /* Each call appends a COPY and an API record: what is missing of the 600000 is lost. The
     * loss count also covers the thread's few other records (allocation, stream, sync, and a
     * CPU reading whenever the thread was descheduled for 100 us: rare, 100 at most). */
    ASSERT_UINT(t.stats[0].lost, >, 0);
    ASSERT_UINT(api + copies + t.stats[0].lost, >=, 2 * 300000);
    ASSERT_UINT(api + copies + t.stats[0].lost, <=, 2 * 300000 + 100);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
