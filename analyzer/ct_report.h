/* The summary's two renderings of one finished model and its diagnoses: aligned text tables with
 * human units, and one JSON document following analyzer/JSON.md (schema_version
 * CT_SCHEMA_VERSION). Both show the same sections and numbers; the text cuts long tables at
 * `top` rows, the JSON never does. The text is in ct_report.c, the JSON in ct_json_report.c; the
 * figures both show are computed once (ct_report_int.h). */
#ifndef CT_REPORT_H
#define CT_REPORT_H

#include <stdio.h>

#include "ct_diag.h"
#include "ct_gemm.h"
#include "ct_model.h"

#define CT_SCHEMA_VERSION 2

typedef struct {
    int top;                  /* rows per text table (0: all) */
    int variants;             /* kernel grid/block variants table */
    const ct_diag_opts *diag; /* the options the diagnoses were computed with */
    const ct_gemm_row *gemm;  /* cuBLAS matrix products (ct_gemm_rows), ngemm of them */
    size_t ngemm;
} ct_report_opts;

void ct_report_text(FILE *f, const ct_model *m, const ct_diag *dg, int ndiag, const ct_report_opts *o);
void ct_report_json(FILE *f, const ct_model *m, const ct_diag *dg, int ndiag, const ct_report_opts *o);

/* Per process and device breakdown, shared by both renderings and the ranks table. */
typedef struct {
    uint64_t window, busy, idle;
    uint64_t busy_bounded;    /* of busy, covered only by end-bounded operations: at most this
                               * much less busy, more idle */
    ct_hostsplit host;
    double max_speedup_gpu, max_speedup_host; /* INFINITY when the bound is unlimited */
} ct_breakdown;
void ct_breakdown_of(const ct_dev *d, ct_breakdown *b);

/* How process p ended, in words ("exit status 3", "killed by signal 15 (SIGTERM)", "no END
 * record: ..."), into buf (160 bytes hold every text); returns buf. */
const char *ct_end_text(const ct_model *m, const ct_proc *p, char *buf, size_t n);

#endif
