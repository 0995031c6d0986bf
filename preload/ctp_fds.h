/* Descriptors the tracer opens beside the program's (the samplers' /proc files and perf rings,
 * kept; files read once): a program may close descriptors it did not open (close_range(3, ~0U,
 * 0), as daemons do) and get their numbers back for files of its own, which the tracer must then
 * never close.
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
/* 1: fd is kept and still the file it was kept as; 0: kept, but its number is now another file
 * (the program closed it and opened one of its own); -1: not kept. */
int ctp_fd_state(int fd);
/* fd moved where the program will not get its number: the lowest free number from
 * min(RLIMIT_NOFILE, 1024) - 1 up (open() hands out the lowest free ones, so a program that
 * closed everything and opens a file gets the number it would untraced), close-on-exec or not;
 * fd itself if it cannot be. The new number is not kept. */
int ctp_fd_aside(int fd, int cloexec);
/* open(path, O_RDONLY | O_CLOEXEC | flags), kept: every descriptor the tracer opens, however
 * briefly, is closed by ctp_fd_drop. A host sample reads files through descriptors held for
 * microseconds; a program's close_range then open in between gets such a number, and a plain
 * close then takes the program's file (most likely what CI saw once: a program's writes to its
 * file gone to /dev/null). The one window left is between the open and its fstat. */
int ctp_fd_open(const char *path, int flags);

#endif
