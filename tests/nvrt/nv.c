#define _GNU_SOURCE
#include "nv.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NV_FAIL(...)                                                                    \
    do {                                                                                \
        ctt_fail_at(__FILE__, __LINE__, __VA_ARGS__);                               \
        return 1;                                                                       \
    } while (0)

/* The GNU build id of an ELF file, as hex (from its PT_NOTE segments), into out; 0 or -1. */
static int nv_file_build_id(const char *path, char *out, size_t cap)
{
    size_t n;
    unsigned char *f = (unsigned char *)ctt_read_file(path, &n);
    int found = -1;
    if (!f || n < 64) {
        free(f);
        return -1;
    }
    uint64_t phoff;
    uint16_t phentsize, phnum;
    memcpy(&phoff, f + 0x20, 8);
    memcpy(&phentsize, f + 0x36, 2);
    memcpy(&phnum, f + 0x38, 2);
    for (unsigned i = 0; i < phnum && found < 0 && phoff + (i + 1) * (uint64_t)phentsize <= n; i++) {
        const unsigned char *ph = f + phoff + i * (uint64_t)phentsize;
        uint32_t type;
        uint64_t off, size;
        memcpy(&type, ph, 4);
        memcpy(&off, ph + 8, 8);
        memcpy(&size, ph + 32, 8);
        if (type != 4 /* PT_NOTE */ || off + size > n)
            continue;
        for (uint64_t q = off; q + 12 <= off + size && found < 0;) {
            uint32_t namesz, descsz, ntype;
            memcpy(&namesz, f + q, 4);
            memcpy(&descsz, f + q + 4, 4);
            memcpy(&ntype, f + q + 8, 4);
            uint64_t desc = q + 12 + ((namesz + 3) & ~3u);
            if (ntype == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
                !memcmp(f + q + 12, "GNU", 4) && desc + descsz <= n && 2 * descsz < cap) {
                for (unsigned k = 0; k < descsz; k++)
                    snprintf(out + 2 * k, cap - 2 * k, "%02x", f[desc + k]);
                found = 0;
            }
            q = desc + ((descsz + 3) & ~3u);
        }
    }
    free(f);
    return found;
}

/* Every line of the report names want_path with want_id; at least one line. */
static int nv_check_report(const char *report, const char *want_path, const char *want_id)
{
    char *text = ctt_read_file(report, NULL);
    if (!text)
        NV_FAIL("%s: expected the driver's libcudart report, found no file", report);
    int lines = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char path[PATH_MAX], id[128];
        int pid;
        int ok = sscanf(l, "%d %4095s %127s", &pid, path, id) == 3 &&
                 !strcmp(path, want_path) && !strcmp(id, want_id);
        if (!ok) {
            ctt_fail_at(__FILE__, __LINE__, "%s: expected \"PID %s %s\", found \"%s\"",
                            report, want_path, want_id, l);
            free(text);
            return 1;
        }
        lines++;
    }
    free(text);
    if (!lines)
        NV_FAIL("%s: expected a line per process, found none", report);
    return 0;
}

/* Runs argv (with argv[argc] free for NULL) on runtime rt, the driver reporting into
 * tmpdir/name.cudart; checks that report names rt's libcudart.so.13. */
static int nv_exec(ctt_proc *p, const char *name, nv_runtime rt, char **argv,
                   const char *const env[])
{
    char libdir[4096], kern[4096], lib[4096], report[4200], want[PATH_MAX];
    char want_id[128];
    if (rt == NV_NVIDIA && access(NV_CUDART, R_OK) != 0)
        ctt_skip("NVIDIA's libcudart.so.13 (" NV_CUDART ") is not installed");
    ctt_path(libdir, rt == NV_NVIDIA ? "tests/nvrt/driver" : "tests/fakecuda");
    ctt_path(kern, "tests/workloads/libworkload_kernels.so");
    ctt_path(lib, "lib/libcutrace.so");
    if (!realpath(rt == NV_NVIDIA ? NV_CUDART : ctt_path(want, "tests/fakecuda/libcudart.so.13"),
                  want) ||
        nv_file_build_id(want, want_id, sizeof want_id) != 0)
        NV_FAIL("expected a libcudart.so.13 with a build id for %s, found none",
                        rt == NV_NVIDIA ? "NVIDIA's runtime" : "the simulated runtime");
    snprintf(report, sizeof report, "%s/%s.cudart", ctt_tmpdir(), name);
    char ld[4200], hk[4200], rep[4300], cl[4200];
    snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", libdir);
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", kern);
    snprintf(rep, sizeof rep, "FAKECUDA_CUDART_REPORT=%s", report);
    snprintf(cl, sizeof cl, "CUTRACE_LIB=%s", lib);
    char *envv[32] = {ld, hk, rep, cl};
    int envc = 4;
    for (int i = 0; env && env[i] && envc < 31; i++)
        envv[envc++] = (char *)env[i];
    envv[envc] = NULL;
    if (ctt_run(p, argv, envv, 120) != 0)
        return -1;
    return nv_check_report(report, want, want_id);
}

int nv_trace(ctt_proc *p, char dir[4096], const char *name, nv_runtime rt, const char *prog,
             const char *const args[], const char *const env[])
{
    char path[4096];
    ctt_path(path, prog);
    snprintf(dir, 4096, "%s/%s", ctt_tmpdir(), name);
    char *argv[64] = {(char *)an_cutrace(), "run", "-q", "-o", dir, "--gpu-timing", "all", "--", path};
    int argc = 9;
    for (int i = 0; args && args[i] && argc < 63; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    return nv_exec(p, name, rt, argv, env);
}

int nv_run(ctt_proc *p, const char *name, nv_runtime rt, const char *prog)
{
    char path[4096];
    ctt_path(path, prog);
    char *argv[] = {path, NULL};
    return nv_exec(p, name, rt, argv, NULL);
}

static const tj *nv_row(const tj *arr, const char *k1, const char *v1, const char *k2, const char *v2)
{
    for (size_t i = 0; arr && i < arr->n; i++) {
        const char *a = tj_str(arr->v[i], k1), *b = k2 ? tj_str(arr->v[i], k2) : NULL;
        if (a && !strcmp(a, v1) && (!k2 || (b && !strcmp(b, v2))))
            return arr->v[i];
    }
    return NULL;
}

int nv_same_counts(const tj *ours, const tj *nvidia, int same_peak)
{
    const tj *ko = tj_get(ours, "kernels"), *kn = tj_get(nvidia, "kernels");
    ASSERT(ko && kn);
    ASSERT_UINT(kn->n, ==, ko->n);
    for (size_t i = 0; i < ko->n; i++) {
        const char *name = tj_str(ko->v[i], "name");
        const tj *other = nv_row(kn, "name", name, NULL, NULL);
        if (!other)
            NV_FAIL("kernel %s: not in NVIDIA's runtime's summary", name);
        ASSERT_INT(tj_num(other, "instances"), ==, tj_num(ko->v[i], "instances"));
    }
    const tj *co = tj_get(ours, "copies"), *cn = tj_get(nvidia, "copies");
    ASSERT(co && cn);
    ASSERT_UINT(cn->n, ==, co->n);
    for (size_t i = 0; i < co->n; i++) {
        const char *op = tj_str(co->v[i], "op"), *kind = tj_str(co->v[i], "host_kind");
        const tj *other = nv_row(cn, "op", op, "host_kind", kind);
        if (!other)
            NV_FAIL("copies %s %s: not in NVIDIA's runtime's summary", op, kind);
        ASSERT_INT(tj_num(other, "count"), ==, tj_num(co->v[i], "count"));
        ASSERT_INT(tj_num(other, "bytes"), ==, tj_num(co->v[i], "bytes"));
    }
    const tj *vo = tj_get(ours, "vram"), *vn = tj_get(nvidia, "vram");
    ASSERT(vo && vn);
    ASSERT_UINT(vn->n, ==, vo->n);
    for (size_t i = 0; i < vo->n; i++) {
        ASSERT_INT(tj_num(vn->v[i], "allocations"), ==, tj_num(vo->v[i], "allocations"));
        ASSERT_INT(tj_num(vn->v[i], "frees"), ==, tj_num(vo->v[i], "frees"));
        if (same_peak)
            ASSERT_INT(tj_num(vn->v[i], "peak_bytes"), ==, tj_num(vo->v[i], "peak_bytes"));
        ASSERT_INT(tj_num(vn->v[i], "failed_count"), ==, tj_num(vo->v[i], "failed_count"));
    }
    static const char *const syncs[] = {"cudaStreamSynchronize", "cudaDeviceSynchronize",
                                        "cudaEventSynchronize", "cudaStreamWaitEvent"};
    const tj *ao = tj_get(ours, "api"), *an = tj_get(nvidia, "api");
    for (size_t i = 0; i < sizeof syncs / sizeof syncs[0]; i++) {
        const tj *a = nv_row(ao, "name", syncs[i], NULL, NULL), *b = nv_row(an, "name", syncs[i], NULL, NULL);
        if (!a != !b)
            NV_FAIL("%s: in one summary only", syncs[i]);
        if (a)
            ASSERT_INT(tj_num(b, "calls"), ==, tj_num(a, "calls"));
    }
    return 0;
}
