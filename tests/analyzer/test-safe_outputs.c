/* Outputs that other programs open, safe whatever the traces and the command line hold: the
 * report's page is valid UTF-8 (it says it is), and the CSV export is RFC 4180 with no cell a
 * spreadsheet would run as a formula (analyzer/SQLITE.md). */
#include "an_helpers.h"

#include <stdlib.h>

#include "cta_out.h"

/* Whether the n bytes at s are UTF-8 without control characters but tab, LF and CR; the offset of
 * the first fault in *at. */
static int clean_utf8(const char *s, size_t n, size_t *at)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t l = p[i] && (p[i] >= 0x20 || strchr("\t\n\r", p[i])) && p[i] != 0x7F
                       ? cta_utf8_len(p + i) : 0;
        if (!l || i + l > n) {
            *at = i;
            return 0;
        }
        i += l;
    }
    return 1;
}

static int page_is_clean(const char *page)
{
    size_t len, at;
    char *b = ctt_read_file(page, &len);
    ASSERT(b);
    if (!clean_utf8(b, len, &at))
        ctt_fail_at(__FILE__, __LINE__, "%s: byte %zu (0x%02x) is not clean UTF-8", page, at,
                    (unsigned char)b[at]);
    ASSERT(clean_utf8(b, len, &at));
    free(b);
    return 0;
}

static const char kineto_odd[] =
    "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\xff\xfe\\u0001<x>\","
    " \"ts\": 1, \"dur\": 2, \"args\": {\"stream\": 7}}]}";

TEST_IMPL(report_page_is_valid_utf8)
{
    /* a kernel name with bytes that are not UTF-8 and a control character, and a title too */
    char dir[4096], page[4200];
    ASSERT(an_gen(dir, "odd", "--iters 2 --name k\xff\xfe<\x01>x"));
    snprintf(page, sizeof page, "%s/odd.html", ctt_tmpdir());
    char *argv[] = {(char *)an_cutrace(), "report", dir, "-o", page, "--title", "x\xff<\x02y", NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 120), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    ASSERT_INT(page_is_clean(page), ==, 0);
    char *b = ctt_read_file(page, NULL);
    ASSERT(b);
    ASSERT_CONTAINS(b, "<title>x\xEF\xBF\xBD&lt;\xEF\xBF\xBDy</title>");
    ASSERT_CONTAINS(b, "k\\ufffd\\ufffd\\u003c\\u0001>x"); /* the name, in the page's data */
    free(b);
    /* a Kineto trace's name */
    char k[4096];
    ASSERT(an_write_tmp(k, "odd.json", kineto_odd, sizeof kineto_odd - 1));
    snprintf(page, sizeof page, "%s/odd-kineto.html", ctt_tmpdir());
    char *argv2[] = {(char *)an_cutrace(), "report", k, "-o", page, NULL};
    ASSERT_INT(ctt_run(&p, argv2, NULL, 120), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    ASSERT_INT(page_is_clean(page), ==, 0);
    return 0;
}

/* Names a spreadsheet would run (OWASP's CSV injection list: = + - @ tab CR), one starting with
 * the guard itself, and those RFC 4180 quotes. */
static const char kineto_formulas[] =
    "{\"traceEvents\": [\n"
#define K(name, ts) "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" name "\", \"ts\": " ts ", \"dur\": 2, \"args\": {\"stream\": 7}}"
    K("=HYPERLINK(\\\"http://x\\\",\\\"y\\\")", "1") ",\n" K("+1", "3") ",\n" K("-1", "5") ",\n"
    K("@SUM(A1)", "7") ",\n" K("\\tx", "9") ",\n" K("\\rx", "11") ",\n" K("'q", "13") ",\n"
    K("a,b", "15") ",\n" K("plain", "17") ",\n" K("line\\nbreak", "19") "]}\n";
#undef K

TEST_IMPL(export_csv_rfc4180_and_formula_guard)
{
    char k[4096], dir[4200];
    ASSERT(an_write_tmp(k, "formulas.json", kineto_formulas, sizeof kineto_formulas - 1));
    snprintf(dir, sizeof dir, "%s/csv", ctt_tmpdir());
    char *argv[] = {(char *)an_cutrace(), "export", "--csv", dir, k, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 120), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    char *gz[] = {"gzip", "-dc", NULL, NULL};
    char path[4300];
    snprintf(path, sizeof path, "%s/StringIds/all.csv.gz", dir);
    gz[2] = path;
    ASSERT_INT(ctt_run(&p, gz, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    const char *s = p.out;
    ASSERT(!strncmp(s, "id,value\r\n", 10));
    static const char *const cells[] = {
        ",\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"\r\n", ",\"'+1\"\r\n", ",\"'-1\"\r\n",
        ",\"'@SUM(A1)\"\r\n", ",\"'\tx\"\r\n", ",\"'\rx\"\r\n", ",\"''q\"\r\n", ",\"a,b\"\r\n",
        ",plain\r\n", ",\"line\nbreak\"\r\n"};
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++)
        ASSERT_CONTAINS(s, cells[i]);
    /* every line ends with CRLF: the one bare LF is inside the quoted "line\nbreak" */
    int bare = 0;
    for (const char *q = s; (q = strchr(q, '\n')); q++)
        bare += q == s || q[-1] != '\r';
    ASSERT_INT(bare, ==, 1);
    ctt_proc_free(&p);
    /* the table of the kernels: CRLF, numbers as they are (a negative one is no formula) */
    snprintf(path, sizeof path, "%s/CUPTI_ACTIVITY_KIND_KERNEL/trace-0.csv.gz", dir);
    ASSERT_INT(ctt_run(&p, gz, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    int lines = 0;
    bare = 0;
    for (const char *q = p.out; (q = strchr(q, '\n')); q++, lines++)
        bare += q == p.out || q[-1] != '\r';
    ASSERT_INT(lines, ==, 11);
    ASSERT_INT(bare, ==, 0);
    ASSERT(!strstr(p.out, "'"));
    ctt_proc_free(&p);
    return 0;
}
