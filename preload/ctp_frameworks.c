#define _GNU_SOURCE
#include "ctp_frameworks.h"

#include <errno.h>
#include <link.h>
#include <string.h>

#include "ctp_loader.h"
#include "cttrace.h"

/* Matched on the object's file name, any directory and any version suffix: PyTorch loads its
 * CUDA code from libtorch_cuda.so (a wheel's torch/lib/, or a distribution's libtorch_cuda.so.2) */
static int ctp_fw_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
    const char *base = slash ? slash + 1 : name;
    if (base && !strncmp(base, "libtorch_cuda.so", 16))
        *(uint64_t *)arg |= CT_FW_TORCH;
    return 0;
}

uint64_t ctp_frameworks_loaded(void)
{
    int saved = errno;
    uint64_t fw = 0;
    ctp_loader_walk(ctp_fw_object, &fw);
    errno = saved;
    return fw;
}
