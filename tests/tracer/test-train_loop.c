/* train_loop under `cutrace run`: every launch, copy, allocation and synchronization the
 * workload states (tests/workloads/train_loop.cu) is in the trace, with kernel names, copy
 * directions, sizes and host memory kinds, and each driver call nests in the runtime call the
 * program made (nvcc's __cudaLaunchKernel, cudaMemcpyAsync, ...). */
#include "tr.h"

#define ITERS 5
#define LAYERS 6
#define BATCH 4194304

static int check(const char *memory, unsigned host_kind, const char *loader)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/%s", ctt_tmpdir(), memory);
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--iters", "5", "--loader-ms", "5",
                   "--memory", (char *)memory, "--loader", (char *)loader, "--verify", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.err, "cutrace: 1 trace file in");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_INT(t.nfiles, ==, 1);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(t.stats[0].lost, ==, 0);

    /* Kernels: 5L+3 per iteration, names from the module, demangled, mangled kept. */
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, ITERS * (5 * LAYERS + 3));
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, "reduce_batch"), ==, ITERS);
    size_t fwd = 0, sgd = 0, launches_in_runtime = 0;
    for (size_t i = 0; i < t.n; i++) {
        const tr_rec *x = &t.v[i];
        if (x->r.type != CT_REC_LAUNCH)
            continue;
        if (!strcmp(x->symbol, "_ZN2nn14forward_linearIfEEvPT_PKS1_S4_i")) {
            fwd++;
            ASSERT_CONTAINS(x->name, "nn::forward_linear<float>(");
        }
        sgd += !strcmp(x->symbol, "_ZN2nn10sgd_updateIfEEvPT_PKS1_i");
        ASSERT_UINT(x->r.u.launch.block[0], ==, 256);
        const tr_rec *api = tr_api(&t, x->r.u.launch.corr);
        ASSERT(api != NULL);
        ASSERT(api->r.u.api.flags & CT_API_DRIVER);
        const tr_rec *parent = tr_api(&t, api->r.u.api.parent);
        if (parent && !strcmp(parent->name, "__cudaLaunchKernel"))
            launches_in_runtime++;
    }
    ASSERT_UINT(fwd, ==, ITERS * LAYERS);
    ASSERT_UINT(sgd, ==, ITERS * LAYERS);
    ASSERT_UINT(launches_in_runtime, ==, ITERS * (5 * LAYERS + 3));
    ASSERT_UINT(tr_count(&t, CT_REC_API, "__cudaLaunchKernel"), ==, ITERS * (5 * LAYERS + 3));

    /* Copies: the weights, then per iteration the batch in and the loss out. */
    size_t h2d = 0, d2h = 0, weights = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type != CT_REC_COPY || r->u.copy.op != CT_COPY_MEMCPY)
            continue;
        if (r->u.copy.dir == CT_DIR_HTOD && r->u.copy.bytes == BATCH) {
            h2d++;
            ASSERT_UINT(r->u.copy.src_kind, ==, host_kind);
            ASSERT_UINT(r->u.copy.dst_kind, ==, CT_MEMKIND_DEVICE);
        } else if (r->u.copy.dir == CT_DIR_HTOD && r->u.copy.bytes == LAYERS * 4096) {
            weights++;
        } else if (r->u.copy.dir == CT_DIR_DTOH && r->u.copy.bytes == 4) {
            d2h++;
            ASSERT_UINT(r->u.copy.dst_kind, ==, host_kind);
        }
    }
    ASSERT_UINT(h2d, ==, ITERS);
    ASSERT_UINT(d2h, ==, ITERS);
    ASSERT_UINT(weights, ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cudaMemcpyAsync"), ==, 2 * ITERS);

    /* Device allocations: 7 of 4300804 bytes in all, each freed. */
    uint64_t bytes = 0, freed = 0;
    size_t allocs = 0, frees = 0, syncs = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type == CT_REC_MEM && r->u.mem.kind == CT_ALLOC_DEVICE) {
            if (r->u.mem.op == CT_MEM_ALLOC) {
                allocs++;
                bytes += r->u.mem.size;
                ASSERT_UINT(r->u.mem.result, ==, 0);
            } else {
                frees++;
                freed += r->u.mem.size;
            }
        }
        if (r->type == CT_REC_SYNC && r->u.sync.kind == CT_SYNC_STREAM) {
            syncs++;
            ASSERT(r->ts >= r->u.sync.start);
        }
    }
    ASSERT_UINT(allocs, ==, 7);
    ASSERT_UINT(bytes, ==, (4 * LAYERS + 2) * 4096 + 4 + BATCH);
    ASSERT_UINT(frees, ==, 7);
    ASSERT_UINT(freed, ==, bytes);
    ASSERT_UINT(syncs, ==, ITERS);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cudaStreamSynchronize"), ==, ITERS);

    /* CPU time read when the thread comes back to CUDA after each loader gap: with a
     * computing loader the thread's CPU time grows by up to the loader's 5 ms per batch (less
     * when the machine is busy and the loader's thread waits for a core). */
    uint64_t first = 0, last = 0;
    size_t readings = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.v[i].r.type == CT_REC_CPU) {
            uint64_t cpu = t.v[i].r.u.cpu.user_ns + t.v[i].r.u.cpu.sys_ns;
            if (!readings++)
                first = cpu;
            last = cpu;
        }
    ASSERT_UINT(readings, >=, ITERS);
    if (!strcmp(loader, "compute"))
        ASSERT_UINT(last - first, >=, (ITERS - 1) * 1000000ull);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(train_loop_pageable)
{
    return check("pageable", CT_MEMKIND_PAGEABLE, "sleep");
}

TEST_IMPL(train_loop_pinned)
{
    return check("pinned", CT_MEMKIND_PINNED, "compute");
}
