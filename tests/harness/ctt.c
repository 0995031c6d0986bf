#define _GNU_SOURCE
#include "ctt.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void ctt_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void ctt_skip(const char *why)
{
    fprintf(stderr, "skipped: %s\n", why);
    fflush(NULL);
    _exit(CTT_SKIP_CODE);
}

const char *ctt_build(void)
{
    const char *b = getenv("CT_BUILD");
    return b ? b : "build";
}

const char *ctt_tmpdir(void)
{
    const char *t = getenv("CT_TEST_TMPDIR");
    if (!t) {
        fprintf(stderr, "CT_TEST_TMPDIR is not set: run tests through the runner\n");
        abort();
    }
    return t;
}

const char *ctt_path(char buf[4096], const char *rel)
{
    snprintf(buf, 4096, "%s/%s", ctt_build(), rel);
    return buf;
}

const char *ctt_status_ok(const char *status, const char *what, const char *script)
{
    static char path[4096], why[4096];
    char *st = ctt_read_file(status, NULL);
    if (!st) {
        snprintf(why, sizeof why, "no %s: the build did not run %s", status, script);
        ctt_skip(why);
    }
    st[strcspn(st, "\n")] = 0;
    if (strncmp(st, "ok ", 3) != 0) {
        snprintf(why, sizeof why, "no %s: %s", what, st);
        free(st);
        ctt_skip(why);
    }
    snprintf(path, sizeof path, "%s", st + 3);
    free(st);
    return path;
}

char *ctt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

static void ctt_append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap ? *cap : 4096);
        while (nc < *len + n + 1)
            nc *= 2;
        *buf = realloc(*buf, nc);
        if (!*buf)
            abort();
        *cap = nc;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = 0;
}

/* The environment a child gets: environ with env's "NAME=value" set and "NAME=" unset. The
 * array is malloc'd; its strings are environ's and env's. */
static char **ctt_child_env(char *const env[])
{
    size_t n = 0, extra = 0;
    while (environ[n])
        n++;
    while (env && env[extra])
        extra++;
    char **out = malloc((n + extra + 1) * sizeof *out);
    if (!out)
        abort();
    memcpy(out, environ, n * sizeof *out);
    for (size_t i = 0; i < extra; i++) {
        const char *eq = strchr(env[i], '=');
        if (!eq)
            continue;
        size_t nl = (size_t)(eq - env[i]) + 1, k = 0;
        while (k < n && strncmp(out[k], env[i], nl))
            k++;
        if (eq[1] == 0) {
            if (k < n)
                out[k] = out[--n];
        } else if (k < n)
            out[k] = env[i];
        else
            out[n++] = env[i];
    }
    out[n] = NULL;
    return out;
}

/* posix_spawn rather than fork: a fork makes every page the test process wrote read-only until
 * its next write, and under ASan (whose quarantine cycles through hundreds of megabytes) those
 * copy-on-write faults were 2/3 of the analyzer-asan suite's CPU time in process-heavy tests. */
int ctt_run(ctt_proc *p, char *const argv[], char *const env[], int timeout_s)
{
    memset(p, 0, sizeof *p);
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(pe, O_CLOEXEC) < 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    char **cenv = ctt_child_env(env);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &fa, &at, argv, cenv);
    free(cenv);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    if (err) {
        /* told as a program that could not be started is told by a shell: status 127 */
        close(po[0]);
        close(pe[0]);
        char msg[4200];
        snprintf(msg, sizeof msg, "exec %s: %s\n", argv[0], strerror(err));
        p->out = strdup("");
        p->err = strdup(msg);
        if (!p->out || !p->err)
            abort();
        p->err_len = strlen(msg);
        p->exited = 1;
        p->code = 127;
        return 0;
    }
    size_t ocap = 0, ecap = 0;
    ctt_append(&p->out, &p->out_len, &ocap, "", 0);
    ctt_append(&p->err, &p->err_len, &ecap, "", 0);
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int killed = 0;
    while (open_fds > 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left_ms = (long)timeout_s * 1000 - ((now.tv_sec - start.tv_sec) * 1000 +
                                                 (now.tv_nsec - start.tv_nsec) / 1000000);
        if (left_ms <= 0 && !killed) {
            kill(-pid, SIGKILL);
            killed = 1;
            left_ms = 1000;
        }
        int r = poll(fds, 2, (int)(left_ms > 0 ? left_ms : 1000));
        if (r < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[8192];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                if (i == 0)
                    ctt_append(&p->out, &p->out_len, &ocap, buf, (size_t)n);
                else
                    ctt_append(&p->err, &p->err_len, &ecap, buf, (size_t)n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
        if (killed && r == 0)
            break;
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st)) {
        p->exited = 1;
        p->code = WEXITSTATUS(st);
    } else {
        p->exited = 0;
        p->code = WTERMSIG(st);
    }
    if (killed)
        fprintf(stderr, "ctt_run: %s killed after %d s\n", argv[0], timeout_s);
    return 0;
}

void ctt_proc_free(ctt_proc *p)
{
    free(p->out);
    free(p->err);
    memset(p, 0, sizeof *p);
}
