/* Negative controls: copies of the demo report with one fault planted each must be caught by
 * the same checker the real reports pass (test-browser.c), with the finding that names the
 * fault; otherwise a page with that fault would pass too and those tests would prove nothing. */
#define _GNU_SOURCE
#include "rp.h"

#include <stdlib.h>

/* Text to insert into the page at offset where(page) (-1: the place was not found). */
typedef struct {
    long (*where)(const char *page);
    const char *text;
} rp_plant;

/* A copy of the demo report with the plants inserted (each at its offset in the original),
 * rendered in Chromium and checked against the demo's summary: the checker must fail, saying
 * each of the findings (NULL-terminated). Returns 0, or nonzero after a message. */
static int rp_control(const char *name, const rp_plant plants[], int n, const char *const findings[])
{
    rp_files demo, f;
    ASSERT_INT(rp_demo(&demo, "demo"), ==, 0);
    char *page = ctt_read_file(demo.html, NULL);
    ASSERT(page);
    size_t len = strlen(page), extra = 0;
    long at[4];
    for (int i = 0; i < n; i++) {
        at[i] = plants[i].where(page);
        extra += strlen(plants[i].text);
        if (at[i] < 0) {
            ctt_fail_at(__FILE__, __LINE__, "%s: the place to plant %s in was not found", demo.html,
                        plants[i].text);
            free(page);
            return 1;
        }
    }
    char *copy = malloc(len + extra + 1);
    ASSERT(copy);
    size_t from = 0, to = 0;
    for (size_t pos = 0; pos <= len; pos++) { /* page bytes, each plant before its offset */
        for (int i = 0; i < n; i++)
            if ((size_t)at[i] == pos) {
                memcpy(copy + to, plants[i].text, strlen(plants[i].text));
                to += strlen(plants[i].text);
            }
        if (pos < len)
            copy[to++] = page[from++];
    }
    free(page);
    rp_name(&f, name);
    snprintf(f.summary, sizeof f.summary, "%s", demo.summary);
    int rc = rp_write(f.html, copy, to);
    free(copy);
    ASSERT_INT(rc, ==, 0);
    const char *const dump[] = {"--dump-dom", NULL};
    ASSERT_INT(rp_chromium(&f, dump, f.dom), ==, 0);
    char *out;
    ASSERT_INT(rp_check(&f, NULL, &out), ==, 1);
    for (int i = 0; findings[i]; i++)
        ASSERT_CONTAINS(out, findings[i]);
    free(out);
    return 0;
}

/* The end of the page's own script (the one that is not JSON data). */
static long rp_script_end(const char *page)
{
    for (const char *s = strstr(page, "<script"); s; s = strstr(s + 1, "<script")) {
        const char *gt = strchr(s, '>'), *end = gt ? strstr(gt, "</script>") : NULL;
        if (end && !memmem(s, (size_t)(gt - s), "application/json", 16))
            return end - page;
    }
    return -1;
}

/* Just inside <body>. */
static long rp_body_start(const char *page)
{
    const char *body = strstr(page, "<body");
    const char *gt = body ? strchr(body, '>') : NULL;
    return gt ? gt + 1 - page : -1;
}

/* The first value of the first utilization series in the embedded document (pretty-printed
 * or not). */
static long rp_first_bin(const char *page)
{
    const char *key = strstr(page, "\"busy_ns\":");
    const char *v = key ? strchr(key, '[') : NULL;
    if (!v)
        return -1;
    for (v++; *v == ' ' || *v == '\n' || *v == '\r' || *v == '\t'; v++)
        ;
    return v - page;
}

/* Inside the CSP meta tag's http-equiv value: an "x-" there makes it no policy. */
static long rp_csp_name(const char *page)
{
    const char *m = strstr(page, "http-equiv=\"Content-Security-Policy\"");
    return m ? m + 12 - page : -1;
}

/* An error thrown a second after the page finished drawing: data-ct-rendered is set, so only
 * the error records (window.onerror's data-ct-errors, the console's "Uncaught") can tell, and
 * only if the dump waits for the page's timers (the virtual time budget). */
TEST_IMPL(control_script_error_is_caught)
{
    const rp_plant p[] = {{rp_script_end,
                           ";setTimeout(function () { throw new Error('ct-planted-error'); }, 1000);"}};
    const char *const found[] = {"data-ct-errors", "ct-planted-error", "Uncaught", NULL};
    return rp_control("script-error", p, 1, found);
}

/* An outside image: the CSP blocks the fetch (the console says so) and the element is seen. */
TEST_IMPL(control_external_image_is_caught)
{
    const rp_plant p[] = {{rp_body_start, "<img src=\"http://example.com/x.png\">"}};
    const char *const found[] = {"element <img> {'src': 'http://example.com/x.png'}",
                                 "Chromium logged", NULL};
    return rp_control("external-image", p, 1, found);
}

/* A request from the script with the policy gone: no element shows it and the console stays
 * silent; only Chromium's network log, which the checker reads, sees it go out. */
TEST_IMPL(control_fetch_is_caught)
{
    const rp_plant p[] = {{rp_csp_name, "x-"},
                          {rp_script_end, ";fetch('http://example.com/ct-planted').catch(function () {});"}};
    const char *const found[] = {"requested http://example.com/ct-planted",
                                 "no <meta http-equiv=\"Content-Security-Policy\">", NULL};
    return rp_control("fetch", p, 2, found);
}

/* The page draws a GPU busy time the summary does not have: the first bin of the utilization
 * series in the embedded document gets a leading 1, so the data-value of its bar differs. */
TEST_IMPL(control_wrong_value_is_caught)
{
    const rp_plant p[] = {{rp_first_bin, "1"}};
    const char *const found[] = {"data-path='breakdown.0.series.busy_ns.0'> data-value=", NULL};
    return rp_control("wrong-value", p, 1, found);
}
