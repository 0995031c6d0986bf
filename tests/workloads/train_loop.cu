/* train_loop: the shape of a training job. Each iteration a data loader spends --loader-ms on the
 * host producing a batch (sleeping or computing), the batch is copied to the GPU, a small model
 * runs forward, loss, backward and optimizer kernels, and the loss comes back for logging.
 *
 * Flags (defaults in brackets):
 *   --iters N            iterations [20]
 *   --loader-ms X        host time per batch, including filling it [50]
 *   --loader sleep|compute  how the loader spends it: nanosleep, or a busy loop on the CPU [sleep]
 *   --batch-bytes B      batch size, a multiple of 4096 [4194304]
 *   --memory pageable|pinned  host memory of the batch and the loss (malloc or cudaMallocHost)
 *                        [pageable]
 *   --prefetch           double-buffer: copy batch i+1 on a second stream while the GPU computes
 *                        batch i, ordered by events [off]
 *   --layers L           model depth; kernels per iteration = 5*L + 3 [6]
 *   --readback pageable|pinned  host memory of the loss: a stack variable, or a cudaMallocHost
 *                        buffer [as --memory]
 *   --copy async|sync    the batch copy: cudaMemcpyAsync on "compute", or cudaMemcpy (then the
 *                        step waits for nothing else before it) [async; sync excludes --prefetch]
 *   --sync-per-kernel    cudaStreamSynchronize after every kernel launch, not only once per step
 *   --realloc-per-kernel N  after every kernel launch, cudaFree N 4 KiB scratch buffers (the
 *                        first waits for the device) and cudaMalloc them again (alloc churn
 *                        inside the step, as code allocating its temporaries does), N <= 16
 *   --fuse               one kernel per step, train_step, doing the work of the 5*L+3 (the same
 *                        losses): the fix of launch-bound; excludes --prefetch and the
 *                        --*-per-kernel flags
 *   --readback-per-kernel sync|async  after every kernel launch, copy the loss (4 bytes) into
 *                        a pinned slot of its own, by cudaMemcpy (which waits for the device) or
 *                        by cudaMemcpyAsync on "compute"; the slots are summed after the step's
 *                        synchronization (probe_sum: the same in both)
 *   --dlopen LIB         dlopen LIB before the first CUDA call (a stand-in for PyTorch's
 *                        libtorch_cuda.so: the tracer then records PyTorch as loaded)
 *   --verify             recompute every loss on the CPU and exit 1 on a mismatch
 *   --nvtx FILE          name the phases with NVTX (nvtx3/nvToolsExt.h): each iteration is a
 *                        range "train_step" holding "data_load" (the loader) and "model" (the
 *                        kernel launches); FILE gets one line per range as the program measured
 *                        it, "NAME STEP T_BEFORE_PUSH T_AFTER_POP" (CLOCK_MONOTONIC ns, STEP from 1)
 *   --slow-steps A-B:MS  the loader takes MS ms more in iterations A to B (from 1)
 *   --shape regular|bursty|irregular  how the loader's time varies from one iteration to the
 *                        next, the same in total (wl_shape.h) [regular]
 *   --pin-thread         a second thread, as PyTorch's pin-memory thread, calls cudaHostAlloc
 *                        (4 KiB, kept to the end) every millisecond while the loop runs, and
 *                        sleeps between: CUDA calls that feed no GPU work from a thread the GPU
 *                        does not wait for. Adds the line "train_loop: pin_thread allocs=N
 *                        loader_cpu_ms_total=X", X the loader's own CPU time
 *                        (CLOCK_THREAD_CPUTIME_ID)
 *
 * A device-to-host copy into pageable memory returns only when it is done, even the Async form,
 * so with --memory pageable the loss copy makes the host wait for each step before it loads the
 * next batch: --prefetch overlaps the loader with GPU work only with --memory pinned.
 *
 * With the defaults the GPU is starved: 50 ms of loader per iteration against well under 1 ms
 * of GPU work (33 short kernels and a 4 MiB copy). The well-fed variant is
 * `--loader-ms 1 --memory pinned --prefetch` with kernels made long through the simulation's
 * FAKECUDA_KERNEL_NS (or any real GPU work longer than the loader).
 *
 * Before the loop: 6 + (1, or 2 with --prefetch) cudaMalloc calls (the model's weights,
 * gradients, pre-activations, activations, backward signal, loss: (4L + 2) * 4096 + 4 bytes in
 * all; then one batch buffer of B bytes each), host buffers (cudaMallocHost with --memory pinned:
 * 1 or 2 of B bytes and 1 of 4 bytes), 1 cudaMemcpy host-to-device of the initial weights
 * (L * 4096 bytes), 1 stream "compute" (and "copy" with 2 + 2 events with --prefetch).
 *
 * --memory, --prefetch, --copy, --fuse and the three --*-per-kernel flags make the problem and
 * fixed variants of the analyzer's diagnoses (tests/workloads/diag_pairs.txt): each pair differs
 * in one of them. Of the --*-per-kernel flags the last one given applies.
 *
 * What a correct trace shows, per iteration:
 *   - 1 cudaMemcpyAsync host-to-device of B bytes from pageable|pinned memory on "compute" (with
 *     --prefetch it is issued on "copy" one iteration ahead: batch 0 before the loop, batch i+1
 *     during iteration i);
 *   - 5*L+3 kernel launches on "compute", in this order:
 *       reduce_batch                           (extern "C": unmangled)
 *       L x { nn::forward_linear<float>        _ZN2nn14forward_linearIfEEvPT_PKS1_S4_i
 *             forward_relu }                   _Z12forward_reluPfPKfi
 *       loss_forward                           _Z12loss_forwardPfPKfi
 *       loss_backward                          _Z13loss_backwardPfPKfi
 *       L x { backward_relu                    _Z13backward_reluPfPKfS1_i
 *             nn::backward_linear<float> }     _ZN2nn15backward_linearIfEEvPT_S2_PKS1_S4_S4_i
 *       L x nn::sgd_update<float>              _ZN2nn10sgd_updateIfEEvPT_PKS1_i
 *     all <<<4, 256>>> except loss_forward <<<1, 256>>>;
 *   - 1 cudaMemcpyAsync device-to-host of 4 bytes (the loss) on "compute" (and one of 4 bytes
 *     after each kernel with --readback-per-kernel);
 *   - 1 cudaStreamSynchronize("compute"), during which the host waits for the GPU;
 *   - with --prefetch also cudaEventRecord and cudaStreamWaitEvent, 2 of each per iteration
 *     (in all 2N records and 2N-1 waits: the last iteration prefetches nothing);
 *   - a host-side gap of about X ms (the loader) in which the GPU is idle, unless --prefetch
 *     overlaps it with GPU work.
 * Totals for the defaults (N=20, X=50, B=4194304, L=6, pageable, no prefetch): 20 H2D copies of
 * 4194304 bytes (83886080 bytes) plus the 24576-byte weights copy, 660 kernels, 20 D2H copies of
 * 4 bytes, 20 stream synchronizations, 7 allocations of 4300804 bytes in all (all live until the
 * end, then freed), >= 1000 ms of loader time and >= 1000 ms wall, the GPU busy under 1% of it
 * (on the simulated H100: 33 kernels of 5 us and a 4 MiB copy of about 0.1 ms per iteration).
 *
 * stdout: lines "train_loop: key=value ..." with the parameters, the per-iteration and total
 * counts above as issued, the measured loader, wait and wall times, and the losses. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>

#include "wl_common.h"
#include "wl_kernels.h"
#include "wl_shape.h"

#define TL_THREADS 256
#define TL_BLOCKS ((WL_TL_WIDTH + TL_THREADS - 1) / TL_THREADS)

/* ---- device code ---- */

static __device__ int tl_index(void) { return blockIdx.x * blockDim.x + threadIdx.x; }

extern "C" __global__ void reduce_batch(float *x, const float *batch, int rows)
{
    int j = tl_index();
    if (j < WL_TL_WIDTH)
        x[j] = wl_tl_column_mean(batch, rows, j);
}

namespace nn {
template <typename T> __global__ void forward_linear(T *y, const T *x, const T *w, int n)
{
    int j = tl_index();
    if (j < n)
        y[j] = w[j] * x[j];
}

template <typename T>
__global__ void backward_linear(T *gx, T *gw, const T *gy, const T *x, const T *w, int n)
{
    int j = tl_index();
    if (j < n) {
        T g = gy[j];
        gw[j] = g * x[j];
        gx[j] = g * w[j];
    }
}

template <typename T> __global__ void sgd_update(T *w, const T *gw, int n)
{
    int j = tl_index();
    if (j < n)
        w[j] = wl_tl_sgd(w[j], gw[j]);
}
} // namespace nn

__global__ void forward_relu(float *a, const float *y, int n)
{
    int j = tl_index();
    if (j < n)
        a[j] = wl_tl_relu(y[j]);
}

/* One block: the mean of n terms, thread t holding the sum of its own; a tree sum in shared
 * memory, written by thread 0. */
static __device__ void tl_block_mean(float *out, float s, int n)
{
    __shared__ float part[TL_THREADS];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = part[0] / (float)n;
}

__global__ void loss_forward(float *loss, const float *a, int n)
{
    float s = 0.0f;
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        s += wl_tl_loss_term(a[j]);
    tl_block_mean(loss, s, n);
}

__global__ void loss_backward(float *g, const float *a, int n)
{
    int j = tl_index();
    if (j < n)
        g[j] = wl_tl_loss_grad(a[j], n);
}

__global__ void backward_relu(float *gy, const float *g, const float *y, int n)
{
    int j = tl_index();
    if (j < n)
        gy[j] = wl_tl_relu_grad(g[j], y[j]);
}

/* The whole step in one launch (--fuse): every kernel above is column-wise but the loss's sum,
 * so each thread runs the step for its columns and one block sums the loss as loss_forward
 * does. Launched <<<1, TL_THREADS>>>. */
extern "C" __global__ void train_step(float *w, float *gw, float *y, float *a, float *g,
                                      float *loss, const float *batch, int rows, int layers)
{
    const int W = WL_TL_WIDTH;
    float s = 0.0f;
    for (int j = threadIdx.x; j < W; j += blockDim.x) {
        a[j] = wl_tl_column_mean(batch, rows, j);
        for (int l = 0; l < layers; l++) {
            y[l * W + j] = w[l * W + j] * a[l * W + j];
            a[(l + 1) * W + j] = wl_tl_relu(y[l * W + j]);
        }
        s += wl_tl_loss_term(a[layers * W + j]);
        float gj = wl_tl_loss_grad(a[layers * W + j], W);
        for (int l = layers - 1; l >= 0; l--) {
            gj = wl_tl_relu_grad(gj, y[l * W + j]);
            gw[l * W + j] = gj * a[l * W + j];
            gj = gj * w[l * W + j];
        }
        g[j] = gj;
        for (int l = 0; l < layers; l++)
            w[l * W + j] = wl_tl_sgd(w[l * W + j], gw[l * W + j]);
    }
    tl_block_mean(loss, s, W);
}

/* ---- host code ---- */

enum { LOADER_SLEEP, LOADER_COMPUTE };
enum { MEM_PAGEABLE, MEM_PINNED };
enum { TL_AFTER_NOTHING, TL_AFTER_SYNC, TL_AFTER_REALLOC, TL_AFTER_READ_SYNC, TL_AFTER_READ_ASYNC };
static const char *const loader_names[] = {"sleep", "compute", NULL};
static const char *const memory_names[] = {"pageable", "pinned", NULL};
static const char *const copy_names[] = {"async", "sync", NULL};

struct options {
    long long iters = 20;
    long long loader_ms = 50;
    int loader = LOADER_SLEEP;
    long long batch_bytes = 4 << 20;
    int memory = MEM_PAGEABLE;
    int prefetch = 0;
    int layers = 6;
    int readback = -1; /* -1: as memory */
    int sync_copy = 0;
    int after_kernel = 0; /* TL_AFTER_* */
    int scratch = 0;      /* --realloc-per-kernel's buffers */
    int fuse = 0;
    const char *dlopen_lib = NULL;
    int verify = 0;
    const char *nvtx = NULL;          /* --nvtx FILE */
    long long slow_from = 0, slow_to = -1, slow_ms = 0;
    int pin_thread = 0;
    int shape = WL_SHAPE_REGULAR;
};

/* --pin-thread: the thread, its stop flag, its pinned buffers; the loader's CPU time. */
#define TL_PIN_MAX 8192
static volatile int tl_pin_stop;
static void *tl_pin_buf[TL_PIN_MAX];
static long long tl_pin_n;
static double tl_loader_cpu_ms;

static double tl_thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The calling thread's time waiting for a CPU so far (ms; schedstat's run_delay), 0 if the
 * kernel does not keep it: what a busy machine adds to the loop's own time. */
static double tl_thread_runq_ms(void)
{
    unsigned long long run_ns, wait_ns;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    int ok = f && fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2;
    if (f)
        fclose(f);
    return ok ? (double)wait_ns / 1e6 : 0;
}

static void *tl_pin_main(void *)
{
    while (!tl_pin_stop && tl_pin_n < TL_PIN_MAX) {
        WL_RT(cudaHostAlloc(&tl_pin_buf[tl_pin_n], 4096, cudaHostAllocDefault));
        tl_pin_n++;
        wl_sleep_ms(1);
    }
    return NULL;
}

/* --nvtx: a range around what f does, and the program's own measure of it in tl_nvtx_file. */
static FILE *tl_nvtx_file;
static long long tl_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}
static long long tl_push(const char *name)
{
    long long t = tl_ns();
    if (tl_nvtx_file)
        nvtxRangePushA(name);
    return t;
}
static void tl_pop(const char *name, long long step, long long t0)
{
    if (!tl_nvtx_file)
        return;
    nvtxRangePop();
    fprintf(tl_nvtx_file, "%s %lld %lld %lld\n", name, step, t0, tl_ns());
}

/* Device state of the model. Activations a[0..L] (a[0] is the reduced batch), pre-activations
 * y[0..L-1], weights and their gradients w, gw (L x width each), the backward signal g. */
struct model {
    float *w, *gw, *y, *a, *g, *loss;
};

static long long device_allocs, device_bytes;
#define TL_MAX_SCRATCH 16
static void *tl_scratch[TL_MAX_SCRATCH]; /* --realloc-per-kernel */
static float *tl_probe;                  /* --readback-per-kernel: a pinned slot per kernel */

template <typename T> static T *dev_alloc(size_t count)
{
    T *p = NULL;
    WL_RT(cudaMalloc((void **)&p, count * sizeof(T)));
    device_allocs++;
    device_bytes += (long long)(count * sizeof(T));
    return p;
}

static void *host_alloc(size_t bytes, int memory)
{
    void *p = NULL;
    if (memory == MEM_PINNED)
        WL_RT(cudaMallocHost(&p, bytes));
    else if (!(p = malloc(bytes)))
        WL_DIE("malloc(%zu) failed", bytes);
    return p;
}

static void host_free(void *p, int memory)
{
    if (memory == MEM_PINNED)
        WL_RT(cudaFreeHost(p));
    else
        free(p);
}

static void fill_batch(float *batch, long long index, int rows)
{
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < WL_TL_WIDTH; j++)
            batch[(long long)r * WL_TL_WIDTH + j] = wl_tl_batch_value(index, r, j);
}

/* The data loader: fills the batch, then spends the rest of loader_ms sleeping or recomputing
 * a checksum of it on the CPU. Returns the milliseconds it took. */
static double load_batch(float *batch, long long index, int rows, const options &o)
{
    long long pushed = tl_push("data_load");
    double t0 = wl_now_ms(), cpu0 = tl_thread_cpu_ms();
    double ms = (double)o.loader_ms * wl_shape_factor(o.shape, (int)index, (int)o.iters) +
                (index + 1 >= o.slow_from && index + 1 <= o.slow_to ? o.slow_ms : 0);
    fill_batch(batch, index, rows);
    if (o.loader == LOADER_SLEEP) {
        wl_sleep_ms(ms - (wl_now_ms() - t0));
    } else {
        volatile float sink = 0.0f;
        long long n = (long long)rows * WL_TL_WIDTH;
        for (long long k = 0; wl_now_ms() - t0 < ms; k = (k + 4099) % n)
            sink = sink * 0.5f + batch[k];
    }
    double took = wl_now_ms() - t0;
    tl_loader_cpu_ms += tl_thread_cpu_ms() - cpu0;
    tl_pop("data_load", index + 1, pushed);
    return took;
}

/* Enqueues one training step on `s`; records `consumed` once the batch has been read. Returns
 * the number of kernels launched. */
static int run_step(const model &m, const float *batch, int rows, int layers, cudaStream_t s,
                    cudaEvent_t consumed, int after_kernel, int scratch, int fuse)
{
    const int W = WL_TL_WIDTH;
    int launched = 0;
    if (fuse) {
        train_step<<<1, TL_THREADS, 0, s>>>(m.w, m.gw, m.y, m.a, m.g, m.loss, batch, rows, layers);
        WL_RT(cudaGetLastError());
        return 1;
    }
    /* after_kernel: a wait after every launch, as a debugging habit left in a loop does, a
     * scratch buffer freed and allocated again, as code allocating its temporaries does, or a
     * value read back for monitoring, waiting for it or not */
#define TL_LAUNCHED()                                                                              \
    do {                                                                                           \
        launched++;                                                                                \
        if (after_kernel == TL_AFTER_SYNC)                                                         \
            WL_RT(cudaStreamSynchronize(s));                                                       \
        if (after_kernel == TL_AFTER_REALLOC) {                                                    \
            for (int b = 0; b < scratch; b++) {                                                    \
                WL_RT(cudaFree(tl_scratch[b]));                                                    \
                WL_RT(cudaMalloc(&tl_scratch[b], 4096));                                           \
            }                                                                                      \
        }                                                                                          \
        if (after_kernel == TL_AFTER_READ_SYNC)                                                    \
            WL_RT(cudaMemcpy(&tl_probe[launched - 1], m.loss, sizeof(float),                       \
                             cudaMemcpyDeviceToHost));                                             \
        if (after_kernel == TL_AFTER_READ_ASYNC)                                                   \
            WL_RT(cudaMemcpyAsync(&tl_probe[launched - 1], m.loss, sizeof(float),                  \
                                  cudaMemcpyDeviceToHost, s));                                     \
    } while (0)
    reduce_batch<<<TL_BLOCKS, TL_THREADS, 0, s>>>(m.a, batch, rows);
    TL_LAUNCHED();
    if (consumed)
        WL_RT(cudaEventRecord(consumed, s));
    for (int l = 0; l < layers; l++) {
        nn::forward_linear<float><<<TL_BLOCKS, TL_THREADS, 0, s>>>(m.y + l * W, m.a + l * W,
                                                                  m.w + l * W, W);
        TL_LAUNCHED();
        forward_relu<<<TL_BLOCKS, TL_THREADS, 0, s>>>(m.a + (l + 1) * W, m.y + l * W, W);
        TL_LAUNCHED();
    }
    loss_forward<<<1, TL_THREADS, 0, s>>>(m.loss, m.a + layers * W, W);
    TL_LAUNCHED();
    loss_backward<<<TL_BLOCKS, TL_THREADS, 0, s>>>(m.g, m.a + layers * W, W);
    TL_LAUNCHED();
    for (int l = layers - 1; l >= 0; l--) {
        backward_relu<<<TL_BLOCKS, TL_THREADS, 0, s>>>(m.g, m.g, m.y + l * W, W);
        TL_LAUNCHED();
        nn::backward_linear<float><<<TL_BLOCKS, TL_THREADS, 0, s>>>(m.g, m.gw + l * W, m.g,
                                                                   m.a + l * W, m.w + l * W, W);
        TL_LAUNCHED();
    }
    for (int l = 0; l < layers; l++) {
        nn::sgd_update<float><<<TL_BLOCKS, TL_THREADS, 0, s>>>(m.w + l * W, m.gw + l * W, W);
        TL_LAUNCHED();
    }
#undef TL_LAUNCHED
    WL_RT(cudaGetLastError());
    return launched;
}

/* The same training on the CPU; returns the largest relative difference from `losses`. */
static double verify_losses(const float *losses, const options &o, int rows)
{
    const int W = WL_TL_WIDTH, L = o.layers;
    size_t n = (size_t)rows * W;
    float *batch = (float *)malloc(n * sizeof(float));
    float *w = (float *)malloc((size_t)L * W * sizeof(float));
    float *gw = (float *)malloc((size_t)L * W * sizeof(float));
    float *y = (float *)malloc((size_t)L * W * sizeof(float));
    float *a = (float *)malloc((size_t)(L + 1) * W * sizeof(float));
    float *g = (float *)malloc((size_t)W * sizeof(float));
    if (!batch || !w || !gw || !y || !a || !g)
        WL_DIE("out of host memory for the CPU check");
    for (int l = 0; l < L; l++)
        for (int j = 0; j < W; j++)
            w[l * W + j] = wl_tl_init_weight(l, j);
    double worst = 0.0;
    for (long long it = 0; it < o.iters; it++) {
        fill_batch(batch, it, rows);
        float loss;
        wl_host_train_step(w, gw, y, a, g, &loss, batch, rows, L);
        double err = fabs((double)losses[it] - loss) / fmax(fabs((double)loss), 1e-30);
        if (!(err <= worst)) /* also catches NaN */
            worst = err;
    }
    free(batch), free(w), free(gw), free(y), free(a), free(g);
    return worst;
}

static void usage(void)
{
    fprintf(stderr, "usage: train_loop [--iters N] [--loader-ms X] [--loader sleep|compute]\n"
                    "  [--batch-bytes B] [--memory pageable|pinned] [--prefetch] [--layers L]\n"
                    "  [--readback pageable|pinned] [--copy async|sync] [--sync-per-kernel]\n"
                    "  [--realloc-per-kernel N] [--readback-per-kernel sync|async] [--fuse]"
                    " [--dlopen LIB] [--verify]\n  [--nvtx FILE] [--slow-steps A-B:MS] [--pin-thread]"
                    " [--shape regular|bursty|irregular]\n");
    exit(2);
}

static options parse(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"iters", required_argument, NULL, 'i'},      {"loader-ms", required_argument, NULL, 'm'},
        {"loader", required_argument, NULL, 'l'},     {"batch-bytes", required_argument, NULL, 'b'},
        {"memory", required_argument, NULL, 'M'},     {"prefetch", no_argument, NULL, 'p'},
        {"layers", required_argument, NULL, 'L'},     {"verify", no_argument, NULL, 'v'},
        {"readback", required_argument, NULL, 'r'},   {"copy", required_argument, NULL, 'c'},
        {"sync-per-kernel", no_argument, NULL, 'k'},
        {"dlopen", required_argument, NULL, 'D'},     {"realloc-per-kernel", required_argument, NULL, 'R'},
        {"readback-per-kernel", required_argument, NULL, 'P'}, {"fuse", no_argument, NULL, 'F'},
        {"nvtx", required_argument, NULL, 'N'},      {"slow-steps", required_argument, NULL, 'S'},
        {"pin-thread", no_argument, NULL, 'T'},       {"shape", required_argument, NULL, 'Y'},
        {NULL, 0, NULL, 0}};
    options o;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'i': o.iters = wl_parse_count("--iters", optarg); break;
        case 'm': o.loader_ms = wl_parse_count("--loader-ms", optarg); break;
        case 'l': o.loader = wl_parse_choice("--loader", optarg, loader_names); break;
        case 'b': o.batch_bytes = wl_parse_count("--batch-bytes", optarg); break;
        case 'M': o.memory = wl_parse_choice("--memory", optarg, memory_names); break;
        case 'p': o.prefetch = 1; break;
        case 'L': o.layers = (int)wl_parse_count("--layers", optarg); break;
        case 'v': o.verify = 1; break;
        case 'r': o.readback = wl_parse_choice("--readback", optarg, memory_names); break;
        case 'c': o.sync_copy = wl_parse_choice("--copy", optarg, copy_names); break;
        case 'k': o.after_kernel = TL_AFTER_SYNC; break;
        case 'R':
            o.after_kernel = TL_AFTER_REALLOC;
            o.scratch = (int)wl_parse_count("--realloc-per-kernel", optarg);
            if (o.scratch < 1 || o.scratch > TL_MAX_SCRATCH)
                WL_DIE("--realloc-per-kernel: expected 1 to %d buffers, found %d", TL_MAX_SCRATCH,
                       o.scratch);
            break;
        case 'D': o.dlopen_lib = optarg; break;
        case 'F': o.fuse = 1; break;
        case 'N': o.nvtx = optarg; break;
        case 'T': o.pin_thread = 1; break;
        case 'Y':
            if ((o.shape = wl_shape_parse(optarg)) < 0)
                WL_DIE("--shape: expected regular, bursty or irregular, found \"%s\"", optarg);
            break;
        case 'S':
            if (sscanf(optarg, "%lld-%lld:%lld", &o.slow_from, &o.slow_to, &o.slow_ms) != 3 ||
                o.slow_from < 1 || o.slow_to < o.slow_from || o.slow_ms < 0)
                WL_DIE("--slow-steps: expected A-B:MS with 1 <= A <= B and MS >= 0, found \"%s\"",
                       optarg);
            break;
        case 'P':
            o.after_kernel = wl_parse_choice("--readback-per-kernel", optarg, copy_names) ? TL_AFTER_READ_SYNC
                                                                                    : TL_AFTER_READ_ASYNC;
            break;
        default: usage();
        }
    }
    if (optind != argc)
        usage();
    if (o.readback < 0)
        o.readback = o.memory;
    if (o.prefetch && o.sync_copy)
        WL_DIE("--prefetch: expected without --copy sync, found both");
    if (o.fuse && (o.prefetch || o.after_kernel))
        WL_DIE("--fuse: expected without --prefetch and the --*-per-kernel flags, found them");
    const long long row_bytes = WL_TL_WIDTH * (long long)sizeof(float);
    if (o.batch_bytes < row_bytes || o.batch_bytes % row_bytes)
        WL_DIE("--batch-bytes: expected a positive multiple of %lld, found %lld", row_bytes,
               o.batch_bytes);
    if (o.iters < 1 || o.layers < 1 || o.layers > 1000)
        WL_DIE("--iters and --layers: expected >= 1 (layers <= 1000), found %lld and %d",
               o.iters, o.layers);
    return o;
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    if (o.nvtx && !(tl_nvtx_file = fopen(o.nvtx, "w")))
        WL_DIE("--nvtx %s: expected a writable file, found: %s", o.nvtx, strerror(errno));
    if (o.dlopen_lib && !dlopen(o.dlopen_lib, RTLD_NOW | RTLD_GLOBAL))
        WL_DIE("--dlopen %s: expected a loadable shared object, found: %s", o.dlopen_lib, dlerror());
    const int W = WL_TL_WIDTH, L = o.layers;
    const int rows = (int)(o.batch_bytes / (W * (long long)sizeof(float)));
    const int nbuf = o.prefetch ? 2 : 1;
    double t_start = wl_now_ms();

    model m;
    m.w = dev_alloc<float>((size_t)L * W);
    m.gw = dev_alloc<float>((size_t)L * W);
    m.y = dev_alloc<float>((size_t)L * W);
    m.a = dev_alloc<float>((size_t)(L + 1) * W);
    m.g = dev_alloc<float>(W);
    m.loss = dev_alloc<float>(1);
    float *d_batch[2] = {NULL, NULL}, *h_batch[2] = {NULL, NULL};
    for (int b = 0; b < nbuf; b++) {
        d_batch[b] = dev_alloc<float>((size_t)rows * W);
        h_batch[b] = (float *)host_alloc((size_t)o.batch_bytes, o.memory);
    }
    float *h_loss = (float *)host_alloc(sizeof(float), o.readback);
    const int reads = o.after_kernel == TL_AFTER_READ_SYNC || o.after_kernel == TL_AFTER_READ_ASYNC;
    if (reads)
        WL_RT(cudaMallocHost((void **)&tl_probe, (size_t)(5 * L + 3) * sizeof(float)));
    double probe_sum = 0;
    float *losses = (float *)calloc((size_t)o.iters, sizeof(float));
    float *w0 = (float *)malloc((size_t)L * W * sizeof(float));
    if (!losses || !w0)
        WL_DIE("out of host memory");
    for (int l = 0; l < L; l++)
        for (int j = 0; j < W; j++)
            w0[l * W + j] = wl_tl_init_weight(l, j);
    WL_RT(cudaMemcpy(m.w, w0, (size_t)L * W * sizeof(float), cudaMemcpyHostToDevice));
    free(w0);

    cudaStream_t compute, copy = NULL;
    cudaEvent_t copied[2] = {NULL, NULL}, consumed[2] = {NULL, NULL};
    WL_RT(cudaStreamCreate(&compute));
    if (o.prefetch) {
        WL_RT(cudaStreamCreate(&copy));
        for (int b = 0; b < 2; b++) {
            WL_RT(cudaEventCreateWithFlags(&copied[b], cudaEventDisableTiming));
            WL_RT(cudaEventCreateWithFlags(&consumed[b], cudaEventDisableTiming));
        }
    }

    long long h2d = 0, kernels = 0, d2h = 0, syncs = 0, records = 0, waits = 0;
    double loader_total = 0, wait_total = 0;
    pthread_t pin;
    if (o.pin_thread && pthread_create(&pin, NULL, tl_pin_main, NULL) != 0)
        WL_DIE("--pin-thread: expected a new thread, found: %s", strerror(errno));
    double t_loop = wl_now_ms(), runq0 = tl_thread_runq_ms();
    if (o.prefetch) {
        loader_total += load_batch(h_batch[0], 0, rows, o);
        WL_RT(cudaMemcpyAsync(d_batch[0], h_batch[0], (size_t)o.batch_bytes,
                              cudaMemcpyHostToDevice, copy));
        WL_RT(cudaEventRecord(copied[0], copy));
        h2d++, records++;
    }
    for (long long it = 0; it < o.iters; it++) {
        long long step_pushed = tl_push("train_step");
        int cur = o.prefetch ? (int)(it % 2) : 0, nxt = 1 - cur;
        if (o.prefetch) {
            WL_RT(cudaStreamWaitEvent(compute, copied[cur], 0));
            waits++;
        } else {
            loader_total += load_batch(h_batch[0], it, rows, o);
            if (o.sync_copy)
                WL_RT(cudaMemcpy(d_batch[0], h_batch[0], (size_t)o.batch_bytes,
                                 cudaMemcpyHostToDevice));
            else
                WL_RT(cudaMemcpyAsync(d_batch[0], h_batch[0], (size_t)o.batch_bytes,
                                      cudaMemcpyHostToDevice, compute));
            h2d++;
        }
        long long model_pushed = tl_push("model");
        kernels += run_step(m, d_batch[cur], rows, L, compute, consumed[cur], o.after_kernel,
                            o.scratch, o.fuse);
        tl_pop("model", it + 1, model_pushed);
        syncs += o.after_kernel == TL_AFTER_SYNC ? 5 * L + 3 : 0;
        d2h += reads ? 5 * L + 3 : 0;
        records += o.prefetch;
        WL_RT(cudaMemcpyAsync(h_loss, m.loss, sizeof(float), cudaMemcpyDeviceToHost, compute));
        d2h++;
        /* Overlap: the next batch is loaded and copied while the GPU computes this one. Its
         * buffers were last used two iterations ago, finished by the last synchronization; the
         * event wait keeps the copy correct even without it. */
        if (o.prefetch && it + 1 < o.iters) {
            loader_total += load_batch(h_batch[nxt], it + 1, rows, o);
            WL_RT(cudaStreamWaitEvent(copy, consumed[nxt], 0));
            WL_RT(cudaMemcpyAsync(d_batch[nxt], h_batch[nxt], (size_t)o.batch_bytes,
                                  cudaMemcpyHostToDevice, copy));
            WL_RT(cudaEventRecord(copied[nxt], copy));
            waits++, h2d++, records++;
        }
        double t0 = wl_now_ms();
        WL_RT(cudaStreamSynchronize(compute));
        wait_total += wl_now_ms() - t0;
        syncs++;
        losses[it] = *h_loss;
        for (int k = 0; reads && k < 5 * L + 3; k++)
            probe_sum += tl_probe[k];
        tl_pop("train_step", it + 1, step_pushed);
    }
    double loop_ms = wl_now_ms() - t_loop, runq_ms = tl_thread_runq_ms() - runq0;

    if (o.prefetch) {
        for (int b = 0; b < 2; b++) {
            WL_RT(cudaEventDestroy(copied[b]));
            WL_RT(cudaEventDestroy(consumed[b]));
        }
        WL_RT(cudaStreamDestroy(copy));
    }
    WL_RT(cudaStreamDestroy(compute));
    for (int b = 0; b < nbuf; b++) {
        WL_RT(cudaFree(d_batch[b]));
        host_free(h_batch[b], o.memory);
    }
    if (o.after_kernel == TL_AFTER_REALLOC)
        for (int b = 0; b < o.scratch; b++)
            WL_RT(cudaFree(tl_scratch[b]));
    if (o.pin_thread) {
        tl_pin_stop = 1;
        pthread_join(pin, NULL);
        for (long long i = 0; i < tl_pin_n; i++)
            WL_RT(cudaFreeHost(tl_pin_buf[i]));
    }
    float *dev_ptrs[] = {m.w, m.gw, m.y, m.a, m.g, m.loss};
    for (float *p : dev_ptrs)
        WL_RT(cudaFree(p));
    host_free(h_loss, o.readback);
    if (reads)
        WL_RT(cudaFreeHost(tl_probe));

    printf("train_loop: iters=%lld loader=%s loader_ms=%lld batch_bytes=%lld memory=%s "
           "prefetch=%d layers=%d readback=%s copy=%s sync_per_kernel=%d realloc_per_kernel=%d "
           "fuse=%d\n",
           o.iters, loader_names[o.loader], o.loader_ms, o.batch_bytes, memory_names[o.memory],
           o.prefetch, L, memory_names[o.readback], copy_names[o.sync_copy],
           o.after_kernel == TL_AFTER_SYNC, o.scratch, o.fuse);
    printf("train_loop: per_iter h2d=1 h2d_bytes=%lld kernels=%d d2h=%d d2h_bytes=%d "
           "stream_syncs=%d\n",
           o.batch_bytes, o.fuse ? 1 : 5 * L + 3, 1 + reads * (5 * L + 3), 4 * (1 + reads * (5 * L + 3)),
           1 + (o.after_kernel == TL_AFTER_SYNC ? 5 * L + 3 : 0));
    printf("train_loop: totals h2d=%lld h2d_bytes=%lld kernels=%lld d2h=%lld d2h_bytes=%lld "
           "stream_syncs=%lld event_records=%lld event_waits=%lld\n",
           h2d, h2d * o.batch_bytes, kernels, d2h, d2h * (long long)sizeof(float), syncs,
           records, waits);
    printf("train_loop: device_allocs=%lld device_bytes=%lld\n", device_allocs, device_bytes);
    printf("train_loop: loader_ms_total=%.1f sync_wait_ms_total=%.1f loop_ms=%.1f wall_ms=%.1f "
           "loop_runq_ms=%.1f\n", loader_total, wait_total, loop_ms, wl_now_ms() - t_start, runq_ms);
    printf("train_loop: loss_first=%.6f loss_last=%.6f probe_sum=%.6f\n", losses[0],
           losses[o.iters - 1], probe_sum);
    if (o.pin_thread)
        printf("train_loop: pin_thread allocs=%lld loader_cpu_ms_total=%.1f\n", tl_pin_n,
               tl_loader_cpu_ms);
    int status = 0;
    if (o.verify) {
        double err = verify_losses(losses, o, rows);
        status = err <= 1e-4 ? 0 : 1;
        printf("train_loop: verify=%s max_rel_err=%.3g\n", status ? "FAILED" : "ok", err);
    }
    free(losses);
    if (tl_nvtx_file && fclose(tl_nvtx_file) != 0)
        WL_DIE("--nvtx %s: write failed: %s", o.nvtx, strerror(errno));
    return status;
}
