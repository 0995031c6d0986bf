/* The tick source and its conversion to CLOCK_MONOTONIC ns (see ct_clock.h). */
#include "ct_clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int ct_use_tsc;

/* Two calibration points (ticks, ns): `cal` taken at the current flush, `base` about a second
 * earlier; their slope converts, extrapolating from `cal` (records are at most a flush old).
 * Over a second, a 20 ns reading jitter makes the rate exact to a few 1e-8. */
static uint64_t ct_cal_k, ct_cal_n, ct_base_k, ct_base_n;
static double ct_ns_per_tick = 1.0;

uint64_t ct_calibrate(void)
{
    uint64_t n0 = ct_now(), k = ct_ticks(), n1 = ct_now();
    ct_cal_k = k;
    ct_cal_n = n0 + (n1 - n0) / 2;
    if (ct_cal_k > ct_base_k && ct_cal_n - ct_base_n > 2000000)
        ct_ns_per_tick = (double)(ct_cal_n - ct_base_n) / (double)(ct_cal_k - ct_base_k);
    if (ct_cal_n - ct_base_n > 1000000000) {
        ct_base_k = ct_cal_k;
        ct_base_n = ct_cal_n;
    }
    return ct_cal_n;
}

uint64_t ct_ticks_to_ns(uint64_t k)
{
    if (!ct_use_tsc)
        return k;
    return (uint64_t)((int64_t)ct_cal_n + (int64_t)(((double)(int64_t)(k - ct_cal_k)) * ct_ns_per_tick));
}

/* Uses the TSC only where the kernel keeps CLOCK_MONOTONIC with it; measures its rate over
 * 2 ms (refined at every flush). */
void ct_time_init(void)
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
    ct_use_tsc = !strcmp(cs, "tsc\n");
#endif
    ct_base_k = ct_ticks();
    ct_base_n = ct_now();
    if (ct_use_tsc) {
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
    }
    ct_calibrate();
    ct_base_k = ct_cal_k, ct_base_n = ct_cal_n; /* keep the 2 ms rate until a longer one */
}

uint64_t ct_ns_to_ticks(uint64_t ns)
{
    return (uint64_t)((double)ns / ct_ns_per_tick);
}
