/* The report's page (cta_html_report.h). */
#include "cta_html_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cta_cli.h"
#include "cta_json_report.h"
#include "cta_out.h"

/* cta_html_assets.S: the page's sources, each ending with a zero byte */
extern const char cta_html_shell[], cta_html_css[], cta_html_js[];

/* JSON text as the body of a <script> element: '<' as its JSON escape */
static void put_script_json(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<')
            fputs("\\u003c", f);
        else
            putc_unlocked(s[i], f);
    }
}

/* text as HTML character data (the <title> element) of a page declared UTF-8: a byte that is not
 * part of valid UTF-8, and a control character (HTML forbids them), as U+FFFD */
static void put_html_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n;
    for (; *p; p += n ? n : 1) {
        n = *p < 0x20 || *p == 0x7F ? 0 : cta_utf8_len(p);
        switch (n == 1 ? *p : 0) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if (n)
                fwrite(p, 1, n, f);
            else
                fputs("\xEF\xBF\xBD", f);
        }
    }
}

uint32_t cta_html_series_bins(const cta_model *m)
{
    size_t series = 0;
    for (size_t i = 0; i < m->nprocs; i++)
        for (int d = 0; d < CTA_MAX_DEV; d++)
            series += (m->procs[i].dev[d].windowed != 0) + (m->procs[i].dev[d].allocs != 0);
    uint32_t bins = 1024;
    while (bins > 64 && bins * series > CTA_HTML_SERIES_BINS_TOTAL)
        bins /= 2;
    return bins;
}

/* The page's own facts for its script: the title, and how far the summary's time axis (its
 * first activity) lies after `cutrace timeline`'s (the earliest trace start), so the page can
 * write the --from/--to of the stretch it shows. */
static void put_page_json(FILE *f, const cta_html_page *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        fputs("null", f);
        return;
    }
    cta_json j;
    cta_json_init(&j, m, 0);
    cta_json_obj(&j);
    CTA_JK_STR(&j, "title", p->title);
    CTA_JK_U64(&j, "timeline_offset_ns", p->timeline_offset_ns);
    cta_json_end_obj(&j);
    fclose(m);
    put_script_json(f, buf, len);
    free(buf);
}

/* shell.html with each {{NAME}} marker replaced; returns -1 on a marker the page does not have
 * (a broken shell: caught by the tests) */
static int put_page(FILE *f, const cta_html_page *p)
{
    const char *s = cta_html_shell;
    for (;;) {
        const char *mk = strstr(s, "{{");
        if (!mk) {
            fputs(s, f);
            return 0;
        }
        fwrite(s, 1, (size_t)(mk - s), f);
        const char *end = strstr(mk, "}}");
        if (!end)
            return -1;
        size_t n = (size_t)(end - mk - 2);
#define IS(name) (n == sizeof name - 1 && !memcmp(mk + 2, name, n))
        if (IS("TITLE"))
            put_html_text(f, p->title);
        else if (IS("CSS"))
            fputs(cta_html_css, f);
        else if (IS("JS"))
            fputs(cta_html_js, f);
        else if (IS("DATA"))
            put_script_json(f, p->json, p->json_len);
        else if (IS("PAGE"))
            put_page_json(f, p);
        else
            return -1;
#undef IS
        s = end + 2;
    }
}

int cta_html_write(const char *out, const cta_html_page *p)
{
    size_t n = strlen(out);
    char *tmp = malloc(n + 16);
    if (!tmp) {
        fprintf(stderr, "cutrace report: error: %s: out of memory\n", out);
        return CTA_EXIT_FAIL;
    }
    memcpy(tmp, out, n);
    memcpy(tmp + n, ".tmp-XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "cutrace report: error: %s: cannot create the output file: %s\n", out,
                strerror(errno));
        free(tmp);
        return CTA_EXIT_FAIL;
    }
    /* the permissions fopen would have given the page (mkstemp makes it private) */
    mode_t um = umask(0);
    umask(um);
    int rc = CTA_EXIT_FAIL;
    FILE *f = fchmod(fd, 0666 & ~um) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "cutrace report: error: %s: cannot write the output file: %s\n", out,
                strerror(errno));
        close(fd);
    } else {
        int bad = put_page(f, p);
        int werr = ferror(f) ? (errno ? errno : EIO) : 0;
        if (fclose(f) != 0 && !werr)
            werr = errno ? errno : EIO;
        if (bad)
            fprintf(stderr, "cutrace report: error: %s: the page template built into cutrace has "
                            "an unknown {{marker}}\n", out);
        else if (werr)
            fprintf(stderr, "cutrace report: error: %s: write failed: %s\n", out, strerror(werr));
        else if (rename(tmp, out) != 0)
            fprintf(stderr, "cutrace report: error: %s: cannot rename %s into place: %s\n", out,
                    tmp, strerror(errno));
        else
            rc = CTA_EXIT_OK;
    }
    if (rc != CTA_EXIT_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}

char *cta_html_data(const cta_model *m, const cta_diag *dg, int ndiag, const cta_report_opts *o, size_t *len)
{
    char *json = NULL;
    FILE *f = open_memstream(&json, len);
    if (!f)
        return NULL;
    cta_report_json(f, m, dg, ndiag, o);
    if (fclose(f) != 0) {
        free(json);
        return NULL;
    }
    return json;
}
