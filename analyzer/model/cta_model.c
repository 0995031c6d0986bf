/* The model's processes: setting them up from the trace headers, what needs the whole trace once
 * the records are done (cta_model_finish), freeing. The per-record pass is cta_join.c, the time
 * sweep cta_sweep.c, how names are shown cta_names.c; the contract is cta_model.h. */
#include "cta_model_int.h"
#include "cta_feature_int.h"
#include "cta_names.h"
#include "cta_sweep.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cta_op_names[CTA_OP_N] = {"H2D", "D2H", "D2D", "P2P", "H2H", "memset"};
const char *const cta_hk_names[CTA_HK_N] = {"pageable", "pinned", "none"};
const char *const cta_gap_names[CTA_GAP_N] = {"data-loading", "after-sync", "after-sync-copy",
                                            "launch", "host"};

/* ---- processes -------------------------------------------------------------------------- */

static const char *env_value(const ct_header *h, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < h->nenv; i++)
        if (strncmp(h->env[i], name, n) == 0 && h->env[i][n] == '=')
            return h->env[i] + n + 1;
    return NULL;
}

static void proc_init(cta_model *m, cta_proc *p, uint32_t file)
{
    const ct_header *h = ct_reader_header(m->rd, file);
    p->file = file;
    p->rank = -1;
    snprintf(p->host, sizeof p->host, "%s", h && h->hostname ? h->hostname : "");
    p->pid = h ? h->pid : 0;
    p->torch = h && (h->frameworks & CT_FW_TORCH);
    p->kineto = h && h->tracer_version && !strcmp(h->tracer_version, "kineto");
    if (h && h->cmdline) {
        size_t n = h->cmdline_len < sizeof p->command - 1 ? h->cmdline_len : sizeof p->command - 1;
        memcpy(p->command, h->cmdline, n);
        p->command[n] = 0;
        while (n > 0 && p->command[n - 1] == 0)
            n--;
        for (size_t i = 0; i < n; i++)
            if (p->command[i] == 0)
                p->command[i] = ' ';
    }
    static const char *const rank_vars[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK",
                                            "PMI_RANK"};
    for (size_t i = 0; h && i < sizeof rank_vars / sizeof *rank_vars; i++) {
        const char *v = env_value(h, rank_vars[i]);
        if (v && *v) {
            p->rank = atoi(v);
            break;
        }
    }
    /* "gpu_timing=N" among the tracer's options (FORMAT.md 4.1): 0 off, 1 all, N 1 in N */
    const char *gt = h && h->tracer_options ? strstr(h->tracer_options, "gpu_timing=") : NULL;
    p->gpu_timing = gt ? atoi(gt + 11) : -1;
    p->stats = ct_reader_stats(m->rd, file);
    p->t_first = UINT64_MAX;
    for (int d = 0; d <= CTA_MAX_DEV; d++) {
        cta_series_init(&p->dev[d].util, CTA_CH_N, 0);
        cta_series_init(&p->dev[d].mem, 0, 1);
        cta_sketch_init(&p->dev[d].starve_len);
    }
    cta_map_init(&p->thread_idx);
    cta_pool_init(&p->calls, sizeof(cta_joining));
    cta_map_init(&p->stack_idx);
    cta_map_init(&p->site_keys);
    p->nstacks = 1;
    cta_grow(&p->stack_ids, &p->stacks_cap, 1, sizeof *p->stack_ids);
    cta_pool_init(&p->allocs, sizeof(cta_liveent));
    cta_map_init(&p->holders);
    cta_map_init(&p->freed_sizes);
    cta_map_init(&p->sites);
    cta_sketch_init(&p->launch_queue);
    p->sweep = cta_xmalloc(sizeof *p->sweep, "a process's sweep");
    p->sweep->file_span = p->stats->max_span;
}

/* The model of files [file0, file0 + n), their processes set up if procs (else left zero: a
 * merged model's, filled by cta_model_merge). */
static void model_init(cta_model *m, const ct_reader *rd, const cta_observer *obs, uint32_t file0,
                       size_t n, int procs)
{
    memset(m, 0, sizeof *m);
    m->rd = rd;
    m->obs = obs;
    m->plugs = cta_model_plugs();
    m->file0 = file0;
    m->nprocs = n;
    m->procs = cta_xmalloc(m->nprocs * sizeof *m->procs, "the processes");
    cta_map_init(&m->kernel_names);
    cta_map_init(&m->variants);
    cta_map_init(&m->api_names);
    m->kcache = cta_xmalloc(m->nprocs * sizeof *m->kcache, "the name caches");
    m->acache = cta_xmalloc(m->nprocs * sizeof *m->acache, "the name caches");
    m->acat = cta_xmalloc(m->nprocs * sizeof *m->acat, "the name caches");
    m->kcache_n = cta_xmalloc(m->nprocs * sizeof *m->kcache_n, "the name caches");
    m->acache_n = cta_xmalloc(m->nprocs * sizeof *m->acache_n, "the name caches");
    m->t0 = UINT64_MAX;
    for (size_t i = 0; procs && i < m->nprocs; i++) {
        proc_init(m, &m->procs[i], file0 + (uint32_t)i);
        if (obs && obs->on_proc)
            obs->on_proc(obs->ctx, &m->procs[i]);
    }
}

/* The test fault is read on the thread that starts a pass, before any model is fed. */
static void read_test_fault(void)
{
    const char *fault = getenv("CUTRACE_TEST_SWEEP_FAULT");
    cta_sweep_fault = fault && !strcmp(fault, "1");
}

void cta_model_init(cta_model *m, const ct_reader *rd, const cta_observer *obs)
{
    read_test_fault();
    model_init(m, rd, obs, 0, ct_reader_nfiles(rd), 1);
}

void cta_model_init_file(cta_model *m, const ct_reader *rd, const cta_observer *obs, uint32_t file)
{
    model_init(m, rd, obs, file, 1, 1);
}

void cta_model_init_merged(cta_model *m, const ct_reader *rd, int variants)
{
    read_test_fault();
    model_init(m, rd, NULL, 0, ct_reader_nfiles(rd), 0);
    m->variants_on = variants;
}

/* ---- merging partial models (cta_model_init_file) ------------------------------------------- */

/* Adds src's rows of a table to dst's by name; map[i] gets the dst row of src row i. */
static uint32_t *merge_stats(cta_map *dnames, cta_stat **darr, size_t *dcap, cta_map *snames,
                             const cta_stat *sarr)
{
    size_t n = cta_map_count(snames);
    uint32_t *map = cta_xmalloc((n + 1) * sizeof *map, "a table's merge");
    for (size_t i = 0; i < n; i++) {
        int added;
        uint32_t j = cta_map_take(dnames, snames, (uint32_t)i, &added);
        if (added) {
            cta_grow(darr, dcap, j + 1, sizeof **darr);
            cta_sketch_init(&(*darr)[j].d);
            cta_sketch_init(&(*darr)[j].b);
        }
        cta_stat_merge(&(*darr)[j], &sarr[i]);
        map[i] = j;
    }
    return map;
}

static void copystat_merge(cta_copystat *d, const cta_copystat *s)
{
    d->count += s->count;
    d->bytes += s->bytes;
    d->in_graphs += s->in_graphs;
    d->timed += s->timed;
    d->timed_bytes += s->timed_bytes;
    d->ns += s->ns;
    d->bounded += s->bounded;
    d->bounded_bytes += s->bounded_bytes;
    d->bounded_ns += s->bounded_ns;
    if (s->peak_bps && (!d->peak_bps || s->peak_ts < d->peak_ts)) { /* the first copy's */
        d->peak_bps = s->peak_bps;
        d->peak_ts = s->peak_ts;
    }
}

/* What a process holds by row of the kernel and API tables, renumbered (kmap, amap: the merged
 * rows of its partial model's nk and na rows). */
static void proc_renumber(cta_model *dst, cta_proc *p, const uint32_t *kmap, size_t nk_src,
                          const uint32_t *amap, size_t na_src)
{
    size_t nk = cta_map_count(&dst->kernel_names), cap = 0;
    uint64_t *kern = NULL;
    for (size_t k = 0; k < p->kern_cap && k < nk_src; k++)
        if (p->kern_ns[k]) {
            cta_grow(&kern, &cap, nk, sizeof *kern);
            kern[kmap[k]] = p->kern_ns[k];
        }
    free(p->kern_ns);
    p->kern_ns = kern;
    p->kern_cap = cap;
    /* site keys {kind, API row (a synchronization's kind for CTA_SITE_SYNC), stack}: renumbered
     * one to one, so each keeps its index in p->site; a row no API record made (a damaged
     * trace's call without one) stays past the table, as "(unknown call)" */
    cta_map sites;
    cta_map_init(&sites);
    for (uint32_t i = 0; i < cta_map_count(&p->sites); i++) {
        uint32_t key[3];
        memcpy(key, cta_map_key(&p->sites, i), sizeof key);
        if (key[0] != CTA_SITE_SYNC)
            key[1] = key[1] < na_src ? amap[key[1]] : UINT32_MAX - key[1];
        cta_map_get(&sites, key, sizeof key, NULL);
    }
    cta_map_free(&p->sites);
    p->sites = sites;
}

void cta_model_merge(cta_model *dst, cta_model *src)
{
    size_t nk = cta_map_count(&src->kernel_names), na = cta_map_count(&src->api_names);
    uint32_t *kmap = merge_stats(&dst->kernel_names, &dst->kernels, &dst->kernels_cap,
                                 &src->kernel_names, src->kernels);
    uint32_t *amap = merge_stats(&dst->api_names, &dst->api, &dst->api_cap, &src->api_names, src->api);
    free(merge_stats(&dst->variants, &dst->variant_stats, &dst->variants_cap, &src->variants,
                     src->variant_stats));
    for (int op = 0; op < CTA_OP_N; op++)
        for (int hk = 0; hk < CTA_HK_N; hk++)
            copystat_merge(&dst->copies[op][hk], &src->copies[op][hk]);
    if (src->t0 < dst->t0)
        dst->t0 = src->t0;
    dst->launched += src->launched;
    dst->launched_timed += src->launched_timed;
    dst->records += src->records;
    CTA_FEAT_CALL(dst, merge, dst, src);
    for (size_t i = 0; i < src->nprocs; i++) {
        cta_proc *p = &src->procs[i];
        proc_renumber(dst, p, kmap, nk, amap, na);
        dst->procs[p->file] = *p;
        memset(p, 0, sizeof *p); /* moved */
    }
    free(kmap);
    free(amap);
}

/* Pinned bandwidth (bytes/s) of device slot d in direction dir: measured on large pinned copies,
 * else the host link's peak, else 0. */
static double pinned_bps(const cta_proc *p, int d, int dir)
{
    if (p->pinned_ns[d][dir])
        return (double)p->pinned_bytes[d][dir] / (double)p->pinned_ns[d][dir] * 1e9;
    return p->dev[d].have_prop ? cta_dev_link_peak(&p->dev[d].prop) : 0;
}

void cta_model_finish(cta_model *m)
{
    for (size_t i = 0; i < m->nprocs; i++) {
        cta_proc *p = &m->procs[i];
        cta_join_finish(m, p);
        cta_sweep_finish(m, p);
        CTA_FEAT_CALL(m, finish, m, p);
        for (int d = 0; d <= CTA_MAX_DEV; d++) {
            cta_dev *dv = &p->dev[d];
            uint64_t exact = cta_union_len(&dv->u_exact);
            dv->busy_bounded = dv->bounded_ops && dv->busy > exact ? dv->busy - exact : 0;
        }
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < p->kern_cap; k++)
            if (p->kern_ns[k] && (best == SIZE_MAX || p->kern_ns[k] > p->kern_ns[best]))
                best = k;
        if (best != SIZE_MAX) {
            const char *name = cta_map_key(&m->kernel_names, (uint32_t)best);
            char mark[CT_STRING_CUT_MAX];
            size_t keep = ct_string_cut(name, strlen(name), sizeof p->top_kernel - 1, mark);
            snprintf(p->top_kernel, sizeof p->top_kernel, "%.*s%s", (int)keep, name, mark);
        }
        /* pageable copies re-costed at the pinned bandwidth of the same device and direction,
         * or the host link's peak where no pinned copy was measured */
        for (int d = 0; d < CTA_MAX_DEV; d++)
            for (int dir = 0; dir < 2; dir++) {
                if (!p->pg_count[d][dir] && !p->apg_bytes[d][dir])
                    continue;
                double bw = pinned_bps(p, d, dir);
                /* Async pageable copies without a GPU interval: their own time estimated from
                 * their bytes; where no bandwidth is known, the host time of host-to-device
                 * ones (staging: an Async call does not wait for queued work), nothing for
                 * device-to-host ones (their host time includes waiting for queued work) */
                uint64_t ub = p->apg_bytes[d][dir] - p->apg_timed_bytes[d][dir];
                uint64_t uh = p->apg_host_ns[d][dir] - p->apg_timed_host_ns[d][dir];
                if (uh) {
                    uint64_t est = bw > 0 ? (uint64_t)((double)ub / bw * 1e9) : dir ? 0 : uh;
                    p->async_pageable_copy_ns += est < uh ? est : uh;
                    p->async_pageable_from_bw = 1;
                }
                uint64_t span = p->apg_span_ns[d][dir];
                uint64_t pinned = bw > 0 ? (uint64_t)((double)p->apg_timed_bytes[d][dir] / bw * 1e9)
                                         : p->apg_tail_ns[d][dir];
                p->async_pageable_copy_ns += span > pinned ? span - pinned : 0;
                if (!p->pg_count[d][dir])
                    continue;
                /* no bandwidth known: the transfer after staging (it runs at the link's rate,
                 * as a pinned copy would), else nothing to re-cost with */
                uint64_t tail = p->pg_tail_ns[d][dir];
                int from = bw > 0 ? 1 : tail ? 2 : 0;
                if (!p->pinned_ns[d][dir] && from > p->pinned_from)
                    p->pinned_from = from;
                uint64_t recost = bw > 0 ? (uint64_t)((double)p->pg_bytes[d][dir] / bw * 1e9)
                                  : tail ? tail : p->pg_ns[d][dir];
                p->pageable_count += p->pg_count[d][dir];
                p->pageable_bytes += p->pg_bytes[d][dir];
                p->pageable_ns += p->pg_ns[d][dir];
                p->pageable_recost_ns += recost < p->pg_ns[d][dir] ? recost : p->pg_ns[d][dir];
            }
    }
}

static void proc_free(cta_model *m, cta_proc *p)
{
    CTA_FEAT_CALL(m, proc_free, p);
    for (size_t k = 0; k < p->nthreads; k++)
        free(p->threads[k].nested);
    free(p->threads);
    cta_map_free(&p->thread_idx);
    ct_hash_free(&p->corr);
    cta_pool_free(&p->calls);
    cta_map_free(&p->stack_idx);
    free(p->stack_ids);
    free(p->site_group);
    cta_map_free(&p->site_keys);
    free(p->site_first);
    ct_hash_free(&p->live);
    cta_pool_free(&p->allocs);
    cta_map_free(&p->holders);
    free(p->holder_bytes);
    free(p->holder_count);
    free(p->holder_stacks);
    cta_map_free(&p->freed_sizes);
    cta_map_free(&p->sites);
    free(p->site);
    cta_sketch_free(&p->launch_queue);
    for (int d = 0; d <= CTA_MAX_DEV; d++) {
        cta_sketch_free(&p->dev[d].starve_len);
        cta_series_free(&p->dev[d].util);
        cta_series_free(&p->dev[d].mem);
        free(p->dev[d].starve_bins);
        cta_union_free(&p->dev[d].u_exact);
    }
    free(p->kern_ns);
    free(p->capture_win);
    if (p->sweep) {
        for (size_t i = 0; i < p->sweep->cap; i++)
            free(p->sweep->ring[i].v);
        free(p->sweep->ring);
        free(p->sweep->far);
        free(p->sweep->occ);
        free(p->sweep);
    }
}

static void stats_free(cta_stat *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cta_sketch_free(&s[i].d), cta_sketch_free(&s[i].b);
    free(s);
}

void cta_model_free(cta_model *m)
{
    for (size_t i = 0; i < m->nprocs; i++) {
        if (m->procs[i].sweep) /* else never set up, or moved by cta_model_merge */
            proc_free(m, &m->procs[i]);
        free(m->kcache[i]);
        free(m->acache[i]);
        free(m->acat[i]);
    }
    free(m->procs);
    free(m->kcache);
    free(m->acache);
    free(m->acat);
    free(m->kcache_n);
    free(m->acache_n);
    stats_free(m->kernels, cta_map_count(&m->kernel_names));
    stats_free(m->variant_stats, cta_map_count(&m->variants));
    stats_free(m->api, cta_map_count(&m->api_names));
    cta_map_free(&m->kernel_names);
    cta_map_free(&m->variants);
    cta_map_free(&m->api_names);
    CTA_FEAT_CALL(m, free, m);
    memset(m, 0, sizeof *m);
}
