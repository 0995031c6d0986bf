/* The trace file (see ctp_output.h). */
#define _GNU_SOURCE
#include "ctp_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctp_fds.h"
#include "ctp_frameworks.h"

#define CTP_VERSION "0.1"

ct_writer *ctp_w;
char ctp_path[PATH_MAX];
int ctp_fd = -1;                                /* ctp_w's descriptor ... */
static dev_t ctp_fd_dev;                        /* ... and the file it must still be */
static ino_t ctp_fd_ino;
int ctp_fd_errno;

static const char *ctp_env_first(const char *const *names, const char *dflt)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v)
            return v;
    }
    return dflt;
}

/* CUTRACE_OUTPUT with %h (host), %p (pid), %j (slurm job), %r (rank), %% expanded; -1 if it
 * does not fit in cap (out then holds what did). */
static int ctp_expand(const char *pat, char *out, size_t cap)
{
    static const char *const rank_vars[] = {"SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK",
                                            "PMI_RANK", NULL};
    static const char *const job_vars[] = {"SLURM_JOB_ID", NULL};
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    size_t o = 0;
    const char *p = pat;
    for (; *p && o + 1 < cap; p++) {
        char tmp[32];
        const char *ins = NULL;
        if (*p == '%' && p[1]) {
            p++;
            switch (*p) {
            case 'h': ins = host; break;
            case 'p': snprintf(tmp, sizeof tmp, "%d", (int)getpid()); ins = tmp; break;
            case 'j': ins = ctp_env_first(job_vars, "nojob"); break;
            case 'r': ins = ctp_env_first(rank_vars, "0"); break;
            case '%': ins = "%"; break;
            default: tmp[0] = '%'; tmp[1] = *p; tmp[2] = 0; ins = tmp;
            }
            o += (size_t)snprintf(out + o, cap - o, "%s", ins);
        } else {
            out[o++] = *p;
        }
    }
    out[o < cap ? o : cap - 1] = 0;
    return *p || o >= cap ? -1 : 0;
}

static int ctp_mkdirs(char *dir)
{
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int rc = mkdir(dir, 0750);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(dir, 0750) == 0 || errno == EEXIST ? 0 : -1;
}

/* Opens the trace file again for appending. A program that has every descriptor up to its soft
 * limit in use still lets the tracer have one: the limit is raised by one around the open
 * (when the hard limit allows), which leaves the tracer's descriptor above the program's
 * limit, out of reach of its open() and dup2(). */
static int ctp_reopen(void)
{
    int fd = open(ctp_path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    struct rlimit rl;
    if (fd < 0 && errno == EMFILE && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
        rl.rlim_cur < rl.rlim_max) {
        struct rlimit more = {rl.rlim_cur + 1, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &more) == 0) {
            fd = open(ctp_path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
            int err = errno;
            setrlimit(RLIMIT_NOFILE, &rl);
            errno = err;
            return fd;
        }
        errno = EMFILE;
    }
    return fd < 0 ? fd : ctp_fd_aside(fd, 1);
}

static int ctp_fd_is_trace(struct stat *st)
{
    return ctp_fd >= 0 && fstat(ctp_fd, st) == 0 && st->st_dev == ctp_fd_dev &&
           st->st_ino == ctp_fd_ino;
}

int ctp_fd_ours(void)
{
    struct stat st;
    return ctp_fd_is_trace(&st);
}

/* The trace file was removed (st_nlink 0: the file, or its directory, was deleted), and the
 * trace would vanish with the descriptor: the directory and file are made again and what the
 * descriptor holds is copied there, so that nothing is lost. Told once; if it cannot be done,
 * writing goes on into the removed file (its directory may come back). The writer holds the
 * flush: the copy buffer is its. (The trace's descriptors are opened O_RDWR for this copy.) */
static void ctp_relink(void)
{
    static int told;
    static char buf[65536];
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", ctp_path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir)
        *slash = 0;
    uint64_t whole = ct_writer_bytes(ctp_w), at = 0;
    int fd = slash && slash != dir && ctp_mkdirs(dir) != 0 ? -1
             : open(ctp_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
    int err = errno;
    while (fd >= 0 && at < whole) {
        size_t want = whole - at < sizeof buf ? (size_t)(whole - at) : sizeof buf;
        ssize_t got = pread(ctp_fd, buf, want, (off_t)at);
        if (got <= 0 || write(fd, buf, (size_t)got) != got) {
            err = got < 0 ? errno : EIO;
            close(fd);
            unlink(ctp_path);
            fd = -1;
        } else {
            at += (uint64_t)got;
        }
    }
    struct stat st;
    char msg[PATH_MAX + 300];
    int len;
    if (fd >= 0 && (fd = ctp_fd_aside(fd, 1), fstat(fd, &st) == 0)) {
        close(ctp_fd);
        ctp_fd = fd;
        ctp_fd_dev = st.st_dev;
        ctp_fd_ino = st.st_ino;
        len = snprintf(msg, sizeof msg, "cutrace: warning: the trace file %s was removed while "
                       "the program ran (or its directory); made again with the %llu bytes "
                       "written so far, nothing lost\n", ctp_path, (unsigned long long)whole);
    } else {
        if (fd >= 0)
            close(fd);
        if (told++)
            return;
        len = snprintf(msg, sizeof msg, "cutrace: warning: the trace file %s was removed while "
                       "the program ran (or its directory), and cannot be made again (%s); its "
                       "records are lost when the program ends\n", ctp_path, strerror(err));
    }
    /* write, not stdio: this may run in a signal handler's flush */
    if (write(2, msg, len < (int)sizeof msg ? (size_t)len : sizeof msg - 1) < 0)
        return;
}

int ctp_fd_check(void *arg, int fd)
{
    (void)arg;
    (void)fd; /* ctp_fd is the same, or the one reopened by a call outside the writer's write */
    struct stat st;
    if (ctp_fd_is_trace(&st)) {
        if (st.st_nlink == 0)
            ctp_relink();
        return ctp_fd;
    }
    /* The program closed the descriptor, or its number is now a file of the program's: never
     * written to or closed again. The file goes on from its last whole chunk (a write cut by
     * the close left a partial one after it), and only if it is still the trace file. */
    int nfd = ctp_reopen();
    if (nfd < 0) {
        ctp_fd_errno = errno;
        return ctp_fd = -1;
    }
    uint64_t whole = ct_writer_bytes(ctp_w);
    if (fstat(nfd, &st) != 0 || st.st_dev != ctp_fd_dev || st.st_ino != ctp_fd_ino ||
        (uint64_t)st.st_size < whole ||
        ((uint64_t)st.st_size > whole && ftruncate(nfd, (off_t)whole) != 0)) {
        close(nfd);
        ctp_fd_errno = ESTALE;
        return ctp_fd = -1;
    }
    return ctp_fd = nfd;
}

char ctp_output_failure[PATH_MAX + 256];

/* No trace file for this process: why, kept for the message at its end, and told now. */
__attribute__((format(printf, 1, 2))) static int ctp_output_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctp_output_failure, sizeof ctp_output_failure, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cutrace: warning: %s; this process (pid %d) runs untraced\n",
            ctp_output_failure, (int)getpid());
    return -1;
}

int ctp_open_output(const char *options_text)
{
    const char *pat = getenv("CUTRACE_OUTPUT");
    char dir[PATH_MAX - 64];
    /* a directory cut short would put the trace where nobody looks for it */
    if (ctp_expand(pat && *pat ? pat : ".", dir, sizeof dir) != 0)
        return ctp_output_fail("cannot create a trace file in %.60s... (CUTRACE_OUTPUT): the "
                               "directory's name is longer than the %zu characters it may have",
                               dir, sizeof dir - 1);
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    for (char *h = host; *h; h++)
        if (*h == '/' || *h == '.')
            *h = '_';
    int fd = -1;
    if (ctp_mkdirs(dir) == 0) {
        for (int i = 0; i < 1000 && fd < 0; i++) {
            if (i == 0)
                snprintf(ctp_path, sizeof ctp_path, "%s/%s-%d.cutrace", dir, host, (int)getpid());
            else
                snprintf(ctp_path, sizeof ctp_path, "%s/%s-%d-%d.cutrace", dir, host, (int)getpid(), i);
            fd = open(ctp_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
            if (fd < 0 && errno != EEXIST)
                break;
        }
    }
    if (fd < 0)
        return ctp_output_fail("cannot create a trace file in %s (%s)", dir, strerror(errno));
    fd = ctp_fd_aside(fd, 1);
    struct stat st;
    if (fstat(fd, &st) == 0) {
        ctp_fd = fd;
        ctp_fd_dev = st.st_dev;
        ctp_fd_ino = st.st_ino;
    }
    static char scratch[16384 + 8192];
    ct_header h;
    /* zstd level 3, not the format's default 6: the writer is one thread compressing what every
     * traced thread produces, and at 6 it falls behind a loop of back-to-back launches (61% of
     * 800,000 records lost in instant mode, against 8% at 3) for 10% smaller files (2.02
     * against 2.22 bytes per train_loop event). */
    const ct_writer_opts wo = {.zlevel = 3, .fd_check = ctp_fd_check, .reserve = 4096};
    if (ct_header_collect(&h, CTP_VERSION, options_text, scratch, sizeof scratch) != 0 ||
        (h.frameworks = ctp_frameworks_loaded(), ct_writer_open_fd(&ctp_w, fd, &h, &wo)) != 0) {
        int err = errno;
        close(fd);
        unlink(ctp_path);
        return ctp_output_fail("cannot write the trace header to %s (%s)", ctp_path,
                               strerror(err));
    }
    return 0;
}

void ctp_close_output(void)
{
    if (ctp_w && ctp_fd_ours())
        ct_writer_close(ctp_w);
    ctp_w = NULL;
    ctp_fd = -1;
}
