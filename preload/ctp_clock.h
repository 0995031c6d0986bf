/* Time stamps: the hot path's ticks and the writer's conversion of them to CLOCK_MONOTONIC ns.
 *
 * Contract: ctp_time_init runs once when a trace starts, before any tick is taken; ctp_calibrate
 * and ctp_ticks_to_ns are the writer's (one flush at a time), ctp_now and ctp_ticks anyone's. */
#ifndef CTP_CLOCK_H
#define CTP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t ctp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Hot-path time stamps: the TSC where the kernel itself keeps time with it (invariant TSC,
 * clocksource "tsc"), about half the cost of clock_gettime; else CLOCK_MONOTONIC ns. Ring
 * records carry ticks; the writer converts them to CLOCK_MONOTONIC ns (ctp_ticks_to_ns) against
 * calibration pairs it takes at every flush. */
extern int ctp_use_tsc;
static inline uint64_t ctp_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(ctp_use_tsc, 1))
        return __builtin_ia32_rdtsc();
#endif
    return ctp_now();
}

/* Chooses the tick source and measures its rate (2 ms). */
void ctp_time_init(void);
/* A new calibration point (the writer, at every flush); returns its CLOCK_MONOTONIC ns. */
uint64_t ctp_calibrate(void);
uint64_t ctp_ticks_to_ns(uint64_t ticks);
/* A duration in ticks, at the rate measured so far. */
uint64_t ctp_ns_to_ticks(uint64_t ns);

#endif
