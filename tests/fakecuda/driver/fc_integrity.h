/* The integrity check NVIDIA's runtime asks of a driver (INTEGRITY_CHECK[1], see fc_export.c):
 * a keyed hash the runtime recomputes from what it knows (its process and thread, the tables'
 * addresses, the time it passed, the devices' UUIDs and PCI ids) and compares; one wrong bit
 * and every runtime call fails with cudaErrorSoftwareValidityNotEstablished (103, "integrity
 * checks failed"). Self-contained (no driver state), so the tests can link it alone. */
#ifndef FC_INTEGRITY_H
#define FC_INTEGRITY_H

#include <stddef.h>
#include <stdint.h>

/* MD2 (RFC 1319) of n bytes; exposed for the tests' RFC 1319 test vectors. */
void fc_md2(const void *data, size_t n, uint8_t digest[16]);

/* One device as the check sees it: cuDeviceGetUuid's bytes and the PCI_DOMAIN_ID, PCI_BUS_ID
 * and PCI_DEVICE_ID attributes. */
typedef struct {
    uint8_t uuid[16];
    int32_t pci_domain, pci_bus, pci_device;
} fc_integrity_device;

/* What the hash covers besides the devices. */
typedef struct {
    uint32_t driver_version; /* cuDriverGetVersion */
    uint32_t version;        /* the caller's argument: its runtime's version, times 10, + n */
    uint32_t pid;
    uint32_t tid;            /* pthread_self(), truncated to 32 bits */
    uint64_t cudart_table;   /* address of the CUDART_INTERFACE table */
    uint64_t check_table;    /* address of the INTEGRITY_CHECK table */
    uint64_t check_fn;       /* INTEGRITY_CHECK[1] */
    uint64_t seconds;        /* the caller's argument: its clock */
} fc_integrity_input;

void fc_integrity_hash(const fc_integrity_input *in, const fc_integrity_device *devs, int ndev,
                       uint64_t out[2]);

#endif
