/* Init, environment, fault injection, errors, cuGetProcAddress and profiler control (contexts
 * are in fc_ctx.c). */
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

/* ---- fault injection: FAKECUDA_FAIL="name:N:code[:ms],..." --------------------------- */

typedef struct {
    char name[96];
    unsigned long nth;
    CUresult code;
    unsigned ms; /* the call first waits this long, holding whatever its caller holds */
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
        int code, end = 0;
        unsigned ms = 0;
        int got = sscanf(tok, "%95[^:]:%lu:%d%n:%u%n", name, &nth, &code, &end, &ms, &end);
        if (got < 3 || nth == 0 || tok[end] != 0)
            fc_fatal("FAKECUDA_FAIL: expected name:N:code[:ms] (N >= 1), found \"%s\"", tok);
        if (fc_nfaults == (int)(sizeof fc_faults / sizeof fc_faults[0]))
            fc_fatal("FAKECUDA_FAIL: more than %d entries", fc_nfaults);
        fc_fault *f = &fc_faults[fc_nfaults++];
        snprintf(f->name, sizeof f->name, "%s", name);
        f->nth = nth;
        f->code = (CUresult)code;
        f->ms = ms;
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
        if (fc_fault_matches(f->name, symbol) && atomic_fetch_add(&f->calls, 1) + 1 == f->nth) {
            if (f->ms)
                nanosleep(&(struct timespec){f->ms / 1000, (long)(f->ms % 1000) * 1000000L}, NULL);
            if (f->code != CUDA_SUCCESS)
                return f->code;
        }
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
