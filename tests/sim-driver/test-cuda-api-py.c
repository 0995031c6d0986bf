/* preload/gen/cuda_api.py, the header model the driver's generator and the tracer's wrapper
 * generator share: its command line answers resolution questions as cuda.h/cudaTypedefs.h
 * define them and dumps every variant with no problem reported. */
#include "sd.h"

#include <stdlib.h>

/* stdout of `python3 cuda_api.py A B C D` (NULL-terminated list), or NULL if it failed. */
static char *py(const char *a, const char *b, const char *c, const char *d)
{
    char script[4096];
    snprintf(script, sizeof script, "%s/preload/gen/cuda_api.py", SD_REPO);
    char *argv[] = {"python3", script, (char *)a, (char *)b, (char *)c, (char *)d, NULL};
    ctt_proc p;
    if (ctt_run(&p, argv, NULL, 60) != 0 || !p.exited || p.code != 0)
        return NULL;
    free(p.err);
    return p.out;
}

static char *resolve(const char *sym, const char *ver, const char *flags)
{
    return py("--resolve", sym, ver, flags);
}

TEST_IMPL(cuda_api_model_command_line)
{
    ASSERT_STR(resolve("cuMemAlloc", "3020", "0"), "cuMemAlloc_v2 found\n");
    ASSERT_STR(resolve("cuMemAlloc", "3010", "0"), "cuMemAlloc found\n");
    ASSERT_STR(resolve("cuMemcpyHtoDAsync", "12000", "2"), "cuMemcpyHtoDAsync_v2_ptsz found\n");
    ASSERT_STR(resolve("cuCtxCreate", "13000", "0"), "cuCtxCreate_v4 found\n");
    ASSERT_STR(resolve("cuGraphInstantiate", "12000", "0"), "cuGraphInstantiate_v2 found\n");
    ASSERT_STR(resolve("cuProfilerStart", "4000", "0"), "cuProfilerStart found\n");
    ASSERT_STR(resolve("cuMemAllocAsync", "11000", "0"), "- version_not_sufficient\n");
    ASSERT_STR(resolve("cuNothing", "13000", "0"), "- not_found\n");
    char *d = py("--dump", NULL, NULL, NULL);
    ASSERT(d);
    ASSERT_CONTAINS(d, "# 479 functions, 673 symbols, 0 problems");
    ASSERT_CONTAINS(d, "  7000   ptds  CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr_v2 dstDevice, "
                          "const void *srcHost, size_t ByteCount)");
    free(d);
    return 0;
}
