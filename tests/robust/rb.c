#define _GNU_SOURCE
#include "rb.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "fz.h"

void rb_open(rb_trace *t, const char *path)
{
    static char scratch[1 << 16];
    ct_header h;
    memset(t, 0, sizeof *t);
    t->buf = malloc(4u << 20);
    if (!t->buf || ct_header_collect(&h, "test", "robust", scratch, sizeof scratch) != 0 ||
        ct_writer_open(&t->w, path, &h, NULL) != 0) {
        fprintf(stderr, "rb_open: cannot create %s\n", path);
        abort();
    }
    ct_enc_init(&t->e, t->buf, 4u << 20);
    t->tid = 1000;
}

int rb_chunk(rb_trace *t, uint64_t low_water)
{
    ct_chunk_info ci = {.tid = t->tid, .low_water = low_water};
    return ct_writer_chunk(t->w, &t->e, &ci, 1);
}

int rb_close(rb_trace *t, uint64_t ts)
{
    ct_rec_end end = {CT_END_EXIT, 0, 1, 0};
    int rc = ct_enc_end(&t->e, ts, &end);
    if (rc == 0)
        rc = rb_chunk(t, 0);
    int rc2 = ct_writer_close(t->w);
    free(t->buf);
    return rc ? rc : rc2;
}

/* The peak resident size of a running process (VmHWM of /proc/PID/status, KiB), or 0. */
static long rb_hwm(pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *h = strstr(buf, "VmHWM:");
    return h ? strtol(h + 6, NULL, 10) : 0;
}

/* ctt_run, but through posix_spawn, returning the command's own peak resident size. The
 * kernel's rusage of a child counts the memory of the process that spawned it (the address
 * space it replaced at exec), so the peak is the larger of VmHWM sampled while it runs and the
 * rusage figure when that exceeds this process's own peak (its VmHWM). Output goes through files in the
 * test's directory. 0, or -1 if it could not be started. */
static int rb_spawn(ctt_proc *p, char *const argv[], char *const env[], int timeout_s,
                    long *maxrss_kb)
{
    static unsigned seq;
    char out[4096], err[4096];
    snprintf(out, sizeof out, "%s/.rb-out-%u", ctt_tmpdir(), seq);
    snprintf(err, sizeof err, "%s/.rb-err-%u", ctt_tmpdir(), seq++);
    long self = rb_hwm(getpid());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + 16, sizeof *envp);
    memcpy(envp, environ, n * sizeof *envp);
    for (size_t i = 0; env && env[i] && i < 15; i++)
        envp[n++] = env[i];
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    memset(p, 0, sizeof *p);
    if (rc != 0) {
        fprintf(stderr, "rb_spawn: %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    struct rusage ru;
    int st = 0;
    long hwm = 0;
    for (int waited_ms = 0;; waited_ms += 5) {
        long h = rb_hwm(pid);
        hwm = h > hwm ? h : hwm;
        pid_t w = wait4(pid, &st, WNOHANG, &ru);
        if (w == pid)
            break;
        if (waited_ms == timeout_s * 1000) {
            fprintf(stderr, "rb_spawn: %s killed after %d s\n", argv[0], timeout_s);
            kill(pid, SIGKILL);
        }
        usleep(5000);
    }
    /* 1 MiB of slack: the kernel's per-thread counters lag slightly behind. */
    *maxrss_kb = ru.ru_maxrss > self + 1024 ? ru.ru_maxrss : hwm;
    p->exited = WIFEXITED(st);
    p->code = p->exited ? WEXITSTATUS(st) : WTERMSIG(st);
    p->out = ctt_read_file(out, &p->out_len);
    p->err = ctt_read_file(err, &p->err_len);
    unlink(out);
    unlink(err);
    if (!p->out || !p->err) {
        fprintf(stderr, "rb_spawn: %s: cannot read its output back from %s\n", argv[0], out);
        return -1;
    }
    return 0;
}

int rb_cutrace(ctt_proc *p, int asan, char *const args[], int want, long *maxrss_kb)
{
    char bin[4096];
    ctt_path(bin, asan ? "asan/bin/cutrace" : "bin/cutrace");
    char *argv[32];
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    /* A distinct status for sanitizer reports: 1 is cutrace's own "found a problem". */
    char *env[] = {"ASAN_OPTIONS=exitcode=86:detect_leaks=1",
                   "UBSAN_OPTIONS=halt_on_error=1:exitcode=86:print_stacktrace=1", NULL};
    long rss;
    ASSERT_INT(rb_spawn(p, argv, env, 120, &rss), ==, 0);
    if (maxrss_kb)
        *maxrss_kb = rss;
    if (!p->exited || strstr(p->err, "Sanitizer") || strstr(p->err, "runtime error") ||
        (want >= 0 ? p->code != want : p->code != 0 && p->code != 3)) {
        ctt_fail_at(__FILE__, __LINE__, "cutrace %s (%s build) on %s: %s %d (expected %d); "
                        "stderr:\n%.4000s", args[0], asan ? "sanitizer" : "plain",
                        argv[n - 1], p->exited ? "exit status" : "killed by signal", p->code,
                        want, p->err);
        return 1;
    }
    return 0;
}

int rb_all_commands(const char *path, int want_rc, long max_rss_mb, const char *warn)
{
    for (int asan = 0; asan < 2; asan++) {
        for (size_t c = 0; fz_commands[c]; c++) {
            char *args[16];
            fz_argv(c, path, args);
            ctt_proc p;
            long rss;
            int failed = rb_cutrace(&p, asan, args, want_rc, &rss);
            fz_scratch_remove();
            if (failed)
                return 1;
            if (!asan && rss > max_rss_mb * 1024) {
                ctt_fail_at(__FILE__, __LINE__, "cutrace %s on %s: %ld KiB resident, "
                                "bound %ld MiB", args[0], path, rss, max_rss_mb);
                return 1;
            }
            if (warn && !strstr(p.err, warn)) {
                ctt_fail_at(__FILE__, __LINE__, "cutrace %s on %s: stderr lacks \"%s\":\n%s",
                                args[0], path, warn, p.err);
                return 1;
            }
            ctt_proc_free(&p);
        }
    }
    return 0;
}

uint8_t *rb_slurp(const char *path, size_t *len)
{
    uint8_t *b = (uint8_t *)ctt_read_file(path, len);
    if (!b) {
        fprintf(stderr, "rb_slurp: cannot read %s\n", path);
        abort();
    }
    return b;
}

int rb_spit(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(buf, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

typedef struct {
    char *buf;
    size_t cap, len;
} rb_warns;

static void rb_warn(void *ctx, const char *path, const char *msg)
{
    rb_warns *w = ctx;
    (void)path;
    if (w->buf && w->len + 1 < w->cap)
        w->len += (size_t)snprintf(w->buf + w->len, w->cap - w->len, "%s\n", msg);
    if (w->len >= w->cap)
        w->len = w->cap - 1;
}

long rb_read(const char *path, uint32_t type, ct_stats *st, char *warn, size_t warnlen)
{
    rb_warns w = {warn, warnlen, 0};
    if (warn && warnlen)
        warn[0] = 0;
    ct_reader_opts o = {.warn = rb_warn, .warn_ctx = &w};
    ct_reader *r;
    char err[1024];
    if (ct_reader_open(&r, &path, 1, &o, err, sizeof err) < 0) {
        if (warn)
            snprintf(warn, warnlen, "%s", err);
        return -1;
    }
    ct_rec rec;
    long n = 0;
    int got;
    while ((got = ct_reader_next(r, &rec)) > 0)
        n += !type || rec.type == type;
    if (st)
        *st = *ct_reader_stats(r, 0);
    ct_reader_close(r);
    return got < 0 ? -1 : n;
}
