/* Kineto (PyTorch profiler) JSON that is huge or hostile: the streaming reader's memory does not
 * grow with the file, and broken or odd documents end in a named error or a valid summary, clean
 * under ASan/UBSan; a name too long for a trace's string is converted cut, with its length. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rb.h"
#include "tjson.h"

static const char *tmp(char path[4096], const char *name)
{
    snprintf(path, 4096, "%s/%s", ctt_tmpdir(), name);
    return path;
}

/* A document of n CPU ops 10 us apart (a dense PyTorch loop), one event with an 8 MiB name,
 * and ten kernels; its size. */
static long big_doc(const char *path, int n, int kernels)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add_%d\", \"pid\": 1, "
                   "\"tid\": 1, \"ts\": %d.%03d, \"dur\": 1.5, \"args\": {\"External id\": %d}},\n",
                i % 1000, 10 * i, i % 1000, i);
    /* one event with an 8 MiB name: the reader holds it, then lets it go */
    fputs("  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"", f);
    for (int i = 0; i < 8 << 20; i++)
        fputc('a' + i % 26, f);
    fputs("\", \"ts\": 1, \"dur\": 1},\n", f);
    for (int i = 0; i < kernels; i++)
        fprintf(f, "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": %d, \"dur\": 5,"
                   " \"args\": {\"stream\": 7, \"correlation\": %d}}%s\n",
                100 + 10 * i, i, i + 1 < kernels ? "," : "");
    fputs("]}\n", f);
    long size = ftell(f);
    return fclose(f) == 0 ? size : -1;
}

/* The summary reads the document twice, streaming: HTA's breakdown, and cutrace's own analysis
 * of its conversion (an external sort: analyzer/KINETO.md), whose ops become 600000 ranges. */
TEST_IMPL(kineto_large_trace_bounded_memory)
{
    char path[4096];
    const int n = 600000, kernels = 10;
    long size = big_doc(tmp(path, "big.json"), n, kernels);
    ASSERT_INT(size, >, 80 << 20);
    ctt_proc p;
    long rss;
    char *sum[] = {"summary", "--json", path, NULL};
    if (rb_cutrace(&p, 0, sum, 0, &rss))
        return 1;
    char err[256];
    tj *s = tj_parse(p.out, err, sizeof err);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "kineto.0.events"), ==, n + 1 + kernels);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernels"), ==, kernels);
    ASSERT_INT(tj_num(s, "hta.ranks.0.kernel_time_ns"), ==, (10 * (kernels - 1) + 5) * 1000);
    ASSERT_INT(tj_num(s, "hta.ranks.0.idle_ns"), ==, 5 * (kernels - 1) * 1000);
    /* cutrace's own analysis of it: every op a range, the kernels' busy time */
    ASSERT_INT(tj_num(s, "processes.0.source.ranges"), ==, n);
    ASSERT_INT(tj_num(s, "breakdown.0.gpu_busy_ns"), ==, 5 * kernels * 1000);
    tj_free(s);
    ctt_proc_free(&p);
    printf("summary of a %ld MiB Kineto trace: %ld KiB resident\n", size >> 20, rss);
    /* the 8 MiB name's buffer (16 MiB at most as it doubles), the conversion's two sorts (8 MiB
     * each) and the program: not the file */
    ASSERT_INT(rss, <, 48 * 1024);
    /* twice the document, the same memory (give or take the allocator) */
    long size2 = big_doc(tmp(path, "big2.json"), 2 * n, kernels);
    ASSERT_INT(size2, >, 160 << 20);
    long rss2;
    if (rb_cutrace(&p, 0, sum, 0, &rss2))
        return 1;
    ctt_proc_free(&p);
    printf("summary of a %ld MiB Kineto trace: %ld KiB resident\n", size2 >> 20, rss2);
    ASSERT_INT(rss2, <, rss + 4 * 1024);
    unlink(tmp(path, "big2.json"));
    return 0;
}

/* path holds text; cutrace summary --json on it must exit with want in both builds (and the
 * error name `what`, or the output parse as JSON). */
static int hostile(const char *name, const char *text, size_t len, int want, const char *what)
{
    char path[4096];
    ASSERT_INT(rb_spit(tmp(path, name), text, len), ==, 0);
    for (int asan = 0; asan < 2; asan++) {
        ctt_proc p;
        char *sum[] = {"summary", "--json", path, NULL};
        if (rb_cutrace(&p, asan, sum, want, NULL))
            return 1;
        if (want == 3) {
            ASSERT_CONTAINS(p.err, path);
            ASSERT_CONTAINS(p.err, what);
        } else {
            char err[256];
            tj *s = tj_parse(p.out, err, sizeof err);
            if (!s)
                ctt_fail_at(__FILE__, __LINE__, "%s: invalid JSON: %s", name, err);
            ASSERT(s);
            ASSERT_CONTAINS(p.out, what);
            tj_free(s);
        }
        ctt_proc_free(&p);
    }
    return 0;
}

TEST_IMPL(kineto_hostile_documents)
{
    /* nesting a million deep: refused at 64, no recursion beyond */
    size_t n = 1000000;
    char *deep = malloc(n + 16);
    ASSERT(deep);
    memcpy(deep, "{\"traceEvents\": [], \"a\": ", 25);
    memset(deep + 25, '[', n - 19);
    int rc = hostile("deep.json", deep, n + 6, 3, "expected at most 64 nested");
    free(deep);
    ASSERT_INT(rc, ==, 0);
    /* a 20 MiB string: over the 16 MiB an event may hold */
    size_t big = 20u << 20;
    char *s = malloc(big + 64);
    ASSERT(s);
    int h = snprintf(s, 64, "{\"traceEvents\": [{\"name\": \"");
    memset(s + h, 'x', big);
    memcpy(s + h + big, "\"}]}", 4);
    rc = hostile("long.json", s, (size_t)h + big + 4, 3, "expected an event shorter than");
    free(s);
    ASSERT_INT(rc, ==, 0);
    /* what may appear in names: invalid UTF-8, control characters, NUL and lone surrogates */
    static const char odd[] =
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\xff\xfe\\u0001\\u0000x\","
        " \"ts\": 1, \"dur\": 2, \"args\": {\"stream\": 7}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"\\ud800\\udc00 \\udc00 \\ud800\\u0041\","
        " \"ts\": 5, \"dur\": 2, \"args\": {\"stream\": 7}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"n\", \"ts\": 1e999, \"dur\": -0,"
        " \"args\": {\"stream\": 1E+2, \"correlation\": -1.5e-3, \"grid\": [1e300, -1e300, 3, 4]}},\n"
        " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"m\", \"ts\": -9e18, \"dur\": 9e18,"
        " \"args\": {\"stream\": 7}}],\n"
        " \"distributedInfo\": {\"rank\": 1e300}, \"deviceProperties\": {\"not\": \"an array\"}}";
    ASSERT_INT(hostile("odd.json", odd, sizeof odd - 1, 0, "\"kernels\": 2"), ==, 0);
    /* a number longer than any real one, a bare value, an empty document */
    char num[200] = "{\"traceEvents\": [{\"ts\": ";
    size_t l = strlen(num);
    memset(num + l, '7', 100);
    strcpy(num + l + 100, "}]}");
    ASSERT_INT(hostile("num.json", num, strlen(num), 3, "expected a number of at most"), ==, 0);
    static const char empty[] = "{\"traceEvents\": []}", open_[] = "{\"traceEvents\": [";
    ASSERT_INT(hostile("empty.json", empty, sizeof empty - 1, 0, "no GPU kernels"), ==, 0);
    ASSERT_INT(hostile("open.json", open_, sizeof open_ - 1, 3,
                       "expected an object, found the end of the file"),
               ==, 0);
    /* a kernel name of 80,010 bytes, all but 10 in 2-byte characters: past a trace's string, cut
     * (FORMAT.md 4.1) after a whole character, with its length */
    static const char head[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void k<",
                      tail[] = ">()\", \"ts\": 1, \"dur\": 2, \"args\": {\"stream\": 7}}]}";
    size_t nl = sizeof head - 1 + 80000 + sizeof tail - 1;
    char *named = malloc(nl);
    ASSERT(named);
    memcpy(named, head, sizeof head - 1);
    for (size_t i = 0; i < 80000; i += 2)
        memcpy(named + sizeof head - 1 + i, "\xc3\xa9", 2);
    memcpy(named + sizeof head - 1 + 80000, tail, sizeof tail - 1);
    rc = hostile("named.json", named, nl, 0, "\xc3\xa9...[truncated, 80010 bytes]\"");
    free(named);
    ASSERT_INT(rc, ==, 0);
    return 0;
}

/* A cutrace trace whose header claims to be a converted Kineto trace (tracer_version "kineto")
 * that this command did not convert: it is analysed as it says, without the conversion's counts,
 * and nothing in the outputs trusts more than the header. */
TEST_IMPL(kineto_header_claim_in_a_cutrace_trace)
{
    char path[4096];
    tmp(path, "claims-kineto.cutrace");
    ct_header h = {.hostname = "h", .pid = 5, .cmdline = "p", .cmdline_len = 2,
                   .exe = "/not/\"a\"\nkineto\xff.json", .boot_id = "", .realtime_ns = 1,
                   .monotonic_ns = 1, .tracer_version = "kineto", .tracer_options = "source=kineto"};
    rb_trace t;
    memset(&t, 0, sizeof t);
    t.buf = malloc(1 << 20);
    ASSERT(t.buf);
    ASSERT_INT(ct_writer_open(&t.w, path, &h, NULL), ==, 0);
    ct_enc_init(&t.e, t.buf, 1 << 20);
    t.tid = 7;
    ASSERT_INT(ct_enc_string(&t.e, 1, 1, "cudaLaunchKernel", 16), ==, 0);
    ASSERT_INT(ct_enc_string(&t.e, 1, 2, "k", 1), ==, 0);
    ct_rec_api a = {.start = 1000, .function = 1, .corr = 1};
    ct_rec_launch l = {.corr = 1, .function = 2, .grid = {1, 1, 1}, .block = {1, 1, 1}, .stream = 5};
    ct_rec_gpu g = {.start = 3000, .corr = 1, .kind = CT_GPU_KERNEL, .stream = 5};
    ASSERT_INT(ct_enc_launch(&t.e, 2000, &l), ==, 0);
    ASSERT_INT(ct_enc_api(&t.e, 2000, &a), ==, 0);
    ASSERT_INT(ct_enc_gpu(&t.e, 5000, &g), ==, 0);
    ASSERT_INT(rb_close(&t, 9000), ==, 0); /* frees t.buf */
    for (int asan = 0; asan < 2; asan++) {
        ctt_proc p;
        char *sum[] = {"summary", "--json", path, NULL};
        if (rb_cutrace(&p, asan, sum, 0, NULL))
            return 1;
        char err[256];
        tj *s = tj_parse(p.out, err, sizeof err);
        ASSERT(s);
        ASSERT_STR(tj_str(s, "processes.0.source.format"), "kineto");
        ASSERT_INT(tj_num(s, "processes.0.source.kernels"), ==, 0);
        ASSERT(!tj_path(s, "processes.0.source.message"));
        ASSERT_INT(tj_num(s, "breakdown.0.gpu_busy_ns"), ==, 2000);
        tj_free(s);
        ctt_proc_free(&p);
        char *text[] = {"summary", path, NULL};
        if (rb_cutrace(&p, asan, text, 0, NULL))
            return 1;
        /* the header's name is shown, its control characters and invalid UTF-8 made '?' */
        ASSERT_CONTAINS(p.out, "source: PyTorch profiler (Kineto) trace /not/\"a\"?kineto?.json;");
        ctt_proc_free(&p);
    }
    return 0;
}
