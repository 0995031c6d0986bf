/* The dynamic loader across fork. glibc (2.36 here) gives a forked child fresh copies of the
 * loader's main locks but not of the one dl_iterate_phdr takes (dlopen also takes it to add an
 * object): a fork while another thread is inside dl_iterate_phdr leaves the child that lock held
 * for good, and the child's first dl_iterate_phdr, dlopen of a new library or C++ throw through
 * an older libgcc hangs. And a fork while another thread is inside dlopen gives the child the
 * object listed but not relocated: its first call into it jumps to nowhere. The tracer walks the
 * loaded objects far more often than a program does, from the program's threads and its own
 * (libunwind's lookups when it captures a call site, the thread sampler's unwinding, the scans
 * for libraries loaded since), and it opens the real driver at the first CUDA call, in whichever
 * thread makes it: probe forkstart's children hung in their own first walk (1 run in ~100,
 * whether idle or beside two CPU-bound processes) and crashed in the driver's PLT (1 in 5).
 *
 * Contract: every tracer call that may take that lock or load an object (dl_iterate_phdr,
 * libunwind's stepping, the driver's dlopen) runs between ctp_loader_enter and
 * ctp_loader_leave, and nothing between them waits for a lock of the tracer's fork handler.
 * ctp_loader_fork_prepare, the last step of that handler, returns once no thread is between them
 * and keeps new ones out until ctp_loader_fork_parent or _child. The wait is that of a walk
 * (microseconds) or of the driver's dlopen (while the other threads wait for it to start their
 * trace); a longer one would let a driver initializing meanwhile register a fork handler of its
 * own that glibc then skips in the child. It gives up after CTP_LOADER_WAIT_NS, should a thread
 * inside wait for a lock another library's fork handler holds. Enter and leave nest, take no
 * lock and make no system call unless a fork is under way, and keep errno. The program's own
 * threads inside the loader at a fork are the program's, as without the tracer. Depends on
 * nothing of the tracer. */
#ifndef CTP_LOADER_H
#define CTP_LOADER_H

#include <link.h>

void ctp_loader_enter(void);
void ctp_loader_leave(void);
/* dl_iterate_phdr between the two. */
int ctp_loader_walk(int (*fn)(struct dl_phdr_info *, size_t, void *), void *arg);

void ctp_loader_fork_prepare(void);
void ctp_loader_fork_parent(void);
void ctp_loader_fork_child(void);

#endif
