/* cuGetProcAddress_v2 answers every request NVIDIA's runtime makes at start-up (the reference
 * list) with the function cuda_api.py's rule names (fc_expect.txt, generated from the
 * headers), and a set of answers checked by hand against cuda.h / cudaTypedefs.h. */
#define _GNU_SOURCE
#include "sd.h"

#include <dlfcn.h>
#include <stdlib.h>

static void *lib;

static int check(const char *sym, int ver, int flags, const char *want, CUresult want_r,
                 CUdriverProcAddressQueryResult want_st, int line)
{
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    CUresult r = cuGetProcAddress_v2(sym, &p, ver, (cuuint64_t)flags, &st);
    if (r != want_r || st != want_st) {
        ctt_fail_at(__FILE__, line, "%s %d %d: expected result %d status %d, found %d %d",
                        sym, ver, flags, want_r, want_st, r, st);
        return 1;
    }
    void *expect = want ? dlsym(lib, want) : NULL;
    if (want && !expect) {
        ctt_fail_at(__FILE__, line, "libcuda.so.1 does not export %s", want);
        return 1;
    }
    if (p != expect) {
        Dl_info info;
        const char *got = p && dladdr(p, &info) && info.dli_sname ? info.dli_sname : "?";
        ctt_fail_at(__FILE__, line, "%s %d %d: expected %s, found %s", sym, ver, flags,
                        want ? want : "NULL", got);
        return 1;
    }
    return 0;
}

#define FOUND(sym, ver, flags, want) \
    if (check(sym, ver, flags, want, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, __LINE__)) return 1
#define MISSING(sym, ver, st) \
    if (check(sym, ver, 0, NULL, CUDA_ERROR_NOT_FOUND, st, __LINE__)) return 1

TEST_IMPL(getprocaddress_reference_list)
{
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT(lib);
    /* By hand, from the PFN_* typedefs. */
    FOUND("cuMemAlloc", 2000, 0, "cuMemAlloc");
    FOUND("cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    FOUND("cuMemAlloc", 13000, 2, "cuMemAlloc_v2");
    FOUND("cuMemcpyHtoD", 3020, 2, "cuMemcpyHtoD_v2");
    FOUND("cuMemcpyHtoD", 7000, 2, "cuMemcpyHtoD_v2_ptds");
    FOUND("cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2");
    FOUND("cuMemcpyAsync", 12000, 2, "cuMemcpyAsync_ptsz");
    FOUND("cuCtxCreate", 11040, 0, "cuCtxCreate_v3");
    FOUND("cuCtxCreate", 12050, 0, "cuCtxCreate_v4");
    FOUND("cuLaunchKernel", 12000, 2, "cuLaunchKernel_ptsz");
    FOUND("cuLaunchKernel", 12000, 1, "cuLaunchKernel");
    FOUND("cuStreamGetCaptureInfo", 12030, 2, "cuStreamGetCaptureInfo_v3_ptsz");
    FOUND("cuEventElapsedTime", 12080, 0, "cuEventElapsedTime_v2");
    FOUND("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
    FOUND("cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2");
    MISSING("cuMemAllocAsync", 11010, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    MISSING("cuNoSuchFunction", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    MISSING("", 13000, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    void *p;
    ASSERT_INT(cuGetProcAddress_v2("cuInit", &p, 13000, 4, NULL), ==, CUDA_ERROR_INVALID_VALUE);

    /* A resolved pointer is the function. */
    CUresult (*get_count)(int *);
    CK(cuGetProcAddress_v2("cuDeviceGetCount", (void **)&get_count, 13000, 0, NULL));
    ASSERT_INT(sd_init(), ==, 0);
    int n = 0;
    CK(get_count(&n));
    ASSERT_INT(n, ==, 1);

    /* The whole reference list. */
    char path[4096];
    snprintf(path, sizeof path, "%s/../shared/reference/cudart-13.0-getprocaddress.txt", SD_REPO);
    char *ref = ctt_read_file(path, NULL);
    if (!ref) {
        ctt_fail_at(__FILE__, __LINE__,
                        "%s: cannot read NVIDIA's reference request list (expected the shared "
                        "reference directory next to the repository)", path);
        return 1;
    }
    char *expect = ctt_read_file(ctt_path(path, "tests/fakecuda/driver/gen/fc_expect.txt"), NULL);
    ASSERT(expect);
    int lines = 0, found = 0;
    char *save = NULL;
    for (char *l = strtok_r(expect, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char sym[128], want[128], status[64];
        int ver, flags;
        ASSERT_INT(sscanf(l, "%127s %d %d %127s %63s", sym, &ver, &flags, want, status), ==, 5);
        const char *s = strcmp(sym, "-") == 0 ? "" : sym;
        if (strcmp(status, "found") == 0) {
            if (check(s, ver, flags, want, CUDA_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS, __LINE__))
                return 1;
            found++;
        } else {
            CUdriverProcAddressQueryResult st = strcmp(status, "not_found") == 0
                                                    ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                                    : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
            if (check(s, ver, flags, NULL, CUDA_ERROR_NOT_FOUND, st, __LINE__))
                return 1;
        }
        lines++;
    }
    /* Every request of the reference list was checked. */
    int ref_lines = 0;
    for (char *l = strtok_r(ref, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        ref_lines += l[0] != '#';
    ASSERT_INT(ref_lines, ==, 440);
    ASSERT_INT(lines, ==, ref_lines);
    ASSERT_INT(found, ==, 439); /* all but the empty probe name */
    free(ref);
    free(expect);
    return 0;
}
