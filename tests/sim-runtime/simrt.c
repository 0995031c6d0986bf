#define _GNU_SOURCE
#include "simrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakecudart.h"

int simrt_setup(const char *devices)
{
    if (devices)
        setenv("FAKECUDA_DEVICES", devices, 1);
    else
        unsetenv("FAKECUDA_DEVICES");
    unsetenv("FAKECUDA_INSTANT");
    if (!fakecudart_loaded()) {
        ctt_fail_at(__FILE__, __LINE__, "expected the simulated libcudart.so.13 in this "
                        "process, found another (no fakecuda_runtime_version symbol)");
        return 1;
    }
    return 0;
}

/* Runs PROG with `args` on the simulated driver: with `nvidia`, on NVIDIA's libcudart.so.13 (a
 * directory holding only a link to the simulated driver on LD_LIBRARY_PATH), else on ours (with
 * `shim`, the stand-in driver first). */
static int simrt_exec(ctt_proc *p, const char *prog, const char *const args[], char *const env[], int shim,
                      int nvidia, char **log)
{
    char rel[256], bin[4096], fake[4096], shimdir[4096], driver[4096], hostk[4096];
    char ld[8300], hk[4200], sd[4200], sl[4200], logpath[4096];
    snprintf(rel, sizeof rel, "tests/sim-runtime/%s", prog);
    ctt_path(bin, rel);
    ctt_path(fake, "tests/fakecuda");
    ctt_path(shimdir, "tests/sim-runtime/shim");
    ctt_path(driver, "tests/fakecuda/libcuda.so.1");
    ctt_path(hostk, "tests/sim-runtime/host_kernels.so");
    snprintf(logpath, sizeof logpath, "%s/shim.log", ctt_tmpdir());
    char driver_only[4096];
    snprintf(driver_only, sizeof driver_only, "%s/driver-only", ctt_tmpdir());
    if (nvidia && (mkdir(driver_only, 0755) != 0 || symlink(driver, strcat(driver_only, "/libcuda.so.1")) != 0))
        return -1;
    if (nvidia)
        snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s/driver-only", ctt_tmpdir());
    else if (shim)
        snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s:%s", shimdir, fake);
    else
        snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", fake);
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", hostk);
    snprintf(sd, sizeof sd, "FC_SHIM_DRIVER=%s", driver);
    snprintf(sl, sizeof sl, "FC_SHIM_LOG=%s", logpath);
    char *envs[32] = {ld, hk, sd, sl, "FAKECUDA_INSTANT="};
    size_t n = 5;
    for (size_t i = 0; env && env[i] && n < 31; i++)
        envs[n++] = env[i];
    envs[n] = NULL;
    unlink(logpath); /* each run's log starts empty */
    char *argv[16] = {bin};
    for (size_t i = 0; args && args[i] && i < 14; i++)
        argv[i + 1] = (char *)args[i];
    int r = ctt_run(p, argv, envs, 60);
    if (log) {
        *log = ctt_read_file(logpath, NULL);
        if (!*log)
            *log = strdup("");
    }
    return r;
}

int simrt_run(ctt_proc *p, const char *prog, char *const env[], int shim, char **log)
{
    return simrt_exec(p, prog, NULL, env, shim, 0, log);
}

int simrt_run_nvidia(ctt_proc *p, const char *prog, const char *const args[])
{
    char report[4096], env_report[4200];
    snprintf(report, sizeof report, "%s/cudart.report", ctt_tmpdir());
    snprintf(env_report, sizeof env_report, "FAKECUDA_CUDART_REPORT=%s", report);
    char *env[] = {env_report, NULL};
    if (simrt_exec(p, prog, args, env, 0, 1, NULL) != 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s: could not make its driver-only directory or run it", prog);
        return -1;
    }
    char *text = ctt_read_file(report, NULL);
    char want[4200];
    snprintf(want, sizeof want, " %s ", SIMRT_NV_CUDART);
    int ok = text && strstr(text, want) && !strstr(text, "tests/fakecuda");
    if (!ok)
        ctt_fail_at(__FILE__, __LINE__, "%s: expected NVIDIA's runtime (%s) alone, found %s", report,
                    SIMRT_NV_CUDART, text ? text : "no report");
    free(text);
    return ok ? 0 : -1;
}

int simrt_count_lines(const char *text, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *s = text; s && *s;) {
        const char *eol = strchr(s, '\n');
        size_t l = eol ? (size_t)(eol - s) : strlen(s);
        n += l == len && memcmp(s, line, len) == 0;
        s = eol ? eol + 1 : s + l;
    }
    return n;
}
