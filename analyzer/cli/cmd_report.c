/* `cutrace report [OPTIONS] PATH... -o FILE.html`: one self-contained HTML page of the summary.
 * The page is analyzer/output/html/shell.html with its markers filled: the stylesheet
 * (analyzer/output/html/report.css), the `summary --json` document of the same options, a few facts
 * about the page itself (its title, where the timeline command's axis starts) and the script
 * that draws everything from the document (analyzer/output/html/js/, joined). The three sources are
 * compiled into the binary (cta_html_assets.S), so the command needs no file beside it and the
 * page nothing from the network. Both JSON documents sit in <script type="application/json">
 * elements with every '<' written as \u003c: no name in a trace can close the element or open a
 * comment there. The file is written under a temporary name in its directory and renamed into
 * place, so a failed write leaves the previous file or none, never half a page. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cta_analysis.h"
#include "cta_cmd.h"
#include "cta_json_report.h"
#include "cta_load.h"
#include "cta_out.h"

/* cta_html_assets.S: the page's sources, each ending with a zero byte */
extern const char cta_html_shell[], cta_html_css[], cta_html_js[];

static const char usage[] =
    "usage: cutrace report [OPTIONS] PATH... -o FILE.html\n"
    "\n"
    "One self-contained HTML page of the traces in PATH (trace files, or directories holding\n"
    "them; PyTorch profiler traces too): the run, a verdict, plots (GPU utilization over time\n"
    "with the idle time by cause, host state, VRAM, the breakdown, kernels, copies, ranks,\n"
    "NVTX steps), every diagnosis as a card and a zoomable overview of the busiest stretch.\n"
    "It holds the `cutrace summary --json` document of the same options and draws it with its\n"
    "own script: open it in any browser, offline; nothing is fetched.\n"
    "\n"
    "  -o, --output FILE  the page to write (replaced only once it is complete)\n"
    "  --title TEXT       the page's title [cutrace report]\n"
    CTA_ANALYSIS_USAGE
    "\n"
    "Without --series-bins each time series has at most 1024 bins, fewer with many devices\n"
    "(16384 in all); without --overview the overview has at most 3000 slices.\n"
    "\n"
    "Prints \"cutrace report: wrote FILE ...\" on stderr, nothing on stdout.\n"
    "Exit status: 0 done, 1 the page could not be written, 2 usage error, 3 unreadable input.\n";

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

/* text as HTML character data (the <title> element) */
static void put_html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: putc_unlocked(*s, f);
        }
    }
}

/* slices of the page's timeline overview of the busiest stretch, unless --overview says */
#define REPORT_OVERVIEW_SLICES 3000

/* Without --series-bins, the page's time series (utilization per device, memory in use) hold at
 * most this many bins in all, and 1024 each at most, 64 at least: the document and the SVG the
 * browser draws (a dozen elements per utilization bin) stay small with many ranks. */
#define REPORT_SERIES_BINS_TOTAL 16384u

static uint32_t report_series_bins(const cta_model *m)
{
    size_t series = 0;
    for (size_t i = 0; i < m->nprocs; i++)
        for (int d = 0; d < CTA_MAX_DEV; d++)
            series += (m->procs[i].dev[d].windowed != 0) + (m->procs[i].dev[d].allocs != 0);
    uint32_t bins = 1024;
    while (bins > 64 && bins * series > REPORT_SERIES_BINS_TOTAL)
        bins /= 2;
    return bins;
}

typedef struct {
    const char *title;
    const char *json;
    size_t json_len;
    uint64_t timeline_offset_ns;
} page;

/* The page's own facts for its script: the title, and how far the summary's time axis (its
 * first activity) lies after `cutrace timeline`'s (the earliest trace start), so the page can
 * write the --from/--to of the stretch it shows. */
static void put_page_json(FILE *f, const page *p)
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
static int put_page(FILE *f, const page *p)
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

/* Writes the page to out through a temporary file beside it; on failure prints why (naming out)
 * and leaves no file behind. */
static int write_page(const char *out, const page *p)
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

int cta_cmd_report(int argc, char **argv)
{
    enum { OPT_TITLE = 'T' };
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"title", required_argument, NULL, OPT_TITLE},
        {"help", no_argument, NULL, 'h'}, CTA_ANALYSIS_LONGOPTS, {NULL, 0, NULL, 0}};
    const char *out = NULL, *title = "cutrace report";
    cta_analysis_opts ao;
    cta_analysis_defaults(&ao);
    ao.overview = REPORT_OVERVIEW_SLICES; /* the page always has one; --overview N changes N */
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:" CTA_ANALYSIS_SHORTOPTS, opts, NULL)) != -1) {
        int used = cta_analysis_option("report", c, optarg, &ao);
        if (used == CTA_EXIT_USAGE)
            return used;
        if (used)
            continue;
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case OPT_TITLE:
            title = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return CTA_EXIT_OK;
        case ':':
            return cta_cli_usage_error("report", "%s expects a value", argv[optind - 1]);
        default:
            return cta_cli_usage_error("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!out || !*out)
        return cta_cli_usage_error("report", "expected -o FILE.html (the page to write)");
    if (optind >= argc)
        return cta_cli_usage_error("report", "expected at least one trace file or directory");
    cta_analysis a;
    int rc = cta_analysis_run("report", argv + optind, argc - optind, &ao, &a);
    if (rc != CTA_EXIT_OK)
        return rc;
    page p = {.title = title};
    uint64_t start = cta_load_start(a.rd);
    p.timeline_offset_ns = a.m.t0 > start ? a.m.t0 - start : 0;
    if (!ao.ropt.series_bins)
        ao.ropt.series_bins = report_series_bins(&a.m);
    char *json = NULL;
    FILE *m = open_memstream(&json, &p.json_len);
    if (!m) {
        fprintf(stderr, "cutrace report: error: %s: out of memory\n", out);
        cta_analysis_free(&a);
        return CTA_EXIT_FAIL;
    }
    cta_report_json(m, &a.m, a.dg, a.ndiag, &ao.ropt);
    cta_analysis_free(&a);
    if (fclose(m) != 0) {
        fprintf(stderr, "cutrace report: error: %s: out of memory\n", out);
        free(json);
        return CTA_EXIT_FAIL;
    }
    p.json = json;
    rc = write_page(out, &p);
    if (rc == CTA_EXIT_OK) {
        struct stat st;
        fprintf(stderr, "cutrace report: wrote %s (%lld bytes; open it in a browser)\n", out,
                stat(out, &st) == 0 ? (long long)st.st_size : -1LL);
    }
    free(json);
    return rc;
}
