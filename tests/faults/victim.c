/* victim: a CUDA runtime program that does what programs do to the processes they live in, for
 * the fault-injection suite (tests/faults). Every run prints the same lines traced or not, so a
 * test compares its stdout and exit status with an untraced run, then reads the trace.
 *
 *   victim MODE [STEPS [ARG]]
 *
 * A step: cudaMemcpy host-to-device of 64 KiB (pageable), cudaMemsetAsync of 4 KiB on a stream,
 * cudaStreamSynchronize, cudaMemcpy device-to-host of 64 KiB, a check, and the line
 * "victim: step K ok t_ms=T" (T: CLOCK_MONOTONIC ms) flushed to stdout. So a step is 4 runtime
 * calls, one of them cudaStreamSynchronize. Setup: cudaMalloc, cudaStreamCreate. Modes:
 *
 *   steps       STEPS steps (each followed by ARG ms of sleep [0]), then exit 0
 *   handler     a SIGTERM handler (ARG: "term" or "int" for SIGINT) is installed before CUDA;
 *               after STEPS steps the program raises it; the handler sets a flag; one more step;
 *               "victim: caught SIG" and exit 0
 *   late-handler  the same, the handler installed after the first CUDA call
 *   abort       STEPS steps then abort()
 *   segv        STEPS steps then a store into a read-only page (SIGSEGV)
 *   closefds    STEPS steps, close every descriptor above 2, then STEPS more steps 50 ms apart,
 *               writing "data K" for each into the file ARG (opened after the closes), exit 0;
 *               the steps after the closes are called from a frame without unwind tables
 *               (victim_bare.c)
 *   closerange  the same, closing them with close_range(3, ~0U, 0) while a second thread that
 *               made one step waits; then 30 /dev/null descriptors of the program's own are
 *               opened (taking the numbers the closes freed), the thread makes a step as above
 *               and exits, and after 50 ms "victim: own descriptors open N of 30"
 *   dup2fds     the same, but the file ARG is opened first and dup2'd over every other
 *               descriptor above 2 (the file then holds what the program wrote, and nothing else)
 *   exhaust     RLIMIT_NOFILE 64 (soft and hard) before CUDA; STEPS steps, close_range, the file
 *               ARG opened, then /dev/null opened until no descriptor is left; STEPS more steps as
 *               above, the /dev/null descriptors closed after the first half of them
 *   exhaust-soft  the same with the hard limit at 128: a process may raise its soft limit
 *   chdir       chdir(ARG) before the first CUDA call, STEPS steps
 *   fsize       setrlimit(RLIMIT_FSIZE, ARG bytes) before CUDA, STEPS steps
 *   rmdir       STEPS steps 10 ms apart; after the first half, the directory ARG is removed
 *               with the files in it (as a cleanup script might remove the trace directory)
 *   fork        4 threads do STEPS steps each on their own streams while the main thread, after
 *               ARG ms [0], forks 20 children 2 ms apart; each child calls cudaMalloc (and cudaFree if it worked) and
 *               exits 0 unless that cudaFree failed; "victim: children=20 ok=N"
 *   exec        one step, then exec itself with STEPS-1 (a chain of STEPS images, one pid)
 *   burst       setup, "victim: setup ns=T", ARG ms of sleep, then STEPS cudaMemsetAsync of
 *               4 KiB on a stream and a cudaStreamSynchronize, "victim: burst calls=STEPS
 *               ns=T" (T: CLOCK_MONOTONIC ns after the synchronization returned), then idle
 *               until killed (no further call of any kind into CUDA)
 *   fail        (with FAKECUDA_FAIL set by the caller) prints every call's result:
 *               cudaMalloc x3, cudaMemcpy x2, cudaMemsetAsync, cudaStreamSynchronize, cudaFree x3 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "victim_bare.h"

#define BYTES 65536

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        printf("victim: %s failed: %d\n", what, (int)e);
        exit(2);
    }
}

typedef struct {
    void *dev;
    unsigned char *host;
    cudaStream_t s;
} ctx;

static void setup(ctx *c)
{
    check(cudaMalloc(&c->dev, BYTES), "cudaMalloc");
    check(cudaStreamCreate(&c->s), "cudaStreamCreate");
    c->host = malloc(BYTES);
}

/* One step; prints its line when `print`. */
static void step(ctx *c, int k, int print)
{
    memset(c->host, k & 0xff, BYTES);
    check(cudaMemcpy(c->dev, c->host, BYTES, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemsetAsync(c->dev, 0x5a, 4096, c->s), "cudaMemsetAsync");
    check(cudaStreamSynchronize(c->s), "cudaStreamSynchronize");
    memset(c->host, 0, BYTES);
    check(cudaMemcpy(c->host, c->dev, BYTES, cudaMemcpyDeviceToHost), "cudaMemcpy");
    /* The simulation reserves device memory without storing it: only a GPU keeps contents. */
    if (print) {
        printf("victim: step %d ok t_ms=%.0f\n", k, now_ms());
        fflush(stdout);
    }
}

static volatile sig_atomic_t caught;
static void on_signal(int sig) { caught = sig; }

static void install(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* Closes every descriptor above 2, or with keep >= 0, dup2s keep over every other one. */
static void fds_above_2(int keep)
{
    int fds[1024], n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 1024)
        if (e->d_name[0] != '.')
            fds[n++] = atoi(e->d_name);
    if (d)
        closedir(d);
    for (int i = 0; i < n; i++) {
        if (fds[i] <= 2 || fds[i] == keep)
            continue;
        if (keep >= 0)
            dup2(keep, fds[i]);
        else
            close(fds[i]);
    }
}

typedef struct {
    int steps, failed;
} worker_arg;

static volatile int go_away;

/* step() as victim_bare_call calls it, its line printed or not. */
static void step_bare(void *c, int k) { step(c, k, 1); }
static void step_quiet(void *c, int k) { step(c, k, 0); }

/* One step, then waits for go_away, then makes another (unprinted, called from a frame without
 * unwind tables), then exits. */
static void *stepper(void *p)
{
    (void)p;
    ctx c;
    setup(&c);
    step(&c, 0, 0);
    while (!go_away)
        usleep(1000);
    victim_bare_call(step_quiet, &c, 1);
    return NULL;
}

static void *worker(void *p)
{
    worker_arg *a = p;
    ctx c;
    setup(&c);
    for (int k = 0; k < a->steps; k++)
        step(&c, k, 0);
    return NULL;
}

static void print_result(const char *what, cudaError_t e)
{
    printf("victim: %s -> %d\n", what, (int)e);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: victim MODE [STEPS [ARG]]\n");
        return 64;
    }
    const char *mode = argv[1];
    int steps = argc > 2 ? atoi(argv[2]) : 3;
    const char *arg = argc > 3 ? argv[3] : "";
    printf("victim: mode=%s steps=%d\n", mode, steps);
    fflush(stdout);
    ctx c;
    int k = 0;
    if (!strcmp(mode, "steps")) {
        setup(&c);
        for (; k < steps; k++) {
            step(&c, k, 1);
            if (*arg)
                usleep((useconds_t)atoi(arg) * 1000);
        }
    } else if (!strcmp(mode, "burst")) {
        setup(&c);
        printf("victim: setup ns=%.0f\n", now_ms() * 1e6);
        fflush(stdout);
        usleep((useconds_t)atoi(arg) * 1000);
        for (; k < steps; k++)
            check(cudaMemsetAsync(c.dev, k & 0xff, 4096, c.s), "cudaMemsetAsync");
        check(cudaStreamSynchronize(c.s), "cudaStreamSynchronize");
        printf("victim: burst calls=%d ns=%.0f\n", k, now_ms() * 1e6);
        fflush(stdout);
        for (;;)
            pause();
    } else if (!strcmp(mode, "handler") || !strcmp(mode, "late-handler")) {
        int sig = !strcmp(arg, "int") ? SIGINT : SIGTERM;
        if (mode[0] == 'h')
            install(sig);
        setup(&c);
        if (mode[0] == 'l')
            install(sig);
        for (; k < steps; k++)
            step(&c, k, 1);
        raise(sig);
        step(&c, k, 1);
        printf("victim: caught %d\n", (int)caught);
    } else if (!strcmp(mode, "abort") || !strcmp(mode, "segv")) {
        setup(&c);
        for (; k < steps; k++)
            step(&c, k, 1);
        if (mode[0] == 'a')
            abort();
        /* A store into a read-only page (page 0 may be mapped by a CUDA stack). */
        int *volatile ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        *ro = 1;
    } else if (!strcmp(mode, "closefds") || !strcmp(mode, "closerange") ||
               !strcmp(mode, "dup2fds") || !strncmp(mode, "exhaust", 7)) {
        int nulls[256], nnull = 0;
        if (mode[0] == 'e') {
            struct rlimit rl = {64, mode[7] ? 128 : 64};
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                return 3;
        }
        setup(&c);
        for (; k < steps; k++)
            step(&c, k, 1);
        FILE *f = NULL;
        pthread_t th;
        int own[30];
        if (!strcmp(mode, "closerange")) {
            pthread_create(&th, NULL, stepper, NULL);
            usleep(50000);
        }
        if (mode[0] == 'd') {
            if (!(f = fopen(arg, "w")))
                return 3;
            fds_above_2(fileno(f));
        } else if (!strcmp(mode, "closefds")) {
            fds_above_2(-1);
        } else if (close_range(3, ~0U, 0) != 0) {
            return 3;
        }
        if (!f && !(f = fopen(arg, "w")))
            return 3;
        if (!strcmp(mode, "closerange")) {
            for (int i = 0; i < 30; i++)
                own[i] = open("/dev/null", O_RDONLY);
            go_away = 1;
            pthread_join(th, NULL);
            usleep(50000);
            int open_ = 0;
            for (int i = 0; i < 30; i++)
                open_ += own[i] >= 0 && fcntl(own[i], F_GETFD) >= 0;
            printf("victim: own descriptors open %d of 30\n", open_);
        }
        while (mode[0] == 'e' && nnull < 256 && (nulls[nnull] = open("/dev/null", O_RDONLY)) >= 0)
            nnull++;
        for (int half = k + steps / 2; k < 2 * steps; k++) {
            victim_bare_call(step_bare, &c, k);
            fprintf(f, "data %d\n", k);
            fflush(f);
            usleep(50000); /* long enough for a tracer to flush while the file is open */
            if (k + 1 == half)
                while (nnull > 0)
                    close(nulls[--nnull]);
        }
        if (fclose(f) != 0)
            return 4;
    } else if (!strcmp(mode, "chdir")) {
        if (chdir(arg) != 0)
            return 3;
        setup(&c);
        for (; k < steps; k++)
            step(&c, k, 1);
    } else if (!strcmp(mode, "rmdir")) {
        setup(&c);
        for (; k < steps; k++) {
            if (k == steps / 2) {
                DIR *d = opendir(arg);
                struct dirent *e;
                while (d && (e = readdir(d)))
                    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        unlinkat(dirfd(d), e->d_name, 0);
                if (!d || closedir(d) != 0 || rmdir(arg) != 0)
                    return 3;
            }
            step(&c, k, 1);
            usleep(10000);
        }
    } else if (!strcmp(mode, "fsize")) {
        struct rlimit rl = {(rlim_t)atol(arg), (rlim_t)atol(arg)};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            return 3;
        setup(&c);
        for (; k < steps; k++)
            step(&c, k, 0);
        printf("victim: %d steps done\n", k);
    } else if (!strcmp(mode, "fork")) {
        pthread_t th[4];
        worker_arg wa = {steps, 0};
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, worker, &wa);
        int ok = 0;
        usleep((useconds_t)atoi(arg) * 1000);
        for (int i = 0; i < 20; i++) {
            usleep(2000);
            pid_t pid = fork();
            if (pid == 0) {
                /* CUDA forbids using the parent's context in a child; the call must still
                 * return, with an error or not. */
                void *p = NULL;
                cudaError_t e = cudaMalloc(&p, 4096);
                exit(e == cudaSuccess ? cudaFree(p) != cudaSuccess : 0);
            }
            int st;
            ok += pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        }
        for (int i = 0; i < 4; i++)
            pthread_join(th[i], NULL);
        printf("victim: children=20 ok=%d\n", ok);
    } else if (!strcmp(mode, "exec")) {
        setup(&c);
        step(&c, steps, 1);
        if (steps > 1) {
            char n[16];
            snprintf(n, sizeof n, "%d", steps - 1);
            fflush(stdout);
            execl("/proc/self/exe", argv[0], "exec", n, (char *)NULL);
            return 5;
        }
    } else if (!strcmp(mode, "fail")) {
        void *p[3] = {NULL, NULL, NULL};
        unsigned char host[4096] = {0};
        cudaStream_t s;
        print_result("cudaStreamCreate", cudaStreamCreate(&s));
        for (int i = 0; i < 3; i++)
            print_result("cudaMalloc", cudaMalloc(&p[i], 4096));
        print_result("cudaMemcpy", cudaMemcpy(p[0], host, sizeof host, cudaMemcpyHostToDevice));
        print_result("cudaMemcpy", cudaMemcpy(host, p[0], sizeof host, cudaMemcpyDeviceToHost));
        print_result("cudaMemsetAsync", cudaMemsetAsync(p[0], 0, sizeof host, s));
        print_result("cudaStreamSynchronize", cudaStreamSynchronize(s));
        for (int i = 0; i < 3; i++)
            print_result("cudaFree", cudaFree(p[i]));
    } else {
        fprintf(stderr, "victim: unknown mode %s\n", mode);
        return 64;
    }
    printf("victim: done\n");
    return 0;
}
