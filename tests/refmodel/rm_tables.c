/* The reference's kernel, copy and API tables (refmodel.h states the definitions). Apart from
 * refmodel.c because the tables are one job and reading the records and the breakdown others. */
#include "rm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables ------------------------------------------------------------------------------- */

static rm_stat *stat_of(rm_stat **arr, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].name, name))
            return &(*arr)[i];
    *arr = rm_xrealloc(*arr, (*n + 1) * sizeof **arr);
    rm_stat *s = &(*arr)[(*n)++];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    s->min = UINT64_MAX;
    return s;
}
static void stat_add(rm_stat *s, uint64_t v)
{
    PUSH(s->v, s->n, s->cap, v);
    s->total += v;
    if (v < s->min)
        s->min = v;
    if (v > s->max)
        s->max = v;
}

/* The row of s's end-bounded values (made on first use). */
static rm_stat *bounded_of(rm_stat *s)
{
    if (!s->bnd) {
        s->bnd = calloc(1, sizeof *s->bnd);
        if (!s->bnd)
            abort();
        s->bnd->min = UINT64_MAX;
    }
    return s->bnd;
}

const rm_stat *rm_shown(const rm_stat *s)
{
    return s->n || !s->bnd ? s : s->bnd;
}

uint64_t rm_kernel_total(const rm_stat *s)
{
    uint64_t nb = rm_timed(s) - s->n;
    if (!s->n)
        return nb ? s->bnd->total : 0;
    /* nb * total / n to the nearest integer: quotient, then the remainder against half */
    unsigned __int128 num = (unsigned __int128)nb * s->total;
    uint64_t q = (uint64_t)(num / s->n), rem = (uint64_t)(num % s->n);
    return s->total + q + (2 * (unsigned __int128)rem >= s->n);
}

void rm_middle(const rm_stat *s, uint64_t *lo, uint64_t *hi)
{
    *lo = *hi = 0;
    if (!s->n)
        return;
    uint64_t *v = malloc(s->n * sizeof *v);
    if (!v)
        abort();
    memcpy(v, s->v, s->n * sizeof *v);
    qsort(v, s->n, sizeof *v, rm_cmp_u64);
    *lo = v[(s->n - 1) / 2];
    *hi = v[s->n / 2];
    free(v);
}

static const char *op_name(const ct_rec_copy *c)
{
    if (c->op == CT_COPY_MEMSET)
        return "memset";
    switch (c->dir) {
    case CT_DIR_HTOD: return "H2D";
    case CT_DIR_DTOH: return "D2H";
    case CT_DIR_PEER: return "P2P";
    case CT_DIR_HTOH: return "H2H";
    default: return "D2D";
    }
}
static const char *host_kind(const ct_rec_copy *c)
{
    if (c->op == CT_COPY_MEMSET)
        return "none";
    int pg, pn;
    if (c->dir == CT_DIR_HTOD) {
        pg = c->src_kind == CT_MEMKIND_PAGEABLE;
        pn = c->src_kind == CT_MEMKIND_PINNED;
    } else if (c->dir == CT_DIR_DTOH) {
        pg = c->dst_kind == CT_MEMKIND_PAGEABLE;
        pn = c->dst_kind == CT_MEMKIND_PINNED;
    } else {
        pg = c->src_kind == CT_MEMKIND_PAGEABLE || c->dst_kind == CT_MEMKIND_PAGEABLE;
        pn = c->src_kind == CT_MEMKIND_PINNED || c->dst_kind == CT_MEMKIND_PINNED;
    }
    return pg ? "pageable" : pn ? "pinned" : "none";
}

/* libstdc++'s demangler: the reference shows kernel names as the user wrote them too */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static void kernel_name(const char *recorded, char *out, size_t len)
{
    int status = -1;
    char *d = strncmp(recorded, "_Z", 2) ? NULL : __cxa_demangle(recorded, NULL, NULL, &status);
    snprintf(out, len, "%s", d && status == 0 ? d : recorded);
    free(d);
}

/* nvcc 13 compiles kernel<<<...>>> into calls of these entry points of libcudart, which the
 * tracer records as it intercepted them (../shared/reference/nvcc-13.0-host-abi.txt) */
static const char *api_name(const char *recorded)
{
    static const char *const internal[] = {"__cudaLaunchKernel", "__cudaLaunchKernel_ptsz"};
    for (size_t i = 0; i < sizeof internal / sizeof *internal; i++)
        if (!strcmp(recorded, internal[i]))
            return "cudaLaunchKernel";
    return recorded;
}

/* A launch of a kernel row: counted, its host time, the earliest launch's configuration. */
static void launch_add(rm_stat *s, const det_t *d, const api_t *call)
{
    const ct_rec_launch *l = &d->l;
    int same = s->recorded && !memcmp(s->grid, l->grid, sizeof s->grid) &&
               !memcmp(s->block, l->block, sizeof s->block);
    if (s->recorded && !same)
        s->vary = 1;
    if (!s->recorded || d->ts < s->first_ts) {
        memcpy(s->grid, l->grid, sizeof s->grid);
        memcpy(s->block, l->block, sizeof s->block);
        s->first_ts = d->ts;
        s->config_tie = 0;
    } else if (d->ts == s->first_ts && !same) {
        s->config_tie = 1;
    }
    s->recorded++;
    if (call)
        s->launch_ns += call->e - call->s;
}

/* The API category the breakdown needs: a synchronous copy or set (its return ends a copy's
 * wait); by name, as the JSON's API table names calls. */
int rm_feeds_call(const char *name)
{
    return strstr(name, "Launch") || strstr(name, "Memcpy") || strstr(name, "Memset") ||
           strstr(name, "Synchronize");
}

int rm_sync_copy_call(const char *name)
{
    return (strstr(name, "Memcpy") || strstr(name, "Memset")) && !strstr(name, "Async");
}

/* ---- the tables ------------------------------------------------------------------------------ */

/* name (the kernel's shown name) prefixed with the launch's configuration, in place */
static void variant_name(const ct_rec_launch *l, char *name, size_t len)
{
    char *kernel = strdup(name);
    if (!kernel)
        abort();
    snprintf(name, len, "<<<(%u,%u,%u),(%u,%u,%u)>>> %s", l->grid[0], l->grid[1], l->grid[2],
             l->block[0], l->block[1], l->block[2], kernel);
    free(kernel);
}

/* Peaks in bytes/s (JSON.md processes[].devices): DDR memory moves two words per clock; a PCIe
 * lane's usable rate after line encoding (8b/10b to gen 2, 128b/130b from gen 3, FLIT mode in
 * gen 6) as the specifications publish it. */
double rm_mem_peak(const ct_rec_device *p)
{
    return 2.0 * (double)p->mem_clock_khz * 1000.0 * (double)p->mem_bus_bits / 8.0;
}
double rm_link_peak(const ct_rec_device *p)
{
    static const double lane_mbps[] = {250, 500, 985, 1969, 3938, 7563}; /* gen 1..6 */
    if ((p->link_kind != CT_LINK_PCIE && p->link_kind != CT_LINK_UNKNOWN) || p->link_gen < 1 ||
        p->link_gen > 6)
        return 0;
    return lane_mbps[p->link_gen - 1] * 1e6 * (double)p->link_width;
}

/* A copy of row s at ts on device dev of file f: the row's peak if it is the earliest so far. */
static void copy_peak(rm_stat *s, const ct_rec_copy *c, uint64_t ts, const file_t *f, int dev)
{
    if (!f->have_prop[dev])
        return;
    int memory = c->op == CT_COPY_MEMSET || c->dir == CT_DIR_DTOD;
    double peak = memory ? rm_mem_peak(&f->prop[dev]) : rm_link_peak(&f->prop[dev]);
    if (peak <= 0)
        return;
    if (s->peak_bps <= 0 || ts < s->peak_ts) {
        s->peak_bps = peak;
        s->peak_ts = ts;
        s->peak_tie = 0;
    } else if (ts == s->peak_ts && peak != s->peak_bps) {
        s->peak_tie = 1;
    }
}

static rm_stat *copy_row(rm_result *res, const ct_rec_copy *c)
{
    char key[32];
    snprintf(key, sizeof key, "%s/%s", op_name(c), host_kind(c));
    return stat_of(&res->copies, &res->ncopies, key);
}

/* One file's rows, and the operations of each of its devices with those never timed. */
void rm_tables(rm_result *res, const file_t *f, const ct_reader *rd, uint32_t fi,
               uint64_t *ops, uint64_t *untimed)
{
    char tmp[CT_STRTMP], name[4096];
    uint64_t *timed = malloc((f->ngpu + 1) * sizeof *timed);
    api_t *calls = malloc((f->napi + 1) * sizeof *calls);
    if (!timed || !calls)
        abort();
    for (size_t i = 0; i < f->ngpu; i++)
        timed[i] = f->gpu[i].corr;
    qsort(timed, f->ngpu, sizeof *timed, rm_cmp_u64);
    memcpy(calls, f->api, f->napi * sizeof *calls);
    qsort(calls, f->napi, sizeof *calls, rm_cmp_api_corr);
    for (size_t i = 0; i < f->ndet; i++) {
        const det_t *d = &f->det[i];
        int dev;
        if (d->type == CT_REC_LAUNCH) {
            const api_t *call = rm_find_call(calls, f->napi, d->corr);
            kernel_name(ct_reader_str(rd, fi, d->l.function, tmp), name, sizeof name);
            launch_add(stat_of(&res->kernels, &res->nkernels, name), d, call);
            variant_name(&d->l, name, sizeof name);
            launch_add(stat_of(&res->variants, &res->nvariants, name), d, call);
            dev = rm_dev_of(d->l.device);
        } else {
            rm_stat *s = copy_row(res, &d->c);
            s->recorded++;
            s->bytes += d->c.bytes;
            copy_peak(s, &d->c, d->ts, f, rm_dev_of(d->c.device));
            if (d->c.op == CT_COPY_MEMCPY && d->c.dir == CT_DIR_HTOH)
                continue; /* no GPU work */
            dev = rm_dev_of(d->c.device);
        }
        size_t k = rm_lower(timed, f->ngpu, d->corr);
        ops[dev]++;
        untimed[dev] += k == f->ngpu || timed[k] != d->corr;
    }
    for (size_t i = 0; i < f->ngpu; i++) {
        const det_t *d = rm_find_det(f, f->gpu[i].corr);
        uint64_t dur = f->gpu[i].e - f->gpu[i].s;
        int bd = f->gpu[i].bounded;
        if (d && d->type == CT_REC_LAUNCH) {
            kernel_name(ct_reader_str(rd, fi, d->l.function, tmp), name, sizeof name);
            rm_stat *k = stat_of(&res->kernels, &res->nkernels, name);
            stat_add(bd ? bounded_of(k) : k, dur);
            variant_name(&d->l, name, sizeof name);
            k = stat_of(&res->variants, &res->nvariants, name);
            stat_add(bd ? bounded_of(k) : k, dur);
        } else if (d && d->type == CT_REC_COPY) {
            rm_stat *s = copy_row(res, &d->c);
            if (bd)
                s = bounded_of(s);
            stat_add(s, dur);
            s->timed_bytes += d->c.bytes;
        }
    }
    for (size_t i = 0; i < f->napi; i++) {
        rm_stat *s = stat_of(&res->api, &res->napi, api_name(ct_reader_str(rd, fi, f->api[i].fn, tmp)));
        stat_add(s, f->api[i].e - f->api[i].s);
        s->failures += f->api[i].result != 0;
        s->driver = f->api[i].driver != 0;
        res->layer_ns[s->driver] += f->api[i].e - f->api[i].s;
    }
    free(timed);
    free(calls);
}
