/* capture_steps: a program that marks two windows of its run the ways users limit profiling to
 * a few steps (nsys --capture-range), on a fixed schedule so that time-based limits (--delay,
 * --duration) also fall between known phases.
 *
 *   capture_steps --window profiler|nvtx|nvtx-domain|none [--times FILE]
 *
 * Kernels (each 1 block of 32 threads, no parameters but a counter; distinct names so a trace
 * tells the phases apart), times from the program's start (CLOCK_MONOTONIC):
 *   t=0     cudaMalloc "early": 1073745145 bytes (1 GiB + 3321), live until the end
 *           outside_kernel x3, synchronize
 *   t=50    window 1 opens: win1_kernel x4, cudaMalloc "scratch" 268435459 bytes (256 MiB + 3),
 *           20 ms of host sleep, synchronize, cudaFree scratch; window 1 closes
 *   t=400   outside_kernel x2, synchronize
 *   t=450   window 2 opens: win2_kernel x4 (inside it, with nvtx: a nested range of the same
 *           name, opened and closed), 20 ms of host sleep, synchronize; window 2 closes
 *   t=800   outside_kernel x1, synchronize; cudaFree early
 * VRAM in use peaks at 1342180604 bytes (early + scratch) in window 1.
 *
 * How a window is marked:
 *   profiler     cudaProfilerStart() / cudaProfilerStop()
 *   nvtx         window 1 nvtxRangePushA("capture") / nvtxRangePop(), window 2
 *                nvtxRangeStartA("capture") / nvtxRangeEnd(); an outside range "other" around
 *                the t=400 kernels; ranges begun outside and ended inside a window: a start
 *                "straddle" before window 1 ended in it, a push "epoch" before window 2
 *                popped in it
 *   nvtx-domain  nvtxDomainRangePushEx(domain "trainer", message "capture") / DomainRangePop
 *                for both windows, each followed by nvtxMarkA("opened"); a default-domain range
 *                "capture" around the t=400 kernels, with nvtxMarkA("between") in it
 *   none         nothing (for --delay / --duration)
 *
 * stdout: "capture_steps: window=MODE outside=6 win1=4 win2=4 early=1073745145
 * scratch=268435459" (nothing time-dependent, so traced and untraced runs print the same).
 * --times FILE: the program's start (CLOCK_MONOTONIC ns, first thing in main), then one line
 * "open close" per window: ns read just before the call opening it and just after the call
 * closing it. Exits 0. */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdint.h>

#include "wl_common.h"

#define EARLY_BYTES 1073745145ull
#define SCRATCH_BYTES 268435459ull

__global__ void outside_kernel(int *n) { if (n) atomicAdd(n, 1); }
__global__ void win1_kernel(int *n) { if (n) atomicAdd(n, 1); }
__global__ void win2_kernel(int *n) { if (n) atomicAdd(n, 1); }

static const char *mode = "none";
static nvtxDomainHandle_t trainer;
static nvtxRangeId_t range_id, straddle;
static unsigned long long opened[2], closed[2];

static unsigned long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static nvtxEventAttributes_t named(const char *message)
{
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message;
    return a;
}

static void open_window(int w)
{
    opened[w] = now_ns();
    if (!strcmp(mode, "profiler")) {
        WL_RT(cudaProfilerStart());
    } else if (!strcmp(mode, "nvtx")) {
        if (w == 0)
            nvtxRangePushA("capture");
        else
            range_id = nvtxRangeStartA("capture");
    } else if (!strcmp(mode, "nvtx-domain")) {
        nvtxEventAttributes_t a = named("capture");
        nvtxDomainRangePushEx(trainer, &a);
        nvtxMarkA("opened");
    }
}

static void close_window(int w)
{
    if (!strcmp(mode, "profiler")) {
        WL_RT(cudaProfilerStop());
    } else if (!strcmp(mode, "nvtx")) {
        if (w == 0)
            nvtxRangePop();
        else
            nvtxRangeEnd(range_id);
    } else if (!strcmp(mode, "nvtx-domain")) {
        nvtxDomainRangePop(trainer);
    }
    closed[w] = now_ns();
}

/* Outside the windows: a range that must not open one (another name; the right name in
 * another domain). */
static void outside_range(int push)
{
    if (!strcmp(mode, "nvtx"))
        push ? (void)nvtxRangePushA("other") : (void)nvtxRangePop();
    else if (!strcmp(mode, "nvtx-domain") && push) {
        nvtxRangePushA("capture");
        nvtxMarkA("between");
    } else if (!strcmp(mode, "nvtx-domain")) {
        nvtxRangePop();
    }
}

static void launch(void (*k)(int *), int times, int *counter)
{
    for (int i = 0; i < times; i++) {
        k<<<1, 32>>>(counter);
        WL_RT(cudaGetLastError());
    }
}

int main(int argc, char **argv)
{
    const char *times = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--window") && i + 1 < argc)
            mode = argv[++i];
        else if (!strcmp(argv[i], "--times") && i + 1 < argc)
            times = argv[++i];
        else
            WL_DIE("usage: capture_steps --window profiler|nvtx|nvtx-domain|none [--times FILE]");
    }
    if (strcmp(mode, "profiler") && strcmp(mode, "nvtx") && strcmp(mode, "nvtx-domain") &&
        strcmp(mode, "none"))
        WL_DIE("--window: expected profiler, nvtx, nvtx-domain or none, found '%s'", mode);
    unsigned long long start = now_ns();
    double t0 = wl_now_ms();
    if (!strcmp(mode, "nvtx-domain"))
        trainer = nvtxDomainCreateA("trainer");

    void *early = NULL, *scratch = NULL;
    WL_RT(cudaMalloc(&early, EARLY_BYTES));
    launch(outside_kernel, 3, NULL);
    WL_RT(cudaDeviceSynchronize());

    wl_sleep_ms(t0 + 50 - wl_now_ms());
    int nvtx = strcmp(mode, "nvtx") == 0;
    if (nvtx)
        straddle = nvtxRangeStartA("straddle");
    open_window(0);
    launch(win1_kernel, 4, NULL);
    if (nvtx)
        nvtxRangeEnd(straddle);
    WL_RT(cudaMalloc(&scratch, SCRATCH_BYTES));
    wl_sleep_ms(20);
    WL_RT(cudaDeviceSynchronize());
    WL_RT(cudaFree(scratch));
    close_window(0);

    wl_sleep_ms(t0 + 400 - wl_now_ms());
    outside_range(1);
    launch(outside_kernel, 2, NULL);
    WL_RT(cudaDeviceSynchronize());
    outside_range(0);

    wl_sleep_ms(t0 + 450 - wl_now_ms());
    if (nvtx)
        nvtxRangePushA("epoch");
    open_window(1);
    launch(win2_kernel, 2, NULL);
    if (nvtx) { /* nested, same name: the outermost decides; then epoch's pop */
        nvtxRangePushA("capture");
        nvtxRangePop();
        nvtxRangePop();
    } else if (strcmp(mode, "nvtx-domain") == 0) {
        nvtxEventAttributes_t a = named("capture");
        nvtxDomainRangePushEx(trainer, &a);
        nvtxDomainRangePop(trainer);
    }
    launch(win2_kernel, 2, NULL);
    wl_sleep_ms(20);
    WL_RT(cudaDeviceSynchronize());
    close_window(1);

    wl_sleep_ms(t0 + 800 - wl_now_ms());
    launch(outside_kernel, 1, NULL);
    WL_RT(cudaDeviceSynchronize());
    WL_RT(cudaFree(early));

    if (times) {
        FILE *f = fopen(times, "w");
        if (!f)
            WL_DIE("cannot write %s: %s", times, strerror(errno));
        fprintf(f, "%llu\n", start);
        for (int w = 0; w < 2; w++)
            fprintf(f, "%llu %llu\n", opened[w], closed[w]);
        fclose(f);
    }
    printf("capture_steps: window=%s outside=6 win1=4 win2=4 early=%llu scratch=%llu\n", mode,
           EARLY_BYTES, SCRATCH_BYTES);
    return 0;
}
