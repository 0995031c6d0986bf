#define _GNU_SOURCE
#include "fl.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

const char *fl_victim(char buf[4096])
{
    return ctt_path(buf, "tests/faults/victim");
}

int fl_plain(ctt_proc *p, char *const cmd[], char *const env[], int timeout_s)
{
    char fake[4096], kernels[4096], llp[4200], hk[4200];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s",
             ctt_path(kernels, "tests/workloads/libworkload_kernels.so"));
    char *e[64] = {llp, hk};
    size_t m = 2;
    for (size_t i = 0; env && env[i] && m < 62; i++)
        e[m++] = env[i];
    e[m] = NULL;
    return ctt_run(p, cmd, e, timeout_s);
}

/* s without " t_ms=N" readings (malloc'd). */
static char *fl_strip(const char *s)
{
    char *o = malloc(strlen(s) + 1), *w = o;
    while (*s) {
        if (!strncmp(s, " t_ms=", 6)) {
            for (s += 6; *s >= '0' && *s <= '9'; s++)
                ;
            continue;
        }
        *w++ = *s++;
    }
    *w = 0;
    return o;
}

int fl_differ(const ctt_proc *a, const ctt_proc *b)
{
    char *x = fl_strip(a->out), *y = fl_strip(b->out);
    int differ = a->exited != b->exited || a->code != b->code || strcmp(x, y) != 0;
    if (differ)
        ctt_fail_at(__FILE__, __LINE__, "traced run differs from the untraced one:\n"
                        "--- traced (%s %d):\n%s--- untraced (%s %d):\n%s--- traced stderr:\n%s",
                        a->exited ? "exit" : "signal", a->code, a->out,
                        b->exited ? "exit" : "signal", b->code, b->out, a->err);
    free(x);
    free(y);
    return differ;
}

pid_t fl_spawn_traced(char *const cmd[], const char *outdir, const char *out)
{
    char lib[4096], fake[4096];
    ctt_path(lib, "lib/libcutrace.so");
    ctt_path(fake, "tests/fakecuda");
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 1) < 0 || setenv("LD_LIBRARY_PATH", fake, 1) ||
            setenv("LD_PRELOAD", lib, 1) || setenv("CUTRACE_OUTPUT", outdir, 1))
            _exit(126);
        execv(cmd[0], cmd);
        _exit(127);
    }
    return pid;
}

size_t fl_count(const tr_trace *t, int file, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->v[i].r.type == CT_REC_API && (file < 0 || t->v[i].r.file == (uint32_t)file) &&
             t->v[i].name && !strcmp(t->v[i].name, name);
    return n;
}

const ct_rec *fl_end(const tr_trace *t, uint32_t file)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == CT_REC_END && t->v[i].r.file == file)
            return &t->v[i].r;
    return NULL;
}
