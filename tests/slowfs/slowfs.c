/* slowfs: a read-only file system with one file that is served no faster than a given rate,
 * for the tests of the loader diagnoses (issue 19): a DataLoader whose reads go through it waits
 * as it would on slow shared storage. A plain sleep is not that: a reader of a FUSE file waits in
 * the kernel's page cache (folio lock, io_schedule), in uninterruptible sleep ('D' in /proc) and
 * counted as I/O wait, which is what the tracer's sampler must see.
 *
 *   slowfs MOUNTPOINT [--size BYTES] [--rate BYTES_PER_S] [--latency-us US] [--name FILE]
 *
 * Mounts (root, or CAP_SYS_ADMIN), prints "ready" on stdout, serves until SIGTERM or SIGINT, then
 * unmounts. Exit status 0, 1 on an error, 77 when this kernel or sandbox offers no FUSE mount
 * (no /dev/fuse, mount refused): the tests count themselves skipped with the message.
 *
 * The file's byte at offset i is slowfs_byte(i), so readers can check what they got. Reads go
 * through the page cache (no direct I/O: the kernel reads ahead and the reader waits on pages, as
 * on a real file system); a new mount starts with a cold cache. The pace: one request at a time,
 * each answered at the earliest when every byte served so far fits the rate from the first read
 * (a token bucket without burst), plus the fixed latency.
 *
 * Written against the kernel's FUSE protocol (<linux/fuse.h>, the kernel's
 * Documentation/filesystems/fuse.rst), without libfuse: a dozen request types are enough. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SLOWFS_FILE_INO 2
#define SLOWFS_MAX_WRITE (128u << 10)

static inline uint8_t slowfs_byte(uint64_t i) { return (uint8_t)(i % 251); }

typedef struct {
    int fd;
    const char *mnt, *name;
    uint64_t size, rate, latency_ns;
    uint64_t served;     /* bytes answered so far */
    uint64_t first_ns;   /* CLOCK_MONOTONIC of the first read */
} slowfs;

static volatile sig_atomic_t slowfs_stop;

static void on_signal(int sig)
{
    (void)sig;
    slowfs_stop = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)};
    while (!slowfs_stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void reply(slowfs *fs, const struct fuse_in_header *in, int err, const void *body, size_t len)
{
    struct fuse_out_header out = {.len = (uint32_t)(sizeof out + (err ? 0 : len)), .error = -err,
                                  .unique = in->unique};
    struct iovec iov[2] = {{&out, sizeof out}, {(void *)body, err ? 0 : len}};
    /* ENOENT: the request was interrupted and is gone; nothing else to do about it */
    if (writev(fs->fd, iov, 2) < 0 && errno != ENOENT)
        fprintf(stderr, "slowfs: %s: answering request %u: %s\n", fs->mnt, in->opcode, strerror(errno));
}

static void attr_of(const slowfs *fs, uint64_t ino, struct fuse_attr *a)
{
    *a = (struct fuse_attr){.ino = ino, .nlink = 1, .blksize = 4096};
    if (ino == FUSE_ROOT_ID) {
        a->mode = S_IFDIR | 0555;
        a->nlink = 2;
    } else {
        a->mode = S_IFREG | 0444;
        a->size = fs->size;
        a->blocks = (fs->size + 511) / 512;
    }
}

static void do_init(slowfs *fs, const struct fuse_in_header *in, const struct fuse_init_in *ii)
{
    struct fuse_init_out o = {.major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
                              .max_readahead = ii->max_readahead, .max_write = SLOWFS_MAX_WRITE,
                              .max_background = 16, .congestion_threshold = 12, .time_gran = 1,
                              .flags = ii->flags & FUSE_ASYNC_READ};
    if (ii->major != FUSE_KERNEL_VERSION) {
        fprintf(stderr, "slowfs: %s: the kernel speaks FUSE %u.%u, expected major %u\n", fs->mnt,
                ii->major, ii->minor, FUSE_KERNEL_VERSION);
        reply(fs, in, EPROTO, NULL, 0);
        return;
    }
    if (ii->minor < o.minor)
        o.minor = ii->minor;
    /* a kernel older than 7.23 reads a shorter reply */
    reply(fs, in, 0, &o, o.minor < 23 ? FUSE_COMPAT_22_INIT_OUT_SIZE : sizeof o);
}

static void do_lookup(slowfs *fs, const struct fuse_in_header *in, const char *name)
{
    if (in->nodeid != FUSE_ROOT_ID || strcmp(name, fs->name) != 0) {
        reply(fs, in, ENOENT, NULL, 0);
        return;
    }
    struct fuse_entry_out e = {.nodeid = SLOWFS_FILE_INO, .generation = 1, .entry_valid = 3600,
                               .attr_valid = 3600};
    attr_of(fs, SLOWFS_FILE_INO, &e.attr);
    reply(fs, in, 0, &e, sizeof e);
}

static void do_getattr(slowfs *fs, const struct fuse_in_header *in)
{
    struct fuse_attr_out a = {.attr_valid = 3600};
    attr_of(fs, in->nodeid, &a.attr);
    reply(fs, in, 0, &a, sizeof a);
}

static void do_read(slowfs *fs, const struct fuse_in_header *in, const struct fuse_read_in *r, uint8_t *buf)
{
    uint64_t n = 0;
    if (r->offset < fs->size)
        n = fs->size - r->offset < r->size ? fs->size - r->offset : r->size;
    for (uint64_t i = 0; i < n; i++)
        buf[i] = slowfs_byte(r->offset + i);
    uint64_t t = now_ns();
    if (!fs->served)
        fs->first_ns = t;
    fs->served += n;
    uint64_t due = fs->first_ns + (uint64_t)((double)fs->served / (double)fs->rate * 1e9);
    sleep_until((due > t ? due : t) + fs->latency_ns);
    reply(fs, in, 0, buf, n);
}

static void do_readdir(slowfs *fs, const struct fuse_in_header *in, const struct fuse_read_in *r, uint8_t *buf)
{
    const char *names[] = {".", "..", fs->name};
    const uint64_t inos[] = {FUSE_ROOT_ID, FUSE_ROOT_ID, SLOWFS_FILE_INO};
    const uint32_t types[] = {S_IFDIR >> 12, S_IFDIR >> 12, S_IFREG >> 12};
    size_t len = 0;
    for (uint64_t i = r->offset; i < 3; i++) {
        size_t nl = strlen(names[i]);
        size_t sz = FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + nl);
        if (len + sz > r->size)
            break;
        struct fuse_dirent *d = (struct fuse_dirent *)(buf + len);
        memset(d, 0, sz);
        *d = (struct fuse_dirent){.ino = inos[i], .off = i + 1, .namelen = (uint32_t)nl, .type = types[i]};
        memcpy(d->name, names[i], nl);
        len += sz;
    }
    reply(fs, in, 0, buf, len);
}

static int serve(slowfs *fs)
{
    size_t cap = SLOWFS_MAX_WRITE + 4096;
    uint8_t *req = malloc(cap), *out = malloc(cap);
    if (!req || !out) {
        fprintf(stderr, "slowfs: out of memory\n");
        return 1;
    }
    int rc = 0;
    while (!slowfs_stop) {
        ssize_t got = read(fs->fd, req, cap);
        if (got < 0) {
            if (errno == EINTR || errno == ENOENT || errno == EAGAIN)
                continue;
            if (errno != ENODEV) { /* ENODEV: unmounted */
                fprintf(stderr, "slowfs: %s: reading /dev/fuse: %s\n", fs->mnt, strerror(errno));
                rc = 1;
            }
            break;
        }
        if ((size_t)got < sizeof(struct fuse_in_header)) {
            fprintf(stderr, "slowfs: %s: a request of %zd bytes, shorter than its header\n", fs->mnt, got);
            rc = 1;
            break;
        }
        const struct fuse_in_header *in = (const void *)req;
        const void *arg = req + sizeof *in;
        switch (in->opcode) {
        case FUSE_INIT: do_init(fs, in, arg); break;
        case FUSE_LOOKUP: do_lookup(fs, in, arg); break;
        case FUSE_GETATTR: do_getattr(fs, in); break;
        case FUSE_OPEN:
        case FUSE_OPENDIR: {
            struct fuse_open_out o = {0};
            reply(fs, in, 0, &o, sizeof o);
            break;
        }
        case FUSE_READ: do_read(fs, in, arg, out); break;
        case FUSE_READDIR: do_readdir(fs, in, arg, out); break;
        case FUSE_STATFS: {
            struct fuse_statfs_out s = {.st = {.bsize = 4096, .frsize = 4096, .namelen = 255}};
            reply(fs, in, 0, &s, sizeof s);
            break;
        }
        case FUSE_RELEASE:
        case FUSE_RELEASEDIR:
        case FUSE_FLUSH:
        case FUSE_DESTROY: reply(fs, in, 0, NULL, 0); break;
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
        case FUSE_INTERRUPT: break; /* no answer is expected */
        default: reply(fs, in, ENOSYS, NULL, 0); break;
        }
    }
    free(req);
    free(out);
    return rc;
}

static int parse_u64(const char *opt, const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "slowfs: %s expects a whole number, got '%s'\n", opt, s);
        return -1;
    }
    *v = x;
    return 0;
}

int main(int argc, char **argv)
{
    slowfs fs = {.name = "data.bin", .size = 64u << 20, .rate = 8u << 20};
    uint64_t latency_us = 0;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = !v;
        if (!bad && !strcmp(o, "--size"))
            bad = parse_u64(o, v, &fs.size);
        else if (!bad && !strcmp(o, "--rate"))
            bad = parse_u64(o, v, &fs.rate) || !fs.rate;
        else if (!bad && !strcmp(o, "--latency-us"))
            bad = parse_u64(o, v, &latency_us);
        else if (!bad && !strcmp(o, "--name"))
            fs.name = v;
        else
            bad = 1;
        if (bad || strchr(fs.name, '/') || !fs.name[0]) {
            fprintf(stderr, "usage: slowfs MOUNTPOINT [--size BYTES] [--rate BYTES_PER_S > 0] "
                            "[--latency-us US] [--name FILE]\n");
            return 1;
        }
        i++;
    }
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: slowfs MOUNTPOINT [options]\n");
        return 1;
    }
    fs.mnt = argv[1];
    fs.latency_ns = latency_us * 1000;
    fs.fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fs.fd < 0) {
        fprintf(stderr, "slowfs: cannot open /dev/fuse: %s (no FUSE here)\n", strerror(errno));
        return 77;
    }
    char opts[256];
    snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=%u,group_id=%u,allow_other", fs.fd,
             (unsigned)getuid(), (unsigned)getgid());
    if (mount("slowfs", fs.mnt, "fuse.slowfs", MS_NOSUID | MS_NODEV | MS_RDONLY, opts) != 0) {
        int e = errno;
        fprintf(stderr, "slowfs: cannot mount a FUSE file system on %s: %s\n", fs.mnt, strerror(e));
        return e == EPERM || e == ENODEV || e == EACCES ? 77 : 1;
    }
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: the read must return */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("ready %s/%s\n", fs.mnt, fs.name);
    fflush(stdout);
    int rc = serve(&fs);
    /* detach first: closing the device then fails the requests still waiting */
    umount2(fs.mnt, MNT_DETACH);
    close(fs.fd);
    return rc;
}
