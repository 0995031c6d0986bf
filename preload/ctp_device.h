/* DEVICE records: one per device per trace file, written the first time a traced call of the
 * process runs on that device (the first call that finds a context of it current).
 *
 * The properties come from the real driver (the tracer's own calls, never recorded): name, UUID,
 * total memory, and cuDeviceGetAttribute for compute capability, SMs, clocks, bus width, L2, per-SM
 * limits, warp size, copy engines, concurrent kernels and PCI location. CUDA has no attribute for
 * the host link, so it is read from sysfs: /sys/bus/pci/devices/DDDD:BB:DD.0/max_link_speed and
 * max_link_width, each capped by the upstream port's (the slot may be slower than the card); the
 * maximum, not the current, because an idle GPU trains its link down to save power. sysfs is
 * read under CUTRACE_SYSFS instead of /sys when that is set (containers with the host's sysfs
 * elsewhere, tests). link_kind: 3 for an integrated GPU, 2 (NVLink-C2C) for a discrete GPU
 * whose host has native atomics to it (Grace Hopper/Blackwell), 1 (PCIe) when sysfs gives the
 * link, else 0 with generation and width 0: the link is unknown and the analyzer computes no
 * host-link peak. */
#ifndef CTP_DEVICE_H
#define CTP_DEVICE_H

#include <stdint.h>
#include "ctp_state.h"

/* The calling thread's traced call runs on device dev: the first time in this trace, append the
 * device's DEVICE record to the thread's ring. Cheap after the first time (one atomic load). */
void ctp_device_seen(ctp_thread *th, uint32_t dev);
/* Forgets which devices were described (a forked child starts a new file). */
void ctp_device_reset(void);

#endif
