/* libunwind's own descriptors. To check an address before reading it (frames without unwind
 * information, which it then walks by their frame pointers), libunwind 1.6 writes a byte from it
 * into a pipe it opened at its first use and reads it back; a read that fails makes it close both
 * numbers and open a new pipe. A program that closes descriptors it did not open (close_range(3,
 * ~0U, 0), as daemons do) and opens files of its own gets those numbers: libunwind then closed
 * the program's file and kept writing to a pipe in its place (CI: a program's output file left
 * empty, 1 run in 7 beside two CPU-bound processes), and could as well have read a byte off the
 * program's socket or written one into its file.
 *
 * ctp_unwind_guard points libunwind's imports of pipe2, open, read, write, syscall and close
 * (the entries of its global offset table, in libunwind.so and libunwind-x86_64.so) at the
 * tracer's: the descriptors it opens are set aside (ctp_fd_aside) and kept (ctp_fds.h); a read,
 * write or write system call on a kept number the program has since taken fails with EBADF, and
 * a close of it closes nothing, so libunwind opens itself a new pipe and the program's file is
 * left alone. Descriptors libunwind did not open go through unchanged (a program's own use of
 * libunwind is its own). Left: the microseconds between libunwind's open and the keep that
 * records it, and between the check and the read or write.
 *
 * Contract: ctp_unwind_guard runs once, before the tracer's first use of libunwind (its first
 * use opens the pipe) and walks the loaded objects (ctp_loader_walk); a program that used
 * libunwind before keeps the pipe it opened then, unguarded. */
#ifndef CTP_UNWIND_H
#define CTP_UNWIND_H

void ctp_unwind_guard(void);

#endif
