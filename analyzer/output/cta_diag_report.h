/* The diagnoses (cta_diag.h) in the summary's two renderings: the text section under its
 * heading, and the JSON's `diagnoses` array (analyzer/JSON.md), in the order given (by estimated
 * saving), with the same findings, evidence, call sites and fixes. */
#ifndef CTA_DIAG_REPORT_H
#define CTA_DIAG_REPORT_H

#include <stdio.h>

#include "cta_diag.h"
#include "cta_out.h"

/* The section's lines: first the GPUs whose gap findings could not be made (untimed work), then
 * each finding, or "none above PCT% of the window" (min_saving_pct). */
void cta_diag_report_text(FILE *f, const cta_model *m, const cta_diag *dg, int n, double min_saving_pct);
/* The key "diagnoses" and its array. */
void cta_diag_report_json(cta_json *j, const cta_model *m, const cta_diag *dg, int n);

#endif
