/* The Kineto inputs of a command (cta_kineto_open.h). */
#define _GNU_SOURCE
#include "cta_kineto_open.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cta_cli.h"
#include "cta_map.h"

/* A file named alone is read as Kineto when it is JSON at all (a cutrace timeline too), for the
 * read to say what it is; a directory's files only when they are traces (`json`: which). */
static int is_kineto_file(const char *path, int json)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int k = cta_kineto_sniff(path);
    return k == CTA_KFILE_TRACE || (json && (k == CTA_KFILE_JSON || k == CTA_KFILE_TIMELINE));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The Kineto traces of a directory as HTA's TraceAnalysis(trace_dir=...) takes them: the files
 * directly in it whose names end in .json or .gz, here only those that are Kineto traces, by
 * name. Returns how many were appended to *v (grown with cta_grow). */
static size_t dir_files(const char *dir, char ***v, size_t *n, size_t *cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t first = *n;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (!(l > 5 && !strcmp(e->d_name + l - 5, ".json")) && !(l > 3 && !strcmp(e->d_name + l - 3, ".gz")))
            continue;
        size_t sz = strlen(dir) + l + 2;
        char *path = cta_xmalloc(sz, "Kineto file name");
        snprintf(path, sz, "%s/%s", dir, e->d_name);
        if (!is_kineto_file(path, 0)) {
            free(path);
            continue;
        }
        cta_grow(v, cap, *n + 1, sizeof **v);
        (*v)[(*n)++] = path;
    }
    closedir(d);
    if (*n > first) /* *v may still be NULL */
        qsort(*v + first, *n - first, sizeof **v, by_name);
    return *n - first;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cta_kineto_is_input(const char *path)
{
    if (!is_dir(path))
        return is_kineto_file(path, 1);
    char **v = NULL;
    size_t nv = 0, cap = 0;
    int any = dir_files(path, &v, &nv, &cap) > 0;
    for (size_t j = 0; j < nv; j++)
        free(v[j]);
    free(v);
    return any;
}

void cta_kineto_files(char *const *paths, int npaths, char ***out, size_t *nout)
{
    char **files = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < npaths; i++) {
        if (is_dir(paths[i])) {
            dir_files(paths[i], &files, &n, &cap);
        } else {
            cta_grow(&files, &cap, n + 1, sizeof *files);
            files[n] = cta_xmalloc(strlen(paths[i]) + 1, "Kineto file name");
            strcpy(files[n++], paths[i]);
        }
    }
    *out = files;
    *nout = n;
}

typedef struct {
    char *orig, *conv;
    cta_kconv_stats st;
} kdone;

static kdone *done;
static size_t ndone, done_cap;

/* Also from a signal handler: unlink alone, on names complete before they were counted. */
static void unlink_converted(void)
{
    for (size_t i = 0; i < ndone; i++)
        unlink(done[i].conv);
}

static void on_fatal(int sig)
{
    unlink_converted();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_converted(void)
{
    for (size_t i = 0; i < ndone; i++) {
        unlink(done[i].conv);
        free(done[i].orig);
        free(done[i].conv);
    }
    free(done);
    done = NULL;
    ndone = done_cap = 0;
}

static const kdone *done_conv(const char *conv)
{
    for (size_t i = 0; conv && i < ndone; i++)
        if (!strcmp(done[i].conv, conv))
            return &done[i];
    return NULL;
}

/* The converted trace of Kineto file path: converted now if it was not yet. */
static const char *converted(const char *cmd, const char *path)
{
    for (size_t i = 0; i < ndone; i++)
        if (!strcmp(done[i].orig, path))
            return done[i].conv;
    static int registered;
    if (!registered) {
        atexit(remove_converted);
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            struct sigaction old;
            if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
                signal(sigs[i], on_fatal);
        }
        registered = 1;
    }
    char out[4096], err[1024];
    cta_kmeta meta;
    cta_kconv_stats st;
    if (cta_kineto_convert(path, out, sizeof out, &meta, &st, err, sizeof err) != 0) {
        fprintf(stderr, "cutrace %s: error: %s\n", cmd, err);
        return NULL;
    }
    if (st.dropped_events) {
        char why[1024];
        fprintf(stderr, "cutrace %s: warning: %s: %llu of its %llu events dropped: %s\n", cmd, path,
                (unsigned long long)st.dropped_events, (unsigned long long)st.events,
                cta_kconv_dropped_text(&st, why, sizeof why));
    }
    kdone d = {strdup(path), strdup(out), st};
    if (!d.orig || !d.conv) {
        unlink(out);
        fprintf(stderr, "cutrace %s: error: out of memory\n", cmd);
        exit(CTA_EXIT_FAIL);
    }
    /* a signal may come while the list grows: the handler sees the old list until the new
     * one holds the entry */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    cta_grow(&done, &done_cap, ndone + 1, sizeof *done);
    done[ndone++] = d;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return d.conv;
}

/* The reader's warnings about a converted trace name the Kineto file; the missing END record
 * is how every Kineto trace is (the summary says so), not damage. */
static void warn_kineto(void *ctx, const char *path, const char *msg)
{
    (void)ctx;
    if (strstr(msg, "no end record"))
        return;
    const kdone *d = done_conv(path);
    fprintf(stderr, "cutrace: warning: %s: %s\n", d ? d->orig : path, msg);
}

int cta_kineto_open(const char *cmd, char *const *paths, int npaths, int kineto, ct_reader **rd)
{
    if (kineto < 0) {
        fprintf(stderr, "cutrace %s: error: expected either cutrace traces or Kineto traces, found both\n", cmd);
        return CTA_EXIT_INPUT;
    }
    char **files = NULL;
    size_t n = 0;
    cta_kineto_files(paths, npaths, &files, &n);
    const char **conv = cta_xmalloc((n ? n : 1) * sizeof *conv, "the converted traces' names");
    int rc = CTA_EXIT_OK;
    for (size_t i = 0; i < n && rc == CTA_EXIT_OK; i++)
        if (!(conv[i] = converted(cmd, files[i])))
            rc = CTA_EXIT_INPUT;
    if (rc == CTA_EXIT_OK) {
        ct_reader_opts opts = {.warn = warn_kineto};
        rc = cta_cli_open(rd, (char *const *)conv, n, &opts);
    }
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(conv);
    return rc;
}

const char *cta_kineto_source(const ct_reader *rd, uint32_t file)
{
    const ct_header *h = ct_reader_header(rd, file);
    if (!h || !h->tracer_version || strcmp(h->tracer_version, "kineto"))
        return NULL;
    const kdone *d = done_conv(ct_reader_path(rd, file));
    return d ? d->orig : h->exe ? h->exe : "";
}

const char *cta_kineto_display_path(const ct_reader *rd, uint32_t file)
{
    const char *k = cta_kineto_source(rd, file);
    return k ? k : ct_reader_path(rd, file);
}

const cta_kconv_stats *cta_kineto_source_stats(const ct_reader *rd, uint32_t file)
{
    /* a trace whose header merely says "kineto" (not converted by this command) has none */
    const kdone *d = cta_kineto_source(rd, file) ? done_conv(ct_reader_path(rd, file)) : NULL;
    return d ? &d->st : NULL;
}
