/* vram_peak: device allocations with a known peak, freed in a known order, and a deliberate
 * out-of-memory failure while memory is held. Runtime API from C (cudaMalloc / cudaFree); each
 * allocation is made by its own function so call stacks tell them apart.
 *
 * Sizes in bytes (requested sizes, deliberately not multiples of any allocation granularity):
 *   weights      alloc_weights      1610612736        (1.5 GiB)
 *   grads        alloc_grads        1610612736        (1.5 GiB)
 *   optimizer    alloc_optimizer    3221225472        (3 GiB)
 *   activations  alloc_activations  5368721465        (5 GiB + 12345)
 *   workspace    alloc_workspace     268435457        (256 MiB + 1)
 *   small_acts   alloc_activations  2147483648        (2 GiB)
 *   huge_acts    alloc_activations 80530636800        (75 GiB): fails
 *
 * Sequence and what a correct trace shows:
 *   1. cudaMalloc weights, grads, optimizer, activations, workspace, in that order: in use after
 *      each 1610612736, 3221225472, 6442450944, 11811172409, 12079607866.
 *   2. The peak: 12079607866 bytes in 5 live allocations, reached at the workspace allocation.
 *   3. cudaFree workspace, then activations: in use 11811172409, 6442450944.
 *   4. cudaMalloc small_acts: in use 8589934592.
 *   5. cudaMemGetInfo, then cudaMalloc huge_acts fails with cudaErrorMemoryAllocation (2): it
 *      would fit an empty 80 GB H100 but not beside the 8589934592 bytes held by weights, grads,
 *      optimizer and small_acts (the four live allocations at the failure).
 *   6. cudaFree small_acts, optimizer, grads, weights, in that order: in use 6442450944,
 *      3221225472, 1610612736, 0.
 * In all: 6 successful cudaMalloc calls, 1 failed, 6 cudaFree; nothing leaked.
 * The program exits 0 after reporting the failure on stdout ("vram_peak: oom ...").
 *
 * No memory is written: on the simulation, device memory is only reserved. */
#include <cuda_runtime_api.h>
#include <stdint.h>

#include "wl_common.h"

#define GiB (1024ULL * 1024 * 1024)
#define MiB (1024ULL * 1024)

static unsigned long long in_use, peak;

static void *must_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    WL_RT(cudaMalloc(&p, bytes));
    in_use += bytes;
    if (in_use > peak)
        peak = in_use;
    printf("vram_peak: alloc %s bytes=%zu in_use=%llu\n", what, bytes, in_use);
    return p;
}

static void must_free(void *p, size_t bytes, const char *what)
{
    WL_RT(cudaFree(p));
    in_use -= bytes;
    printf("vram_peak: free %s bytes=%zu in_use=%llu\n", what, bytes, in_use);
}

/* One function per kind of allocation: distinct call stacks. */
static __attribute__((noinline)) void *alloc_weights(size_t b) { return must_alloc(b, "weights"); }
static __attribute__((noinline)) void *alloc_grads(size_t b) { return must_alloc(b, "grads"); }
static __attribute__((noinline)) void *alloc_optimizer(size_t b)
{
    return must_alloc(b, "optimizer");
}
static __attribute__((noinline)) void *alloc_workspace(size_t b)
{
    return must_alloc(b, "workspace");
}
static __attribute__((noinline)) void *alloc_activations(size_t b, const char *what)
{
    return must_alloc(b, what);
}

int main(void)
{
    const size_t weights_b = 3 * GiB / 2, grads_b = 3 * GiB / 2, optimizer_b = 3 * GiB,
                 acts_b = 5 * GiB + 12345, workspace_b = 256 * MiB + 1,
                 small_b = 2 * GiB, huge_b = 75 * GiB;

    void *weights = alloc_weights(weights_b);
    void *grads = alloc_grads(grads_b);
    void *optimizer = alloc_optimizer(optimizer_b);
    void *acts = alloc_activations(acts_b, "activations");
    void *workspace = alloc_workspace(workspace_b);
    printf("vram_peak: peak=%llu live=5\n", peak);
    must_free(workspace, workspace_b, "workspace");
    must_free(acts, acts_b, "activations");
    void *small = alloc_activations(small_b, "small_acts");

    size_t free_b = 0, total_b = 0;
    WL_RT(cudaMemGetInfo(&free_b, &total_b));
    if (huge_b <= free_b || huge_b > total_b)
        WL_DIE("expected free < %zu <= total, found free=%zu total=%zu: the out-of-memory "
               "would not happen as designed", huge_b, free_b, total_b);
    void *huge = NULL;
    cudaError_t e = cudaMalloc(&huge, huge_b);
    if (e != cudaErrorMemoryAllocation)
        WL_DIE("cudaMalloc(%zu): expected cudaErrorMemoryAllocation, got %s (%d)", huge_b,
               cudaGetErrorName(e), (int)e);
    /* The failure is also the thread's last error: clear it, as a program that recovers from
     * an out-of-memory would. */
    cudaGetLastError();
    printf("vram_peak: oom requested=%zu error=%s in_use=%llu free=%zu total=%zu live=4\n",
           huge_b, cudaGetErrorName(e), in_use, free_b, total_b);

    must_free(small, small_b, "small_acts");
    must_free(optimizer, optimizer_b, "optimizer");
    must_free(grads, grads_b, "grads");
    must_free(weights, weights_b, "weights");
    printf("vram_peak: allocs=6 failed_allocs=1 frees=6 peak=%llu final_in_use=%llu\n", peak,
           in_use);
    return 0;
}
