/* The time engine (fc_stream.c and fc_event.c are the API over it). Each stream is an
 * in-order queue served by its own worker thread. When an op reaches the head, the worker computes
 *     start = max(host submit time, end of the stream's previous op, end of every op it
 *                 depends on: waited events, legacy-default-stream barriers,
 *                 for a host<->device transfer: when its direction's copy engine is free)
 *     end   = start + modelled duration                 (CLOCK_MONOTONIC)
 * performs the op's data effect (copy, memset, host kernel, host function) at `start`, sleeps
 * until `end` (absolute), then publishes completion. Doing the work at the start hides its real
 * cost (a large memcpy) inside the modelled duration; when it takes longer, completion is late
 * but the recorded times stay the model's, so event times are exact while synchronization,
 * queries and overlap are real wall-clock effects. A host function (cuLaunchHostFunc) is the
 * exception (and cuStreamAddCallback's callback): it occupies the stream until it returns, as
 * on a GPU.
 *
 * In instant mode (FAKECUDA_INSTANT=1) ops run inline in fc_submit on the calling thread,
 * with no worker, no allocation and no syscall. */
#define _GNU_SOURCE
#include "fc.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static _Atomic unsigned long long fc_stream_ids = 1;

/* ---- ops ----------------------------------------------------------------------------- */

static __thread fc_op fc_instant_op;

/* ---- FAKECUDA_TRUTH ------------------------------------------------------------------ */

static __thread uint64_t fc_truth_count; /* this thread's kernels, copies and sets so far */

static int fc_truth_kind(const fc_op *op)
{
    return op->kind == FC_OP_KERNEL || op->kind == FC_OP_COPY || op->kind == FC_OP_COPY2D ||
           op->kind == FC_OP_MEMSET;
}

/* At submission: who submitted the op, and its index among that thread's operations. */
static void fc_truth_submit(fc_op *op)
{
    if (fc_g.truth_fd >= 0 && fc_truth_kind(op) && !op->truth_graph) {
        op->truth_tid = (uint32_t)gettid();
        op->truth_idx = ++fc_truth_count;
    }
}

/* One line per executed operation (one write, appended: processes may share the file). ready:
 * when its stream and dependencies let it start (before waiting for a copy engine). */
static void fc_truth_log(const fc_op *op, const fc_stream *s, int64_t ready, int64_t start,
                         int64_t end)
{
    if (!op->truth_idx && !op->truth_graph)
        return;
    static const char *const kinds[] = {[FC_OP_KERNEL] = "kernel", [FC_OP_COPY] = "copy",
                                        [FC_OP_COPY2D] = "copy", [FC_OP_MEMSET] = "set"};
    char line[192], graph[32] = "";
    if (op->truth_graph)
        snprintf(graph, sizeof graph, " graph=%llu", (unsigned long long)op->truth_graph);
    int n = snprintf(line, sizeof line, "%d %u %llu %s %llu %lld %lld %lld %lld%s\n",
                     (int)getpid(), op->truth_tid, (unsigned long long)op->truth_idx,
                     kinds[op->kind], (unsigned long long)s->id, (long long)start,
                     (long long)end, (long long)op->submit_ns, (long long)ready, graph);
    if (write(fc_g.truth_fd, line, (size_t)n) != n)
        fc_fatal("FAKECUDA_TRUTH: write failed: %s", strerror(errno));
}

fc_op *fc_op_new(fc_op_kind kind)
{
    fc_op *op;
    if (fc_g.instant) {
        op = &fc_instant_op;
        memset(op, 0, sizeof *op);
    } else {
        op = calloc(1, sizeof *op);
        if (!op)
            fc_fatal("out of host memory for a stream operation");
    }
    op->kind = kind;
    op->engine = FC_ENGINE_NONE;
    op->deps = op->dep_inline;
    return op;
}

void fc_op_add_dep(fc_op *op, fc_stream *s, uint64_t seq)
{
    if (op->ndeps == 2 && op->deps == op->dep_inline) {
        fc_dep *d = malloc(8 * sizeof *d);
        if (!d)
            fc_fatal("out of host memory for stream dependencies");
        memcpy(d, op->dep_inline, sizeof op->dep_inline);
        op->deps = d;
    } else if (op->ndeps >= 8 && (op->ndeps & (op->ndeps - 1)) == 0) {
        op->deps = realloc(op->deps, 2 * (size_t)op->ndeps * sizeof *op->deps);
        if (!op->deps)
            fc_fatal("out of host memory for stream dependencies");
    }
    fc_stream_ref(s);
    op->deps[op->ndeps].s = s;
    op->deps[op->ndeps].seq = seq;
    op->ndeps++;
}

void fc_op_free(fc_op *op)
{
    for (int i = 0; i < op->ndeps; i++)
        fc_stream_unref(op->deps[i].s);
    if (op->deps != op->dep_inline)
        free(op->deps);
    if (op->staging_cap)
        fc_staging_give(op->staging, op->staging_cap);
    else
        free(op->staging);
    if (op->kind == FC_OP_RECORD)
        fc_event_unref(op->u.record.ev);
    if (op->kind == FC_OP_DEVICE)
        op->u.device.release(op->u.device.arg);
    if (op != &fc_instant_op)
        free(op);
}

static void fc_copy2d_rows(const CUDA_MEMCPY2D *p)
{
    const char *src = (const char *)(p->srcMemoryType == CU_MEMORYTYPE_HOST
                                         ? (uintptr_t)p->srcHost
                                         : (uintptr_t)p->srcDevice);
    char *dst = (char *)(p->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->dstHost
                                                                : (uintptr_t)p->dstDevice);
    src += p->srcY * p->srcPitch + p->srcXInBytes;
    dst += p->dstY * p->dstPitch + p->dstXInBytes;
    for (size_t r = 0; r < p->Height; r++)
        memmove(dst + r * p->dstPitch, src + r * p->srcPitch, p->WidthInBytes);
}

/* The caller holds e->m. */
static void fc_event_stamp(struct CUevent_st *e, uint64_t gen, int64_t t)
{
    if (gen == e->gen)
        e->time_ns = t;
    if (gen > atomic_load(&e->done_gen))
        atomic_store(&e->done_gen, gen);
}

static void fc_event_complete(struct CUevent_st *e, uint64_t gen, int64_t t)
{
    pthread_mutex_lock(&e->m);
    fc_event_stamp(e, gen, t);
    pthread_mutex_unlock(&e->m);
}

static void fc_memset_row(char *d, unsigned v, unsigned elem, size_t n)
{
    if (elem == 1) {
        memset(d, (int)v, n);
    } else if (elem == 2) {
        uint16_t x = (uint16_t)v;
        for (size_t i = 0; i < n; i++)
            memcpy(d + 2 * i, &x, 2);
    } else {
        uint32_t x = v;
        for (size_t i = 0; i < n; i++)
            memcpy(d + 4 * i, &x, 4);
    }
}

/* Zeroes a contiguous set's whole pages by dropping them (MADV_DONTNEED: the driver's own
 * private anonymous mappings read as zeros after it) and writes only the partial pages at its
 * ends; returns -1 when that does not apply. PyTorch zeroes each step's gradient buffers
 * (resnet18 at batch 32: 137 MB per step); writing them took this machine 40-55 ms per step
 * where an H100 takes 40 us, and the set held the stream that long (fc_op_run), so the
 * simulated device looked busy through the step's data wait. Registered memory is the
 * program's own mapping, whose kind is unknown; VMM memory is a shared memfd; neither is
 * dropped. In instant mode ops make no system call. */
static int fc_memset_zero_pages(char *d, size_t n)
{
    enum { FC_ZERO_PAGES_MIN = 1 << 20 };
    fc_range rg;
    if (n < FC_ZERO_PAGES_MIN || fc_g.instant || fc_mem_lookup((uintptr_t)d, &rg) != 0 ||
        n > rg.base + rg.size - (uintptr_t)d ||
        (rg.kind != FC_MEM_DEVICE && rg.kind != FC_MEM_MANAGED && rg.kind != FC_MEM_PINNED))
        return -1;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)d + page - 1) & ~(page - 1), hi = ((uintptr_t)d + n) & ~(page - 1);
    if (madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0)
        return -1;
    memset(d, 0, lo - (uintptr_t)d);
    memset((void *)hi, 0, (uintptr_t)d + n - hi);
    return 0;
}

static int fc_memset_is_zero(unsigned v, unsigned elem)
{
    return elem == 1 ? (v & 0xffu) == 0 : elem == 2 ? (v & 0xffffu) == 0 : v == 0;
}

/* The op's data effect; host functions and kernels are run by the caller. */
static void fc_op_effect(fc_op *op, int64_t end)
{
    switch (op->kind) {
    case FC_OP_COPY:
        memmove(op->u.copy.dst, op->u.copy.src, op->u.copy.n);
        break;
    case FC_OP_COPY2D:
        fc_copy2d_rows(&op->u.copy2d.p);
        break;
    case FC_OP_MEMSET:
        if (fc_memset_is_zero(op->u.memset.value, op->u.memset.elem) &&
            (op->u.memset.height == 1 ||
             op->u.memset.pitch == op->u.memset.count * op->u.memset.elem) &&
            fc_memset_zero_pages(op->u.memset.dst, op->u.memset.count * op->u.memset.elem *
                                                       op->u.memset.height) == 0)
            break;
        for (size_t r = 0; r < op->u.memset.height; r++)
            fc_memset_row(op->u.memset.dst + r * op->u.memset.pitch, op->u.memset.value,
                          op->u.memset.elem, op->u.memset.count);
        break;
    case FC_OP_RECORD:
        fc_event_complete(op->u.record.ev, op->u.record.gen, end);
        break;
    case FC_OP_FREE:
        fc_mem_free_device(op->u.free.p);
        break;
    case FC_OP_WAIT:
    case FC_OP_DEVICE:
    case FC_OP_KERNEL:
    case FC_OP_HOSTFN:
    case FC_OP_CALLBACK:
        break;
    }
}

static int fc_op_runs_host_code(const fc_op *op)
{
    return (op->kind == FC_OP_KERNEL && op->u.kernel.fn) || op->kind == FC_OP_HOSTFN ||
           op->kind == FC_OP_CALLBACK;
}

/* A stream's worker runs at real-time priority where the system lets it (fc_worker): the
 * program's own code it runs (host functions, callbacks, host kernels) runs at the program's. */
static __thread int fc_worker_rt;

static void fc_worker_priority(int rt)
{
    if (!fc_worker_rt)
        return;
    struct sched_param sp = {.sched_priority = rt ? 1 : 0};
    pthread_setschedparam(pthread_self(), rt ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/* start and *end: the op's modelled interval; a host kernel may move its end (fakecuda.h). */
static void fc_op_host_code(fc_op *op, int64_t start, int64_t *end)
{
    fc_worker_priority(0);
    if (op->kind == FC_OP_KERNEL) {
        long long e = *end;
        op->u.kernel.launch.start_ns = start;
        op->u.kernel.launch.end_ns = &e;
        op->u.kernel.fn(op->u.kernel.params, &op->u.kernel.launch);
        op->u.kernel.launch.end_ns = NULL;
        *end = e > start ? e : start;
    } else if (op->kind == FC_OP_HOSTFN) {
        op->u.hostfn.fn(op->u.hostfn.user);
    } else {
        op->u.callback.fn(op->u.callback.h, CUDA_SUCCESS, op->u.callback.user);
    }
    fc_worker_priority(1);
}

/* ---- streams ------------------------------------------------------------------------- */

void fc_stream_ref(fc_stream *s)
{
    atomic_fetch_add(&s->refs, 1);
}

void fc_stream_unref(fc_stream *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1) {
        pthread_mutex_destroy(&s->m);
        pthread_cond_destroy(&s->work);
        pthread_cond_destroy(&s->done);
        fc_nodeset_free(&s->capdeps);
        s->magic = 0;
        free(s);
    }
}

/* Waits for op seq of s and returns its end time. */
static int64_t fc_stream_wait_end(fc_stream *s, uint64_t seq)
{
    pthread_mutex_lock(&s->m);
    while (atomic_load(&s->completed) < seq)
        pthread_cond_wait(&s->done, &s->m);
    int64_t end = s->ring[seq % FC_RING].seq == seq ? s->ring[seq % FC_RING].end : s->tail_end_ns;
    pthread_mutex_unlock(&s->m);
    return end;
}

void fc_stream_wait(fc_stream *s, uint64_t seq)
{
    if (atomic_load(&s->completed) >= seq)
        return;
    fc_stream_wait_end(s, seq);
}

#define FC_EFFECT_SLACK_NS 1000000

int64_t fc_op_run_at(fc_stream *s, fc_op *op, int64_t start)
{
    int64_t ready = start;
    if (op->engine != FC_ENGINE_NONE) {
        fc_device *d = fc_ctx_dev(s->ctx);
        pthread_mutex_lock(&d->engine_lock);
        if (d->engine_free_ns[op->engine] > start)
            start = d->engine_free_ns[op->engine];
        d->engine_free_ns[op->engine] = start + op->dur_ns;
        pthread_mutex_unlock(&d->engine_lock);
    }
    int64_t end = start + op->dur_ns;
    fc_sleep_until(start);
    if (op->kind == FC_OP_DEVICE)
        end = op->u.device.run(op->u.device.arg, s, start);
    if (fc_op_runs_host_code(op))
        fc_op_host_code(op, start, &end);
    int64_t effect_at = fc_now_ns();
    fc_op_effect(op, end);
    int64_t now = fc_now_ns();
    if (op->kind == FC_OP_HOSTFN || op->kind == FC_OP_CALLBACK) {
        /* A host function occupies the stream for as long as it really runs. */
        if (now > end)
            end = now;
    } else if ((op->kind == FC_OP_COPY || op->kind == FC_OP_COPY2D || op->kind == FC_OP_MEMSET) &&
               now - effect_at > 2 * op->dur_ns + FC_EFFECT_SLACK_NS) {
        /* So does a copy or a set for as long as this thread takes to move its bytes, when
         * that is far longer than the model: a batch's 19 MB, or a set of hundreds of MB of
         * fresh pages, takes the host tens to hundreds of milliseconds beside busy CPUs, and
         * ending it at the model's time showed the device idle while a synchronization still
         * waited for it, which a GPU never is. Up to twice the model and a millisecond, the
         * overrun is the host's (cache misses, a preemption), as is how late this thread woke
         * to begin it: the model's times stay exact, completion is that late. */
        end = start + (now - effect_at);
        if (op->engine != FC_ENGINE_NONE) {
            fc_device *d = fc_ctx_dev(s->ctx);
            pthread_mutex_lock(&d->engine_lock);
            if (d->engine_free_ns[op->engine] < end)
                d->engine_free_ns[op->engine] = end;
            pthread_mutex_unlock(&d->engine_lock);
        }
    }
    fc_sleep_until(end);
    fc_truth_log(op, s, ready, start, end);
    return end;
}

static void *fc_worker(void *arg)
{
    fc_stream *s = arg;
    /* A GPU runs beside the host's CPUs, not on them; this thread is the device and needs a
     * core for every operation it completes. At the program's priority it waited for one
     * behind busy loader processes (imagenet -j 4 on 2 cores), completing work tens of
     * milliseconds after the times it recorded, so traces showed the device idle while a
     * synchronization waited for it. Real-time priority (SCHED_FIFO, where permitted; it
     * sleeps but for the last 120 us before each deadline and the data it moves) makes it
     * run when due, as a device would. */
    struct sched_param sp = {.sched_priority = 1};
    fc_worker_rt = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
    pthread_mutex_lock(&s->m);
    for (;;) {
        while (!s->head && !s->destroyed)
            pthread_cond_wait(&s->work, &s->m);
        if (!s->head)
            break;
        fc_op *op = s->head;
        int64_t start = op->submit_ns > s->tail_end_ns ? op->submit_ns : s->tail_end_ns;
        pthread_mutex_unlock(&s->m);

        for (int i = 0; i < op->ndeps; i++) {
            int64_t e = fc_stream_wait_end(op->deps[i].s, op->deps[i].seq);
            if (e > start)
                start = e;
        }
        int64_t end = fc_op_run_at(s, op, start);

        pthread_mutex_lock(&s->m);
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->tail_end_ns = end;
        s->ring[op->seq % FC_RING].seq = op->seq;
        s->ring[op->seq % FC_RING].end = end;
        atomic_store(&s->completed, op->seq);
        pthread_cond_broadcast(&s->done);
        pthread_mutex_unlock(&s->m);
        fc_op_free(op);
        pthread_mutex_lock(&s->m);
    }
    pthread_mutex_unlock(&s->m);
    fc_stream_unref(s);
    return NULL;
}

fc_stream *fc_stream_new(fc_ctx *ctx, unsigned flags, int priority, int legacy)
{
    fc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = FC_STREAM_MAGIC;
    s->ctx = ctx;
    s->flags = flags;
    s->priority = priority;
    s->legacy = legacy;
    s->id = atomic_fetch_add(&fc_stream_ids, 1);
    atomic_store(&s->refs, 1);
    pthread_mutex_init(&s->m, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    s->tail_end_ns = 0;
    pthread_mutex_lock(&ctx->lock);
    s->ctx_next = ctx->streams;
    ctx->streams = s;
    pthread_mutex_unlock(&ctx->lock);
    return s;
}

static void fc_stream_unlink(fc_stream *s)
{
    fc_ctx *c = s->ctx;
    pthread_mutex_lock(&c->lock);
    for (fc_stream **p = &c->streams; *p; p = &(*p)->ctx_next)
        if (*p == s) {
            *p = s->ctx_next;
            break;
        }
    pthread_mutex_unlock(&c->lock);
}

/* Legacy default stream semantics (CUDA programming guide, "Default stream"): work on the
 * legacy stream waits for all earlier work in the context's blocking streams, and work on a
 * blocking stream waits for earlier work on the legacy stream. Called with ctx->lock held. */
static void fc_add_legacy_barrier(fc_stream *s, fc_op *op)
{
    fc_ctx *c = s->ctx;
    if (s->legacy) {
        for (fc_stream *t = c->streams; t; t = t->ctx_next) {
            if (t == s || (t->flags & CU_STREAM_NON_BLOCKING))
                continue;
            uint64_t sub = atomic_load(&t->submitted);
            if (sub > atomic_load(&t->completed))
                fc_op_add_dep(op, t, sub);
        }
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING)) {
        fc_stream *l = c->legacy;
        uint64_t sub = atomic_load(&l->submitted);
        if (sub > atomic_load(&l->completed))
            fc_op_add_dep(op, l, sub);
    }
}

uint64_t fc_submit(fc_stream *s, fc_op *op)
{
    if (fc_capture_add(s, op)) {
        fc_op_free(op); /* a graph node now: nothing to run, nothing to wait for */
        return 0;
    }
    fc_truth_submit(op);
    if (fc_g.instant) {
        int64_t ignored = 0;
        if (fc_op_runs_host_code(op))
            fc_op_host_code(op, fc_now_ns(), &ignored);
        int64_t now = fc_now_ns();
        if (op->kind == FC_OP_DEVICE)
            op->u.device.run(op->u.device.arg, s, now);
        fc_op_effect(op, op->kind == FC_OP_RECORD ? now : 0);
        fc_truth_log(op, s, now, now, now);
        uint64_t seq = atomic_fetch_add(&s->submitted, 1) + 1;
        atomic_store(&s->completed, seq);
        fc_op_free(op);
        return seq;
    }
    fc_ctx *c = s->ctx;
    pthread_mutex_lock(&c->lock);
    fc_add_legacy_barrier(s, op);
    op->submit_ns = fc_now_ns();
    pthread_mutex_lock(&s->m);
    uint64_t seq = atomic_load(&s->submitted) + 1;
    op->seq = seq;
    atomic_store(&s->submitted, seq);
    pthread_mutex_unlock(&c->lock);
    if (op->kind == FC_OP_RECORD && !op->ndeps && !s->head) {
        /* A GPU stamps an event recorded on an idle stream as soon as it reaches it, and no
         * host thread runs for that: a driver only writes its command queue. Waking the worker
         * for it made a busy host's record calls wait for the worker (it runs at real-time
         * priority and took the submitter's CPU: calls of 18-31 us beside two CPU hogs, so the
         * tracer's anchors were off by half that). The caller holds the event's lock
         * (fc_event_record_on). */
        int64_t end = op->submit_ns > s->tail_end_ns ? op->submit_ns : s->tail_end_ns;
        s->tail_end_ns = end;
        s->ring[seq % FC_RING].seq = seq;
        s->ring[seq % FC_RING].end = end;
        fc_event_stamp(op->u.record.ev, op->u.record.gen, end);
        atomic_store(&s->completed, seq);
        pthread_cond_broadcast(&s->done);
        pthread_mutex_unlock(&s->m);
        fc_op_free(op);
        return seq;
    }
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    if (!s->worker_started) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&a, 256 * 1024);
        fc_stream_ref(s); /* the worker's */
        if (pthread_create(&s->worker, &a, fc_worker, s) != 0)
            fc_fatal("cannot start a stream worker thread");
        pthread_attr_destroy(&a);
        s->worker_started = 1;
    }
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->m);
    return seq;
}

void fc_ctx_sync(fc_ctx *c)
{
    /* Snapshot (stream, seq) pairs under the lock, wait outside it. */
    for (;;) {
        fc_stream *wait_s = NULL;
        uint64_t wait_seq = 0;
        pthread_mutex_lock(&c->lock);
        for (fc_stream *t = c->streams; t; t = t->ctx_next) {
            uint64_t sub = atomic_load(&t->submitted);
            if (sub > atomic_load(&t->completed)) {
                wait_s = t;
                wait_seq = sub;
                fc_stream_ref(t);
                break;
            }
        }
        pthread_mutex_unlock(&c->lock);
        if (!wait_s)
            return;
        fc_stream_wait(wait_s, wait_seq);
        fc_stream_unref(wait_s);
    }
}

/* Retires a stream: no new work; the worker drains what is queued, then the last reference
 * frees it. Also the destructor of a thread's per-thread default stream. */
void fc_stream_retire(void *stream)
{
    fc_stream *s = stream;
    fc_stream_unlink(s);
    pthread_mutex_lock(&s->m);
    s->destroyed = 1;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->m);
    fc_stream_unref(s);
}

static fc_stream *fc_ptds(fc_ctx *c)
{
    fc_stream *s = pthread_getspecific(c->ptds_key);
    if (!s) {
        s = fc_stream_new(c, 0, 0, 0);
        if (!s)
            fc_fatal("out of host memory for a per-thread default stream");
        pthread_setspecific(c->ptds_key, s);
    }
    return s;
}

CUresult fc_stream_resolve(CUstream h, int per_thread, fc_stream **out)
{
    if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD) {
        if (h->magic != FC_STREAM_MAGIC || h->destroyed)
            return CUDA_ERROR_INVALID_HANDLE;
        if (!atomic_load(&h->ctx->alive))
            return CUDA_ERROR_CONTEXT_IS_DESTROYED;
        *out = h;
        return CUDA_SUCCESS;
    }
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (h == CU_STREAM_PER_THREAD || (!h && per_thread))
        *out = fc_ptds(c);
    else
        *out = c->legacy;
    return CUDA_SUCCESS;
}
