/* Why the loader starved the GPU (issue 19): what the host samples (cta_host_intervals) say held
 * during a device's gaps of one cause (data loading), each sample interval weighed by the gap
 * time inside it (from the device's utilization series, whose bins are at most a sample period
 * wide on runs up to ~100 s and spread a bin's gap time evenly beyond that), and the causes
 * that fit, with what each fix can save.
 *
 * Contract: reads the model only; *out is zeroed, and out->known is 0 when no sample interval
 * overlaps the gaps (a trace without host samples: the cause cannot be told). */
#ifndef CTA_STARVE_CAUSE_H
#define CTA_STARVE_CAUSE_H

#include "cta_model.h"

enum {
    CTA_CAUSE_ADD_WORKERS = 1, /* workers busy, cores free */
    CTA_CAUSE_CPU_BOUND = 2,   /* every core busy, the workers waiting for one */
    CTA_CAUSE_STORAGE = 4,     /* workers in I/O wait */
    CTA_CAUSE_MAIN_BUSY = 8,   /* the main process computing between batches */
    CTA_CAUSE_MEMORY = 16,     /* swapping, major faults, memory stalls */
    CTA_CAUSE_N = 5
};
extern const char *const cta_cause_names[CTA_CAUSE_N]; /* by bit: "add-workers", ... */

typedef struct {
    int known;
    uint64_t gap_ns, covered_ns;  /* the gaps' time, and of it inside sample intervals */
    uint32_t cpus, workers;       /* online CPUs; loader worker processes of the tree */
    /* averages over the covered gap time: cores (CPU seconds per second), shares of time */
    double busy_cores, free_cores, outside_cores; /* outside: busy with processes not of the tree */
    double worker_cpu_cores, worker_wait_cores, worker_d_share, worker_read_bps;
    double main_cpu_cores, iowait_cores;
    double main_compute_share;    /* of the main thread's time outside CUDA in the gaps, computing
                                   * (its CPU readings); -1 when they do not tell */
    double psi_cpu, psi_io, psi_mem; /* -1 unknown */
    double swap_pages_s, majflt_s;   /* -1 unknown */
    double worker_cpu_per_batch_ns;  /* the workers' CPU over the run per batch copy */
    double step_ns;                  /* the GPU's work per step, as given */
    int workers_recommended;         /* with CTA_CAUSE_ADD_WORKERS */
    int causes;                      /* CTA_CAUSE_* bits */
    uint64_t saving_ns;              /* what the causes' fixes can save, at most gap_ns */
} cta_starve_cause;

/* Device d's gaps of class cls (CTA_GAP_*), gaps of them in all; batches: the batches loaded
 * (host-to-device batch copies); step_ns: the GPU's work per step; host: what the thread that
 * last called CUDA did in the gaps, from its own CPU readings (cta_hostsplit), which tell the
 * main process's computing in the gaps exactly where a sample interval, longer than a short
 * gap, would mix in its work between them (PyTorch's step on the host). */
void cta_starve_cause_of(const cta_proc *p, int d, int cls, uint64_t gaps, uint64_t batches,
                         double step_ns, const cta_hostsplit *host, cta_starve_cause *out);
/* Appends to buf (size n) the causes in words with their numbers and fixes ("" unknown). */
void cta_starve_cause_text(const cta_starve_cause *c, int torch, char *buf, size_t n);

#endif
