/* `cutrace report`: the page is one self-contained file whose embedded document is `summary
 * --json` of the same options, with names that could end the script element escaped; usage and
 * write errors name the problem and leave no file. (Drawing it in a browser: tests/report/.) */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "an_helpers.h"

static int tj_equal(const tj *a, const tj *b)
{
    if (!a || !b || a->type != b->type)
        return 0;
    switch (a->type) {
    case TJ_NULL:
        return 1;
    case TJ_BOOL:
    case TJ_NUM:
        return a->num == b->num;
    case TJ_STR:
        return !strcmp(a->str, b->str);
    case TJ_ARR:
    case TJ_OBJ:
        if (a->n != b->n)
            return 0;
        for (size_t i = 0; i < a->n; i++)
            if ((a->type == TJ_OBJ && strcmp(a->keys[i], b->keys[i])) || !tj_equal(a->v[i], b->v[i]))
                return 0;
        return 1;
    }
    return 0;
}

/* The body of <script type="application/json" id=ID> in page, copied (free it); NULL if absent. */
static char *script_body(const char *page, const char *id)
{
    char open[128];
    snprintf(open, sizeof open, "<script type=\"application/json\" id=\"%s\">", id);
    const char *s = strstr(page, open);
    if (!s)
        return NULL;
    s += strlen(open);
    const char *e = strstr(s, "</script>");
    return e ? strndup(s, (size_t)(e - s)) : NULL;
}

/* The document embedded in the page at path, parsed; NULL without a page, element or JSON. */
static tj *page_document(const char *path)
{
    char *page = ctt_read_file(path, NULL), *data = page ? script_body(page, "ct-data") : NULL, err[256];
    tj *j = data ? tj_parse(data, err, sizeof err) : NULL;
    free(data);
    free(page);
    return j;
}

static size_t count_ci(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = hay; *p; p++)
        n += !strncasecmp(p, needle, len);
    return n;
}

/* what the page holds outside its two JSON elements: the markup, style and script we wrote */
static char *page_outside_data(const char *page)
{
    char *out = strdup(page);
    const char *ids[] = {"ct-page", "ct-data"};
    for (int i = 0; i < 2; i++) {
        char open[128];
        snprintf(open, sizeof open, "id=\"%s\">", ids[i]);
        char *s = strstr(out, open);
        if (!s)
            continue;
        s += strlen(open);
        char *e = strstr(s, "</script>");
        if (e)
            memmove(s, e, strlen(e) + 1);
    }
    return out;
}

/* Runs cutrace with argv (NULL-terminated, argv[0] ignored); p is filled. */
static int run_cutrace(ctt_proc *p, char **argv)
{
    argv[0] = (char *)an_cutrace();
    return ctt_run(p, argv, NULL, 120);
}

TEST_IMPL(report_self_contained_and_equal_to_summary)
{
    /* a trace directory whose path holds markup: processes[].file names it */
    char dir[4096], gen[4096], out[4200];
    snprintf(dir, sizeof dir, "%s/h\"q'</script><img src=x onerror=alert(1)>&amp;", ctt_tmpdir());
    char parent[4096];
    snprintf(parent, sizeof parent, "%s/h\"q'<", ctt_tmpdir());
    ASSERT_INT(mkdir(parent, 0755), ==, 0); /* the '/' of </script> makes it two directories */
    char *gargv[] = {(char *)ctt_path(gen, "tests/analyzer/tracegen"), "-o", dir, "--ranks", "2",
                     "--iters", "4", "--loader-ms", "2", NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, gargv, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    snprintf(out, sizeof out, "%s/report.html", ctt_tmpdir());
    const char *title = "T </title><script>alert(1)</script> & \"x\"";
    char *argv[] = {NULL, "report", "--variants", "--min-saving", "0.5", "--title", (char *)title,
                    dir, "-o", out, NULL};
    ASSERT_INT(run_cutrace(&p, argv), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_STR(p.out, "");
    ASSERT_CONTAINS(p.err, "cutrace report: wrote ");
    ASSERT_CONTAINS(p.err, out);
    ctt_proc_free(&p);
    char *page = ctt_read_file(out, NULL);
    ASSERT(page);

    /* three script elements end where we ended them: no name closed one */
    ASSERT_UINT(count_ci(page, "</script"), ==, 3);
    ASSERT_UINT(count_ci(page, "<script"), ==, 3);
    ASSERT_UINT(count_ci(page, "<title>"), ==, 1);
    ASSERT_CONTAINS(page, "<title>T &lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;</title>");
    ASSERT_CONTAINS(page, "Content-Security-Policy");
    ASSERT_CONTAINS(page, "default-src 'none'");
    ASSERT_CONTAINS(page, "data-ct-rendered");
    /* nothing outside the data refers to another file or host */
    char *markup = page_outside_data(page);
    ASSERT(strlen(markup) > 10000); /* the style and script are inside */
    ASSERT_UINT(count_ci(markup, "src="), ==, 0);
    ASSERT_UINT(count_ci(markup, "href="), ==, 0);
    ASSERT_UINT(count_ci(markup, "@import"), ==, 0);
    ASSERT_UINT(count_ci(markup, "<link"), ==, 0);
    ASSERT_UINT(count_ci(markup, "url("), ==, count_ci(markup, "url(#"));
    ASSERT_UINT(count_ci(markup, "innerHTML"), ==, 0);
    ASSERT_UINT(count_ci(markup, "{{"), ==, 0); /* every marker of the shell filled */
    free(markup);

    /* the embedded document: no '<' at all, and equal to summary --json with the same options */
    char *data = script_body(page, "ct-data");
    ASSERT(data);
    ASSERT(strchr(data, '<') == NULL);
    ASSERT_CONTAINS(data, "\\u003c/script>\\u003cimg src=x");
    char err[256];
    tj *got = tj_parse(data, err, sizeof err);
    if (!got)
        ctt_fail_at(__FILE__, __LINE__, "embedded JSON does not parse: %s", err);
    ASSERT(got);
    tj *want = an_summary(dir, "--variants --min-saving 0.5 --overview 3000"); /* the page's default */
    ASSERT(want);
    ASSERT(tj_path(got, "overview.slices"));
    const char *file = tj_str(want, "processes.0.file");
    ASSERT(file && strstr(file, "</script><img src=x onerror=alert(1)>"));
    ASSERT(tj_path(want, "kernel_variants")); /* the options reached both */
    ASSERT_INT(tj_num(want, "min_saving_pct") * 10, ==, 5);
    ASSERT(tj_equal(got, want));
    tj_free(got);
    tj_free(want);
    free(data);

    /* the page's own facts: the title as given, and the timeline axis offset */
    char *facts = script_body(page, "ct-page");
    ASSERT(facts);
    ASSERT(strchr(facts, '<') == NULL);
    tj *f = tj_parse(facts, err, sizeof err);
    ASSERT(f);
    ASSERT_STR(tj_str(f, "title"), title);
    ASSERT(tj_num(f, "timeline_offset_ns") >= 0);
    tj_free(f);
    free(facts);
    free(page);

    /* --overview N reaches the page too */
    char *a2[] = {NULL, "report", "--overview", "5", dir, "-o", out, NULL};
    ASSERT_INT(run_cutrace(&p, a2), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    got = page_document(out);
    want = an_summary(dir, "--overview 5");
    ASSERT(got && want);
    ASSERT_UINT(tj_len(got, "overview.slices"), ==, 5);
    ASSERT(tj_equal(got, want));
    tj_free(got);
    tj_free(want);
    return 0;
}

/* entries of dir other than . and .., and those whose name has .tmp- (a temporary page) */
static int entries(const char *dir, int *temporaries)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int n = 0;
    *temporaries = 0;
    while ((e = readdir(d))) {
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        *temporaries += strstr(e->d_name, ".tmp-") != NULL;
    }
    closedir(d);
    return n;
}

TEST_IMPL(report_usage_and_write_errors)
{
    char dir[4096], outdir[4200], out[4300];
    ASSERT(an_gen(dir, "t", "--iters 2"));
    snprintf(outdir, sizeof outdir, "%s/out", ctt_tmpdir());
    ASSERT_INT(mkdir(outdir, 0755), ==, 0);
    snprintf(out, sizeof out, "%s/r.html", outdir);
    ctt_proc p;
    int tmps;
    struct {
        char *argv[8];
        int code;
        const char *says;
    } cases[] = {
        {{NULL, "report", dir, NULL}, 2, "expected -o FILE.html"},
        {{NULL, "report", "-o", out, NULL}, 2, "expected at least one trace file or directory"},
        {{NULL, "report", "--top", "many", dir, "-o", out, NULL}, 2, "--top expects a row count, got 'many'"},
        {{NULL, "report", "--frobnicate", dir, "-o", out, NULL}, 2, "unknown option '--frobnicate'"},
        {{NULL, "report", dir, "-o", NULL}, 2, "-o expects a value"},
        {{NULL, "report", "/nonexistent/trace.cutrace", "-o", out, NULL}, 3, "/nonexistent/trace.cutrace"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ASSERT_INT(run_cutrace(&p, cases[i].argv), ==, 0);
        if (p.code != cases[i].code)
            ctt_fail_at(__FILE__, __LINE__, "case %zu: exit %d, stderr: %s", i, p.code, p.err);
        ASSERT_INT(p.code, ==, cases[i].code);
        ASSERT_CONTAINS(p.err, cases[i].says);
        ASSERT_STR(p.out, "");
        ctt_proc_free(&p);
        ASSERT_INT(entries(outdir, &tmps), ==, 0); /* nothing written */
    }
    /* a directory that does not exist: exit 1 naming the page */
    char bad[4400];
    snprintf(bad, sizeof bad, "%s/missing/r.html", outdir);
    char *a1[] = {NULL, "report", dir, "-o", bad, NULL};
    ASSERT_INT(run_cutrace(&p, a1), ==, 0);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, bad);
    ASSERT_CONTAINS(p.err, "cannot create the output file");
    ctt_proc_free(&p);
    /* the output is a directory: the write fails at the rename, leaving no temporary */
    char *a2[] = {NULL, "report", dir, "-o", outdir, NULL};
    ASSERT_INT(run_cutrace(&p, a2), ==, 0);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, outdir);
    ctt_proc_free(&p);
    ASSERT_INT(entries(outdir, &tmps), ==, 0);
    ASSERT_INT(entries(ctt_tmpdir(), &tmps), ==, 2); /* the traces and outdir */
    ASSERT_INT(tmps, ==, 0);
    /* a good run replaces an old page whole, with the permissions a new file gets */
    FILE *old = fopen(out, "w");
    ASSERT(old);
    fputs("old page", old);
    fclose(old);
    char *a3[] = {NULL, "report", dir, "-o", out, NULL};
    ASSERT_INT(run_cutrace(&p, a3), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    ASSERT_INT(entries(outdir, &tmps), ==, 1);
    char *page = ctt_read_file(out, NULL);
    ASSERT(page);
    ASSERT(!strncmp(page, "<!DOCTYPE html>", 15));
    ASSERT_CONTAINS(page, "</html>");
    free(page);
    /* the permissions a new file gets (not mkstemp's private 0600) */
    char fresh[4400];
    snprintf(fresh, sizeof fresh, "%s/fresh", ctt_tmpdir());
    FILE *nf = fopen(fresh, "w");
    ASSERT(nf);
    fclose(nf);
    struct stat st, want;
    ASSERT_INT(stat(out, &st), ==, 0);
    ASSERT_INT(stat(fresh, &want), ==, 0);
    ASSERT_INT(st.st_mode & 0777, ==, want.st_mode & 0777);
    /* --help */
    char *a4[] = {NULL, "report", "--help", NULL};
    ASSERT_INT(run_cutrace(&p, a4), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "usage: cutrace report [OPTIONS] PATH... -o FILE.html");
    ASSERT_CONTAINS(p.out, "--min-saving");
    ctt_proc_free(&p);
    return 0;
}

/* 16 ranks: 32 series (utilization and memory per device) of 1024 bins would make a page of
 * 400,000 SVG elements; the report keeps 16384 bins in all, 512 each here, as summary --json
 * --series-bins 512 does. */
TEST_IMPL(report_bounds_series_with_many_devices)
{
    char dir[4096], out[4200];
    ASSERT(an_gen(dir, "r16", "--ranks 16 --iters 60 --loader-ms 12"));
    tj *full = an_summary(dir, NULL);
    ASSERT(full);
    ASSERT_UINT(tj_len(full, "breakdown"), ==, 16);
    ASSERT_UINT(tj_len(full, "breakdown.0.series.busy_ns"), >, 512); /* the bound changes it */
    tj_free(full);
    snprintf(out, sizeof out, "%s/r16.html", ctt_tmpdir());
    char *argv[] = {NULL, "report", dir, "-o", out, NULL};
    ctt_proc p;
    ASSERT_INT(run_cutrace(&p, argv), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    tj *got = page_document(out), *want = an_summary(dir, "--series-bins 512 --overview 3000");
    ASSERT(got && want);
    for (int i = 0; i < 16; i++) {
        char path[64];
        snprintf(path, sizeof path, "breakdown.%d.series.busy_ns", i);
        ASSERT_UINT(tj_len(got, path), <=, 512);
        snprintf(path, sizeof path, "vram.%d.curve.max_bytes", i);
        ASSERT_UINT(tj_len(got, path), <=, 512);
    }
    ASSERT(tj_equal(got, want));
    tj_free(got);
    tj_free(want);
    return 0;
}
