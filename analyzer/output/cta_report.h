/* The summary's two renderings of one finished model and its diagnoses: aligned text tables with
 * human units, and one JSON document following analyzer/JSON.md (schema_version
 * CTA_SCHEMA_VERSION). Both show the same sections and numbers; the text cuts long tables at
 * `top` rows, the JSON never does. The text is in cta_report.c, the JSON in cta_json_report.c
 * (cta_json_report.h); the figures both show are computed once (cta_report_common.h). */
#ifndef CTA_REPORT_H
#define CTA_REPORT_H

#include <stdio.h>

#include "cta_diag.h"
#include "cta_model.h"
#include "cta_report_common.h"

#define CTA_SCHEMA_VERSION 2

typedef struct {
    int top;                  /* rows per text table (0: all) */
    int variants;             /* kernel grid/block variants table */
    const cta_diag_opts *diag; /* the options the diagnoses were computed with */
    uint32_t series_bins;      /* JSON time series: at most this many bins (0: all kept) */
    const struct cta_overview *overview; /* the JSON's `overview` (cta_overview.h), NULL none */
    const struct cta_kineto_hta *hta; /* Kineto inputs: HTA's breakdown (cta_kineto_report.h),
                                       * NULL none */
} cta_report_opts;

void cta_report_text(FILE *f, const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o);

#endif
