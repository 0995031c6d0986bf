/* fork_exec: one process tree using CUDA in several processes.
 *
 *   fork_exec [--children C] [-- PROGRAM ARGS...]
 *
 * CUDA does not survive fork: a child may use CUDA only if its parent had not initialized it
 * before the fork. So the parent, before touching CUDA:
 *   1. forks C children [2]; child i initializes CUDA itself, does one job (below) with index i
 *      and returns through exit();
 *   2. forks one child that execs PROGRAM ARGS [train_loop, found next to this binary, with
 *      --iters 3 --loader-ms 5 --layers 2];
 * then
 *   3. does the same job itself with index C (its first CUDA call comes after both forks);
 *   4. forks a "loader worker" child that does CPU work only and leaves by _exit(0) (a forked
 *      child of a CUDA-initialized process must not use CUDA; this one is like a PyTorch
 *      DataLoader worker, which also ends by _exit);
 *   5. waits for all children and exits 0 if each exited 0.
 *
 * The job of index i: cudaMalloc of 16384 bytes, cudaMemcpy host-to-device of 16384 bytes,
 * 2 launches of affine<float> (_Z6affineIfEvPT_S0_S0_i) <<<16, 256>>>, cudaMemcpy device-to-host
 * of 16384 bytes, cudaFree, check of the 4096 results.
 *
 * What a correct trace shows, for the defaults: 5 processes besides the parent (2 job children,
 * the exec'd train_loop whose pid is the forked child's, the loader worker), with parent/child
 * links; CUDA activity in 4 of them: the parent and the 2 job children (each 1 allocation of
 * 16384 bytes, 2 copies of 16384 bytes, 2 kernels) and train_loop (3 iterations, 13 kernels each,
 * 39 in all, 3 H2D copies of 4194304 bytes); no CUDA activity in the loader worker; the exec'd
 * program's trace under its new name, train_loop.
 *
 * stdout: one line per job ("fork_exec: job i pid=P ... verify=ok"), the exec'd program's own
 * lines, and a closing "fork_exec: children=... failed=0". */
#include <cuda_runtime.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_common.h"
#include "wl_kernels.h"

#define JOB_ELEMS 4096

/* Returns 0 if the job's results are right. */
static int job(int index)
{
    float h[JOB_ELEMS], expect[JOB_ELEMS];
    for (int i = 0; i < JOB_ELEMS; i++)
        h[i] = expect[i] = (float)(i % 100 + index);
    float *d = NULL;
    WL_RT(cudaMalloc((void **)&d, sizeof h));
    WL_RT(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    for (int k = 0; k < 2; k++) {
        affine<float><<<JOB_ELEMS / 256, 256>>>(d, 3.0f, (float)index, JOB_ELEMS);
        wl_host_affine(expect, 3.0f, (float)index, JOB_ELEMS);
    }
    WL_RT(cudaGetLastError());
    WL_RT(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    WL_RT(cudaFree(d));
    int bad = 0;
    for (int i = 0; i < JOB_ELEMS; i++)
        bad += h[i] != expect[i];
    printf("fork_exec: job %d pid=%d allocs=1 copies=2 copy_bytes=%zu kernels=2 verify=%s\n",
           index, (int)getpid(), sizeof h, bad ? "FAILED" : "ok");
    fflush(stdout);
    return bad != 0;
}

/* Flushes first so buffered output is not written twice. */
static pid_t fork_or_die(void)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        WL_DIE("fork: %s", strerror(errno));
    return pid;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"children", required_argument, NULL, 'c'},
                                              {NULL, 0, NULL, 0}};
    long long nchildren = 2;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c != 'c') {
            fprintf(stderr, "usage: fork_exec [--children C] [-- PROGRAM ARGS...]\n");
            return 2;
        }
        nchildren = wl_parse_count("--children", optarg);
    }
    if (nchildren > 64)
        WL_DIE("--children: expected at most 64, found %lld", nchildren);

    char self[PATH_MAX], prog[PATH_MAX + 16];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len < 0)
        WL_DIE("readlink /proc/self/exe: %s", strerror(errno));
    self[len] = 0;
    snprintf(prog, sizeof prog, "%s/train_loop", dirname(self));
    char *default_argv[] = {prog, (char *)"--iters", (char *)"3", (char *)"--loader-ms",
                            (char *)"5", (char *)"--layers", (char *)"2", NULL};
    char **exec_argv = optind < argc ? argv + optind : default_argv;

    pid_t pids[66];
    int n = 0;
    for (int i = 0; i < nchildren; i++) {
        if ((pids[n++] = fork_or_die()) == 0)
            exit(job(i));
    }
    if ((pids[n++] = fork_or_die()) == 0) {
        execv(exec_argv[0], exec_argv);
        WL_DIE("execv %s: %s", exec_argv[0], strerror(errno));
    }
    int failed = job((int)nchildren);
    if ((pids[n++] = fork_or_die()) == 0) {
        unsigned long sum = 0;
        for (unsigned long i = 0; i < 1000000; i++)
            sum += i * i;
        _exit(sum == 333332833333500000UL ? 0 : 1);
    }
    for (int i = 0; i < n; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) < 0)
            WL_DIE("waitpid %d: %s", (int)pids[i], strerror(errno));
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "fork_exec: child %d (pid %d) ended with status 0x%x\n", i,
                    (int)pids[i], st);
            failed++;
        }
    }
    printf("fork_exec: children=%d job_children=%lld exec=%s failed=%d\n", n, nchildren,
           exec_argv[0], failed);
    return failed ? 1 : 0;
}
