/* Communicators (fn.h). The ranks of a communicator meet in a shared-memory segment named by
 * its unique id: a header, each rank's state, a channel per (sender, receiver) pair, and each
 * rank's staging area (sparse: pages exist only where data was staged). The last rank to join
 * unlinks the name, so a killed job leaves nothing behind once its communicators are up. */
#define _GNU_SOURCE
#include "fn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FN_SHM_MAGIC 0x66616b656e63636cull

fn_shm_rank *fn_rank(ncclComm_t c, int r)
{
    return &c->ranks[r];
}

fn_shm_chan *fn_chan(ncclComm_t c, int from, int to)
{
    return &c->chans[(size_t)from * (size_t)c->nranks + (size_t)to];
}

char *fn_stage(ncclComm_t c, int r)
{
    return c->stage + (size_t)r * c->shm->stage;
}

void fn_ring(ncclComm_t c)
{
    atomic_fetch_add(&c->shm->bell, 1);
    syscall(SYS_futex, &c->shm->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int fn_wait(ncclComm_t c, int (*done)(ncclComm_t c, void *arg), void *arg)
{
    for (;;) {
        uint32_t b = atomic_load(&c->shm->bell);
        if (done(c, arg))
            return 0;
        if (atomic_load(&c->aborted))
            return -1;
        /* Bounded, so a local abort (which rings only this segment) is seen promptly even if
         * its wake-up raced with this wait. */
        struct timespec to = {0, 50 * 1000 * 1000};
        syscall(SYS_futex, &c->shm->bell, FUTEX_WAIT, b, &to, NULL, 0);
    }
}

int fn_all_reached(ncclComm_t c, void *reach)
{
    const fn_reach *x = reach;
    for (int r = 0; r < c->nranks; r++)
        if (atomic_load((_Atomic uint64_t *)((char *)fn_rank(c, r) + x->off)) < x->seq)
            return 0;
    return 1;
}

ncclResult_t fn_comm_check(ncclComm_t c)
{
    if (!c || c->magic != FN_COMM_MAGIC)
        return fn_error(ncclInvalidArgument, "invalid communicator %p", (void *)c);
    if (atomic_load(&c->aborted))
        return fn_error(ncclInvalidUsage, "communicator %p was aborted", (void *)c);
    return ncclSuccess;
}

void fn_comm_unref(ncclComm_t c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    munmap(c->shm, c->shm->size);
    free(c->send_seq);
    free(c->recv_seq);
    pthread_mutex_destroy(&c->run);
    c->magic = 0;
    free(c);
}

static size_t fn_round(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* Creates or opens the segment named by id; 0, or an NCCL error. */
static ncclResult_t fn_shm_attach(ncclComm_t c, const ncclUniqueId *id)
{
    char name[NCCL_UNIQUE_ID_BYTES + 2] = "/";
    memcpy(name + 1, id->internal, NCCL_UNIQUE_ID_BYTES);
    if (strncmp(name + 1, "fakenccl-", 9) != 0)
        return fn_error(ncclInvalidArgument,
                        "ncclCommInitRank: the unique id is not one of the simulated NCCL's "
                        "(expected \"fakenccl-...\" from ncclGetUniqueId, found \"%.20s\")",
                        name + 1);
    size_t n = (size_t)c->nranks;
    size_t chan_off = fn_round(sizeof(fn_shm), 64) + n * sizeof(fn_shm_rank);
    size_t stage_off = fn_round(chan_off + n * n * sizeof(fn_shm_chan), 1 << 21);
    size_t size = stage_off + n * fn_g.stage;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int creator = fd >= 0;
    if (!creator) {
        if (errno != EEXIST)
            return fn_error(ncclSystemError, "shm_open(%s): %s", name, strerror(errno));
        /* Another rank creates it: wait for its size (the name may also not exist yet in a
         * race with O_EXCL's loser retrying after the creator unlinked: not possible, the
         * creator unlinks only once every rank joined). */
        struct stat st = {0};
        for (int tries = 0;; tries++) {
            fd = shm_open(name, O_RDWR | O_CLOEXEC, 0600);
            if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0)
                break;
            if (fd >= 0)
                close(fd);
            if (tries > 60000)
                return fn_error(ncclSystemError, "shm_open(%s): no size after 60 s", name);
            usleep(1000);
        }
        if ((size_t)st.st_size != size) {
            close(fd);
            return fn_error(ncclInvalidArgument,
                            "ncclCommInitRank: %s was made for another number of ranks or "
                            "FAKENCCL_STAGE_BYTES (%lld bytes, expected %zu for %d ranks)",
                            name, (long long)st.st_size, size, c->nranks);
        }
    } else if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        return fn_error(ncclSystemError, "ftruncate(%s, %zu): %s", name, size, strerror(e));
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fn_error(ncclSystemError, "mmap(%s, %zu): %s", name, size, strerror(errno));
    c->shm = p;
    if (creator) {
        c->shm->nranks = (uint32_t)n;
        c->shm->stage = fn_g.stage;
        c->shm->chan_off = chan_off;
        c->shm->stage_off = stage_off;
        c->shm->size = size;
        atomic_store(&c->shm->magic, FN_SHM_MAGIC);
    } else {
        while (atomic_load(&c->shm->magic) != FN_SHM_MAGIC)
            usleep(100);
    }
    c->ranks = (fn_shm_rank *)((char *)p + fn_round(sizeof(fn_shm), 64));
    c->chans = (fn_shm_chan *)((char *)p + chan_off);
    c->stage = (char *)p + stage_off;
    fn_shm_rank *me = fn_rank(c, c->rank);
    uint32_t absent = FN_RANK_ABSENT;
    if (!atomic_compare_exchange_strong(&me->state, &absent, FN_RANK_JOINED)) {
        munmap(p, size);
        return fn_error(ncclInvalidUsage, "ncclCommInitRank: rank %d of %s joined twice",
                        c->rank, name);
    }
    me->pid = getpid();
    me->dev = c->dev;
    if (atomic_fetch_add(&c->shm->joined, 1) + 1 == n)
        shm_unlink(name);
    fn_ring(c);
    return ncclSuccess;
}

ncclResult_t fn_comm_join(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank, int dev,
                          const ncclConfig_t *config)
{
    fn_init();
    if (!out)
        return fn_error(ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
    if (nranks < 1 || nranks > FN_MAX_RANKS || rank < 0 || rank >= nranks)
        return fn_error(ncclInvalidArgument,
                        "ncclCommInitRank: expected 0 <= rank < nranks <= %d, found rank %d of %d",
                        FN_MAX_RANKS, rank, nranks);
    if (config && config->magic != 0xcafebeef)
        return fn_error(ncclInvalidArgument,
                        "ncclCommInitRankConfig: config not set with NCCL_CONFIG_INITIALIZER "
                        "(magic 0x%x, expected 0xcafebeef)", config->magic);
    ncclComm_t c = calloc(1, sizeof *c);
    if (!c)
        return fn_error(ncclSystemError, "out of host memory for a communicator");
    c->magic = FN_COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    c->dev = dev;
    c->id = *id;
    c->hash = fn_id_hash(id);
    c->blocking = !config || config->blocking != 0;
    atomic_store(&c->refs, 1);
    pthread_mutex_init(&c->run, NULL);
    c->send_seq = calloc((size_t)nranks, sizeof *c->send_seq);
    c->recv_seq = calloc((size_t)nranks, sizeof *c->recv_seq);
    ncclResult_t r = c->send_seq && c->recv_seq ? fn_shm_attach(c, id) : ncclSystemError;
    if (r != ncclSuccess) {
        free(c->send_seq);
        free(c->recv_seq);
        free(c);
        return r;
    }
    *out = c;
    return ncclSuccess;
}

static int fn_all_joined(ncclComm_t c, void *arg)
{
    (void)arg;
    return atomic_load(&c->shm->joined) == (uint32_t)c->nranks;
}

void fn_comm_wait_joined(ncclComm_t c)
{
    fn_wait(c, fn_all_joined, NULL);
}

/* The device of the calling thread's current context (0 without one), as NCCL takes
 * cudaGetDevice's. */
static int fn_current_dev(void)
{
    CUdevice d;
    return cuCtxGetDevice(&d) == CUDA_SUCCESS ? (int)d : 0;
}

static ncclResult_t fn_init_rank(ncclComm_t *out, int nranks, const ncclUniqueId *id, int rank,
                                 const ncclConfig_t *config)
{
    ncclResult_t r = fn_comm_join(out, nranks, id, rank, fn_current_dev(), config);
    if (r == ncclSuccess && !fn_group_defer_init(*out))
        fn_comm_wait_joined(*out);
    return r;
}

FN_EXPORT ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    return fn_init_rank(comm, nranks, &id, rank, NULL);
}
FN_ALIAS(ncclCommInitRank)

FN_EXPORT ncclResult_t pncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                               int rank, ncclConfig_t *config)
{
    return fn_init_rank(comm, nranks, &id, rank, config);
}
FN_ALIAS(ncclCommInitRankConfig)

/* Several ids spread NVIDIA's bootstrap over several roots; one segment needs one name. */
FN_EXPORT ncclResult_t pncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nId,
                                                 ncclUniqueId *ids, ncclConfig_t *config)
{
    if (nId < 1 || !ids)
        return fn_error(ncclInvalidArgument, "ncclCommInitRankScalable: expected ids, found %d",
                        nId);
    return fn_init_rank(comm, nranks, &ids[0], rank, config);
}
FN_ALIAS(ncclCommInitRankScalable)

FN_EXPORT ncclResult_t pncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    ncclUniqueId id;
    if (!comms || ndev < 1)
        return fn_error(ncclInvalidArgument, "ncclCommInitAll: expected comms and ndev >= 1");
    ncclResult_t r = pncclGetUniqueId(&id);
    for (int i = 0; i < ndev && r == ncclSuccess; i++)
        r = fn_comm_join(&comms[i], ndev, &id, i, devlist ? devlist[i] : i, NULL);
    for (int i = 0; i < ndev && r == ncclSuccess; i++)
        fn_comm_wait_joined(comms[i]);
    return r;
}
FN_ALIAS(ncclCommInitAll)

/* Every rank posts its color and key; each then computes its group. */
FN_EXPORT ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                      ncclConfig_t *config)
{
    ncclResult_t r = fn_comm_check(comm);
    if (r != ncclSuccess)
        return r;
    if (!newcomm)
        return fn_error(ncclInvalidArgument, "ncclCommSplit: newcomm is NULL");
    uint64_t k = ++comm->split_seq;
    fn_reach before = {offsetof(fn_shm_rank, split_read), k - 1},
             posted = {offsetof(fn_shm_rank, split), k};
    fn_shm_rank *me = fn_rank(comm, comm->rank);
    if (fn_wait(comm, fn_all_reached, &before) != 0)
        return fn_error(ncclInvalidUsage, "ncclCommSplit: communicator aborted");
    me->color = color;
    me->key = key;
    atomic_store(&me->split, k);
    fn_ring(comm);
    if (fn_wait(comm, fn_all_reached, &posted) != 0)
        return fn_error(ncclInvalidUsage, "ncclCommSplit: communicator aborted");
    int n = 0, newrank = 0;
    for (int q = 0; q < comm->nranks; q++) {
        const fn_shm_rank *o = fn_rank(comm, q);
        if (o->color != color)
            continue;
        n++;
        if (o->key < key || (o->key == key && q < comm->rank))
            newrank++;
    }
    atomic_store(&me->split_read, k);
    fn_ring(comm);
    if (color == NCCL_SPLIT_NOCOLOR) {
        *newcomm = NULL;
        return ncclSuccess;
    }
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    uint64_t h = fn_mix(comm->hash ^ fn_mix(k) ^ fn_mix((uint64_t)(unsigned)color << 1));
    snprintf(id.internal, sizeof id.internal, "fakenccl-split-%016llx-%016llx",
             (unsigned long long)comm->hash, (unsigned long long)h);
    r = fn_comm_join(newcomm, n, &id, newrank, comm->dev, config);
    if (r == ncclSuccess)
        fn_comm_wait_joined(*newcomm);
    return r;
}
FN_ALIAS(ncclCommSplit)

static int fn_idle(ncclComm_t c, void *arg)
{
    (void)arg;
    return atomic_load(&c->inflight) == 0;
}

FN_EXPORT ncclResult_t pncclCommFinalize(ncclComm_t comm)
{
    ncclResult_t r = fn_comm_check(comm);
    if (r != ncclSuccess)
        return r;
    if (comm->finalized)
        return fn_error(ncclInvalidUsage, "ncclCommFinalize: communicator already finalized");
    fn_wait(comm, fn_idle, NULL);
    comm->finalized = 1;
    return ncclSuccess;
}
FN_ALIAS(ncclCommFinalize)

FN_EXPORT ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    ncclResult_t r = fn_comm_check(comm);
    if (r != ncclSuccess)
        return r;
    if (!comm->finalized)
        fn_wait(comm, fn_idle, NULL);
    atomic_store(&fn_rank(comm, comm->rank)->state, FN_RANK_GONE);
    fn_ring(comm);
    fn_comm_unref(comm);
    return ncclSuccess;
}
FN_ALIAS(ncclCommDestroy)

/* Releases this process's kernels of the communicator at once (they end when they see it) and
 * tells the other ranks, whose ncclCommGetAsyncError then reports ncclRemoteError; their own
 * kernels wait on until they abort too, as NVIDIA's do. */
FN_EXPORT ncclResult_t pncclCommAbort(ncclComm_t comm)
{
    if (!comm)
        return ncclSuccess;
    if (comm->magic != FN_COMM_MAGIC)
        return fn_error(ncclInvalidArgument, "ncclCommAbort: invalid communicator %p",
                        (void *)comm);
    if (atomic_exchange(&comm->aborted, 1))
        return ncclSuccess;
    atomic_store(&fn_rank(comm, comm->rank)->state, FN_RANK_ABORTED);
    fn_ring(comm);
    fn_comm_unref(comm);
    return ncclSuccess;
}
FN_ALIAS(ncclCommAbort)

FN_EXPORT ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    if (!comm || comm->magic != FN_COMM_MAGIC || !err)
        return fn_error(ncclInvalidArgument, "ncclCommGetAsyncError: invalid arguments");
    *err = ncclSuccess;
    for (int r = 0; r < comm->nranks && *err == ncclSuccess; r++) {
        const fn_shm_rank *o = fn_rank(comm, r);
        uint32_t st = atomic_load(&o->state);
        if (r == comm->rank)
            continue;
        if (st == FN_RANK_ABORTED || (st == FN_RANK_JOINED && kill(o->pid, 0) != 0 && errno == ESRCH))
            *err = fn_error(ncclRemoteError, "rank %d (pid %d) aborted or exited", r, o->pid);
    }
    return ncclSuccess;
}
FN_ALIAS(ncclCommGetAsyncError)

/* One of the communicator's numbers into *out. */
static ncclResult_t fn_comm_number(const ncclComm_t comm, int *out, const int *field,
                                   const char *what)
{
    ncclResult_t r = fn_comm_check(comm);
    if (r == ncclSuccess && !out)
        r = fn_error(ncclInvalidArgument, "%s: the output pointer is NULL", what);
    if (r == ncclSuccess)
        *out = *field;
    return r;
}

FN_EXPORT ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
    return fn_comm_number(comm, count, comm ? &comm->nranks : NULL, "ncclCommCount");
}
FN_ALIAS(ncclCommCount)

FN_EXPORT ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int *device)
{
    return fn_comm_number(comm, device, comm ? &comm->dev : NULL, "ncclCommCuDevice");
}
FN_ALIAS(ncclCommCuDevice)

FN_EXPORT ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
    return fn_comm_number(comm, rank, comm ? &comm->rank : NULL, "ncclCommUserRank");
}
FN_ALIAS(ncclCommUserRank)

/* Registration only speeds NVIDIA's transfers up: accepted, with nothing to do. */
FN_EXPORT ncclResult_t pncclCommRegister(const ncclComm_t comm, void *buff, size_t size,
                                         void **handle)
{
    (void)size;
    ncclResult_t r = fn_comm_check(comm);
    if (r == ncclSuccess && !handle)
        r = fn_error(ncclInvalidArgument, "ncclCommRegister: handle is NULL");
    if (r == ncclSuccess)
        *handle = buff;
    return r;
}
FN_ALIAS(ncclCommRegister)

FN_EXPORT ncclResult_t pncclCommDeregister(const ncclComm_t comm, void *handle)
{
    (void)handle;
    return fn_comm_check(comm);
}
FN_ALIAS(ncclCommDeregister)
