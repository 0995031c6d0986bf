/* DEVICE records (see ctp_device.h). */
#define _GNU_SOURCE
#include "ctp_device.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "ctp_fds.h"
#include "ctp_fns.h"
#include "ctp_maps.h"
#include "ctp_real.h"
#include "ctp_clock.h"
#include "ctp_emit.h"
#include "ctp_shlib.h"

#define CTP_MAX_DEVICES 256u
static _Atomic uint64_t ctp_dev_described[CTP_MAX_DEVICES / 64];

void ctp_device_reset(void)
{
    for (unsigned i = 0; i < CTP_MAX_DEVICES / 64; i++)
        atomic_store(&ctp_dev_described[i], 0);
}

static uint32_t ctp_attr(CUdevice d, CUdevice_attribute a)
{
    int v = 0;
    if (CTP_REAL(cuDeviceGetAttribute)(&v, a, d) != CUDA_SUCCESS || v < 0)
        return 0;
    return (uint32_t)v;
}

/* The first line of a small sysfs file, or "" (buf has cap bytes). */
static const char *ctp_read_line(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    int fd = ctp_fd_open(path, 0);
    if (fd < 0)
        return buf;
    ssize_t n = read(fd, buf, cap - 1);
    ctp_fd_drop(fd);
    buf[n > 0 ? n : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return buf;
}

/* PCIe generation of a link speed as sysfs writes it ("16.0 GT/s PCIe"), 0 if unknown. */
static uint32_t ctp_pcie_gen(const char *speed)
{
    static const double gts[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    double v = strtod(speed, NULL);
    for (unsigned i = 0; i < sizeof gts / sizeof gts[0]; i++)
        if (v > gts[i] * 0.9 && v < gts[i] * 1.1)
            return i + 1;
    return 0;
}

/* max_link_speed and max_link_width of the PCI function in directory dir; 0 each if absent. */
static void ctp_link_of(const char *dir, uint32_t *gen, uint32_t *width)
{
    char path[PATH_MAX + 32], buf[64];
    snprintf(path, sizeof path, "%s/max_link_speed", dir);
    *gen = ctp_pcie_gen(ctp_read_line(path, buf, sizeof buf));
    snprintf(path, sizeof path, "%s/max_link_width", dir);
    *width = (uint32_t)strtoul(ctp_read_line(path, buf, sizeof buf), NULL, 10);
}

/* The card's host link from sysfs, capped by its upstream port's; gen and width 0 if unknown. */
static void ctp_pcie_link(const ct_rec_device *r, uint32_t *gen, uint32_t *width)
{
    const char *root = getenv("CUTRACE_SYSFS");
    char dev[PATH_MAX], real[PATH_MAX];
    snprintf(dev, sizeof dev, "%s/bus/pci/devices/%04x:%02x:%02x.0", root && *root ? root : "/sys",
             r->pci_domain, r->pci_bus, r->pci_device);
    ctp_link_of(dev, gen, width);
    if (!*gen || !*width || !realpath(dev, real))
        return;
    char *slash = strrchr(real, '/');
    if (!slash)
        return;
    *slash = 0;
    uint32_t up_gen, up_width;
    ctp_link_of(real, &up_gen, &up_width);
    if (up_gen && up_gen < *gen)
        *gen = up_gen;
    if (up_width && up_width < *width)
        *width = up_width;
}

static void ctp_describe(ctp_thread *th, CUdevice d)
{
    ct_rec_device r;
    memset(&r, 0, sizeof r);
    r.device = (uint32_t)d;
    char name[256] = "";
    if (CTP_REAL(cuDeviceGetName)(name, sizeof name, d) == CUDA_SUCCESS && name[0])
        r.name = ctp_intern(name, strnlen(name, sizeof name));
    CUuuid uuid;
    if ((ctp_resolve(CTP_FN_cuDeviceGetUuid_v2) ? CTP_REAL(cuDeviceGetUuid_v2)(&uuid, d)
                                               : CTP_REAL(cuDeviceGetUuid)(&uuid, d)) == CUDA_SUCCESS)
        memcpy(r.uuid, uuid.bytes, sizeof r.uuid);
    size_t bytes = 0;
    if (CTP_REAL(cuDeviceTotalMem_v2)(&bytes, d) == CUDA_SUCCESS)
        r.mem_bytes = bytes;
    r.cc_major = ctp_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    r.cc_minor = ctp_attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    r.sm_count = ctp_attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    r.clock_khz = ctp_attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    r.mem_clock_khz = ctp_attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    r.mem_bus_bits = ctp_attr(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    r.l2_bytes = ctp_attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    r.max_threads_per_sm = ctp_attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    r.regs_per_sm = ctp_attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    r.smem_per_sm = ctp_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    r.warp_size = ctp_attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    r.async_engines = ctp_attr(d, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    r.concurrent_kernels = ctp_attr(d, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
    r.pci_domain = ctp_attr(d, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
    r.pci_bus = ctp_attr(d, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
    r.pci_device = ctp_attr(d, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
    if (ctp_attr(d, CU_DEVICE_ATTRIBUTE_INTEGRATED)) {
        r.link_kind = CT_LINK_INTEGRATED;
    } else if (ctp_attr(d, CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED)) {
        r.link_kind = CT_LINK_C2C;
    } else {
        ctp_pcie_link(&r, &r.link_gen, &r.link_width);
        r.link_kind = r.link_gen && r.link_width ? CT_LINK_PCIE : CT_LINK_UNKNOWN;
    }
    ctp_push_now(th, CT_REC_DEVICE, &r, sizeof r);
}

void ctp_device_seen(ctp_thread *th, uint32_t dev)
{
    if (dev >= CTP_MAX_DEVICES)
        return;
    _Atomic uint64_t *word = &ctp_dev_described[dev / 64];
    uint64_t bit = 1ull << (dev % 64);
    if (__builtin_expect(atomic_load_explicit(word, memory_order_relaxed) & bit, 1))
        return;
    /* One thread describes it; a racing thread's call may precede the record (readers keep
     * the table of the whole file). */
    if (atomic_fetch_or(word, bit) & bit)
        return;
    int saved = errno;
    ctp_describe(th, (CUdevice)dev);
    ctp_shlib_scan(th); /* a forked child's threads are registered already */
    errno = saved;
}
