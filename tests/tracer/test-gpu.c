/* GPU timing: every kernel and copy of train_loop gets a GPU interval from its event pair, on
 * the host clock; kernel durations match the simulation's modelled ones (FAKECUDA_KERNEL_NS),
 * and the batch copy, queued on an idle stream after the loader's host gap, starts on the GPU
 * while its API call runs (the GPU start is placed on the host clock). */
#include "tr.h"

#define ITERS 4
#define LAYERS 2
#define KERNELS (ITERS * (5 * LAYERS + 3))

static int gpu_check(const char *mode, int expect_all)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/%s", ctt_tmpdir(), mode);
    char *opts[] = {"--gpu-timing", (char *)mode, NULL};
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--iters", "4", "--loader-ms", "5",
                   "--layers", "2", "--memory", "pinned", NULL};
    char *env[] = {"FAKECUDA_KERNEL_NS=forward_relu=300000,sgd_update=150000", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, opts, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.stats[0].lost, ==, 0);
    size_t kernels = 0, copies = 0, relu = 0, sgd = 0, exact = 0;
    size_t batches = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *g = &t.v[i].r;
        if (g->type != CT_REC_GPU)
            continue;
        ASSERT(g->ts >= g->u.gpu.start);
        const tr_rec *api = tr_api(&t, g->u.gpu.corr);
        ASSERT(api != NULL);
        /* Work cannot start before it was issued (5 us for the anchor's uncertainty). */
        ASSERT(g->u.gpu.start + 5000 >= api->r.u.api.start);
        if (g->u.gpu.kind == CT_GPU_KERNEL) {
            kernels++;
            for (size_t j = 0; j < t.n; j++) {
                const tr_rec *l = &t.v[j];
                if (l->r.type != CT_REC_LAUNCH || l->r.u.launch.corr != g->u.gpu.corr)
                    continue;
                double us = (double)(g->ts - g->u.gpu.start) / 1000.0;
                if (strstr(l->symbol, "forward_relu")) {
                    relu++;
                    exact += us > 298.0 && us < 302.0;
                } else if (strstr(l->symbol, "sgd_update")) {
                    sgd++;
                    exact += us > 148.0 && us < 152.0;
                }
            }
        } else if (g->u.gpu.kind == CT_GPU_MEMCPY) {
            copies++;
            if (!strcmp(api->name, "cuMemcpyHtoDAsync_v2") && g->ts - g->u.gpu.start > 50000) {
                /* within 10 us of the call (the anchor's and the events' uncertainty) */
                ASSERT_UINT(g->u.gpu.start + 10000, >=, api->r.u.api.start);
                ASSERT_UINT(g->u.gpu.start, <=, api->r.ts + 10000);
                batches++;
            }
        }
    }
    if (expect_all)
        ASSERT_UINT(batches, ==, ITERS);
    if (expect_all) {
        ASSERT_UINT(kernels, ==, KERNELS);
        ASSERT_UINT(relu, ==, ITERS * LAYERS);
        ASSERT_UINT(sgd, ==, ITERS * LAYERS);
        /* Within 2 us of the modelled duration. A host preempted between the start event and
         * the launch on an idle stream lengthens one measurement (the GPU did wait for it):
         * allow one such in the run. */
        ASSERT_UINT(exact + 1, >=, relu + sgd);
        ASSERT_UINT(copies, ==, 2 * ITERS + 1);
    } else {
        /* 1 in 4 of the kernels, copies and sets. */
        ASSERT_UINT(kernels + copies, >=, (KERNELS + 2 * ITERS + 1) / 4 - 1);
        ASSERT_UINT(kernels + copies, <=, (KERNELS + 2 * ITERS + 1) / 4 + 1);
    }
    /* A LAUNCH or COPY is flagged untimed exactly when no GPU record (and no LOSS) follows:
     * the analyzer stops waiting for it on that word. */
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *d = &t.v[i].r;
        if (d->type != CT_REC_LAUNCH && d->type != CT_REC_COPY)
            continue;
        uint64_t corr = d->type == CT_REC_LAUNCH ? d->u.launch.corr : d->u.copy.corr;
        int untimed = d->type == CT_REC_LAUNCH ? !!(d->u.launch.flags & CT_LAUNCH_UNTIMED)
                                               : !!(d->u.copy.flags & CT_COPY_UNTIMED);
        int timed = 0;
        for (size_t j = 0; j < t.n && !timed; j++)
            timed = t.v[j].r.type == CT_REC_GPU && t.v[j].r.u.gpu.corr == corr;
        if (d->type == CT_REC_COPY && d->u.copy.dir == CT_DIR_HTOH)
            continue; /* no GPU work, nothing to time */
        ASSERT_INT(untimed, ==, !timed);
    }
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(gpu_timing_all)
{
    return gpu_check("all", 1);
}

TEST_IMPL(gpu_timing_one_in_four)
{
    return gpu_check("4", 0);
}

/* GPU records of a short train_loop under `cutrace run` with opts (NULL: the defaults). */
static int gpu_count(const char *dir, char *const opts[], size_t *gpu)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/%s", ctt_tmpdir(), dir);
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--iters", "2", "--loader-ms", "1",
                   NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, opts, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 2 * 33);
    *gpu = tr_count(&t, CT_REC_GPU, NULL);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* With --gpu-timing off no event is recorded and no GPU record written. */
TEST_IMPL(gpu_timing_off)
{
    char *opts[] = {"--gpu-timing", "off", NULL};
    size_t gpu;
    ASSERT_INT(gpu_count("off", opts, &gpu), ==, 0);
    ASSERT_UINT(gpu, ==, 0);
    return 0;
}

/* Without options every kernel and copy is timed: 33 kernels and 2 copies per iteration, and
 * the final read-back of the loss. */
TEST_IMPL(gpu_timing_default)
{
    size_t gpu;
    ASSERT_INT(gpu_count("default", NULL, &gpu), ==, 0);
    ASSERT_UINT(gpu, ==, 2 * 33 + 2 * 2 + 1);
    return 0;
}

/* driver_api destroys its context (cuCtxDestroy) right after its last copy, and the context's
 * events go with it: their timings must be collected before, in every run. 20 runs with the
 * default options: no GPU timing lost, and every kernel and copy has its GPU record (4 launches,
 * 2 H2D, 1 D2H). */
TEST_IMPL(gpu_timing_context_destroyed)
{
    for (int run = 0; run < 20; run++) {
        char prog[4096], out[4096];
        snprintf(out, sizeof out, "%s/run%d", ctt_tmpdir(), run);
        char *cmd[] = {(char *)tr_workload(prog, "driver_api"), NULL};
        ctt_proc p;
        ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
        TR_ASSERT_EXIT(p, 0);
        tr_trace t;
        ASSERT_INT(tr_load(&t, out), ==, 0);
        ASSERT_UINT(t.stats[0].lost, ==, 0);
        ASSERT_UINT(tr_count(&t, CT_REC_LOSS, NULL), ==, 0);
        size_t kernels = 0, copies = 0;
        for (size_t i = 0; i < t.n; i++)
            if (t.v[i].r.type == CT_REC_GPU) {
                kernels += t.v[i].r.u.gpu.kind == CT_GPU_KERNEL;
                copies += t.v[i].r.u.gpu.kind == CT_GPU_MEMCPY;
            }
        ASSERT_UINT(kernels, ==, 4);
        ASSERT_UINT(copies, ==, 3);
        tr_free(&t);
        ctt_proc_free(&p);
    }
    return 0;
}

/* A graph captured from a stream in global mode while GPU timing is on (the default) and other
 * work is being timed (tests/tracer/capture.c): the capture must succeed with exactly the
 * program's 3 kernels (an event recorded into it, a query of a captured event, or a query made
 * by the harvester in global mode while "slow" is pending would each invalidate it). The
 * captured launches are flagged and have no GPU record; the kernel launched on another stream
 * during the capture, "slow", both graph launches and the kernel launched just before the
 * primary context's last release (its events die with it) do. */
TEST_IMPL(gpu_timing_stream_capture)
{
    char prog[4096], out[4096], mod[4096];
    snprintf(out, sizeof out, "%s/capture", ctt_tmpdir());
    snprintf(mod, sizeof mod, "%s/capture.module", ctt_tmpdir());
    FILE *f = fopen(mod, "w");
    ASSERT(f != NULL);
    fputs("fakecuda-module 1\nkernel slow\nkernel step\n", f);
    fclose(f);
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/capture"), mod, NULL};
    char *env[] = {"FAKECUDA_KERNEL_NS=slow=400000000", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.out, "capture: nodes=3 graph_launches=2 end=0");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_LOSS, NULL), ==, 0);
    size_t captured = 0, timed_step = 0, graphs = 0, slow = 0;
    for (size_t i = 0; i < t.n; i++) {
        const tr_rec *l = &t.v[i];
        if (l->r.type != CT_REC_LAUNCH)
            continue;
        size_t gpu = 0;
        for (size_t j = 0; j < t.n; j++)
            gpu += t.v[j].r.type == CT_REC_GPU && t.v[j].r.u.gpu.corr == l->r.u.launch.corr;
        if (l->r.u.launch.flags & CT_LAUNCH_CAPTURED) {
            ASSERT_STR(l->name, "step");
            ASSERT_UINT(gpu, ==, 0);
            captured++;
            continue;
        }
        ASSERT_UINT(gpu, ==, 1);
        timed_step += !strcmp(l->name, "step");
        graphs += !strcmp(l->name, "[CUDA graph]");
        slow += !strcmp(l->name, "slow");
    }
    ASSERT_UINT(captured, ==, 3);
    ASSERT_UINT(timed_step, ==, 2);
    ASSERT_UINT(graphs, ==, 2);
    ASSERT_UINT(slow, ==, 1);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* An operation whose timing cannot be had is named in the trace: the driver refuses the
 * tracer's first event record (FAKECUDA_FAIL), the start event of driver_api's first copy. That
 * copy gets a LOSS record of its own (GPU timing, count 1, its call's correlation id, why: the
 * record failed) and no GPU record; every other kernel and copy has its GPU record. */
TEST_IMPL(gpu_timing_loss_names_the_call)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/fail", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "driver_api"), NULL};
    char *env[] = {"FAKECUDA_FAIL=cuEventRecord:1:1", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.stats[0].lost, ==, 1);
    const ct_rec *loss = NULL, *first_copy = NULL;
    size_t gpu = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type == CT_REC_LOSS) {
            ASSERT(loss == NULL);
            loss = r;
        } else if (r->type == CT_REC_COPY &&
                   (!first_copy || r->u.copy.corr < first_copy->u.copy.corr)) {
            first_copy = r;
        } else if (r->type == CT_REC_GPU) {
            gpu++;
        }
    }
    ASSERT(loss != NULL && first_copy != NULL);
    ASSERT_UINT(loss->u.loss.reason, ==, CT_LOSS_GPU_TIMING);
    ASSERT_UINT(loss->u.loss.count, ==, 1);
    ASSERT_UINT(loss->u.loss.corr, ==, first_copy->u.copy.corr);
    ASSERT_UINT(loss->u.loss.why, ==, CT_GPU_LOST_RECORD_FAILED);
    ASSERT_UINT(loss->u.loss.tid, ==, tr_api(&t, first_copy->u.copy.corr)->r.tid);
    ASSERT_UINT(gpu, ==, 4 + 3 - 1);
    for (size_t i = 0; i < t.n; i++)
        ASSERT(t.v[i].r.type != CT_REC_GPU || t.v[i].r.u.gpu.corr != loss->u.loss.corr);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* A burst faster than the writer's period: 64 threads each issue 3000 memsets back to back
 * (instant simulation) with the default options. Every one is timed: the threads' event stashes
 * are refilled as the writer harvests, woken when one runs low. */
TEST_IMPL(gpu_timing_burst_loses_nothing)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/burst", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "stress", "64", "3000", NULL};
    char *env[] = {"FAKECUDA_INSTANT=1", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.stats[0].lost, ==, 0);
    size_t sets = 0;
    for (size_t i = 0; i < t.n; i++)
        sets += t.v[i].r.type == CT_REC_GPU && t.v[i].r.u.gpu.kind == CT_GPU_MEMSET;
    ASSERT_UINT(sets, ==, 64 * 3000);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
