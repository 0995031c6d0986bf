/* Running the suite's Python programs (see pt.h). */
#define _GNU_SOURCE
#include "pt.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The venv's python from the status tests/pytorch/venv.sh wrote, or a skip. */
static const char *pt_python(char out[4096])
{
    snprintf(out, 4096, "%s/bin/python",
             ctt_status_ok(PT_STATUS, "PyTorch virtual environment", "tests/pytorch/venv.sh"));
    return out;
}

int pt_run(ctt_proc *p, char dir[4096], const char *name, int traced, const char *script,
           const char *const args[], const char *const env[])
{
    char py[4096], src[4200], drv[4096], lib[4096];
    pt_python(py);
    if (script[0] == '/')
        snprintf(src, sizeof src, "%s", script);
    else
        snprintf(src, sizeof src, "%s/%s", PT_SRC, script);
    ctt_path(drv, "tests/nvrt/driver");
    ctt_path(lib, "lib/libcutrace.so");
    snprintf(dir, 4096, "%s/%s", ctt_tmpdir(), name);
    char *argv[64];
    int argc = 0;
    if (traced) {
        const char *const run[] = {an_cutrace(), "run", "-q", "-o", dir, "--gpu-timing", "all", "--"};
        for (size_t i = 0; i < sizeof run / sizeof run[0]; i++)
            argv[argc++] = (char *)run[i];
    }
    argv[argc++] = py;
    argv[argc++] = src;
    for (int i = 0; args && args[i] && argc < 63; i++)
        argv[argc++] = (char *)args[i];
    argv[argc] = NULL;
    /* bytecode would be written next to the sources, inside the clone */
    char ld[4200], cl[4200];
    snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", drv);
    snprintf(cl, sizeof cl, "CUTRACE_LIB=%s", lib);
    char *envv[32] = {ld, cl, "PYTHONDONTWRITEBYTECODE=1"};
    int envc = 3;
    for (int i = 0; env && env[i] && envc < 31; i++)
        envv[envc++] = (char *)env[i];
    envv[envc] = NULL;
    if (ctt_run(p, argv, envv, 300) != 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s: could not be started", src);
        return 1;
    }
    if (!p->exited || p->code != 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s%s: expected exit status 0, found %s %d; stderr:\n%s",
                        traced ? "cutrace run -- " : "", script, p->exited ? "exit status" : "signal",
                        p->code, p->err);
        return 1;
    }
    return 0;
}

int pt_run_both(ctt_proc *p, char dir[4096], const char *name, const char *script,
                const char *const args[], const char *const env[])
{
    ctt_proc plain;
    char unused[4096];
    if (pt_run(&plain, unused, name, 0, script, args, env) != 0)
        return 1;
    if (pt_run(p, dir, name, 1, script, args, env) != 0)
        return 1;
    ASSERT_STR(p->out, plain.out);
    ctt_proc_free(&plain);
    return 0;
}

int pt_trace_files(const char *dir, char one[4096])
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 8 && !strcmp(e->d_name + len - 8, ".cutrace")) {
            snprintf(one, 4096, "%s/%s", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

double pt_kernel_instances(const tj *summary, const char *part)
{
    const tj *k = tj_get(summary, "kernels");
    double n = 0;
    for (size_t i = 0; k && i < k->n; i++) {
        const char *name = tj_str(k->v[i], "name");
        if (name && strstr(name, part))
            n += tj_num(k->v[i], "instances");
    }
    return n;
}

static int pt_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double pt_median_of(const char *text, const char *prefix)
{
    double v[1024];
    size_t n = 0, plen = strlen(prefix);
    for (const char *l = text; l && *l && n < 1024; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, prefix, plen) && l[plen] == ' ')
            v[n++] = strtod(l + plen + 1, NULL);
    return pt_median(v, n);
}

double pt_median(double *v, size_t n)
{
    if (!n)
        return -1;
    qsort(v, n, sizeof v[0], pt_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int pt_marker_line(const char *script, const char *marker)
{
    char src[4200], want[128];
    snprintf(src, sizeof src, "%s/%s", PT_SRC, script);
    snprintf(want, sizeof want, "# cutrace: %s\n", marker);
    char *text = ctt_read_file(src, NULL);
    int line = 0, n = 1;
    for (const char *l = text ? text : ""; *l && !line; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "", n++) {
        const char *c = strstr(l, "# cutrace: ");
        if (c && c < strchr(l, '\n') && !strncmp(c, want, strlen(want)))
            line = n;
    }
    free(text);
    if (!line)
        ctt_fail_at(__FILE__, __LINE__, "%s: expected a line marked \"# cutrace: %s\", found none",
                    src, marker);
    return line;
}

int pt_python_frame_at(const char *trace, const char *script, const char *marker)
{
    char src[4200], frame[4400];
    int line = pt_marker_line(script, marker);
    if (!line)
        return 1;
    snprintf(src, sizeof src, "%s/%s", PT_SRC, script);
    snprintf(frame, sizeof frame, "module=\"%s\"", src);
    ctt_proc p;
    ASSERT_INT(an_run(&p, "dump {}", trace), ==, 0);
    int found = 0;
    for (char *l = strtok(p.out, "\n"); l && !found; l = strtok(NULL, "\n")) {
        const char *m = strstr(l, frame), *k = strstr(l, " kind=1 line=");
        found = strstr(l, " frame ") && m && k && atoi(k + 13) == line;
    }
    ctt_proc_free(&p);
    if (!found)
        ctt_fail_at(__FILE__, __LINE__, "%s: expected a Python frame at %s:%d (# cutrace: %s), found none",
                    trace, src, line, marker);
    return !found;
}
