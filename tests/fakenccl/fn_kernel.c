/* What NCCL's kernels do on the simulated device (fn.h). A kernel's host implementation runs
 * when it starts on its stream (fakecuda.h): it stages its input in the shared segment,
 * announces its start, and waits, really, until every rank of the collective (or every peer of
 * its sends and receives) has started its part; it then computes its output from the staged
 * inputs and ends at
 *     end = last start of all participants + model(bytes) + this rank's skew
 * (fn_model_ns; the skew a seeded few microseconds per rank and collective). A rank that never
 * starts its part keeps the others waiting, their streams busy, until they abort. Only this
 * process's aborts end a wait: its kernels then end at once, doing nothing. */
#define _GNU_SOURCE
#include "fn.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t fn_model_ns(uint64_t bytes, double f)
{
    return fn_g.lat_ns + (int64_t)(f * (double)bytes / fn_g.bw * 1e9 + 0.5);
}

static int64_t fn_skew(ncclComm_t c, const fn_work *w)
{
    if (fn_g.skew_ns <= 0)
        return 0;
    uint64_t h = fn_mix(fn_g.seed ^ fn_mix(c->hash ^ fn_mix(w->seq * 2 + (w->func == FN_SENDRECV)) ^
                                           fn_mix((uint64_t)c->rank + 1)));
    return (int64_t)(h % (uint64_t)(fn_g.skew_ns + 1));
}

static const char *fn_func_name(fn_func f)
{
    static const char *const names[] = {
        [FN_ALLREDUCE] = "AllReduce", [FN_REDUCE] = "Reduce", [FN_BROADCAST] = "Broadcast",
        [FN_ALLGATHER] = "AllGather", [FN_REDUCESCATTER] = "ReduceScatter",
        [FN_ALLTOALL] = "AlltoAll",   [FN_GATHER] = "Gather", [FN_SCATTER] = "Scatter",
        [FN_SENDRECV] = "SendRecv"};
    return names[f];
}

/* FAKENCCL_TRUTH: one line per kernel per rank (README.md). */
static void fn_truth(const fn_work *w, int64_t start, int64_t end, int64_t last, int last_rank,
                     int aborted)
{
    if (fn_g.truth_fd < 0)
        return;
    ncclComm_t c = w->comm;
    char line[320];
    int n = snprintf(line, sizeof line,
                     "%d %d %016llx %d %d %s %llu %s %d %zu %llu %d %lld %lld %lld %d%s\n",
                     (int)getpid(), w->tid, (unsigned long long)c->hash, c->nranks, c->rank,
                     w->func == FN_SENDRECV ? "p2p" : "coll", (unsigned long long)w->seq,
                     fn_func_name(w->func), (int)w->type, w->count,
                     (unsigned long long)w->model_bytes, w->root, (long long)start,
                     (long long)end, (long long)last, last_rank, aborted ? " aborted" : "");
    if (write(fn_g.truth_fd, line, (size_t)n) != n)
        fn_fatal("FAKENCCL_TRUTH: write failed: %s", strerror(errno));
}

/* ---- collectives ---------------------------------------------------------------------- */

/* The bytes this rank stages for w (fn_enqueue.c checked they fit). */
static size_t fn_staged(const fn_work *w)
{
    ncclComm_t c = w->comm;
    size_t b = w->count * fn_type_size(w->type), n = (size_t)c->nranks;
    switch (w->func) {
    case FN_BROADCAST: return c->rank == w->root ? b : 0;
    case FN_SCATTER: return c->rank == w->root ? b * n : 0;
    case FN_REDUCESCATTER: case FN_ALLTOALL: return b * n;
    default: return b;
    }
}

/* len bytes of rank q's staged input from off, zero beyond what it staged (a rank that
 * passed another count reads as zeros there, not as another collective's bytes). */
static void fn_read(ncclComm_t c, int q, size_t off, void *dst, size_t len)
{
    size_t have = fn_rank(c, q)->staged;
    size_t n = off >= have ? 0 : have - off < len ? have - off : len;
    memcpy(dst, fn_stage(c, q) + off, n);
    memset((char *)dst + n, 0, len - n);
}

static void fn_reduce_from(ncclComm_t c, const fn_work *w, size_t off, void *out)
{
    const void *in[FN_MAX_RANKS];
    size_t ts = fn_type_size(w->type), count = w->count;
    for (int q = 0; q < c->nranks; q++) {
        size_t have = fn_rank(c, q)->staged;
        size_t n = have > off ? (have - off) / ts : 0;
        if (n < count)
            count = n;
        in[q] = fn_stage(c, q) + off;
    }
    fn_reduce(out, in, c->nranks, count, w->type, w->op, w->premul, w->scalar);
}

static void fn_coll_output(ncclComm_t c, const fn_work *w)
{
    size_t b = w->count * fn_type_size(w->type);
    int me = c->rank;
    char *recv = w->recv;
    switch (w->func) {
    case FN_ALLREDUCE: fn_reduce_from(c, w, 0, recv); break;
    case FN_REDUCE:
        if (me == w->root)
            fn_reduce_from(c, w, 0, recv);
        break;
    case FN_REDUCESCATTER: fn_reduce_from(c, w, (size_t)me * b, recv); break;
    case FN_BROADCAST: fn_read(c, w->root, 0, recv, b); break;
    case FN_ALLGATHER:
        for (int q = 0; q < c->nranks; q++)
            fn_read(c, q, 0, recv + (size_t)q * b, b);
        break;
    case FN_ALLTOALL:
        for (int q = 0; q < c->nranks; q++)
            fn_read(c, q, (size_t)me * b, recv + (size_t)q * b, b);
        break;
    case FN_GATHER:
        if (me == w->root)
            for (int q = 0; q < c->nranks; q++)
                fn_read(c, q, 0, recv + (size_t)q * b, b);
        break;
    case FN_SCATTER: fn_read(c, w->root, (size_t)me * b, recv, b); break;
    case FN_SENDRECV: break;
    }
}

/* 0 when every rank took part; -1 when this process aborted the communicator meanwhile. */
static int fn_run_coll(fn_work *w, int64_t start, int64_t *last, int *last_rank)
{
    ncclComm_t c = w->comm;
    fn_shm_rank *me = fn_rank(c, c->rank);
    size_t staged = fn_staged(w);
    if (staged)
        memcpy(fn_stage(c, c->rank), w->send, staged);
    me->staged = staged;
    me->start = start;
    atomic_store(&me->arrived, w->seq);
    fn_ring(c);
    fn_reach arrived = {offsetof(fn_shm_rank, arrived), w->seq},
             left = {offsetof(fn_shm_rank, left), w->seq};
    if (fn_wait(c, fn_all_reached, &arrived) != 0)
        return -1;
    *last = start;
    *last_rank = c->rank;
    for (int q = 0; q < c->nranks; q++)
        if (fn_rank(c, q)->start > *last) {
            *last = fn_rank(c, q)->start;
            *last_rank = q;
        }
    fn_coll_output(c, w);
    atomic_store(&me->left, w->seq);
    fn_ring(c);
    /* Until every rank has read this rank's staged input, the next collective must not
     * overwrite it. */
    return fn_wait(c, fn_all_reached, &left);
}

/* ---- point-to-point ------------------------------------------------------------------- */

typedef struct {
    fn_work *w;
    int64_t start, last;
    int last_rank;
    int *state;             /* per op: 0 to do, 1 posted (a send), 2 done */
    size_t *off;
} fn_p2p_run;

/* Advances every op it can; returns 1 when all are done. Never blocks, so a group that sends
 * to and receives from the same peers cannot deadlock on its own order. */
static int fn_p2p_progress(ncclComm_t c, void *arg)
{
    fn_p2p_run *run = arg;
    fn_work *w = run->w;
    int done = 1;
    for (int i = 0; i < w->np2p; i++) {
        fn_p2p *p = &w->p2p[i];
        if (run->state[i] == 2)
            continue;
        if (p->send) {
            fn_shm_chan *ch = fn_chan(c, c->rank, p->peer);
            if (run->state[i] == 0 && atomic_load(&ch->taken) == p->seq - 1 &&
                atomic_load(&ch->posted) == p->seq - 1) {
                memcpy(fn_stage(c, c->rank) + run->off[i], p->buf, p->bytes);
                ch->off = run->off[i];
                ch->bytes = p->bytes;
                ch->send_start = run->start;
                atomic_store(&ch->posted, p->seq);
                fn_ring(c);
                run->state[i] = 1;
            }
            if (run->state[i] == 1 && atomic_load(&ch->taken) >= p->seq) {
                if (ch->recv_start > run->last) {
                    run->last = ch->recv_start;
                    run->last_rank = p->peer;
                }
                run->state[i] = 2;
            }
        } else {
            fn_shm_chan *ch = fn_chan(c, p->peer, c->rank);
            if (atomic_load(&ch->posted) >= p->seq) {
                size_t n = ch->bytes < p->bytes ? ch->bytes : p->bytes;
                memcpy(p->buf, fn_stage(c, p->peer) + ch->off, n);
                if (ch->send_start > run->last) {
                    run->last = ch->send_start;
                    run->last_rank = p->peer;
                }
                ch->recv_start = run->start;
                atomic_store(&ch->taken, p->seq);
                fn_ring(c);
                run->state[i] = 2;
            }
        }
        done &= run->state[i] == 2;
    }
    return done;
}

static int fn_run_p2p(fn_work *w, int64_t start, int64_t *last, int *last_rank)
{
    ncclComm_t c = w->comm;
    int state[w->np2p];
    size_t off[w->np2p], at = 0;
    for (int i = 0; i < w->np2p; i++) {
        state[i] = 0;
        off[i] = at;
        if (w->p2p[i].send)
            at += (w->p2p[i].bytes + 255) / 256 * 256;
    }
    fn_p2p_run run = {w, start, start, c->rank, state, off};
    int r = fn_wait(c, fn_p2p_progress, &run);
    *last = run.last;
    *last_rank = run.last_rank;
    return r;
}

/* ---- the kernel ----------------------------------------------------------------------- */

void fn_kernel_run(void **params, const fakecuda_launch *l)
{
    if (!params || !params[0])
        fn_fatal("an NCCL kernel was launched without its argument block");
    fn_work *w;
    memcpy(&w, params[0], sizeof w);
    ncclComm_t c = w->comm;
    int64_t start = l->start_ns, last = start, end;
    int last_rank = c->rank, aborted = 1;
    pthread_mutex_lock(&c->run);
    if (!atomic_load(&c->aborted))
        aborted = (w->func == FN_SENDRECV ? fn_run_p2p : fn_run_coll)(w, start, &last,
                                                                      &last_rank) != 0;
    pthread_mutex_unlock(&c->run);
    if (aborted) {
        end = fn_now_ns();
        if (end < start)
            end = start;
    } else {
        end = last + fn_model_ns(w->model_bytes, w->factor) + fn_skew(c, w);
    }
    if (l->end_ns)
        *l->end_ns = end;
    fn_truth(w, start, end, last, last_rank, aborted);
    atomic_fetch_sub(&c->inflight, 1);
    fn_ring(c);
    free(w->p2p);
    free(w);
    fn_comm_unref(c);
}
