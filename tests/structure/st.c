/* The structure suite's helpers (st.h). */
#include "st.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

int st_tool(ctt_proc *p, const char *script, char *const args[])
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", ST_DIR, script);
    char *argv[16] = {ST_PYTHON, path};
    size_t n = 2;
    for (size_t i = 0; args[i]; i++) {
        if (n + 1 >= sizeof argv / sizeof argv[0]) {
            fprintf(stderr, "st_tool %s: expected at most %zu arguments\n", script, n - 2);
            return -1;
        }
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    if (ctt_run(p, argv, NULL, 120))
        return -1;
    printf("%s%s", p->out, p->err);
    fflush(stdout);
    return 0;
}

/* mkdir -p of the folders above path. */
static int make_parents(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        if (mkdir(dir, 0755) && errno != EEXIST) {
            fprintf(stderr, "mkdir %s: %s\n", dir, strerror(errno));
            return -1;
        }
        *s = '/';
    }
    return 0;
}

int st_plant(const char *root, const st_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", root, files[i].path);
        if (make_parents(path))
            return -1;
        FILE *f = fopen(path, "w");
        if (!f || fputs(files[i].text, f) == EOF || fclose(f)) {
            fprintf(stderr, "writing %s: %s\n", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

int st_compile(const char *root, const char *obj, const st_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(files[i].path);
        if (len < 2 || strcmp(files[i].path + len - 2, ".c"))
            continue;
        char in[4096], out[4096];
        snprintf(in, sizeof in, "%s/%s", root, files[i].path);
        snprintf(out, sizeof out, "%s/%.*s.o", obj, (int)(len - 2), files[i].path);
        if (make_parents(out))
            return -1;
        char *cc[] = {"cc", "-c", "-I", (char *)root, "-o", out, in, NULL};
        ctt_proc p;
        int bad = ctt_run(&p, cc, NULL, 60) || !p.exited || p.code;
        if (bad)
            fprintf(stderr, "cc -c %s: expected an object, the compiler said:\n%s", in, p.err);
        ctt_proc_free(&p);
        if (bad)
            return -1;
    }
    return 0;
}
