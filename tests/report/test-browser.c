/* Reports opened in headless Chromium: what the page shows after its script ran is the
 * summary's (check_report.py), for the demo, for several ranks and for hostile names. */
#define _GNU_SOURCE
#include "rp.h"

#include <stdlib.h>
#include <sys/stat.h>

/* Markup, quotes, an end of script, an entity and invalid UTF-8, in a kernel name and the
 * command line (tracegen --name) and in the trace file's path; "pwned" marks them for the
 * checker. The handlers, were they ever run, set the title: an alert() would hang headless
 * Chromium until its time limit instead of letting the checker name the injected element. */
#define RP_HOSTILE "k<\"'</script><img src=x onerror=document.title='pwned1'>\xff\xfe&amp;"
#define RP_HOSTILE_DIR "d</script><svg onload=document.title='pwned2'>"
#define RP_HOSTILE_FILE "f\"'<img src=x onerror=document.title='pwned3'>\xff.cutrace"

/* Reads a big-endian 32-bit number. */
static unsigned rp_be32(const unsigned char *b)
{
    return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3];
}

TEST_IMPL(demo_report_in_chromium)
{
    rp_files f;
    ASSERT_INT(rp_demo(&f, "demo"), ==, 0);
    tj *s = rp_summary(&f);
    ASSERT(s);
    size_t diags = tj_len(s, "diagnoses"), steps = tj_len(s, "nvtx.iterations");
    ASSERT_UINT(diags, >, 0);  /* the starved loop's findings: cards to check */
    ASSERT_UINT(steps, >, 0);  /* --nvtx: a step-time plot to check */
    tj_free(s);
    char *out;
    ASSERT_INT(rp_render_ok(&f, NULL, &out), ==, 0);
    /* not vacuous: the page showed values, drew plots and cards */
    ASSERT_INT(rp_count(out, "values"), >=, 100);
    ASSERT_INT(rp_count(out, "plots"), >=, 5); /* breakdown, kernels, copies, vram, steps */
    ASSERT_INT(rp_count(out, "diagnoses"), ==, (long)diags);
    free(out);

    /* for people: the report and a picture of it in the build directory */
    char png[4096], html[4096], arg[4200];
    ctt_path(png, "tests/report/demo-report.png");
    ctt_path(html, "tests/report/demo-report.html");
    mkdir(ctt_path(arg, "tests/report"), 0755);
    size_t len;
    char *page = ctt_read_file(f.html, &len);
    ASSERT(page);
    ASSERT_INT(rp_write(html, page, len), ==, 0);
    free(page);
    remove(png);
    snprintf(arg, sizeof arg, "--screenshot=%s", png);
    const char *const shot[] = {arg, "--window-size=1280,2400", "--hide-scrollbars", NULL};
    ASSERT_INT(rp_chromium(&f, shot, NULL), ==, 0);
    unsigned char *img = (unsigned char *)ctt_read_file(png, &len);
    ASSERT(img && len > 24);
    ASSERT(!memcmp(img, "\x89PNG\r\n\x1a\n", 8) && !memcmp(img + 12, "IHDR", 4));
    ASSERT_UINT(rp_be32(img + 16), ==, 1280);
    ASSERT_UINT(rp_be32(img + 20), ==, 2400);
    free(img);
    printf("demo report: %s\nits screenshot: %s\n", html, png);
    return 0;
}

/* A tracegen trace (args) reported into NAME's files: its summary, NULL after a message. */
static tj *rp_gen(rp_files *f, const char *name, const char *args)
{
    char dir[4096];
    rp_name(f, name);
    if (!an_gen(dir, name, args))
        return NULL;
    const char *const paths[] = {dir, NULL};
    return rp_report(f, paths, NULL) == 0 ? rp_summary(f) : NULL;
}

TEST_IMPL(ranks_report_in_chromium)
{
    rp_files f;
    tj *s = rp_gen(&f, "ranks", "--ranks 4 --straggler 1.5 --iters 10 --loader-ms 2");
    ASSERT(s);
    ASSERT_UINT(tj_len(s, "ranks"), ==, 4); /* the ranks plot is due */
    ASSERT_STR(tj_str(s, "ranks.1.straggler"), "GPU work");
    tj_free(s);
    char *out;
    ASSERT_INT(rp_render_ok(&f, NULL, &out), ==, 0);
    ASSERT_INT(rp_count(out, "values"), >=, 100);
    free(out);
    /* each rank's busy share drawn, and the straggler marked (the checker saw them equal) */
    char *dom = ctt_read_file(f.dom, NULL);
    ASSERT(dom);
    for (int r = 0; r < 4; r++) {
        char want[64];
        snprintf(want, sizeof want, "data-path=\"ranks.%d.gpu_busy_pct\"", r);
        ASSERT(strstr(dom, want));
    }
    ASSERT(strstr(dom, "data-path=\"ranks.1.straggler\""));
    free(dom);
    return 0;
}

/* A trace that lost records (tracegen --lost: 40 for buffers full, 80 while the program had
 * left the tracer no descriptor): the run section says how many and why, as the summary does,
 * each figure the summary's (the checker compares them). */
TEST_IMPL(lost_records_in_report)
{
    rp_files f;
    tj *s = rp_gen(&f, "lost", "--iters 5 --lost 40");
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.lost_records"), ==, 120);
    ASSERT_INT(tj_num(s, "processes.0.lost_buffer_full"), ==, 40);
    ASSERT_INT(tj_num(s, "processes.0.lost_descriptors"), ==, 80);
    tj_free(s);
    ASSERT_INT(rp_render_ok(&f, NULL, NULL), ==, 0);
    char *dom = ctt_read_file(f.dom, NULL);
    ASSERT(dom);
    ASSERT(strstr(dom, "data-path=\"processes.0.lost_records\""));
    ASSERT(strstr(dom, "data-path=\"processes.0.lost_buffer_full\""));
    ASSERT(strstr(dom, "data-path=\"processes.0.lost_descriptors\""));
    ASSERT_CONTAINS(dom, " records lost (");
    ASSERT_CONTAINS(dom, " of them because the tracer's buffers were full: its writer did not keep up; ");
    ASSERT_CONTAINS(dom, " while the program had closed the trace's descriptor and none was left to reopen it with)");
    free(dom);
    return 0;
}

TEST_IMPL(hostile_names_stay_text)
{
    rp_files f;
    rp_name(&f, "hostile");
    char gen[4096], dir[4096], from[4200], to[8400];
    snprintf(dir, sizeof dir, "%s/h", ctt_tmpdir());
    char *argv[] = {(char *)ctt_path(gen, "tests/analyzer/tracegen"), "-o", dir, "--iters", "5",
                    "--name", RP_HOSTILE, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    /* the path's own markup: a directory d< holding script><svg ...> */
    snprintf(to, sizeof to, "%s/%s", dir, RP_HOSTILE_DIR);
    char *mk[] = {"mkdir", "-p", to, NULL};
    ASSERT_INT(ctt_run(&p, mk, NULL, 10), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ctt_proc_free(&p);
    snprintf(from, sizeof from, "%s/rank-0.cutrace", dir);
    snprintf(to + strlen(to), sizeof to - strlen(to), "/%s", RP_HOSTILE_FILE);
    ASSERT_INT(rename(from, to), ==, 0);
    const char *const paths[] = {to, NULL}, *const title[] = {"--title", RP_HOSTILE, NULL};
    ASSERT_INT(rp_report(&f, paths, title), ==, 0);
    /* the embedded JSON cannot end its element: no "</script><img" anywhere in the file */
    char *html = ctt_read_file(f.html, NULL);
    ASSERT(html);
    ASSERT(!strstr(html, "</script><img") && !strstr(html, "</script><svg"));
    free(html);
    char *out;
    ASSERT_INT(rp_render_ok(&f, "pwned", &out), ==, 0);
    /* the kernel's name and the command line at least, each shown as text */
    ASSERT_INT(rp_count(out, "hostile"), >=, 2);
    free(out);
    return 0;
}
