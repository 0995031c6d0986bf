/* The summary's two renderings of one finished model and its diagnoses: aligned text tables with
 * human units, and one JSON document following analyzer/JSON.md (schema_version
 * CTA_SCHEMA_VERSION). Both show the same sections and numbers; the text cuts long tables at
 * `top` rows, the JSON never does. The text is in cta_report.c, the JSON in cta_json_report.c; the
 * figures both show are computed once (cta_report_int.h). */
#ifndef CTA_REPORT_H
#define CTA_REPORT_H

#include <stdio.h>

#include "cta_diag.h"
#include "cta_gemm.h"
#include "cta_model.h"

#define CTA_SCHEMA_VERSION 2

typedef struct {
    int top;                  /* rows per text table (0: all) */
    int variants;             /* kernel grid/block variants table */
    const cta_diag_opts *diag; /* the options the diagnoses were computed with */
    const cta_gemm_row *gemm;  /* cuBLAS matrix products (cta_gemm_rows), ngemm of them */
    size_t ngemm;
    uint32_t series_bins;      /* JSON time series: at most this many bins (0: all kept) */
    const struct cta_overview *overview; /* the JSON's `overview` (cta_overview.h), NULL none */
    const struct cta_kineto_hta *hta; /* Kineto inputs: HTA's breakdown (cta_kineto_report.h),
                                       * NULL none */
} cta_report_opts;

void cta_report_text(FILE *f, const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o);
void cta_report_json(FILE *f, const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o);

/* Per process and device breakdown, shared by both renderings and the ranks table. */
typedef struct {
    uint64_t window, busy, idle;
    uint64_t busy_bounded;    /* of busy, covered only by end-bounded operations: at most this
                               * much less busy, more idle */
    cta_hostsplit host;
    double max_speedup_gpu, max_speedup_host; /* INFINITY when the bound is unlimited */
} cta_breakdown;
void cta_breakdown_of(const cta_dev *d, cta_breakdown *b);

/* How process p ended, in words ("exit status 3", "killed by signal 15 (SIGTERM)", "no END
 * record: ..."), into buf (160 bytes hold every text); returns buf. */
const char *cta_end_text(const cta_model *m, const cta_proc *p, char *buf, size_t n);

#endif
