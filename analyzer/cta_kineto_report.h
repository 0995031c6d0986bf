/* `cutrace summary` of Kineto (PyTorch profiler) traces: the `hta` block (cta_hta.h) per file,
 * as text or JSON (analyzer/JSON.md, section "Kineto inputs"). Mapping Kineto's events onto
 * cutrace's own model is not done yet: the other sections are absent. */
#ifndef CTA_KINETO_REPORT_H
#define CTA_KINETO_REPORT_H

#include <stdio.h>

/* 1 when every path is a Kineto trace file or a directory directly holding one, 0 when none
 * is, -1 when they are mixed. */
int cta_kineto_inputs(char *const *paths, int n);
/* Reads each file once (a directory: its files named *.json or *.gz that are Kineto traces, as
 * HTA's trace_dir) and prints the summary; all the files are one job, as HTA's directory (its
 * last-step filter decides over all of them, so their kernels are held until the end). Returns
 * a CTA_EXIT_* status, errors (naming the file, the byte offset and what was expected) on
 * stderr. */
int cta_kineto_summary(const char *cmd, char *const *paths, int n, int json, FILE *out);

#endif
