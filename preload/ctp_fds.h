/* Descriptors the tracer keeps open beside the program's (the samplers' /proc files and perf
 * rings): a program may close descriptors it did not open (close_range(3, ~0U, 0), as daemons
 * do) and get their numbers back for files of its own, which the tracer must then never close.
 * ctp_fd_keep records which file a kept descriptor is (device and inode); ctp_fd_drop closes it
 * only if its number still is that file, and forgets it either way. Reading a number that has
 * become the program's (pread, which moves no offset and consumes nothing) only reads garbage,
 * which the samplers' parsers refuse.
 *
 * Contract: depends on nothing of the tracer; async-signal-safe, no lock (distinct threads keep
 * distinct numbers at any one time; one may keep a number another just dropped). Numbers from
 * CTP_FDS_MAX up are not recorded and are closed as they are. */
#ifndef CTP_FDS_H
#define CTP_FDS_H

#define CTP_FDS_MAX 4096

void ctp_fd_keep(int fd);
void ctp_fd_drop(int fd);
/* open(path, O_RDONLY | O_CLOEXEC | flags), kept: every descriptor the tracer opens, however
 * briefly, is closed by ctp_fd_drop (a host sample reads each process's stat file through one
 * held for microseconds, and a program's close_range then open in between got the number: the
 * tracer's close took the program's file, whose writes went to /dev/null). The one window
 * left is between the open and its fstat. */
int ctp_fd_open(const char *path, int flags);

#endif
