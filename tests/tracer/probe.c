/* probe: a small CUDA program exercising one way of reaching the driver per mode, for the tracer
 * suite. It knows nothing of tracing; it prints what it did ("probe: key=value ...").
 *
 *   probe dlopen      dlopen("libcuda.so.1") + dlsym(handle, ...): cuMemAlloc_v2 1 MiB,
 *                     cuMemsetD8_v2 of it, cuMemFree_v2
 *   probe entry       cudaMalloc of 3 MiB by symbol (which also makes the primary context
 *                     current), cudaGetDriverEntryPoint("cuMemAlloc") and
 *                     ByVersion("cuMemFree", 12000), those pointers: 2 MiB allocated and freed;
 *                     then cudaFree of the 3 MiB
 *   probe errno       errno set to 4242 before cuMemAlloc_v2 (through dlsym) is 4242 after it;
 *                     the same around cuGraphInstantiateWithFlags of a graph of one memset node
 *   probe nocuda      no CUDA at all (prints and exits 7)
 *   probe stress T N [R]  T threads, each N cuMemsetD8Async_v2 of 64 bytes on its own stream,
 *                     then cuStreamSynchronize (nothing freed: the simulation's instant mode can
 *                     hang in the context synchronization of concurrent cuMemFree calls); with R,
 *                     each thread paced to R calls/s on average (below)
 *   probe copies T N  T threads, each N cuMemcpyHtoD_v2 of 64 bytes from its own malloc'd
 *                     (pageable) buffer into its own 64-byte allocation
 *   probe sleep       initializes CUDA, allocates 4 KiB, then sleeps until killed
 *   probe exec        cuMemAlloc_v2 of 4 KiB, 100 cuMemsetD8_v2 of it, an execv of a program
 *                     that does not exist (prints its result and errno), 1 more cuMemsetD8_v2,
 *                     then execl of itself in mode nocuda (which exits 7)
 *   probe closefds F  cuMemAlloc_v2 of 4 KiB and 10 cuMemsetD8_v2, closes every descriptor above
 *                     2, opens F (it gets the lowest number) and writes 6 lines "line K" into
 *                     it, 120 ms apart, each after one cuMemsetD8_v2
 *   probe forkstart   4 threads make the process's first CUDA calls (cuInit, primary context,
 *                     cuMemAlloc_v2 of 64 bytes, 50 cuMemsetD8_v2) while the main thread forks
 *                     20 children (10 back to back from the start, then 1 ms apart); each child
 *                     walks the loaded objects (dl_iterate_phdr, which in this mode holds the
 *                     loader's lock 200 us longer in every caller), tries cuInit, and if
 *                     the driver lets it, a primary context and cuMemAlloc_v2/cuMemFree_v2 of
 *                     64 bytes, then exits 0; prints how many children exited 0
 *   probe children    cuMemAlloc_v2 of 4 KiB, 10 cuMemsetD8_v2; a fork child that uses no CUDA
 *                     and leaves by _exit(3); a vfork child that execs a program that does not
 *                     exist and leaves by _exit(127); 10 more cuMemsetD8_v2; prints both
 *                     children's statuses; returns 0
 *   probe sigexit     cuMemAlloc_v2 of 4 KiB, 10 cuMemsetD8_v2, then raises SIGUSR1, whose
 *                     handler calls _exit(9)
 *   probe threadexit  cuMemAlloc_v2 of 4 KiB, 10 cuMemsetD8_v2; a second thread makes 10 more
 *                     and calls exit(12) while the main thread waits in pthread_join
 *   probe setup       the runtime calls that bring CUDA up, as cuda-samples programs start:
 *                     cudaGetDeviceCount, cudaSetDevice(0), cudaProfilerStart, in that order;
 *                     prints their results ("probe: NAME=R ..."); exits 1 if one failed (with
 *                     FAKECUDA_FAIL=cuInit:1:100 every one fails), else 0 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *drv;

static void *sym(const char *name)
{
    void *p = dlsym(drv, name);
    if (!p) {
        fprintf(stderr, "probe: libcuda.so.1 has no %s\n", name);
        exit(2);
    }
    return p;
}

#define CALL(name, ...)                                                                  \
    do {                                                                                 \
        CUresult r_ = ((CUresult(*)())sym(#name))(__VA_ARGS__);                          \
        if (r_ != CUDA_SUCCESS) {                                                        \
            fprintf(stderr, "probe: %s failed: %d\n", #name, (int)r_);                   \
            exit(3);                                                                     \
        }                                                                                \
    } while (0)

static CUcontext ctx;

static void init(void)
{
    drv = dlopen("libcuda.so.1", RTLD_NOW);
    if (!drv) {
        fprintf(stderr, "probe: dlopen libcuda.so.1: %s\n", dlerror());
        exit(2);
    }
    CUdevice dev;
    CALL(cuInit, 0);
    CALL(cuDeviceGet, &dev, 0);
    CALL(cuDevicePrimaryCtxRetain, &ctx, dev);
    CALL(cuCtxSetCurrent, ctx);
}

/* init, cuMemAlloc_v2 of 4 KiB and n cuMemsetD8_v2 of it: the allocation. */
static CUdeviceptr init_alloc_set(int n)
{
    init();
    CUdeviceptr d;
    CALL(cuMemAlloc_v2, &d, (size_t)4096);
    for (int i = 0; i < n; i++)
        CALL(cuMemsetD8_v2, d, (unsigned char)i, (size_t)4096);
    return d;
}

static int n_iters;

static void *forkstart_thread(void *arg)
{
    (void)arg;
    CUdevice dev;
    CUcontext c;
    CUdeviceptr d;
    CALL(cuInit, 0);
    CALL(cuDeviceGet, &dev, 0);
    CALL(cuDevicePrimaryCtxRetain, &c, dev);
    CALL(cuCtxSetCurrent, c);
    CALL(cuMemAlloc_v2, &d, (size_t)64);
    for (int i = 0; i < 50; i++)
        CALL(cuMemsetD8_v2, d, (unsigned char)i, (size_t)64);
    return NULL;
}

/* In forkstart mode every walk of the loaded objects in the process, the tracer's included
 * (the program's definition comes first; it is exported), holds the loader's lock 200 us longer,
 * as a preempted thread would on a busy machine: a fork falls inside one of the tracer's walks
 * unless the tracer keeps its walks and fork apart. */
static int slow_walks;
typedef int (*walk_fn)(struct dl_phdr_info *, size_t, void *);
struct slow_walk {
    walk_fn fn;
    void *arg;
    int first;
};

static int slow_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct slow_walk *w = arg;
    if (w->first) {
        w->first = 0;
        usleep(200);
    }
    return w->fn(info, size, w->arg);
}

int dl_iterate_phdr(walk_fn fn, void *arg)
{
    static int (*real)(walk_fn, void *);
    if (!real)
        real = (int (*)(walk_fn, void *))dlsym(RTLD_NEXT, "dl_iterate_phdr");
    if (!slow_walks)
        return real(fn, arg);
    struct slow_walk w = {fn, arg, 1};
    return real(slow_object, &w);
}

static int forkstart_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size;
    ++*(int *)arg;
    return 0;
}

/* A forked child of a process that may have initialized CUDA: it walks the loaded objects first
 * (as a C++ throw or a dlopen does), then CUDA may refuse; it must not hang. */
static void forkstart_child(void)
{
    int objects = 0;
    dl_iterate_phdr(forkstart_object, &objects);
    CUdevice dev;
    CUcontext c;
    CUdeviceptr d;
    if (((CUresult(*)(unsigned))sym("cuInit"))(0) == CUDA_SUCCESS &&
        ((CUresult(*)(CUdevice *, int))sym("cuDeviceGet"))(&dev, 0) == CUDA_SUCCESS &&
        ((CUresult(*)(CUcontext *, CUdevice))sym("cuDevicePrimaryCtxRetain"))(&c, dev) ==
            CUDA_SUCCESS &&
        ((CUresult(*)(CUcontext))sym("cuCtxSetCurrent"))(c) == CUDA_SUCCESS &&
        ((CUresult(*)(CUdeviceptr *, size_t))sym("cuMemAlloc_v2"))(&d, 64) == CUDA_SUCCESS)
        ((CUresult(*)(CUdeviceptr))sym("cuMemFree_v2"))(d);
    exit(0);
}

static void sigexit_handler(int sig)
{
    (void)sig;
    _exit(9);
}

static void *threadexit_thread(void *arg)
{
    CUdeviceptr d = *(CUdeviceptr *)arg;
    CALL(cuCtxSetCurrent, ctx);
    for (int i = 0; i < 10; i++)
        CALL(cuMemsetD8_v2, d, (unsigned char)i, (size_t)4096);
    exit(12);
}

/* Calls per second of each stress thread, 0: as fast as it can. */
static double pace_rate;

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Paced (pace_rate): call i is due at start + i / pace_rate. A thread ahead of its schedule
 * sleeps until the call is due, at least 1 ms, then makes the calls due by then back to back:
 * the rate holds on average, in bursts of about a millisecond's calls, and no thread spins (64
 * threads spinning on a few cores would take the writer's CPU and measure the spin). */
static void pace(uint64_t start, int i)
{
    if (pace_rate <= 0)
        return;
    uint64_t due = start + (uint64_t)(i / pace_rate * 1e9), now = mono_ns();
    if (now >= due)
        return;
    uint64_t ns = due - now < 1000000 ? 1000000 : due - now;
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&t, NULL);
}

static void *stress_thread(void *arg)
{
    (void)arg;
    CUstream s;
    CUdeviceptr d;
    CALL(cuCtxSetCurrent, ctx);
    CALL(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
    CALL(cuMemAlloc_v2, &d, (size_t)64);
    uint64_t start = mono_ns();
    for (int i = 0; i < n_iters; i++) {
        pace(start, i);
        CALL(cuMemsetD8Async, d, (unsigned char)i, (size_t)64, s);
    }
    CALL(cuStreamSynchronize, s);
    return NULL; /* the allocation and stream go with the process */
}

static void *copies_thread(void *arg)
{
    (void)arg;
    CUdeviceptr d;
    char *h = malloc(64);
    if (!h)
        exit(3);
    memset(h, 1, 64);
    CALL(cuCtxSetCurrent, ctx);
    CALL(cuMemAlloc_v2, &d, (size_t)64);
    for (int i = 0; i < n_iters; i++)
        CALL(cuMemcpyHtoD_v2, d, h, (size_t)64);
    free(h);
    return NULL; /* the allocation goes with the process */
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "nocuda")) {
        printf("probe: mode=nocuda\n");
        return 7;
    }
    if (!strcmp(mode, "dlopen")) {
        init();
        CUdeviceptr d;
        CALL(cuMemAlloc_v2, &d, (size_t)1 << 20);
        CALL(cuMemsetD8_v2, d, 0, (size_t)1 << 20);
        CALL(cuMemFree_v2, d);
        printf("probe: mode=dlopen allocs=1 bytes=1048576 sets=1\n");
        return 0;
    }
    if (!strcmp(mode, "errno")) {
        init();
        CUdeviceptr d;
        errno = 4242;
        CUresult r = ((CUresult(*)(CUdeviceptr *, size_t))sym("cuMemAlloc_v2"))(&d, 4096);
        int e = errno;
        printf("probe: mode=errno result=%d errno=%d\n", (int)r, e);
        /* an instantiation, after which the tracer lists the graph's nodes through the driver */
        CUgraph g;
        CUgraphNode n;
        CUgraphExec x;
        CUDA_MEMSET_NODE_PARAMS mp = {.dst = d, .value = 0, .elementSize = 1, .width = 4096,
                                      .height = 1};
        CALL(cuGraphCreate, &g, 0);
        CALL(cuGraphAddMemsetNode, &n, g, NULL, 0, &mp, ctx);
        errno = 4242;
        r = ((CUresult(*)(CUgraphExec *, CUgraph, unsigned long long))sym(
            "cuGraphInstantiateWithFlags"))(&x, g, 0);
        int ge = errno;
        printf("probe: mode=errno instantiate=%d errno=%d\n", (int)r, ge);
        return e == 4242 && ge == 4242 ? 0 : 1;
    }
    if (!strcmp(mode, "entry")) {
/* Deprecated in CUDA 13 in favour of ByVersion, but programs (PyTorch) still call it. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        void *alloc = NULL, *release = NULL, *p;
        if (cudaMalloc(&p, 3u << 20) != cudaSuccess)
            return 3;
        enum cudaDriverEntryPointQueryResult q1, q2;
        if (cudaGetDriverEntryPoint("cuMemAlloc", &alloc, cudaEnableDefault, &q1) != cudaSuccess ||
            cudaGetDriverEntryPointByVersion("cuMemFree", &release, 12000, cudaEnableDefault,
                                             &q2) != cudaSuccess || !alloc || !release) {
            fprintf(stderr, "probe: cudaGetDriverEntryPoint failed\n");
            return 3;
        }
#pragma GCC diagnostic pop
        CUdeviceptr d;
        if (((CUresult(*)(CUdeviceptr *, size_t))alloc)(&d, 2u << 20) != CUDA_SUCCESS ||
            ((CUresult(*)(CUdeviceptr))release)(d) != CUDA_SUCCESS)
            return 3;
        if (cudaFree(p) != cudaSuccess)
            return 3;
        printf("probe: mode=entry driver_bytes=2097152 runtime_bytes=3145728\n");
        return 0;
    }
    if ((!strcmp(mode, "stress") || !strcmp(mode, "copies")) && argc > 3) {
        int nt = atoi(argv[2]), copies = !strcmp(mode, "copies");
        n_iters = atoi(argv[3]);
        pace_rate = !copies && argc > 4 ? atof(argv[4]) : 0;
        init();
        pthread_t th[256];
        for (int i = 0; i < nt && i < 256; i++)
            pthread_create(&th[i], NULL, copies ? copies_thread : stress_thread, NULL);
        for (int i = 0; i < nt && i < 256; i++)
            pthread_join(th[i], NULL);
        printf("probe: mode=%s threads=%d %s=%d\n", mode, nt, copies ? "copies" : "sets",
               nt * n_iters);
        return 0;
    }
    if (!strcmp(mode, "sleep")) {
        init();
        CUdeviceptr d;
        CALL(cuMemAlloc_v2, &d, (size_t)4096);
        printf("probe: mode=sleep ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "exec")) {
        CUdeviceptr d = init_alloc_set(100);
        char *none[] = {"probe-none", NULL};
        errno = 0;
        int r = execv("/nonexistent/probe-none", none);
        printf("probe: mode=exec failed_exec=%d errno=%d\n", r, errno);
        fflush(stdout);
        CALL(cuMemsetD8_v2, d, (unsigned char)0, (size_t)4096);
        execl("/proc/self/exe", "probe", "nocuda", (char *)NULL);
        fprintf(stderr, "probe: exec of itself: %s\n", strerror(errno));
        return 2;
    }
    if (!strcmp(mode, "forkstart")) {
        slow_walks = 1;
        drv = dlopen("libcuda.so.1", RTLD_NOW); /* no CUDA call yet: the threads start it */
        if (!drv)
            return 2;
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, forkstart_thread, NULL);
        /* 200 us apart: the threads' first calls start the trace and capture their first call
         * sites (the tracer's walks of the loaded objects) within a few milliseconds */
        int ok = 0;
        pid_t kids[20];
        for (int i = 0; i < 20; i++) {
            kids[i] = fork();
            if (kids[i] == 0)
                forkstart_child();
            usleep(200);
        }
        for (int i = 0; i < 20; i++) {
            int st;
            int good = kids[i] > 0 && waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) &&
                       WEXITSTATUS(st) == 0;
            if (!good)
                fprintf(stderr, "probe: child %d: %s %d\n", i, WIFEXITED(st) ? "status" : "signal",
                        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            ok += good;
        }
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        printf("probe: mode=forkstart children=20 ok=%d\n", ok);
        return 0;
    }
    if (!strcmp(mode, "closefds") && argc > 2) {
        CUdeviceptr d = init_alloc_set(10);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        FILE *f = fopen(argv[2], "w");
        if (!f)
            return 3;
        for (int i = 0; i < 6; i++) {
            CALL(cuMemsetD8_v2, d, (unsigned char)i, (size_t)4096);
            fprintf(f, "line %d\n", i);
            fflush(f);
            usleep(120000);
        }
        printf("probe: mode=closefds fd=%d\n", fileno(f));
        return fclose(f) != 0;
    }
    if (!strcmp(mode, "children")) {
        CUdeviceptr d = init_alloc_set(10);
        int st_fork = -1, st_vfork = -1;
        pid_t pid = fork();
        if (pid == 0)
            _exit(3);
        waitpid(pid, &st_fork, 0);
        pid = vfork();
        if (pid == 0) {
            execl("/nonexistent/probe-none", "probe-none", (char *)NULL);
            _exit(127);
        }
        waitpid(pid, &st_vfork, 0);
        for (int i = 0; i < 10; i++)
            CALL(cuMemsetD8_v2, d, (unsigned char)i, (size_t)4096);
        printf("probe: mode=children fork=%d vfork=%d\n", WIFEXITED(st_fork) ? WEXITSTATUS(st_fork) : -1,
               WIFEXITED(st_vfork) ? WEXITSTATUS(st_vfork) : -1);
        return 0;
    }
    if (!strcmp(mode, "sigexit")) {
        init_alloc_set(10);
        signal(SIGUSR1, sigexit_handler);
        raise(SIGUSR1);
        return 2;
    }
    if (!strcmp(mode, "threadexit")) {
        CUdeviceptr d = init_alloc_set(10);
        pthread_t th;
        pthread_create(&th, NULL, threadexit_thread, &d);
        pthread_join(th, NULL);
        return 2;
    }
    if (!strcmp(mode, "setup")) {
        int n = 0;
        cudaError_t r[3] = {cudaGetDeviceCount(&n), cudaSetDevice(0), cudaProfilerStart()};
        printf("probe: cudaGetDeviceCount=%d cudaSetDevice=%d cudaProfilerStart=%d\n", (int)r[0],
               (int)r[1], (int)r[2]);
        return r[0] != cudaSuccess || r[1] != cudaSuccess || r[2] != cudaSuccess;
    }
    fprintf(stderr, "usage: probe dlopen|entry|errno|nocuda|stress T N|copies T N|sleep|exec|closefds F|"
            "forkstart|children|sigexit|threadexit|setup\n");
    return 2;
}
