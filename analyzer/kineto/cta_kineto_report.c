/* `cutrace summary` of Kineto traces: each file read once, streaming, into HTA's breakdown. */
#include "cta_kineto_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_cli.h"
#include "cta_hta.h"
#include "cta_kineto_open.h"
#include "cta_map.h"
#include "cta_out.h"

static const char no_kernels[] =
    "no GPU kernels in this trace (no event with a stream left after HTA's filters): HTA's "
    "breakdown has nothing to measure (HTA 0.5.0 fails on it with an IndexError)";

typedef struct {
    char *path;
    cta_kmeta meta;
    cta_hta *hta;
    cta_hta_res res;
} kfile;

static double pct(int64_t part, int64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

static void json_file(cta_json *j, const kfile *f)
{
    cta_json_obj(j);
    CTA_JK_STR(j, "file", f->path);
    cta_json_key(j, "rank");
    if (f->meta.has_rank)
        cta_json_i64(j, f->meta.rank);
    else
        cta_json_i64(j, 0);
    CTA_JK_U64(j, "kernels", f->res.kernels);
    cta_json_key(j, "last_step_dropped");
    cta_json_bool(j, f->res.last_step_dropped);
    if (!f->res.kernels) {
        CTA_JK_STR(j, "message", no_kernels);
    } else {
        const cta_hta_res *r = &f->res;
        CTA_JK_I64(j, "kernel_time_ns", r->kernel_us * 1000);
        CTA_JK_I64(j, "idle_ns", r->idle_us * 1000);
        CTA_JK_I64(j, "compute_ns", r->compute_us * 1000);
        CTA_JK_I64(j, "non_compute_ns", r->non_compute_us * 1000);
        CTA_JK_NUM(j, "idle_pct", pct(r->idle_us, r->kernel_us));
        CTA_JK_NUM(j, "compute_pct", pct(r->compute_us, r->kernel_us));
        CTA_JK_NUM(j, "non_compute_pct", pct(r->non_compute_us, r->kernel_us));
    }
    cta_json_end_obj(j);
}

struct cta_kineto_hta {
    kfile *fs;
    size_t n;
};

void cta_kineto_hta_json(cta_json *j, const cta_kineto_hta *h)
{
    const kfile *fs = h->fs;
    CTA_JK_STR(j, "input", "kineto");
    cta_json_key(j, "kineto");
    cta_json_arr(j);
    for (size_t i = 0; i < h->n; i++) {
        cta_json_obj(j);
        CTA_JK_STR(j, "file", fs[i].path);
        CTA_JK_U64(j, "events", fs[i].meta.events);
        CTA_JK_I64(j, "devices", fs[i].meta.ndevices);
        cta_json_key(j, "rank");
        if (fs[i].meta.has_rank)
            cta_json_i64(j, fs[i].meta.rank);
        else
            cta_json_null(j);
        cta_json_end_obj(j);
    }
    cta_json_end_arr(j);
    cta_json_key(j, "hta");
    cta_json_obj(j);
    CTA_JK_STR(j, "definitions", "HolisticTraceAnalysis 0.5.0 get_temporal_breakdown");
    cta_json_key(j, "ranks");
    cta_json_arr(j);
    for (size_t i = 0; i < h->n; i++)
        json_file(j, &fs[i]);
    cta_json_end_arr(j);
    cta_json_end_obj(j);
}

void cta_kineto_hta_text(FILE *out, const cta_kineto_hta *h)
{
    const kfile *fs = h->fs;
    int n = (int)h->n;
    fputs("HTA temporal breakdown (HolisticTraceAnalysis 0.5.0's definitions; analyzer/KINETO.md)\n",
          out);
    static const char *const hd[] = {"file", ">rank", ">kernels", ">kernel time", ">idle",
                                     ">compute", ">non-compute"};
    cta_table *t = cta_table_new(7, hd);
    for (int i = 0; i < n; i++) {
        const cta_hta_res *r = &fs[i].res;
        char name[256], rank[24], k[24], b[4][32];
        snprintf(rank, sizeof rank, "%lld", (long long)(fs[i].meta.has_rank ? fs[i].meta.rank : 0));
        snprintf(k, sizeof k, "%llu", (unsigned long long)r->kernels);
        cta_text_safe(name, sizeof name, fs[i].path, 60);
        if (!r->kernels) {
            cta_table_row(t, name, rank, k, "-", "-", "-", "-");
            continue;
        }
        cta_fmt_ns(b[0], (double)r->kernel_us * 1e3);
        cta_fmt_pct(b[1], pct(r->idle_us, r->kernel_us));
        cta_fmt_pct(b[2], pct(r->compute_us, r->kernel_us));
        cta_fmt_pct(b[3], pct(r->non_compute_us, r->kernel_us));
        cta_table_row(t, name, rank, k, b[0], b[1], b[2], b[3]);
    }
    cta_table_print(t, out, "  ");
    cta_table_free(t);
    for (int i = 0; i < n; i++)
        if (!fs[i].res.kernels)
            fprintf(out, "  %s: %s\n", fs[i].path, no_kernels);
}

/* Rule 3's filter applies to every trace when two distinct step names appear in all of them
 * together, as HTA counts over its directory's symbol table. */
static int drop_last_step(const kfile *fs, size_t n)
{
    const char *seen = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name;
        int k = cta_hta_step_names(fs[i].hta, &name);
        if (k >= 2 || (k == 1 && seen && strcmp(seen, name) != 0))
            return 1;
        if (k == 1)
            seen = name;
    }
    return 0;
}

int cta_kineto_hta_run(const char *cmd, char *const *paths, int npaths, cta_kineto_hta **out)
{
    char **files;
    size_t n;
    cta_kineto_files(paths, npaths, &files, &n);
    kfile *fs = cta_xmalloc((n ? n : 1) * sizeof *fs, "Kineto files");
    int rc = CTA_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        char err[512];
        fs[i].path = files[i];
        fs[i].hta = cta_hta_new();
        if (rc == CTA_EXIT_OK &&
            cta_kineto_read(files[i], cta_hta_event, fs[i].hta, &fs[i].meta, err, sizeof err) != 0) {
            fprintf(stderr, "cutrace %s: error: %s\n", cmd, err);
            rc = CTA_EXIT_INPUT;
        }
    }
    free(files);
    cta_kineto_hta *h = cta_xmalloc(sizeof *h, "the hta block");
    h->fs = fs;
    h->n = n;
    if (rc != CTA_EXIT_OK) {
        cta_kineto_hta_free(h);
        return rc;
    }
    int drop = drop_last_step(fs, n);
    for (size_t i = 0; i < n; i++)
        cta_hta_result(fs[i].hta, drop, &fs[i].res);
    *out = h;
    return rc;
}

void cta_kineto_hta_free(cta_kineto_hta *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        cta_hta_free(h->fs[i].hta);
        free(h->fs[i].path);
    }
    free(h->fs);
    free(h);
}
