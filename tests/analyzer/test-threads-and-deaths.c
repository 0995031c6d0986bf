/* Workloads whose shape is threads and ends: threads (8 threads, 8 streams), and dies (a process
 * ended by a signal and one killed outright, whose trace is cut short). */
#include "an_helpers.h"

#include <stdio.h>

#include <stdlib.h>

TEST_IMPL(workload_threads_and_streams)
{
    char dir[4096], *out;
    ASSERT(an_trace_workload(dir, "threads", "threads", NULL, &out));
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *k = tj_get(s, "kernels");
    ASSERT_UINT(k->n, ==, 1);
    ASSERT_INT(tj_num(k->v[0], "instances"), ==, 320);
    const tj *c = tj_get(s, "copies");
    ASSERT_UINT(c->n, ==, 2);
    for (size_t i = 0; i < c->n; i++) {
        ASSERT_STR(tj_str(c->v[i], "host_kind"), "pinned");
        ASSERT_INT(tj_num(c->v[i], "count"), ==, 80);
        ASSERT_INT(tj_num(c->v[i], "bytes"), ==, 20971520);
    }
    ASSERT_INT(tj_num(tj_find(tj_get(s, "api"), "name", "cudaStreamSynchronize"), "calls"), ==, 80);
    ASSERT_INT(tj_num(s, "vram.0.device"), ==, 0);
    ASSERT_INT(tj_num(s, "vram.0.peak_bytes"), ==, 2097152);
    ASSERT_INT(tj_num(s, "processes.0.pinned_host_peak_bytes"), ==, 2097152);
    tj_free(s);
    /* the timeline names the 8 worker threads and has 8 stream tracks, numbered 1, 2, ... in
     * the order of their creation, each with its handle */
    tj *j = an_timeline(dir);
    ASSERT(j);
    const tj *ev = tj_get(j, "traceEvents");
    int workers = 0, streams = 0, numbered[64] = {0};
    for (size_t i = 0; i < ev->n; i++) {
        if (strcmp(tj_str(ev->v[i], "ph"), "M") || strcmp(tj_str(ev->v[i], "name"), "thread_name"))
            continue;
        const char *n = tj_str(ev->v[i], "args.name");
        unsigned k;
        unsigned long long handle;
        workers += !strncmp(n, "worker-", 7);
        if (sscanf(n, "GPU 0 stream %u (0x%llx)", &k, &handle) == 2 && k >= 1 && k < 64) {
            streams++;
            numbered[k]++;
        }
    }
    ASSERT_INT(workers, ==, 8);
    ASSERT(streams >= 8);
    for (int k = 1; k <= streams; k++)
        ASSERT_INT(numbered[k], ==, 1);
    tj_free(j);
    return 0;
}

TEST_IMPL(workload_dies_by_signal_and_kill)
{
    char dir[4096], *out;
    /* dies exits by a signal: an_trace_workload reports that as a failure; read on */
    an_trace_workload(dir, "term", "dies --how term", NULL, &out);
    free(out);
    snprintf(dir, sizeof dir, "%s/term", ctt_tmpdir());
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.complete"), ==, 1);
    ASSERT_STR(tj_str(s, "processes.0.end"), "signal");
    ASSERT_INT(tj_num(s, "processes.0.end_code"), ==, 15);
    /* 5 complete steps of 2 kernels, 1 H2D and 1 D2H of 1 MiB each (pinned); what was in
     * flight at the signal may or may not have run */
    const tj *k = tj_get(s, "kernels");
    ASSERT_INT(tj_num(k->v[0], "instances"), >=, 10); /* the tracer must harvest them at exit */
    ASSERT_INT(tj_num(k->v[0], "instances"), <=, 13);
    ASSERT(tj_num(tj_find(tj_get(s, "api"), "name", "cudaStreamSynchronize"), "calls") == 5);
    tj_free(s);
    /* SIGKILL: nothing runs after it; the trace is cut and still analyzed, with a warning */
    an_trace_workload(dir, "kill", "dies --how kill", NULL, &out);
    free(out);
    snprintf(dir, sizeof dir, "%s/kill", ctt_tmpdir());
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary --json {}", dir), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.err, "warning");
    char err[256];
    s = tj_parse(p.out, err, sizeof err);
    ctt_proc_free(&p);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.complete"), ==, 0);
    ASSERT_CONTAINS(tj_str(s, "processes.0.command"), "dies --how kill");
    tj_free(s);
    return 0;
}
