/* tracegen: writes realistic synthetic cutrace traces through the format library, for the
 * analyzer's tests and the benchmarks. It simulates a training loop on a modelled H100 and
 * writes what cutrace's tracer would: API calls (runtime calls with a nested driver call), their
 * LAUNCH / COPY / MEM / SYNC details, GPU intervals from a harvester stream, thread CPU-time
 * readings, threads, streams, the device, and an END record. Records are appended in time order
 * per stream and chunks carry exact low-water marks, as the tracer's writer does.
 *
 *   tracegen -o DIR [options]      one file per rank: DIR/rank-R.cutrace
 *   tracegen -o DIR --random SEED  1-3 processes of random shape: DIR/random-P.cutrace
 *                                  (tracegen_random.c; for the differential tests, tests/refmodel);
 *                                  with --gpu-timing N only the first of every N kernels, copies
 *                                  and sets of a process get a GPU record (0: none); some GPU
 *                                  records are end-bounded (CT_GPU_END_BOUND): 1 in 12, most
 *                                  synchronous copies', and in some processes every launch of
 *                                  one kernel
 *
 * Each iteration: the data loader (--loader-ms, sleeping or computing on the main thread, or
 * hidden by --prefetch), one cudaMemcpyAsync host-to-device of --batch-bytes from pageable or
 * pinned memory (pageable: staged synchronously, the call returns when the copy ends), --kernels
 * launches of --kernel-us each (--sync-every-kernel: cudaDeviceSynchronize after each), then
 * a 4-byte cudaMemcpyAsync device-to-host and cudaStreamSynchronize (the loss). Halfway through
 * the launches the host works --host-us [200] (building the rest of the step), preceded with
 * --sync-copy-bytes B by a synchronous cudaMemcpy device-to-host of B bytes (a metric read back). --churn adds a
 * cudaMalloc/cudaFree of 64 MiB per iteration (cudaFree waits for the device). --stall-ms S makes
 * iteration --iters/2 spend S ms on the host with the GPU idle (an evaluation phase). --oom ends
 * with a failing 100 GiB cudaMalloc. Setup allocates weights (1 GiB), grads (1 GiB) and optimizer
 * state (2 GiB) from distinct call stacks; everything is freed at the end except after --oom.
 * Copies, synchronizations and allocations carry call sites on their API records (as the
 * tracer's default --stacks); --stacks-all adds them to launches (the driver call carries it).
 * --gpu-timing N writes GPU records for the first of every N kernels and copies (0: none), as
 * the tracer's --gpu-timing; --all-end-bounded marks every one end-bounded (its end, the true
 * one, only a bound: as when every launch returned after its kernel); --no-rank leaves RANK out of the environment (a fork tree). Launches
 * call __cudaLaunchKernel, as nvcc 13's code does. --no-cpu-readings leaves out the main thread's
 * CPU-time readings. --graph captures the step's launches and the loss copy into a CUDA graph
 * once (GRAPH records, no node list: the captured LAUNCH and COPY records name its nodes) and
 * runs each step as one graph launch, timed as a whole; --graph-nodes-lost does the same but its
 * instantiation states node records that never arrived (lost), so no launch's nodes are known.
 * --name S names the eighth kernel S and adds S to the command line as its last argument (the
 * report's tests give markup, quotes and invalid UTF-8 there). --nvtx-lost-pops pushes the NVTX
 * range "step" and "inner" inside it 1 ms later before the setup, both pops lost: "step" is
 * pushed again 1 ms after "inner" (ending both) and popped 1 ms after that. --lost N writes, at
 * the setup, a LOSS record of N records lost for buffers full and one of 2N lost while the
 * program had closed the trace's descriptor (reason write failed, why CT_WRITE_LOST_FD). --autotune-ms X
 * begins the run, after the setup, with an algorithm search of X ms as cuDNN's: N trials
 * (--autotune-trials N, 40), each the host computing X / N ms, then a kernel of its own (a name no
 * iteration runs) and a cudaDeviceSynchronize called from cudnnFindConvolutionForwardAlgorithmEx;
 * the loop begins when the last returns (stdout: startup_end_ns, from the trace's start).
 * --distinct-kernels names every launch of the loop apart (no iteration repeats another).
 * --nvtx-steps pushes the NVTX range "step" around each iteration; with --autotune-ms the search
 * is then in the first step, as PyTorch's is (stdout: step1_ns, the second step's push).
 * --lib-load-ms X begins the search with cuDNN's and cuBLAS's loading (libs_load; stdout:
 * cudnn_load_ns, cublas_handle_ns). --samples-ms X samples the main thread every X ms while it works on the host (THREAD_SAMPLE,
 * running, Python frames of /opt/app/train.py): the loader in load_batch (line 30), the step's
 * own work in compute_metrics (24), a stall in checkpoint (36), the search in warm_up (12) under
 * torch's _conv_forward.
 *
 * stdout: "tracegen: key=value ..." lines stating what was written (counts, bytes, peaks,
 * simulated times), for tests to compare with the analyzer's output. */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cttrace.h"
#include "tracegen.h"
#include "wl_shape.h"

typedef struct {
    int iters, kernels, ranks, workers, prefetch, pinned, sync_every_kernel, churn, oom,
        compute_loader, stacks_all, gpu_timing, no_rank, no_cpu, graph, nvtx_lost_pops,
        shape, /* --shape: how the loader's and host's work per iteration vary (wl_shape.h) */
        distinct_kernels, nvtx_steps, all_bounded, lost, autotune_trials;
    double lib_load_ms;
    double loader_ms, kernel_us, launch_us, stall_ms, straggler, host_us, init_ms, autotune_ms,
        samples_ms;
    uint64_t batch_bytes, sync_copy_bytes;
    const char *out, *name;
} gen_opts;


#define GiB (1024ull * 1024 * 1024)
/* --graph's graph and exec handles */
#define GRAPH_HANDLE 0x7e0000001000ull
#define EXEC_HANDLE 0x7e0000002000ull
#define PINNED_BPS 25e9    /* host-to-device from pinned memory */
#define PAGEABLE_BPS 8e9   /* from pageable memory (staged through a bounce buffer) */
#define STREAM_COMPUTE 0x7f0000001000ull
#define STREAM_COPY 0x7f0000002000ull

/* ---- time-ordered emission ------------------------------------------------------------------ */

enum { S_MAIN, S_GPU, S_WORKER0 };
#define MAX_STREAMS 16

typedef struct {
    ct_rec r;
    int stream;
    uint64_t seq;
} pend;

typedef struct {
    ct_writer *w;
    ct_enc enc[MAX_STREAMS];
    uint32_t tid[MAX_STREAMS];
    int nstreams;
    pend *heap;
    size_t n, cap;
    uint64_t seq, records, strings;
    uint64_t corr;
    uint32_t next_id;
    uint64_t first_ts[MAX_STREAMS]; /* time of the first record since the stream's last chunk */
} gen;

_Noreturn void tg_die(const char *what, int rc)
{
    fprintf(stderr, "tracegen: %s: %s\n", what, ct_strerror(rc));
    exit(1);
}

static int before(const pend *a, const pend *b)
{
    return a->r.ts < b->r.ts || (a->r.ts == b->r.ts && a->seq < b->seq);
}

/* Writes stream s's records as a chunk. No record generated from now on is older than `next`;
 * records already encoded but not yet written (in any stream's buffer) start at their stream's
 * first_ts: the low-water mark is the smallest of these. */
static void flush_stream(gen *g, int s, uint64_t next)
{
    uint64_t lw = next;
    for (int k = 0; k < g->nstreams; k++)
        if (g->enc[k].len && g->first_ts[k] < lw)
            lw = g->first_ts[k];
    ct_chunk_info info = {.tid = g->tid[s], .flags = s == S_GPU ? CT_CHUNK_GPU : 0,
                          .low_water = lw};
    int rc = ct_writer_chunk(g->w, &g->enc[s], &info, 1);
    if (rc < 0)
        tg_die("writing a chunk", rc);
}

static void encode(gen *g, int s, const ct_rec *r, uint64_t next)
{
    if (g->enc[s].len == 0)
        g->first_ts[s] = r->ts;
    int rc = ct_enc_rec(&g->enc[s], r);
    if (rc == CT_E_FULL) {
        flush_stream(g, s, next);
        g->first_ts[s] = r->ts;
        rc = ct_enc_rec(&g->enc[s], r);
    }
    if (rc < 0)
        tg_die("encoding a record", rc);
    g->records++;
}

static void push(gen *g, int s, const ct_rec *r)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 1024;
        g->heap = realloc(g->heap, g->cap * sizeof *g->heap);
        if (!g->heap)
            abort();
    }
    size_t i = g->n++;
    pend p = {.r = *r, .stream = s, .seq = g->seq++};
    while (i > 0 && before(&p, &g->heap[(i - 1) / 2])) {
        g->heap[i] = g->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    g->heap[i] = p;
}

/* Encodes every pending record with ts <= upto, in time order. */
static void drain(gen *g, uint64_t upto)
{
    while (g->n && g->heap[0].r.ts <= upto) {
        pend top = g->heap[0];
        pend last = g->heap[--g->n];
        size_t i = 0;
        for (;;) {
            size_t c = 2 * i + 1;
            if (c >= g->n)
                break;
            if (c + 1 < g->n && before(&g->heap[c + 1], &g->heap[c]))
                c++;
            if (!before(&g->heap[c], &last))
                break;
            g->heap[i] = g->heap[c];
            i = c;
        }
        if (g->n)
            g->heap[i] = last;
        encode(g, top.stream, &top.r, top.r.ts);
    }
}

static void flush_all(gen *g, uint64_t now)
{
    drain(g, now);
    for (int s = 0; s < g->nstreams; s++)
        flush_stream(g, s, now);
}

static uint32_t intern(gen *g, int s, uint64_t ts, const char *text)
{
    uint32_t id = ++g->next_id;
    ct_rec r = {.type = CT_REC_STRING, .ts = ts};
    r.u.string = (ct_rec_string){.id = id, .len = (uint32_t)strlen(text), .text = text};
    drain(g, ts);
    encode(g, s, &r, ts);
    g->strings++;
    return id;
}

/* ---- the simulated process ------------------------------------------------------------------ */

typedef struct {
    gen g;
    const gen_opts *o;
    int rank;
    uint64_t now;            /* host time of the main thread */
    uint64_t gpu_free[2];    /* compute and copy streams */
    uint64_t cpu_ns;         /* main thread's cumulative CPU time */
    uint64_t worker_cpu[8];
    double kernel_ns;
    uint32_t s_launch_rt, s_launch_drv, s_memcpy_async, s_memcpy, s_sync_stream, s_sync_dev,
        s_malloc, s_free, s_kernel[8], s_stack[8];
    uint32_t s_capture_begin, s_capture_end, s_instantiate, s_graph_launch, s_graph;
    /* call sites (on API records, as the tracer's default stacks): the batch copy, the loss
     * copy, the metric read-back, the stream and device syncs, launches (--stacks-all) */
    uint32_t site_h2d, site_loss, site_metric, site_sync, site_devsync, site_launch;
    /* --samples-ms: the Python stacks of the host's work (HW_*), the next sample's time */
    uint32_t py_stack[4];
    uint64_t next_sample;
    uint64_t h2d, h2d_bytes, d2h, d2h_bytes, kernels, syncs, mallocs, frees, failed;
    uint64_t graph_launches, graph_kernels, graph_copies; /* --graph */
    uint64_t gpu_ops, gpu_timed, kernels_timed; /* GPU work, and that with a GPU record */
    uint64_t kernel_total_ns;
    uint64_t in_use, peak;
} proc;

static void cpu_reading(proc *p, uint64_t busy_ns)
{
    p->cpu_ns += busy_ns;
    if (p->o->no_cpu)
        return;
    ct_rec r = {.type = CT_REC_CPU, .ts = p->now};
    r.u.cpu = (ct_rec_cpu){.tid = p->g.tid[S_MAIN], .user_ns = p->cpu_ns * 9 / 10,
                           .sys_ns = p->cpu_ns - p->cpu_ns * 9 / 10};
    push(&p->g, S_MAIN, &r);
}

/* What the main thread's host work is, as --samples-ms samples it: the loader, the step's own
 * work, a stall, the start-up's algorithm search */
enum { HW_LOADER, HW_STEP, HW_STALL, HW_TUNE };

/* The main thread works on the host ns from now, busy of it on a CPU (its readings around it),
 * sampled every --samples-ms in the Python stack of what (HW_*) */
static void host_work(proc *p, uint64_t ns, uint64_t busy, int what)
{
    cpu_reading(p, 0);
    uint64_t period = (uint64_t)(p->o->samples_ms * 1e6), end = p->now + ns;
    for (; period && p->next_sample < end; p->next_sample += period) {
        if (p->next_sample < p->now)
            continue;
        ct_rec r = {.type = CT_REC_THREAD_SAMPLE, .ts = p->next_sample};
        r.u.thread_sample = (ct_rec_thread_sample){.tid = p->g.tid[S_MAIN], .state = 'R',
                                                   .stack = p->py_stack[what], .flags = CT_TS_PYTHON};
        push(&p->g, S_MAIN, &r);
    }
    p->now = end;
    cpu_reading(p, busy);
}

/* An API call of the main thread lasting dur from now; returns its correlation id. The runtime
 * call nests a driver call when drv is set, as the real runtime does; the call site (stack id,
 * 0 none) goes on the driver call then, as the tracer records it, else on the call itself. */
static uint64_t api(proc *p, uint32_t fn, uint32_t drv, uint64_t dur, uint32_t result,
                    uint32_t stack)
{
    uint64_t corr = ++p->g.corr, start = p->now;
    if (drv) {
        uint64_t dc = ++p->g.corr;
        ct_rec d = {.type = CT_REC_API, .ts = start + dur - dur / 10};
        d.u.api = (ct_rec_api){.start = start + dur / 10, .function = drv, .corr = dc,
                               .parent = corr, .flags = CT_API_DRIVER, .stack = stack};
        push(&p->g, S_MAIN, &d);
    }
    p->now += dur;
    ct_rec r = {.type = CT_REC_API, .ts = p->now};
    r.u.api = (ct_rec_api){.start = start, .function = fn, .result = result, .corr = corr,
                           .stack = drv ? 0 : stack};
    push(&p->g, S_MAIN, &r);
    return corr;
}

/* GPU work; its GPU record only for the operations --gpu-timing times (the first of every N) */
static void gpu(proc *p, uint64_t corr, int kind, int stream, uint64_t start, uint64_t dur)
{
    p->gpu_free[stream] = start + dur;
    if (p->o->gpu_timing == 0 || p->gpu_ops++ % (uint64_t)p->o->gpu_timing)
        return;
    p->gpu_timed++;
    p->kernels_timed += kind == CT_GPU_KERNEL;
    ct_rec r = {.type = CT_REC_GPU, .ts = start + dur};
    r.u.gpu = (ct_rec_gpu){.start = start, .corr = corr, .device = 0, .kind = (uint32_t)kind,
                           .stream = stream ? STREAM_COPY : STREAM_COMPUTE,
                           .flags = p->o->all_bounded ? CT_GPU_END_BOUND : 0};
    push(&p->g, S_GPU, &r);
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static void sync_rec(proc *p, uint64_t corr, uint32_t kind, uint64_t start, uint64_t end)
{
    ct_rec r = {.type = CT_REC_SYNC, .ts = end};
    r.u.sync = (ct_rec_sync){.start = start, .corr = corr, .kind = kind, .object = STREAM_COMPUTE};
    push(&p->g, S_MAIN, &r);
    p->syncs++;
}


static void launch_fn(proc *p, int k, uint32_t fn)
{
    uint64_t api_start = p->now;
    uint64_t corr = api(p, p->s_launch_rt, p->s_launch_drv, (uint64_t)(p->o->launch_us * 1e3), 0,
                        p->o->stacks_all ? p->site_launch : 0);
    ct_rec l = {.type = CT_REC_LAUNCH, .ts = p->now};
    l.u.launch = (ct_rec_launch){.corr = corr, .function = fn,
                                 .grid = {4u << (k % 3), 1, 1}, .block = {256, 1, 1},
                                 .stream = STREAM_COMPUTE, .device = 0};
    push(&p->g, S_MAIN, &l);
    uint64_t start = max_u64(api_start + 3000, p->gpu_free[0]);
    uint64_t dur = (uint64_t)(p->kernel_ns * (1.0 + 0.1 * (k % 3)));
    gpu(p, corr, CT_GPU_KERNEL, 0, start, dur);
    p->kernels++;
    p->kernel_total_ns += dur;
}

static void launch(proc *p, int k)
{
    launch_fn(p, k, p->s_kernel[k % 8]);
}

/* --graph: a GRAPH record at ts, for the call corr, on the compute stream, stating nodes node
 * records before it. */
static void graph_rec(proc *p, uint64_t ts, uint64_t corr, uint32_t op, uint64_t exec,
                      uint32_t nodes)
{
    ct_rec r = {.type = CT_REC_GRAPH, .ts = ts};
    r.u.graph = (ct_rec_graph){.corr = corr, .op = op, .graph = GRAPH_HANDLE, .exec = exec,
                               .stream = STREAM_COMPUTE, .nodes = nodes};
    push(&p->g, S_MAIN, &r);
}

/* --graph at setup: the step's launches and the loss copy captured from the compute stream into
 * a graph, instantiated with no node list (as a tracer that could not list the graph's nodes
 * writes it): a reader knows the graph's nodes from the captured LAUNCH and COPY records. */
static void capture_graph(proc *p)
{
    uint64_t corr = api(p, p->s_capture_begin, 0, 3000, 0, 0);
    graph_rec(p, p->now, corr, CT_GRAPH_CAPTURE_BEGIN, 0, 0);
    for (int k = 0; k < p->o->kernels; k++) {
        corr = api(p, p->s_launch_rt, p->s_launch_drv, (uint64_t)(p->o->launch_us * 1e3), 0, 0);
        ct_rec l = {.type = CT_REC_LAUNCH, .ts = p->now};
        l.u.launch = (ct_rec_launch){.corr = corr, .function = p->s_kernel[k % 8],
                                     .grid = {4u << (k % 3), 1, 1}, .block = {256, 1, 1},
                                     .stream = STREAM_COMPUTE,
                                     .flags = CT_LAUNCH_CAPTURED | CT_LAUNCH_UNTIMED};
        push(&p->g, S_MAIN, &l);
    }
    corr = api(p, p->s_memcpy_async, 0, 4000, 0, 0);
    ct_rec c = {.type = CT_REC_COPY, .ts = p->now};
    c.u.copy = (ct_rec_copy){.corr = corr, .op = CT_COPY_MEMCPY, .dir = CT_DIR_DTOH, .bytes = 4,
                             .src_kind = CT_MEMKIND_DEVICE, .dst_kind = CT_MEMKIND_PINNED,
                             .flags = CT_COPY_ASYNC | CT_COPY_CAPTURED | CT_COPY_UNTIMED,
                             .stream = STREAM_COMPUTE};
    push(&p->g, S_MAIN, &c);
    corr = api(p, p->s_capture_end, 0, 3000, 0, 0);
    graph_rec(p, p->now, corr, CT_GRAPH_CAPTURE_END, 0, 0);
    corr = api(p, p->s_instantiate, 0, 40000, 0, 0);
    /* --graph-nodes-lost: the node records it states were all lost */
    graph_rec(p, p->now, corr, CT_GRAPH_INSTANTIATE, EXEC_HANDLE,
              p->o->graph == 2 ? (uint32_t)p->o->kernels + 1 : 0);
}

/* --graph: one step as a launch of the captured graph, timed as a whole. */
static void graph_launch(proc *p)
{
    uint64_t start = p->now, corr = p->g.corr + 1; /* the id api() gives the call */
    graph_rec(p, start, corr, CT_GRAPH_LAUNCH, EXEC_HANDLE, 0);
    api(p, p->s_graph_launch, 0, (uint64_t)(p->o->launch_us * 1e3), 0, 0);
    ct_rec l = {.type = CT_REC_LAUNCH, .ts = p->now};
    l.u.launch = (ct_rec_launch){.corr = corr, .function = p->s_graph, .stream = STREAM_COMPUTE,
                                 .flags = CT_LAUNCH_GRAPH};
    push(&p->g, S_MAIN, &l);
    gpu(p, corr, CT_GPU_KERNEL, 0, max_u64(start + 3000, p->gpu_free[0]),
        (uint64_t)(p->kernel_ns * p->o->kernels) + 2000);
    p->graph_launches++;
    p->graph_kernels += (uint64_t)p->o->kernels;
    p->graph_copies++;
}

/* A copy: async or not, from pageable or pinned host memory. */
static void copy(proc *p, uint32_t dir, uint64_t bytes, int async, int pinned, int stream,
                 uint32_t site)
{
    uint64_t start_api = p->now;
    double bps = pinned ? PINNED_BPS : PAGEABLE_BPS;
    uint64_t dur = (uint64_t)((double)bytes / bps * 1e9) + 1500;
    uint64_t gstart = max_u64(start_api + 4000, p->gpu_free[stream]);
    /* a synchronous call, or an async one from pageable memory, returns after the copy */
    int blocks = !async || !pinned;
    uint64_t api_dur = blocks ? gstart + dur + 2000 - start_api : 4000;
    uint64_t corr = api(p, async ? p->s_memcpy_async : p->s_memcpy, 0, api_dur, 0, site);
    ct_rec c = {.type = CT_REC_COPY, .ts = p->now};
    uint32_t host = pinned ? CT_MEMKIND_PINNED : CT_MEMKIND_PAGEABLE;
    c.u.copy = (ct_rec_copy){.corr = corr, .op = CT_COPY_MEMCPY, .dir = dir, .bytes = bytes,
                             .src_kind = dir == CT_DIR_HTOD ? host : CT_MEMKIND_DEVICE,
                             .dst_kind = dir == CT_DIR_HTOD ? CT_MEMKIND_DEVICE : host,
                             .flags = async ? CT_COPY_ASYNC : 0,
                             .stream = stream ? STREAM_COPY : STREAM_COMPUTE};
    push(&p->g, S_MAIN, &c);
    gpu(p, corr, CT_GPU_MEMCPY, stream, gstart, dur);
    if (!async)
        sync_rec(p, corr, CT_SYNC_MEMCPY, start_api, p->now);
    if (dir == CT_DIR_HTOD) {
        p->h2d++;
        p->h2d_bytes += bytes;
    } else {
        p->d2h++;
        p->d2h_bytes += bytes;
    }
}

static void mem(proc *p, int op, uint64_t addr, uint64_t size, uint32_t stack, uint64_t dur,
                uint32_t result)
{
    uint64_t corr = api(p, op == CT_MEM_ALLOC ? p->s_malloc : p->s_free, 0, dur, result, stack);
    ct_rec r = {.type = CT_REC_MEM, .ts = p->now};
    r.u.mem = (ct_rec_mem){.op = (uint32_t)op, .kind = CT_ALLOC_DEVICE, .corr = corr,
                           .address = result ? 0 : addr, .size = size, .device = 0,
                           .result = result, .stack = stack};
    push(&p->g, S_MAIN, &r);
    if (op == CT_MEM_ALLOC && result)
        p->failed++;
    else if (op == CT_MEM_ALLOC) {
        p->mallocs++;
        p->in_use += size;
        if (p->in_use > p->peak)
            p->peak = p->in_use;
    } else {
        p->frees++;
        p->in_use -= size;
    }
}

static void stream_sync(proc *p, uint32_t fn, uint32_t kind, uint32_t site)
{
    uint64_t start = p->now, done = max_u64(p->gpu_free[0], p->gpu_free[1]);
    uint64_t dur = max_u64(done, start) + 3000 - start;
    uint64_t corr = api(p, fn, 0, dur, 0, site);
    sync_rec(p, corr, kind, start + 1000, p->now - 1000);
}

/* The stack of frames fr[0..n), innermost first (their ids given here): its id. */
static uint32_t emit_stack(proc *p, ct_rec_frame *fr, int n)
{
    static uint32_t next_frame, next_stack;
    uint32_t frames[8];
    for (int i = 0; i < n; i++) {
        ct_rec f = {.type = CT_REC_FRAME, .ts = p->now};
        fr[i].id = ++next_frame;
        f.u.frame = fr[i];
        encode(&p->g, S_MAIN, &f, p->now);
        frames[i] = fr[i].id;
    }
    ct_rec s = {.type = CT_REC_STACK, .ts = p->now};
    s.u.stack = (ct_rec_stack){.id = ++next_stack, .nframes = (uint32_t)n, .frames = frames};
    encode(&p->g, S_MAIN, &s, p->now);
    return s.u.stack.id;
}

/* A stack of n frames, innermost first; with `module`, the first frame is in that library (the
 * CUDA function the user called) and the others in the program. */
static uint32_t frame_stack(proc *p, const char *const *fns, int n, const char *module)
{
    ct_rec_frame fr[8];
    for (int i = 0; i < n; i++) {
        const char *mod = module ? i == 0 ? module : "/opt/app/train" : NULL;
        fr[i] = (ct_rec_frame){.function = intern(&p->g, S_MAIN, p->now, fns[i]),
                               .module = mod ? intern(&p->g, S_MAIN, p->now, mod) : 0,
                               .offset = 0x100u * (unsigned)i};
    }
    return emit_stack(p, fr, n);
}

/* A Python stack of n frames "file:function:line", innermost first (--samples-ms). */
static uint32_t py_stack(proc *p, const char *const *frames_text, int n)
{
    ct_rec_frame fr[8];
    for (int i = 0; i < n; i++) {
        char file[128], fn[64];
        unsigned line = 0;
        if (sscanf(frames_text[i], "%127[^:]:%63[^:]:%u", file, fn, &line) != 3)
            abort();
        fr[i] = (ct_rec_frame){.function = intern(&p->g, S_MAIN, p->now, fn),
                               .module = intern(&p->g, S_MAIN, p->now, file),
                               .kind = CT_FRAME_PYTHON, .line = line};
    }
    return emit_stack(p, fr, n);
}

static void nvtx_lost_pops(proc *p)
{
    uint32_t tid = p->g.tid[S_MAIN], step = intern(&p->g, S_MAIN, p->now, "step"),
             inner = intern(&p->g, S_MAIN, p->now, "inner");
    const uint32_t name[3] = {step, inner, step}, depth[3] = {0, 1, 0};
    for (int i = 0; i < 3; i++) {
        if (i)
            p->now += 1000000;
        ct_rec b = {.type = CT_REC_NVTX_BEGIN, .ts = p->now};
        b.u.nvtx_begin = (ct_rec_nvtx_begin){.tid = tid, .kind = CT_NVTX_PUSH_POP, .name = name[i],
                                             .group = name[i], .depth = depth[i]};
        push(&p->g, S_MAIN, &b);
    }
    uint64_t start = p->now;
    p->now += 1000000;
    ct_rec e = {.type = CT_REC_NVTX_RANGE, .ts = p->now};
    e.u.nvtx_range = (ct_rec_nvtx_range){.start = start, .start_tid = tid, .end_tid = tid, .name = step,
                                         .group = step, .kind = CT_NVTX_PUSH_POP};
    push(&p->g, S_MAIN, &e);
}

/* A SHLIB record of a cuDNN library mapped now (--lib-load-ms). */
static void cudnn_mapped(proc *p, const char *path)
{
    ct_rec r = {.type = CT_REC_SHLIB, .ts = p->now};
    r.u.shlib = (ct_rec_shlib){.kind = CT_SHLIB_CUDNN, .path = intern(&p->g, S_MAIN, p->now, path)};
    push(&p->g, S_MAIN, &r);
}

/* --lib-load-ms X: as PyTorch's first convolution and matmul, cuDNN maps its engines' library
 * (the host X ms, then the cuInit of that library's own runtime and its first calls, then its
 * kernels looked up: the tracer finds it mapped) and cuBLAS makes its handle (the host X / 2 ms, untraced) before
 * its first call */
static void libs_load(proc *p)
{
    uint64_t ns = (uint64_t)(p->o->lib_load_ms * 1e6);
    host_work(p, ns, ns, HW_TUNE);
    api(p, intern(&p->g, S_MAIN, p->now, "cuInit"), 0, 2000, 0, 0);
    /* its runtime's first calls, before a kernel lookup makes the tracer look */
    for (int i = 0; i < 3; i++) {
        p->now += 5000;
        api(p, intern(&p->g, S_MAIN, p->now, "cuCtxGetDevice"), 0, 1000, 0, 0);
    }
    p->now += 1000;
    cudnn_mapped(p, "/opt/venv/nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9");
    api(p, intern(&p->g, S_MAIN, p->now, "cuLibraryGetKernel"), 0, 3000, 0, 0);
    host_work(p, ns / 2, ns / 2, HW_TUNE);
    uint64_t start = p->now;
    p->now += 20000;
    ct_rec r = {.type = CT_REC_API, .ts = p->now};
    r.u.api = (ct_rec_api){.start = start, .function = intern(&p->g, S_MAIN, p->now, "cublasSgemm_v2"),
                           .corr = ++p->g.corr, .flags = CT_API_LIBRARY};
    push(&p->g, S_MAIN, &r);
    printf("tracegen: rank=%d cudnn_load_ns=%llu cublas_handle_ns=%llu\n", p->rank,
           (unsigned long long)ns, (unsigned long long)(ns / 2));
}

/* --autotune-ms: the start-up's algorithm search (tracegen's header) */
static void autotune(proc *p)
{
    static const char *const cs_tune[] = {"cudaDeviceSynchronize", "cudnnFindConvolutionForwardAlgorithmEx",
                                          "conv_forward", "main"};
    uint32_t site = frame_stack(p, cs_tune, 4, "/usr/local/cuda/lib64/libcudart.so.13");
    if (p->o->lib_load_ms > 0)
        libs_load(p);
    uint64_t work = (uint64_t)(p->o->autotune_ms * 1e6 / p->o->autotune_trials);
    for (int i = 0; i < p->o->autotune_trials; i++) {
        char name[64];
        snprintf(name, sizeof name, "cudnn_trial_kernel_%d", i);
        uint32_t fn = intern(&p->g, S_MAIN, p->now, name);
        host_work(p, work, work, HW_TUNE);
        launch_fn(p, i, fn);
        stream_sync(p, p->s_sync_dev, CT_SYNC_DEVICE, site);
    }
}

/* --distinct-kernels: launch k of iteration it under a name of its own */
static void launch_distinct(proc *p, int it, int k)
{
    char name[64];
    snprintf(name, sizeof name, "kernel_%d_%d", it, k);
    launch_fn(p, k, intern(&p->g, S_MAIN, p->now, name));
}

static void run_rank(const gen_opts *o, int rank, uint64_t t0)
{
    proc *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    p->o = o;
    p->rank = rank;
    p->now = t0;
    p->kernel_ns = o->kernel_us * 1e3 * (rank == 1 && o->straggler > 0 ? o->straggler : 1.0);
    char path[4096], rankenv[32], hostname[64], cmd[4096];
    snprintf(path, sizeof path, "%s/rank-%d.cutrace", o->out, rank);
    snprintf(rankenv, sizeof rankenv, "RANK=%d", rank);
    snprintf(hostname, sizeof hostname, "node%d", rank / 8);
    int cl = snprintf(cmd, sizeof cmd, "python%ctrain.py%c--rank%c%d%c%s", 0, 0, 0, rank, 0,
                      o->name ? o->name : "");
    if (cl >= (int)sizeof cmd) {
        fprintf(stderr, "tracegen: --name: expected at most %zu bytes, found %zu\n",
                sizeof cmd - 32, strlen(o->name));
        exit(2);
    }
    if (!o->name)
        cl -= 1; /* no empty last argument */
    const char *env[] = {rankenv};
    char opts[64];
    snprintf(opts, sizeof opts, "stacks=default gpu_timing=%d", o->gpu_timing);
    ct_header h = {.hostname = hostname, .pid = 1000u + (unsigned)rank, .ppid = 1,
                   .cmdline = cmd, .cmdline_len = (size_t)cl + 1, .exe = "/usr/bin/python3",
                   .boot_id = "tracegen-boot", .realtime_ns = 1700000000000000000ull,
                   .monotonic_ns = t0, .tracer_version = "tracegen",
                   .tracer_options = opts, .nenv = o->no_rank ? 0 : 1, .env = env};
    gen *g = &p->g;
    int rc = ct_writer_open(&g->w, path, &h, NULL);
    if (rc < 0)
        tg_die(path, rc);
    g->nstreams = 2 + o->workers;
    for (int s = 0; s < g->nstreams; s++) {
        size_t cap = 1u << 20;
        ct_enc_init(&g->enc[s], malloc(cap), cap);
        g->tid[s] = s == S_MAIN ? h.pid : s == S_GPU ? h.pid + 100 : h.pid + (uint32_t)s - 1;
    }
    /* definitions: threads, device, API and kernel names */
    ct_rec r = {.type = CT_REC_THREAD, .ts = p->now};
    r.u.thread = (ct_rec_thread){.tid = g->tid[S_MAIN], .name = intern(g, S_MAIN, p->now, "python")};
    encode(g, S_MAIN, &r, p->now);
    for (int w = 0; w < o->workers; w++) {
        char nm[32];
        snprintf(nm, sizeof nm, "pt_data_worker%d", w);
        r.u.thread = (ct_rec_thread){.tid = g->tid[S_WORKER0 + w], .name = intern(g, S_WORKER0 + w, p->now, nm)};
        encode(g, S_WORKER0 + w, &r, p->now);
    }
    r.u.thread = (ct_rec_thread){.tid = g->tid[S_GPU], .name = intern(g, S_GPU, p->now, "cutrace-gpu"),
                                 .flags = CT_THREAD_TRACER};
    encode(g, S_GPU, &r, p->now);
    ct_rec dev = {.type = CT_REC_DEVICE, .ts = p->now};
    dev.u.device = (ct_rec_device){.device = 0, .name = intern(g, S_MAIN, p->now, "NVIDIA H100 80GB HBM3"),
                                   .cc_major = 9, .sm_count = 132, .clock_khz = 1980000,
                                   .mem_clock_khz = 2619000, .mem_bus_bits = 5120,
                                   .mem_bytes = 85045395456ull, .l2_bytes = 52428800,
                                   .warp_size = 32, .async_engines = 3, .concurrent_kernels = 1,
                                   .link_kind = CT_LINK_PCIE, .link_gen = 5, .link_width = 16};
    encode(g, S_MAIN, &dev, p->now);
    for (int s = 0; s < 2; s++) {
        ct_rec st = {.type = CT_REC_STREAM, .ts = p->now};
        st.u.stream = (ct_rec_stream){.op = CT_STREAM_CREATE, .stream = s ? STREAM_COPY : STREAM_COMPUTE,
                                      .context = 0x5000, .device = 0};
        encode(g, S_MAIN, &st, p->now);
    }
    /* what nvcc 13's code calls for kernel<<<...>>> */
    p->s_launch_rt = intern(g, S_MAIN, p->now, "__cudaLaunchKernel");
    p->s_launch_drv = intern(g, S_MAIN, p->now, "cuLaunchKernel");
    p->s_memcpy_async = intern(g, S_MAIN, p->now, "cudaMemcpyAsync");
    p->s_memcpy = intern(g, S_MAIN, p->now, "cudaMemcpy");
    p->s_sync_stream = intern(g, S_MAIN, p->now, "cudaStreamSynchronize");
    p->s_sync_dev = intern(g, S_MAIN, p->now, "cudaDeviceSynchronize");
    p->s_malloc = intern(g, S_MAIN, p->now, "cudaMalloc");
    p->s_free = intern(g, S_MAIN, p->now, "cudaFree");
    if (o->graph) {
        p->s_capture_begin = intern(g, S_MAIN, p->now, "cudaStreamBeginCapture");
        p->s_capture_end = intern(g, S_MAIN, p->now, "cudaStreamEndCapture");
        p->s_instantiate = intern(g, S_MAIN, p->now, "cudaGraphInstantiate");
        p->s_graph_launch = intern(g, S_MAIN, p->now, "cudaGraphLaunch");
        p->s_graph = intern(g, S_MAIN, p->now, "[CUDA graph]");
    }
    static const char *const kn[8] = {
        "void nn::forward_linear<float>(float*, float const*, float const*, int)",
        "forward_relu(float*, float const*, int)", "loss_forward(float*, float const*, int)",
        "void nn::backward_linear<float>(float*, float*, float const*, float const*, float const*, int)",
        "backward_relu(float*, float const*, float const*, int)",
        "void nn::sgd_update<float>(float*, float const*, int)", "reduce_batch",
        "ampere_sgemm_128x64_nn \"quoted\"\tname \xff\xfe end"};
    for (int k = 0; k < 8; k++)
        p->s_kernel[k] = intern(g, S_MAIN, p->now, k == 7 && o->name ? o->name : kn[k]);
    static const char *const st_w[] = {"alloc_weights", "Model::init", "main"};
    static const char *const st_g[] = {"alloc_grads", "Model::init", "main"};
    static const char *const st_o[] = {"alloc_optimizer", "Optimizer::init", "main"};
    static const char *const st_c[] = {"scratch_alloc", "train_step", "main"};
    static const char *const st_x[] = {"alloc_activations", "train_step", "main"};
    p->s_stack[0] = frame_stack(p, st_w, 3, NULL);
    p->s_stack[1] = frame_stack(p, st_g, 3, NULL);
    p->s_stack[2] = frame_stack(p, st_o, 3, NULL);
    p->s_stack[3] = frame_stack(p, st_c, 3, NULL);
    p->s_stack[4] = frame_stack(p, st_x, 3, NULL);
    static const char *const cs_h2d[] = {"cudaMemcpyAsync", "load_batch", "train_step", "main"};
    static const char *const cs_loss[] = {"cudaMemcpyAsync", "read_loss", "train_step", "main"};
    static const char *const cs_metric[] = {"cudaMemcpy", "read_metric", "train_step", "main"};
    static const char *const cs_sync[] = {"cudaStreamSynchronize", "train_step", "main"};
    static const char *const cs_devsync[] = {"cudaDeviceSynchronize", "run_layer", "train_step",
                                             "main"};
    static const char *const cs_launch[] = {"__cudaLaunchKernel", "run_layer", "train_step", "main"};
    static const char *const rt = "/usr/local/cuda/lib64/libcudart.so.13";
    p->site_h2d = frame_stack(p, cs_h2d, 4, rt);
    p->site_loss = frame_stack(p, cs_loss, 4, rt);
    p->site_metric = frame_stack(p, cs_metric, 4, rt);
    p->site_sync = frame_stack(p, cs_sync, 3, rt);
    p->site_devsync = frame_stack(p, cs_devsync, 4, rt);
    p->site_launch = frame_stack(p, cs_launch, 4, rt);
    if (o->samples_ms > 0) {
        static const char *const py[4][3] = {
            {"/opt/app/train.py:load_batch:30", "/opt/app/train.py:main:52"},
            {"/opt/app/train.py:compute_metrics:24", "/opt/app/train.py:main:55"},
            {"/opt/app/train.py:checkpoint:36", "/opt/app/train.py:main:57"},
            {"/usr/lib/python3/site-packages/torch/nn/modules/conv.py:_conv_forward:454",
             "/opt/app/train.py:warm_up:12", "/opt/app/train.py:main:48"}};
        for (int w = 0; w < 4; w++)
            p->py_stack[w] = py_stack(p, py[w], w == HW_TUNE ? 3 : 2);
    }

    /* setup; --init-ms: the first call creates the context (cudaFree(0)), longer than the
     * analyzer's minimum lag and than every call before it */
    if (o->lib_load_ms > 0) /* linked by the program: mapped before CUDA is first called */
        cudnn_mapped(p, "/opt/venv/nvidia/cudnn/lib/libcudnn.so.9");
    if (o->init_ms > 0)
        api(p, p->s_free, 0, (uint64_t)(o->init_ms * 1e6), 0, 0);
    if (o->nvtx_lost_pops)
        nvtx_lost_pops(p);
    for (int i = 0; o->lost && i < 2; i++) {
        ct_rec l = {.type = CT_REC_LOSS, .ts = p->now};
        l.u.loss = (ct_rec_loss){.reason = i ? CT_LOSS_WRITE : CT_LOSS_BUFFER_FULL,
                                 .count = (uint64_t)o->lost * (i + 1u), .tid = p->g.tid[S_MAIN],
                                 .why = i ? CT_WRITE_LOST_FD : 0};
        push(&p->g, S_MAIN, &l);
    }
    mem(p, CT_MEM_ALLOC, 0x700000000000ull, GiB, p->s_stack[0], 150000, 0);
    mem(p, CT_MEM_ALLOC, 0x700100000000ull, GiB, p->s_stack[1], 150000, 0);
    mem(p, CT_MEM_ALLOC, 0x700200000000ull, 2 * GiB, p->s_stack[2], 150000, 0);
    if (o->graph)
        capture_graph(p);
    if (o->autotune_ms > 0 && !o->nvtx_steps) {
        autotune(p);
        printf("tracegen: rank=%d startup_end_ns=%llu\n", rank, (unsigned long long)(p->now - t0));
    }
    uint32_t step = o->nvtx_steps ? intern(g, S_MAIN, p->now, "step") : 0;
    uint64_t flush_at = p->now + 50000000;
    for (int it = 0; it < o->iters; it++) {
        uint64_t step_start = p->now;
        if (step) {
            ct_rec b = {.type = CT_REC_NVTX_BEGIN, .ts = p->now};
            b.u.nvtx_begin = (ct_rec_nvtx_begin){.tid = g->tid[S_MAIN], .kind = CT_NVTX_PUSH_POP,
                                                 .name = step, .group = step};
            push(g, S_MAIN, &b);
            if (it == 1)
                printf("tracegen: rank=%d step1_ns=%llu\n", rank, (unsigned long long)(p->now - t0));
            if (it == 0 && o->autotune_ms > 0)
                autotune(p);
        }
        /* the loader: on the main thread unless prefetching hides it */
        uint64_t loader = (uint64_t)(o->loader_ms * 1e6 * wl_shape_factor(o->shape, it, o->iters));
        if (!o->prefetch && loader)
            host_work(p, loader, o->compute_loader ? loader : loader / 50, HW_LOADER);
        for (int w = 0; w < o->workers && w < 8; w++) {
            p->worker_cpu[w] += loader;
            ct_rec c = {.type = CT_REC_CPU, .ts = p->now};
            c.u.cpu = (ct_rec_cpu){.tid = g->tid[S_WORKER0 + w], .user_ns = p->worker_cpu[w]};
            push(g, S_WORKER0 + w, &c);
        }
        if (o->stall_ms > 0 && it == o->iters / 2)
            host_work(p, (uint64_t)(o->stall_ms * 1e6), (uint64_t)(o->stall_ms * 1e6), HW_STALL);
        copy(p, CT_DIR_HTOD, o->batch_bytes, 1, o->pinned, o->prefetch, p->site_h2d);
        if (o->churn)
            mem(p, CT_MEM_ALLOC, 0x710000000000ull, 64u << 20, p->s_stack[3], 120000, 0);
        if (o->graph)
            graph_launch(p);
        for (int k = 0; k < o->kernels && !o->graph; k++) {
            if (k == o->kernels / 2) {
                /* mid-step: a metric read back (blocking with --sync-copy-bytes), then host work */
                if (o->sync_copy_bytes)
                    copy(p, CT_DIR_DTOH, o->sync_copy_bytes, 0, 0, 0, p->site_metric);
                uint64_t work = (uint64_t)(o->host_us * 1e3 * wl_shape_factor(o->shape, it, o->iters));
                host_work(p, work, work, HW_STEP);
            }
            if (o->distinct_kernels)
                launch_distinct(p, it, k);
            else
                launch(p, k);
            if (o->sync_every_kernel)
                stream_sync(p, p->s_sync_dev, CT_SYNC_DEVICE, p->site_devsync);
        }
        if (o->churn) {
            /* cudaFree waits for the device */
            uint64_t wait = max_u64(p->gpu_free[0], p->now) - p->now;
            mem(p, CT_MEM_FREE, 0x710000000000ull, 64u << 20, p->s_stack[3], wait + 80000, 0);
        }
        if (!o->graph) /* else the graph's last node */
            copy(p, CT_DIR_DTOH, 4, 1, 1, 0, p->site_loss);
        stream_sync(p, p->s_sync_stream, CT_SYNC_STREAM, p->site_sync);
        p->now += 20000; /* logging, bookkeeping */
        if (step) {
            ct_rec e = {.type = CT_REC_NVTX_RANGE, .ts = p->now};
            e.u.nvtx_range = (ct_rec_nvtx_range){.start = step_start, .start_tid = g->tid[S_MAIN],
                                                 .end_tid = g->tid[S_MAIN], .name = step,
                                                 .group = step, .kind = CT_NVTX_PUSH_POP};
            push(g, S_MAIN, &e);
        }
        if (p->now >= flush_at) {
            flush_all(g, p->now);
            flush_at = p->now + 50000000;
        }
    }
    if (o->oom) {
        mem(p, CT_MEM_ALLOC, 0x720000000000ull, 5 * GiB, p->s_stack[4], 150000, 0);
        mem(p, CT_MEM_ALLOC, 0, 100 * GiB, p->s_stack[4], 90000, 2);
    } else {
        mem(p, CT_MEM_FREE, 0x700200000000ull, 2 * GiB, 0, 100000, 0);
        mem(p, CT_MEM_FREE, 0x700100000000ull, GiB, 0, 100000, 0);
        mem(p, CT_MEM_FREE, 0x700000000000ull, GiB, 0, 100000, 0);
    }
    p->now = max_u64(p->now, max_u64(p->gpu_free[0], p->gpu_free[1])) + 1000;
    ct_rec end = {.type = CT_REC_END, .ts = p->now};
    end.u.end = (ct_rec_end){.how = CT_END_EXIT, .code = 0, .records = g->records + g->n + 1};
    push(g, S_MAIN, &end);
    flush_all(g, UINT64_MAX);
    rc = ct_writer_close(g->w);
    if (rc < 0)
        tg_die("closing", rc);
    printf("tracegen: rank=%d file=%s records=%llu\n", rank, path, (unsigned long long)g->records);
    printf("tracegen: rank=%d h2d=%llu h2d_bytes=%llu d2h=%llu d2h_bytes=%llu kernels=%llu "
           "kernel_ns=%llu syncs=%llu mallocs=%llu frees=%llu failed=%llu peak=%llu\n",
           rank, (unsigned long long)p->h2d, (unsigned long long)p->h2d_bytes,
           (unsigned long long)p->d2h, (unsigned long long)p->d2h_bytes,
           (unsigned long long)p->kernels, (unsigned long long)p->kernel_total_ns,
           (unsigned long long)p->syncs, (unsigned long long)p->mallocs,
           (unsigned long long)p->frees, (unsigned long long)p->failed,
           (unsigned long long)p->peak);
    printf("tracegen: rank=%d gpu_ops=%llu gpu_timed=%llu kernels_timed=%llu\n", rank,
           (unsigned long long)p->gpu_ops, (unsigned long long)p->gpu_timed,
           (unsigned long long)p->kernels_timed);
    if (o->graph)
        printf("tracegen: rank=%d graph_launches=%llu graph_kernels=%llu graph_copies=%llu\n",
               rank, (unsigned long long)p->graph_launches,
               (unsigned long long)p->graph_kernels, (unsigned long long)p->graph_copies);
    for (int s = 0; s < g->nstreams; s++)
        free(g->enc[s].buf);
    free(g->heap);
    free(p);
}

static const char usage[] =
    "usage: tracegen -o DIR [--iters N] [--kernels K] [--kernel-us X] [--launch-us X]\n"
    "       [--loader-ms X] [--compute-loader] [--prefetch] [--batch-bytes B] [--pinned]\n"
    "       [--sync-every-kernel] [--sync-copy-bytes B] [--host-us X] [--churn] [--stall-ms X] [--oom]\n"
    "       [--init-ms X] [--autotune-ms X] [--autotune-trials N] [--distinct-kernels]\n"
    "       [--nvtx-steps] [--samples-ms X] [--lib-load-ms X (with --autotune-ms)]\n"
    "       [--ranks R] [--straggler FACTOR] [--workers W] [--events N] [--stacks-all]\n"
    "       [--gpu-timing N (0: no GPU records; N: for 1 operation in N; 1)] [--no-rank]\n"
    "       [--no-cpu-readings] [--graph] [--graph-nodes-lost] [--name S] [--nvtx-lost-pops] [--lost N]\n"
    "       [--all-end-bounded (every GPU record's end only a bound, at its true end)]\n"
    "       [--shape regular|bursty|irregular (the loader's and host's work per iteration)]\n"
    "       tracegen -o DIR --random SEED [--gpu-timing N]   (random shapes: see tracegen_random.c)\n";

int main(int argc, char **argv)
{
    gen_opts o = {.iters = 50, .kernels = 30, .ranks = 1, .workers = 2, .loader_ms = 20, .gpu_timing = 1,
                  .kernel_us = 200, .launch_us = 5, .host_us = 200, .batch_bytes = 4u << 20,
                  .autotune_trials = 40};
    long long events = 0;
    uint64_t seed = 0;
    int random_mode = 0;
    static const struct option lo[] = {
        {"iters", 1, 0, 'i'}, {"kernels", 1, 0, 'k'}, {"kernel-us", 1, 0, 'K'},
        {"launch-us", 1, 0, 'L'}, {"loader-ms", 1, 0, 'l'}, {"compute-loader", 0, 0, 'c'},
        {"prefetch", 0, 0, 'p'}, {"batch-bytes", 1, 0, 'b'}, {"pinned", 0, 0, 'P'},
        {"sync-every-kernel", 0, 0, 's'}, {"sync-copy-bytes", 1, 0, 'S'}, {"churn", 0, 0, 'C'},
        {"stall-ms", 1, 0, 't'}, {"oom", 0, 0, 'O'}, {"ranks", 1, 0, 'r'},
        {"straggler", 1, 0, 'g'}, {"workers", 1, 0, 'w'}, {"events", 1, 0, 'e'},
        {"host-us", 1, 0, 'H'}, {"stacks-all", 0, 0, 'A'}, {"gpu-timing", 1, 0, 'T'},
        {"no-rank", 0, 0, 'R'}, {"no-cpu-readings", 0, 0, 'N'}, {"random", 1, 0, 'Z'},
        {"init-ms", 1, 0, 'I'}, {"graph", 0, 0, 'G'},
        {"graph-nodes-lost", 0, 0, 'j'}, {"name", 1, 0, 'n'}, {"nvtx-lost-pops", 0, 0, 'V'},
        {"shape", 1, 0, 'Y'}, {"autotune-ms", 1, 0, 'a'}, {"distinct-kernels", 0, 0, 'D'},
        {"nvtx-steps", 0, 0, 'X'}, {"all-end-bounded", 0, 0, 'B'}, {"lost", 1, 0, 'x'},
        {"autotune-trials", 1, 0, 'u'}, {"samples-ms", 1, 0, 'M'}, {"lib-load-ms", 1, 0, 'J'},
        {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'o': o.out = optarg; break;
        case 'i': o.iters = atoi(optarg); break;
        case 'k': o.kernels = atoi(optarg); break;
        case 'K': o.kernel_us = atof(optarg); break;
        case 'L': o.launch_us = atof(optarg); break;
        case 'l': o.loader_ms = atof(optarg); break;
        case 'c': o.compute_loader = 1; break;
        case 'p': o.prefetch = 1; break;
        case 'b': o.batch_bytes = strtoull(optarg, NULL, 0); break;
        case 'P': o.pinned = 1; break;
        case 's': o.sync_every_kernel = 1; break;
        case 'S': o.sync_copy_bytes = strtoull(optarg, NULL, 0); break;
        case 'C': o.churn = 1; break;
        case 't': o.stall_ms = atof(optarg); break;
        case 'O': o.oom = 1; break;
        case 'r': o.ranks = atoi(optarg); break;
        case 'g': o.straggler = atof(optarg); break;
        case 'w': o.workers = atoi(optarg); break;
        case 'e': events = atoll(optarg); break;
        case 'H': o.host_us = atof(optarg); break;
        case 'A': o.stacks_all = 1; break;
        case 'T': o.gpu_timing = atoi(optarg); break;
        case 'R': o.no_rank = 1; break;
        case 'N': o.no_cpu = 1; break;
        case 'I': o.init_ms = atof(optarg); break;
        case 'G': o.graph = 1; break;
        case 'B': o.all_bounded = 1; break;
        case 'x': o.lost = atoi(optarg); break;
        case 'j': o.graph = 2; break;
        case 'n': o.name = optarg; break;
        case 'V': o.nvtx_lost_pops = 1; break;
        case 'a': o.autotune_ms = atof(optarg); break;
        case 'u': o.autotune_trials = atoi(optarg); break;
        case 'M': o.samples_ms = atof(optarg); break;
        case 'J': o.lib_load_ms = atof(optarg); break;
        case 'D': o.distinct_kernels = 1; break;
        case 'X': o.nvtx_steps = 1; break;
        case 'Y':
            o.shape = wl_shape_parse(optarg);
            if (o.shape < 0) {
                fprintf(stderr, "tracegen: --shape: expected regular, bursty or irregular, found '%s'\n", optarg);
                return 2;
            }
            break;
        case 'Z': seed = strtoull(optarg, NULL, 0); random_mode = 1; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (!o.out || o.iters < 1 || o.kernels < 0 || o.ranks < 1 || o.ranks > 64 || o.workers < 0 ||
        o.workers > 8 || o.gpu_timing < 0 || o.autotune_trials < 1 || o.samples_ms < 0) {
        fputs(usage, stderr);
        return 2;
    }
    if (events > 0) {
        /* records per iteration: 4 per launch (runtime and driver API, LAUNCH, GPU), 3 per
         * copy (API, COPY, GPU), 2 for the stream sync (API, SYNC), 4 CPU readings of the main
         * thread, 1 per loader worker, and the options' extra calls */
        long long per = 4LL * o.kernels + 3 * 2 + 2 + 4 + o.workers +
                        (o.sync_every_kernel ? 2LL * o.kernels : 0) + (o.churn ? 4 : 0) +
                        (o.sync_copy_bytes ? 4 : 0);
        o.iters = (int)((events / o.ranks + per - 1) / per);
    }
    if (mkdir(o.out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "tracegen: %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    if (random_mode) {
        int n = 1 + (int)(seed % 3);
        for (int p = 0; p < n; p++)
            tg_run_random(o.out, seed, p, n, o.gpu_timing);
        return 0;
    }
    for (int r = 0; r < o.ranks; r++)
        run_rank(&o, r, 1000000000ull + (uint64_t)r * 1000);
    return 0;
}
