/* Threads: per-thread buffers lose nothing under 64 concurrent threads, and every thread of the
 * threads workload is recorded with its name and its own stream; records come out in time
 * order whatever holds a thread inside a call; full rings lose records counted per thread, or
 * none with --on-full block. */
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

/* 16 threads copying (GPU timing on), five of them held 200 ms each between stamping a copy's
 * return and appending its record (the simulation holds the tracer's own cuPointerGetAttribute
 * in the copy's hook, as a thread preempted there would be), while the other threads' chunks go
 * on being written and the threads exit: the writer's low-water marks must never pass a record
 * stamped and not yet appended, nor a GPU timing collected from a thread just retired. The
 * reader then finds no record out of time order (with the marks' old rule, the flush's start
 * less 20 ms, it found 15 to 70). */
TEST_IMPL(order_kept_with_threads_held_in_calls)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "copies", "16", "2000", NULL};
    char *env[] = {"FAKECUDA_FAIL=cuPointerGetAttribute:3000:0:200,cuPointerGetAttribute:9000:0:200,"
                   "cuPointerGetAttribute:15000:0:200,cuPointerGetAttribute:21000:0:200,"
                   "cuPointerGetAttribute:27000:0:200",
                   NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 120), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(t.stats[0].late_records, ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemcpyHtoD_v2"), ==, 16 * 2000);
    size_t gpu = 0;
    for (size_t i = 0; i < t.n; i++)
        gpu += t.v[i].r.type == CT_REC_GPU && t.v[i].r.u.gpu.kind == CT_GPU_MEMCPY;
    ASSERT_UINT(gpu, ==, 16 * 2000);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* Records each thread lost by the chunk counts of its own stream, from the trace in dir, into
 * lost[] by thread (tids[], n of them, at most cap); their sum. */
static uint64_t tr_lost_by_thread(const char *dir, uint32_t *tids, uint64_t *lost, size_t cap,
                                  size_t *n)
{
    tr_trace t;
    *n = 0;
    if (tr_load(&t, dir) != 0 || t.nfiles != 1)
        return 0;
    ct_reader_opts o = {.file_order = 1, .chunk_records = 1};
    ct_reader *r;
    char err[512];
    uint64_t sum = 0;
    if (ct_reader_open(&r, (const char *const *)t.paths, 1, &o, err, sizeof err) == 0) {
        ct_rec rec;
        while (ct_reader_next(r, &rec) > 0) {
            if (rec.type != CT_REC_CHUNK || !rec.u.chunk.lost)
                continue;
            size_t k;
            for (k = 0; k < *n && tids[k] != rec.tid; k++)
                ;
            if (k == *n && *n < cap)
                tids[(*n)++] = rec.tid, lost[k] = 0;
            if (k < *n)
                lost[k] += rec.u.chunk.lost;
            sum += rec.u.chunk.lost;
        }
        ct_reader_close(r);
    }
    tr_free(&t);
    return sum;
}

/* 64 threads calling faster than the writer drains their 16 KiB rings (instant simulation):
 * by default each thread loses records, counted in its own stream's chunks (all the trace's
 * loss, the calls made = those recorded + those lost); with --on-full block a thread whose
 * ring is full waits for the writer: nothing is lost and the program finishes. */
TEST_IMPL(full_rings_counted_per_thread_or_waited_for)
{
    char prog[4096], out[4096];
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "stress", "64", "3000", NULL};
    char *env[] = {"FAKECUDA_INSTANT=1", "CUTRACE_RING_KB=16", NULL};
    for (int block = 0; block < 2; block++) {
        snprintf(out, sizeof out, "%s/out%d", ctt_tmpdir(), block);
        char *opts[] = {"--gpu-timing", "off", "--on-full", block ? "block" : "drop", NULL};
        ctt_proc p;
        ASSERT_INT(tr_run(&p, out, opts, cmd, env, 120), ==, 0);
        TR_ASSERT_EXIT(p, 0);
        tr_trace t;
        ASSERT_INT(tr_load(&t, out), ==, 0);
        ASSERT_INT(t.stats[0].complete, ==, 1);
        size_t api = tr_count(&t, CT_REC_API, "cuMemsetD8Async");
        size_t sets = tr_count(&t, CT_REC_COPY, NULL);
        uint64_t lost = t.stats[0].lost;
        tr_free(&t);
        ctt_proc_free(&p);
        uint32_t tids[128];
        uint64_t by[128];
        size_t n;
        uint64_t sum = tr_lost_by_thread(out, tids, by, 128, &n);
        printf("  --on-full %s: %zu of %d calls recorded, %llu records lost by %zu threads\n",
               block ? "block" : "drop", api, 64 * 3000, (unsigned long long)lost, n);
        if (block) {
            ASSERT_UINT(lost, ==, 0);
            ASSERT_UINT(api, ==, 64 * 3000);
            ASSERT_UINT(sets, ==, 64 * 3000);
        } else {
            /* A call's record lost counts twice (its record with the detail, then the API
             * record alone); the few other records (stream, allocation, sync, CPU readings)
             * lost with them at most 100 a thread. */
            ASSERT_UINT(lost, >, 0);
            ASSERT_UINT(sum, ==, lost);
            ASSERT_UINT(n, >, 1);
            ASSERT_UINT(api + sets + lost, >=, 2 * 64 * 3000);
            ASSERT_UINT(api + sets + lost, <=, 2 * 64 * 3000 + 64 * 100);
        }
    }
    return 0;
}

/* 8 `cutrace run` at once into one directory, each of a process writing one trace: each says
 * it wrote 1 trace file (it counts the files its own run's token names, not every file the
 * directory gained meanwhile), and the directory holds 8. */
TEST_IMPL(concurrent_runs_count_their_own_trace)
{
    char cutrace[4096], prog[4096], fake[4096], out[4096], llp[4200];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *argv[] = {"/bin/sh", "-c",
                    "for i in 1 2 3 4 5 6 7 8; do \"$0\" run -o \"$1\" -- \"$2\" stress 2 2000 "
                    ">/dev/null 2>\"$1.err$i\" & done; wait",
                    (char *)ctt_path(cutrace, "bin/cutrace"), out,
                    (char *)ctt_path(prog, "tests/tracer/probe"), NULL};
    char *env[] = {llp, "FAKECUDA_INSTANT=1", NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, env, 120), ==, 0);
    ASSERT_INT(p.exited && p.code == 0, ==, 1);
    ctt_proc_free(&p);
    for (int i = 1; i <= 8; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s.err%d", out, i);
        char *err = ctt_read_file(path, NULL);
        ASSERT_CONTAINS(err, "cutrace: 1 trace file in ");
        free(err);
    }
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 8);
    tr_free(&t);
    return 0;
}
