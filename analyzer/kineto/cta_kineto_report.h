/* `cutrace summary` of Kineto (PyTorch profiler) traces: besides cutrace's own analysis of them
 * (converted, cta_kineto_conv.h), the `hta` block (cta_hta.h) per file, as text or JSON
 * (analyzer/JSON.md, section "Kineto inputs"). */
#ifndef CTA_KINETO_REPORT_H
#define CTA_KINETO_REPORT_H

#include <stdio.h>

#include "cta_out.h"

/* 1 when every path is a Kineto trace file or a directory directly holding one, 0 when none
 * is, -1 when they are mixed. */
int cta_kineto_inputs(char *const *paths, int n);
/* The Kineto files of the PATH arguments: a file as given, a directory's files named *.json or
 * *.gz that are Kineto traces, by name (HTA's trace_dir). Malloc'd, each and the list. */
void cta_kineto_files(char *const *paths, int n, char ***files, size_t *nfiles);

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
