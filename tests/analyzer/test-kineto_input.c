/* Kineto (PyTorch profiler) input as users and hostile files give it (analyzer/KINETO.md): every
 * dropped event counted by reason in the text, the JSON and a warning naming the file; Chrome's
 * array form, a byte-order mark and gzip inside gzip read; JSON without trace events, gzip of
 * something else and UTF-16 refused with what the file is, never "not a cutrace trace". */
#include "an_helpers.h"

#include <stdlib.h>

/* `gzip -c src > dst`, layers times over. */
static int gzip_times(const char *src, const char *dst, int layers)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s.0'", src, dst);
    for (int i = 1; i <= layers; i++)
        snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " && gzip -c '%s.%d' > '%s.%d'", dst,
                 i - 1, dst, i);
    snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " && mv '%s.%d' '%s'", dst, layers, dst);
    return system(cmd) == 0 ? 0 : -1;
}

/* One event per reason of KINETO.md's "Events dropped", beside a launch and its kernel that are
 * kept, a flow and a gpu_user_annotation with a negative dur that are not read (not dropped),
 * and a CPU [memory] event (not read). */
#define EV(s) "{\"ph\": \"X\", " s "},\n"
#define KERNEL(rest) EV("\"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, " rest \
                        ", \"args\": {\"stream\": 7, \"correlation\": 9}")
#define CALL(rest) EV("\"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", " rest)
static const char faulty[] =
    "{\"traceEvents\": [\n"
    CALL("\"pid\": 1, \"tid\": 1, \"ts\": 95, \"dur\": 2, \"args\": {\"correlation\": 1}")
    EV("\"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 100, \"dur\": 50,"
       " \"args\": {\"stream\": 7, \"correlation\": 1}")
    KERNEL("\"dur\": 5")                             /* ts_missing */
    KERNEL("\"ts\": \"100\", \"dur\": 5")            /* ts_not_a_number */
    KERNEL("\"ts\": -3, \"dur\": 5")                 /* ts_negative */
    KERNEL("\"ts\": 1e308, \"dur\": 5")              /* ts_out_of_range */
    KERNEL("\"ts\": 5e15, \"dur\": 5")               /* ts_out_of_range */
    KERNEL("\"ts\": 100")                            /* dur_missing */
    KERNEL("\"ts\": 100, \"dur\": null")             /* dur_not_a_number */
    KERNEL("\"ts\": 100, \"dur\": \"50\"")           /* dur_not_a_number */
    KERNEL("\"ts\": 100, \"dur\": -1")               /* dur_negative */
    KERNEL("\"ts\": 100, \"dur\": 1e308")            /* dur_out_of_range */
    KERNEL("\"ts\": 4e15, \"dur\": 1e15")            /* dur_out_of_range */
    CALL("\"pid\": 1, \"ts\": 95, \"dur\": 2")       /* pid_or_tid_missing */
    CALL("\"pid\": 1, \"tid\": \"main\", \"ts\": 95, \"dur\": 2") /* pid_or_tid_missing */
    CALL("\"pid\": 1, \"tid\": -5, \"ts\": 95, \"dur\": 2")       /* tid_negative */
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 10,"
    " \"args\": {\"Device Type\": 1, \"Bytes\": 512}},\n"          /* memory_fields_missing */
    "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 10,"
    " \"args\": {\"Device Type\": 0, \"Bytes\": 512}},\n"          /* host memory: not read */
    EV("\"cat\": \"cuda_sync\", \"name\": \"Stream Sync\", \"ts\": 1, \"dur\": 1")
    EV("\"cat\": \"gpu_user_annotation\", \"name\": \"a\", \"ts\": 1, \"dur\": -1")
    "{\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 0, \"ts\": 100, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
    "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"args\": {\"name\": \"t\"}}\n" /* pid_or_tid_missing */
    "]}\n";

static const struct {
    const char *key;
    int n;
} faulty_drops[] = {
    {"ts_missing", 1},       {"ts_not_a_number", 1}, {"ts_negative", 1},
    {"ts_out_of_range", 2},  {"dur_missing", 1},     {"dur_not_a_number", 2},
    {"dur_negative", 1},     {"dur_out_of_range", 2}, {"pid_or_tid_missing", 3},
    {"tid_negative", 1},     {"memory_fields_missing", 1}, {"correlation_missing", 1},
};

TEST_IMPL(kineto_dropped_events_counted_by_reason)
{
    char path[4096];
    ASSERT(an_write_tmp(path, "faulty.json", faulty, sizeof faulty - 1));
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary --json {}", path), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    /* the warning names the file and the reasons */
    ASSERT_CONTAINS(p.err, "warning: ");
    ASSERT_CONTAINS(p.err, path);
    ASSERT_CONTAINS(p.err, ": 17 of its 22 events dropped: 1 ts missing, 1 ts not a number");
    ASSERT_CONTAINS(p.err, "2 dur out of range (ending beyond 2^52 us)");
    char err[256];
    tj *s = tj_parse(p.out, err, sizeof err);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.source.events"), ==, 22);
    ASSERT_INT(tj_num(s, "processes.0.source.dropped_events"), ==, 17);
    ASSERT_INT(tj_num(s, "processes.0.source.kernels"), ==, 1);
    int sum = 0;
    for (size_t i = 0; i < sizeof faulty_drops / sizeof faulty_drops[0]; i++) {
        char key[128];
        snprintf(key, sizeof key, "processes.0.source.dropped.%s", faulty_drops[i].key);
        ASSERT(tj_path(s, key));
        if (tj_num(s, key) != faulty_drops[i].n)
            ctt_fail_at(__FILE__, __LINE__, "%s: %g, expected %d", key, tj_num(s, key), faulty_drops[i].n);
        ASSERT_INT(tj_num(s, key), ==, faulty_drops[i].n);
        sum += faulty_drops[i].n;
    }
    ASSERT_INT(sum, ==, 17);
    ASSERT(!tj_path(s, "processes.0.source.message"));
    tj_free(s);
    ctt_proc_free(&p);
    /* the text summary's line under the source line */
    ASSERT_INT(an_run(&p, "summary {}", path), ==, 0);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "\ndropped: 17 of the 22 events of ");
    ASSERT_CONTAINS(p.out, "faulty.json (1 ts missing, 1 ts not a number, 1 ts negative, 2 ts out of range");
    ctt_proc_free(&p);
    /* every GPU event dropped: the breakdown says so, not "no GPU activity" alone */
    static const char gone[] = "[" KERNEL("\"ts\": 100, \"dur\": 1e308")
                               KERNEL("\"ts\": 100, \"dur\": \"5\"") "{}]";
    ASSERT(an_write_tmp(path, "gone.json", gone, sizeof gone - 1));
    s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.source.dropped_events"), ==, 2);
    ASSERT_CONTAINS(tj_str(s, "processes.0.source.message"), "were all dropped");
    tj_free(s);
    ASSERT_INT(an_run(&p, "summary {}", path), ==, 0);
    ASSERT_CONTAINS(p.out, "no GPU activity left in this Kineto trace");
    ctt_proc_free(&p);
    /* a real trace: its runtime calls on threads written as negative numbers */
    char real[4096];
    if (an_prefixed_file(real, AN_KINETO_DATA, "ns_resolution_trace") != 0)
        ctt_skip("the Kineto traces are not present (../shared/data/kineto-hta)");
    s = an_summary(real, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.source.events"), ==, 68692);
    ASSERT_INT(tj_num(s, "processes.0.source.dropped.tid_negative"), ==, 58);
    ASSERT_INT(tj_num(s, "processes.0.source.dropped_events"), ==, 58);
    tj_free(s);
    return 0;
}

/* The kernels and events cutrace finds in a document given in another form. */
static int read_as(const char *path, int events, int kernels)
{
    tj *s = an_summary(path, NULL);
    if (!s)
        ctt_fail_at(__FILE__, __LINE__, "%s not read", path);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "kineto.0.events"), ==, events);
    ASSERT_INT(tj_num(s, "processes.0.source.kernels"), ==, kernels);
    ASSERT_INT(tj_num(s, "processes.0.source.dropped_events"), ==, 0);
    tj_free(s);
    return 0;
}

#define LAUNCH(n, ts)                                                                              \
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1,"       \
    " \"tid\": 1, \"ts\": " ts ", \"dur\": 2, \"args\": {\"correlation\": " n "}},"                 \
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" n "\", \"pid\": 0, \"tid\": 7, \"ts\": "   \
    ts "5, \"dur\": 50, \"args\": {\"stream\": 7, \"correlation\": " n "}}"
#define EVENTS LAUNCH("1", "10") ",\n" LAUNCH("2", "20") ",\n" LAUNCH("3", "30")

TEST_IMPL(kineto_chrome_forms_read)
{
    char path[4096], src[4096];
    static const char object[] = "{\"traceEvents\": [" EVENTS "]}";
    ASSERT(an_write_tmp(src, "object.json", object, sizeof object - 1));
    ASSERT_INT(read_as(src, 6, 3), ==, 0);
    /* Chrome's array form, closed, unclosed, unclosed after a ',' */
    static const char arr[] = " \n[" EVENTS "]\n", open1[] = "[" EVENTS "\n", open2[] = "[" EVENTS ",";
    ASSERT_INT(read_as(an_write_tmp(path, "array.json", arr, sizeof arr - 1), 6, 3), ==, 0);
    ASSERT_INT(read_as(an_write_tmp(path, "open.json", open1, sizeof open1 - 1), 6, 3), ==, 0);
    ASSERT_INT(read_as(an_write_tmp(path, "open-comma.json", open2, sizeof open2 - 1), 6, 3), ==, 0);
    /* a UTF-8 byte-order mark, before either form */
    static const char bom[] = "\xEF\xBB\xBF{\"traceEvents\": [" EVENTS "]}",
                      bom_arr[] = "\xEF\xBB\xBF[" EVENTS "]";
    ASSERT_INT(read_as(an_write_tmp(path, "bom.json", bom, sizeof bom - 1), 6, 3), ==, 0);
    ASSERT_INT(read_as(an_write_tmp(path, "bom-array.json", bom_arr, sizeof bom_arr - 1), 6, 3), ==, 0);
    /* gzip, gzip inside gzip, 8 layers: read; 9 refused, naming what it is */
    static const int nested[] = {1, 2, 3, 8, 9};
    for (size_t i = 0; i < sizeof nested / sizeof nested[0]; i++) {
        int layers = nested[i];
        snprintf(path, sizeof path, "%s/gz%d.json.gz", ctt_tmpdir(), layers);
        ASSERT_INT(gzip_times(src, path, layers), ==, 0);
        if (layers <= 8) {
            ASSERT_INT(read_as(path, 6, 3), ==, 0);
            continue;
        }
        ctt_proc p;
        ASSERT_INT(an_run(&p, "summary {}", path), ==, 0);
        ASSERT_INT(p.code, ==, 3);
        ASSERT_CONTAINS(p.err, path);
        ASSERT_CONTAINS(p.err, "expected JSON inside at most 8 layers of gzip compression");
        ctt_proc_free(&p);
    }
    /* a real trace gzip'd once more: the same events */
    char real[4096];
    if (an_prefixed_file(real, AN_KINETO_DATA, "cupti_profiler") != 0)
        ctt_skip("the Kineto traces are not present (../shared/data/kineto-hta)");
    snprintf(path, sizeof path, "%s/real.json.gz.gz", ctt_tmpdir());
    ASSERT_INT(gzip_times(real, path, 1), ==, 0);
    tj *s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "kineto.0.events"), ==, 4222);
    tj_free(s);
    return 0;
}

/* `cutrace summary FILE` must exit 3 naming the file and `what`, and never call it a broken
 * cutrace trace. */
static int refused(const char *name, const char *text, size_t len, int layers, const char *what)
{
    char raw[4096], gz[4200];
    ASSERT(an_write_tmp(raw, name, text, len));
    snprintf(gz, sizeof gz, "%s.gz", raw);
    const char *path = layers ? gz : raw;
    if (layers)
        ASSERT_INT(gzip_times(raw, gz, layers), ==, 0);
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", path), ==, 0);
    if (p.code != 3 || !strstr(p.err, what))
        ctt_fail_at(__FILE__, __LINE__, "%s: exit %d, stderr: %s", name, p.code, p.err);
    ASSERT_INT(p.code, ==, 3);
    ASSERT_CONTAINS(p.err, path);
    ASSERT_CONTAINS(p.err, what);
    ASSERT(!strstr(p.err, "expected magic"));
    ASSERT(!strstr(p.err, "not a cutrace trace"));
    ctt_proc_free(&p);
    return 0;
}

#define NO_EVENTS ": a JSON document with no trace events: expected an object with a \"traceEvents\" array or Chrome's array form [{...}, ...], found "
#define REFUSED(name, text, layers, what) refused(name, text, sizeof text - 1, layers, what)

TEST_IMPL(kineto_json_without_events_refused)
{
    ASSERT_INT(REFUSED("empty.json", "{}\n", 0, NO_EVENTS "an empty object"), ==, 0);
    ASSERT_INT(REFUSED("null.json", "null", 0, NO_EVENTS "null"), ==, 0);
    ASSERT_INT(REFUSED("null-bom.json", "\xEF\xBB\xBF null\n", 0, NO_EVENTS "null"), ==, 0);
    ASSERT_INT(REFUSED("other.json", "{\"schema_version\": 2}", 0, NO_EVENTS "an object without \"traceEvents\""), ==, 0);
    ASSERT_INT(REFUSED("te.json", "{\"traceEvents\": {}}", 0, NO_EVENTS "\"traceEvents\" holding an object"), ==, 0);
    ASSERT_INT(REFUSED("str.json", "\"traceEvents\"", 0, NO_EVENTS "a string"), ==, 0);
    ASSERT_INT(REFUSED("true.json", "true", 0, NO_EVENTS "true"), ==, 0);
    ASSERT_INT(REFUSED("empty2.json", "{}", 2, NO_EVENTS "an empty object"), ==, 0);
    /* gzip of something else, and UTF-16, are named */
    ASSERT_INT(REFUSED("text", "hello\n", 1, "expected a JSON document (a PyTorch profiler trace: '{' or '[', inside the gzip compression), found 'h'"), ==, 0);
    ASSERT_INT(REFUSED("trace.cutrace", "CUTRACE\0\1\0", 1, "found a cutrace trace compressed with gzip"), ==, 0);
    ASSERT_INT(REFUSED("u16.json", "\xFF\xFE{\0}\0", 0, "expected UTF-8 text, found UTF-16"), ==, 0);
    /* cutrace's own timeline (its events are Chrome's, as Kineto's are), plain or gzipped */
#define TIMELINE "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"cutrace timeline\"},\"traceEvents\":[\n" EVENTS "]}"
#define TIMELINE_WHY ": a timeline written by `cutrace timeline`, not a trace: give cutrace the .cutrace files"
    ASSERT_INT(REFUSED("timeline.json", TIMELINE, 0, TIMELINE_WHY), ==, 0);
    ASSERT_INT(REFUSED("timeline2.json", TIMELINE, 1, TIMELINE_WHY), ==, 0);
    /* a gzip stream cut short or damaged inside the outer one */
    static const char doc[] = "{\"traceEvents\": [" EVENTS "]}";
    char path[4096], inner[4200], cmd[9000];
    ASSERT(an_write_tmp(path, "doc.json", doc, sizeof doc - 1));
    snprintf(inner, sizeof inner, "%s/cut.json.gz", ctt_tmpdir());
    snprintf(cmd, sizeof cmd, "gzip -c '%s' | head -c 40 | gzip -c > '%s'", path, inner);
    ASSERT_INT(system(cmd), ==, 0);
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", inner), ==, 0);
    ASSERT_INT(p.code, ==, 3);
    ASSERT_CONTAINS(p.err, inner);
    ASSERT_CONTAINS(p.err, "expected the rest of the gzip stream inside the gzip stream (layer 2 of 2)");
    ctt_proc_free(&p);
    /* text that is no JSON stays a cutrace trace's error */
    ASSERT(an_write_tmp(path, "notes.txt", "hello\n", 6));
    ASSERT_INT(an_run(&p, "summary {}", path), ==, 0);
    ASSERT_INT(p.code, ==, 3);
    ASSERT_CONTAINS(p.err, "not a cutrace trace");
    ctt_proc_free(&p);
    return 0;
}
