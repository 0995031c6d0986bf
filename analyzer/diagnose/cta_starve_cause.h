/* Why the GPU starved in a device's gaps of one cause (issue 19): what the host samples
 * (cta_host_intervals) say held during them, each sample interval weighed by the gap time
 * inside it (from the device's utilization series, whose bins are at most a sample period wide
 * on runs up to ~100 s and spread a bin's gap time evenly beyond that), and the causes that fit,
 * with what each fix can save. Two contexts: the data-loading gaps (dataloader-starvation), where
 * the loader workers' readings tell, or the main process's when it has none and loads the
 * batches itself (PyTorch's num_workers=0); and the gaps no other diagnosis explains (gpu-gaps),
 * where the GPU waited for the main process's own work between its launches.
 *
 * Contract: reads the model only; *out is zeroed, and out->known is 0 when no sample interval
 * overlaps the gaps (a trace without host samples: the cause cannot be told). */
#ifndef CTA_STARVE_CAUSE_H
#define CTA_STARVE_CAUSE_H

#include "cta_model.h"

enum {
    CTA_CAUSE_ADD_WORKERS = 1, /* the loading busy (in the workers, or the main process without
                                * any), cores free */
    CTA_CAUSE_CPU_BOUND = 2,   /* every core busy, the loading (or the main process) waiting for one */
    CTA_CAUSE_STORAGE = 4,     /* the loading (or the main process) in I/O wait */
    CTA_CAUSE_MAIN_BUSY = 8,   /* the main process computing between batches or launches */
    CTA_CAUSE_MEMORY = 16,     /* swapping, major faults, memory stalls */
    CTA_CAUSE_N = 5
};
extern const char *const cta_cause_names[CTA_CAUSE_N]; /* by bit: "add-workers", ... */

/* The gaps' context: what the GPU waited for in them */
enum {
    CTA_CAUSE_LOADING,            /* batches (dataloader-starvation's gaps) */
    CTA_CAUSE_HOST_WORK           /* the main process's work between launches (gpu-gaps') */
};

typedef struct {
    int known;
    uint64_t gaps, gap_ns, covered_ns; /* the gaps, their time, and of it inside sample intervals */
    uint32_t cpus, workers;       /* the CPUs the process may run on (its affinity mask; the
                                   * machine's in traces of format 1.8); loader worker processes
                                   * alive during the gaps, on average (rounded) */
    uint32_t active_workers;      /* of them, on a CPU or waiting for one a tenth of the time or
                                   * more, on average (rounded): the ones whose want of a core
                                   * counts (not one ending or idle) */
    uint32_t machine_cpus;
    double limit_cores;           /* its cgroup's CPU limit when below cpus, else 0 */
    double throttled_share;       /* with a limit: of the gap time, the cgroup throttled */
    int cores_full;               /* cpu-bound as the busy loading already fills every core the
                                   * process may use, without waiting for one */
    /* averages over the covered gap time: cores (CPU seconds per second), shares of time */
    double busy_cores, free_cores, outside_cores; /* outside: busy with processes not of the tree */
    double worker_cpu_cores, worker_wait_cores, worker_d_share, worker_read_bps;
    double main_cpu_cores, main_wait_cores, main_d_share, main_read_bps, iowait_cores;
    double main_compute_share;    /* of the main thread's time outside CUDA in the gaps, computing
                                   * (its CPU readings); -1 when they do not tell */
    double psi_cpu, psi_io, psi_mem; /* -1 unknown */
    double swap_pages_s, majflt_s;   /* -1 unknown */
    double worker_cpu_per_batch_ns;  /* the workers' CPU over the run per batch copy */
    double main_cpu_per_gap_ns;      /* the main thread's computing in an average gap */
    int by_main;                     /* the main process's readings tell (its own work in the
                                      * gaps, or loading with no workers), not the workers' */
    double step_ns;                  /* the loop's step between batches, as given */
    double gpu_step_ns;              /* of it, the GPU's work, as given */
    int workers_recommended;         /* with CTA_CAUSE_ADD_WORKERS: in all */
    uint64_t wait_for_workers_ns;    /* HOST_WORK, cpu-bound with loader workers alive: of the
                                      * gaps, the main process's wait for a core the workers
                                      * held (its run-queue wait, at most all the time, by the
                                      * workers' share of the cores others used) */
    int causes;                      /* CTA_CAUSE_* bits */
    uint64_t saving_ns;              /* what the causes' fixes can save, at most gap_ns */
} cta_starve_cause;

/* Device d's gaps of class cls (CTA_GAP_*) in context ctx (CTA_CAUSE_LOADING, HOST_WORK), gaps
 * of them in all (for LOADING, the steps they stand for: a step's pauses before its second copy
 * are not gaps of their own); batches: the batches loaded (host-to-device batch copies; 0 for HOST_WORK);
 * step_ns: the loop's step between its loading gaps as the main thread lives it (its launches,
 * its own work, its synchronizations: what the next batch's loading follows), gpu_step_ns the
 * GPU's work in it; host: what the thread that last called CUDA did in the gaps,
 * from its own CPU readings (cta_hostsplit), which tell the main process's computing in the gaps
 * exactly where a sample interval, longer than a short gap, would mix in its work between them
 * (PyTorch's step on the host). */
void cta_starve_cause_of(const cta_proc *p, int d, int cls, int ctx, uint64_t gaps,
                         uint64_t batches, double step_ns, double gpu_step_ns,
                         const cta_hostsplit *host,
                         cta_starve_cause *out);
/* Appends to buf (size n) the causes in words with their numbers and fixes, worded for the
 * context c was made in ("" unknown). */
void cta_starve_cause_text(const cta_starve_cause *c, int ctx, int torch, char *buf, size_t n);

#endif
