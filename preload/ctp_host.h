/* The host sampler (FORMAT.md 4.11): every CUTRACE_HOST_SAMPLE_MS (100 ms; 0 off) it reads
 * from /proc the CPU time, scheduler statistics, thread states, I/O counters and major faults of
 * every process of the traced process's tree (itself, its children, theirs; found through
 * /proc/PID/task/TID/children, or where the kernel lacks those files by scanning /proc for
 * parents in the tree) and of the traced process's threads, and the machine's CPU time,
 * memory, swapping and pressure stalls, and hands them out as PROC, PROC_SAMPLE and HOST_SAMPLE
 * records. A process that never uses CUDA (a DataLoader worker) is seen only here, in the
 * trace of the traced process above it.
 *
 * It runs on the writer's thread (every signal blocked, no program code on it), between two
 * flushes' drains, never from an intercepted call: the writer wakes at least every 50 ms anyway,
 * owns the one encoder stream the records go into, and its file is single-threaded
 * (ct_writer): a thread of its own would need a hand-over and one more wake-up for nothing. A
 * flush may delay a sample; each record carries its own time and cumulative counters, so a late
 * sample moves a point, it biases no rate. Once more at the final flush on the thread ending the
 * process (exit, exec), so the last interval is counted.
 *
 * Cost: the files it reads stay open (O_CLOEXEC, at most CTP_HOST_KEPT_FDS; beyond that they
 * are opened per read) and are read with pread; tables are static and bounded (processes and
 * threads past them are left out, and a process record missing threads is flagged). It keeps no
 * child from being reaped: it never waits, and a descriptor of a dead process's /proc file only
 * fails its reads (ESRCH); its entry is then dropped.
 *
 * Contract: ctp_host_sample and ctp_host_wait are the writer's (one flush at a time holds them);
 * ctp_host_fork_child is the session's, in a forked child (the parent's descriptors closed, the
 * child samples its own tree if it starts a trace); ctp_host_new_file the session's when a new
 * file begins (processes are announced again). Depends on ctp_state (options), ctp_clock,
 * ctp_maps (interning) and the format library only. */
#ifndef CTP_HOST_H
#define CTP_HOST_H

#include <stdint.h>

#include "cttrace.h"

/* Receives one record (ts set); the strings it names are interned (ctp_intern) already. */
typedef void (*ctp_host_put_fn)(const ct_rec *r);

/* /proc/PID/stat (or a thread's): state letter, fields 4..27 by number (proc(5)), the name. */
typedef struct {
    char state;
    uint64_t f[28];
    char comm[32];
} ctp_hstat;
enum { HS_PPID = 4, HS_MAJFLT = 12, HS_UTIME = 14, HS_STIME = 15, HS_CUTIME = 16, HS_CSTIME = 17,
       HS_START = 22, HS_STARTCODE = 26 };
/* Parses a stat line (NUL-terminated; the name may hold ')' and spaces) into st: 0, or -1 if
 * buf is not one. Also the thread sampler's, for its loader workers. */
int ctp_host_parse_stat(const char *buf, ctp_hstat *st);

/* ns from now until the next sample is due (UINT64_MAX when sampling is off). */
uint64_t ctp_host_wait(uint64_t now);
/* Samples the tree and the machine if one is due at now, or if force (the final flush). */
void ctp_host_sample(uint64_t now, int force, ctp_host_put_fn put);
void ctp_host_fork_child(void);
void ctp_host_new_file(void);

#endif
