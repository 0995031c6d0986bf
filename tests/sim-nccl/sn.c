#define _GNU_SOURCE
#include "sn.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *sn_shared(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

const char *sn_tmp_env(char path[4096], const char *env, const char *name)
{
    snprintf(path, 4096, "%s/%s", ctt_tmpdir(), name);
    setenv(env, path, 1);
    return path;
}

int sn_rig_up(sn_rig *g, int rank, int n, const ncclUniqueId *id)
{
    NK(ncclCommInitRank(&g->comm, n, *id, rank));
    CK(cuStreamCreate(&g->s, 0));
    CK(cuEventCreate(&g->a, CU_EVENT_DEFAULT));
    CK(cuEventCreate(&g->b, CU_EVENT_DEFAULT));
    return 0;
}

void sn_barrier_wait(sn_barrier *b, int n)
{
    int gen = atomic_load(&b->gen);
    if (atomic_fetch_add(&b->count, 1) + 1 == n) {
        atomic_store(&b->count, 0);
        atomic_fetch_add(&b->gen, 1);
        return;
    }
    while (atomic_load(&b->gen) == gen)
        usleep(50);
}

static int sn_child(int rank, int n, const ncclUniqueId *id, sn_rank_fn fn, void *arg)
{
    CUcontext c;
    if (cuInit(0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&c, 0) != CUDA_SUCCESS ||
        cuCtxSetCurrent(c) != CUDA_SUCCESS) {
        fprintf(stderr, "rank %d: cannot initialize CUDA\n", rank);
        return 1;
    }
    return fn(rank, n, id, arg);
}

int sn_ranks(int n, sn_rank_fn fn, void *arg, int timeout_s, int *status)
{
    return sn_ranks_until(n, fn, arg, timeout_s, status, NULL);
}

int sn_ranks_until(int n, sn_rank_fn fn, void *arg, int timeout_s, int *status,
                   int (*stop)(void *arg))
{
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess)
        return SN_FAILED;
    pid_t pids[64];
    fflush(NULL);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        if (pids[r] == 0)
            _exit(sn_child(r, n, &id, fn, arg));
    }
    long long deadline = sd_now_ns() + timeout_s * 1000000000ll;
    int left = n, failed = 0, killed = 0;
    while (left) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            for (int r = 0; r < n; r++)
                if (pids[r] == p) {
                    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
                    if (status)
                        status[r] = code;
                    failed |= code != 0;
                    pids[r] = 0;
                    left--;
                }
            continue;
        }
        if (sd_now_ns() > deadline || (stop && !killed && stop(arg))) {
            for (int r = 0; r < n; r++)
                if (pids[r] > 0)
                    kill(pids[r], SIGKILL);
            killed = 1;
            deadline = sd_now_ns() + 3600 * 1000000000ll;
            continue;
        }
        usleep(2000);
    }
    return killed ? SN_KILLED : failed ? SN_FAILED : SN_PASSED;
}

int sn_truth_read(const char *path, sn_truth *out, int max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        sn_truth *t = &out[n];
        char extra[16] = "";
        int k = sscanf(line, "%d %d %llx %d %d %7s %llu %15s %d %llu %llu %d %lld %lld %lld %d %15s",
                       &t->pid, &t->tid, &t->comm, &t->nranks, &t->rank, t->kind, &t->seq,
                       t->func, &t->type, &t->count, &t->bytes, &t->root, &t->start, &t->end,
                       &t->last, &t->last_rank, extra);
        if (k < 16) {
            fclose(f);
            return -1;
        }
        t->aborted = strcmp(extra, "aborted") == 0;
        n++;
    }
    fclose(f);
    return n;
}

const sn_truth *sn_truth_find(const sn_truth *t, int n, int rank, const char *kind,
                              unsigned long long seq)
{
    for (int i = 0; i < n; i++)
        if (t[i].rank == rank && t[i].seq == seq && strcmp(t[i].kind, kind) == 0)
            return &t[i];
    return NULL;
}
