/* loader_tree: a main process using CUDA and K forked loader workers that never touch it, as a
 * PyTorch DataLoader has, each doing a known amount of work that it measures itself:
 *
 *   loader_tree [--steps N [--main-ms M] [--after-ms A] [--existing] [--memset-step]] K CPU_MS BYTES HOLD_MS FILE
 *
 * Without --steps: the main process allocates device memory and copies to it (the trace
 * starts), writes BYTES bytes into FILE, then forks K workers. Each spins until its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID: its one thread's) reaches CPU_MS, reads FILE with read() to its end, and reports on
 * stderr "worker pid=P cpu_ns=C read=B": C its CPU time and B the bytes its read() calls
 * returned, once both are done (it reads nothing else: B is its whole rchar). It then waits for
 * the main process's word (the end of a pipe) and exits 0. The main process keeps copying for
 * HOLD_MS after the last report (so that a sampler sees each worker idle after its work), sets
 * errno to EILSEQ before that time and checks nothing changed it, releases the workers, reaps them
 * and prints "loader_tree: workers=K ok" on stdout; it exits 0, or 1 naming what failed.
 *
 * With --steps N, a training loop fed by the workers (the four causes of a starved GPU, issue 19):
 * the trace starts with a device memset (so that the only host-to-device copies are batches);
 * unless --existing (FILE given, e.g. on a slow file system), FILE gets N * BYTES bytes. Worker
 * i makes batches i, i + K, ... < N: each costs CPU_MS more of its CPU time, then a pread of
 * BYTES at offset batch * BYTES (each byte read once: a page cache holds no batch ahead), then
 * one byte on its own pipe; it never waits for the main process (a prefetch as deep as needed).
 * Worker i spends i/K of CPU_MS more before its first batch, so that batches come evenly.
 * Each of the N steps takes batch `step` from its worker's pipe, spins M ms of the main
 * process's CPU (preprocessing between batches), and copies 1 MiB to the device (the step). With
 * K = 0 (PyTorch's num_workers=0) the main process makes each batch itself as a worker would (its
 * CPU_MS, its pread) before its M ms. With --memset-step the step is a memset of the 1 MiB
 * instead of a copy: the host's work between steps is then not loading a batch but its own,
 * between its GPU work (queued, as the first memset then is: no gap follows a synchronous call,
 * which would make it a gap after a synchronization). With --after-ms A each step, after its
 * copy, spins A ms more of the main thread's CPU then queues a memset of the 1 MiB: a gap
 * between the GPU's work that is not loading, which the main thread may spend waiting for a
 * core its workers hold; it then prints "main after_ns=T after_wait_ns=W" on stderr, T the
 * wall time of those spins and W the main thread's run-queue wait in them (schedstat). The workers report "worker pid=P cpu_ns=C read=B batches=n" after their
 * batches; the main process prints "main cpu_ns=C read=B steps=N" on stderr (C its main thread's
 * CPU time from the first step to the last, B the bytes it read itself) and holds HOLD_MS with memsets instead
 * of copies. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"

/* The calling thread's CPU time: a worker's is its process's; the main process's other threads
 * (the tracer's sampler, the CUDA library's) do not count as its work. */
static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The calling thread's time waiting for a CPU while runnable (ns; 0 unknown). */
static uint64_t runq_wait_ns(void)
{
    unsigned long long run = 0, wait = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "re");
    if (f) {
        if (fscanf(f, "%llu %llu", &run, &wait) != 2)
            wait = 0;
        fclose(f);
    }
    return wait;
}

/* Spins until the process's CPU time reaches goal (ns). */
static void spin_to(uint64_t goal)
{
    volatile uint64_t x = 1;
    while (cpu_ns() < goal)
        for (int j = 0; j < 10000; j++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
}

/* Reads batch b's bytes of fd (file) into buf. */
static void read_batch(int fd, const char *file, char *buf, size_t bytes, int b)
{
    for (size_t done = 0; done < bytes;) {
        ssize_t n = pread(fd, buf + done, bytes - done, (off_t)((size_t)b * bytes + done));
        if (n <= 0)
            WL_DIE("pread %s at %zu: %s", file, (size_t)b * bytes + done,
                   n ? strerror(errno) : "end of file");
        done += (size_t)n;
    }
}

/* --steps: worker i's batches i, i + k, ... < steps, one byte on its pipe `out` each. */
static void batch_worker(int report, int go, int out, int i, int k, int steps, uint64_t cpu_ms,
                         size_t bytes, const char *file)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        WL_DIE("open %s: %s", file, strerror(errno));
    char *buf = malloc(bytes ? bytes : 1);
    if (!buf)
        WL_DIE("malloc of %zu bytes failed", bytes);
    /* worker i starts i/k of a batch's CPU late, so that batches come evenly, one every
     * 1/k of a batch's time, as in a loader's steady state, not k at once */
    uint64_t got = 0, goal = cpu_ns() + (uint64_t)i * cpu_ms * 1000000u / (uint64_t)k;
    int made = 0;
    for (int b = i; b < steps; b += k, made++) {
        spin_to(goal += cpu_ms * 1000000u);
        read_batch(fd, file, buf, bytes, b);
        got += bytes;
        if (write(out, "b", 1) != 1)
            WL_DIE("batch pipe: %s", strerror(errno));
    }
    close(fd);
    free(buf);
    char line[160];
    int len = snprintf(line, sizeof line, "worker pid=%d cpu_ns=%llu read=%llu batches=%d\n",
                       (int)getpid(), (unsigned long long)cpu_ns(), (unsigned long long)got, made);
    if (write(report, line, (size_t)len) != len)
        WL_DIE("report: %s", strerror(errno));
    char c;
    while (read(go, &c, 1) > 0)
        ;
    _exit(0);
}

static void worker(int report, int go, uint64_t cpu_goal, const char *file)
{
    spin_to(cpu_goal);
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
    int steps = 0, existing = 0, memset_step = 0;
    uint64_t main_ms = 0, after_ms = 0;
    int a = 1;
    for (; a < argc && !strncmp(argv[a], "--", 2); a++) {
        if (!strcmp(argv[a], "--existing"))
            existing = 1;
        else if (!strcmp(argv[a], "--steps") && a + 1 < argc)
            steps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--memset-step"))
            memset_step = 1;
        else if (!strcmp(argv[a], "--main-ms") && a + 1 < argc)
            main_ms = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(argv[a], "--after-ms") && a + 1 < argc)
            after_ms = strtoull(argv[++a], NULL, 10);
        else
            WL_DIE("unknown option %s", argv[a]);
    }
    if (argc - a != 5)
        WL_DIE("usage: loader_tree [--steps N [--main-ms M] [--after-ms A] [--existing] "
               "[--memset-step]] K CPU_MS BYTES HOLD_MS FILE");
    argv += a - 1;
    int k = atoi(argv[1]);
    uint64_t cpu_ms = strtoull(argv[2], NULL, 10), cpu_goal = cpu_ms * 1000000u;
    size_t bytes = strtoull(argv[3], NULL, 10);
    uint64_t hold = strtoull(argv[4], NULL, 10) * 1000000u;
    const char *file = argv[5];
    if (k < !steps || k > 64)
        WL_DIE("K: expected %d to 64 workers, found %s", !steps, argv[1]);
    if (steps < 0 || (!steps && (main_ms || after_ms || existing || memset_step)))
        WL_DIE("--main-ms, --after-ms, --existing and --memset-step need --steps N (N > 0)");

    void *dev = NULL;
    size_t chunk = 1 << 20;
    char *host = calloc(1, chunk);
    if (!host)
        WL_DIE("calloc of %zu bytes failed", chunk);
    WL_RT(cudaMalloc(&dev, chunk));
    if (memset_step) /* queued, as the steps' are: no gap follows a synchronous call */
        WL_RT(cudaMemsetAsync(dev, 0, chunk, 0));
    else if (steps)
        WL_RT(cudaMemset(dev, 0, chunk));
    else
        WL_RT(cudaMemcpy(dev, host, chunk, cudaMemcpyHostToDevice));

    if (!existing) {
        int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            WL_DIE("create %s: %s", file, strerror(errno));
        size_t total = steps ? (size_t)steps * bytes : bytes;
        for (size_t done = 0; done < total;) {
            size_t n = total - done < chunk ? total - done : chunk;
            if (write(fd, host, n) != (ssize_t)n)
                WL_DIE("write %s: %s", file, strerror(errno));
            done += n;
        }
        close(fd);
    }

    int report[2], go[2], batch[64][2];
    if (pipe(report) || pipe(go))
        WL_DIE("pipe: %s", strerror(errno));
    for (int i = 0; steps && i < k; i++)
        if (pipe(batch[i]))
            WL_DIE("pipe: %s", strerror(errno));
    pid_t pids[64];
    for (int i = 0; i < k; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            WL_DIE("fork: %s", strerror(errno));
        if (pids[i] == 0) {
            close(report[0]);
            close(go[1]);
            if (!steps)
                worker(report[1], go[0], cpu_goal, file);
            for (int j = 0; j < k; j++) {
                close(batch[j][0]);
                if (j != i)
                    close(batch[j][1]);
            }
            batch_worker(report[1], go[0], batch[i][1], i, k, steps, cpu_ms, bytes, file);
        }
    }
    close(report[1]);
    close(go[0]);
    if (steps) {
        for (int i = 0; i < k; i++)
            close(batch[i][1]);
        int fd = k ? -1 : open(file, O_RDONLY | O_CLOEXEC);
        if (!k && fd < 0)
            WL_DIE("open %s: %s", file, strerror(errno));
        char *buf = malloc(bytes ? bytes : 1);
        if (!buf)
            WL_DIE("malloc of %zu bytes failed", bytes);
        uint64_t c0 = cpu_ns(), got = 0, after_ns = 0, after_wait = 0;
        for (int s = 0; s < steps; s++) {
            char c;
            if (k && read(batch[s % k][0], &c, 1) != 1)
                WL_DIE("batch %d: its worker's pipe ended", s);
            if (!k) { /* no workers: the main process loads */
                spin_to(cpu_ns() + cpu_ms * 1000000u);
                read_batch(fd, file, buf, bytes, s);
                got += bytes;
            }
            spin_to(cpu_ns() + main_ms * 1000000u);
            WL_RT(memset_step ? cudaMemsetAsync(dev, 0, chunk, 0)
                              : cudaMemcpy(dev, host, chunk, cudaMemcpyHostToDevice));
            if (after_ms) {
                uint64_t t0 = mono_ns(), w0 = runq_wait_ns();
                spin_to(cpu_ns() + after_ms * 1000000u);
                after_wait += runq_wait_ns() - w0;
                after_ns += mono_ns() - t0;
                WL_RT(cudaMemsetAsync(dev, 0, chunk, 0));
            }
        }
        if (after_ms)
            fprintf(stderr, "main after_ns=%llu after_wait_ns=%llu\n", (unsigned long long)after_ns,
                    (unsigned long long)after_wait);
        fprintf(stderr, "main cpu_ns=%llu read=%llu steps=%d\n", (unsigned long long)(cpu_ns() - c0),
                (unsigned long long)got, steps);
        free(buf);
        if (fd >= 0)
            close(fd);
    }
    /* the workers' reports, passed on to stderr line by line */
    FILE *in = fdopen(report[0], "r");
    char line[160];
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
        if ((steps ? cudaMemset(dev, 0, chunk) : cudaMemcpy(dev, host, chunk, cudaMemcpyHostToDevice)) !=
            cudaSuccess)
            WL_DIE("copy or memset failed while holding");
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
