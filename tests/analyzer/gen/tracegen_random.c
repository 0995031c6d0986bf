/* tracegen --random SEED: traces of random shape, for the differential tests. Apart from
 * tracegen.c because it builds its records and chunks itself, sharing nothing with the
 * training-loop simulation but the command line and tg_die (tracegen.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cttrace.h"
#include "tracegen.h"

/* ---- random shapes (--random SEED) -----------------------------------------------------------
 * Traces whose shape a training loop never has, for the differential tests against the
 * reference model (tests/refmodel): 1-3 processes, each with 1-3 devices of 1-3 streams and 1-3
 * calling threads, issuing launches (some through a runtime call nesting a driver call), copies
 * and sets (synchronous or not), synchronizations and allocations, in bursts separated by host
 * stretches from nanoseconds to minutes. GPU intervals may start before the call that produced
 * them, overlap on a stream, last 0 ns or, for a process's first operation, up to 3 s; the
 * harvester's records arrive up to seconds late and out of order within their chunks. Chunks of
 * all streams are written in the order a writer would flush them, with exact low-water marks
 * (the earliest record time of that chunk and every later one), so the reader delivers every
 * record in time order. Same seed, same files. */

typedef struct {
    uint64_t x;
} rng;

static uint64_t rnd(rng *r)
{
    r->x ^= r->x << 13;
    r->x ^= r->x >> 7;
    r->x ^= r->x << 17;
    return r->x;
}
static uint64_t rnd_in(rng *r, uint64_t lo, uint64_t hi) { return lo + rnd(r) % (hi - lo + 1); }
static int chance(rng *r, int pct) { return (int)(rnd(r) % 100) < pct; }

/* A host stretch: mostly short, sometimes long, rarely minutes. */
static uint64_t rnd_span(rng *r)
{
    int k = (int)(rnd(r) % 100);
    return k < 40 ? rnd_in(r, 0, 2000) : k < 80 ? rnd_in(r, 1000, 500000)
         : k < 97 ? rnd_in(r, 1000000, 60000000) : rnd_in(r, 1000000000ull, 100000000000ull);
}

typedef struct {
    ct_rec r;
    int stream;      /* 0: harvester (GPU), 1..: calling threads */
    uint64_t arrive; /* when the writer has it */
    uint64_t seq;
} rrec;

typedef struct {
    rrec *v;
    size_t n, cap;
    uint64_t seq;
} rrecs;

static void radd(rrecs *a, int stream, const ct_rec *r, uint64_t arrive)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1024;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
        if (!a->v)
            abort();
    }
    a->v[a->n++] = (rrec){.r = *r, .stream = stream, .arrive = arrive, .seq = a->seq++};
}

static int by_arrival(const void *x, const void *y)
{
    const rrec *a = x, *b = y;
    if (a->stream != b->stream)
        return a->stream - b->stream;
    if (a->arrive != b->arrive)
        return a->arrive < b->arrive ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

typedef struct {
    size_t first, n;
    int stream;
    uint64_t emit, tmin;
} rchunk;

static int by_emit(const void *x, const void *y)
{
    const rchunk *a = x, *b = y;
    if (a->emit != b->emit)
        return a->emit < b->emit ? -1 : 1;
    return a->stream - b->stream;
}

static const char *const rnd_names[] = {
    "cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync", "cudaMemcpy", "cudaMemsetAsync",
    "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMalloc", "cudaFree", "cuMemcpyHtoD_v2",
    "cudaEventSynchronize", "gemm_kernel", "reduce<float>", "_Z4tinyPfi", "main", "loader",
    "cutrace-gpu", "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "Random GPU"};
enum { N_LAUNCH_RT = 1, N_LAUNCH_DRV, N_MEMCPY_ASYNC, N_MEMCPY, N_MEMSET, N_SSYNC, N_DSYNC,
       N_MALLOC, N_FREE, N_HTOD_DRV, N_ESYNC, N_KERNEL0, N_LAUNCH_NVCC = N_KERNEL0 + 6,
       N_LAUNCH_NVCC_PTSZ, N_DEVICE };

void tg_run_random(const char *dir, uint64_t seed, int proc, int nproc, int gpu_timing)
{
    rng R = {.x = seed * 0x9E3779B97F4A7C15ull + (uint64_t)proc * 0xD1B54A32D192ED03ull + 1};
    rng *r = &R;
    for (int i = 0; i < 8; i++)
        rnd(r);
    int ndev = (int)rnd_in(r, 1, 3), nstr = (int)rnd_in(r, 1, 3), nthr = (int)rnd_in(r, 1, 3);
    int ops = (int)rnd_in(r, 20, 400);
    uint32_t pid = 2000u + (uint32_t)proc;
    /* a quarter of the processes on a 1 us grid: ties between starts, ends and threads */
    uint64_t q = chance(r, 25) ? 1000 : 1;
    uint64_t t0 = (5000000000ull + rnd_in(r, 0, 50000000)) / q * q;
    rrecs a = {0};
    uint64_t corr = 0;
    ct_rec x = {.type = CT_REC_STRING, .ts = t0};
    for (uint32_t i = 0; i < sizeof rnd_names / sizeof *rnd_names; i++) {
        x.u.string = (ct_rec_string){.id = i + 1, .len = (uint32_t)strlen(rnd_names[i]), .text = rnd_names[i]};
        radd(&a, 1, &x, t0);
    }
    /* device properties (the copies' peaks): a PCIe device, one on NVLink-C2C (no host link
     * rate), and the third without a DEVICE record */
    for (int d = 0; d < ndev && d < 2; d++) {
        x = (ct_rec){.type = CT_REC_DEVICE, .ts = t0};
        x.u.device = (ct_rec_device){.device = (uint32_t)d, .name = N_DEVICE,
                                     .mem_clock_khz = d ? 1593000 : 2619000, .mem_bus_bits = d ? 4096 : 5120,
                                     .link_kind = d ? CT_LINK_C2C : CT_LINK_PCIE, .link_gen = 5,
                                     .link_width = 16};
        radd(&a, 1, &x, t0);
    }
    /* each thread its own streams, so a synchronization waits at most for the thread's own
     * queue (a wait longer than the sweep's lag reaches it late) */
    uint64_t free_at[3][3][3] = {{{0}}}, first_op = 1, gpu_ops = 0;
    /* in some processes one kernel's launches are always held up (its rows have bounds only) */
    int held = chance(r, 40) ? (int)rnd_in(r, 0, 2) : -1;
    for (int th = 0; th < nthr; th++) {
        int st = th + 1;
        uint32_t tid = pid + (uint32_t)th;
        uint64_t t = t0 + (th ? rnd_in(r, 1000, 1000000) + (chance(r, 30) ? rnd_span(r) : 0) : 0) / q * q;
        uint64_t cpu = 0;
        /* a thread with CPU readings keeps its stretches under the sweep's 200 ms lag: the
         * rate between two readings further apart reaches the breakdown late */
        int readings = chance(r, 60);
        x = (ct_rec){.type = CT_REC_THREAD, .ts = t};
        x.u.thread = (ct_rec_thread){.tid = tid, .name = N_KERNEL0 + 4};
        radd(&a, st, &x, t);
        int nops = ops / nthr + 1;
        for (int k = 0; k < nops; k++) {
            uint64_t gap = rnd_span(r);
            if (readings && gap > 150000000)
                gap %= 150000000;
            gap = gap / q * q;
            if (readings) { /* CPU readings around the host stretch, now and then odd */
                x = (ct_rec){.type = CT_REC_CPU, .ts = t};
                x.u.cpu = (ct_rec_cpu){.tid = tid, .user_ns = cpu};
                radd(&a, st, &x, t);
                cpu += chance(r, 5) ? 0 : gap * rnd_in(r, 0, 100) / 100;
                x.ts = t + gap;
                x.u.cpu.user_ns = chance(r, 3) ? cpu / 2 : cpu;
                radd(&a, st, &x, t + gap);
            }
            t += gap;
            int dev = (int)rnd_in(r, 0, (uint64_t)ndev - 1), str = (int)rnd_in(r, 0, (uint64_t)nstr - 1);
            if (chance(r, 10)) { /* a record the breakdown has no point for */
                x = (ct_rec){.type = CT_REC_STREAM, .ts = t};
                x.u.stream = (ct_rec_stream){.stream = 0x1000u * (uint64_t)(str + 1) + 0x100u * (uint64_t)th,
                                             .device = (uint32_t)dev};
                radd(&a, st, &x, t);
            }
            uint64_t *fa = &free_at[th][dev][str];
            uint64_t c = ++corr + (uint64_t)th * 1000000;
            int kind = (int)rnd_in(r, 0, 9);
            uint64_t api_len = chance(r, 5) ? 0 : rnd_in(r, 100, 40000) / q * q;
            /* the GPU interval: may start before the call, overlap its stream, last 0 ns */
            uint64_t gs = *fa > t ? *fa : t;
            gs = chance(r, 15) ? (gs > 20000 ? gs - rnd_in(r, 0, 20000) : gs) : gs + rnd_in(r, 0, 30000);
            uint64_t gl = chance(r, 8) ? 0 : rnd_in(r, 1, chance(r, 10) ? 20000000 : 300000);
            if (first_op && chance(r, 60)) /* beyond the lag (rarely) it reaches the sweep late */
                gl = chance(r, 85) ? rnd_in(r, 20000000, 150000000) : rnd_in(r, 200000000, 3000000000ull);
            first_op = 0;
            gs = gs / q * q;
            gl = gl / q * q;
            uint32_t fn;
            ct_rec det = {.ts = 0};
            int gpu_kind = CT_GPU_KERNEL, sync_kind = -1, has_gpu = 1, sync_copy = 0;
            uint64_t stream = 0x1000u * (uint64_t)(str + 1) + 0x100u * (uint64_t)th;
            if (kind <= 3) {
                fn = chance(r, 50) ? N_LAUNCH_RT : N_LAUNCH_DRV;
                det.type = CT_REC_LAUNCH; /* configurations vary (--variants) */
                det.u.launch = (ct_rec_launch){.corr = c, .function = N_KERNEL0 + (uint32_t)rnd_in(r, 0, 2),
                                               .grid = {1 + (uint32_t)(c % 3), 1, 1}, .block = {32, 1, 1}, .stream = stream,
                                               .device = (uint32_t)dev};
            } else if (kind <= 6) {
                int sync = chance(r, 40), set = chance(r, 15);
                static const uint32_t dirs[] = {CT_DIR_HTOD, CT_DIR_DTOH, CT_DIR_DTOD, CT_DIR_HTOD};
                uint32_t dir = dirs[rnd(r) % 4];
                uint32_t host = chance(r, 50) ? CT_MEMKIND_PAGEABLE : CT_MEMKIND_PINNED;
                fn = set ? N_MEMSET : sync ? (chance(r, 50) ? N_MEMCPY : N_HTOD_DRV) : N_MEMCPY_ASYNC;
                if (fn == N_HTOD_DRV)
                    dir = CT_DIR_HTOD;
                gpu_kind = set ? CT_GPU_MEMSET : CT_GPU_MEMCPY;
                det.type = CT_REC_COPY;
                det.u.copy = (ct_rec_copy){.corr = c, .op = set ? CT_COPY_MEMSET : CT_COPY_MEMCPY,
                                           .dir = set ? CT_DIR_DTOD : dir, .bytes = rnd_in(r, 1, 64u << 20),
                                           .src_kind = dir == CT_DIR_HTOD ? host : CT_MEMKIND_DEVICE,
                                           .dst_kind = dir == CT_DIR_DTOH ? host : CT_MEMKIND_DEVICE,
                                           .flags = set || !sync ? CT_COPY_ASYNC : 0, .stream = stream,
                                           .device = (uint32_t)dev};
                if (sync && !set) { /* the call returns when the copy is done */
                    sync_copy = 1;
                    api_len = (gs + gl > t ? gs + gl - t : 0) + rnd_in(r, 0, 3000) / q * q;
                    sync_kind = CT_SYNC_MEMCPY;
                }
            } else if (kind <= 8) {
                has_gpu = 0;
                int which = (int)rnd_in(r, 0, 2);
                fn = which == 0 ? N_SSYNC : which == 1 ? N_DSYNC : N_ESYNC;
                sync_kind = which == 0 ? CT_SYNC_STREAM : which == 1 ? CT_SYNC_DEVICE : CT_SYNC_EVENT;
                if (*fa > t)
                    api_len = *fa - t + rnd_in(r, 0, 5000) / q * q;
            } else {
                has_gpu = 0;
                fn = chance(r, 60) ? N_MALLOC : N_FREE;
                det.type = CT_REC_MEM;
                det.u.mem = (ct_rec_mem){.op = fn == N_FREE, .kind = CT_ALLOC_DEVICE, .corr = c,
                                         .address = 0x7000000000ull + (uint64_t)th * 0x100000000ull + (uint64_t)k * 0x1000,
                                         .size = rnd_in(r, 1, 1u << 30), .device = (uint32_t)dev};
            }
            uint64_t end = t + api_len;
            if (fn == N_LAUNCH_RT && chance(r, 70)) { /* the runtime's nested driver call */
                x = (ct_rec){.type = CT_REC_API, .ts = end - api_len / 4};
                x.u.api = (ct_rec_api){.start = t + api_len / 4, .function = N_LAUNCH_DRV,
                                       .corr = c + 500000, .parent = c, .flags = CT_API_DRIVER};
                radd(&a, st, &x, 0);
            }
            /* runtime launches as the program's code calls them: nvcc's entry points too */
            uint32_t called = fn == N_LAUNCH_RT && c % 3 ? N_LAUNCH_NVCC + (uint32_t)(c % 3 - 1) : fn;
            x = (ct_rec){.type = CT_REC_API, .ts = end};
            x.u.api = (ct_rec_api){.start = t, .function = called, .corr = c,
                                   .result = chance(r, 3) ? 700 : 0,
                                   .flags = fn == N_LAUNCH_DRV || fn == N_HTOD_DRV ? CT_API_DRIVER : 0};
            radd(&a, st, &x, 0);
            if (det.type) {
                det.ts = end;
                radd(&a, st, &det, 0);
            }
            if (sync_kind >= 0) {
                x = (ct_rec){.type = CT_REC_SYNC, .ts = end};
                x.u.sync = (ct_rec_sync){.start = t + (api_len > 10 ? rnd_in(r, 0, api_len / 10) : 0),
                                         .corr = c, .kind = (uint32_t)sync_kind, .object = stream};
                radd(&a, st, &x, 0);
            }
            /* the work runs (its stream stays busy) whether it is timed or not */
            if (has_gpu && gpu_timing && gpu_ops++ % (uint64_t)gpu_timing == 0) {
                x = (ct_rec){.type = CT_REC_GPU, .ts = gs + gl};
                x.u.gpu = (ct_rec_gpu){.start = gs, .corr = c, .device = (uint32_t)dev,
                                       .kind = (uint32_t)gpu_kind, .stream = stream};
                /* now and then its end event came after it completed (the call returned when it
                 * was done, or was held up after the driver got it): the record's end is then
                 * a bound, at or after the call's return, up to the 300 us a preempted thread
                 * adds */
                int bound = chance(r, 8) || (sync_copy && chance(r, 60)) ||
                            (det.type == CT_REC_LAUNCH && det.u.launch.function == N_KERNEL0 + (uint32_t)held);
                if (bound) {
                    x.ts = (x.ts > end ? x.ts : end) + rnd_in(r, 0, 300000) / q * q;
                    x.u.gpu.flags = CT_GPU_END_BOUND;
                }
                /* harvested late, sometimes seconds late */
                uint64_t late = chance(r, 5) ? rnd_in(r, 500000000, 4000000000ull) : rnd_in(r, 0, 60000000);
                radd(&a, 0, &x, (x.ts > end ? x.ts : end) + late);
            }
            if (has_gpu && gs + gl > *fa)
                *fa = gs + gl;
            t = end;
        }
        if (chance(r, 90) || th > 0)
            continue;
        x = (ct_rec){.type = CT_REC_END, .ts = t + 1000};
        x.u.end = (ct_rec_end){.how = CT_END_EXIT};
        radd(&a, st, &x, 0);
    }
    /* thread streams reach the writer in time order; the writer flushes them in pieces */
    for (size_t i = 0; i < a.n; i++)
        if (a.v[i].stream > 0)
            a.v[i].arrive = a.v[i].r.ts;
    qsort(a.v, a.n, sizeof *a.v, by_arrival);
    rchunk *ch = NULL;
    size_t nch = 0, chcap = 0;
    for (size_t i = 0; i < a.n;) {
        size_t j = i;
        uint64_t until = a.v[i].arrive + rnd_in(r, 1000, 700000000);
        size_t maxn = rnd_in(r, 1, 300);
        while (j < a.n && a.v[j].stream == a.v[i].stream && a.v[j].arrive <= until && j - i < maxn)
            j++;
        if (nch == chcap) {
            chcap = chcap ? 2 * chcap : 64;
            ch = realloc(ch, chcap * sizeof *ch);
            if (!ch)
                abort();
        }
        uint64_t tmin = UINT64_MAX;
        for (size_t k = i; k < j; k++)
            tmin = a.v[k].r.ts < tmin ? a.v[k].r.ts : tmin;
        ch[nch++] = (rchunk){.first = i, .n = j - i, .stream = a.v[i].stream, .emit = a.v[j - 1].arrive,
                             .tmin = tmin};
        i = j;
    }
    qsort(ch, nch, sizeof *ch, by_emit);
    char path[4096], cmd[32], opts[32];
    snprintf(path, sizeof path, "%s/random-%d.cutrace", dir, proc);
    snprintf(opts, sizeof opts, "random gpu_timing=%d", gpu_timing);
    int cl = snprintf(cmd, sizeof cmd, "random%c%llu", 0, (unsigned long long)seed);
    ct_header h = {.hostname = "randhost", .pid = pid, .ppid = 1, .cmdline = cmd,
                   .cmdline_len = (size_t)cl + 1, .exe = "/bin/random", .boot_id = "tracegen-boot",
                   .realtime_ns = 1700000000000000000ull, .monotonic_ns = t0,
                   .tracer_version = "tracegen", .tracer_options = opts};
    ct_writer *w;
    int rc = ct_writer_open(&w, path, &h, NULL);
    if (rc < 0)
        tg_die(path, rc);
    int nstreams = nthr + 1;
    ct_enc *enc = calloc((size_t)nstreams, sizeof *enc);
    uint64_t *lw = calloc(nch + 1, sizeof *lw);
    if (!enc || !lw)
        abort();
    for (int s = 0; s < nstreams; s++)
        ct_enc_init(&enc[s], malloc(4u << 20), 4u << 20);
    lw[nch] = UINT64_MAX;
    for (size_t k = nch; k-- > 0;)
        lw[k] = ch[k].tmin < lw[k + 1] ? ch[k].tmin : lw[k + 1];
    uint64_t written = 0;
    for (size_t k = 0; k < nch; k++) {
        for (size_t i = 0; i < ch[k].n; i++) {
            rc = ct_enc_rec(&enc[ch[k].stream], &a.v[ch[k].first + i].r);
            if (rc < 0)
                tg_die("encoding a record", rc);
        }
        ct_chunk_info info = {.tid = ch[k].stream ? pid + (uint32_t)ch[k].stream - 1 : pid + 100,
                              .flags = ch[k].stream ? 0 : CT_CHUNK_GPU, .low_water = lw[k]};
        if ((rc = ct_writer_chunk(w, &enc[ch[k].stream], &info, 1)) < 0)
            tg_die("writing a chunk", rc);
        written += ch[k].n;
    }
    if ((rc = ct_writer_close(w)) < 0)
        tg_die("closing", rc);
    printf("tracegen: random seed=%llu process=%d of %d file=%s records=%llu chunks=%zu devices=%d "
           "streams=%d threads=%d\n", (unsigned long long)seed, proc, nproc, path,
           (unsigned long long)written, nch, ndev, nstr, nthr);
    for (int s = 0; s < nstreams; s++)
        free(enc[s].buf);
    free(enc);
    free(lw);
    free(ch);
    free(a.v);
}

