/* cutrace timeline: valid Trace Event JSON with the expected processes, tracks, events, flows
 * and counters; --pid and --from/--to restrict it; it stays compact (no correlation ids, times
 * with at most 3 decimals, driver calls inside runtime calls only with --driver-calls) and stops
 * at --max-events with a warning. */
#include "an_helpers.h"

#include <math.h>
#include <stdlib.h>

static tj *timeline(const char *dir, const char *extra, char *out_path)
{
    char args[512];
    snprintf(out_path, 4096, "%s/tl.json", ctt_tmpdir());
    snprintf(args, sizeof args, "timeline {} -o %s %s", out_path, extra);
    ctt_proc p;
    if (an_run(&p, args, dir) != 0 || !p.exited || p.code != 0) {
        fprintf(stderr, "timeline failed: %s\n", p.err);
        return NULL;
    }
    ctt_proc_free(&p);
    char *text = ctt_read_file(out_path, NULL), err[256];
    tj *j = text ? tj_parse(text, err, sizeof err) : NULL;
    if (!j)
        fprintf(stderr, "timeline JSON invalid: %s\n", text ? err : "unreadable");
    free(text);
    return j;
}

static int count(const tj *ev, const char *ph, const char *cat, double pid)
{
    int n = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const char *p = tj_str(ev->v[i], "ph"), *c = tj_str(ev->v[i], "cat");
        if (strcmp(p, ph) || (cat && (!c || strcmp(c, cat))) ||
            (!isnan(pid) && tj_num(ev->v[i], "pid") != pid))
            continue;
        n++;
    }
    return n;
}

TEST_IMPL(timeline_trace_event_format)
{
    char dir[4096], out[4096];
    ASSERT(an_gen(dir, "t", "--ranks 2 --iters 5"));
    tj *j = timeline(dir, "", out);
    ASSERT(j);
    const tj *ev = tj_get(j, "traceEvents");
    ASSERT(ev && ev->type == TJ_ARR);
    /* per rank: 150 kernels, 10 copies on stream tracks; 150 + 150 + 10 + 5 + 6 + ... calls */
    ASSERT_INT(count(ev, "X", "kernel", NAN), ==, 2 * 150);
    ASSERT_INT(count(ev, "X", "memory", NAN), ==, 2 * 10);
    ASSERT_INT(count(ev, "s", "launch", NAN), ==, 2 * 160);
    ASSERT_INT(count(ev, "f", "launch", NAN), ==, 2 * 160);
    /* runtime calls only: 150 launches, 10 copies, 5 syncs, 6 allocations and frees per rank */
    ASSERT_INT(count(ev, "X", "cuda_api", NAN), ==, 2 * (150 + 10 + 5 + 6));
    int procs = 0, gpu_tracks = 0, mem_counters = 0, bw = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const tj *e = ev->v[i];
        const char *name = tj_str(e, "name"), *ph = tj_str(e, "ph");
        ASSERT(ph && name);
        if (strcmp(ph, "M"))
            ASSERT(tj_num(e, "ts") >= 0);
        if (!strcmp(ph, "M") && !strcmp(name, "process_name")) {
            procs++;
            ASSERT_CONTAINS(tj_str(e, "args.name"), "node0 pid 100");
        }
        if (!strcmp(ph, "M") && !strcmp(name, "thread_name") && strstr(tj_str(e, "args.name"), "GPU 0 stream"))
            gpu_tracks++;
        if (!strcmp(ph, "C") && !strcmp(name, "GPU 0 memory in use (bytes)"))
            mem_counters++;
        if (!strcmp(ph, "C") && strstr(name, "copy bandwidth"))
            bw++;
        if (!strcmp(ph, "X") && tj_str(e, "cat") && !strcmp(tj_str(e, "cat"), "memory") &&
            tj_num(e, "args.bytes") == 4194304) {
            ASSERT_STR(tj_str(e, "args.src_kind"), "pageable");
            ASSERT_NEAR(tj_num(e, "args.gbps"), 7.977, 0.01);
        }
        if (!strcmp(name, "reduce_batch")) {
            ASSERT_CONTAINS(tj_str(e, "args.grid"), ",1,1"); /* 4, 8 or 16 blocks */
            ASSERT_STR(tj_str(e, "args.block"), "256,1,1");
        }
    }
    ASSERT_INT(procs, ==, 2);
    ASSERT_INT(gpu_tracks, ==, 2 * 2);
    ASSERT_INT(mem_counters, ==, 2 * 6); /* 3 allocations and 3 frees per rank */
    ASSERT_INT(bw, ==, 2 * 2 * 10);
    tj_free(j);
    /* compact: no correlation ids, integer microseconds or at most 3 decimals */
    char *text = ctt_read_file(out, NULL);
    ASSERT(text);
    ASSERT(!strstr(text, "\"corr\""));
    ASSERT(!strstr(text, ".000"));
    for (const char *q = text; (q = strstr(q, "\"ts\":")); q += 5) {
        const char *dot = q + 5;
        while (*dot == '-' || (*dot >= '0' && *dot <= '9'))
            dot++;
        if (*dot == '.') {
            size_t dec = strspn(dot + 1, "0123456789");
            ASSERT(dec >= 1 && dec <= 3 && dot[dec] != '0');
        }
    }
    free(text);
    /* python's parser agrees, when python is here */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "command -v python3 >/dev/null || exit 0; python3 -m json.tool %s >/dev/null", out);
    char *argv[] = {"sh", "-c", cmd, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    /* the driver calls nested in the launches, on request */
    j = timeline(dir, "--driver-calls", out);
    ASSERT(j);
    ASSERT_INT(count(tj_get(j, "traceEvents"), "X", "cuda_api", NAN), ==, 2 * (150 * 2 + 10 + 5 + 6));
    tj_free(j);
    /* --max-events: the first N events at most (metadata aside), and a warning saying where it stopped */
    char args[4300];
    snprintf(args, sizeof args, "timeline {} -o %s --max-events 100", out);
    ctt_proc mp;
    ASSERT_INT(an_run(&mp, args, dir), ==, 0);
    ASSERT_INT(mp.code, ==, 0);
    ASSERT_CONTAINS(mp.err, "warning: stopped at 100 events (--max-events), at ");
    ctt_proc_free(&mp);
    text = ctt_read_file(out, NULL);
    ASSERT(text);
    char err[256];
    j = tj_parse(text, err, sizeof err);
    free(text);
    ASSERT(j);
    ev = tj_get(j, "traceEvents");
    size_t nonmeta = 0;
    for (size_t i = 0; i < ev->n; i++)
        nonmeta += strcmp(tj_str(ev->v[i], "ph"), "M") != 0;
    /* whole items only: a GPU interval comes with up to 4 more events (flow, bandwidth) */
    ASSERT_UINT(nonmeta, <=, 100);
    ASSERT_UINT(nonmeta, >=, 96);
    tj_free(j);
    /* one process only */
    j = timeline(dir, "--pid 1001", out);
    ASSERT(j);
    ev = tj_get(j, "traceEvents");
    ASSERT_INT(count(ev, "X", "kernel", 2), ==, 150);
    ASSERT_INT(count(ev, "X", "kernel", 1), ==, 0);
    tj_free(j);
    /* a window: the first 100 ms hold the first 4 or 5 iterations' work of both ranks */
    j = timeline(dir, "--from 0 --to 60", out);
    ASSERT(j);
    ev = tj_get(j, "traceEvents");
    int k = count(ev, "X", "kernel", NAN);
    ASSERT(k > 0 && k < 2 * 150);
    tj_free(j);
    return 0;
}
