#include "cta_paths.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cta_kineto_open.h"
#include "cta_map.h"
#include "cttrace.h"

typedef struct {
    char **v;
    size_t n, cap;
} list;

static void push(list *l, const char *s)
{
    cta_grow(&l->v, &l->cap, l->n + 2, sizeof *l->v);
    l->v[l->n] = strdup(s);
    if (!l->v[l->n])
        abort();
    l->n++;
}

static int is_trace(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char magic[CT_FILE_MAGIC_LEN];
    int ok = fread(magic, 1, sizeof magic, f) == sizeof magic &&
             memcmp(magic, CT_FILE_MAGIC, CT_FILE_MAGIC_LEN) == 0;
    fclose(f);
    return ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk(list *l, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d || depth > 16) {
        if (d)
            closedir(d);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            walk(l, path, depth + 1);
        else if (S_ISREG(st.st_mode) && is_trace(path))
            push(l, path);
    }
    closedir(d);
}

int cta_paths_expand(const char *cmd, char *const *in, int n, char ***out, size_t *nout)
{
    list l = {0};
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (stat(in[i], &st) != 0) {
            fprintf(stderr, "cutrace %s: error: %s: %s (expected a trace file or a directory of traces)\n",
                    cmd, in[i], strerror(errno));
            cta_paths_free(l.v);
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            size_t before = l.n;
            walk(&l, in[i], 0);
            if (l.n == before) {
                fprintf(stderr, "cutrace %s: error: %s: no cutrace trace files in this directory\n",
                        cmd, in[i]);
                cta_paths_free(l.v);
                return -1;
            }
            qsort(l.v + before, l.n - before, sizeof *l.v, cmp_str);
        } else {
            push(&l, in[i]);
        }
    }
    cta_grow(&l.v, &l.cap, l.n + 1, sizeof *l.v);
    l.v[l.n] = NULL;
    *out = l.v;
    *nout = l.n;
    return 0;
}

int cta_paths_has_traces(const char *dir)
{
    list l = {0};
    walk(&l, dir, 0);
    size_t n = l.n;
    for (size_t i = 0; i < n; i++)
        free(l.v[i]);
    free(l.v);
    return n > 0;
}

int cta_paths_kineto(char *const *paths, int n)
{
    int kineto = 0;
    for (int i = 0; i < n; i++)
        /* a directory of cutrace traces stays one, whatever JSON lies beside them (a summary
         * --json or a timeline written there) */
        if (!cta_paths_has_traces(paths[i]))
            kineto += cta_kineto_is_input(paths[i]);
    return kineto == 0 ? 0 : kineto == n ? 1 : -1;
}

void cta_paths_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}
