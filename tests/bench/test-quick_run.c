/* run_bench.py --quick end to end: the harness runs every program, writes results.json with
 * every key the benchmark promises (numbers; null with a reason where a baseline is skipped) and
 * results.md, and the counts it takes from traces are exact. Speed is not asserted. */
#include "ctt.h"
#include "tjson.h"

#include <math.h>
#include <stdlib.h>

/* The keys issue "Benchmarks" requires, numbers in a full run. */
static const char *const bench_keys[] = {
    "launch_ns_untraced", "launch_ns_traced", "launch_ns_traced_gputime",
    "launch_ns_traced_stacks", "launch_ns_floor", "launch_ns_naive_interposer", "launch_ns_lttng",
    "launch_ns_ltrace", "trace_bytes_per_event_lttng", "memcpy_ns_untraced", "memcpy_ns_traced",
    "alloc_ns_untraced", "alloc_ns_traced", "runtime_launch_ns_untraced",
    "runtime_launch_ns_traced", "trace_bytes_per_event", "trace_bytes_per_launch",
    "analyzer_events_per_sec", "analyzer_peak_rss_mb", "timeline_events_per_sec",
    "report_wall_s", "report_bytes",
    "tracer_rss_overhead_mb", "python_sync_ns_stacks_none", "python_sync_ns_stacks_default",
    "nvtx_pair_ns_untraced_static", "nvtx_pair_ns_traced_static", "nvtx_pair_ns_added_static",
    "nvtx_pair_ns_untraced_dynamic", "nvtx_pair_ns_traced_dynamic", "nvtx_pair_ns_added_dynamic",
    "graph_launch_ns_untraced", "graph_launch_ns_traced", "graph_launch_ns_traced_gputime",
    "jobs_events_per_sec_j1", "jobs_events_per_sec_j2", "jobs_speedup_j2", "jobs_peak_rss_mb_j1",
    "jobs_peak_rss_mb_j2", "host_sample_cpu_pct_of_core", "host_sample_us_per_sample",
    "tsample_cpu_pct_of_core_1_threads", "tsample_cpu_pct_of_core_4_threads",
    "tsample_cpu_pct_of_core_2_loader_workers",
    "tsample_wake_floor_pct_of_core", "vs_base_summary_ratio", "vs_base_timeline_ratio", "vs_base_ranks_ratio",
    "vs_base_same_output", NULL};

TEST_IMPL(quick_run_reports_every_key)
{
    const char *out = ctt_tmpdir();
    char *argv[] = {BENCH_PYTHON, BENCH_DRIVER, "--build", (char *)ctt_build(), "--out",
                    (char *)out, "--quick", NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 100), ==, 0);
    if (!p.exited || p.code != 0)
        fprintf(stderr, "run_bench.py: %s%s\n", p.out, p.err);
    ASSERT_INT(p.exited, ==, 1);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "| cuLaunchKernel |");
    ctt_proc_free(&p);

    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/results.json", out);
    char *text = ctt_read_file(path, NULL);
    ASSERT(text != NULL);
    tj *j = tj_parse(text, err, sizeof err);
    free(text);
    if (!j)
        fprintf(stderr, "%s: %s\n", path, err);
    ASSERT(j != NULL);
    for (int i = 0; bench_keys[i]; i++) {
        const tj *v = tj_get(j, bench_keys[i]);
        if (!v)
            fprintf(stderr, "results.json lacks %s\n", bench_keys[i]);
        ASSERT(v != NULL);
        /* --quick skips the LTTng and ltrace baselines: null, and notes say why */
        int skipped = strstr(bench_keys[i], "lttng") || strstr(bench_keys[i], "ltrace");
        ASSERT_INT(v->type, ==, skipped ? TJ_NULL : TJ_NUM);
        /* differences of two runs (memory, the sampler's CPU, a call's cost traced less
         * untraced) may come out at or below 0 */
        if (!skipped && !strstr(bench_keys[i], "rss_overhead") &&
            !strstr(bench_keys[i], "_added_") &&
            strcmp(bench_keys[i], "host_sample_cpu_pct_of_core") &&
            strcmp(bench_keys[i], "host_sample_us_per_sample")) {
            if (!(v->num > 0))
                fprintf(stderr, "results.json: %s is %g, expected above 0\n", bench_keys[i], v->num);
            ASSERT(v->num > 0);
        }
    }
    ASSERT_CONTAINS(tj_str(j, "notes.lttng"), "skipped");
    ASSERT_CONTAINS(tj_str(j, "notes.ltrace"), "skipped");

    /* train_loop --iters 20: 20 x 33 kernels, each one LAUNCH record; nothing lost */
    ASSERT_INT(tj_num(j, "trace_launches"), ==, 660);
    ASSERT_INT(tj_num(j, "trace_lost_records"), ==, 0);
    ASSERT(tj_num(j, "trace_events") > 660);
    /* compressed below the records' own encoding */
    ASSERT(tj_num(j, "trace_bytes_per_event") < tj_num(j, "trace_raw_bytes_per_event"));
    ASSERT_NEAR(tj_num(j, "trace_bytes_per_launch") * 660,
                tj_num(j, "trace_bytes_per_event") * tj_num(j, "trace_events"),
                0.01 * tj_num(j, "trace_file_bytes"));
    /* tracegen asked for 105000 and 10500 events (it sizes its loop to about that); the
     * summary ran on both */
    ASSERT(tj_num(j, "analyzer_trace_events") >= 95000);
    ASSERT(tj_num(j, "analyzer_small_trace_events") >= 9500);
    ASSERT(tj_num(j, "analyzer_small_trace_events") < tj_num(j, "analyzer_trace_events"));
    /* per-call figures of every call and configuration, and a verdict for each goal */
    ASSERT(tj_num(j, "runtime_launch_ns_traced_stacks") > 0);
    ASSERT(tj_num(j, "alloc_ns_floor") > 0);
    /* records lost per call and cutrace mode: 12 entries, none (450 calls fit every buffer) */
    const tj *lost = tj_get(j, "lost_records");
    ASSERT(lost != NULL && lost->type == TJ_OBJ);
    ASSERT_UINT(lost->n, ==, 12);
    for (size_t i = 0; i < lost->n; i++)
        ASSERT_INT(lost->v[i]->num, ==, 0);
    const tj *v = tj_get(j, "verdicts");
    ASSERT(v != NULL && v->type == TJ_OBJ);
    /* 19 goals (section 13's nothing-lost-below-the-sustained-rate the last), one per diagnosis
     * pair (bench_pairs.py), and section 12's two where PyTorch's examples ran (the pytorch
     * suite's virtual environment and NVIDIA's runtime present) */
    int examples = tj_get(j, "examples_imagenet_j0_window_ms") != NULL;
    ASSERT(tj_get(v, "writer_no_loss_below_sustained") != NULL);
    ASSERT_UINT(v->n, ==, 19 + 7 + (examples ? 2 : 0));
    if (examples)
        ASSERT(tj_get(v, "examples_fix_priced") != NULL);
    ASSERT(tj_get(v, "jobs_speedup") != NULL);
    /* 64 ranks of tracegen, each file's records counted */
    ASSERT_INT(tj_num(j, "jobs_files"), ==, 64);
    ASSERT(tj_num(j, "jobs_trace_events") > 64 * 1000);
    ASSERT(tj_get(v, "host_sampling") != NULL);
    ASSERT(tj_get(v, "thread_sampling") != NULL);
    /* section 10 with --quick: the analyzer against itself, on the same traces, same bytes out */
    ASSERT(tj_get(v, "vs_base") != NULL);
    ASSERT_INT(tj_num(j, "vs_base_same_output"), ==, 1);
    ASSERT_CONTAINS(tj_str(j, "notes.vs_base"), "against itself");
    ASSERT(tj_get(v, "report_size_time") != NULL);
    ASSERT(tj_get(v, "python_stack") != NULL);
    ASSERT(tj_get(v, "pair_dataloader_starvation") != NULL);
    ASSERT(tj_num(j, "pair_dataloader_starvation_estimate_ms") > 0);
    /* the overhead of the defaults on train_loop: the three wall times and both ratios */
    ASSERT(tj_num(j, "train_loop_wall_s_untraced") > 0);
    ASSERT(tj_num(j, "train_loop_wall_s_default") > 0);
    ASSERT(tj_num(j, "train_loop_wall_s_gpu_timing_off") > 0);
    ASSERT(tj_get(j, "train_loop_overhead_pct_default") != NULL);
    ASSERT(tj_get(j, "train_loop_overhead_pct_gpu_timing_off") != NULL);
    for (size_t i = 0; i < v->n; i++)
        ASSERT(!strcmp(v->v[i]->str, "pass") || !strcmp(v->v[i]->str, "miss") ||
               !strcmp(v->v[i]->str, "n/a")); /* n/a: the floor added nothing measurable */
    tj_free(j);

    snprintf(path, sizeof path, "%s/results.md", out);
    text = ctt_read_file(path, NULL);
    ASSERT(text != NULL);
    ASSERT_CONTAINS(text, "| cudaLaunchKernel |");
    ASSERT_CONTAINS(text, "trace bytes per event");
    ASSERT_CONTAINS(text, "| dataloader-starvation |");
    ASSERT_CONTAINS(text, "| analyzer vs 58899c6's, CPU time");
    free(text);
    return 0;
}
