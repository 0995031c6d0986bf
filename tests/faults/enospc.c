/* libenospc.so: a full file system for trace files only. Preloaded, it makes write() to any
 * descriptor whose file name ends in ".cutrace" behave as on a disk that fills up after
 * ENOSPC_AFTER bytes (default 4096) of that file: a write crossing the limit is cut short there,
 * the next fails with ENOSPC (EDQUOT with ENOSPC_QUOTA=1), and so does a fallocate past it.
 * With ENOSPC_WHOLE=1 a write that begins before the limit is written whole and every later one
 * fails with nothing written: the disk filled exactly where a write ended (another program took
 * the rest), so that cutting back a partial write frees nothing.
 * Every other write is the real one, so the program's own output is untouched. For the
 * fault-injection suite (tests/faults), where a size-limited mount may not be available. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int is_trace(int fd)
{
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    return n > 8 && memcmp(target + n - 8, ".cutrace", 8) == 0;
}

static off_t limit_bytes(void)
{
    const char *s = getenv("ENOSPC_AFTER");
    return s && *s ? atol(s) : 4096;
}

/* ENOSPC, or EDQUOT with ENOSPC_QUOTA=1 (a user's quota reached rather than the disk full) */
static int full_errno(void)
{
    const char *q = getenv("ENOSPC_QUOTA");
    return q && *q == '1' ? EDQUOT : ENOSPC;
}

ssize_t write(int fd, const void *buf, size_t len)
{
    if (fd > 2 && is_trace(fd)) {
        off_t limit = limit_bytes();
        struct stat st;
        if (fstat(fd, &st) == 0) {
            if (st.st_size >= limit) {
                errno = full_errno();
                return -1;
            }
            const char *whole = getenv("ENOSPC_WHOLE");
            if ((off_t)len > limit - st.st_size && !(whole && *whole == '1'))
                len = (size_t)(limit - st.st_size);
        }
    }
    return syscall(SYS_write, fd, buf, len);
}

/* Space allocated ahead of the file's end counts against the same limit, as on a disk. */
int fallocate(int fd, int mode, off_t off, off_t len)
{
    if (fd > 2 && is_trace(fd) && off + len > limit_bytes()) {
        errno = full_errno();
        return -1;
    }
    return (int)syscall(SYS_fallocate, fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len) __attribute__((alias("fallocate")));
