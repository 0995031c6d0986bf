/* `cutrace summary` of Kineto traces: each file read once, streaming, into HTA's breakdown. */
#include "cta_kineto_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cta_cli.h"
#include "cta_hta.h"
#include "cta_map.h"
#include "cta_out.h"
#include "cta_report.h"

static const char no_kernels[] =
    "no GPU kernels in this trace (no event with a stream left after HTA's filters): HTA's "
    "breakdown has nothing to measure (HTA 0.5.0 fails on it with an IndexError)";

typedef struct {
    const char *path;
    cta_kmeta meta;
    cta_hta_res res;
} kfile;

int cta_kineto_inputs(char *const *paths, int n)
{
    int kineto = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        kineto += stat(paths[i], &st) == 0 && S_ISREG(st.st_mode) && cta_kineto_sniff(paths[i]) == 1;
    }
    return kineto == 0 ? 0 : kineto == n ? 1 : -1;
}

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

static void json_doc(FILE *out, const kfile *fs, int n)
{
    cta_json j;
    cta_json_init(&j, out, 1);
    cta_json_obj(&j);
    CTA_JK_I64(&j, "schema_version", CTA_SCHEMA_VERSION);
    CTA_JK_STR(&j, "input", "kineto");
    cta_json_key(&j, "kineto");
    cta_json_arr(&j);
    for (int i = 0; i < n; i++) {
        cta_json_obj(&j);
        CTA_JK_STR(&j, "file", fs[i].path);
        CTA_JK_U64(&j, "events", fs[i].meta.events);
        CTA_JK_I64(&j, "devices", fs[i].meta.ndevices);
        cta_json_key(&j, "rank");
        if (fs[i].meta.has_rank)
            cta_json_i64(&j, fs[i].meta.rank);
        else
            cta_json_null(&j);
        cta_json_end_obj(&j);
    }
    cta_json_end_arr(&j);
    cta_json_key(&j, "hta");
    cta_json_obj(&j);
    CTA_JK_STR(&j, "definitions", "HolisticTraceAnalysis 0.5.0 get_temporal_breakdown");
    cta_json_key(&j, "ranks");
    cta_json_arr(&j);
    for (int i = 0; i < n; i++)
        json_file(&j, &fs[i]);
    cta_json_end_arr(&j);
    cta_json_end_obj(&j);
    cta_json_end_obj(&j);
    fputc('\n', out);
}

static void text_doc(FILE *out, const kfile *fs, int n)
{
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
    fputs("Kineto events are not yet mapped onto cutrace's own tables and diagnoses.\n", out);
}

int cta_kineto_summary(const char *cmd, char *const *paths, int n, int json, FILE *out)
{
    kfile *fs = cta_xmalloc((size_t)n * sizeof *fs, "Kineto files");
    int rc = CTA_EXIT_OK;
    for (int i = 0; i < n && rc == CTA_EXIT_OK; i++) {
        char err[512];
        fs[i].path = paths[i];
        cta_hta *h = cta_hta_new();
        if (cta_kineto_read(paths[i], cta_hta_event, h, &fs[i].meta, err, sizeof err) != 0) {
            fprintf(stderr, "cutrace %s: error: %s\n", cmd, err);
            rc = CTA_EXIT_INPUT;
        } else {
            cta_hta_result(h, &fs[i].res);
        }
        cta_hta_free(h);
    }
    if (rc == CTA_EXIT_OK) {
        if (json)
            json_doc(out, fs, n);
        else
            text_doc(out, fs, n);
    }
    free(fs);
    return rc;
}
