/* Kineto (PyTorch profiler) traces through cutrace's own analysis (analyzer/KINETO.md): the
 * tables, the busy time and the ProfilerStep iterations against the same figures computed from
 * the JSON alone by an independent script (tests/analyzer/kineto/truth.py), on the real GPU
 * traces; the breakdown of a small document worked out by hand; timeline, report and export on
 * every real trace; and a round trip: a program traced by cutrace, written out as the profiler would have
 * (tests/analyzer/kineto/to_kineto.py), gives back the GPU figures of cutrace's own trace. */
#include "an_helpers.h"

#include <dirent.h>
#include <stdlib.h>

static int run_sh(ctt_proc *p, const char *cmd)
{
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    return ctt_run(p, argv, NULL, 300);
}

/* The real traces, in name order; 0 when the data is not present (the test then skips). */
static int real_traces(char paths[8][4096])
{
    DIR *d = opendir(AN_KINETO_DATA);
    if (!d)
        return 0;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) && n < 8)
        if (strstr(e->d_name, ".json"))
            snprintf(paths[n++], 4096, "%s/%s", AN_KINETO_DATA, e->d_name);
    closedir(d);
    return n;
}

TEST_IMPL(kineto_model_matches_the_json_on_real_traces)
{
    char paths[8][4096];
    int n = real_traces(paths);
    if (!n)
        ctt_skip("the Kineto traces are not present (../shared/data/kineto-hta)");
    ASSERT_INT(n, ==, 4);
    int without_gpu = 0;
    for (int i = 0; i < n; i++) {
        char out[4200];
        static char cmd[1 << 19];
        snprintf(out, sizeof out, "%s/summary-%d.json", ctt_tmpdir(), i);
        snprintf(cmd, sizeof cmd, "'%s' summary --json '%s' > '%s' && python3 '%s/truth.py' '%s' '%s'",
                 an_cutrace(), paths[i], out, AN_KINETO_SCRIPTS, paths[i], out);
        ctt_proc p;
        ASSERT_INT(run_sh(&p, cmd), ==, 0);
        if (p.code != 0)
            fprintf(stderr, "%s\n%s%s", paths[i], p.out, p.err);
        ASSERT_INT(p.code, ==, 0);
        ASSERT_CONTAINS(p.out, "\n0 differences");
        ctt_proc_free(&p);
        tj *s = an_summary(paths[i], NULL);
        ASSERT(s);
        /* the source is stated; the hta block is still there; what is unknown is null */
        ASSERT_STR(tj_str(s, "processes.0.source.format"), "kineto");
        ASSERT_STR(tj_str(s, "processes.0.source.file"), paths[i]);
        ASSERT_CONTAINS(tj_str(s, "processes.0.source.not_in_trace"), "CPU time");
        ASSERT_STR(tj_str(s, "processes.0.file"), paths[i]);
        ASSERT_STR(tj_str(s, "input"), "kineto");
        ASSERT_UINT(tj_len(s, "hta.ranks"), ==, 1);
        if (tj_num(s, "processes.0.source.kernels") == 0) {
            ASSERT_CONTAINS(tj_str(s, "processes.0.source.message"), "no GPU activity");
            ASSERT_UINT(tj_len(s, "breakdown"), ==, 0);
            without_gpu++;
        } else {
            ASSERT(!tj_path(s, "processes.0.source.message"));
            const tj *b = tj_path(s, "breakdown.0");
            ASSERT(b && tj_path(b, "idle_host_compute_ns") && tj_path(b, "idle_host_compute_ns")->type == TJ_NULL);
            ASSERT(tj_num(b, "gpu_idle_ns") == tj_num(b, "idle_in_api_ns") + tj_num(b, "idle_blocked_ns") +
                                                   tj_num(b, "idle_host_unknown_ns"));
        }
        tj_free(s);
    }
    ASSERT_INT(without_gpu, ==, 1);
    return 0;
}

TEST_IMPL(kineto_model_timeline_and_report_on_real_traces)
{
    char paths[8][4096];
    int n = real_traces(paths);
    if (!n)
        ctt_skip("the Kineto traces are not present (../shared/data/kineto-hta)");
    for (int i = 0; i < n; i++) {
        static char cmd[1 << 19];
        snprintf(cmd, sizeof cmd,
                 "set -e; t='%s'; '%s' timeline -o \"$t/tl.json\" '%s' >/dev/null;"
                 " python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                 "print(len(d[\"traceEvents\"]))' \"$t/tl.json\";"
                 " '%s' report -o \"$t/r.html\" '%s' >/dev/null; grep -c 'id=\"ct-data\"' \"$t/r.html\";"
                 " '%s' summary '%s' | grep -c 'source: PyTorch profiler (Kineto) trace';"
                 " rm -f \"$t/x.sqlite\"; '%s' export --sqlite \"$t/x.sqlite\" '%s' >/dev/null 2>&1;"
                 " python3 -c 'import gzip, json, sqlite3, sys; d = json.load(gzip.open(sys.argv[1]));"
                 " n = sum(e.get(\"cat\") == \"kernel\" for e in d[\"traceEvents\"]);"
                 " k = sqlite3.connect(sys.argv[2]).execute(\"select count(*) from CUPTI_ACTIVITY_KIND_KERNEL\").fetchone()[0];"
                 " print(\"kernels\", n, k)' '%s' \"$t/x.sqlite\"",
                 ctt_tmpdir(), an_cutrace(), paths[i], an_cutrace(), paths[i], an_cutrace(), paths[i],
                 an_cutrace(), paths[i], paths[i]);
        ctt_proc p;
        ASSERT_INT(run_sh(&p, cmd), ==, 0);
        if (p.code)
            fprintf(stderr, "%s: %s", paths[i], p.err);
        ASSERT_INT(p.code, ==, 0);
        long events = atol(p.out);
        ASSERT(events > 0);
        ASSERT_CONTAINS(p.out, "\n1\n1\n");
        /* export: the kernel table holds every kernel event */
        long n_json = -1, n_sql = -2;
        const char *k = strstr(p.out, "kernels ");
        ASSERT(k && sscanf(k, "kernels %ld %ld", &n_json, &n_sql) == 2);
        ASSERT_INT(n_sql, ==, n_json);
        ctt_proc_free(&p);
        if (strstr(paths[i], "cupti_profiler")) { /* the trace without kernels */
            char *argv[] = {(char *)an_cutrace(), "summary", paths[i], NULL};
            ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
            ASSERT_CONTAINS(p.out, "no GPU activity in this Kineto trace");
            ASSERT_CONTAINS(p.out, "no GPU kernels in this trace");
            ctt_proc_free(&p);
        }
    }
    return 0;
}

/* One thread, device 0, stream 7 (times in us):
 *   cudaMemcpyAsync [50, 54]     -> Memcpy HtoD (Pinned -> Device) [60, 70], 1 MiB
 *   cudaLaunchKernel [100, 105]  -> k1 [115, 135]: it runs 10 us after its call returned
 *   cudaStreamSynchronize [106, 136] (a cuda_sync event names stream 7)
 *   aten::cpu_work [140, 200]: only a CPU op runs
 *   cudaLaunchKernel [200, 205]  -> k2 [210, 220]
 *   ProfilerStep#1 [45, 139], #2 [139, 199], #3 [199, 230]: 94, 60, 31 us, median 60
 *   [memory]: 1 MiB at 50, 2 MiB at 120, a host block at 125 (not device memory), the 1 MiB
 *     freed at 150: peak 3 MiB at 120 (75 us after the first record, the first step's start)
 * GPU window 60..220 = 160, busy 10 + 20 + 10 = 40, idle 120 in two gaps:
 *   [70, 115]: host outside CUDA 70..100 and 105..106 (31), in the launch call 100..105 (5),
 *     blocked in the synchronization 106..115 (9); no synchronization returned: "host";
 *   [135, 210]: blocked 135..136 (1), outside CUDA 136..200 and 205..210 (69), in the launch
 *     call 200..205 (5); the synchronization returned in it, having blocked the host 30: the
 *     gap's first 30 are "after-sync" (what the host would have run ahead by without it), the
 *     other 45 the host's own work, "host", which holds most of it and counts it.
 * So in CUDA 10, blocked 10, outside CUDA 100, and computing or waiting unknown (null). Launch
 * queues (call entry to kernel start): 15 and 10 us. */
static const char hand[] =
    "{\"distributedInfo\": {\"rank\": 2},\n"
    " \"deviceProperties\": [{\"id\": 0, \"name\": \"Hand GPU\", \"numSms\": 7, \"totalGlobalMem\": 1073741824}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 210,"
    "   \"dur\": 10, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 5, \"grid\": [2, 1, 1], \"block\": [64, 1, 1]}},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#1\", \"pid\": 9, \"tid\": 9, \"ts\": 45, \"dur\": 94},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 9, \"tid\": 9, \"ts\": 139, \"dur\": 60},\n"
    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 9, \"tid\": 9, \"ts\": 199, \"dur\": 31},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9, \"ts\": 200,"
    "   \"dur\": 5, \"args\": {\"correlation\": 5}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 9, \"tid\": 9, \"ts\": 50,"
    "   \"dur\": 4, \"args\": {\"correlation\": 1}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> Device)\", \"pid\": 0, \"tid\": \"stream 7\","
    "   \"ts\": 60, \"dur\": 10, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1, \"bytes\": 1048576}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 9, \"tid\": 9, \"ts\": 100,"
    "   \"dur\": 5, \"args\": {\"correlation\": 2}},\n"
    "  {\"ph\": \"f\", \"id\": 2, \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 115, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 115,"
    "   \"dur\": 20, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 2}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 9, \"tid\": 9, \"ts\": 106,"
    "   \"dur\": 30, \"args\": {\"correlation\": 3}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 115,"
    "   \"dur\": 21, \"args\": {\"stream\": 7, \"correlation\": 3}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::cpu_work\", \"pid\": 9, \"tid\": 9, \"ts\": 140, \"dur\": 60},\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": 150, \"args\":"
    "   {\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 4096, \"Bytes\": -1048576, \"Total Allocated\": 2097152}},\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": 50, \"args\":"
    "   {\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 4096, \"Bytes\": 1048576, \"Total Allocated\": 1048576}},\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": 120, \"args\":"
    "   {\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 8192000, \"Bytes\": 2097152, \"Total Allocated\": 3145728}},\n"
    "  {\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 9, \"tid\": 9, \"ts\": 125, \"args\":"
    "   {\"Device Type\": 0, \"Device Id\": -1, \"Addr\": 77, \"Bytes\": 999, \"Total Allocated\": 999}},\n"
    "  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 9, \"tid\": 9, \"args\": {\"name\": \"trainer\"}}\n"
    " ]}\n";

TEST_IMPL(kineto_model_hand_worked_breakdown)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/hand.json", ctt_tmpdir());
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputs(hand, f);
    ASSERT_INT(fclose(f), ==, 0);
    tj *s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.rank"), ==, 2);
    ASSERT_STR(tj_str(s, "processes.0.devices.0.name"), "Hand GPU");
    ASSERT_INT(tj_num(s, "processes.0.devices.0.memory_bytes"), ==, 1073741824);
    const tj *b = tj_path(s, "breakdown.0");
    ASSERT(b);
    ASSERT_INT(tj_num(b, "window_ns"), ==, 160000);
    ASSERT_INT(tj_num(b, "gpu_busy_ns"), ==, 40000);
    ASSERT_INT(tj_num(b, "gpu_idle_ns"), ==, 120000);
    ASSERT_INT(tj_num(b, "idle_in_api_ns"), ==, 10000);
    ASSERT_INT(tj_num(b, "idle_blocked_ns"), ==, 10000);
    ASSERT_INT(tj_num(b, "idle_host_unknown_ns"), ==, 100000);
    ASSERT(tj_path(b, "idle_host_compute_ns") && tj_path(b, "idle_host_compute_ns")->type == TJ_NULL);
    ASSERT(tj_path(b, "idle_host_wait_ns") && tj_path(b, "idle_host_wait_ns")->type == TJ_NULL);
    ASSERT_INT(tj_num(b, "gaps.host.count"), ==, 2);
    ASSERT_INT(tj_num(b, "gaps.host.total_ns"), ==, 45000 + 45000);
    ASSERT_INT(tj_num(b, "gaps.after-sync.count"), ==, 0);
    ASSERT_INT(tj_num(b, "gaps.after-sync.total_ns"), ==, 30000);
    ASSERT_INT(tj_num(s, "processes.0.launch_queue.kernels"), ==, 2);
    ASSERT_INT(tj_num(s, "processes.0.launch_queue.max_ns"), ==, 15000);
    ASSERT_INT(tj_num(s, "processes.0.launch_queue.avg_ns"), ==, 12500);
    const tj *k1 = tj_find(tj_get(s, "kernels"), "name", "k1");
    ASSERT(k1);
    ASSERT_INT(tj_num(k1, "instances"), ==, 1);
    ASSERT_INT(tj_num(k1, "total_ns"), ==, 20000);
    ASSERT_INT(tj_num(k1, "launch_calls_ns"), ==, 5000);
    ASSERT_INT(tj_num(tj_find(tj_get(s, "kernels"), "name", "k2"), "grid.0"), ==, 2);
    const tj *cp = tj_at(tj_get(s, "copies"), 0);
    ASSERT_STR(tj_str(cp, "op"), "H2D");
    ASSERT_STR(tj_str(cp, "host_kind"), "pinned");
    ASSERT_INT(tj_num(cp, "bytes"), ==, 1048576);
    ASSERT_INT(tj_num(cp, "total_ns"), ==, 10000);
    const tj *sync = tj_find(tj_get(s, "api"), "name", "cudaStreamSynchronize");
    ASSERT(sync);
    ASSERT_INT(tj_num(sync, "calls"), ==, 1);
    ASSERT_INT(tj_num(sync, "total_ns"), ==, 30000);
    const tj *it = tj_find(tj_path(s, "nvtx.iterations"), "name", "ProfilerStep##");
    ASSERT(it);
    ASSERT_INT(tj_num(it, "steps"), ==, 3);
    ASSERT_INT(tj_num(it, "median_ns"), ==, 60000);
    const tj *op = tj_find(tj_path(s, "nvtx.ranges"), "name", "aten::cpu_work");
    ASSERT(op);
    ASSERT_STR(tj_str(op, "domain"), "cpu_op");
    ASSERT_INT(tj_num(op, "host_total_ns"), ==, 60000);
    ASSERT_UINT(tj_len(s, "vram"), ==, 1);
    ASSERT_INT(tj_num(s, "vram.0.device"), ==, 0);
    ASSERT_INT(tj_num(s, "vram.0.peak_bytes"), ==, 3 << 20);
    ASSERT_INT(tj_num(s, "vram.0.peak_time_ns"), ==, 75000);
    ASSERT_INT(tj_num(s, "vram.0.allocations"), ==, 2);
    ASSERT_INT(tj_num(s, "vram.0.frees"), ==, 1);
    ASSERT_INT(tj_num(s, "vram.0.in_use_at_end_bytes"), ==, 2 << 20);
    ASSERT_INT(tj_num(s, "processes.0.source.memory_events"), ==, 3);
    tj_free(s);
    /* the text says what the trace lacks and does not print computing or waiting as 0 */
    char *argv[] = {(char *)an_cutrace(), "summary", path, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "source: PyTorch profiler (Kineto) trace");
    ASSERT_CONTAINS(p.out, "not in it: the host's CPU time");
    ASSERT_CONTAINS(p.out, "computing or waiting (*)");
    ASSERT(!strstr(p.out, "host outside CUDA, computing  "));
    ASSERT_CONTAINS(p.out, "ended: not in a Kineto trace");
    ASSERT(!strstr(p.err, "no end record"));
    ctt_proc_free(&p);
    /* an older profiler's copy name says the direction only: the host kind stays unknown */
    snprintf(path, sizeof path, "%s/old.json", ctt_tmpdir());
    ASSERT(f = fopen(path, "w"));
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\","
          " \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2, \"args\": {\"correlation\": 4}},"
          " {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": 0, \"tid\": 7,"
          " \"ts\": 4, \"dur\": 3, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 4, \"bytes\": 64}}]}", f);
    ASSERT_INT(fclose(f), ==, 0);
    ASSERT(s = an_summary(path, NULL));
    ASSERT_INT(tj_num(s, "processes.0.source.memcpys_kind_unknown"), ==, 1);
    ASSERT_STR(tj_str(s, "copies.0.op"), "H2D");
    ASSERT_STR(tj_str(s, "copies.0.host_kind"), "none");
    ASSERT_INT(tj_num(s, "copies.0.total_ns"), ==, 3000);
    tj_free(s);
    return 0;
}

/* A program of ours traced by cutrace, written as the profiler would have written it: the GPU
 * side of the analysis (kernel instances and the GPU time Kineto's intervals hold, copies, busy
 * time, the data-loading gaps) comes back as cutrace's own trace has it. */
TEST_IMPL(kineto_model_round_trip_of_a_traced_program)
{
    char dir[4096], *out = NULL;
    ASSERT(an_trace_workload(dir, "rt", "train_loop --iters 6 --loader-ms 2", NULL, &out));
    free(out);
    static char cmd[1 << 19];
    char kj[4200];
    snprintf(kj, sizeof kj, "%s/as-kineto.json", ctt_tmpdir());
    snprintf(cmd, sizeof cmd, "'%s' dump --time-order '%s' | python3 '%s/to_kineto.py' > '%s'",
             an_cutrace(), dir, AN_KINETO_SCRIPTS, kj);
    ctt_proc p;
    ASSERT_INT(run_sh(&p, cmd), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    tj *a = an_summary(dir, NULL), *b = an_summary(kj, NULL);
    ASSERT(a && b);
    size_t nk = tj_len(a, "kernels");
    ASSERT(nk >= 5);
    ASSERT_UINT(tj_len(b, "kernels"), ==, nk);
    /* the GPU time per kernel: the sum of the GPU intervals as recorded (Kineto's intervals are
     * exact, so no end-bounded estimate applies to them), from the dump */
    for (size_t i = 0; i < nk; i++) {
        const tj *ka = tj_at(tj_get(a, "kernels"), i);
        const tj *kb = tj_find(tj_get(b, "kernels"), "name", tj_str(ka, "name"));
        ASSERT(kb);
        ASSERT_INT(tj_num(kb, "instances"), ==, tj_num(ka, "instances"));
        ASSERT_INT(tj_num(kb, "launch_calls_ns"), >, 0);
    }
    snprintf(cmd, sizeof cmd,
             "'%s' dump --time-order '%s' | awk '$2==\"launch\"{for(i=3;i<=NF;i++)if($i~/^corr=/)c=$i;"
             " k[c]=$0} $2==\"gpu\"&&/kind=1/{for(i=3;i<=NF;i++){if($i~/^corr=/)c=$i; if($i~/^dur=/)d=substr($i,5)}"
             " s+=d; n++} END{print n, s}'",
             an_cutrace(), dir);
    ASSERT_INT(run_sh(&p, cmd), ==, 0);
    double n_gpu = 0, ns_gpu = 0;
    ASSERT_INT(sscanf(p.out, "%lf %lf", &n_gpu, &ns_gpu), ==, 2);
    ctt_proc_free(&p);
    double sum = 0, inst = 0;
    for (size_t i = 0; i < nk; i++) {
        sum += tj_num(tj_at(tj_get(b, "kernels"), i), "total_ns");
        inst += tj_num(tj_at(tj_get(b, "kernels"), i), "instances");
    }
    ASSERT_INT((long long)inst, ==, (long long)n_gpu);
    ASSERT_INT((long long)sum, ==, (long long)ns_gpu);
    ASSERT_UINT(tj_len(b, "copies"), ==, tj_len(a, "copies"));
    for (size_t i = 0; i < tj_len(a, "copies"); i++) {
        const tj *ca = tj_at(tj_get(a, "copies"), i), *cb = tj_at(tj_get(b, "copies"), i);
        ASSERT_STR(tj_str(cb, "op"), tj_str(ca, "op"));
        ASSERT_STR(tj_str(cb, "host_kind"), tj_str(ca, "host_kind"));
        ASSERT_INT(tj_num(cb, "count"), ==, tj_num(ca, "count"));
        ASSERT_INT(tj_num(cb, "bytes"), ==, tj_num(ca, "bytes"));
    }
    ASSERT_INT(tj_num(b, "breakdown.0.gpu_busy_ns"), ==, tj_num(a, "breakdown.0.gpu_busy_ns"));
    ASSERT_INT(tj_num(b, "breakdown.0.window_ns"), ==, tj_num(a, "breakdown.0.window_ns"));
    ASSERT_INT(tj_num(b, "breakdown.0.gpu_idle_ns"), ==, tj_num(a, "breakdown.0.gpu_idle_ns"));
    ASSERT_INT(tj_num(b, "breakdown.0.gaps.data-loading.count"), ==,
               tj_num(a, "breakdown.0.gaps.data-loading.count"));
    ASSERT_INT(tj_num(b, "breakdown.0.gaps.data-loading.total_ns"), ==,
               tj_num(a, "breakdown.0.gaps.data-loading.total_ns"));
    ASSERT_INT(tj_num(b, "processes.0.launch_queue.kernels"), ==, tj_num(a, "processes.0.launch_queue.kernels"));
    tj_free(a);
    tj_free(b);
    return 0;
}
