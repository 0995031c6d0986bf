/* The report (`cutrace report`): one self-contained HTML page of the summary.
 * The page is analyzer/output/html/shell.html with its markers filled: the stylesheet
 * (analyzer/output/html/report.css), the `summary --json` document of the same options, a few facts
 * about the page itself (its title, where the timeline command's axis starts) and the script
 * that draws everything from the document (analyzer/output/html/js/, joined). The three sources are
 * compiled into the binary (cta_html_assets.S), so the command needs no file beside it and the
 * page nothing from the network. Both JSON documents sit in <script type="application/json">
 * elements with every '<' written as \u003c: no name in a trace can close the element or open a
 * comment there. The file is written under a temporary name in its directory and renamed into
 * place, so a failed write leaves the previous file or none, never half a page. */
#ifndef CTA_HTML_REPORT_H
#define CTA_HTML_REPORT_H

#include "cta_report.h"

/* slices of the page's timeline overview of the busiest stretch, unless --overview says */
#define CTA_HTML_OVERVIEW_SLICES 3000

/* Without --series-bins, the page's time series (utilization per device, memory in use) hold at
 * most this many bins in all, and 1024 each at most, 64 at least: the document and the SVG the
 * browser draws (a dozen elements per utilization bin) stay small with many ranks. */
#define CTA_HTML_SERIES_BINS_TOTAL 16384u
uint32_t cta_html_series_bins(const cta_model *m);

typedef struct {
    const char *title;
    const char *json;             /* the summary document (cta_html_data) */
    size_t json_len;
    uint64_t timeline_offset_ns;  /* how far the summary's time axis (its first activity) lies
                                   * after `cutrace timeline`'s (the earliest trace start) */
} cta_html_page;

/* The summary's JSON document (cta_report_json) in memory, its length in *len; NULL when out of
 * memory. Malloc'd. */
char *cta_html_data(const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o, size_t *len);
/* Writes the page to out through a temporary file beside it; on failure prints why (naming out)
 * and leaves no file behind. Returns a CTA_EXIT_* status. */
int cta_html_write(const char *out, const cta_html_page *p);

#endif
