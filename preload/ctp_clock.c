/* The tick source and its conversion to CLOCK_MONOTONIC ns (see ctp_clock.h). */
#include "ctp_clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int ctp_use_tsc;

/* Two calibration points (ticks, ns): `cal` taken at the current flush, `base` about a second
 * earlier; their slope converts, extrapolating from `cal` (records are at most a flush old).
 * Over a second, a 20 ns reading jitter makes the rate exact to a few 1e-8. */
static uint64_t ctp_cal_k, ctp_cal_n, ctp_base_k, ctp_base_n;
static double ctp_ns_per_tick = 1.0;

uint64_t ctp_calibrate(void)
{
    uint64_t n0 = ctp_now(), k = ctp_ticks(), n1 = ctp_now();
    ctp_cal_k = k;
    ctp_cal_n = n0 + (n1 - n0) / 2;
    if (ctp_cal_k > ctp_base_k && ctp_cal_n - ctp_base_n > 2000000)
        ctp_ns_per_tick = (double)(ctp_cal_n - ctp_base_n) / (double)(ctp_cal_k - ctp_base_k);
    if (ctp_cal_n - ctp_base_n > 1000000000) {
        ctp_base_k = ctp_cal_k;
        ctp_base_n = ctp_cal_n;
    }
    return ctp_cal_n;
}

uint64_t ctp_ticks_to_ns(uint64_t k)
{
    if (!ctp_use_tsc)
        return k;
    return (uint64_t)((int64_t)ctp_cal_n + (int64_t)(((double)(int64_t)(k - ctp_cal_k)) * ctp_ns_per_tick));
}

/* Uses the TSC only where the kernel keeps CLOCK_MONOTONIC with it; measures its rate over
 * 2 ms (refined at every flush). */
void ctp_time_init(void)
{
#if defined(__x86_64__)
    char cs[32] = "";
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, cs, sizeof cs - 1);
        close(fd);
        cs[n > 0 ? n : 0] = 0;
    }
    ctp_use_tsc = !strcmp(cs, "tsc\n");
#endif
    ctp_base_k = ctp_ticks();
    ctp_base_n = ctp_now();
    if (ctp_use_tsc) {
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
    }
    ctp_calibrate();
    ctp_base_k = ctp_cal_k, ctp_base_n = ctp_cal_n; /* keep the 2 ms rate until a longer one */
}

uint64_t ctp_ns_to_ticks(uint64_t ns)
{
    return (uint64_t)((double)ns / ctp_ns_per_tick);
}
