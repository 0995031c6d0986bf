/* The simulated GPUs: NVIDIA's published figures for each card, as its driver reports them,
 * and the cuDevice* queries. Peak memory bandwidth is 2 * memory clock * bus width / 8 (DDR),
 * and peak FP32 FLOP/s is SMs * FP32 lanes per SM (by compute capability) * 2 * clock, exactly
 * as for the real card. */
#include "fc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const fc_device_desc fc_device_table[] = {
    /* key, name, SMs, cc, clock kHz, mem clock kHz, bus bits, total memory, PCIe gen/width,
     * L2, smem/SM, smem/block opt-in, threads/SM, blocks/SM, regs/SM, PCI bus. Total memory is
     * the MiB figure nvidia-smi shows for the card. */
    {"h100", "NVIDIA H100 80GB HBM3", 132, 9, 0, 1980000, 2619000, 5120, 85520809984ull, 5, 16,
     52428800, 233472, 232448, 2048, 32, 65536, 0x18},
    {"a100", "NVIDIA A100-SXM4-80GB", 108, 8, 0, 1410000, 1593000, 5120, 85899345920ull, 4, 16,
     41943040, 167936, 166912, 2048, 32, 65536, 0x07},
    {"v100", "Tesla V100-SXM2-32GB", 80, 7, 0, 1530000, 877000, 4096, 34359738368ull, 3, 16,
     6291456, 98304, 98304, 2048, 32, 65536, 0x06},
    {"t4", "Tesla T4", 40, 7, 5, 1590000, 5001000, 256, 16106127360ull, 3, 16, 4194304, 65536,
     65536, 1024, 16, 65536, 0x3b},
};

int fc_devices_parse(const char *spec, const fc_device_desc **out, int max)
{
    if (!spec || !*spec) {
        out[0] = &fc_device_table[0];
        return 1;
    }
    char *copy = strdup(spec), *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const fc_device_desc *found = NULL;
        for (size_t i = 0; i < sizeof fc_device_table / sizeof fc_device_table[0]; i++)
            if (strcasecmp(tok, fc_device_table[i].key) == 0)
                found = &fc_device_table[i];
        if (!found)
            fc_fatal("FAKECUDA_DEVICES: expected a comma-separated list of h100, a100, v100, t4;"
                     " found \"%s\"", tok);
        if (n == max)
            fc_fatal("FAKECUDA_DEVICES: more than %d devices in \"%s\"", max, spec);
        out[n++] = found;
    }
    free(copy);
    if (n == 0)
        fc_fatal("FAKECUDA_DEVICES: no device in \"%s\"", spec);
    return n;
}

double fc_dev_mem_bw(const fc_device_desc *d)
{
    return 2.0 * d->mem_clock_khz * 1000.0 * d->bus_bits / 8.0;
}

/* PCIe payload rate per lane after line coding (GB/s), times the 80% of it a pinned DMA
 * sustains in practice (NVIDIA's bandwidthTest figures: ~12.5 GB/s on gen3 x16, ~25 on gen4,
 * ~50 on gen5). */
double fc_dev_link_bw(const fc_device_desc *d)
{
    static const double lane_gbs[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938};
    return lane_gbs[d->pcie_gen] * 1e9 * d->pcie_width * 0.8;
}

CUresult fc_device_attribute(int *pi, CUdevice_attribute a, const fc_device_desc *d)
{
    int v;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: v = 49152; break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: v = d->clock_khz; break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: v = 512; break;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: v = d->sm_count; break;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: v = CU_COMPUTEMODE_DEFAULT; break;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT: v = 512; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: v = d->cc_major >= 7 && d->cc_minor == 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: v = d->pci_bus; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: v = d->mem_clock_khz; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: v = d->bus_bits; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: v = d->l2_bytes; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: v = d->max_threads_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: v = d->cc_major >= 8 ? 3 : 2; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: v = d->cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: v = d->cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: v = d->smem_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: v = d->regs_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO:
        v = d->cc_minor == 0 ? 2 : 32;
        break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: v = d->smem_per_block_optin; break;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: v = d->max_blocks_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE:
        v = d->cc_major >= 8 ? d->l2_bytes / 4 * 3 : 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: v = d->cc_major >= 8 ? 134213632 : 0; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: v = d->cc_major >= 8 ? 1024 : 0; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: v = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; break;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: v = d->cc_major >= 9; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR: v = 1; break;
    case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED: v = d->cc_major >= 9; break;
    case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MPS_ENABLED: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG: v = 0; break;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID: v = -1; break;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: v = 0; break;
    default:
        if ((int)a <= 0 || a >= CU_DEVICE_ATTRIBUTE_MAX)
            return CUDA_ERROR_INVALID_VALUE;
        v = 0; /* a capability this simulation does not have */
        break;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    FC_ENTER_INIT("cuDeviceGetCount");
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = fc_g.ndev;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    FC_ENTER_INIT("cuDeviceGet");
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= fc_g.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    FC_ENTER("cuDeviceGetName");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", fc_devs[dev].d->name);
    return CUDA_SUCCESS;
}

/* Entry points call these helpers, never each other: a tracer interposing on the exported
 * names must see only the calls the program made. */
static CUresult fc_total_mem(size_t *bytes, CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = fc_devs[dev].d->total_mem;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    FC_ENTER("cuDeviceTotalMem_v2");
    return fc_total_mem(bytes, dev);
}

FC_EXPORT CUresult CUDAAPI cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    FC_ENTER("cuDeviceTotalMem");
    size_t b;
    CUresult r = fc_total_mem(&b, dev);
    if (r == CUDA_SUCCESS && bytes)
        *bytes = b > 0xffffffffu ? 0xffffffffu : (unsigned)b;
    return r;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    FC_ENTER("cuDeviceGetAttribute");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_device_attribute(pi, attrib, fc_devs[dev].d);
}

CUresult fc_device_uuid(CUuuid *uuid, CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    /* Stable per (card model, ordinal), version-4 shaped, like a real GPU UUID. */
    unsigned long long h = 1469598103934665603ull;
    for (const char *p = fc_devs[dev].d->name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h ^= (unsigned long long)dev * 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 16; i++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        uuid->bytes[i] = (char)(h >> 56);
    }
    uuid->bytes[6] = (char)((uuid->bytes[6] & 0x0f) | 0x40);
    uuid->bytes[8] = (char)((uuid->bytes[8] & 0x3f) | 0x80);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    FC_ENTER("cuDeviceGetUuid");
    return fc_device_uuid(uuid, dev);
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    FC_ENTER("cuDeviceGetUuid_v2");
    return fc_device_uuid(uuid, dev);
}

FC_EXPORT CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    FC_ENTER("cuDeviceComputeCapability");
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    *major = fc_devs[dev].d->cc_major;
    *minor = fc_devs[dev].d->cc_minor;
    return CUDA_SUCCESS;
}

static CUresult fc_pci_bus_id(char *pciBusId, int len, CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(pciBusId, (size_t)len, "0000:%02X:00.0", fc_devs[dev].d->pci_bus + dev);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    FC_ENTER("cuDeviceGetPCIBusId");
    return fc_pci_bus_id(pciBusId, len, dev);
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    FC_ENTER_INIT("cuDeviceGetByPCIBusId");
    if (!dev || !pciBusId)
        return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < fc_g.ndev; i++) {
        char id[32];
        fc_pci_bus_id(id, sizeof id, i);
        if (strcasecmp(id, pciBusId) == 0 || strcasecmp(id + 5, pciBusId) == 0) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_INVALID_DEVICE;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib,
                                                   CUdevice srcDevice, CUdevice dstDevice)
{
    FC_ENTER("cuDeviceGetP2PAttribute");
    CUresult r = fc_check_device(srcDevice);
    if (r == CUDA_SUCCESS)
        r = fc_check_device(dstDevice);
    if (r != CUDA_SUCCESS)
        return r;
    if (!value || srcDevice == dstDevice)
        return CUDA_ERROR_INVALID_DEVICE;
    (void)attrib;
    *value = 0; /* the simulated GPUs have no peer link */
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    FC_ENTER("cuDeviceCanAccessPeer");
    CUresult r = fc_check_device(dev);
    if (r == CUDA_SUCCESS)
        r = fc_check_device(peerDev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    *canAccessPeer = 0;
    return CUDA_SUCCESS;
}
