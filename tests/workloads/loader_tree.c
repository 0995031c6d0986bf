/* loader_tree: a main process using CUDA and K forked loader workers that never touch it, as a
 * PyTorch DataLoader has, each doing a known amount of work that it measures itself:
 *
 *   loader_tree K CPU_MS BYTES HOLD_MS FILE
 *
 * The main process allocates device memory and copies to it (the trace starts), writes BYTES
 * bytes into FILE, then forks K workers. Each spins until its own CPU time
 * (CLOCK_PROCESS_CPUTIME_ID) reaches CPU_MS, reads FILE with read() to its end, and reports on
 * stderr "worker pid=P cpu_ns=C read=B": C its CPU time and B the bytes its read() calls
 * returned, once both are done (it reads nothing else: B is its whole rchar). It then waits for
 * the main process's word (the end of a pipe) and exits 0. The main process keeps copying for
 * HOLD_MS after the last report (so that a sampler sees each worker idle after its work), sets
 * errno to EILSEQ before that time and checks nothing changed it, releases the workers, reaps them
 * and prints "loader_tree: workers=K ok" on stdout; it exits 0, or 1 naming what failed. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void worker(int report, int go, uint64_t cpu_goal, const char *file)
{
    volatile uint64_t x = 1;
    while (cpu_ns() < cpu_goal)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        WL_DIE("open %s: %s", file, strerror(errno));
    static char buf[1 << 16];
    uint64_t got = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        got += (uint64_t)n;
    if (n < 0)
        WL_DIE("read %s: %s", file, strerror(errno));
    close(fd);
    char line[128];
    int len = snprintf(line, sizeof line, "worker pid=%d cpu_ns=%llu read=%llu\n", (int)getpid(),
                       (unsigned long long)cpu_ns(), (unsigned long long)got);
    if (write(report, line, (size_t)len) != len)
        WL_DIE("report: %s", strerror(errno));
    char c;
    while (read(go, &c, 1) > 0) /* the main process's word: the pipe's end */
        ;
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 6)
        WL_DIE("usage: loader_tree K CPU_MS BYTES HOLD_MS FILE");
    int k = atoi(argv[1]);
    uint64_t cpu_goal = strtoull(argv[2], NULL, 10) * 1000000u;
    size_t bytes = strtoull(argv[3], NULL, 10);
    uint64_t hold = strtoull(argv[4], NULL, 10) * 1000000u;
    const char *file = argv[5];
    if (k < 1 || k > 64)
        WL_DIE("K: expected 1 to 64 workers, found %s", argv[1]);

    void *dev = NULL;
    size_t chunk = 1 << 20;
    char *host = calloc(1, chunk);
    if (!host)
        WL_DIE("calloc of %zu bytes failed", chunk);
    WL_RT(cudaMalloc(&dev, chunk));
    WL_RT(cudaMemcpy(dev, host, chunk, cudaMemcpyHostToDevice));

    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        WL_DIE("create %s: %s", file, strerror(errno));
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        if (write(fd, host, n) != (ssize_t)n)
            WL_DIE("write %s: %s", file, strerror(errno));
        done += n;
    }
    close(fd);

    int report[2], go[2];
    if (pipe(report) || pipe(go))
        WL_DIE("pipe: %s", strerror(errno));
    pid_t pids[64];
    for (int i = 0; i < k; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            WL_DIE("fork: %s", strerror(errno));
        if (pids[i] == 0) {
            close(report[0]);
            close(go[1]);
            worker(report[1], go[0], cpu_goal, file);
        }
    }
    close(report[1]);
    close(go[0]);
    /* the workers' reports, passed on to stderr line by line */
    FILE *in = fdopen(report[0], "r");
    char line[128];
    int reports = 0;
    while (reports < k && fgets(line, sizeof line, in)) {
        fputs(line, stderr);
        reports++;
    }
    if (reports != k)
        WL_DIE("expected %d worker reports, got %d", k, reports);
    errno = EILSEQ;
    uint64_t until = mono_ns() + hold;
    while (mono_ns() < until) {
        struct timespec ms = {0, 5000000};
        nanosleep(&ms, NULL);
        if (cudaMemcpy(dev, host, chunk, cudaMemcpyHostToDevice) != cudaSuccess)
            WL_DIE("cudaMemcpy failed while holding");
    }
    if (errno != EILSEQ)
        WL_DIE("errno: expected EILSEQ (%d) kept, found %d", EILSEQ, errno);
    close(go[1]);
    for (int i = 0; i < k; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            WL_DIE("worker %d did not exit 0", (int)pids[i]);
    }
    WL_RT(cudaFree(dev));
    free(host);
    printf("loader_tree: workers=%d ok\n", k);
    return 0;
}
