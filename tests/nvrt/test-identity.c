/* The traced process says which CUDA runtime and driver it ran (SHLIB records, shown by the
 * summary and dump): a workload on the simulated runtime names ours, the same workload on
 * NVIDIA's names NVIDIA's. The expected path is resolved here and the build id read by
 * binutils' readelf, neither through cutrace's code nor the simulated driver's. */
#include "nv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The GNU build id `readelf -n` prints for path, into id; 0, or -1 after a message. */
static int readelf_build_id(const char *path, char *id, size_t cap)
{
    char cmd[PATH_MAX + 64], line[512];
    snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>/dev/null", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    id[0] = 0;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "Build ID: ");
        if (at && sscanf(at + 10, "%127s", id) == 1 && strlen(id) < cap)
            break;
    }
    pclose(f);
    if (!id[0])
        fprintf(stderr, "readelf -n %s: expected a \"Build ID:\" line, found none\n", path);
    return id[0] ? 0 : -1;
}

/* The summary's library of kind must be the file at want (resolved) with readelf's build id,
 * in the JSON and on the text summary's Run lines. */
static int expect_library(const char *dir, const tj *s, const char *kind, const char *want)
{
    char real[PATH_MAX], id[128];
    if (!realpath(want, real)) {
        ctt_fail_at(__FILE__, __LINE__, "expected %s to exist", want);
        return 1;
    }
    if (readelf_build_id(real, id, sizeof id) != 0)
        return 1;
    const tj *libs = tj_get(tj_get(s, "processes")->v[0], "libraries");
    const tj *l = tj_find(libs, "kind", kind);
    if (!l) {
        ctt_fail_at(__FILE__, __LINE__, "%s: expected a %s library, found none", dir, kind);
        return 1;
    }
    ASSERT_STR(tj_str(l, "path"), real);
    ASSERT_STR(tj_str(l, "build_id"), id);
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", dir), ==, 0);
    char line[PATH_MAX + 200];
    snprintf(line, sizeof line, "    %s: %s, build id %s\n", kind, real, id);
    ASSERT_CONTAINS(p.out, line);
    ctt_proc_free(&p);
    ASSERT_INT(an_run(&p, "dump {}", dir), ==, 0);
    snprintf(line, sizeof line, " path=\"%s\"", real);
    ASSERT_CONTAINS(p.out, line);
    snprintf(line, sizeof line, " build_id=\"%s\"", id);
    ASSERT_CONTAINS(p.out, line);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(traced_runtime_identity)
{
    const char *args[] = {"--iters", "2", "--loader-ms", "1", NULL};
    static const nv_runtime rts[2] = {NV_OURS, NV_NVIDIA};
    char ours_rt[4096], driver[4096];
    ctt_path(ours_rt, "tests/fakecuda/libcudart.so.13");
    ctt_path(driver, "tests/fakecuda/libcuda.so.1");
    for (int i = 0; i < 2; i++) {
        char dir[4096];
        ctt_proc p;
        if (nv_trace(&p, dir, i ? "nvidia" : "ours", rts[i], "tests/workloads/train_loop", args,
                     NULL) != 0)
            return 1;
        ASSERT_INT(p.code, ==, 0);
        ctt_proc_free(&p);
        tj *s = an_summary(dir, NULL);
        ASSERT(s);
        if (expect_library(dir, s, "cudart", rts[i] == NV_NVIDIA ? NV_CUDART : ours_rt) ||
            expect_library(dir, s, "cuda", driver))
            return 1;
        /* one runtime and one driver: the other runtime is not where the loader searched */
        ASSERT_UINT(tj_get(tj_get(s, "processes")->v[0], "libraries")->n, ==, 2);
        tj_free(s);
    }
    return 0;
}
