/* dies: does some CUDA work, then ends abruptly with work still queued on the GPU.
 *
 *   dies --how abort|term|pipe|kill|exit|return|_exit|_Exit|exec [--steps S] [--step-ms M]
 *
 * abort: abort() (SIGABRT); term: kill(getpid(), SIGTERM), with no handler of the program's own;
 * pipe: a write into a pipe nobody reads (SIGPIPE, its disposition made the default at the start);
 * kill: kill(getpid(), SIGKILL); exit: exit(3) without synchronizing or freeing anything;
 * return: main returns 5; _exit: _exit(7); _Exit: _Exit(8); exec: execl of /bin/sh -c 'exit 11'
 * (the process goes on as a shell that exits with status 11).
 *
 * S completed steps [5], each: 1 cudaMemcpyAsync host-to-device of 1048576 bytes, 2 launches of
 * affine<float> (_Z6affineIfEvPT_S0_S0_i) <<<1024, 256>>>, 1 cudaMemcpyAsync device-to-host of
 * 1048576 bytes (pinned memory), 1 cudaStreamSynchronize, a check of the results, M ms of host
 * sleep [20], and a line "dies: step K done" flushed to stdout. Then, without synchronizing:
 * 3 more launches of affine<float> and 1 cudaMemcpyAsync device-to-host of 1048576 bytes, the
 * line "dies: dying by HOW with work in flight", and the death.
 *
 * What a correct trace shows, for the defaults: 1 cudaMalloc and 1 cudaMallocHost of 1048576
 * bytes (never freed), 1 stream, 5 complete steps (5 H2D and 5 D2H of 1048576 bytes, 10 kernels,
 * 5 synchronizations), then 3 kernel launches and 1 D2H issued but never synchronized, and the
 * end of the process: by SIGABRT, by SIGTERM, by SIGPIPE, by SIGKILL (nothing in the process runs after it,
 * so the trace ends with what was already written), by exit status 3 (exit), 5 (return from
 * main), 7 (_exit) or 8 (_Exit), or by exec. The time span is at
 * least S * M ms (100 ms). */
#include <cuda_runtime.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl_common.h"
#include "wl_kernels.h"

#define DIES_ELEMS (1 << 18)

enum { HOW_ABORT, HOW_TERM, HOW_PIPE, HOW_KILL, HOW_EXIT, HOW_RETURN, HOW__EXIT, HOW__EXIT2,
       HOW_EXEC };
static const char *const how_names[] = {"abort", "term", "pipe", "kill", "exit", "return",
                                        "_exit", "_Exit", "exec", NULL};

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"how", required_argument, NULL, 'h'},
                                              {"steps", required_argument, NULL, 's'},
                                              {"step-ms", required_argument, NULL, 'm'},
                                              {NULL, 0, NULL, 0}};
    int how = -1;
    long long steps = 5, step_ms = 20;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': how = wl_parse_choice("--how", optarg, how_names); break;
        case 's': steps = wl_parse_count("--steps", optarg); break;
        case 'm': step_ms = wl_parse_count("--step-ms", optarg); break;
        default: how = -1, optind = argc + 1;
        }
    }
    if (how < 0 || optind != argc) {
        fprintf(stderr, "usage: dies --how abort|term|pipe|kill|exit|return|_exit|_Exit|exec "
                "[--steps S] [--step-ms M]\n");
        return 2;
    }

    signal(SIGPIPE, SIG_DFL); /* whatever the parent left: pipe dies of it */
    const int n = DIES_ELEMS;
    const size_t bytes = (size_t)n * sizeof(float);
    float *d = NULL, *h = NULL;
    cudaStream_t s;
    WL_RT(cudaStreamCreate(&s));
    WL_RT(cudaMalloc((void **)&d, bytes));
    WL_RT(cudaMallocHost((void **)&h, bytes));
    for (long long k = 1; k <= steps; k++) {
        for (int i = 0; i < n; i++)
            h[i] = (float)(i % 512);
        WL_RT(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
        affine<float><<<n / 256, 256, 0, s>>>(d, 2.0f, 1.0f, n);
        affine<float><<<n / 256, 256, 0, s>>>(d, 2.0f, (float)k, n);
        WL_RT(cudaGetLastError());
        WL_RT(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
        WL_RT(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) {
            float want = wl_affine(wl_affine((float)(i % 512), 2.0f, 1.0f), 2.0f, (float)k);
            if (h[i] != want)
                WL_DIE("step %lld: element %d: expected %g, found %g", k, i, want, h[i]);
        }
        wl_sleep_ms((double)step_ms);
        printf("dies: step %lld done\n", k);
        fflush(stdout);
    }
    for (int k = 0; k < 3; k++)
        affine<float><<<n / 256, 256, 0, s>>>(d, 1.0f, 1.0f, n);
    WL_RT(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
    printf("dies: dying by %s with work in flight\n", how_names[how]);
    fflush(stdout);
    switch (how) {
    case HOW_ABORT: abort();
    /* No handler of its own: whatever disposition the process has (default, or a tracer's)
     * decides what happens. */
    case HOW_TERM: kill(getpid(), SIGTERM); break;
    case HOW_PIPE: {
        int fds[2];
        if (pipe(fds) != 0 || close(fds[0]) != 0)
            WL_DIE("pipe: cannot make a pipe with no reader");
        ssize_t w = write(fds[1], "x", 1);
        WL_DIE("still alive after a write (%zd) into a pipe with no reader", w);
    }
    case HOW_KILL: kill(getpid(), SIGKILL); break;
    case HOW_EXIT: exit(3);
    case HOW_RETURN: return 5;
    case HOW__EXIT: _exit(7);
    case HOW__EXIT2: _Exit(8);
    case HOW_EXEC:
        execl("/bin/sh", "sh", "-c", "exit 11", (char *)NULL);
        WL_DIE("execl /bin/sh failed");
    }
    /* A signal to oneself is delivered before kill() returns; reaching here is a failure. */
    WL_DIE("still alive after sending %s to myself", how_names[how]);
}
