/* The trace file: where it goes (CUTRACE_OUTPUT with %h %p %j %r expanded, never cut short,
 * directories created 0750), its creation (HOST-PID.cutrace, suffix -N if it exists;
 * O_EXCL|O_NOFOLLOW, mode 0640) with the header and 4 KiB kept past its end for a last chunk
 * (ct_writer_opts.reserve), and the check that its descriptor is still ours and the file still
 * in its directory.
 *
 * Contract: the session opens and closes it (under its registration lock, or at the end of the
 * process); the writer (ctp_writer.c) writes through ctp_w while it holds the flush. Nothing here
 * knows of threads or records. */
#ifndef CTP_OUTPUT_H
#define CTP_OUTPUT_H

#include <limits.h>

#include "cttrace.h"

extern ct_writer *ctp_w;          /* NULL when no file is open */
extern char ctp_path[PATH_MAX];
extern int ctp_fd;

/* Creates the trace file and writes its header (options_text: the options as the header states
 * them); -1 after one warning on stderr (the process then runs untraced). */
int ctp_open_output(const char *options_text);
/* Why ctp_open_output failed, in words ("" before it has). */
extern char ctp_output_failure[PATH_MAX + 256];
/* The trace's descriptor is still the trace file: a program may close descriptors it did not
 * open and get the same number for a file of its own, which must not receive trace chunks
 * (async-signal-safe). */
int ctp_fd_ours(void);
/* ct_writer_opts.fd_check of the trace, also called on its own (arg NULL, fd ctp_fd) to try to
 * regain the file: ctp_fd if it is still the trace file (if the file was removed, st_nlink 0,
 * first made again at its path with the bytes written so far, the new descriptor replacing
 * the old); else the file reopened for appending
 * (cut back to its last whole chunk) at a number the program is unlikely to ask for, never
 * writing to or closing the old one; -1 if it cannot be (ctp_fd_errno says why: ESTALE when the
 * path is another file now). The result is ctp_fd. Async-signal-safe. */
int ctp_fd_check(void *arg, int fd);
extern int ctp_fd_errno;
/* Closes the trace file, unless its descriptor now belongs to the program (then the writer's
 * few bytes of state are left). */
void ctp_close_output(void);

#endif
