/* What the workload programs share: error checks that name the failing call and stop the
 * program, a monotonic clock, and flag parsing. Usable from C (gcc) and C++ (nvcc's host
 * compiler). Include cuda_runtime_api.h or cuda.h first to get WL_RT / WL_CU.
 *
 * Nothing here knows about tracing or about the simulation: these are ordinary CUDA programs. */
#ifndef WL_COMMON_H
#define WL_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Prints "PROG: FILE:LINE: message" to stderr and exits 1. */
static inline void wl_die_at(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static inline void wl_die_at(const char *file, int line, const char *fmt, ...)
{
    extern char *program_invocation_short_name;
    va_list ap;
    fprintf(stderr, "%s: %s:%d: ", program_invocation_short_name, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}
#define WL_DIE(...) wl_die_at(__FILE__, __LINE__, __VA_ARGS__)

#ifdef __CUDA_RUNTIME_API_H__
/* Runtime API call that must succeed. */
#define WL_RT(call)                                                                     \
    do {                                                                                \
        cudaError_t wl_e_ = (call);                                                     \
        if (wl_e_ != cudaSuccess)                                                       \
            WL_DIE("%s: expected cudaSuccess, got %s (%d): %s", #call,                  \
                   cudaGetErrorName(wl_e_), (int)wl_e_, cudaGetErrorString(wl_e_));     \
    } while (0)
#endif

#ifdef __cuda_cuda_h__
static inline const char *wl_cu_name(CUresult r)
{
    const char *s = NULL;
    return cuGetErrorName(r, &s) == CUDA_SUCCESS && s ? s : "unknown CUresult";
}
/* Driver API call that must succeed. */
#define WL_CU(call)                                                                     \
    do {                                                                                \
        CUresult wl_r_ = (call);                                                        \
        if (wl_r_ != CUDA_SUCCESS)                                                      \
            WL_DIE("%s: expected CUDA_SUCCESS, got %s (%d)", #call, wl_cu_name(wl_r_),  \
                   (int)wl_r_);                                                         \
    } while (0)
#endif

static inline double wl_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* CLOCK_MONOTONIC in ns: the trace's clock, for programs that time their own phases. */
static inline unsigned long long wl_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* "PROG: phase NAME START END" on stdout: a phase that began at t0 (wl_now_ns) ends now. */
static inline void wl_phase(const char *prog, const char *name, unsigned long long t0)
{
    printf("%s: phase %s %llu %llu\n", prog, name, t0, wl_now_ns());
}

static inline void wl_sleep_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec t;
    t.tv_sec = (time_t)(ms / 1e3);
    t.tv_nsec = (long)((ms - (double)t.tv_sec * 1e3) * 1e6);
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* A non-negative integer flag value ("--iters 20"); dies naming the flag otherwise. */
static inline long long wl_parse_count(const char *flag, const char *s)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end || v < 0)
        WL_DIE("%s: expected a non-negative integer, found \"%s\"", flag, s);
    return v;
}

/* One of `choices` (NULL-terminated); returns its index. */
static inline int wl_parse_choice(const char *flag, const char *s, const char *const *choices)
{
    char want[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (strcmp(s, choices[i]) == 0)
            return i;
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "|" : "",
                 choices[i]);
    }
    WL_DIE("%s: expected %s, found \"%s\"", flag, want, s);
}

#endif
