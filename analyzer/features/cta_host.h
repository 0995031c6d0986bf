/* The host samples of one traced process (FORMAT.md 4.11): its process tree (itself, its
 * DataLoader-like forked workers, other descendants) and the machine, as its PROC, PROC_SAMPLE
 * and HOST_SAMPLE records give them, reduced as the pass goes to what the summary's process
 * table, the timeline's counter tracks and the diagnoses need: per tree process its first and
 * last readings and how many of its readings had a thread in I/O wait; for the machine its first
 * and last readings and the least memory available; and the rates over the interval each sample
 * closes (cta_host_rates_of).
 *
 * Counters are cumulative: a process's figures are the difference of its last reading and its
 * baseline: 0 if it began after the trace did (a worker forked during the run: everything it
 * did counts, a worker's tail between its last reading and its exit excepted), else its first
 * reading (the traced process itself: only what it did while traced). CPU time is from the
 * kernel's user and system times, each to the clock tick (10 ms on most systems), so a figure is
 * within 2 ticks of the truth at its last reading.
 *
 * Contract: all state lives in the process's cta_proc (its `sampled` pointer, NULL until its
 * first such record), so per-file passes need no shared table; cta_host_rec is the model's hook
 * for the three record types, cta_host_free the model's when the process is freed. */
#ifndef CTA_HOST_H
#define CTA_HOST_H

#include <stdio.h>

#include "cta_feature.h"
#include "cta_feature_slots.h"
#include "cta_out.h"

enum { CTA_ROLE_MAIN, CTA_ROLE_WORKER, CTA_ROLE_OTHER };
extern const char *const cta_role_names[3]; /* "main", "loader worker", "other" */

/* One process of the tree, as the summary shows it. */
typedef struct {
    uint32_t pid, ppid;
    int role;                     /* CTA_ROLE_* */
    char comm[32];
    uint64_t span_ns;             /* from its baseline (its start, or its first reading) to its last reading */
    uint64_t cpu_ns, user_ns, sys_ns;
    uint64_t rchar, wchar, read_bytes, write_bytes, majflt; /* over the span */
    int io_known;                 /* its I/O counters were readable */
    uint64_t samples, iowait_samples; /* readings, and those with a thread in D state */
    uint64_t wait_ns;             /* run-queue wait over the span (0 when unknown) */
    int wait_known;
} cta_host_row;

/* What the interval closed by the sample just taken measured, for the timeline. */
typedef struct {
    uint64_t ts, from;            /* the interval: from the previous reading to this one */
    /* a PROC_SAMPLE of a whole process (tid 0) */
    uint32_t pid;
    int role;
    double cpu_cores;             /* its CPU time per second */
    /* a HOST_SAMPLE: the machine's, and the tree's summed since the previous one */
    double busy_cores, iowait_cores, tree_read_bps, tree_cpu_cores;
} cta_host_rates;

/* One interval between two machine readings, for weighing what held during chosen spans (the
 * GPU's data-loading gaps, cta_starve_cause): amounts over [from, to), the tree's summed by role
 * from the process readings of the round that closes it, thread states as read at its end. */
typedef struct {
    uint64_t from, to;
    /* the CPUs the traced process may run on (its affinity mask: a batch job's cpuset), with
     * their busy and iowait time; the machine's where the samples do not give them (format
     * 1.8) */
    uint32_t cpus, machine_cpus;
    uint64_t busy_ns, iowait_ns;
    /* a cgroup CPU limit (quota_cores > 0) bounds the job further: the limiting cgroup's CPU
     * time (cg_cpu_known) and the time it was throttled for having used up its quota */
    double quota_cores;
    uint64_t cg_cpu_ns, throttled_ns;
    int cg_cpu_known;
    uint64_t psi_cpu_ns, psi_io_ns, psi_mem_ns; /* "some" stall time */
    uint64_t swap_pages, majflt;  /* the machine's; 0 when unknown */
    int psi_known, vm_known;
    uint32_t workers;             /* worker readings in the round */
    uint32_t workers_active;      /* of them, a worker on a CPU or waiting for one a tenth of
                                   * the interval or more (not one asleep: ending, or idle) */
    uint32_t workers_in_d;        /* of them, with a thread in D state at the reading */
    uint64_t worker_cpu_ns, worker_wait_ns, worker_rchar; /* run-queue wait: 0 when unknown */
    uint64_t main_cpu_ns, tree_cpu_ns;
    /* the main process's, as the workers' above: the GPU waits for it between its launches,
     * and for its loading when it has no workers */
    uint32_t mains, main_in_d;    /* its readings in the round (0 or 1), with its main thread in D */
    uint64_t main_wait_ns, main_rchar; /* run-queue wait: its main thread's where the round read
                                        * it, else all its threads' */
} cta_host_iv;

void cta_host_rec(cta_model *m, cta_proc *p, const ct_rec *r);
/* p's intervals in time order (NULL, 0 with fewer than two machine readings). */
size_t cta_host_intervals(const cta_proc *p, const cta_host_iv **v);
void cta_host_free(cta_proc *p);
/* Rows of p's tree (NULL, 0 if it has none), in the order first seen (the traced process first). */
size_t cta_host_rows(const cta_proc *p, cta_host_row **rows);
/* The rates of the interval r (PROC_SAMPLE of a process, or HOST_SAMPLE; the record the model
 * took last) closes; 0 if it closes none (a first reading, a thread's). */
int cta_host_rates_of(const cta_proc *p, const ct_rec *r, cta_host_rates *out);

/* The summary's "Process tree" section and its JSON ("process_tree" in each process). */
void cta_host_text(FILE *f, const cta_model *m);
void cta_host_json(cta_json *j, const cta_proc *p);

/* The feature (cta_features.c): PROC, PROC_SAMPLE and HOST_SAMPLE records; the text's "Process
 * tree" section and each process's "process_tree" in the JSON. */
extern const cta_feature cta_host_feature;

#endif
