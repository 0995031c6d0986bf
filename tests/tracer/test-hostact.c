/* Where the host was, as the summary says it (analyzer/features/cta_hostact.h): pyphases.py
 * (rounds of a 240 ms busy loop in compute(), a 160 ms sleep in wait(), then copies) leaves the
 * GPU idle while it computes and sleeps, and that idle time ends with a host-to-device copy: data
 * loading (a program without PyTorch may load in code of its own, which no frame names). Its host
 * activity names compute() and wait() at their lines, running and sleeping, each for its share of
 * the two phases by the program's own clock, within 5 points; so does the timeline's
 * host-activity track, by the length of its runs, over all three rounds. A forked loader
 * worker's own activity (host_activity_of_loader_workers) is checked the same way. */
#include "an_helpers.h"
#include "tjson.h"
#include "tr.h"
#include "tr_confine.h"

#include <stdlib.h>
#include <string.h>

/* The time the program's own clock gives compute() and wait() in phases from on. */
static void own_time(const tr_phase *ph, size_t nph, size_t from, double own[2])
{
    own[0] = own[1] = 0;
    for (size_t i = from; i < nph; i++)
        for (int k = 0; k < 2; k++)
            if (!strcmp(ph[i].name, k ? "wait" : "compute"))
                own[k] += (double)(ph[i].end - ph[i].start);
}

/* The timeline's runs of the main thread's samples at compute() and wait(): their length in
 * the share the program's own clock gives the phases of all rounds, within 5 points. */
static int timeline_shares(const char *dir, const tr_phase *ph, size_t nph)
{
    char file[4200], e[256];
    snprintf(file, sizeof file, "%s/timeline.json", ctt_tmpdir());
    char *args[] = {"timeline", "-o", file, (char *)dir, NULL};
    free(tr_analyze(args));
    char *text = ctt_read_file(file, NULL);
    ASSERT(text);
    tj *tl = tj_parse(text, e, sizeof e);
    free(text);
    ASSERT(tl);
    const tj *ev = tj_get(tl, "traceEvents");
    ASSERT(ev && ev->type == TJ_ARR);
    double dur[2] = {0, 0}, own[2];
    for (size_t i = 0; i < ev->n; i++) {
        const char *cat = tj_str(ev->v[i], "cat"), *name = tj_str(ev->v[i], "name");
        if (!cat || strcmp(cat, "host_sample") || !strstr(name, "pyphases.py:"))
            continue;
        for (int k = 0; k < 2; k++)
            if (strstr(name, k ? "in wait (sleeping)" : "in compute (running)"))
                dur[k] += tj_num(ev->v[i], "dur");
    }
    own_time(ph, nph, 0, own);
    printf("timeline: compute %.0f us, wait %.0f us; compute %.3f of the phases\n", dur[0],
           dur[1], own[0] / (own[0] + own[1]));
    ASSERT(dur[0] > 0 && dur[1] > 0);
    ASSERT_NEAR(dur[0] / (dur[0] + dur[1]), own[0] / (own[0] + own[1]), 0.05);
    tj_free(tl);
    return 0;
}

/* Runs cmd into out sampled every 2 ms: it exits 0, having printed nph phases "PREFIX phase ..."
 * (into ph). 0, or 1 after a message. */
static int ha_run(ctt_proc *p, const char *out, char *const cmd[], const char *prefix, tr_phase *ph,
                  size_t nph)
{
    char *env[] = {"CUTRACE_THREAD_SAMPLE_US=2000", NULL};
    ASSERT_INT(tr_run(p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(*p, 0);
    ASSERT_UINT(tr_phases_of(p->out, prefix, ph), ==, nph);
    return 0;
}

TEST_IMPL(host_activity_of_the_idle_time)
{
    glob_t g;
    tr_pythons(&g);
    char out[4096];
    snprintf(out, sizeof out, "%s/phases", ctt_tmpdir());
    char *cmd[] = {g.gl_pathv[0], TR_PYPHASES_PY, "3", NULL};
    ctt_proc p;
    tr_phase ph[TR_PHASES];
    size_t nph = 9;
    if (ha_run(&p, out, cmd, "pyphases:", ph, nph))
        return 1;
    /* the phases' own time: the idle gaps hold the second and third rounds' compute and wait
     * (the first round's come before any GPU work) */
    double own[2];
    own_time(ph, nph, 3, own);
    tj *s = an_summary(out, NULL);
    ASSERT(s);
    const tj *acts = tj_path(s, "breakdown.0.gaps.data-loading.host_activity");
    ASSERT(acts && acts->type == TJ_ARR);
    double share[2] = {0, 0};
    for (size_t i = 0; i < acts->n; i++) {
        const char *site = tj_str(acts->v[i], "site");
        for (int k = 0; k < 2; k++)
            if (strstr(site, k ? "in wait" : "in compute") && strstr(site, "pyphases.py:")) {
                share[k] += tj_num(acts->v[i], "share");
                ASSERT_STR(tj_str(acts->v[i], "state"), k ? "sleeping" : "running");
            }
    }
    double want = own[0] / (own[0] + own[1]);
    printf("data-loading: compute %.3f, wait %.3f of the samples; compute %.3f of the phases\n",
           share[0], share[1], want);
    ASSERT_NEAR(share[0], want, 0.05);
    ASSERT_NEAR(share[1], 1 - want, 0.05);
    /* the finding drawn from that time shows the same */
    ASSERT_STR(tj_str(s, "diagnoses.0.id"), "dataloader-starvation");
    ASSERT(tj_path(s, "diagnoses.0.host_activity"));
    tj_free(s);
    ASSERT_INT(timeline_shares(out, ph, nph), ==, 0);
    ctt_proc_free(&p);
    globfree(&g);
    return 0;
}

/* A C program computing in two named native functions between copies (ts_native: 90 ms in
 * ts_hash_rows, 60 ms in ts_sort_keys, a copy before each): where perf_event user-stack sampling
 * is permitted, the summary's host activity of the GPU's idle time names the two functions, each
 * for its share of their time by the program's own clock within 5 points, and says its native
 * stacks came from perf_event. Skipped, saying why, where they could not. */
TEST_IMPL(host_activity_native_functions)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/native", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "ts_native"), "4", NULL};
    ctt_proc p;
    tr_phase ph[TR_PHASES];
    size_t nph = 8;
    if (ha_run(&p, out, cmd, "ts_native:", ph, nph))
        return 1;
    tr_skip_without_perf(out);
    /* the idle gaps hold every phase but the last (after the last copy, no GPU work follows) */
    double own[2] = {0, 0};
    for (size_t i = 0; i + 1 < nph; i++)
        own[strcmp(ph[i].name, "hash") != 0] += (double)(ph[i].end - ph[i].start);
    tj *s = an_summary(out, NULL);
    ASSERT(s);
    const tj *gaps = tj_path(s, "breakdown.0.gaps");
    ASSERT(gaps && gaps->type == TJ_OBJ);
    double in[2] = {0, 0};
    for (size_t g = 0; g < gaps->n; g++) {
        const tj *acts = tj_get(gaps->v[g], "host_activity");
        if (!acts)
            continue;
        ASSERT_STR(tj_str(gaps->v[g], "host_native_stacks"), "perf_event");
        for (size_t i = 0; i < acts->n; i++) {
            const char *site = tj_str(acts->v[i], "site");
            for (int k = 0; k < 2; k++)
                if (!strncmp(site, k ? "ts_sort_keys " : "ts_hash_rows ", 13)) {
                    in[k] += tj_num(acts->v[i], "sampled_ns");
                    ASSERT_STR(tj_str(acts->v[i], "state"), "running");
                }
        }
    }
    double want = own[0] / (own[0] + own[1]), said = in[0] / (in[0] + in[1] + 1e-9);
    printf("idle time: ts_hash_rows %.3f of the two functions' samples, %.3f of their time\n", said,
           want);
    ASSERT(in[0] > 0 && in[1] > 0);
    ASSERT_NEAR(said, want, 0.05);
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}

/* A CPU-bound loader (py_loader_tree --nap-ms: one forked worker making each batch with 40 ms of
 * its CPU in spin_until, then 30 ms asleep in nap; the main process waits for each batch): the
 * data-loading finding's host activity lists what the worker was doing (who: loader workers),
 * spin_until running and nap sleeping, each for its share of the worker's loop by the worker's
 * own wall clock, within 5 points; the main thread's list stays its own (no worker line in it).
 * (Fails with a worker's frames not read again when its state changes: its naps counted as
 * spin_until.) */
TEST_IMPL(host_activity_of_loader_workers)
{
    char out[4096], prog[4096], data[4096];
    snprintf(out, sizeof out, "%s/workers", ctt_tmpdir());
    snprintf(data, sizeof data, "%s/data", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "py_loader_tree"), "--steps", "60", "--main-ms", "2",
                   "--nap-ms", "30", "1", "40", "4096", "0", data, NULL};
    char *env[] = {"CUTRACE_THREAD_SAMPLE_US=2000", NULL};
    ctt_proc p;
    /* favoured (tr_confine.h): the sampler shares the cores with the spinning worker, and a
     * sampler held off the CPU while it spins (beside another suite's simulated device, at
     * real-time priority) under-counts its spin: nap 0.457 of the samples for 0.401 of the loop */
    tr_cgroup g;
    tr_cgroup_favour(&g);
    int rc = tr_run(&p, out, NULL, cmd, env, 120);
    tr_cgroup_leave(&g);
    ASSERT_INT(rc, ==, 0);
    TR_ASSERT_EXIT(p, 0);
    const char *w = strstr(p.err, "worker pid=");
    ASSERT(w != NULL);
    double spin = (double)tr_value(w, "spin_ns"), nap = (double)tr_value(w, "nap_ns");
    double loop = (double)tr_value(w, "loop_ns");
    ASSERT(spin > 0 && nap > 0 && loop >= spin + nap);
    tj *s = an_summary(out, NULL);
    ASSERT(s);
    ASSERT_STR(tj_str(s, "diagnoses.0.id"), "dataloader-starvation");
    const tj *acts = tj_path(s, "diagnoses.0.host_activity");
    ASSERT(acts && acts->type == TJ_ARR);
    double share[2] = {0, 0};
    int workers = 0;
    for (size_t i = 0; i < acts->n; i++) {
        const char *who = tj_str(acts->v[i], "who"), *site = tj_str(acts->v[i], "site");
        if (!who) {
            ASSERT(!strstr(site, "in nap"));
            continue;
        }
        ASSERT_STR(who, "loader workers");
        workers++;
        for (int k = 0; k < 2; k++)
            if (strstr(site, k ? "in nap" : "in spin_until") && strstr(site, "py_loader_tree:")) {
                share[k] += tj_num(acts->v[i], "share");
                ASSERT_STR(tj_str(acts->v[i], "state"), k ? "sleeping" : "running");
            }
    }
    printf("loader workers: spin_until %.3f, nap %.3f of their samples; %.3f, %.3f of their loop\n",
           share[0], share[1], spin / loop, nap / loop);
    ASSERT(workers > 0);
    ASSERT_NEAR(share[0], spin / loop, 0.05);
    ASSERT_NEAR(share[1], nap / loop, 0.05);
    ASSERT(tj_num(s, "diagnoses.0.worker_sampled_ns") > 0);
    tj_free(s);
    ctt_proc_free(&p);
    return 0;
}
