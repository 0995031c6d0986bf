/* The tick source and its conversion to CLOCK_MONOTONIC ns (see ctp_clock.h). */
#include "ctp_clock.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "ctp_fds.h"

int ctp_use_tsc;

/* Two calibration points (ticks, ns) measure the rate: `cal` taken at the current flush, `base`
 * about a second earlier. Over a second, a 20 ns reading jitter makes the rate exact to a few
 * 1e-8. */
static uint64_t ctp_cal_k, ctp_cal_n, ctp_base_k, ctp_base_n;
static double ctp_ns_per_tick = 1.0;

/* The conversion joins the last calibration points by straight lines: continuous and
 * increasing, so a thread's records convert in order whichever flush converts each (the flush
 * takes its point after the rings' heads, so what it drains lies before it). Extrapolating from
 * the newest point instead made the conversion jump at each point by the reading's error
 * (hundreds of ns on a loaded machine): a push converted in one flush and its pop in the next
 * came out in reverse order. Ticks past the newest point (taken during a drain) or before the
 * oldest kept extrapolate at the measured rate. */
#define CTP_POINTS 8
static struct {
    uint64_t k, n;
} ctp_pt[CTP_POINTS];
static unsigned ctp_npt, ctp_newest; /* points kept; the newest one's index */

uint64_t ctp_calibrate(void)
{
    /* the reading with the narrowest window of three: a preempted one is off by half of it */
    uint64_t k = 0, n = 0, best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t n0 = ctp_now(), k1 = ctp_ticks(), n1 = ctp_now();
        if (n1 - n0 < best) {
            best = n1 - n0;
            k = k1;
            n = n0 + (n1 - n0) / 2;
        }
    }
    ctp_cal_k = k;
    ctp_cal_n = n;
    if (ctp_cal_k > ctp_base_k && ctp_cal_n - ctp_base_n > 2000000)
        ctp_ns_per_tick = (double)(ctp_cal_n - ctp_base_n) / (double)(ctp_cal_k - ctp_base_k);
    if (ctp_cal_n - ctp_base_n > 1000000000) {
        ctp_base_k = ctp_cal_k;
        ctp_base_n = ctp_cal_n;
    }
    if (!ctp_npt || (k > ctp_pt[ctp_newest].k && n > ctp_pt[ctp_newest].n)) {
        ctp_newest = ctp_npt ? (ctp_newest + 1) % CTP_POINTS : 0;
        ctp_npt += ctp_npt < CTP_POINTS;
        ctp_pt[ctp_newest].k = k;
        ctp_pt[ctp_newest].n = n;
    }
    return ctp_cal_n;
}

static uint64_t ctp_extrapolate(unsigned i, uint64_t k)
{
    return (uint64_t)((int64_t)ctp_pt[i].n + (int64_t)((double)(int64_t)(k - ctp_pt[i].k) * ctp_ns_per_tick));
}

uint64_t ctp_ticks_to_ns(uint64_t k)
{
    if (!ctp_use_tsc)
        return k;
    unsigned i = ctp_newest, next = ctp_newest;
    if ((int64_t)(k - ctp_pt[i].k) >= 0)
        return ctp_extrapolate(i, k);
    for (unsigned left = ctp_npt; left > 1; left--) {
        next = i;
        i = (i + CTP_POINTS - 1) % CTP_POINTS;
        if ((int64_t)(k - ctp_pt[i].k) >= 0) {
            double f = (double)(k - ctp_pt[i].k) / (double)(ctp_pt[next].k - ctp_pt[i].k);
            return ctp_pt[i].n + (uint64_t)(f * (double)(ctp_pt[next].n - ctp_pt[i].n));
        }
    }
    return ctp_extrapolate(i, k);
}

/* Uses the TSC only where the kernel keeps CLOCK_MONOTONIC with it; measures its rate over
 * 2 ms (refined at every flush). */
void ctp_time_init(void)
{
#if defined(__x86_64__)
    char cs[32] = "";
    int fd = ctp_fd_open("/sys/devices/system/clocksource/clocksource0/current_clocksource", 0);
    if (fd >= 0) {
        ssize_t n = read(fd, cs, sizeof cs - 1);
        ctp_fd_drop(fd);
        cs[n > 0 ? n : 0] = 0;
    }
    ctp_use_tsc = !strcmp(cs, "tsc\n");
#endif
    ctp_npt = 0;
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
