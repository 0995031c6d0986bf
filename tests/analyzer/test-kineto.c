/* Kineto (PyTorch profiler) traces: the `hta` block against HTA's own numbers on real GPU traces
 * (tests/analyzer/kineto/hta-reference.txt), against figures worked out by hand on small traces
 * that exercise each of HTA's rules, and the reader's errors on broken documents. */
#include "an_helpers.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

#define write_tmp(path, name, text) an_write_tmp(path, name, text, strlen(text))
#define shared_trace(path, prefix) an_prefixed_file(path, AN_KINETO_DATA, prefix)

TEST_IMPL(kineto_hta_matches_hta_on_real_traces)
{
    DIR *probe = opendir(AN_KINETO_DATA);
    if (!probe)
        ctt_skip("the Kineto traces are not present (../shared/data/kineto-hta)");
    closedir(probe);
    FILE *ref = fopen(AN_KINETO_REF, "r");
    ASSERT(ref);
    char line[1024];
    int traces = 0, without = 0;
    while (fgets(line, sizeof line, ref)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char name[256], rank[32];
        double idle_us, comp_us, non_us, kt_us, idle_pct, comp_pct, non_pct;
        ASSERT_INT(sscanf(line, "%255s %31s", name, rank), ==, 2);
        char path[4096];
        ASSERT_INT(shared_trace(path, name), ==, 0);
        tj *s = an_summary(path, NULL);
        ASSERT(s);
        ASSERT_STR(tj_str(s, "input"), "kineto");
        ASSERT_UINT(tj_len(s, "hta.ranks"), ==, 1);
        if (!strcmp(rank, "none")) {
            ASSERT_INT(tj_num(s, "hta.ranks.0.kernels"), ==, 0);
            ASSERT_CONTAINS(tj_str(s, "hta.ranks.0.message"), "no GPU kernels");
            ASSERT(!tj_path(s, "hta.ranks.0.idle_pct"));
            without++;
        } else {
            ASSERT_INT(sscanf(line, "%*s %*s %lf %lf %lf %lf %lf %lf %lf", &idle_us, &comp_us,
                              &non_us, &kt_us, &idle_pct, &comp_pct, &non_pct),
                       ==, 7);
            ASSERT_INT(tj_num(s, "hta.ranks.0.rank"), ==, atoi(rank));
            ASSERT(!tj_path(s, "hta.ranks.0.message"));
            /* the bound: within 0.5 percentage points of HTA */
            ASSERT_NEAR(tj_num(s, "hta.ranks.0.idle_pct"), idle_pct, 0.5);
            ASSERT_NEAR(tj_num(s, "hta.ranks.0.compute_pct"), comp_pct, 0.5);
            ASSERT_NEAR(tj_num(s, "hta.ranks.0.non_compute_pct"), non_pct, 0.5);
            ASSERT_NEAR(tj_num(s, "hta.ranks.0.kernel_time_ns") / 1e3, kt_us, kt_us * 0.005);
            traces++;
        }
        tj_free(s);
    }
    fclose(ref);
    ASSERT_INT(traces, ==, 3);
    ASSERT_INT(without, ==, 1);
    return 0;
}

/* Rules 1, 2, 4, 5, 6 of analyzer/KINETO.md on a trace small enough to work out by hand:
 *   gemm               [100, 150]  stream 7   compute
 *   ncclDevKernel_...  [120, 180]  stream 8   communication
 *   Memcpy HtoD        [200.4, 210.6] -> [201, 210] (rounded inwards)
 *   relu               [300, 320]  stream 7   compute
 *   fillMemset         [400, 410]  stream 9   compute (HTA 0.5.0 sees Memset only at the start)
 *   ncclAllReduce_sum  [500, 505]  stream 8   compute (no "Kernel" in the name)
 *   waitSync           [600, 610]  stream 9   other (non-compute)
 * and events that must not count: a CPU op (no stream), a "Trace" event, an instant (no dur).
 * Span 100..610 = 510; busy 80 + 9 + 20 + 10 + 5 + 10 = 134, idle 376; compute 50 + 20 + 10 +
 * 5 = 85; the rest, 49 (the NCCL kernel's 30 us past gemm, the copy's 9, waitSync's 10), is
 * non-compute. HTA 0.5.0 gives the same figures for this document. */
static const char flat[] =
    "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 3, \"world_size\": 4},\n"
    " \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU \\u00e9\"}],\n"
    " \"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
    "   \"ts\": 90, \"dur\": 400, \"args\": {\"External id\": 5}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": \"stream 7\","
    "   \"ts\": 100, \"dur\": 50, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1,"
    "   \"grid\": [4, 1, 1], \"block\": [128, 1, 1]}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"ts\": 120,"
    "   \"dur\": 60, \"args\": {\"stream\": 8, \"correlation\": 2}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\","
    "   \"ts\": 200.4, \"dur\": 10.2, \"args\": {\"stream\": 7, \"correlation\": 3, \"bytes\": 4096}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"relu\", \"ts\": 300, \"dur\": 2e1,"
    "   \"args\": {\"stream\": 7, \"correlation\": 4, \"unknown\": [null, true, false, {}]}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"fillMemset\", \"ts\": 400, \"dur\": 10,"
    "   \"args\": {\"stream\": 9, \"correlation\": 5}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclAllReduce_sum\", \"ts\": 500, \"dur\": 5,"
    "   \"args\": {\"stream\": 8, \"correlation\": 6}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"waitSync\", \"ts\": 600, \"dur\": 10,"
    "   \"args\": {\"stream\": 9, \"correlation\": 7}},\n"
    "  {\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"whole\", \"ts\": 0, \"dur\": 9999,"
    "   \"args\": {\"stream\": 7}},\n"
    "  {\"ph\": \"i\", \"cat\": \"kernel\", \"name\": \"marker\", \"ts\": 5000, \"args\": {\"stream\": 7}},\n"
    "  {\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 0, \"ts\": 100, \"cat\": \"ac2g\", \"name\": \"ac2g\"}\n"
    " ]}\n";

/* Rule 3: two ProfilerStep names, so the last step (from ts 250) is dropped: relu, launched at
 * ts 260 by correlation 4, goes; the rest was launched before 250. Span 100..210 = 110, busy
 * 80 + 9 = 89, idle 21, compute 50, non-compute 39 (HTA 0.5.0 agrees). */
static const char stepped[] =
    "{\"traceEvents\": [\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#1\", \"ts\": 0, \"dur\": 250},\n"
    "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#2\", \"ts\": 250, \"dur\": 100},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 95,"
    "   \"dur\": 2, \"args\": {\"correlation\": 1}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"ncclLaunch\", \"ts\": 110,"
    "   \"dur\": 2, \"args\": {\"correlation\": 2}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"ts\": 111,"
    "   \"dur\": 2, \"args\": {\"correlation\": 3}},\n"
    "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 260,"
    "   \"dur\": 2, \"args\": {\"correlation\": 4}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 100, \"dur\": 50,"
    "   \"args\": {\"stream\": 7, \"correlation\": 1}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL\", \"ts\": 120,"
    "   \"dur\": 60, \"args\": {\"stream\": 8, \"correlation\": 2}},\n"
    "  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\","
    "   \"ts\": 200.4, \"dur\": 10.2, \"args\": {\"stream\": 7, \"correlation\": 3}},\n"
    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"relu\", \"ts\": 300, \"dur\": 20,"
    "   \"args\": {\"stream\": 7, \"correlation\": 4}}\n"
    " ]}\n";

static int check_hta(const char *text, const char *name, int rank, int kernels, double span,
                     double idle, double compute, double non_compute)
{
    char path[4096];
    ASSERT(write_tmp(path, name, text));
    tj *s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_STR(tj_str(s, "input"), "kineto");
    ASSERT_INT(tj_num(s, "hta.ranks.0.rank"), ==, rank);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernels"), ==, kernels);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernel_time_ns"), ==, span * 1000);
    ASSERT_INT(tj_num(s, "hta.ranks.0.idle_ns"), ==, idle * 1000);
    ASSERT_INT(tj_num(s, "hta.ranks.0.compute_ns"), ==, compute * 1000);
    ASSERT_INT(tj_num(s, "hta.ranks.0.non_compute_ns"), ==, non_compute * 1000);
    ASSERT_NEAR(tj_num(s, "hta.ranks.0.idle_pct"), 100 * idle / span, 1e-3);
    ASSERT_NEAR(tj_num(s, "hta.ranks.0.compute_pct"), 100 * compute / span, 1e-3);
    ASSERT_NEAR(tj_num(s, "hta.ranks.0.non_compute_pct"), 100 * non_compute / span, 1e-3);
    tj_free(s);
    return 0;
}

TEST_IMPL(kineto_hta_rules_on_hand_worked_traces)
{
    ASSERT_INT(check_hta(flat, "flat.json", 3, 7, 510, 376, 85, 49), ==, 0);
    ASSERT_INT(check_hta(stepped, "stepped.json", 0, 3, 110, 21, 50, 39), ==, 0);
    char path[4096];
    ASSERT(write_tmp(path, "flat.json", flat));
    tj *s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "kineto.0.events"), ==, 11);
    ASSERT_INT(tj_num(s, "kineto.0.devices"), ==, 1);
    tj_free(s);
    return 0;
}

/* A broken document stops the read with the file, the byte offset and what was expected. */
static int check_error(const char *name, const char *text, const char *offset, const char *what)
{
    char path[4096];
    ASSERT(write_tmp(path, name, text));
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary --json {}", path), ==, 0);
    ASSERT_INT(p.code, ==, 3);
    ASSERT_CONTAINS(p.err, path);
    ASSERT_CONTAINS(p.err, offset);
    ASSERT_CONTAINS(p.err, what);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(kineto_reader_errors_name_file_offset_and_expectation)
{
    ASSERT_INT(check_error("trunc.json", "{\"traceEvents\": [{\"ph\": \"X\"", "byte 27:",
                           "expected ',' or '}' in an object, found the end of the file"),
               ==, 0);
    ASSERT_INT(check_error("num.json", "{\"traceEvents\": [{\"ts\": 1.2.3}]}", "byte 24:",
                           "expected a number, found \"1.2.3\""),
               ==, 0);
    ASSERT_INT(check_error("esc.json", "{\"traceEvents\": [{\"name\": \"a\\qb\"}]}", "byte 29:",
                           "expected an escape"),
               ==, 0);
    ASSERT_INT(check_error("tail.json", "{\"traceEvents\": []} x", "byte 20:",
                           "expected the end of the file after the document, found 'x'"),
               ==, 0);
    char deep[200];
    memset(deep, '[', sizeof deep);
    memcpy(deep, "{\"traceEvents\": [], \"x\": ", 25);
    deep[sizeof deep - 1] = '\0';
    ASSERT_INT(check_error("deep.json", deep, "byte 88:", "expected at most 64 nested"), ==, 0);
    return 0;
}

/* A .json.gz cut short: zlib's end of stream is told apart from the end of the document. */
TEST_IMPL(kineto_truncated_gzip_is_named)
{
    char src[4096], path[4096];
    if (shared_trace(src, "ns_resolution_trace") != 0)
        ctt_skip("the Kineto traces are not present (../shared/data/kineto-hta)");
    size_t len;
    char *gz = ctt_read_file(src, &len);
    ASSERT(gz);
    ASSERT_UINT(len, >, 300000);
    snprintf(path, sizeof path, "%s/cut.json.gz", ctt_tmpdir());
    FILE *f = fopen(path, "w");
    ASSERT(f);
    ASSERT_UINT(fwrite(gz, 1, 300000, f), ==, 300000);
    ASSERT_INT(fclose(f), ==, 0);
    free(gz);
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary --json {}", path), ==, 0);
    ASSERT_INT(p.code, ==, 3);
    ASSERT_CONTAINS(p.err, path);
    ASSERT_CONTAINS(p.err, "expected the rest of the gzip stream");
    ctt_proc_free(&p);
    return 0;
}

/* Kineto and cutrace traces in one command are refused; the text form names a kernel-less trace. */
TEST_IMPL(kineto_mixed_inputs_and_text)
{
    char dir[4096], k[4096], t[4200], none[4096];
    ASSERT(an_gen(dir, "t", "--iters 2"));
    snprintf(t, sizeof t, "%s/rank-0.cutrace", dir);
    ASSERT(write_tmp(k, "flat.json", flat));
    char *argv[] = {(char *)an_cutrace(), "summary", k, t, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 2);
    ASSERT_CONTAINS(p.err, "expected either cutrace traces or Kineto traces, found both");
    ctt_proc_free(&p);
    ASSERT(write_tmp(none, "none.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\","
                                         " \"name\": \"aten::add\", \"ts\": 1, \"dur\": 2}]}"));
    char *argv2[] = {(char *)an_cutrace(), "summary", k, none, NULL};
    ASSERT_INT(ctt_run(&p, argv2, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "HTA temporal breakdown");
    ASSERT_CONTAINS(p.out, "73.7%"); /* flat's idle share, 376 of 510 us */
    ASSERT_CONTAINS(p.out, "none.json: no GPU kernels in this trace");
    ctt_proc_free(&p);
    /* cutrace's own JSON beside its traces (a timeline is Chrome-trace JSON too), or named
     * alone, is not taken for a Kineto trace */
    char sum[4200], tl[4200];
    snprintf(sum, sizeof sum, "%s/summary.json", dir);
    snprintf(tl, sizeof tl, "%s/timeline.json", dir);
    FILE *f = fopen(sum, "w");
    ASSERT(f);
    fputs("{\"schema_version\": 2, \"processes\": []}\n", f);
    ASSERT_INT(fclose(f), ==, 0);
    ASSERT(f = fopen(tl, "w"));
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1,"
          " \"dur\": 2, \"args\": {\"stream\": 7}}]}\n", f);
    ASSERT_INT(fclose(f), ==, 0);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT(!tj_path(s, "hta"));
    ASSERT_UINT(tj_len(s, "processes"), ==, 1);
    tj_free(s);
    char *argv3[] = {(char *)an_cutrace(), "summary", sum, NULL};
    ASSERT_INT(ctt_run(&p, argv3, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 3);
    ctt_proc_free(&p);
    return 0;
}

/* A directory is one job, as HTA's trace_dir: its files named *.json or *.gz, every rank, with
 * the last-step filter decided over all of them. Each rank here has one step name, repeated
 * (ProfilerStep#1 at 0 and 200 on rank 0, #2 on rank 1): alone, a file has no filter; together
 * two names, so the kernels launched at 210 go. HTA 0.5.0 on this directory: rank 0 span 50,
 * idle 0, compute 50; rank 1 span 20, idle 0, compute 20. */
#define KJOB_DOC(rank, step, k1, k2)                                                               \
    "{\"distributedInfo\": {\"rank\": " rank "}, \"traceEvents\": ["                               \
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" step "\", \"ts\": 0, \"dur\": 200},"         \
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" step "\", \"ts\": 200, \"dur\": 200},"       \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 10,"         \
    " \"dur\": 2, \"args\": {\"correlation\": 1}},"                                                 \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"ts\": 210,"        \
    " \"dur\": 2, \"args\": {\"correlation\": 2}},"                                                 \
    "{\"ph\": \"X\", " k1 ", \"args\": {\"stream\": 7, \"correlation\": 1}},"                       \
    "{\"ph\": \"X\", " k2 ", \"args\": {\"stream\": 7, \"correlation\": 2}}]}"

TEST_IMPL(kineto_directory_is_one_job)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/job", ctt_tmpdir());
    ASSERT_INT(mkdir(dir, 0755), ==, 0);
    ASSERT(write_tmp(path, "job/rank0.json",
                     KJOB_DOC("0", "ProfilerStep#1",
                              "\"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 20, \"dur\": 50",
                              "\"cat\": \"kernel\", \"name\": \"relu\", \"ts\": 220, \"dur\": 20")));
    ASSERT(write_tmp(path, "job/rank1.json",
                     KJOB_DOC("1", "ProfilerStep#2",
                              "\"cat\": \"kernel\", \"name\": \"k1\", \"ts\": 30, \"dur\": 20",
                              "\"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH\", \"ts\": 230, \"dur\": 30")));
    ASSERT(write_tmp(path, "job/notes.txt", "not a trace"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_UINT(tj_len(s, "hta.ranks"), ==, 2);
    ASSERT_INT(tj_num(s, "hta.ranks.0.rank"), ==, 0);
    ASSERT_INT(tj_num(s, "hta.ranks.0.last_step_dropped"), ==, 1);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernels"), ==, 1);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernel_time_ns"), ==, 50000);
    ASSERT_INT(tj_num(s, "hta.ranks.0.idle_ns"), ==, 0);
    ASSERT_INT(tj_num(s, "hta.ranks.0.compute_ns"), ==, 50000);
    ASSERT_INT(tj_num(s, "hta.ranks.1.rank"), ==, 1);
    ASSERT_INT(tj_num(s, "hta.ranks.1.kernel_time_ns"), ==, 20000);
    ASSERT_INT(tj_num(s, "hta.ranks.1.compute_ns"), ==, 20000);
    /* cutrace's own ranks table has both, each with its own file's GPU work (all of it: the
     * last-step filter is HTA's alone) */
    ASSERT_UINT(tj_len(s, "ranks"), ==, 2);
    ASSERT_INT(tj_num(s, "ranks.0.rank"), ==, 0);
    ASSERT_INT(tj_num(s, "ranks.1.rank"), ==, 1);
    ASSERT_INT(tj_num(s, "breakdown.0.gpu_busy_ns"), ==, 70000);
    ASSERT_INT(tj_num(s, "breakdown.1.gpu_busy_ns"), ==, 50000);
    tj_free(s);
    /* rank 0 alone: one step name, nothing dropped; span 20..240, busy 70 */
    snprintf(path, sizeof path, "%s/rank0.json", dir);
    s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernels"), ==, 2);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernel_time_ns"), ==, 220000);
    ASSERT_INT(tj_num(s, "hta.ranks.0.idle_ns"), ==, 150000);
    tj_free(s);
    return 0;
}
