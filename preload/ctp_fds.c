/* Descriptors the tracer keeps (see ctp_fds.h). */
#include "ctp_fds.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* What each kept number is; ino 0: not recorded (nothing kept there). */
static struct {
    uint64_t dev, ino;
} ctp_kept[CTP_FDS_MAX];

void ctp_fd_keep(int fd)
{
    struct stat st;
    if (fd >= 0 && fd < CTP_FDS_MAX && fstat(fd, &st) == 0) {
        ctp_kept[fd].dev = st.st_dev;
        ctp_kept[fd].ino = st.st_ino;
    }
}

void ctp_fd_drop(int fd)
{
    if (fd < 0)
        return;
    if (fd >= CTP_FDS_MAX) {
        close(fd);
        return;
    }
    struct stat st;
    if (ctp_kept[fd].ino && fstat(fd, &st) == 0 && st.st_dev == ctp_kept[fd].dev &&
        st.st_ino == ctp_kept[fd].ino)
        close(fd);
    ctp_kept[fd].dev = ctp_kept[fd].ino = 0;
}
