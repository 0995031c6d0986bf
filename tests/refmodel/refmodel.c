/* The reference model (contract in refmodel.h): every record in memory, everything sorted.
 * Here: reading the records and the whole computation; the tables are in rm_tables.c, the
 * breakdown in rm_breakdown.c. */
#include "rm_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cttrace.h"

const char *const rm_split_names[RM_NSPLIT] = {"idle_in_api_ns", "idle_blocked_ns",
                                               "idle_host_compute_ns", "idle_host_wait_ns",
                                               "idle_host_unknown_ns"};
const char *const rm_gap_names[RM_NGAP] = {"data-loading", "after-sync", "after-sync-copy",
                                           "launch", "host"};

void *rm_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        abort();
    return p;
}

/* ---- small sorting helpers -------------------------------------------------------------- */

int rm_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
static int cmp_det(const void *a, const void *b) { return rm_cmp_u64(a, b); } /* corr first */
int rm_cmp_api_corr(const void *a, const void *b)
{
    const api_t *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}
int rm_cmp_cpu(const void *a, const void *b)
{
    const cpu_t *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}
size_t rm_lower(const uint64_t *v, size_t n, uint64_t x) /* first index with v[i] >= x */
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}
const api_t *rm_find_call(const api_t *v, size_t n, uint64_t corr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m].corr < corr)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < n && v[lo].corr == corr ? &v[lo] : NULL;
}
const det_t *rm_find_det(const file_t *f, uint64_t corr)
{
    size_t lo = 0, hi = f->ndet;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (f->det[m].corr < corr)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < f->ndet && f->det[lo].corr == corr ? &f->det[lo] : NULL;
}

/* ---- reading ------------------------------------------------------------------------------ */

static void quiet(void *ctx, const char *path, const char *msg)
{
    (void)ctx, (void)path, (void)msg;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The trace files of path: itself, or a directory's *.cutrace files by name. */
static char **list_paths(const char *path, size_t *n)
{
    struct stat st;
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l < 9 || strcmp(e->d_name + l - 8, ".cutrace"))
                continue;
            char *p = malloc(strlen(path) + l + 2);
            if (!p)
                abort();
            sprintf(p, "%s/%s", path, e->d_name);
            PUSH(v, *n, cap, p);
        }
        if (d)
            closedir(d);
        qsort(v, *n, sizeof *v, cmp_str);
    } else {
        PUSH(v, *n, cap, strdup(path));
    }
    return v;
}

uint64_t rm_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
int rm_dev_of(uint32_t device) { return device < NDEV ? (int)device : NDEV - 1; }

static void read_all(ct_reader *rd, file_t *files, rm_result *res)
{
    ct_rec r;
    size_t order = 0;
    while (ct_reader_next(rd, &r) == 1) {
        file_t *f = &files[r.file];
        if (r.type >= CT_REC_API && r.type < CT_REC_TYPE_LIMIT) {
            uint64_t first = r.type == CT_REC_API ? r.u.api.start : r.type == CT_REC_GPU ? r.u.gpu.start
                           : r.type == CT_REC_SYNC ? r.u.sync.start : r.ts;
            res->t0 = rm_min_u64(res->t0, rm_min_u64(first, r.ts));
        }
        switch (r.type) {
        case CT_REC_API: {
            api_t a = {.s = rm_min_u64(r.u.api.start, r.ts), .e = r.ts, .corr = r.u.api.corr,
                       .parent = r.u.api.parent, .tid = r.tid, .fn = r.u.api.function,
                       .result = r.u.api.result, .driver = r.u.api.flags & CT_API_DRIVER};
            PUSH(f->api, f->napi, f->capi, a);
            break;
        }
        case CT_REC_GPU: {
            gpu_t g = {.s = rm_min_u64(r.u.gpu.start, r.ts), .e = r.ts, .corr = r.u.gpu.corr,
                       .dev = rm_dev_of(r.u.gpu.device), .bounded = (r.u.gpu.flags & CT_GPU_END_BOUND) != 0};
            PUSH(f->gpu, f->ngpu, f->cgpu, g);
            break;
        }
        case CT_REC_SYNC: {
            sync_t s = {.s = rm_min_u64(r.u.sync.start, r.ts), .e = r.ts, .kind = r.u.sync.kind};
            PUSH(f->sy, f->nsy, f->csy, s);
            break;
        }
        case CT_REC_CPU: {
            cpu_t c = {.t = r.ts, .cpu = r.u.cpu.user_ns + r.u.cpu.sys_ns, .tid = r.u.cpu.tid,
                       .order = order++};
            PUSH(f->cpu, f->ncpu, f->ccpu, c);
            break;
        }
        case CT_REC_DEVICE:
            f->prop[rm_dev_of(r.u.device.device)] = r.u.device;
            f->have_prop[rm_dev_of(r.u.device.device)] = 1;
            break;
        case CT_REC_LAUNCH:
        case CT_REC_COPY: {
            /* work enqueued while its stream was captured into a graph did not execute */
            if (r.type == CT_REC_LAUNCH ? r.u.launch.flags & CT_LAUNCH_CAPTURED
                                        : r.u.copy.flags & CT_COPY_CAPTURED)
                break;
            det_t d = {.type = r.type, .ts = r.ts};
            if (r.type == CT_REC_LAUNCH) {
                d.l = r.u.launch;
                d.corr = d.l.corr;
            } else {
                d.c = r.u.copy;
                d.corr = d.c.corr;
            }
            PUSH(f->det, f->ndet, f->cdet, d);
            break;
        }
        default:
            break;
        }
    }
}

/* ---- the whole trace ------------------------------------------------------------------------ */

rm_result *rm_compute(const char *path, char *err, size_t errlen)
{
    size_t np;
    char **paths = list_paths(path, &np);
    ct_reader_opts o = {.warn = quiet, .file_order = 1};
    ct_reader *rd = NULL;
    if (np == 0 || ct_reader_open(&rd, (const char *const *)paths, np, &o, err, errlen) < 0) {
        if (np == 0)
            snprintf(err, errlen, "%s: no trace files", path);
        for (size_t i = 0; i < np; i++)
            free(paths[i]);
        free(paths);
        return NULL;
    }
    rm_result *res = calloc(1, sizeof *res);
    file_t *files = calloc(np, sizeof *files);
    if (!res || !files)
        abort();
    res->t0 = UINT64_MAX;
    read_all(rd, files, res);
    for (size_t fi = 0; fi < np; fi++) {
        file_t *f = &files[fi];
        const ct_header *hd = ct_reader_header(rd, (uint32_t)fi);
        f->pid = hd ? hd->pid : 0;
        qsort(f->det, f->ndet, sizeof *f->det, cmp_det);
        uint64_t ops[NDEV] = {0}, untimed[NDEV] = {0};
        rm_tables(res, f, rd, (uint32_t)fi, ops, untimed);
        host_t h;
        rm_host_build(&h, f, rd, (uint32_t)fi);
        for (int d = 0; d < NDEV; d++) {
            int has = untimed[d] > 0;
            for (size_t i = 0; i < f->ngpu && !has; i++)
                has = f->gpu[i].dev == d;
            if (ops[d] || f->have_prop[d]) {
                rm_devops o = {.pid = f->pid, .device = d, .ops = ops[d], .timed = ops[d] - untimed[d],
                               .have_prop = f->have_prop[d]};
                if (o.have_prop) {
                    o.mem_peak = rm_mem_peak(&f->prop[d]);
                    o.link_peak = rm_link_peak(&f->prop[d]);
                }
                res->devs = rm_xrealloc(res->devs, (res->ndevs + 1) * sizeof *res->devs);
                res->devs[res->ndevs++] = o;
            }
            if (!has)
                continue;
            res->bd = rm_xrealloc(res->bd, (res->nbd + 1) * sizeof *res->bd);
            rm_breakdown *b = &res->bd[res->nbd++];
            memset(b, 0, sizeof *b);
            b->pid = f->pid;
            b->device = d;
            b->ops = ops[d];
            b->untimed = untimed[d];
            if (!untimed[d])
                rm_compute_breakdown(b, f, &h, d, res->t0);
        }
        rm_host_free(&h);
        free(f->api);
        free(f->gpu);
        free(f->sy);
        free(f->cpu);
        free(f->det);
    }
    free(files);
    ct_reader_close(rd);
    for (size_t i = 0; i < res->nkernels; i++)
        res->kernel_ns += rm_kernel_total(&res->kernels[i]);
    for (size_t i = 0; i < res->nvariants; i++)
        res->variant_ns += rm_kernel_total(&res->variants[i]);
    for (size_t i = 0; i < np; i++)
        free(paths[i]);
    free(paths);
    return res;
}

static void stats_free(rm_stat *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(s[i].name);
        free(s[i].v);
        if (s[i].bnd)
            free(s[i].bnd->v);
        free(s[i].bnd);
    }
    free(s);
}

void rm_free(rm_result *r)
{
    if (!r)
        return;
    free(r->bd);
    free(r->devs);
    stats_free(r->kernels, r->nkernels);
    stats_free(r->api, r->napi);
    stats_free(r->copies, r->ncopies);
    stats_free(r->variants, r->nvariants);
    free(r);
}
