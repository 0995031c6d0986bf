/* Helpers shared by the simulated NCCL's tests (tests/sim-nccl). A test forks its ranks from
 * one process, each a separate process on the simulated GPU, as a launcher would start them;
 * they meet through the unique id the test made before forking. */
#ifndef SN_H
#define SN_H

#include "sd.h" /* the simulated driver's test helpers: CK, sd_now_ns, sd_elapsed_ns */

#include <nccl.h>
#include <stdatomic.h>

#define NK(call) ASSERT_INT((call), ==, ncclSuccess)

/* Zeroed memory shared by the test and the ranks it forks afterwards. */
void *sn_shared(size_t n);

/* A rank's body: its rank, the number of ranks, the id and the test's argument; 0 passes. */
typedef int (*sn_rank_fn)(int rank, int n, const ncclUniqueId *id, void *arg);

enum { SN_PASSED, SN_FAILED, SN_KILLED };
/* Forks n ranks; each initializes CUDA (device 0's primary context current), runs fn and exits
 * with its result. After timeout_s seconds the ranks still running are killed (SIGKILL: a
 * batch system's time limit). Returns SN_PASSED when every rank exited 0, SN_KILLED when any
 * had to be killed, else SN_FAILED; status[r] (if given) is rank r's exit code, or -1 if
 * killed. */
int sn_ranks(int n, sn_rank_fn fn, void *arg, int timeout_s, int *status);
/* The same, but the ranks still running are also killed as soon as stop(arg) returns nonzero
 * (polled every 2 ms), for a test that knows when the job has hung long enough. */
int sn_ranks_until(int n, sn_rank_fn fn, void *arg, int timeout_s, int *status,
                   int (*stop)(void *arg));

/* A barrier of n ranks in shared memory (zeroed); each use takes a new generation. */
typedef struct {
    _Atomic int count;
    _Atomic int gen;
} sn_barrier;
void sn_barrier_wait(sn_barrier *b, int n);

/* Sets the variable `env` to a file `name` in the test's directory, written into path. */
const char *sn_tmp_env(char path[4096], const char *env, const char *name);

/* A rank's communicator, a blocking stream (ordered after the legacy stream's copies, which
 * may return before their data lands) and two events. */
typedef struct {
    ncclComm_t comm;
    CUstream s;
    CUevent a, b;
} sn_rig;
int sn_rig_up(sn_rig *g, int rank, int n, const ncclUniqueId *id); /* 0 on success */

/* One FAKENCCL_TRUTH line (tests/fakenccl/README.md). */
typedef struct {
    int pid, tid;
    unsigned long long comm;
    int nranks, rank;
    char kind[8];
    unsigned long long seq;
    char func[16];
    int type;
    unsigned long long count, bytes;
    int root;
    long long start, end, last;
    int last_rank, aborted;
} sn_truth;
/* The lines of path (at most max); -1 if it cannot be read or a line is malformed. */
int sn_truth_read(const char *path, sn_truth *out, int max);
/* The line of rank's collective seq, or NULL. */
const sn_truth *sn_truth_find(const sn_truth *t, int n, int rank, const char *kind,
                              unsigned long long seq);

#endif
