/* The floor baseline: the least any tracer that records a start and an end time can do. Each
 * call reads the time-stamp counter before and after the real call and stores one 24-byte record
 * (start, end, function, result) in a thread-local array, overwritten when it wraps: no
 * clock conversion, no output, no correlation, no detail. */
#include <x86intrin.h>

#include "ib_wrappers.h"

typedef struct {
    uint64_t t0, t1;
    uint32_t fn;
    int32_t result;
} ib_rec;
_Static_assert(sizeof(ib_rec) == 24, "the floor stores 24-byte records");

#define IB_RECS 4096 /* a power of two */
/* Not static: a store to an array nothing in this file reads would be optimized away. */
__thread ib_rec ib_buf[IB_RECS] __attribute__((tls_model("initial-exec")));
__thread unsigned ib_next __attribute__((tls_model("initial-exec")));

static inline uint64_t ib_before(int fn, uint64_t arg)
{
    (void)fn, (void)arg;
    return __rdtsc();
}

static inline void ib_after(int fn, uint64_t t0, uint64_t arg, int result)
{
    (void)arg;
    uint64_t t1 = __rdtsc();
    ib_rec *r = &ib_buf[ib_next++ & (IB_RECS - 1)];
    r->t0 = t0;
    r->t1 = t1;
    r->fn = (uint32_t)fn;
    r->result = result;
}

/* The benchmark checks that the floor stored a record for every call (a baseline that recorded
 * nothing would look cheapest): at exit, the count of the thread that made the calls (the main
 * thread: bench_calls has no other) is appended to the file IB_RECORDS_FILE names (appended:
 * the process that measures bench_calls' resources is preloaded too). */
__attribute__((destructor)) static void ib_report_records(void)
{
    const char *path = getenv("IB_RECORDS_FILE");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%u\n", ib_next);
        fclose(f);
    }
}
