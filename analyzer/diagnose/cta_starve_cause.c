/* Why the loader starved the GPU (see cta_starve_cause.h). */
#include "cta_starve_cause.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_host.h"
#include "cta_out.h"

const char *const cta_cause_names[CTA_CAUSE_N] = {"add-workers", "cpu-bound", "storage-bound",
                                                  "main-busy", "memory-pressure"};

/* The thresholds, on averages over the gaps. Wide on purpose: a sample interval of 100 ms
 * holds a gap's neighbourhood too, and a shared machine adds its own noise. Whether the workers
 * lacked a core is told by their run-queue wait, not by idle cores: on a machine shared with
 * other processes the cores are busy anyway, and a worker that got a core whenever it was
 * runnable was not short of one. */
#define BUSY_WORKER_CORES 0.5  /* a worker on a CPU at least half the time is busy */
#define ALL_BUSY_FREE 0.3      /* under this many idle cores, all are busy ... */
#define WAIT_SHARE 0.2         /* ... when the workers wait for a core this share of their CPU time */
#define D_SHARE 0.3            /* worker readings with a thread in I/O wait */
#define MAIN_SHARE 0.5         /* the main thread computing half its time outside CUDA */
#define MAIN_CORES 0.5         /* without its readings: the main process on a CPU half the time */
#define PSI_MEM 0.1            /* memory stalls a tenth of the time */
#define SWAP_PAGES_S 256.0     /* 1 MB/s of 4 KiB pages in or out */
#define MAJFLT_S 2000.0        /* machine-wide: a busy machine faults in its programs' pages */

/* Gap time of class channel ch of series s inside [a, b): each bin's spread evenly. */
static double gap_in(const cta_series *s, uint32_t ch, uint64_t a, uint64_t b)
{
    if (!s->started || !s->n || b <= s->t0)
        return 0;
    if (a < s->t0)
        a = s->t0;
    const uint64_t *v = cta_series_ch(s, ch);
    double in = 0;
    for (uint32_t i = cta_series_bin(s, a); i < s->n; i++) {
        uint64_t lo = s->t0 + (uint64_t)i * s->width, hi = lo + s->width;
        if (lo >= b)
            break;
        uint64_t x = lo > a ? lo : a, y = hi < b ? hi : b;
        if (y > x)
            in += (double)v[i] * (double)(y - x) / (double)s->width;
    }
    return in;
}

void cta_starve_cause_of(const cta_proc *p, int d, int cls, int ctx, uint64_t gaps,
                         uint64_t batches, double step_ns, double gpu_step_ns,
                         const cta_hostsplit *host, cta_starve_cause *c)
{
    memset(c, 0, sizeof *c);
    const cta_dev *dv = &p->dev[d];
    c->gaps = gaps;
    c->gap_ns = dv->gap_ns[cls];
    c->step_ns = step_ns;
    c->gpu_step_ns = gpu_step_ns;
    const cta_host_iv *iv;
    size_t n = cta_host_intervals(p, &iv);
    double cov = 0, busy = 0, tree = 0, wcpu = 0, wwait = 0, wd = 0, wrd = 0, mcpu = 0, iow = 0;
    double mwait = 0, md = 0, mrd = 0, quota = 0, cg = 0, cg_cov = 0, thr = 0;
    double psi[3] = {0}, psi_cov = 0, swap = 0, flt = 0, vm_cov = 0, alive = 0, active = 0;
    for (size_t i = 0; i < n; i++) {
        const cta_host_iv *v = &iv[i];
        double o = gap_in(&dv->util, CTA_CH_GAP + (uint32_t)cls, v->from, v->to);
        if (o <= 0)
            continue;
        double w = o / (double)(v->to - v->from); /* the interval's amounts, weighed */
        cov += o;
        c->cpus = v->cpus;
        c->machine_cpus = v->machine_cpus;
        busy += w * (double)v->busy_ns;
        if (v->quota_cores > 0) {
            quota = v->quota_cores;
            thr += w * (double)v->throttled_ns;
            if (v->cg_cpu_known) {
                cg_cov += o;
                cg += w * (double)v->cg_cpu_ns;
            }
        }
        tree += w * (double)v->tree_cpu_ns;
        wcpu += w * (double)v->worker_cpu_ns;
        wwait += w * (double)v->worker_wait_ns;
        wrd += w * (double)v->worker_rchar;
        mcpu += w * (double)v->main_cpu_ns;
        mwait += w * (double)v->main_wait_ns;
        mrd += w * (double)v->main_rchar;
        iow += w * (double)v->iowait_ns;
        alive += o * (double)v->workers;
        active += o * (double)v->workers_active;
        if (v->workers)
            wd += o * (double)v->workers_in_d / (double)v->workers;
        if (v->mains)
            md += o * (double)v->main_in_d / (double)v->mains;
        if (v->psi_known) {
            psi_cov += o;
            psi[0] += w * (double)v->psi_cpu_ns;
            psi[1] += w * (double)v->psi_io_ns;
            psi[2] += w * (double)v->psi_mem_ns;
        }
        if (v->vm_known) {
            vm_cov += o;
            swap += w * (double)v->swap_pages;
            flt += w * (double)v->majflt;
        }
    }
    if (cov <= 0 || !c->cpus)
        return;
    c->known = 1;
    c->covered_ns = (uint64_t)cov;
    if (c->covered_ns > c->gap_ns)
        c->covered_ns = c->gap_ns;
    c->busy_cores = busy / cov;
    c->free_cores = c->cpus > c->busy_cores ? c->cpus - c->busy_cores : 0;
    /* a cgroup limit below the CPUs: what the limiting cgroup left of it is free, whatever
     * its CPUs did (a throttled cgroup's CPUs sit idle) */
    if (quota > 0 && quota < c->cpus) {
        c->limit_cores = quota;
        c->throttled_share = thr / cov;
        double left = cg_cov > 0 ? quota - cg / cg_cov : quota;
        if (left < c->free_cores)
            c->free_cores = left > 0 ? left : 0;
    }
    c->outside_cores = busy > tree ? (busy - tree) / cov : 0;
    c->worker_cpu_cores = wcpu / cov;
    c->worker_wait_cores = wwait / cov;
    c->worker_d_share = wd / cov;
    c->worker_read_bps = wrd * 1e9 / cov;
    c->main_cpu_cores = mcpu / cov;
    c->main_wait_cores = mwait / cov;
    c->main_d_share = md / cov;
    c->main_read_bps = mrd * 1e9 / cov;
    c->iowait_cores = iow / cov;
    c->psi_cpu = psi_cov > 0 ? psi[0] / psi_cov : -1;
    c->psi_io = psi_cov > 0 ? psi[1] / psi_cov : -1;
    c->psi_mem = psi_cov > 0 ? psi[2] / psi_cov : -1;
    c->swap_pages_s = vm_cov > 0 ? swap * 1e9 / vm_cov : -1;
    c->majflt_s = vm_cov > 0 ? flt * 1e9 / vm_cov : -1;

    /* the workers alive during the gaps, not all the run had: a loader's workers end with its
     * epoch, and imagenet's training and validation loaders of 2 workers each were counted 4,
     * which 2 busy cores could not hold "busy": its CPU-bound loading went unseen */
    c->workers = (unsigned)(alive / cov + 0.5);
    if (!c->workers && alive > 0)
        c->workers = 1;
    /* of them, those that ran or waited for a core: whether the loading was short of cores is
     * of these (mnist's training worker, ending while its test loader's began, counted 2 and
     * 0.95 cores of them were not "short" of 2: no cause, in 2 runs of 5) */
    c->active_workers = (unsigned)(active / cov + 0.5);
    if (!c->active_workers && active > 0)
        c->active_workers = 1;
    if (c->active_workers > c->workers)
        c->active_workers = c->workers;
    cta_host_row *rows;
    size_t nr = cta_host_rows(p, &rows);
    uint64_t wcpu_all = 0;
    for (size_t i = 0; i < nr; i++)
        if (rows[i].role == CTA_ROLE_WORKER)
            wcpu_all += rows[i].cpu_ns;
    free(rows);
    c->worker_cpu_per_batch_ns = batches ? (double)wcpu_all / (double)batches : 0;
    /* the main thread's own readings when they cover most of its time outside CUDA, else the
     * main process's samples */
    uint64_t avg_gap = gaps ? c->gap_ns / gaps : 0;
    uint64_t told = host->compute + host->wait;
    uint64_t split = host->in_api + host->blocked + told + host->unknown;
    c->main_compute_share = told > host->unknown ? (double)host->compute / (double)told : -1;
    /* its computing in a gap: the readings' share of the gap time (host may cover a part of
     * the gaps: dataloader-starvation's band), time outside CUDA without readings (before the
     * thread's first) taken at the share of the rest */
    c->main_cpu_per_gap_ns =
        c->main_compute_share >= 0 && split
            ? (double)avg_gap *
                  ((double)host->compute + c->main_compute_share * (double)host->unknown) / (double)split
            : (double)avg_gap * (c->main_cpu_cores < 1 ? c->main_cpu_cores : 1);
    int main_computing = c->main_compute_share >= 0 ? c->main_compute_share >= MAIN_SHARE
                                                    : c->main_cpu_cores >= MAIN_CORES;

    /* whose readings tell: the workers' while they load the batches, else the main process's
     * (loading them itself, or its own work between launches) */
    c->by_main = ctx == CTA_CAUSE_HOST_WORK || !c->workers;
    double cpu = c->by_main ? c->main_cpu_cores : c->worker_cpu_cores;
    double wait = c->by_main ? c->main_wait_cores : c->worker_wait_cores;
    int storage = (c->by_main ? c->main_d_share : c->worker_d_share) >= D_SHARE;
    int memory = (c->psi_mem >= PSI_MEM) || c->swap_pages_s >= SWAP_PAGES_S || c->majflt_s >= MAJFLT_S;
    /* short of a core: runnable (on a CPU or waiting for one) half the time or more each, and
     * waiting a share of it; a process idle in the gaps (waiting for something else) is not,
     * however its few runs of a sample interval fared */
    unsigned runnable = c->by_main ? 1 : c->active_workers;
    int short_of_cores = runnable && cpu + wait >= BUSY_WORKER_CORES * runnable &&
                         wait >= WAIT_SHARE * cpu;
    int all_busy = c->free_cores < ALL_BUSY_FREE && short_of_cores;
    /* loading in the main process (no workers): its computing is the loading, which workers
     * would take off the critical path */
    int main_loads = ctx == CTA_CAUSE_LOADING && !c->workers;
    if (storage)
        c->causes |= CTA_CAUSE_STORAGE;
    if (memory)
        c->causes |= CTA_CAUSE_MEMORY;
    if (main_computing && !main_loads)
        c->causes |= CTA_CAUSE_MAIN_BUSY;
    /* The main process loading its batches itself loads them in line with the GPU's steps:
     * workers take that off the critical path however busy the cores are (more processes win a
     * larger share of them, and PyTorch's main process spends several times the CPU a worker
     * does on a batch, in its intra-op threads): imagenet -j 0 beside other work was called
     * CPU-bound, more workers of no help, and -j 2 took its window from 15.6 s to 4.4 s. */
    if (!storage && all_busy && !main_loads)
        c->causes |= CTA_CAUSE_CPU_BOUND;
    /* Loading, the main process wants a core even while it waits for one: its readings' share
     * computing, grown by the run-queue wait its samples show per CPU-second (its readings call
     * that wait waiting; the samples' intervals, longer than a short gap, mix in its work
     * between them, so they scale the readings rather than replace them) */
    double queued = c->main_cpu_cores > 0 ? c->main_wait_cores / c->main_cpu_cores : 0;
    int main_wants = c->main_compute_share >= 0 ? c->main_compute_share * (1 + queued) >= MAIN_SHARE
                                                : c->main_cpu_cores + c->main_wait_cores >= MAIN_CORES;
    int busy_loading = main_loads ? main_wants
                     : ctx == CTA_CAUSE_LOADING && c->worker_cpu_cores >= BUSY_WORKER_CORES * c->workers;
    if (!storage && (!short_of_cores || main_loads) && busy_loading) {
        /* N workers each spending C per batch deliver one every C / N: N = C / step hides the
         * loading, but no more CPU-bound workers run at once than the cores left by the main
         * process (all of them when it loads: it then waits for the batches). The step is the
         * loop's as the main thread lives it (its launches, its Python, its synchronizations),
         * not the GPU's work alone: the next batch is needed once the main thread is through
         * it. */
        double cpb = main_loads ? c->main_cpu_per_gap_ns : c->worker_cpu_per_batch_ns;
        /* the cores: a limit of 1.5 CPUs runs 2 workers at 0.75 each, more than 1 at 1 */
        int cores = c->limit_cores > 0 ? (int)ceil(c->limit_cores) : (int)c->cpus;
        int cap = cores - (main_loads ? 0 : (int)floor(c->main_cpu_cores + 0.5));
        double need = step_ns > 0 ? ceil(cpb / step_ns) : cap; /* may pass INT_MAX */
        int rec = need < cap ? (int)need : cap;
        /* more workers are needed than the cores hold, and these fill them already (one
         * worker on the one CPU of its affinity waits for no core, yet no other would run) */
        if (rec <= (int)c->workers && need > c->workers && c->free_cores < ALL_BUSY_FREE) {
            c->causes |= CTA_CAUSE_CPU_BOUND;
            c->cores_full = 1;
        }
        if (rec > (int)c->workers) {
            c->causes |= CTA_CAUSE_ADD_WORKERS;
            c->workers_recommended = rec;
            /* A step now takes its loading gap and the step; with rec workers, the longest of
             * the step, a batch's CPU over the workers, and the whole step's (the batch's CPU
             * and the main thread's step) over the cores: the workers share them with the main
             * thread (imagenet -j 0 on 2 idle cores: a step of 77 ms, 53 of it loading, priced
             * at 37 ms with 2 workers; -j 2 measured 43 ms, where the workers alone, at 26 ms,
             * would have left the step's 23). A batch's CPU, not its gap: the gap holds the
             * main process's waits for a core, which workers, more processes winning a larger
             * share of the cores, each wait less (imagenet -j 0 beside other work: 700 ms gaps
             * for 335 ms of CPU; priced by its gaps, 2 workers were said to save 40% of the
             * window where -j 2 saved 73%; by its CPU, 60%). The cores are those the process
             * may use. */
            double now = (double)avg_gap + step_ns, then = cpb / rec, shared = (cpb + step_ns) / cores;
            then = then > step_ns ? then : step_ns;
            then = then > shared ? then : shared;
            double per = now - then;
            per = per < 0 ? 0 : per > (double)avg_gap ? (double)avg_gap : per;
            c->saving_ns = (uint64_t)(per * (double)gaps);
        }
    }
    /* The main process waiting for a core in its own gaps while loader workers held the
     * cores: the loading's CPU, not its own work, made it late (imagenet -j 4 on 2 cores:
     * 0.29 s per second, the gaps between its launches as long as the loading gaps). A cheaper
     * loading, or more cores, gives that time back: dataloader-starvation is owed it. */
    if (ctx == CTA_CAUSE_HOST_WORK && (c->causes & CTA_CAUSE_CPU_BOUND) && c->workers) {
        double others = c->busy_cores - (c->main_cpu_cores < c->busy_cores ? c->main_cpu_cores
                                                                           : c->busy_cores);
        double share = others > c->worker_cpu_cores ? c->worker_cpu_cores / others : 1;
        double waited = c->main_wait_cores < 1 ? c->main_wait_cores : 1;
        c->wait_for_workers_ns = (uint64_t)((double)c->covered_ns * waited * share);
    }
    /* the other fixes can save up to the gaps themselves, no more */
    if (c->causes & ~CTA_CAUSE_ADD_WORKERS)
        c->saving_ns = c->gap_ns;
    if (c->saving_ns > c->gap_ns)
        c->saving_ns = c->gap_ns;
}

static void put(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t n, const char *fmt, ...)
{
    size_t o = strlen(buf);
    if (o + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + o, n - o, fmt, ap);
    va_end(ap);
}

void cta_starve_cause_text(const cta_starve_cause *c, int ctx, int torch, char *buf, size_t n)
{
    char b1[32], b2[32], b3[32], b4[32];
    if (!c->known) {
        put(buf, n, "cause: cannot be told without host samples (a trace of cutrace run with "
                    "CUTRACE_HOST_SAMPLE_MS above 0, as by default, has them)\n");
        return;
    }
    int host = ctx == CTA_CAUSE_HOST_WORK;
    /* the cores the process may use, as its affinity and its cgroup limit them */
    char cores[160];
    int o = snprintf(cores, sizeof cores, "%u CPU%s", c->cpus, c->cpus == 1 ? "" : "s");
    if (c->machine_cpus > c->cpus)
        o += snprintf(cores + o, sizeof cores - (size_t)o, " of the machine's %u (its affinity)",
                      c->machine_cpus);
    if (c->limit_cores > 0)
        snprintf(cores + o, sizeof cores - (size_t)o,
                 " limited to %.2f by its cgroup (throttled %.0f%% of the gap time)",
                 c->limit_cores, 100 * c->throttled_share);
    put(buf, n, "cause, from the host samples during the gaps (%s of their %s inside sample "
                "intervals): %s, %.2f busy (%.2f by processes outside the tree), %.2f free, %u "
                "loader worker%s on %.2f cores, main process on %.2f (run-queue wait %.2f s per "
                "second)\n",
        cta_fmt_ns(b1, (double)c->covered_ns), cta_fmt_ns(b2, (double)c->gap_ns), cores,
        c->busy_cores, c->outside_cores, c->free_cores, c->workers, c->workers == 1 ? "" : "s",
        c->worker_cpu_cores, c->main_cpu_cores, c->main_wait_cores);
    const char *w = torch ? "DataLoader workers (num_workers)" : "loader workers";
    /* who the GPU waited for, as the readings that tell name it */
    const char *who = !c->by_main ? "the workers"
                    : host ? "the main process"
                           : "the main process, loading the batches itself (no loader workers)";
    char at_gaps[64]; /* the gaps' time, as the fixes that can save at most that say it */
    snprintf(at_gaps, sizeof at_gaps, "saves at most the gaps, %s", cta_fmt_ns(b3, (double)c->gap_ns));
    if ((c->causes & CTA_CAUSE_ADD_WORKERS) && c->by_main)
        put(buf, n, "cause add-workers: the loading ran in the main process (no loader workers%s) "
                    "and computed %.0f%% of its time outside CUDA in the gaps: a batch costs it %s "
                    "of CPU against a step of %s between batches (%s of it GPU work); %d %s (at "
                    "most the %u CPUs: the main process then waits for the batches) would save %s\n",
            torch ? ": DataLoader num_workers=0" : "", 100 * c->main_compute_share,
            cta_fmt_ns(b1, c->main_cpu_per_gap_ns), cta_fmt_ns(b2, c->step_ns),
            cta_fmt_ns(b4, c->gpu_step_ns), c->workers_recommended, w, c->limit_cores > 0 ? (unsigned)ceil(c->limit_cores) : c->cpus,
            cta_fmt_ns(b3, (double)c->saving_ns));
    else if (c->causes & CTA_CAUSE_ADD_WORKERS)
        put(buf, n, "cause add-workers: the workers were busy and got a core whenever they could "
                    "run (run-queue wait %.2f s per second); a batch costs the workers %s of CPU "
                    "against a step of %s between batches (%s of it GPU work): %d %s (%d more; at "
                    "most the %u CPUs less the main process's) would save %s\n",
            c->worker_wait_cores, cta_fmt_ns(b1, c->worker_cpu_per_batch_ns),
            cta_fmt_ns(b2, c->step_ns), cta_fmt_ns(b4, c->gpu_step_ns), c->workers_recommended, w,
            c->workers_recommended - (int)c->workers,
            c->limit_cores > 0 ? (unsigned)ceil(c->limit_cores) : c->cpus,
            cta_fmt_ns(b3, (double)c->saving_ns));
    if ((c->causes & CTA_CAUSE_CPU_BOUND) && c->cores_full)
        put(buf, n, "cause cpu-bound: %s already kept every core the process may use busy (%.2f "
                    "free; a batch costs %s of CPU against a step of %s between batches, more "
                    "than the cores can prepare in time): more workers will not help; move "
                    "preprocessing to the GPU, cache decoded samples, use cheaper augmentation, "
                    "or give the job more cores (%s)\n",
            who, c->free_cores,
            cta_fmt_ns(b1, c->by_main ? c->main_cpu_per_gap_ns : c->worker_cpu_per_batch_ns),
            cta_fmt_ns(b2, c->step_ns), at_gaps);
    else if (c->causes & CTA_CAUSE_CPU_BOUND) {
        char full[160];
        if (c->limit_cores > 0 && c->free_cores < c->cpus - c->busy_cores)
            snprintf(full, sizeof full, "its cgroup's limit of %.2f CPUs was used up (%.2f free, "
                     "throttled %.0f%% of the gap time)", c->limit_cores, c->free_cores,
                     100 * c->throttled_share);
        else
            snprintf(full, sizeof full, "every core was busy (%.2f free%s)", c->free_cores,
                     c->outside_cores >= 0.5 ? ", much of the busy time by processes outside the tree" : "");
        put(buf, n, "cause cpu-bound: %s and %s waited %.2f s per second for a core: %s (%s)\n",
            full, who, c->by_main ? c->main_wait_cores : c->worker_wait_cores,
            host ? "its work between the GPU's ran late for want of a core; give the job more "
                   "cores or keep other processes and surplus threads off its cores"
                 : "more workers will not help; move preprocessing to the GPU, cache decoded "
                   "samples, use cheaper augmentation, or give the job more cores",
            at_gaps);
    }
    if (c->causes & CTA_CAUSE_STORAGE)
        put(buf, n, "cause storage-bound: %s %s in I/O wait (a thread in D state in %.0f%% of "
                    "%s readings; machine iowait %.2f cores%s%.0f%s) reading %.2f MB/s%s: %s (%s)\n",
            who, c->by_main ? "was" : "were", 100 * (c->by_main ? c->main_d_share : c->worker_d_share),
            c->by_main ? "its" : "their", c->iowait_cores, c->psi_io >= 0 ? ", PSI io " : "",
            c->psi_io >= 0 ? 100 * c->psi_io : 0, c->psi_io >= 0 ? "%" : "",
            (c->by_main ? c->main_read_bps : c->worker_read_bps) / 1e6,
            c->by_main ? "" : " together",
            host ? "it read files between its GPU work (data, checkpoints): read them ahead in a "
                   "background thread, from local or faster storage, or cache them"
            : c->by_main ? "load in worker processes so that reading overlaps the GPU's work, "
                           "copy the data set to local storage or cache it, read larger "
                           "sequential blocks"
                         : "copy the data set to local storage or cache it, read larger "
                           "sequential blocks, prefetch more",
            at_gaps);
    if (c->causes & CTA_CAUSE_MAIN_BUSY)
        put(buf, n, "cause main-busy: the main thread computed %.0f%% of its time outside CUDA in "
                    "the gaps (%s of CPU in the %llu gaps; the main process on %.2f cores): "
                    "%s%s; %s (%s)\n",
            c->main_compute_share >= 0 ? 100 * c->main_compute_share : 100 * c->main_cpu_cores,
            cta_fmt_ns(b1, c->main_cpu_per_gap_ns * (double)c->gaps), (unsigned long long)c->gaps,
            c->main_cpu_cores,
            host ? "host work between its GPU launches" : "collate or preprocessing in the main process",
            torch ? " (Python overhead)" : "",
            host ? "overlap it with the GPU's work: queue the next GPU work before it, move it "
                   "off the critical path (CUDA graphs for per-launch overhead)"
                 : "move it into the workers",
            at_gaps);
    if (c->causes & CTA_CAUSE_MEMORY)
        put(buf, n, "cause memory-pressure: swap %.0f pages/s, major faults %.0f/s, PSI memory "
                    "%.0f%%: page-cache thrash or swapping; use less memory%s or cache less (%s)\n",
            c->swap_pages_s > 0 ? c->swap_pages_s : 0, c->majflt_s > 0 ? c->majflt_s : 0,
            c->psi_mem > 0 ? 100 * c->psi_mem : 0, c->by_main ? "" : " per worker", at_gaps);
    if (!c->causes)
        put(buf, n, "cause: none of the known ones held during the gaps (%s neither %s, nor "
                    "short of a core, nor in I/O wait; no memory pressure)%s\n",
            c->by_main ? "the main process" : "workers", c->by_main ? "computing" : "busy",
            host ? ": it waited for something else (another process or thread, a lock, the network)"
                 : "");
}
