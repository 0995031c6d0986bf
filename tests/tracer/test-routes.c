/* Every route to the driver lands in cutrace (one test each): a program linked to libcuda.so.1,
 * dlopen + dlsym by handle, cuGetProcAddress (all 440 requests of NVIDIA's runtime),
 * cudaGetDriverEntryPoint[ByVersion], and runtime symbols (nvcc's __cudaLaunchKernel). */
#define _GNU_SOURCE
#include "tr.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdlib.h>

/* driver_api is linked against libcuda.so.1 (DT_NEEDED). */
TEST_IMPL(route_dt_needed)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "driver_api"), NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.out, "verify=ok");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 4);
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, "vec_add"), ==, 2);
    /* A C program has no C++ runtime to demangle with: the mangled name is kept. */
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, "_Z5scaleIfEvPT_S0_i"), ==, 2);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuLaunchKernel"), ==, 2);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuLaunchKernelEx"), ==, 2);
    size_t allocs = 0, h2d = 0, d2h = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type == CT_REC_LAUNCH) {
            ASSERT_UINT(r->u.launch.grid[0], ==, 256);
            ASSERT_UINT(r->u.launch.block[0], ==, 256);
            ASSERT(r->u.launch.stream != 0);
        }
        allocs += r->type == CT_REC_MEM && r->u.mem.op == CT_MEM_ALLOC && r->u.mem.size == 262144;
        h2d += r->type == CT_REC_COPY && r->u.copy.dir == CT_DIR_HTOD && r->u.copy.bytes == 262144;
        d2h += r->type == CT_REC_COPY && r->u.copy.dir == CT_DIR_DTOH && r->u.copy.bytes == 262144;
    }
    ASSERT_UINT(allocs, ==, 3);
    ASSERT_UINT(h2d, ==, 2);
    ASSERT_UINT(d2h, ==, 1);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* dlopen("libcuda.so.1") + dlsym(handle, "cuMemAlloc_v2") reaches cutrace's wrappers. */
TEST_IMPL(route_dlopen)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "dlopen", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemAlloc_v2"), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemsetD8_v2"), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cuMemFree_v2"), ==, 1);
    int alloc = 0, set = 0, freed = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type == CT_REC_MEM && r->u.mem.op == CT_MEM_ALLOC) {
            ASSERT_UINT(r->u.mem.size, ==, 1048576);
            ASSERT_UINT(r->u.mem.kind, ==, CT_ALLOC_DEVICE);
            alloc++;
        }
        if (r->type == CT_REC_MEM && r->u.mem.op == CT_MEM_FREE) {
            ASSERT_UINT(r->u.mem.size, ==, 1048576); /* known from the allocation */
            freed++;
        }
        if (r->type == CT_REC_COPY) {
            ASSERT_UINT(r->u.copy.op, ==, CT_COPY_MEMSET);
            ASSERT_UINT(r->u.copy.bytes, ==, 1048576);
            ASSERT_UINT(r->u.copy.dst_kind, ==, CT_MEMKIND_DEVICE);
            set++;
        }
    }
    ASSERT_INT(alloc, ==, 1);
    ASSERT_INT(set, ==, 1);
    ASSERT_INT(freed, ==, 1);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* Every request NVIDIA's runtime makes: cutrace answers with the real driver's status and
 * symbolStatus; where the driver returns a function, cutrace returns either that very function
 * (not traced) or its own wrapper of the same exported variant. */
TEST_IMPL(route_getprocaddress)
{
    FILE *f = fopen(TR_REFERENCE, "r");
    if (!f) {
        ctt_fail_at(__FILE__, __LINE__, "expected NVIDIA's request list at %s (shared/"
                        "reference beside the repository), found nothing", TR_REFERENCE);
        return 1;
    }
    char driver[4096], lib[4096];
    const char *forced = getenv("CUTRACE_LIBCUDA");
    if (forced && *forced)
        snprintf(driver, sizeof driver, "%s", forced);
    else
        ctt_path(driver, "tests/fakecuda/libcuda.so.1");
    setenv("CUTRACE_LIBCUDA", driver, 1);
    setenv("CUTRACE_OUTPUT", ctt_tmpdir(), 1);
    void *real = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
    void *ct = dlopen(ctt_path(lib, "lib/libcutrace.so"), RTLD_NOW | RTLD_LOCAL);
    ASSERT(real != NULL);
    ASSERT(ct != NULL);
    ASSERT(real != ct);
    typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);
    gpa_fn gpa_real = (gpa_fn)dlsym(real, "cuGetProcAddress_v2");
    gpa_fn gpa_ct = (gpa_fn)dlsym(ct, "cuGetProcAddress_v2");
    ASSERT(gpa_real && gpa_ct && (void *)gpa_real != (void *)gpa_ct);
    Dl_info tracer_info;
    ASSERT(dladdr((void *)gpa_ct, &tracer_info));
    char line[512];
    int n = 0, wrapped = 0, same = 0, missing = 0;
    while (fgets(line, sizeof line, f)) {
        char sym[256];
        int ver;
        unsigned long long flags;
        if (line[0] == '#' || sscanf(line, "%255s %d %llu", sym, &ver, &flags) != 3)
            continue;
        const char *name = strcmp(sym, "-") ? sym : "";
        void *p1 = NULL, *p2 = NULL;
        CUdriverProcAddressQueryResult s1 = 99, s2 = 98;
        CUresult r1 = gpa_real(name, &p1, ver, flags, &s1);
        CUresult r2 = gpa_ct(name, &p2, ver, flags, &s2);
        n++;
        if (r1 != r2 || s1 != s2 || !p1 != !p2) {
            ctt_fail_at(__FILE__, __LINE__, "%s %d %llu: driver says %d/%d/%p, cutrace says "
                            "%d/%d/%p", sym, ver, flags, r1, s1, p1, r2, s2, p2);
            return 1;
        }
        if (!p1) {
            missing++;
            continue;
        }
        if (p1 == p2) {
            same++;
            continue;
        }
        Dl_info i1, i2;
        ASSERT(dladdr(p1, &i1) && dladdr(p2, &i2) && i1.dli_sname && i2.dli_sname);
        if (i2.dli_fbase != tracer_info.dli_fbase || strcmp(i1.dli_sname, i2.dli_sname)) {
            ctt_fail_at(__FILE__, __LINE__, "%s %d %llu: driver returns %s, cutrace returns "
                            "%s from %s", sym, ver, flags, i1.dli_sname, i2.dli_sname,
                            i2.dli_fname);
            return 1;
        }
        wrapped++;
    }
    fclose(f);
    ASSERT_INT(n, ==, 440);
    /* The traced families NVIDIA's runtime asks for, legacy and per-thread: launches (4),
     * copies (19), sets (4), allocations (9), frees (6), syncs (5), names (3), streams, and
     * cuGetProcAddress itself (2). */
    ASSERT_INT(wrapped, >=, 50);
    ASSERT_INT(same + wrapped + missing, ==, 440);
    /* Spot checks of exact variants. */
    struct { const char *sym; int ver; unsigned long long flags; const char *want; } spot[] = {
        {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
        {"cuMemcpyHtoDAsync", 7000, 2, "cuMemcpyHtoDAsync_v2_ptsz"},
        {"cuMemcpy", 7000, 2, "cuMemcpy_ptds"},
        {"cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz"},
        {"cuLaunchKernel", 4000, 0, "cuLaunchKernel"},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
        {"cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2"},
    };
    for (size_t i = 0; i < sizeof spot / sizeof spot[0]; i++) {
        void *p = NULL;
        CUdriverProcAddressQueryResult s;
        ASSERT_INT(gpa_ct(spot[i].sym, &p, spot[i].ver, spot[i].flags, &s), ==, CUDA_SUCCESS);
        Dl_info d;
        ASSERT(p && dladdr(p, &d) && d.dli_sname);
        ASSERT_STR(d.dli_sname, spot[i].want);
        ASSERT(d.dli_fbase == tracer_info.dli_fbase);
    }
    return 0;
}

/* cudaGetDriverEntryPoint[ByVersion] hands out cutrace's wrappers (PyTorch's VMM route), and
 * the runtime's cudaMalloc is the parent of the driver allocation it makes. */
TEST_IMPL(route_entry_point)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out", ctt_tmpdir());
    char *cmd[] = {(char *)ctt_path(prog, "tests/tracer/probe"), "entry", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 30), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    int direct = 0, runtime = 0;
    for (size_t i = 0; i < t.n; i++) {
        const ct_rec *r = &t.v[i].r;
        if (r->type != CT_REC_MEM || r->u.mem.op != CT_MEM_ALLOC)
            continue;
        const tr_rec *api = tr_api(&t, r->u.mem.corr);
        ASSERT(api != NULL);
        const tr_rec *parent = api->r.u.api.parent ? tr_api(&t, api->r.u.api.parent) : NULL;
        if (r->u.mem.size == 2097152) {
            ASSERT(parent == NULL); /* called through the entry point, not inside the runtime */
            direct++;
        } else if (r->u.mem.size == 3145728) {
            ASSERT(parent != NULL);
            ASSERT_STR(parent->name, "cudaMalloc");
            runtime++;
        }
    }
    ASSERT_INT(direct, ==, 1);
    ASSERT_INT(runtime, ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cudaGetDriverEntryPoint"), ==, 1);
    ASSERT_UINT(tr_count(&t, CT_REC_API, "cudaGetDriverEntryPointByVersion"), ==, 1);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
