/* libenospc.so: a full file system for trace files only. Preloaded, it makes write() to any
 * descriptor whose file name ends in ".cutrace" behave as on a disk that fills up after
 * ENOSPC_AFTER bytes (default 4096) of that file: a write crossing the limit is cut short there,
 * the next fails with ENOSPC. Every other write is the real one, so the program's own output is
 * untouched. For the fault-injection suite (tests/faults), where a size-limited mount may not be
 * available. */
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

ssize_t write(int fd, const void *buf, size_t len)
{
    if (fd > 2 && is_trace(fd)) {
        const char *s = getenv("ENOSPC_AFTER");
        off_t limit = s && *s ? atol(s) : 4096;
        struct stat st;
        if (fstat(fd, &st) == 0) {
            if (st.st_size >= limit) {
                errno = ENOSPC;
                return -1;
            }
            if ((off_t)len > limit - st.st_size)
                len = (size_t)(limit - st.st_size);
        }
    }
    return syscall(SYS_write, fd, buf, len);
}
