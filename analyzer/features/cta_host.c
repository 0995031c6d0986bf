/* The host samples of a traced process (see cta_host.h). */
#include "cta_host.h"

#include <stdlib.h>
#include <string.h>

#include "cta_map.h"

/* The process's samples (NULL: none), in its slot (cta_feature.h). */
#define SAMPLED(p) ((struct cta_host *)(p)->feat[CTA_FEAT_HOST])

const char *const cta_role_names[3] = {"main", "loader worker", "other"};

/* A process's readings: one entry per process (a pid reused is another entry). */
typedef struct {
    uint32_t pid, ppid, relation;
    uint64_t start;
    char comm[32];
    int in_trace;                 /* began after the trace did: its baseline is 0 at its start */
    int have;                     /* readings taken */
    uint64_t base_ts, last_ts;
    ct_rec_proc_sample base, last;
    uint64_t samples, iowait_samples;
} cta_hproc;

struct cta_host {
    cta_hproc *v;
    size_t n, cap;
    ct_hash by_pid;               /* pid -> index in v of its latest process */
    uint64_t nh;                  /* machine readings */
    uint64_t hfirst_ts, hlast_ts;
    ct_rec_host_sample hfirst, hlast;
    uint64_t mem_min;
    uint64_t acc_rchar, acc_cpu;  /* the tree's since the previous machine reading */
    cta_host_rates rates;         /* of the record taken last */
    cta_host_iv acc;              /* the round being read: the tree's sums */
    int main_thread_waited;       /* the round's main-thread reading gave acc.main_wait_ns */
    ct_rec_proc_sample main_thread; /* the traced process's main thread's last reading */
    cta_host_iv *iv;              /* closed intervals */
    size_t niv, cap_iv;
};

/* A process's start is to the clock tick: one that began up to a tick before the trace's first
 * record may still have begun after it. */
#define CTA_HOST_TICK_NS 10000000ull

static int role_of(uint32_t relation)
{
    return relation == CT_PROC_SELF ? CTA_ROLE_MAIN
         : relation == CT_PROC_FORKED ? CTA_ROLE_WORKER : CTA_ROLE_OTHER;
}

/* The latest entry of pid (a reused pid's newest process), or NULL. */
static cta_hproc *find(const struct cta_host *h, uint32_t pid)
{
    const uint32_t *i = ct_hash_find(&h->by_pid, pid);
    return i ? &h->v[*i] : NULL;
}

static uint64_t cpu_of(const ct_rec_proc_sample *s) { return s->user_ns + s->sys_ns; }
static uint64_t sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

static void on_proc(const cta_model *m, const cta_proc *p, struct cta_host *h, const ct_rec *r)
{
    const ct_rec_proc *pr = &r->u.proc;
    cta_hproc *e = find(h, pr->pid);
    if (e && e->start == pr->start)
        return; /* announced again in a new file of the same process (a failed exec) */
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 16;
        h->v = cta_xrealloc(h->v, h->cap * sizeof *h->v, "the process tree");
    }
    if (pr->pid) /* 0 is no process: its readings are left out */
        cta_xhash_put(&h->by_pid, pr->pid, (uint32_t)h->n, "the process tree");
    e = &h->v[h->n++];
    memset(e, 0, sizeof *e);
    e->pid = pr->pid;
    e->ppid = pr->ppid;
    e->relation = pr->relation;
    e->start = pr->start;
    e->in_trace = pr->relation != CT_PROC_SELF && p->t_first != UINT64_MAX &&
                  pr->start + CTA_HOST_TICK_NS >= p->t_first;
    char tmp[CT_STRTMP];
    snprintf(e->comm, sizeof e->comm, "%s", ct_reader_str(m->rd, r->file, pr->comm, tmp));
}

/* A thread's reading: the process's covers it, but for the run-queue wait of the traced
 * process's main thread (tid = pid: it calls CUDA), which tells whether the GPU waited for it
 * to get a core; the sum over its threads (the sampler's, the CUDA library's, a framework's
 * pool) would blur that. */
static void on_thread(struct cta_host *h, const ct_rec_proc_sample *s)
{
    const cta_hproc *e = find(h, s->pid);
    if (s->tid != s->pid || !e || role_of(e->relation) != CTA_ROLE_MAIN)
        return;
    const ct_rec_proc_sample *a = &h->main_thread;
    if (a->tid == s->tid && !((s->flags | a->flags) & CT_PS_NO_SCHED)) {
        h->acc.main_wait_ns += sub(s->wait_ns, a->wait_ns);
        h->main_thread_waited = 1;
    }
    h->main_thread = *s;
}

static void on_sample(struct cta_host *h, const ct_rec *r)
{
    const ct_rec_proc_sample *s = &r->u.proc_sample;
    if (s->tid) {
        on_thread(h, s);
        return;
    }
    cta_hproc *e = find(h, s->pid);
    if (!e)
        return; /* its PROC record was lost with a damaged chunk */
    const ct_rec_proc_sample *from = NULL;
    uint64_t from_ts = 0;
    if (e->have) {
        from = &e->last;
        from_ts = e->last_ts;
    } else if (e->in_trace) {
        from = &e->base; /* zeros at its start */
        from_ts = e->base_ts = e->start;
    } else {
        e->base = *s;
        e->base_ts = r->ts;
    }
    if (from) {
        uint64_t dcpu = sub(cpu_of(s), cpu_of(from));
        h->acc_cpu += dcpu;
        uint64_t drchar = s->flags & CT_PS_NO_IO ? 0 : sub(s->rchar, from->rchar);
        h->acc_rchar += drchar;
        h->acc.tree_cpu_ns += dcpu;
        if (role_of(e->relation) == CTA_ROLE_MAIN) {
            h->acc.main_cpu_ns += dcpu;
            h->acc.mains++;
            h->acc.main_in_d += s->state == 'D'; /* its main thread's state */
            h->acc.main_rchar += drchar;
            if (!h->main_thread_waited && !((s->flags | from->flags) & CT_PS_NO_SCHED))
                h->acc.main_wait_ns += sub(s->wait_ns, from->wait_ns);
        } else if (role_of(e->relation) == CTA_ROLE_WORKER) {
            h->acc.workers++;
            h->acc.workers_in_d += s->blocked > 0;
            h->acc.worker_cpu_ns += dcpu;
            h->acc.worker_rchar += drchar;
            uint64_t dwait = (s->flags | from->flags) & CT_PS_NO_SCHED ? 0 : sub(s->wait_ns, from->wait_ns);
            h->acc.worker_wait_ns += dwait;
            h->acc.workers_active += r->ts > from_ts && 10 * (dcpu + dwait) >= r->ts - from_ts;
        }
        if (r->ts > from_ts)
            h->rates = (cta_host_rates){.ts = r->ts, .from = from_ts, .pid = s->pid, .role = role_of(e->relation),
                                        .cpu_cores = (double)dcpu / (double)(r->ts - from_ts)};
    }
    e->last = *s;
    e->last_ts = r->ts;
    e->have = 1;
    e->samples++;
    e->iowait_samples += s->blocked > 0;
}

static void on_machine(struct cta_host *h, const ct_rec *r)
{
    const ct_rec_host_sample *s = &r->u.host_sample;
    if (!h->nh) {
        h->hfirst = *s;
        h->hfirst_ts = r->ts;
        h->mem_min = UINT64_MAX;
    } else if (r->ts > h->hlast_ts) {
        double dt = (double)(r->ts - h->hlast_ts);
        h->rates = (cta_host_rates){
            .ts = r->ts, .from = h->hlast_ts, .busy_cores = (double)sub(s->busy_ns, h->hlast.busy_ns) / dt,
            .iowait_cores = (double)sub(s->iowait_ns, h->hlast.iowait_ns) / dt,
            .tree_read_bps = (double)h->acc_rchar * 1e9 / dt, .tree_cpu_cores = (double)h->acc_cpu / dt};
        const ct_rec_host_sample *a = &h->hlast;
        cta_host_iv v = h->acc;
        v.from = h->hlast_ts;
        v.to = r->ts;
        v.machine_cpus = s->cpus;
        if (s->job_cpus && a->job_cpus) {
            v.cpus = s->job_cpus;
            v.busy_ns = sub(s->job_busy_ns, a->job_busy_ns);
            v.iowait_ns = sub(s->job_iowait_ns, a->job_iowait_ns);
        } else {
            v.cpus = s->cpus;
            v.busy_ns = sub(s->busy_ns, a->busy_ns);
            v.iowait_ns = sub(s->iowait_ns, a->iowait_ns);
        }
        if (s->quota_mcpu && s->quota_mcpu == a->quota_mcpu) {
            v.quota_cores = s->quota_mcpu / 1000.0;
            v.throttled_ns = sub(s->throttled_ns, a->throttled_ns);
            v.cg_cpu_known = !((s->flags | a->flags) & CT_HS_NO_CG_USAGE);
            v.cg_cpu_ns = v.cg_cpu_known ? sub(s->cg_cpu_ns, a->cg_cpu_ns) : 0;
        }
        v.psi_known = !((s->flags | a->flags) & CT_HS_NO_PSI);
        if (v.psi_known) {
            v.psi_cpu_ns = sub(s->psi_cpu_some_ns, a->psi_cpu_some_ns);
            v.psi_io_ns = sub(s->psi_io_some_ns, a->psi_io_some_ns);
            v.psi_mem_ns = sub(s->psi_mem_some_ns, a->psi_mem_some_ns);
        }
        v.vm_known = !((s->flags | a->flags) & CT_HS_NO_VM);
        if (v.vm_known) {
            v.swap_pages = sub(s->swap_in, a->swap_in) + sub(s->swap_out, a->swap_out);
            v.majflt = sub(s->majflt, a->majflt);
        }
        cta_grow(&h->iv, &h->cap_iv, h->niv + 1, sizeof *h->iv);
        h->iv[h->niv++] = v;
    }
    memset(&h->acc, 0, sizeof h->acc);
    h->main_thread_waited = 0;
    h->acc_rchar = h->acc_cpu = 0;
    if (!(s->flags & CT_HS_NO_MEM) && s->mem_available < h->mem_min)
        h->mem_min = s->mem_available;
    h->hlast = *s;
    h->hlast_ts = r->ts;
    h->nh++;
}

void cta_host_rec(cta_model *m, cta_proc *p, const ct_rec *r)
{
    if (!p->feat[CTA_FEAT_HOST])
        p->feat[CTA_FEAT_HOST] = cta_xmalloc(sizeof(struct cta_host), "a process's host samples");
    struct cta_host *h = p->feat[CTA_FEAT_HOST];
    memset(&h->rates, 0, sizeof h->rates);
    if (r->type == CT_REC_PROC)
        on_proc(m, p, h, r);
    else if (r->type == CT_REC_PROC_SAMPLE)
        on_sample(h, r);
    else if (r->type == CT_REC_HOST_SAMPLE)
        on_machine(h, r);
}

void cta_host_free(cta_proc *p)
{
    struct cta_host *h = p->feat[CTA_FEAT_HOST];
    if (h) {
        ct_hash_free(&h->by_pid);
        free(h->v);
        free(h->iv);
        free(h);
        p->feat[CTA_FEAT_HOST] = NULL;
    }
}

int cta_host_rates_of(const cta_proc *p, const ct_rec *r, cta_host_rates *out)
{
    if (!SAMPLED(p) || !SAMPLED(p)->rates.ts || SAMPLED(p)->rates.ts != r->ts)
        return 0;
    *out = SAMPLED(p)->rates;
    return 1;
}

size_t cta_host_intervals(const cta_proc *p, const cta_host_iv **v)
{
    *v = SAMPLED(p) ? SAMPLED(p)->iv : NULL;
    return SAMPLED(p) ? SAMPLED(p)->niv : 0;
}

size_t cta_host_rows(const cta_proc *p, cta_host_row **rows)
{
    *rows = NULL;
    const struct cta_host *h = SAMPLED(p);
    if (!h || !h->n)
        return 0;
    cta_host_row *v = cta_xmalloc(h->n * sizeof *v, "the process table");
    size_t n = 0;
    for (size_t i = 0; i < h->n; i++) {
        const cta_hproc *e = &h->v[i];
        if (!e->have)
            continue;
        cta_host_row *w = &v[n++];
        const ct_rec_proc_sample *b = &e->base, *l = &e->last;
        w->pid = e->pid;
        w->ppid = e->ppid;
        w->role = role_of(e->relation);
        memcpy(w->comm, e->comm, sizeof w->comm);
        w->span_ns = sub(e->last_ts, e->base_ts);
        w->user_ns = sub(l->user_ns, b->user_ns);
        w->sys_ns = sub(l->sys_ns, b->sys_ns);
        w->cpu_ns = w->user_ns + w->sys_ns;
        w->io_known = !(l->flags & CT_PS_NO_IO) && (e->in_trace || !(b->flags & CT_PS_NO_IO));
        if (w->io_known) {
            w->rchar = sub(l->rchar, b->rchar);
            w->wchar = sub(l->wchar, b->wchar);
            w->read_bytes = sub(l->read_bytes, b->read_bytes);
            w->write_bytes = sub(l->write_bytes, b->write_bytes);
        }
        w->majflt = sub(l->majflt, b->majflt);
        w->samples = e->samples;
        w->iowait_samples = e->iowait_samples;
        w->wait_known = !(l->flags & CT_PS_NO_SCHED) && (e->in_trace || !(b->flags & CT_PS_NO_SCHED));
        w->wait_ns = w->wait_known ? sub(l->wait_ns, b->wait_ns) : 0;
    }
    if (!n) { /* processes announced but never read (their samples lost) */
        free(v);
        v = NULL;
    }
    *rows = v;
    return n;
}

/* The machine over the trace's samples. */
typedef struct {
    int known;                    /* two machine readings or more */
    uint32_t cpus;
    uint64_t span_ns;
    double busy_cores, iowait_cores, steal_cores; /* averages over the span */
    uint64_t mem_total, mem_available_min;
    int mem_known;
    uint64_t swap_in, swap_out, majflt;
    int vm_known;
    double psi_cpu_some, psi_io_some, psi_io_full, psi_mem_some, psi_mem_full; /* share of span */
    int psi_known;
    /* the traced process's CPUs and limit (format 1.9), when the first and last readings agree */
    uint32_t job_cpus;            /* 0 unknown */
    double job_busy_cores, job_iowait_cores;
    double quota_cores;           /* 0 none */
    double cg_cores, throttled_share; /* the limiting cgroup's CPU per second; share of time throttled */
    int cg_known;
} cta_host_machine;

static cta_host_machine cta_host_machine_of(const cta_proc *p)
{
    cta_host_machine x = {0};
    const struct cta_host *h = SAMPLED(p);
    if (!h || h->nh < 2 || h->hlast_ts <= h->hfirst_ts)
        return x;
    const ct_rec_host_sample *a = &h->hfirst, *b = &h->hlast;
    double dt = (double)(h->hlast_ts - h->hfirst_ts);
    x.known = 1;
    x.cpus = b->cpus;
    x.span_ns = h->hlast_ts - h->hfirst_ts;
    x.busy_cores = (double)sub(b->busy_ns, a->busy_ns) / dt;
    x.iowait_cores = (double)sub(b->iowait_ns, a->iowait_ns) / dt;
    x.steal_cores = (double)sub(b->steal_ns, a->steal_ns) / dt;
    x.mem_known = !(b->flags & CT_HS_NO_MEM) && h->mem_min != UINT64_MAX;
    x.mem_total = b->mem_total;
    x.mem_available_min = x.mem_known ? h->mem_min : 0;
    x.vm_known = !((a->flags | b->flags) & CT_HS_NO_VM);
    x.swap_in = sub(b->swap_in, a->swap_in);
    x.swap_out = sub(b->swap_out, a->swap_out);
    x.majflt = sub(b->majflt, a->majflt);
    x.psi_known = !((a->flags | b->flags) & CT_HS_NO_PSI);
    x.psi_cpu_some = (double)sub(b->psi_cpu_some_ns, a->psi_cpu_some_ns) / dt;
    x.psi_io_some = (double)sub(b->psi_io_some_ns, a->psi_io_some_ns) / dt;
    x.psi_io_full = (double)sub(b->psi_io_full_ns, a->psi_io_full_ns) / dt;
    x.psi_mem_some = (double)sub(b->psi_mem_some_ns, a->psi_mem_some_ns) / dt;
    x.psi_mem_full = (double)sub(b->psi_mem_full_ns, a->psi_mem_full_ns) / dt;
    if (a->job_cpus && a->job_cpus == b->job_cpus) {
        x.job_cpus = b->job_cpus;
        x.job_busy_cores = (double)sub(b->job_busy_ns, a->job_busy_ns) / dt;
        x.job_iowait_cores = (double)sub(b->job_iowait_ns, a->job_iowait_ns) / dt;
    }
    if (a->quota_mcpu && a->quota_mcpu == b->quota_mcpu) {
        x.quota_cores = b->quota_mcpu / 1000.0;
        x.throttled_share = (double)sub(b->throttled_ns, a->throttled_ns) / dt;
        x.cg_known = !((a->flags | b->flags) & CT_HS_NO_CG_USAGE);
        x.cg_cores = x.cg_known ? (double)sub(b->cg_cpu_ns, a->cg_cpu_ns) / dt : 0;
    }
    return x;
}

static double per_s(uint64_t v, uint64_t ns) { return ns ? (double)v * 1e9 / (double)ns : 0; }

/* ---- the summary ---- */

void cta_host_text(FILE *f, const cta_model *m)
{
    int any = 0;
    for (size_t i = 0; i < m->nprocs; i++) {
        const cta_proc *p = &m->procs[i];
        cta_host_row *rows;
        size_t n = cta_host_rows(p, &rows);
        cta_host_machine mc = cta_host_machine_of(p);
        if (!n && !mc.known)
            continue;
        if (!any)
            fprintf(f, "\n== Process tree (host samples) ==\n");
        any = 1;
        char b[6][32];
        fprintf(f, "  process %u: %zu process%s of its tree sampled", p->pid, n, n == 1 ? "" : "es");
        if (SAMPLED(p)->nh > 1)
            fprintf(f, " every %s over %s",
                    cta_fmt_ns(b[0], (double)mc.span_ns / (double)(SAMPLED(p)->nh - 1)),
                    cta_fmt_ns(b[1], (double)mc.span_ns));
        fprintf(f, "; CPU %% is of one core over the process's time in the trace, read and "
                   "write are the bytes its calls passed (rchar, wchar), I/O wait the share of "
                   "readings with a thread in D state\n");
        static const char *const heads[] = {">PID", "Role", "Name", ">CPU", ">CPU %",
                                           ">Read MB/s", ">Write MB/s", ">I/O wait", ">Major faults"};
        cta_table *t = cta_table_new(9, heads);
        for (size_t k = 0; k < n; k++) {
            const cta_host_row *w = &rows[k];
            char pid[16], name[40], rd[32], wr[32], faults[32];
            snprintf(pid, sizeof pid, "%u", w->pid);
            cta_text_safe(name, sizeof name, w->comm, 24);
            if (w->io_known) {
                snprintf(rd, sizeof rd, "%.2f", per_s(w->rchar, w->span_ns) / 1e6);
                snprintf(wr, sizeof wr, "%.2f", per_s(w->wchar, w->span_ns) / 1e6);
            } else {
                snprintf(rd, sizeof rd, "unknown");
                snprintf(wr, sizeof wr, "unknown");
            }
            snprintf(faults, sizeof faults, "%llu", (unsigned long long)w->majflt);
            cta_table_row(t, pid, cta_role_names[w->role], name, cta_fmt_ns(b[0], (double)w->cpu_ns),
                          w->span_ns ? cta_fmt_pct(b[1], 100.0 * (double)w->cpu_ns / (double)w->span_ns) : "-",
                          rd, wr,
                          cta_fmt_pct(b[2], w->samples ? 100.0 * (double)w->iowait_samples / (double)w->samples : 0),
                          faults);
        }
        cta_table_print(t, f, "    ");
        cta_table_free(t);
        free(rows);
        if (mc.known) {
            fprintf(f, "  machine: %u CPUs, busy %.2f cores on average (%s), iowait %.2f cores, "
                    "steal %.2f cores", mc.cpus, mc.busy_cores,
                    cta_fmt_pct(b[0], mc.cpus ? 100.0 * mc.busy_cores / mc.cpus : 0), mc.iowait_cores,
                    mc.steal_cores);
            if (mc.job_cpus && (mc.job_cpus < mc.cpus || mc.quota_cores))
                fprintf(f, "; the process may use %u of them (its affinity), busy %.2f cores, "
                           "iowait %.2f", mc.job_cpus, mc.job_busy_cores, mc.job_iowait_cores);
            if (mc.quota_cores) {
                fprintf(f, "; its cgroup limits it to %.2f cores", mc.quota_cores);
                if (mc.cg_known)
                    fprintf(f, ", used %.2f", mc.cg_cores);
                fprintf(f, ", throttled %s of the time", cta_fmt_pct(b[1], 100 * mc.throttled_share));
            }
            if (mc.mem_known)
                fprintf(f, "; memory available at least %s of %s",
                        cta_fmt_bytes(b[1], (double)mc.mem_available_min), cta_fmt_bytes(b[2], (double)mc.mem_total));
            if (mc.vm_known)
                fprintf(f, "; swapped in %llu and out %llu pages, %llu major faults",
                        (unsigned long long)mc.swap_in, (unsigned long long)mc.swap_out,
                        (unsigned long long)mc.majflt);
            if (mc.psi_known)
                fprintf(f, "; stalled (pressure): CPU %s, I/O %s (all tasks %s), memory %s",
                        cta_fmt_pct(b[3], 100 * mc.psi_cpu_some), cta_fmt_pct(b[4], 100 * mc.psi_io_some),
                        cta_fmt_pct(b[5], 100 * mc.psi_io_full), cta_fmt_pct(b[0], 100 * mc.psi_mem_some));
            fputc('\n', f);
        }
    }
}

static void json_row(cta_json *j, const cta_host_row *w)
{
    cta_json_obj(j);
    CTA_JK_U64(j, "pid", w->pid);
    CTA_JK_U64(j, "ppid", w->ppid);
    CTA_JK_STR(j, "role", cta_role_names[w->role]);
    CTA_JK_STR(j, "name", w->comm);
    CTA_JK_U64(j, "span_ns", w->span_ns);
    CTA_JK_U64(j, "cpu_ns", w->cpu_ns);
    CTA_JK_U64(j, "user_ns", w->user_ns);
    CTA_JK_U64(j, "sys_ns", w->sys_ns);
    CTA_JK_NUM(j, "cpu_pct", w->span_ns ? 100.0 * (double)w->cpu_ns / (double)w->span_ns : 0);
    CTA_JK_U64_IF(j, "runqueue_wait_ns", w->wait_known, w->wait_ns);
    CTA_JK_U64_IF(j, "rchar_bytes", w->io_known, w->rchar);
    CTA_JK_U64_IF(j, "wchar_bytes", w->io_known, w->wchar);
    CTA_JK_U64_IF(j, "read_bytes", w->io_known, w->read_bytes);
    CTA_JK_U64_IF(j, "write_bytes", w->io_known, w->write_bytes);
    CTA_JK_NUM_IF(j, "read_gbps", w->io_known, per_s(w->rchar, w->span_ns) / 1e9);
    CTA_JK_NUM_IF(j, "write_gbps", w->io_known, per_s(w->wchar, w->span_ns) / 1e9);
    CTA_JK_U64(j, "samples", w->samples);
    CTA_JK_U64(j, "iowait_samples", w->iowait_samples);
    CTA_JK_U64(j, "major_faults", w->majflt);
    cta_json_end_obj(j);
}

static void json_machine(cta_json *j, const cta_host_machine *mc)
{
    cta_json_obj(j);
    CTA_JK_U64(j, "cpus", mc->cpus);
    CTA_JK_U64(j, "span_ns", mc->span_ns);
    CTA_JK_NUM(j, "busy_cores", mc->busy_cores);
    CTA_JK_NUM(j, "iowait_cores", mc->iowait_cores);
    CTA_JK_NUM(j, "steal_cores", mc->steal_cores);
    CTA_JK_U64_IF(j, "mem_total_bytes", mc->mem_known, mc->mem_total);
    CTA_JK_U64_IF(j, "mem_available_min_bytes", mc->mem_known, mc->mem_available_min);
    CTA_JK_U64_IF(j, "swap_in_pages", mc->vm_known, mc->swap_in);
    CTA_JK_U64_IF(j, "swap_out_pages", mc->vm_known, mc->swap_out);
    CTA_JK_U64_IF(j, "major_faults", mc->vm_known, mc->majflt);
    CTA_JK_NUM_IF(j, "pressure_cpu_some", mc->psi_known, mc->psi_cpu_some);
    CTA_JK_NUM_IF(j, "pressure_io_some", mc->psi_known, mc->psi_io_some);
    CTA_JK_NUM_IF(j, "pressure_io_full", mc->psi_known, mc->psi_io_full);
    CTA_JK_NUM_IF(j, "pressure_memory_some", mc->psi_known, mc->psi_mem_some);
    CTA_JK_NUM_IF(j, "pressure_memory_full", mc->psi_known, mc->psi_mem_full);
    CTA_JK_U64_IF(j, "job_cpus", mc->job_cpus, mc->job_cpus);
    CTA_JK_NUM_IF(j, "job_busy_cores", mc->job_cpus, mc->job_busy_cores);
    CTA_JK_NUM_IF(j, "job_iowait_cores", mc->job_cpus, mc->job_iowait_cores);
    CTA_JK_NUM_IF(j, "cpu_limit_cores", mc->quota_cores > 0, mc->quota_cores);
    CTA_JK_NUM_IF(j, "cgroup_cpu_cores", mc->cg_known, mc->cg_cores);
    CTA_JK_NUM_IF(j, "throttled_share", mc->quota_cores > 0, mc->throttled_share);
    cta_json_end_obj(j);
}

void cta_host_json(cta_json *j, const cta_proc *p)
{
    cta_host_row *rows;
    size_t n = cta_host_rows(p, &rows);
    cta_host_machine mc = cta_host_machine_of(p);
    if (!n && !mc.known)
        return;
    cta_json_key(j, "process_tree");
    cta_json_obj(j);
    cta_json_key(j, "processes");
    cta_json_arr(j);
    for (size_t k = 0; k < n; k++)
        json_row(j, &rows[k]);
    cta_json_end_arr(j);
    free(rows);
    cta_json_key(j, "machine");
    if (mc.known)
        json_machine(j, &mc);
    else
        cta_json_null(j);
    cta_json_end_obj(j);
}

static void host_text(FILE *f, const cta_model *m, int top)
{
    (void)top;
    cta_host_text(f, m);
}

const cta_feature cta_host_feature = {
    .name = "host",
    .types = 1ull << CT_REC_PROC | 1ull << CT_REC_PROC_SAMPLE | 1ull << CT_REC_HOST_SAMPLE,
    .record = cta_host_rec,
    .proc_free = cta_host_free,
    .text = host_text,
    .proc_json = cta_host_json,
};
