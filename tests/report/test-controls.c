/* Negative controls: copies of the demo report with one fault planted each must be caught by
 * the same checker the real reports pass (test-browser.c), with the finding that names the
 * fault; otherwise a page with that fault would pass too and those tests would prove nothing. */
#define _GNU_SOURCE
#include "rp.h"

#include <stdlib.h>

/* A copy of the demo report with `text` inserted at offset where(page) (-1: the place was not
 * found, a failure), rendered in Chromium and checked against the demo's summary: the checker
 * must fail, saying each of the findings (NULL-terminated). Returns 0, or nonzero after a
 * message. */
static int rp_control(const char *name, long (*where)(const char *page), const char *text,
                      const char *const findings[])
{
    rp_files demo, f;
    ASSERT_INT(rp_demo(&demo, "demo"), ==, 0);
    char *page = ctt_read_file(demo.html, NULL);
    ASSERT(page);
    long at = where(page);
    if (at < 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s: the place to plant %s in was not found", demo.html, text);
        free(page);
        return 1;
    }
    rp_name(&f, name);
    snprintf(f.summary, sizeof f.summary, "%s", demo.summary);
    size_t len = strlen(page), tl = strlen(text);
    char *copy = malloc(len + tl + 1);
    ASSERT(copy);
    memcpy(copy, page, (size_t)at);
    memcpy(copy + at, text, tl);
    memcpy(copy + at + tl, page + at, len - (size_t)at + 1);
    free(page);
    int rc = rp_write(f.html, copy, len + tl);
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

/* The first value of the first VRAM curve in the embedded document (pretty-printed or not). */
static long rp_first_bin(const char *page)
{
    const char *key = strstr(page, "\"max_bytes\":");
    const char *v = key ? strchr(key, '[') : NULL;
    if (!v)
        return -1;
    for (v++; *v == ' ' || *v == '\n' || *v == '\r' || *v == '\t'; v++)
        ;
    return v - page;
}

/* An error thrown after the page finished drawing: data-ct-rendered is set, so only the error
 * records (window.onerror's data-ct-errors, the console's "Uncaught") can tell. */
TEST_IMPL(control_script_error_is_caught)
{
    const char *const found[] = {"data-ct-errors", "ct-planted-error", "Uncaught", NULL};
    return rp_control("script-error", rp_script_end, ";throw new Error('ct-planted-error');", found);
}

/* An outside image: the CSP blocks the fetch (the console says so) and the element is seen. */
TEST_IMPL(control_external_image_is_caught)
{
    const char *const found[] = {"element <img> {'src': 'http://example.com/x.png'}",
                                 "Chromium logged", NULL};
    return rp_control("external-image", rp_body_start, "<img src=\"http://example.com/x.png\">", found);
}

/* The page draws a VRAM use the summary does not have: the first bin of the curve in the
 * embedded document gets a leading 1, so the data-value the page gives its bar differs. */
TEST_IMPL(control_wrong_value_is_caught)
{
    const char *const found[] = {"data-path='vram.0.curve.max_bytes.0'> data-value=", NULL};
    return rp_control("wrong-value", rp_first_bin, "1", found);
}
