/* Init, environment, fault injection, contexts, errors and cuGetProcAddress. */
#define _GNU_SOURCE
#include "fc.h"
#include "fc_procs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

fc_globals fc_g;
fc_device fc_devs[FC_MAX_DEVICES];

/* ---- helpers ------------------------------------------------------------------------- */

int64_t fc_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A sleep overshoots by the thread's timer slack (50 us) plus the timer's wake-up latency, and
 * costs that even when its deadline has passed (~70 us a call measured on these virtual
 * machines): far more than the microsecond operations the simulation times, and it added up
 * over a stream of short kernels (33 memsets of 1.5 us took 1.8 ms of host waiting). So sleep
 * only to within FC_SPIN_NS of the deadline and spin the rest. */
#define FC_SPIN_NS 120000

void fc_sleep_until(int64_t ns)
{
    int64_t wake = ns - FC_SPIN_NS;
    if (wake > fc_now_ns()) {
        struct timespec ts = {.tv_sec = wake / 1000000000, .tv_nsec = wake % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
    }
    while (fc_now_ns() < ns) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

void fc_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fakecuda libcuda.so.1: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

CUresult fc_unsupported(const char *symbol)
{
    if (getenv("FAKECUDA_TRACE_UNSUPPORTED"))
        fprintf(stderr, "fakecuda libcuda.so.1: %s is not simulated (CUDA_ERROR_NOT_SUPPORTED)\n",
                symbol);
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- fault injection: FAKECUDA_FAIL="name:N:code,..." -------------------------------- */

typedef struct {
    char name[96];
    unsigned long nth;
    CUresult code;
    _Atomic unsigned long calls;
} fc_fault;

static fc_fault fc_faults[32];
static int fc_nfaults;

static void fc_faults_parse(const char *spec)
{
    char *copy = strdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char name[96];
        unsigned long nth;
        int code;
        if (sscanf(tok, "%95[^:]:%lu:%d", name, &nth, &code) != 3 || nth == 0)
            fc_fatal("FAKECUDA_FAIL: expected name:N:code (N >= 1), found \"%s\"", tok);
        if (fc_nfaults == (int)(sizeof fc_faults / sizeof fc_faults[0]))
            fc_fatal("FAKECUDA_FAIL: more than %d entries", fc_nfaults);
        fc_fault *f = &fc_faults[fc_nfaults++];
        snprintf(f->name, sizeof f->name, "%s", name);
        f->nth = nth;
        f->code = (CUresult)code;
    }
    free(copy);
    fc_g.have_faults = fc_nfaults > 0;
}

/* Whether the spec name matches the called symbol: exactly, or as its base name (the symbol
 * without a _v<N>, _ptds or _ptsz suffix). */
static int fc_fault_matches(const char *spec, const char *symbol)
{
    size_t n = strlen(spec);
    if (strncmp(spec, symbol, n) != 0)
        return 0;
    const char *rest = symbol + n;
    if (*rest == 0)
        return 1;
    if (rest[0] == '_' && rest[1] == 'v' && rest[2] >= '0' && rest[2] <= '9') {
        rest += 2;
        while (*rest >= '0' && *rest <= '9')
            rest++;
    }
    return *rest == 0 || strcmp(rest, "_ptds") == 0 || strcmp(rest, "_ptsz") == 0;
}

CUresult fc_fault_check(const char *symbol)
{
    for (int i = 0; i < fc_nfaults; i++) {
        fc_fault *f = &fc_faults[i];
        if (fc_fault_matches(f->name, symbol) && atomic_fetch_add(&f->calls, 1) + 1 == f->nth)
            return f->code;
    }
    return CUDA_SUCCESS;
}

/* ---- environment, once per process --------------------------------------------------- */

static size_t fc_parse_bytes(const char *var, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1ull << 10; end++; break;
    case 'm': case 'M': mul = 1ull << 20; end++; break;
    case 'g': case 'G': mul = 1ull << 30; end++; break;
    default: break;
    }
    if (errno || end == s || *end)
        fc_fatal("%s: expected a byte count (digits, optional K/M/G), found \"%s\"", var, s);
    return (size_t)(v * mul);
}

static pthread_once_t fc_setup_once = PTHREAD_ONCE_INIT;

static void fc_setup_env(void)
{
    const char *e;
    fc_g.instant = (e = getenv("FAKECUDA_INSTANT")) && strcmp(e, "0") != 0 && *e;
    fc_g.truth_fd = -1;
    if ((e = getenv("FAKECUDA_TRUTH")) && *e &&
        (fc_g.truth_fd = open(e, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
        fc_fatal("FAKECUDA_TRUTH: cannot open \"%s\" for appending: %s", e, strerror(errno));
    if ((e = getenv("FAKECUDA_FAIL")) && *e)
        fc_faults_parse(e);
    if ((e = getenv("FAKECUDA_KERNEL_NS")) && *e)
        fc_kernel_ns_parse(e);
    if ((e = getenv("FAKECUDA_LAUNCH_HOLD_NS")) && *e)
        fc_launch_hold_parse(e);
    if ((e = getenv("FAKECUDA_LAUNCH_NS")) && *e) {
        char *end = NULL;
        long long ns = strtoll(e, &end, 10);
        if (!end || *end || ns < 0)
            fc_fatal("FAKECUDA_LAUNCH_NS: expected nanoseconds, found \"%s\"", e);
        fc_g.launch_ns = ns;
    }
    /* NVIDIA's variable, read as its driver does: EAGER or LAZY, anything else the default. */
    fc_g.eager = (e = getenv("CUDA_MODULE_LOADING")) && strcmp(e, "EAGER") == 0;
    const fc_device_desc *descs[FC_MAX_DEVICES];
    fc_g.ndev = fc_devices_parse(getenv("FAKECUDA_DEVICES"), descs, FC_MAX_DEVICES);
    size_t limit = (size_t)-1;
    if ((e = getenv("FAKECUDA_MEM_LIMIT")) && *e)
        limit = fc_parse_bytes("FAKECUDA_MEM_LIMIT", e);
    for (int i = 0; i < fc_g.ndev; i++) {
        fc_device *d = &fc_devs[i];
        d->d = descs[i];
        d->budget = descs[i]->total_mem < limit ? descs[i]->total_mem : limit;
        pthread_mutex_init(&d->lock, NULL);
        pthread_mutex_init(&d->engine_lock, NULL);
    }
}

/* A fork() child has none of its parent's stream workers: like NVIDIA's driver, it cannot use
 * CUDA (every call reports CUDA_ERROR_NOT_INITIALIZED, cuInit included). */
static void fc_after_fork_child(void)
{
    if (fc_g.initialized) {
        fc_g.initialized = 0;
        fc_g.forked = 1;
    }
}

static void fc_setup_process(void)
{
    fc_setup_env();
    pthread_atfork(NULL, NULL, fc_after_fork_child);
}

static void fc_setup(void)
{
    pthread_once(&fc_setup_once, fc_setup_process);
}

/* ---- init, version ------------------------------------------------------------------- */

FC_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
    fc_setup();
    FC_ENTER("cuInit");
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_g.forked)
        return CUDA_ERROR_NOT_INITIALIZED;
    static pthread_once_t reported = PTHREAD_ONCE_INIT;
    pthread_once(&reported, fc_report_cudart);
    fc_g.initialized = 1;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    FC_ENTER("cuDriverGetVersion");
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
}

/* ---- errors -------------------------------------------------------------------------- */

/* The strings NVIDIA's driver returns for the codes programs meet most; other codes get the
 * first sentence of cuda.h's comment on them. */
static const struct {
    CUresult code;
    const char *text;
} fc_error_texts[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"},
    {CUDA_ERROR_FILE_NOT_FOUND, "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "peer access has not been enabled"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
     "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
     "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_NOT_PERMITTED, "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

static const fc_error_name *fc_error_find(CUresult e)
{
    for (unsigned i = 0; i < fc_error_name_count; i++)
        if (fc_error_names[i].code == e)
            return &fc_error_names[i];
    return NULL;
}

FC_EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    FC_ENTER("cuGetErrorName");
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    const fc_error_name *e = fc_error_find(error);
    *pStr = e ? e->name : NULL;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FC_EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    FC_ENTER("cuGetErrorString");
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    const fc_error_name *e = fc_error_find(error);
    *pStr = e ? e->doc : NULL;
    for (size_t i = 0; e && i < sizeof fc_error_texts / sizeof fc_error_texts[0]; i++)
        if (fc_error_texts[i].code == error)
            *pStr = fc_error_texts[i].text;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- cuGetProcAddress ---------------------------------------------------------------- */

static int fc_proc_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const fc_proc_entry *)elem)->name);
}

/* The rule of cuda_api.resolve: newest legacy variant with version <= cudaVersion; its
 * per-thread form if asked for and old enough. */
static CUresult fc_proc_resolve(const char *symbol, void **pfn, int cudaVersion,
                                cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                              CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    const fc_proc_entry *e = bsearch(symbol, fc_proc_entries, fc_proc_entry_count,
                                     sizeof *e, fc_proc_cmp);
    if (!e) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    const fc_proc_variant *chosen = NULL;
    for (unsigned i = 0; i < e->count; i++)
        if (fc_proc_variants[e->first + i].version <= cudaVersion)
            chosen = &fc_proc_variants[e->first + i];
    if (!chosen) {
        if (status)
            *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_ERROR_NOT_FOUND;
    }
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    if (per_thread && chosen->pt_fn && chosen->pt_version <= cudaVersion)
        *pfn = chosen->pt_fn;
    else
        *pfn = chosen->fn;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                            cuuint64_t flags)
{
    fc_setup();
    FC_ENTER("cuGetProcAddress");
    return fc_proc_resolve(symbol, pfn, cudaVersion, flags, NULL);
}

FC_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *symbolStatus)
{
    fc_setup();
    FC_ENTER("cuGetProcAddress_v2");
    return fc_proc_resolve(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* ---- contexts ------------------------------------------------------------------------ */

#define FC_CTX_STACK 32
static __thread fc_ctx *fc_ctx_stack[FC_CTX_STACK];
static __thread int fc_ctx_depth;

fc_ctx *fc_ctx_current(void)
{
    return fc_ctx_depth ? fc_ctx_stack[fc_ctx_depth - 1] : NULL;
}

CUresult fc_ctx_get(fc_ctx **out)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_ctx *c = fc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!atomic_load(&c->alive))
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *out = c;
    return CUDA_SUCCESS;
}

fc_device *fc_ctx_dev(fc_ctx *c)
{
    return &fc_devs[c->dev];
}

CUresult fc_check_device(CUdevice dev)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    return dev >= 0 && dev < fc_g.ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static fc_ctx *fc_ctx_new(int dev, unsigned flags, int primary)
{
    fc_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    static _Atomic unsigned long long ids = 1;
    c->magic = FC_CTX_MAGIC;
    c->id = atomic_fetch_add(&ids, 1);
    c->dev = dev;
    c->flags = flags;
    c->is_primary = primary;
    atomic_store(&c->alive, 1);
    pthread_mutex_init(&c->lock, NULL);
    pthread_key_create(&c->ptds_key, fc_stream_retire);
    pthread_mutex_init(&c->limits_lock, NULL);
    /* NVIDIA's defaults. */
    c->limits[CU_LIMIT_STACK_SIZE] = 1024;
    c->limits[CU_LIMIT_PRINTF_FIFO_SIZE] = 1 << 20;
    c->limits[CU_LIMIT_MALLOC_HEAP_SIZE] = 8 << 20;
    c->limits[CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH] = 2;
    c->limits[CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT] = 2048;
    c->limits[CU_LIMIT_MAX_L2_FETCH_GRANULARITY] = 64;
    c->legacy = fc_stream_new(c, 0, 0, 1);
    return c;
}

int fc_ctx_valid(CUcontext c)
{
    return c && c->magic == FC_CTX_MAGIC;
}

static void fc_ctx_set_top(fc_ctx *c)
{
    if (fc_ctx_depth == 0) {
        if (c)
            fc_ctx_stack[fc_ctx_depth++] = c;
    } else if (c) {
        fc_ctx_stack[fc_ctx_depth - 1] = c;
    } else {
        fc_ctx_depth--;
    }
}

static CUresult fc_ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_ctx_depth == FC_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_ctx *c = fc_ctx_new(dev, flags, 0);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_ctx_stack[fc_ctx_depth++] = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate");
    return fc_ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate_v2");
    return fc_ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                          int numParams, unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate_v3");
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_ctx_create(pctx, flags, dev);
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                          unsigned int flags, CUdevice dev)
{
    FC_ENTER_INIT("cuCtxCreate_v4");
    if (ctxCreateParams && (ctxCreateParams->numExecAffinityParams || ctxCreateParams->cigParams))
        return CUDA_ERROR_NOT_SUPPORTED;
    return fc_ctx_create(pctx, flags, dev);
}

static CUresult fc_ctx_destroy(CUcontext ctx)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_ctx_valid(ctx) || ctx->is_primary || !atomic_load(&ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx_sync(ctx);
    fc_cls_destroy(ctx);
    atomic_store(&ctx->alive, 0);
    /* Its streams go with it (their worker threads end). */
    for (;;) {
        pthread_mutex_lock(&ctx->lock);
        fc_stream *s = ctx->streams;
        pthread_mutex_unlock(&ctx->lock);
        if (!s)
            break;
        fc_stream_retire(s);
    }
    ctx->legacy = NULL;
    /* Destroying a context pops it from this thread's stack if current; the object stays
     * allocated so stale handles are detected, not dereferenced after free. */
    for (int i = fc_ctx_depth - 1; i >= 0; i--)
        if (fc_ctx_stack[i] == ctx) {
            memmove(&fc_ctx_stack[i], &fc_ctx_stack[i + 1],
                    (size_t)(fc_ctx_depth - i - 1) * sizeof(fc_ctx *));
            fc_ctx_depth--;
        }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    FC_ENTER("cuCtxDestroy");
    return fc_ctx_destroy(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    FC_ENTER("cuCtxDestroy_v2");
    return fc_ctx_destroy(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    FC_ENTER_INIT("cuCtxSetCurrent");
    if (ctx && (!fc_ctx_valid(ctx) || !atomic_load(&ctx->alive)))
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx_set_top(ctx);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    FC_ENTER_INIT("cuCtxGetCurrent");
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fc_ctx_current();
    return CUDA_SUCCESS;
}

static CUresult fc_ctx_push(CUcontext ctx)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_ctx_valid(ctx) || !atomic_load(&ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (fc_ctx_depth == FC_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fc_ctx_stack[fc_ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

static CUresult fc_ctx_pop(CUcontext *pctx)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (fc_ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    fc_ctx *c = fc_ctx_stack[--fc_ctx_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    FC_ENTER("cuCtxPushCurrent");
    return fc_ctx_push(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    FC_ENTER("cuCtxPushCurrent_v2");
    return fc_ctx_push(ctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    FC_ENTER("cuCtxPopCurrent");
    return fc_ctx_pop(pctx);
}

FC_EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FC_ENTER("cuCtxPopCurrent_v2");
    return fc_ctx_pop(pctx);
}

static CUresult fc_ctx_or_current(CUcontext ctx, fc_ctx **out)
{
    if (!ctx)
        return fc_ctx_get(out);
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!fc_ctx_valid(ctx) || !atomic_load(&ctx->alive))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = ctx;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    FC_ENTER("cuCtxSynchronize");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r == CUDA_SUCCESS && (r = fc_capture_unsafe()) == CUDA_SUCCESS)
        fc_ctx_sync(c);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
    FC_ENTER("cuCtxSynchronize_v2");
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r == CUDA_SUCCESS && (r = fc_capture_unsafe()) == CUDA_SUCCESS)
        fc_ctx_sync(c);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    FC_ENTER("cuCtxGetDevice");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    FC_ENTER("cuCtxGetDevice_v2");
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    FC_ENTER("cuCtxGetId");
    return fc_ctx_id(ctx, ctxId);
}

CUresult fc_ctx_id(CUcontext ctx, unsigned long long *ctxId)
{
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    *ctxId = c->id;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
    FC_ENTER("cuCtxGetFlags");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    FC_ENTER("cuCtxGetApiVersion");
    fc_ctx *c;
    CUresult r = fc_ctx_or_current(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 3020;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    FC_ENTER("cuCtxGetStreamPriorityRange");
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    return CUDA_SUCCESS;
}

static CUresult fc_limit(CUlimit limit, size_t *value, int set)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if ((unsigned)limit >= CU_LIMIT_MAX || (!set && !value))
        return CUDA_ERROR_INVALID_VALUE;
    if (limit == CU_LIMIT_PERSISTING_L2_CACHE_SIZE && set) {
        int max;
        fc_device_attribute(&max, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE,
                            fc_ctx_dev(c)->d);
        if (*value > (size_t)max)
            return CUDA_ERROR_INVALID_VALUE;
    }
    /* An ordinary context is not CIG-enabled: cuBLASLt queries this, and on any answer but
     * success and 0 skips its device set-up while cublasCreate still succeeds. Query-only. */
    if (limit == CU_LIMIT_CIG_ENABLED && !set) {
        *value = 0;
        return CUDA_SUCCESS;
    }
    if (limit == CU_LIMIT_SHMEM_SIZE || limit == CU_LIMIT_CIG_ENABLED ||
        limit == CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED)
        return CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_mutex_lock(&c->limits_lock);
    if (set)
        c->limits[limit] = *value;
    else
        *value = c->limits[limit];
    pthread_mutex_unlock(&c->limits_lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
    FC_ENTER("cuCtxSetLimit");
    return fc_limit(limit, &value, 1);
}

FC_EXPORT CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    FC_ENTER("cuCtxGetLimit");
    return fc_limit(limit, pvalue, 0);
}

/* ---- profiler control (cudaProfiler.h): accepted, there is no profiler to start --------- */

FC_EXPORT CUresult CUDAAPI cuProfilerStart(void)
{
    FC_ENTER_INIT("cuProfilerStart");
    return fc_ctx_current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

FC_EXPORT CUresult CUDAAPI cuProfilerStop(void)
{
    FC_ENTER_INIT("cuProfilerStop");
    return fc_ctx_current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* ---- primary contexts ---------------------------------------------------------------- */

fc_ctx *fc_primary_handle(CUdevice dev)
{
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (!d->primary)
        d->primary = fc_ctx_new(dev, d->primary_flags, 1);
    else
        atomic_store(&d->primary->alive, 1);
    fc_ctx *c = d->primary;
    pthread_mutex_unlock(&d->lock);
    return c;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxRetain");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (!d->primary)
        d->primary = fc_ctx_new(dev, d->primary_flags, 1);
    if (!d->primary) {
        pthread_mutex_unlock(&d->lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    atomic_store(&d->primary->alive, 1);
    d->primary->flags = d->primary_flags;
    d->primary_refs++;
    *pctx = d->primary;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

static CUresult fc_primary_release(CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (d->primary_refs == 0) {
        pthread_mutex_unlock(&d->lock);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    fc_ctx *gone = NULL;
    if (--d->primary_refs == 0) {
        fc_ctx_sync(d->primary);
        /* Inactive, but the same handle comes back on the next retain, as on NVIDIA's. */
        atomic_store(&d->primary->alive, 0);
        gone = d->primary;
    }
    pthread_mutex_unlock(&d->lock);
    if (gone) /* unlocked: the destructors may call the driver */
        fc_cls_destroy(gone);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxRelease");
    return fc_primary_release(dev);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxRelease_v2");
    return fc_primary_release(dev);
}

static CUresult fc_primary_set_flags(CUdevice dev, unsigned flags)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (flags & ~(unsigned)(CU_CTX_SCHED_MASK | CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_COREDUMP_ENABLE |
                            CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS | CU_CTX_MAP_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    d->primary_flags = flags;
    if (d->primary)
        d->primary->flags = flags;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    FC_ENTER("cuDevicePrimaryCtxSetFlags");
    return fc_primary_set_flags(dev, flags);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    FC_ENTER("cuDevicePrimaryCtxSetFlags_v2");
    return fc_primary_set_flags(dev, flags);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    FC_ENTER("cuDevicePrimaryCtxGetState");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    *flags = d->primary_flags;
    *active = d->primary_refs > 0;
    pthread_mutex_unlock(&d->lock);
    return CUDA_SUCCESS;
}

static CUresult fc_primary_reset(CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    fc_device *d = &fc_devs[dev];
    pthread_mutex_lock(&d->lock);
    if (d->primary) {
        fc_ctx_sync(d->primary);
        atomic_store(&d->primary->alive, 0);
    }
    d->primary_refs = 0;
    d->primary_flags = 0;
    fc_ctx *gone = d->primary;
    pthread_mutex_unlock(&d->lock);
    if (gone)
        fc_cls_destroy(gone);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxReset");
    return fc_primary_reset(dev);
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    FC_ENTER("cuDevicePrimaryCtxReset_v2");
    return fc_primary_reset(dev);
}
