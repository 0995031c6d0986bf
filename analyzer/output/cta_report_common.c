/* What the outputs of a finished model compute alike (cta_report_common.h). */
#define _GNU_SOURCE /* sigabbrev_np */
#include "cta_report_common.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_enum_names.h"
#include "cta_kineto_open.h"
#include "cta_out.h"
#include "cta_names.h"

void cta_breakdown_of(const cta_dev *d, cta_breakdown *b)
{
    memset(b, 0, sizeof *b);
    b->window = cta_dev_window(d);
    b->busy = d->busy < b->window ? d->busy : b->window;
    b->idle = b->window - b->busy;
    b->host = d->idle;
    b->max_speedup_gpu = b->idle ? (double)b->window / (double)b->idle : INFINITY;
    b->max_speedup_host = b->busy ? (double)b->window / (double)b->busy : INFINITY;
    b->busy_bounded = d->busy_bounded < b->busy ? d->busy_bounded : b->busy;
}

void cta_report_breakdowns(const cta_proc *p,
                           void (*fn)(void *ctx, const cta_proc *p, int dev, uint64_t untimed,
                                      const cta_breakdown *b),
                           void *ctx)
{
    for (int d = 0; d < CTA_MAX_DEV; d++) {
        const cta_dev *dv = &p->dev[d];
        uint64_t untimed = cta_dev_untimed(dv);
        if (!dv->windowed && !untimed)
            continue;
        cta_breakdown b;
        cta_breakdown_of(dv, &b);
        fn(ctx, p, d, untimed, &b);
    }
}

/* ---- shared orderings ----------------------------------------------------------------------- */

static const cta_stat *sort_stats;
static int by_total(const void *a, const void *b)
{
    const cta_stat *s = &sort_stats[*(const uint32_t *)a], *t = &sort_stats[*(const uint32_t *)b];
    /* kernels never timed: by instances, then their launch calls' time */
    uint64_t k1[3] = {cta_stat_total(s), s->launched, s->launch_ns},
             k2[3] = {cta_stat_total(t), t->launched, t->launch_ns};
    for (int i = 0; i < 3; i++)
        if (k1[i] != k2[i])
            return k1[i] < k2[i] ? 1 : -1;
    return (int)(*(const uint32_t *)a) - (int)(*(const uint32_t *)b);
}

/* Indices of stats sorted by total time, descending (caller frees). */
uint32_t *cta_report_sorted(const cta_stat *s, size_t n)
{
    uint32_t *idx = cta_xmalloc(n * sizeof *idx, "a sorted table");
    for (size_t i = 0; i < n; i++)
        idx[i] = (uint32_t)i;
    sort_stats = s;
    qsort(idx, n, sizeof *idx, by_total);
    return idx;
}

/* The END code: the exit status, the signal, or -1 where unknown: writers before format 1.1
 * wrote 0 for every exit. */
int cta_report_end_code(const cta_model *m, const cta_proc *p)
{
    int exit = p->end.how == CT_END_EXIT || p->end.how == CT_END_EXIT_NOW;
    if (exit && ct_reader_header(m->rd, p->file)->minor < 1)
        return -1;
    return p->end.code;
}

const char *cta_report_shlib_kind(uint32_t kind)
{
    static const char *const names[] = {"other", "cudart", "cuda", "cublas", "cublasLt", "cudnn"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : names[0];
}

const char *const cta_report_end_how[CTA_REPORT_END_HOWS] = {"unknown", "exit", "signal", "abort",
                                                         "detached", "_exit", "stopped"};

/* Why writing the trace failed (END CT_END_STOPPED's code, LOSS CT_LOSS_WRITE's why): a JSON
 * token and words. */
static const struct {
    const char *key, *words;
} cta_stops[] = {
    [CT_WRITE_NO_SPACE] = {"disk_full", "the file system was full (ENOSPC)"},
    [CT_WRITE_QUOTA] = {"quota", "the disk quota was reached (EDQUOT)"},
    [CT_WRITE_FILE_LIMIT] = {"file_size_limit",
                             "the file reached the process's file size limit (RLIMIT_FSIZE)"},
    [CT_WRITE_ERROR] = {"write_error", "a write failed"},
};

const char *cta_stop_key(int code)
{
    return code > 0 && (size_t)code < sizeof cta_stops / sizeof *cta_stops && cta_stops[code].key
               ? cta_stops[code].key : "write_error";
}

const char *cta_stop_words(int code)
{
    return code > 0 && (size_t)code < sizeof cta_stops / sizeof *cta_stops && cta_stops[code].key
               ? cta_stops[code].words : cta_stops[CT_WRITE_ERROR].words;
}

/* The signals a program raises on itself by a fault of its own, not sent by somebody. */
static int cta_crash_signal(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGSYS;
}

const char *cta_end_text(const cta_model *m, const cta_proc *p, char *buf, size_t n)
{
    int code = cta_report_end_code(m, p);
    char sig[48] = "";
    const char *abbrev = code > 0 ? sigabbrev_np(code) : NULL;
    if (abbrev)
        snprintf(sig, sizeof sig, " (SIG%s)", abbrev);
    if (!p->ended && cta_kineto_source(m->rd, p->file))
        snprintf(buf, n, "not in a Kineto trace (the profiler records no process exit)");
    else if (!p->ended)
        snprintf(buf, n, "no END record: killed (SIGKILL, as the OOM killer sends) or the "
                 "machine stopped");
    else if ((p->end.how == CT_END_EXIT || p->end.how == CT_END_EXIT_NOW) && code < 0)
        snprintf(buf, n, "%s, status not recorded", cta_report_end_how[p->end.how]);
    else if (p->end.how == CT_END_EXIT)
        snprintf(buf, n, "exit status %d", code);
    else if (p->end.how == CT_END_EXIT_NOW)
        snprintf(buf, n, "_exit status %d (exit handlers and destructors did not run)", code);
    else if (p->end.how == CT_END_SIGNAL && cta_crash_signal(code))
        snprintf(buf, n, "crashed: signal %d%s", code, sig);
    else if (p->end.how == CT_END_SIGNAL)
        snprintf(buf, n, "killed by signal %d%s", code, sig);
    else if (p->end.how == CT_END_STOPPED)
        snprintf(buf, n, "trace stopped early: %s; the program went on untraced, its end "
                 "unknown", cta_stop_words(code));
    else if (p->end.how == CT_END_ABORT)
        snprintf(buf, n, "abort%s", sig);
    else if (p->end.how == CT_END_DETACH)
        snprintf(buf, n, "exec (the program replaced its image; the tracer detached)");
    else
        snprintf(buf, n, "unknown END (how %u, code %d)", p->end.how, code);
    return buf;
}

/* Most time-consuming kernel of a process is not tracked per process; the ranks table uses
 * the device with the most busy time. */
static int main_dev(const cta_proc *p)
{
    int best = -1;
    for (int d = 0; d < CTA_MAX_DEV; d++)
        if (p->dev[d].windowed && (best < 0 || p->dev[d].busy > p->dev[best].busy))
            best = d;
    return best;
}

uint64_t cta_report_proc_peak(const cta_proc *p)
{
    uint64_t peak = 0;
    for (int d = 0; d < CTA_MAX_DEV; d++)
        if (p->dev[d].peak > peak)
            peak = p->dev[d].peak;
    return peak;
}

/* The breakdown of a process's busiest device; 0 when it has none, or when that device has
 * untimed operations (then its busy and idle time are unknown). */
int cta_report_proc_breakdown(const cta_proc *p, cta_breakdown *b)
{
    memset(b, 0, sizeof *b);
    int d = main_dev(p);
    if (d < 0 || cta_dev_untimed(&p->dev[d]))
        return 0;
    cta_breakdown_of(&p->dev[d], b);
    return 1;
}

/* Stragglers: ranks whose GPU busy time or wall time exceeds the median rank's by more than
 * 10%. Only processes with a rank identity (a rank variable in their environment) are compared:
 * the processes of a fork tree do different work, and none of them lags the others. */
size_t cta_report_ranked(const cta_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nprocs; i++)
        n += m->procs[i].rank >= 0;
    return n;
}
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
/* The median over the ranks (busy: over those whose busy time is known; 0 if none). */
static uint64_t median_of(const cta_model *m, int busy)
{
    uint64_t *v = cta_xmalloc(m->nprocs * sizeof *v, "the ranks' medians");
    size_t n = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        cta_breakdown b;
        if (p->rank >= 0 && (!busy || cta_report_proc_breakdown(p, &b)))
            v[n++] = busy ? b.busy : cta_wall_of(p);
    }
    qsort(v, n, sizeof *v, cmp_u64);
    uint64_t r = n ? v[n / 2] : 0;
    free(v);
    return r;
}
const char *cta_report_straggler(const cta_model *m, const cta_proc *p)
{
    if (p->rank < 0 || cta_report_ranked(m) < 2)
        return NULL;
    cta_breakdown b;
    uint64_t mb = median_of(m, 1), mw = median_of(m, 0);
    if (mb && cta_report_proc_breakdown(p, &b) && b.busy * 10 > mb * 11)
        return "GPU work";
    if (mw && cta_wall_of(p) * 10 > mw * 11)
        return "wall time";
    return NULL;
}

void cta_report_json_stacks(cta_json *j, const cta_model *m, const cta_proc *p, const cta_stackset *s)
{
    cta_json_key(j, "stacks");
    cta_json_arr(j);
    for (uint32_t i = 0; i < s->n; i++) {
        char st[CTA_FULL_STACK_LEN];
        cta_json_str(j, cta_model_stack_text(m, p, s->ids[i], st, sizeof st, CTA_FULL_STACK_FRAMES));
    }
    cta_json_end_arr(j);
    cta_json_key(j, "more_stacks");
    cta_json_bool(j, s->more);
}

const char *cta_report_error_name(int layer, int32_t code)
{
    return layer == CTA_LAYER_RUNTIME ? cta_cuda_error_name(code)
         : layer == CTA_LAYER_DRIVER  ? cta_cu_result_name(code)
                                      : cta_cublas_status_name(code);
}
