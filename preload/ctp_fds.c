/* Descriptors the tracer opens (see ctp_fds.h). */
#include "ctp_fds.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* What each kept number is; ino 0: not recorded (nothing kept there). Atomics: a number one
 * thread drops another may open and keep next (the thread sampler's and the host sampler's);
 * the kernel orders the close before that open, and the entry is cleared before the close. */
static struct {
    _Atomic uint64_t dev, ino;
} ctp_kept[CTP_FDS_MAX];

void ctp_fd_keep(int fd)
{
    struct stat st;
    if (fd >= 0 && fd < CTP_FDS_MAX && fstat(fd, &st) == 0) {
        atomic_store_explicit(&ctp_kept[fd].dev, st.st_dev, memory_order_relaxed);
        atomic_store_explicit(&ctp_kept[fd].ino, st.st_ino, memory_order_relaxed);
    }
}

int ctp_fd_state(int fd)
{
    if (fd < 0 || fd >= CTP_FDS_MAX)
        return -1;
    uint64_t dev = atomic_load_explicit(&ctp_kept[fd].dev, memory_order_relaxed);
    uint64_t ino = atomic_load_explicit(&ctp_kept[fd].ino, memory_order_relaxed);
    struct stat st;
    if (!ino)
        return -1;
    return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

void ctp_fd_drop(int fd)
{
    if (fd < 0)
        return;
    if (fd >= CTP_FDS_MAX) {
        close(fd);
        return;
    }
    int mine = ctp_fd_state(fd) == 1;
    atomic_store_explicit(&ctp_kept[fd].dev, 0, memory_order_relaxed);
    atomic_store_explicit(&ctp_kept[fd].ino, 0, memory_order_relaxed);
    if (mine)
        close(fd);
}

/* Past 1024 the descriptor table would grow for it. */
int ctp_fd_aside(int fd, int cloexec)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return fd;
    int at = (int)(rl.rlim_cur < 1024 ? rl.rlim_cur : 1024) - 1;
    if (fd >= at)
        return fd;
    ctp_fd_keep(fd);
    int high = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, at);
    if (high < 0)
        return fd;
    ctp_fd_drop(fd);
    return high;
}

int ctp_fd_open(const char *path, int flags)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
    ctp_fd_keep(fd);
    return fd;
}
