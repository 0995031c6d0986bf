#include "an_helpers.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *an_cutrace(void)
{
    static char path[4096];
#ifdef __SANITIZE_ADDRESS__
    return ctt_path(path, "asan/bin/cutrace");
#else
    return ctt_path(path, "bin/cutrace");
#endif
}

const char *an_write_tmp(char path[4096], const char *name, const char *text, size_t len)
{
    snprintf(path, 4096, "%s/%s", ctt_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t n = fwrite(text, 1, len, f);
    return fclose(f) == 0 && n == len ? path : NULL;
}

int an_prefixed_file(char path[4096], const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int found = -1;
    size_t n = strlen(prefix);
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, n) && !strncmp(e->d_name + n, "--", 2)) {
            snprintf(path, 4096, "%s/%s", dir, e->d_name);
            found = 0;
        }
    closedir(d);
    return found;
}

/* Splits s (copied into buf) on spaces into argv after the given first arguments. */
static int split(char *buf, char **argv, int n, int max)
{
    for (char *tok = strtok(buf, " "); tok && n < max - 1; tok = strtok(NULL, " "))
        argv[n++] = tok;
    argv[n] = NULL;
    return n;
}

const char *an_gen_out(char dir[4096], const char *name, const char *args, char **out)
{
    char gen[4096], buf[2048];
    snprintf(dir, 4096, "%s/%s", ctt_tmpdir(), name);
    snprintf(buf, sizeof buf, "%s", args ? args : "");
    char *argv[64] = {(char *)ctt_path(gen, "tests/analyzer/tracegen"), "-o", dir};
    split(buf, argv, 3, 64);
    ctt_proc p;
    if (out)
        *out = NULL;
    if (ctt_run(&p, argv, NULL, 60) != 0)
        return NULL;
    int ok = p.exited && p.code == 0;
    if (!ok)
        fprintf(stderr, "tracegen %s failed (%d): %s\n", args, p.code, p.err);
    if (ok && out)
        *out = strdup(p.out ? p.out : "");
    ctt_proc_free(&p);
    return ok ? dir : NULL;
}

const char *an_gen(char dir[4096], const char *name, const char *args)
{
    return an_gen_out(dir, name, args, NULL);
}

int an_run(ctt_proc *p, const char *args, const char *path)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", args);
    char *argv[64] = {(char *)an_cutrace()};
    int n = split(buf, argv, 1, 64);
    for (int i = 1; i < n; i++)
        if (!strcmp(argv[i], "{}"))
            argv[i] = (char *)path;
    return ctt_run(p, argv, NULL, 120);
}

tj *an_summary(const char *path, const char *extra)
{
    char args[1024];
    snprintf(args, sizeof args, "summary --json %s {}", extra ? extra : "");
    ctt_proc p;
    if (an_run(&p, args, path) != 0)
        return NULL;
    tj *j = NULL;
    if (!p.exited || p.code != 0) {
        fprintf(stderr, "cutrace %s exited %d/%d: %s\n", args, p.exited, p.code, p.err);
    } else {
        char err[256];
        j = tj_parse(p.out, err, sizeof err);
        if (!j)
            fprintf(stderr, "cutrace %s: invalid JSON: %s\n", args, err);
    }
    ctt_proc_free(&p);
    return j;
}

tj *an_timeline(const char *path)
{
    char out[4096], args[4200];
    snprintf(out, sizeof out, "%s/timeline.json", ctt_tmpdir());
    snprintf(args, sizeof args, "timeline {} -o %s", out);
    ctt_proc p;
    int ok = an_run(&p, args, path) == 0 && p.exited && p.code == 0;
    if (!ok)
        fprintf(stderr, "cutrace %s exited %d/%d: %s\n", args, p.exited, p.code, p.err);
    ctt_proc_free(&p);
    char *text = ok ? ctt_read_file(out, NULL) : NULL, err[256];
    tj *j = text ? tj_parse(text, err, sizeof err) : NULL;
    if (text && !j)
        fprintf(stderr, "%s: invalid JSON: %s\n", out, err);
    free(text);
    return j;
}

const tj *an_diag(const tj *s, const char *id)
{
    return tj_find(tj_get(s, "diagnoses"), "id", id);
}

int an_diag_count(const tj *s, const char *id)
{
    const tj *d = tj_get(s, "diagnoses");
    int n = 0;
    for (size_t i = 0; d && i < d->n; i++)
        n += tj_str(d->v[i], "id") && !strcmp(tj_str(d->v[i], "id"), id);
    return n;
}

tj *an_fires(const char *id, const char *bad, const char *good)
{
    char d1[4096], d2[4096];
    if (!an_gen(d1, "bad", bad) || !an_gen(d2, "good", good))
        return NULL;
    tj *b = an_summary(d1, NULL), *g = an_summary(d2, NULL);
    if (!b || !g) {
        tj_free(b);
        tj_free(g);
        return NULL;
    }
    int fired = an_diag(b, id) != NULL, silent = an_diag(g, id) == NULL;
    if (!fired)
        fprintf(stderr, "%s did not fire on a trace with the problem (tracegen %s)\n", id, bad);
    if (!silent)
        fprintf(stderr, "%s fired on the fixed variant (tracegen %s): %s\n", id, good,
                tj_str(an_diag(g, id), "message"));
    tj_free(g);
    if (!fired || !silent) {
        tj_free(b);
        return NULL;
    }
    return b;
}

const char *an_trace_workload(char dir[4096], const char *name, const char *prog_args,
                              char *const *env, char **out)
{
    return an_trace_workload_err(dir, name, prog_args, env, out, NULL);
}

int an_run_workload(ctt_proc *p, char dir[4096], const char *name, const char *prog_args,
                    char *const *env, int traced)
{
    char lib[4096], prog[4096], fake[4096], kern[4096], ld[4200], hk[4200], buf[1024];
    ctt_path(lib, "lib/libcutrace.so");
    ctt_path(fake, "tests/fakecuda/libcuda.so.1");
    ctt_path(kern, "tests/workloads/libworkload_kernels.so");
    snprintf(buf, sizeof buf, "%s", prog_args);
    char *argv[64] = {(char *)an_cutrace(), "run", "-q", "-o", dir, "--gpu-timing", "all", "--"};
    for (int i = 0; env && env[i]; i++)
        if (!strncmp(env[i], "CUTRACE_GPU_TIMING=", 19))
            argv[6] = env[i] + 19;
    split(buf, argv, 8, 64);
    ctt_path(prog, "tests/workloads/");
    if (argv[8][0] == '/') /* an interpreter running a workload script */
        prog[0] = 0;
    snprintf(prog + strlen(prog), sizeof prog - strlen(prog), "%s", argv[8]);
    argv[8] = prog;
    if (access(lib, R_OK) || access(fake, R_OK) || access(kern, R_OK) || access(prog, X_OK))
        ctt_skip("the tracer or the workloads are not built");
    snprintf(dir, 4096, "%s/%s", ctt_tmpdir(), name);
    snprintf(ld, sizeof ld, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", kern);
    char cl[4200];
    snprintf(cl, sizeof cl, "CUTRACE_LIB=%s", lib); /* the sanitizer build's cutrace too */
    char *envv[16] = {ld, hk, cl};
    int k = 3;
    for (int i = 0; env && env[i] && k < 15; i++)
        envv[k++] = env[i];
    envv[k] = NULL;
    return ctt_run(p, traced ? argv : argv + 8, envv, 120);
}

const char *an_trace_workload_err(char dir[4096], const char *name, const char *prog_args,
                                  char *const *env, char **out, char **err)
{
    *out = NULL;
    ctt_proc p;
    if (an_run_workload(&p, dir, name, prog_args, env, 1) != 0)
        return NULL;
    int ok = p.exited && p.code == 0;
    if (!ok && p.exited) /* a death by signal is what some workloads are for */
        fprintf(stderr, "cutrace run %s failed (%d): %s\n", prog_args, p.code, p.err);
    *out = p.out;
    p.out = NULL;
    if (err) {
        *err = p.err;
        p.err = NULL;
    }
    ctt_proc_free(&p);
    return ok ? dir : NULL;
}

int an_marker_line(const char *path, const char *what)
{
    char line[1024], want[128];
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    snprintf(want, sizeof want, "# cutrace: %s\n", what);
    int n = 0, found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        n++;
        const char *c = strstr(line, "# cutrace: ");
        found = c && !strcmp(c, want);
    }
    fclose(f);
    return found ? n : 0;
}

void an_sampled_stacks(const char *dump, unsigned char *sampled, size_t n)
{
    memset(sampled, 0, n);
    for (const char *l = strstr(dump, " thread-sample "); l; l = strstr(l + 1, " thread-sample ")) {
        const char *at = strstr(l, " stack="), *end = strchr(l, '\n');
        unsigned long sid = at && (!end || at < end) ? strtoul(at + 7, NULL, 10) : 0;
        if (sid < n)
            sampled[sid] = 1;
    }
}
