/* Configuration, errors, versions and unique ids (fn.h). */
#define _GNU_SOURCE
#include "fn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

fn_config fn_g = {.truth_fd = -1};
static pthread_once_t fn_once = PTHREAD_ONCE_INIT;

void fn_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fakenccl: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

/* A decimal number with an optional K, M, G or T suffix (powers of `unit`). */
static double fn_env_number(const char *name, double def, double unit)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    const char *sfx = "KMGT";
    const char *p = *end ? strchr(sfx, *end) : NULL;
    if (p && *end) {
        for (int i = 0; i <= p - sfx; i++)
            x *= unit;
        end++;
    }
    if (errno || end == v || *end || x < 0)
        fn_fatal("%s: expected a non-negative number with an optional K, M, G or T suffix, "
                 "found \"%s\"", name, v);
    return x;
}

static void fn_init_once(void)
{
    fn_g.bw = fn_env_number("FAKENCCL_BW", 150e9, 1000);
    if (fn_g.bw <= 0)
        fn_fatal("FAKENCCL_BW: expected a positive bandwidth in bytes/s, found \"%s\"",
                 getenv("FAKENCCL_BW"));
    fn_g.lat_ns = (int64_t)fn_env_number("FAKENCCL_LAT_NS", 8000, 1000);
    fn_g.skew_ns = (int64_t)fn_env_number("FAKENCCL_SKEW_NS", 3000, 1000);
    fn_g.seed = (uint64_t)fn_env_number("FAKENCCL_SEED", 1, 1000);
    fn_g.stage = (uint64_t)fn_env_number("FAKENCCL_STAGE_BYTES", 1024.0 * 1024 * 1024, 1024);
    fn_g.version = (int)fn_env_number("FAKENCCL_VERSION", 23007, 1000);
    const char *u = getenv("FAKENCCL_TRACE_UNSUPPORTED");
    fn_g.trace_unsupported = u && *u && strcmp(u, "0") != 0;
    const char *t = getenv("FAKENCCL_TRUTH");
    if (t && *t) {
        fn_g.truth_fd = open(t, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fn_g.truth_fd < 0)
            fn_fatal("FAKENCCL_TRUTH: cannot open \"%s\" to append: %s", t, strerror(errno));
    }
}

void fn_init(void)
{
    pthread_once(&fn_once, fn_init_once);
}

int64_t fn_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t fn_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t fn_id_hash(const ncclUniqueId *id)
{
    uint64_t h = 5381;
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++)
        h = ((h << 5) + h) ^ (uint64_t)(signed char)id->internal[i];
    return h;
}

size_t fn_type_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

static __thread char fn_last_error[512];

ncclResult_t fn_error(ncclResult_t r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fn_last_error, sizeof fn_last_error, fmt, ap);
    va_end(ap);
    return r;
}

/* Each unsupported function is named once per process. */
ncclResult_t fn_unsupported(const char *name)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    static const char *said[128];
    static int nsaid;
    fn_init();
    if (fn_g.trace_unsupported) {
        pthread_mutex_lock(&m);
        int seen = 0;
        for (int i = 0; i < nsaid && !seen; i++)
            seen = strcmp(said[i], name) == 0;
        if (!seen && nsaid < (int)(sizeof said / sizeof said[0]))
            said[nsaid++] = name;
        pthread_mutex_unlock(&m);
        if (!seen)
            fprintf(stderr, "fakenccl: %s is not simulated: ncclInvalidUsage\n", name);
    }
    return fn_error(ncclInvalidUsage, "%s is not simulated", name);
}

FN_EXPORT ncclResult_t pncclGetVersion(int *version)
{
    fn_init();
    if (!version)
        return fn_error(ncclInvalidArgument, "ncclGetVersion: version is NULL");
    *version = fn_g.version;
    return ncclSuccess;
}
FN_ALIAS(ncclGetVersion)

/* NVIDIA's wording (src/misc/utils.cc). */
FN_EXPORT const char *pncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}
FN_ALIAS(ncclGetErrorString)

FN_EXPORT const char *pncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return fn_last_error;
}
FN_ALIAS(ncclGetLastError)

/* The id names the shared segment the ranks meet in: "fakenccl-PID-RANDOM". It reads no
 * configuration: a launcher that makes the id and then forks its ranks leaves them to read
 * FAKENCCL_* as they find it. */
FN_EXPORT ncclResult_t pncclGetUniqueId(ncclUniqueId *id)
{
    if (!id)
        return fn_error(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
    unsigned long long r[2];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return fn_error(ncclSystemError, "ncclGetUniqueId: getrandom failed: %s", strerror(errno));
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "fakenccl-%d-%016llx%016llx", (int)getpid(), r[0],
             r[1]);
    return ncclSuccess;
}
FN_ALIAS(ncclGetUniqueId)

FN_EXPORT ncclResult_t pncclMemAlloc(void **ptr, size_t size)
{
    CUdeviceptr p;
    if (!ptr)
        return fn_error(ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
    if (cuMemAlloc(&p, size ? size : 1) != CUDA_SUCCESS)
        return fn_error(ncclUnhandledCudaError, "ncclMemAlloc: cuMemAlloc of %zu bytes failed",
                        size);
    *ptr = (void *)(uintptr_t)p;
    return ncclSuccess;
}
FN_ALIAS(ncclMemAlloc)

FN_EXPORT ncclResult_t pncclMemFree(void *ptr)
{
    if (ptr && cuMemFree((CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
        return fn_error(ncclUnhandledCudaError, "ncclMemFree: cuMemFree(%p) failed", ptr);
    return ncclSuccess;
}
FN_ALIAS(ncclMemFree)
