/* What a fork() child of a CUDA process gets from the runtime: which calls still answer (from
 * what the runtime learnt before the fork) and which fail. Built against the libcudart.so.13
 * that LD_LIBRARY_PATH or the default path provides, so the same binary runs on NVIDIA's
 * runtime and on the simulated one.
 *   forked after   the main thread uses CUDA (including cudaGetDeviceProperties of device 0),
 *                  then forks
 *   forked during  a second thread makes the process's first CUDA call while the main thread
 *                  forks 100 ms later (the caller sets FAKECUDA_FAIL so that call is still
 *                  inside the driver, holding what the runtime holds there, at the fork)
 * The child prints one line per call, "NAME RESULT", then "forked: child done"; the parent
 * prints "forked: child exit N" and its own later cudaMalloc's result. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHOW(call) printf("%s %d\n", #call, (int)(call))

static void child(void)
{
    int n = -1, d = -1, v = 0;
    struct cudaDeviceProp prop;
    cudaStream_t s;
    void *p = NULL;
    const char *name = NULL;
    SHOW(cudaGetDeviceCount(&n));
    printf("count %d\n", n);
    SHOW(cudaGetDevice(&d));
    SHOW(cudaSetDevice(0));
    SHOW(cudaDriverGetVersion(&v));
    SHOW(cudaRuntimeGetVersion(&v));
    SHOW(cudaGetDeviceProperties(&prop, 0));
    SHOW(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
    SHOW(cudaDeviceSynchronize());
    SHOW(cudaStreamCreate(&s));
    SHOW(cudaMalloc(&p, 4096));
    SHOW(cudaMallocHost(&p, 4096));
    SHOW(cudaFuncGetName(&name, (const void *)child));
    SHOW(cudaPeekAtLastError());
    SHOW(cudaGetLastError());
    SHOW(cudaGetLastError());
    printf("forked: child done\n");
    fflush(stdout);
}

static void *first_call(void *arg)
{
    (void)arg;
    cudaFree(0);
    return NULL;
}

int main(int argc, char **argv)
{
    int during = argc > 1 && !strcmp(argv[1], "during");
    pthread_t t;
    if (during) {
        pthread_create(&t, NULL, first_call, NULL);
        usleep(100000);
    } else {
        struct cudaDeviceProp prop;
        if (cudaFree(0) != cudaSuccess || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
            printf("forked: CUDA does not start\n");
            return 1;
        }
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child();
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (during)
        pthread_join(t, NULL);
    printf("forked: child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    void *p = NULL;
    printf("forked: parent cudaMalloc %d\n", (int)cudaMalloc(&p, 4096));
    return 0;
}
