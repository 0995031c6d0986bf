/* threads: T host threads (pthreads named "worker-0".."worker-T-1"), each with its own
 * non-blocking stream, launching kernels and copying concurrently, then checking the results.
 *
 * Flags: --threads T [8], --rounds R [10], --elems N [65536] floats per thread, --kernels K [4]
 * launches per round.
 *
 * Each thread t, after all threads have started (a barrier), does:
 *   cudaStreamCreateWithFlags(cudaStreamNonBlocking); 1 cudaMalloc of 4N bytes; 1 cudaMallocHost
 *   of 4N bytes; then R rounds of
 *     1 cudaMemcpyAsync host-to-device of 4N bytes (pinned),
 *     K launches of affine<float> (_Z6affineIfEvPT_S0_S0_i) <<<ceil(N/256), 256>>>,
 *     1 cudaMemcpyAsync device-to-host of 4N bytes (pinned),
 *     1 cudaStreamSynchronize;
 *   then cudaFree, cudaFreeHost, cudaStreamDestroy.
 * What a correct trace shows, for the defaults: 8 threads with distinct thread ids and names,
 * 8 distinct streams, one per thread, each stream used only by its thread; per thread 10 H2D and
 * 10 D2H copies of 262144 bytes and 40 kernels; totals 80 H2D, 80 D2H (20971520 bytes each way),
 * 320 kernels, 80 stream synchronizations, 8 cudaMalloc of 262144 bytes (a peak of exactly
 * 2097152 bytes: every thread allocates, then waits for the others, before it works), and API
 * calls of different threads overlapping in time.
 *
 * Values stay integers below 2^24 for K <= 12, so every result is exact (on a GPU too, where
 * a*x+b is one fused multiply-add) and the check compares bit for bit. */
#include <cuda_runtime.h>
#include <getopt.h>
#include <pthread.h>

#include "wl_common.h"
#include "wl_kernels.h"

struct worker {
    pthread_t tid;
    int index;
    long long mismatches;
};

static long long rounds = 10, elems = 65536, kernels = 4;
static pthread_barrier_t start_line;

static float initial_value(int t, long long round, long long i)
{
    return (float)((i + 7 * round) % 1000 + t);
}

static void *work(void *arg)
{
    worker *w = (worker *)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", w->index);
    pthread_setname_np(pthread_self(), name);
    pthread_barrier_wait(&start_line);

    const int n = (int)elems;
    const size_t bytes = (size_t)n * sizeof(float);
    cudaStream_t s;
    float *d = NULL, *h = NULL;
    float *expect = (float *)malloc(bytes);
    if (!expect)
        WL_DIE("malloc(%zu) failed", bytes);
    WL_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    WL_RT(cudaMalloc((void **)&d, bytes));
    WL_RT(cudaMallocHost((void **)&h, bytes));
    /* every thread holds its buffers before any starts work, so the peak is exact */
    pthread_barrier_wait(&start_line);
    for (long long r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++)
            h[i] = expect[i] = initial_value(w->index, r, i);
        WL_RT(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
        for (long long k = 0; k < kernels; k++) {
            float b = (float)(w->index + k);
            affine<float><<<(n + 255) / 256, 256, 0, s>>>(d, 2.0f, b, n);
            wl_host_affine(expect, 2.0f, b, n);
        }
        WL_RT(cudaGetLastError());
        WL_RT(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
        WL_RT(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++)
            w->mismatches += h[i] != expect[i];
    }
    WL_RT(cudaFree(d));
    WL_RT(cudaFreeHost(h));
    WL_RT(cudaStreamDestroy(s));
    free(expect);
    return NULL;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"threads", required_argument, NULL, 't'},
                                              {"rounds", required_argument, NULL, 'r'},
                                              {"elems", required_argument, NULL, 'n'},
                                              {"kernels", required_argument, NULL, 'k'},
                                              {NULL, 0, NULL, 0}};
    long long nthreads = 8;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 't': nthreads = wl_parse_count("--threads", optarg); break;
        case 'r': rounds = wl_parse_count("--rounds", optarg); break;
        case 'n': elems = wl_parse_count("--elems", optarg); break;
        case 'k': kernels = wl_parse_count("--kernels", optarg); break;
        default:
            fprintf(stderr,
                    "usage: threads [--threads T] [--rounds R] [--elems N] [--kernels K]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 1024 || elems < 1 || elems > (1 << 28) || kernels > 12 ||
        optind != argc)
        WL_DIE("expected 1 <= threads <= 1024, 1 <= elems <= 2^28, kernels <= 12, found %lld, "
               "%lld, %lld", nthreads, elems, kernels);

    worker *ws = (worker *)calloc((size_t)nthreads, sizeof(worker));
    if (!ws)
        WL_DIE("out of memory");
    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
    double t0 = wl_now_ms();
    for (int t = 0; t < nthreads; t++) {
        ws[t].index = t;
        int e = pthread_create(&ws[t].tid, NULL, work, &ws[t]);
        if (e)
            WL_DIE("pthread_create: %s", strerror(e));
    }
    long long mismatches = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(ws[t].tid, NULL);
        mismatches += ws[t].mismatches;
    }
    pthread_barrier_destroy(&start_line);
    long long bytes = elems * (long long)sizeof(float);
    printf("threads: threads=%lld rounds=%lld elems=%lld kernels_per_round=%lld\n", nthreads,
           rounds, elems, kernels);
    printf("threads: per_thread streams=1 h2d=%lld d2h=%lld kernels=%lld copy_bytes=%lld\n",
           rounds, rounds, rounds * kernels, bytes);
    printf("threads: totals h2d=%lld d2h=%lld h2d_bytes=%lld kernels=%lld stream_syncs=%lld "
           "wall_ms=%.1f\n",
           nthreads * rounds, nthreads * rounds, nthreads * rounds * bytes,
           nthreads * rounds * kernels, nthreads * rounds, wl_now_ms() - t0);
    printf("threads: verify=%s mismatches=%lld\n", mismatches ? "FAILED" : "ok", mismatches);
    free(ws);
    return mismatches ? 1 : 0;
}
