/* The summary's JSON document (analyzer/JSON.md, schema_version CTA_SCHEMA_VERSION): the same
 * sections and numbers as the text (cta_report.h), every row, for tools and the HTML report. */
#ifndef CTA_JSON_REPORT_H
#define CTA_JSON_REPORT_H

#include "cta_report.h"

void cta_report_json(FILE *f, const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o);

#endif
