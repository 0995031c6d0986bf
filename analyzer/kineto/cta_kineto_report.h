/* `cutrace summary` of Kineto (PyTorch profiler) traces: besides cutrace's own analysis of them
 * (converted, cta_kineto_conv.h), the `hta` block (cta_hta.h) per file, as text or JSON
 * (analyzer/JSON.md, section "Kineto inputs"). */
#ifndef CTA_KINETO_REPORT_H
#define CTA_KINETO_REPORT_H

#include <stdio.h>

#include "cta_out.h"

/* HTA's breakdown of every file (cta_hta.h): each file read once more, streaming; all the files
 * are one job, as HTA's directory (its last-step filter decides over all of them, so their
 * kernels are held until the end). Returns a CTA_EXIT_* status (errors naming the file, the byte
 * offset and what was expected, on stderr) and *h when done. */
typedef struct cta_kineto_hta cta_kineto_hta;
int cta_kineto_hta_run(const char *cmd, char *const *paths, int n, cta_kineto_hta **h);
/* The block in the summary's text, and its JSON keys `kineto` and `hta` (JSON.md) in the
 * summary's top object. */
void cta_kineto_hta_text(FILE *out, const cta_kineto_hta *h);
void cta_kineto_hta_json(cta_json *j, const cta_kineto_hta *h);
void cta_kineto_hta_free(cta_kineto_hta *h);

#endif
