#define _GNU_SOURCE
#include "simrt.h"

#include <stdio.h>
#include <stdlib.h>
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

int simrt_run(ctt_proc *p, const char *prog, char *const env[], int shim, char **log)
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
    if (shim)
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
    char *argv[] = {bin, NULL};
    int r = ctt_run(p, argv, envs, 60);
    if (log) {
        *log = ctt_read_file(logpath, NULL);
        if (!*log)
            *log = strdup("");
    }
    return r;
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
