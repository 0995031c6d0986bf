/* The simulated library's exports are NVIDIA's: every function of 2.30.7's nccl.h as a weak
 * ncclX at the address of a strong pncclX; what it does not simulate says so once; its
 * kernels reach the driver's launch entry point, where a tracer sees them, under NVIDIA's
 * names. */
#define _GNU_SOURCE
#include "sn.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char name[64];
    char type;
    unsigned long long addr;
} sn_sym;

/* The dynamic symbols lib defines; -1 if nm fails. */
static int sn_nm(const char *lib, sn_sym *out, int max)
{
    char *argv[] = {"nm", "-D", "--defined-only", (char *)lib, NULL};
    ctt_proc p;
    if (ctt_run(&p, argv, NULL, 60) != 0 || !p.exited || p.code != 0) {
        fprintf(stderr, "nm -D %s failed\n", lib);
        return -1;
    }
    int n = 0;
    for (char *line = strtok(p.out, "\n"); line && n < max; line = strtok(NULL, "\n"))
        if (sscanf(line, "%llx %c %63s", &out[n].addr, &out[n].type, out[n].name) == 3)
            n++;
    ctt_proc_free(&p);
    return n;
}

static const sn_sym *sn_sym_find(const sn_sym *s, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].name, name) == 0)
            return &s[i];
    return NULL;
}

/* api.txt's function names. */
static int sn_api(char names[][64], int max)
{
    FILE *f = fopen(SN_REPO "/tests/fakenccl/api.txt", "r");
    if (!f)
        return -1;
    char line[1024];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f))
        if (sscanf(line, "%*[^|]|%63[^|]|", names[n]) == 1)
            n++;
    fclose(f);
    return n;
}

/* Every function of api.txt that NVIDIA's lib exports (weak, with a strong pncclX at the same
 * address) is exported so by ours; returns how many there were. */
static int sn_same_binding(const char *nvidia, const sn_sym *ours, int nours, char api[][64],
                           int napi)
{
    static sn_sym nv[2000];
    int nnv = sn_nm(nvidia, nv, 2000), checked = 0;
    if (nnv < 0)
        return -1;
    for (int i = 0; i < nnv; i++) {
        if (nv[i].type != 'W' || strncmp(nv[i].name, "nccl", 4) != 0)
            continue;
        int in_api = 0;
        for (int k = 0; k < napi && !in_api; k++)
            in_api = strcmp(api[k], nv[i].name) == 0;
        if (!in_api)
            continue; /* the device API's that do not return ncclResult_t (api.txt) */
        char p[80];
        snprintf(p, sizeof p, "p%.63s", nv[i].name);
        const sn_sym *np = sn_sym_find(nv, nnv, p), *o = sn_sym_find(ours, nours, nv[i].name),
                     *op = sn_sym_find(ours, nours, p);
        if (!np || np->type != 'T' || np->addr != nv[i].addr || !o || o->type != 'W' || !op ||
            op->type != 'T' || op->addr != o->addr) {
            fprintf(stderr, "%s: NVIDIA's %s %c / %s %c; ours %c / %c\n", nvidia, nv[i].name,
                    nv[i].type, p, np ? np->type : '-', o ? o->type : '-', op ? op->type : '-');
            return -1;
        }
        checked++;
    }
    return checked;
}

TEST_IMPL(exports_match_nvidias_libnccl)
{
    char lib[4096];
    ctt_path(lib, "tests/fakenccl/libnccl.so.2");
    static sn_sym ours[1000];
    static char api[200][64];
    int nours = sn_nm(lib, ours, 1000), napi = sn_api(api, 200);
    ASSERT(nours > 0);
    ASSERT_INT(napi, ==, 76);
    int weak = 0;
    for (int i = 0; i < nours; i++)
        weak += ours[i].type == 'W';
    ASSERT_INT(weak, ==, napi); /* nothing else is weak */
    for (int k = 0; k < napi; k++) {
        char p[80];
        snprintf(p, sizeof p, "p%.63s", api[k]);
        const sn_sym *w = sn_sym_find(ours, nours, api[k]), *s = sn_sym_find(ours, nours, p);
        ASSERT(w && w->type == 'W');
        ASSERT(s && s->type == 'T');
        ASSERT_UINT(w->addr, ==, s->addr);
    }
    /* The toolkit's 2.28.9: its 41 nccl.h functions and 5 of the device API's. */
    ASSERT_INT(sn_same_binding("/usr/local/cuda/lib/libnccl.so.2", ours, nours, api, napi), ==, 46);
    /* PyTorch's 2.30.7, when its wheel is installed: all 76, and api.txt is its headers'. */
    const char *venv = SN_VENV "/lib/python3*/site-packages/nvidia/nccl";
    char pat[4096];
    snprintf(pat, sizeof pat, "%s/lib/libnccl.so.2", venv);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) {
        printf("no nvidia-nccl wheel under %s: checked against 2.28.9 only\n", SN_VENV);
        return 0;
    }
    ASSERT_INT(sn_same_binding(g.gl_pathv[0], ours, nours, api, napi), ==, 76);
    char hdr[4096], dev[4096];
    snprintf(hdr, sizeof hdr, "%s", g.gl_pathv[0]);
    strcpy(strstr(hdr, "/lib/libnccl.so.2"), "/include/nccl.h");
    snprintf(dev, sizeof dev, "%s", hdr);
    strcpy(strstr(dev, "/nccl.h"), "/nccl_device");
    globfree(&g);
    char *argv[] = {"python3", SN_REPO "/tests/fakenccl/gen_nccl.py", "extract", hdr, dev, NULL};
    char *committed = ctt_read_file(SN_REPO "/tests/fakenccl/api.txt", NULL);
    ctt_proc p;
    ASSERT(committed && ctt_run(&p, argv, NULL, 60) == 0 && p.exited && p.code == 0);
    ASSERT_STR(p.out, committed); /* the committed list is the wheel's headers' */
    return 0;
}

TEST_IMPL(unsupported_functions_say_so_once)
{
    setenv("FAKENCCL_TRACE_UNSUPPORTED", "1", 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/stderr.txt", ctt_tmpdir());
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    ncclComm_t none;
    ncclResult_t a = ncclCommShrink(NULL, NULL, 0, &none, NULL, 0);
    ncclResult_t b = ncclCommShrink(NULL, NULL, 0, &none, NULL, 0);
    ncclResult_t c = ncclGroupSimulateEnd(NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(fd);
    close(saved);
    ASSERT_INT(a, ==, ncclInvalidUsage);
    ASSERT_INT(b, ==, ncclInvalidUsage);
    ASSERT_INT(c, ==, ncclInvalidUsage);
    char *err = ctt_read_file(path, NULL);
    ASSERT(err);
    ASSERT_STR(err, "fakenccl: ncclCommShrink is not simulated: ncclInvalidUsage\n"
                    "fakenccl: ncclGroupSimulateEnd is not simulated: ncclInvalidUsage\n");
    ASSERT_STR(ncclGetLastError(NULL), "ncclGroupSimulateEnd is not simulated");
    free(err);
    return 0;
}

/* Stands in for a tracer's wrapper: libnccl.so.2's cuLaunchKernel binds to this definition
 * (the runner is linked with -rdynamic). */
static char sn_kernel[256];
static _Atomic int sn_launches;

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                        void **extra)
{
    static CUresult (*real)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, CUstream, void **, void **);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "cuLaunchKernel");
    const char *name = NULL;
    snprintf(sn_kernel, sizeof sn_kernel, "%s",
             cuFuncGetName(&name, f) == CUDA_SUCCESS ? name : "?");
    atomic_fetch_add(&sn_launches, 1);
    return real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}

TEST_IMPL(kernels_launch_under_nvidias_names)
{
    ncclComm_t comm;
    ASSERT_INT(sd_init(), ==, 0);
    NK(ncclCommInitAll(&comm, 1, NULL)); /* one rank */
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 4096));
    CK(cuMemsetD32_v2(d, 0, 1024));
    void *p = (void *)d;
    NK(ncclAllReduce(p, p, 16, ncclFloat32, ncclSum, comm, NULL));
    ASSERT_STR(sn_kernel, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
    NK(ncclAllReduce(p, p, 16, ncclBfloat16, ncclSum, comm, NULL));
    ASSERT_STR(sn_kernel, "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE");
    NK(ncclAllReduce(p, p, 16, ncclFloat32, ncclMax, comm, NULL));
    ASSERT_STR(sn_kernel, "_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE");
    NK(ncclReduce(p, p, 16, ncclInt32, ncclSum, 0, comm, NULL));
    ASSERT_STR(sn_kernel, "_Z36ncclDevKernel_Reduce_Sum_u32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
    NK(ncclAllGather(p, p, 16, ncclInt8, comm, NULL));
    ASSERT_STR(sn_kernel, "_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE");
    int before = atomic_load(&sn_launches);
    NK(ncclGroupStart());
    NK(ncclSend(p, 16, ncclFloat32, 0, comm, NULL));
    NK(ncclRecv((char *)p + 1024, 16, ncclFloat32, 0, comm, NULL));
    ASSERT_INT(atomic_load(&sn_launches), ==, before);
    NK(ncclGroupEnd());
    ASSERT_INT(atomic_load(&sn_launches), ==, before + 1); /* one kernel for the group */
    ASSERT_STR(sn_kernel, "_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE");
    CK(cuCtxSynchronize());
    NK(ncclCommDestroy(comm));
    return 0;
}

/* A collective on a capturing stream is refused, cleanly, rather than captured: its kernel's
 * work would be freed after the graph's first launch. */
TEST_IMPL(capture_is_refused)
{
    ncclComm_t comm;
    ASSERT_INT(sd_init(), ==, 0);
    NK(ncclCommInitAll(&comm, 1, NULL)); /* one rank */
    CUstream s;
    CUgraph g;
    CUdeviceptr d;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc_v2(&d, 64));
    CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    ASSERT_INT(ncclAllReduce((void *)d, (void *)d, 4, ncclFloat32, ncclSum, comm, (cudaStream_t)s),
               ==, ncclInvalidUsage);
    CK(cuStreamEndCapture(s, &g));
    NK(ncclCommDestroy(comm));
    return 0;
}
