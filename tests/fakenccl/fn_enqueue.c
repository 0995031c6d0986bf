/* Collectives, point-to-point and groups (fn.h). Each call, or each group's calls at
 * ncclGroupEnd, becomes a kernel launched on the program's stream with cuLaunchKernel, as
 * NVIDIA's library launches its own, so a tracer in the process sees a kernel launch with
 * NVIDIA's name and its 4096-byte argument block. The block's first 8 bytes carry the work
 * (fn_work), which fn_kernel.c runs when the kernel starts on the simulated device. Sequence
 * numbers are taken in issue order: NCCL requires every rank to issue a communicator's
 * collectives in the same order, which is what matches them across ranks. */
#define _GNU_SOURCE
#include "fn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- kernels: one module per context ------------------------------------------------ */

#define FN_ARGS_BYTES 4096

typedef struct {
    CUcontext ctx;
    CUfunction fn[64];
} fn_module;

static fn_module fn_mods[32];
static int fn_nmods;
static pthread_mutex_t fn_mods_lock = PTHREAD_MUTEX_INITIALIZER;

static void fn_mangle(char *out, size_t n, const char *name)
{
    snprintf(out, n, "_Z%zu%s%s", strlen(name), name, fn_kernel_args_suffix);
}

/* NVIDIA's kernels as a text image (tests/fakecuda/driver/README.md): each takes its
 * ncclDevKernelArgsStorage<4096> by value. */
static CUresult fn_module_load(fn_module *m)
{
    size_t cap = 64 + (size_t)fn_nkernels * 160;
    char *img = malloc(cap), name[160];
    if (!img)
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t len = (size_t)snprintf(img, cap, "fakecuda-module 1\n");
    for (int i = 0; i < fn_nkernels; i++) {
        fn_mangle(name, sizeof name, fn_kernel_names[i]);
        len += (size_t)snprintf(img + len, cap - len, "kernel %s %d\n", name, FN_ARGS_BYTES);
    }
    CUmodule mod;
    CUresult r = cuCtxPushCurrent(m->ctx);
    if (r == CUDA_SUCCESS) {
        r = cuModuleLoadData(&mod, img);
        for (int i = 0; i < fn_nkernels && r == CUDA_SUCCESS; i++) {
            fn_mangle(name, sizeof name, fn_kernel_names[i]);
            r = cuModuleGetFunction(&m->fn[i], mod, name);
        }
        CUcontext popped;
        cuCtxPopCurrent(&popped);
    }
    free(img);
    return r;
}

static CUresult fn_function(CUcontext ctx, int k, CUfunction *out)
{
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fn_mods_lock);
    int i = 0;
    while (i < fn_nmods && fn_mods[i].ctx != ctx)
        i++;
    if (i == fn_nmods) {
        if (fn_nmods == (int)(sizeof fn_mods / sizeof fn_mods[0]))
            fn_fatal("more than %d CUDA contexts ran collectives", fn_nmods);
        fn_mods[i].ctx = ctx;
        r = fn_module_load(&fn_mods[i]);
        if (r == CUDA_SUCCESS)
            fn_nmods++;
    }
    if (r == CUDA_SUCCESS)
        *out = fn_mods[i].fn[k];
    pthread_mutex_unlock(&fn_mods_lock);
    return r;
}

static const char *fn_type_tag(ncclDataType_t t)
{
    static const char *const tags[] = {
        [ncclInt8] = "u8",    [ncclUint8] = "u8",   [ncclInt32] = "u32",     [ncclUint32] = "u32",
        [ncclInt64] = "u64",  [ncclUint64] = "u64", [ncclFloat16] = "f16",   [ncclFloat32] = "f32",
        [ncclFloat64] = "f64", [ncclBfloat16] = "bf16", [ncclFloat8e4m3] = "f8e4m3",
        [ncclFloat8e5m2] = "f8e5m2"};
    return tags[t];
}

/* NVIDIA's kernel for the work: a specialized one where its library has one (sum on each
 * type; ring with the LL protocol), else ncclDevKernel_Generic. */
static int fn_kernel_index(const fn_work *w)
{
    char name[96];
    int sum = w->op == ncclSum && !w->premul;
    switch (w->func) {
    case FN_ALLREDUCE:
        snprintf(name, sizeof name, sum ? "ncclDevKernel_AllReduce_Sum_%s_RING_LL" : "-",
                 fn_type_tag(w->type));
        break;
    case FN_REDUCE:
        snprintf(name, sizeof name, sum ? "ncclDevKernel_Reduce_Sum_%s_RING_LL" : "-",
                 fn_type_tag(w->type));
        break;
    case FN_REDUCESCATTER:
        snprintf(name, sizeof name, sum ? "ncclDevKernel_ReduceScatter_Sum_%s_RING_LL" : "-",
                 fn_type_tag(w->type));
        break;
    case FN_ALLGATHER: snprintf(name, sizeof name, "ncclDevKernel_AllGather_RING_LL"); break;
    case FN_BROADCAST: snprintf(name, sizeof name, "ncclDevKernel_Broadcast_RING_LL"); break;
    default: snprintf(name, sizeof name, "ncclDevKernel_SendRecv"); break;
    }
    for (int i = 0; i < fn_nkernels; i++)
        if (strcmp(fn_kernel_names[i], name) == 0)
            return i;
    for (int i = 0; i < fn_nkernels; i++)
        if (strcmp(fn_kernel_names[i], "ncclDevKernel_Generic") == 0)
            return i;
    fn_fatal("gen/fn_kernels.c has no ncclDevKernel_Generic");
}

static void fn_work_free(fn_work *w)
{
    free(w->p2p);
    free(w);
}

static ncclResult_t fn_launch(fn_work *w)
{
    ncclComm_t c = w->comm;
    CUcontext ctx = NULL, cur = NULL;
    if (cuStreamGetCtx(w->stream, &ctx) != CUDA_SUCCESS || !ctx) {
        CUdevice d;
        if (cuDeviceGet(&d, c->dev) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, d) != CUDA_SUCCESS)
            return fn_error(ncclUnhandledCudaError, "no CUDA context for device %d", c->dev);
    }
    /* A captured kernel would run its work once per graph launch, and free it after the
     * first (README.md, "Not modelled"); NVIDIA's library asks the same question. */
    CUstreamCaptureStatus capturing;
    if (cuStreamIsCapturing(w->stream, &capturing) == CUDA_SUCCESS &&
        capturing != CU_STREAM_CAPTURE_STATUS_NONE)
        return fn_unsupported("an NCCL call on a capturing stream");
    CUfunction f;
    CUresult r = fn_function(ctx, fn_kernel_index(w), &f);
    if (r != CUDA_SUCCESS)
        return fn_error(ncclUnhandledCudaError, "loading the kernels failed: CUresult %d", (int)r);
    _Alignas(16) char args[FN_ARGS_BYTES] = {0};
    memcpy(args, &w, sizeof w);
    void *params[] = {args};
    atomic_fetch_add(&c->refs, 1);
    atomic_fetch_add(&c->inflight, 1);
    cuCtxGetCurrent(&cur);
    int push = cur != ctx && cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
    /* NVIDIA's grid is one block per channel, 640 threads (NCCL_MAX_NTHREADS). */
    r = cuLaunchKernel(f, 2, 1, 1, 640, 1, 1, 0, w->stream, params, NULL);
    if (push)
        cuCtxPopCurrent(&cur);
    if (r != CUDA_SUCCESS) {
        atomic_fetch_sub(&c->inflight, 1);
        fn_comm_unref(c);
        return fn_error(ncclUnhandledCudaError, "cuLaunchKernel failed: CUresult %d", (int)r);
    }
    return ncclSuccess;
}

/* ---- groups --------------------------------------------------------------------------- */

static __thread int fn_depth;
static __thread fn_work *fn_head, *fn_tail;
static __thread ncclComm_t fn_inits[FN_MAX_RANKS];
static __thread int fn_ninits;
static __thread ncclResult_t fn_group_result;

int fn_group_defer_init(ncclComm_t c)
{
    if (!fn_depth || fn_ninits == FN_MAX_RANKS)
        return 0;
    fn_inits[fn_ninits++] = c;
    return 1;
}

static ncclResult_t fn_submit(fn_work *w)
{
    if (fn_depth) {
        if (fn_tail)
            fn_tail->next = w;
        else
            fn_head = w;
        fn_tail = w;
        return ncclSuccess;
    }
    ncclResult_t r = fn_launch(w);
    if (r != ncclSuccess)
        fn_work_free(w);
    return r;
}

FN_EXPORT ncclResult_t pncclGroupStart(void)
{
    fn_init();
    fn_depth++;
    return ncclSuccess;
}
FN_ALIAS(ncclGroupStart)

FN_EXPORT ncclResult_t pncclGroupEnd(void)
{
    if (fn_depth == 0)
        return fn_error(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--fn_depth)
        return ncclSuccess;
    for (int i = 0; i < fn_ninits; i++)
        fn_comm_wait_joined(fn_inits[i]);
    fn_ninits = 0;
    ncclResult_t r = fn_group_result;
    fn_group_result = ncclSuccess;
    fn_work *w = fn_head;
    fn_head = fn_tail = NULL;
    while (w) {
        fn_work *next = w->next;
        w->next = NULL;
        ncclResult_t lr = r == ncclSuccess ? fn_launch(w) : r;
        if (lr != ncclSuccess) {
            r = lr;
            fn_work_free(w);
        }
        w = next;
    }
    return r;
}
FN_ALIAS(ncclGroupEnd)

/* An error inside a group is also ncclGroupEnd's, as NCCL reports it. */
static ncclResult_t fn_fail(ncclResult_t r)
{
    if (fn_depth && fn_group_result == ncclSuccess)
        fn_group_result = r;
    return r;
}

/* ---- collectives ---------------------------------------------------------------------- */

typedef struct {
    uint64_t scalar_bits;
    ncclDataType_t type;
    int used;
} fn_premul;

static fn_premul fn_premuls[256];
static pthread_mutex_t fn_premul_lock = PTHREAD_MUTEX_INITIALIZER;

static ncclResult_t fn_check_common(const char *what, size_t count, ncclDataType_t t,
                                    ncclComm_t comm)
{
    fn_init();
    ncclResult_t r = fn_comm_check(comm);
    if (r != ncclSuccess)
        return r;
    if (!fn_type_size(t))
        return fn_error(ncclInvalidArgument, "%s: invalid datatype %d", what, (int)t);
    (void)count;
    return ncclSuccess;
}

static ncclResult_t fn_coll(const char *what, fn_func f, const void *send, void *recv,
                            size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
                            ncclComm_t comm, cudaStream_t stream)
{
    ncclResult_t r = fn_check_common(what, count, t, comm);
    if (r != ncclSuccess)
        return fn_fail(r);
    int n = comm->nranks;
    double scalar = 1;
    int premul = 0;
    if ((int)op >= (int)ncclNumOps) {
        int k = (int)op - (int)ncclNumOps;
        pthread_mutex_lock(&fn_premul_lock);
        int ok = k < 256 && fn_premuls[k].used;
        if (ok) {
            double s;
            memcpy(&s, &fn_premuls[k].scalar_bits, sizeof s);
            scalar = s;
        }
        pthread_mutex_unlock(&fn_premul_lock);
        if (!ok)
            return fn_fail(fn_error(ncclInvalidArgument, "%s: invalid reduction %d", what, (int)op));
        premul = 1;
        op = ncclSum;
    } else if ((int)op < 0) {
        return fn_fail(fn_error(ncclInvalidArgument, "%s: invalid reduction %d", what, (int)op));
    }
    if ((f == FN_REDUCE || f == FN_BROADCAST || f == FN_GATHER || f == FN_SCATTER) &&
        (root < 0 || root >= n))
        return fn_fail(fn_error(ncclInvalidArgument, "%s: root %d outside 0..%d", what, root,
                                n - 1));
    size_t ts = fn_type_size(t), bytes = count * ts;
    uint64_t model = bytes;
    double factor = 1;
    size_t staged = bytes;
    switch (f) {
    case FN_ALLREDUCE: factor = 2.0 * (n - 1) / n; break;
    case FN_REDUCESCATTER: model = staged = bytes * (size_t)n; factor = (double)(n - 1) / n; break;
    case FN_ALLGATHER: model = bytes * (size_t)n; factor = (double)(n - 1) / n; break;
    case FN_ALLTOALL: case FN_GATHER: case FN_SCATTER:
        model = bytes * (size_t)n;
        factor = (double)(n - 1) / n;
        if (f != FN_GATHER)
            staged = bytes * (size_t)n;
        break;
    default: break;
    }
    if (staged > fn_g.stage)
        return fn_fail(fn_error(ncclInvalidArgument,
                                "%s: %zu bytes exceed FAKENCCL_STAGE_BYTES (%llu)", what, staged,
                                (unsigned long long)fn_g.stage));
    fn_work *w = calloc(1, sizeof *w);
    if (!w)
        return fn_fail(fn_error(ncclSystemError, "out of host memory for a collective"));
    w->comm = comm;
    w->func = f;
    w->send = send;
    w->recv = recv;
    w->count = count;
    w->type = t;
    w->op = op;
    w->premul = premul;
    w->scalar = scalar;
    w->root = root;
    w->seq = ++comm->coll_seq;
    w->model_bytes = model;
    w->factor = factor;
    w->stream = (CUstream)stream;
    w->tid = (int)gettid();
    return fn_fail(fn_submit(w));
}

FN_EXPORT ncclResult_t pncclAllReduce(const void *send, void *recv, size_t count,
                                      ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                      cudaStream_t stream)
{
    return fn_coll("ncclAllReduce", FN_ALLREDUCE, send, recv, count, t, op, 0, comm, stream);
}
FN_ALIAS(ncclAllReduce)

FN_EXPORT ncclResult_t pncclReduce(const void *send, void *recv, size_t count, ncclDataType_t t,
                                   ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    return fn_coll("ncclReduce", FN_REDUCE, send, recv, count, t, op, root, comm, stream);
}
FN_ALIAS(ncclReduce)

FN_EXPORT ncclResult_t pncclBroadcast(const void *send, void *recv, size_t count,
                                      ncclDataType_t t, int root, ncclComm_t comm,
                                      cudaStream_t stream)
{
    return fn_coll("ncclBroadcast", FN_BROADCAST, send, recv, count, t, ncclSum, root, comm,
                   stream);
}
FN_ALIAS(ncclBroadcast)

FN_EXPORT ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t t, int root,
                                  ncclComm_t comm, cudaStream_t stream)
{
    return fn_coll("ncclBcast", FN_BROADCAST, buff, buff, count, t, ncclSum, root, comm, stream);
}
FN_ALIAS(ncclBcast)

FN_EXPORT ncclResult_t pncclAllGather(const void *send, void *recv, size_t sendcount,
                                      ncclDataType_t t, ncclComm_t comm, cudaStream_t stream)
{
    return fn_coll("ncclAllGather", FN_ALLGATHER, send, recv, sendcount, t, ncclSum, 0, comm,
                   stream);
}
FN_ALIAS(ncclAllGather)

FN_EXPORT ncclResult_t pncclReduceScatter(const void *send, void *recv, size_t recvcount,
                                          ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream)
{
    return fn_coll("ncclReduceScatter", FN_REDUCESCATTER, send, recv, recvcount, t, op, 0, comm,
                   stream);
}
FN_ALIAS(ncclReduceScatter)

FN_EXPORT ncclResult_t pncclAlltoAll(const void *send, void *recv, size_t count,
                                     ncclDataType_t t, ncclComm_t comm, cudaStream_t stream)
{
    return fn_coll("ncclAlltoAll", FN_ALLTOALL, send, recv, count, t, ncclSum, 0, comm, stream);
}
FN_ALIAS(ncclAlltoAll)

FN_EXPORT ncclResult_t pncclGather(const void *send, void *recv, size_t count, ncclDataType_t t,
                                   int root, ncclComm_t comm, cudaStream_t stream)
{
    return fn_coll("ncclGather", FN_GATHER, send, recv, count, t, ncclSum, root, comm, stream);
}
FN_ALIAS(ncclGather)

FN_EXPORT ncclResult_t pncclScatter(const void *send, void *recv, size_t count, ncclDataType_t t,
                                    int root, ncclComm_t comm, cudaStream_t stream)
{
    return fn_coll("ncclScatter", FN_SCATTER, send, recv, count, t, ncclSum, root, comm, stream);
}
FN_ALIAS(ncclScatter)

/* ---- point-to-point: a group's sends and receives on one stream share one kernel ------- */

static ncclResult_t fn_p2p_add(const char *what, int send, void *buf, size_t count,
                               ncclDataType_t t, int peer, ncclComm_t comm, cudaStream_t stream)
{
    ncclResult_t r = fn_check_common(what, count, t, comm);
    if (r != ncclSuccess)
        return fn_fail(r);
    if (peer < 0 || peer >= comm->nranks)
        return fn_fail(fn_error(ncclInvalidArgument, "%s: peer %d outside 0..%d", what, peer,
                                comm->nranks - 1));
    size_t bytes = count * fn_type_size(t);
    fn_work *w = NULL;
    if (fn_depth)
        for (fn_work *g = fn_head; g && !w; g = g->next)
            if (g->func == FN_SENDRECV && g->comm == comm && g->stream == (CUstream)stream)
                w = g;
    uint64_t staged = bytes;
    if (w)
        for (int i = 0; i < w->np2p; i++)
            staged += w->p2p[i].send ? (w->p2p[i].bytes + 255) / 256 * 256 : 0;
    if (send && staged > fn_g.stage)
        return fn_fail(fn_error(ncclInvalidArgument,
                                "%s: %llu bytes exceed FAKENCCL_STAGE_BYTES (%llu)", what,
                                (unsigned long long)staged, (unsigned long long)fn_g.stage));
    int fresh = !w;
    if (fresh) {
        w = calloc(1, sizeof *w);
        if (!w)
            return fn_fail(fn_error(ncclSystemError, "out of host memory for a send/receive"));
        w->comm = comm;
        w->func = FN_SENDRECV;
        w->type = t;
        w->root = -1;
        w->factor = 1;
        w->stream = (CUstream)stream;
        w->tid = (int)gettid();
        w->seq = ++comm->p2p_seq;
    }
    fn_p2p *p = realloc(w->p2p, (size_t)(w->np2p + 1) * sizeof *p);
    if (!p) {
        if (fresh)
            fn_work_free(w);
        return fn_fail(fn_error(ncclSystemError, "out of host memory for a send/receive"));
    }
    w->p2p = p;
    p[w->np2p] = (fn_p2p){.send = send, .peer = peer, .buf = buf, .bytes = bytes,
                          .seq = send ? ++comm->send_seq[peer] : ++comm->recv_seq[peer]};
    w->np2p++;
    w->count += count;
    uint64_t out = 0, in = 0;
    for (int i = 0; i < w->np2p; i++)
        *(w->p2p[i].send ? &out : &in) += w->p2p[i].bytes;
    w->model_bytes = out > in ? out : in;
    return fresh ? fn_fail(fn_submit(w)) : ncclSuccess;
}

FN_EXPORT ncclResult_t pncclSend(const void *send, size_t count, ncclDataType_t t, int peer,
                                 ncclComm_t comm, cudaStream_t stream)
{
    return fn_p2p_add("ncclSend", 1, (void *)send, count, t, peer, comm, stream);
}
FN_ALIAS(ncclSend)

FN_EXPORT ncclResult_t pncclRecv(void *recv, size_t count, ncclDataType_t t, int peer,
                                 ncclComm_t comm, cudaStream_t stream)
{
    return fn_p2p_add("ncclRecv", 0, recv, count, t, peer, comm, stream);
}
FN_ALIAS(ncclRecv)

/* ---- PreMulSum ------------------------------------------------------------------------- */

/* The scalar is read when the operator is made, device-resident or not: the simulated
 * device's memory is the host's. */
FN_EXPORT ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t t,
                                                 ncclScalarResidence_t residence, ncclComm_t comm)
{
    (void)residence;
    ncclResult_t r = fn_check_common("ncclRedOpCreatePreMulSum", 1, t, comm);
    if (r != ncclSuccess)
        return r;
    if (!op || !scalar)
        return fn_error(ncclInvalidArgument, "ncclRedOpCreatePreMulSum: op or scalar is NULL");
    double s = fn_load(scalar, 0, t);
    pthread_mutex_lock(&fn_premul_lock);
    int k = 0;
    while (k < 256 && fn_premuls[k].used)
        k++;
    if (k < 256) {
        memcpy(&fn_premuls[k].scalar_bits, &s, sizeof s);
        fn_premuls[k].type = t;
        fn_premuls[k].used = 1;
    }
    pthread_mutex_unlock(&fn_premul_lock);
    if (k == 256)
        return fn_error(ncclInvalidUsage, "ncclRedOpCreatePreMulSum: 256 operators exist");
    *op = (ncclRedOp_t)((int)ncclNumOps + k);
    return ncclSuccess;
}
FN_ALIAS(ncclRedOpCreatePreMulSum)

FN_EXPORT ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm)
{
    ncclResult_t r = fn_comm_check(comm);
    int k = (int)op - (int)ncclNumOps;
    if (r != ncclSuccess)
        return r;
    pthread_mutex_lock(&fn_premul_lock);
    int ok = k >= 0 && k < 256 && fn_premuls[k].used;
    if (ok)
        fn_premuls[k].used = 0;
    pthread_mutex_unlock(&fn_premul_lock);
    return ok ? ncclSuccess
              : fn_error(ncclInvalidArgument, "ncclRedOpDestroy: %d is not a created operator",
                         (int)op);
}
FN_ALIAS(ncclRedOpDestroy)
