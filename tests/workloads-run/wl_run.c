#define _GNU_SOURCE
#include "wl_run.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int wl_run(ctt_proc *p, const char *prog, const char *const args[], const char *const env[],
           double *wall_ms)
{
    char path[4096], libdir[4096], kernels[4096], cuda[4096], cudart[4096];
    ctt_path(path, "tests/workloads/");
    strncat(path, prog, sizeof path - strlen(path) - 1);
    ctt_path(libdir, "tests/fakecuda");
    ctt_path(cuda, "tests/fakecuda/libcuda.so.1");
    ctt_path(cudart, "tests/fakecuda/libcudart.so.13");
    ctt_path(kernels, "tests/workloads/libworkload_kernels.so");
    const char *const required[] = {path, kernels, cuda, cudart};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (access(required[i], R_OK) != 0) {
            fprintf(stderr, "wl_run: expected %s to exist (build it first), found nothing\n",
                    required[i]);
            return -1;
        }
    }

    char *argv[64];
    int argc = 0;
    argv[argc++] = path;
    for (int i = 0; args && args[i]; i++) {
        assert(argc < 63);
        argv[argc++] = (char *)args[i];
    }
    argv[argc] = NULL;

    char ld[4200], hk[4200];
    snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", libdir);
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", kernels);
    char *envv[64];
    int envc = 0;
    envv[envc++] = ld;
    envv[envc++] = hk;
    for (int i = 0; env && env[i]; i++) {
        assert(envc < 63);
        envv[envc++] = (char *)env[i];
    }
    envv[envc] = NULL;

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = ctt_run(p, argv, envv, 60);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *wall_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    return r;
}

double wl_num(const char *out, const char *line, const char *key)
{
    char pat[256];
    snprintf(pat, sizeof pat, " %s=", key);
    size_t ll = strlen(line);
    for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, line, ll) != 0)
            continue;
        const char *end = strchr(l, '\n'), *k = strstr(l, pat);
        if (k && (!end || k < end)) {
            char *stop;
            double v = strtod(k + strlen(pat), &stop);
            if (stop != k + strlen(pat))
                return v;
        }
        break;
    }
    fprintf(stderr, "wl_num: expected a line \"%s... %s=NUMBER\", found none in:\n%s", line, key,
            out ? out : "(null)");
    return NAN;
}

int wl_check_death(const char *how, int exited, int code)
{
    ctt_proc p;
    double ms;
    const char *args[] = {"--how", how, "--steps", "3", "--step-ms", "10", NULL};
    ASSERT_INT(wl_run(&p, "dies", args, NULL, &ms), ==, 0);
    ASSERT_STR(p.err, "");
    ASSERT_INT(p.exited, ==, exited);
    ASSERT_INT(p.code, ==, code);
    ASSERT_CONTAINS(p.out, "dies: step 1 done\ndies: step 2 done\ndies: step 3 done\n");
    char last[128];
    snprintf(last, sizeof last, "dies: dying by %s with work in flight\n", how);
    ASSERT_CONTAINS(p.out, last);
    ASSERT(ms >= 30);
    ctt_proc_free(&p);
    return 0;
}

double wl_children_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}
