/* The report suite's steps: writing a report and the summary it must show (`cutrace report` and
 * `cutrace summary --json` with the same options), rendering it in headless Chromium (the DOM
 * after the page's script ran, and what Chromium logged), and judging the two with
 * check_report.py. Every test skips (ctt_skip) when tests/report/chromium.sh found no browser. */
#ifndef RP_H
#define RP_H

#include "an_helpers.h"

/* The options given to both `cutrace report` and `cutrace summary --json`: not the defaults
 * (more diagnoses, fewer bins and overview slices than the page's own choice), so that a
 * report which dropped one would embed a document other than the summary's, which the checker
 * compares. */
#define RP_OPTS "--min-saving 0.5 --series-bins 256 --overview 2000"

/* A rendered report: the files of one name under the test's tmpdir. */
typedef struct {
    char html[4096];    /* NAME.html, the report */
    char summary[4096]; /* NAME.json, cutrace summary --json */
    char dom[4096];     /* NAME.dom.html, Chromium's --dump-dom */
    char log[4096];     /* NAME.log, Chromium's stderr */
    char netlog[4096];  /* NAME.netlog.json, Chromium's network log (--log-net-log) */
} rp_files;

/* Sets the paths of NAME's files; skips the test when tests/report/chromium.sh found no
 * browser. */
void rp_name(rp_files *f, const char *name);
/* Writes f->html with `cutrace report RP_OPTS PATHS -o f->html ONLY` and f->summary with
 * `cutrace summary --json RP_OPTS PATHS` (paths and only, the report's own options such as
 * --title: NULL-terminated, only may be NULL, at most 12; each one argument, whatever its
 * bytes). Returns 0, or nonzero after a message. */
int rp_report(const rp_files *f, const char *const paths[], const char *const only[]);
/* The demo report: train_loop --verify (as `make demo` runs it, with --nvtx for the step
 * plot) traced on a simulated H100, reported into NAME's files. Returns 0, or nonzero after a
 * message. */
int rp_demo(rp_files *f, const char *name);
/* f->summary, parsed; NULL after a message. */
tj *rp_summary(const rp_files *f);
/* Opens f->html in headless Chromium (outside hosts mapped to nowhere, a fresh profile) with
 * the extra arguments (NULL-terminated: --dump-dom, or --screenshot=...), its stdout to out
 * (may be NULL: dropped), stderr to f->log and its network log to f->netlog. Returns 0, or nonzero after a message. */
int rp_chromium(const rp_files *f, const char *const extra[], const char *out);
/* check_report.py on f's DOM, logs and summary (hostile: NULL, or --hostile's MARK); returns its
 * exit status (0 pass, 1 failures found), *out its output (free it). -1 if it did not run. */
int rp_check(const rp_files *f, const char *hostile, char **out);
/* Renders f->html (--dump-dom into f->dom) and checks it: fails the test with the checker's
 * findings unless it passes. *out (may be NULL) gets the checker's output. */
int rp_render_ok(const rp_files *f, const char *hostile, char **out);
/* The number after "KEY " in the checker's last line ("checked: values N, ..."), -1 if none. */
long rp_count(const char *out, const char *key);
/* Writes len bytes to path. Returns 0, or nonzero after a message. */
int rp_write(const char *path, const char *data, size_t len);

#endif
