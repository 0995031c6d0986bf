/* A kernel whose demangled name is longer than a trace's string may be (long_names: 75,794 bytes
 * of nested templates) under `cutrace run`: its name is recorded cut with its length
 * (FORMAT.md 4.1), and every output shows it so, never as an undefined "<string N>"; so are the
 * host functions' in a call stack, one a symbol of 84,906 bytes (12,000 template arguments). */
#include "tr.h"

#include <stdlib.h>
#include <string.h>

/* Python over the SQLite export (argv[1]) and the CSV export (argv[2]): per value of the long
 * kernel's name, "WHERE BYTES ENDS" (ENDS: whether it ends with argv[3], the marker); then the
 * kernels' short names as "short VALUE". */
static const char *const LN_READ_EXPORTS =
    "import csv, gzip, sqlite3, sys\n"
    "db = sqlite3.connect(sys.argv[1])\n"
    "q = lambda sql: [v for (v,) in db.execute(sql)]\n"
    "rows = [('kernel', v) for v in q('SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
    " JOIN StringIds s ON s.id = k.demangledName')]\n"
    "rows += [('top', v) for v in q('SELECT topKernel FROM CUTRACE_PROCESSES')]\n"
    "rows += [('view', v) for v in q('SELECT name FROM CUTRACE_TOP_KERNELS')]\n"
    "with gzip.open(sys.argv[2] + '/StringIds/all.csv.gz', 'rt', newline='') as f:\n"
    "    rows += [('csv', r[1]) for r in csv.reader(f)]\n"
    "for where, v in rows:\n"
    "    if v.startswith('void wl_long_kernel<wl_pair<wl_pair<'):\n"
    "        print(where, len(v.encode()), v.endswith(sys.argv[3]))\n"
    "for v in q('SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
    " JOIN StringIds s ON s.id = k.shortName ORDER BY 1'):\n"
    "    print('short', v)\n";

TEST_IMPL(long_kernel_name_cut_with_its_length)
{
    char prog[4096], out[4096], mark[64];
    snprintf(out, sizeof out, "%s/trace", ctt_tmpdir());
    char *cmd[] = {(char *)tr_workload(prog, "long_names"), NULL};
    /* the long kernel the top one whatever the machine's load: 1 ms each, the short one's the
     * simulation's few microseconds (equal, the two swapped places in a run beside other suites) */
    char *env[] = {"FAKECUDA_KERNEL_NS=wl_long_kernel=1000000", NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, env, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    const char *said = tr_line(p.out, "long_names: mangled_bytes=");
    long long mangled = tr_value(said, "mangled_bytes"), bytes = tr_value(said, "demangled_bytes");
    ASSERT(bytes > CT_STRING_MAX);
    snprintf(mark, sizeof mark, "...[truncated, %lld bytes]", bytes);
    ctt_proc_free(&p);

    /* The trace: 3 launches of each kernel, the long one named by as much of its name as fits
     * with the marker, its symbol (short) whole. */
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    ASSERT_UINT(t.stats[0].lost, ==, 0);
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, NULL), ==, 6);
    ASSERT_UINT(tr_count(&t, CT_REC_LAUNCH, "wl_short_kernel(float*)"), ==, 3);
    size_t cut = 0, stored = 0, m = strlen(mark);
    for (size_t i = 0; i < t.n; i++) {
        const tr_rec *x = &t.v[i];
        if (x->r.type != CT_REC_LAUNCH || strncmp(x->name, "void wl_long_kernel<wl_pair<", 28))
            continue;
        stored = strlen(x->name);
        ASSERT_UINT(stored, <=, CT_STRING_MAX);
        ASSERT_UINT(stored, >, CT_STRING_MAX - 4);
        ASSERT_STR(x->name + stored - m, mark);
        ASSERT_UINT(strncmp(x->symbol, "_Z14wl_long_kernelI7wl_pairIS0_", 31), ==, 0);
        ASSERT_UINT(strlen(x->symbol), ==, (size_t)mangled);
        cut++;
    }
    ASSERT_UINT(cut, ==, 3);
    tr_free(&t);

    /* Each output has the marker and nothing undefined; the summary's table cell starts the
     * name, then gives the marker. */
    char page[4096], tl[4096], db[4096], csvdir[4096], cell[256], frame[128];
    snprintf(page, sizeof page, "%s/report.html", ctt_tmpdir());
    snprintf(tl, sizeof tl, "%s/timeline.json", ctt_tmpdir());
    snprintf(db, sizeof db, "%s/trace.sqlite", ctt_tmpdir());
    snprintf(csvdir, sizeof csvdir, "%s/csv", ctt_tmpdir());
    snprintf(cell, sizeof cell, "void wl_long_kernel<wl_pair<wl_pair<wl_pair<wl_pair<wl_pair<%s", mark);
    /* wl_steps for wl_long_kernel (6 bytes fewer), (float*, long long) for (float*) (11 more) */
    snprintf(frame, sizeof frame, "...[truncated, %lld bytes] (long_names+0x", bytes + 5);
    char *const runs[][6] = {{"summary", out, NULL},
                             {"summary", "--json", out, NULL},
                             {"timeline", "-o", tl, out, NULL},
                             {"dump", out, NULL},
                             {"report", "-o", page, out, NULL},
                             {"export", "--sqlite", db, out, NULL},
                             {"export", "--csv", csvdir, out, NULL}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char *text = tr_analyze(runs[i]);
        ASSERT(text != NULL);
        if (!strcmp(runs[i][1], "-o")) {
            free(text);
            text = ctt_read_file(runs[i][2], NULL);
            ASSERT(text != NULL);
        }
        if (strcmp(runs[i][0], "export")) { /* the exports are read below */
            ASSERT_CONTAINS(text, mark);
            ASSERT(strstr(text, "<string ") == NULL);
        }
        if (i == 0)
            ASSERT_CONTAINS(text, cell);
        if (i == 2) { /* the synchronization's call stack: wl_sync's symbol, then wl_steps<T> */
            const char *st = strstr(text, "\"stack\":\"_Z7wl_syncIJLi0ELi1ELi2ELi3E");
            ASSERT(st != NULL);
            st = strstr(st, "...[truncated, ");
            ASSERT(st != NULL);
            char *end;
            ASSERT(strtoll(st + 15, &end, 10) > CT_STRING_MAX);
            ASSERT_UINT(strncmp(end, " bytes] (long_names+0x", 22), ==, 0);
            ASSERT_CONTAINS(end, "<- void wl_steps<wl_pair<wl_pair<");
            ASSERT_CONTAINS(end, frame);
        }
        free(text);
    }
    /* The exports: the name as the trace holds it in the kernel rows, the view and the CSV's
     * strings; the top kernel cut shorter to its column, its marker kept; the short name the
     * function's. */
    char *py[] = {"python3", "-c", (char *)LN_READ_EXPORTS, db, csvdir, mark, NULL};
    ASSERT_INT(ctt_run(&p, py, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    char want[512];
    snprintf(want, sizeof want,
             "kernel %zu True\nkernel %zu True\nkernel %zu True\ntop 159 True\nview %zu True\n"
             "csv %zu True\nshort wl_long_kernel\nshort wl_short_kernel\n",
             stored, stored, stored, stored, stored);
    ASSERT_STR(p.out, want);
    ctt_proc_free(&p);
    return 0;
}

/* A Python function whose name is 70,000 bytes, defined in a file whose path is 2,000 (more than
 * the tracer's 1 KiB buffer for a Python string), calls the driver: the synchronization's stack
 * names the function cut with its length and the file whole, in the trace and the timeline. */
static const char *const LN_PYTHON =
    "import ctypes\n"
    "cu = ctypes.CDLL('libcuda.so.1')\n"
    "dev, ctx = ctypes.c_int(), ctypes.c_void_p()\n"
    "assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0\n"
    "assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0\n"
    "assert cu.cuCtxSetCurrent(ctx) == 0\n"
    "name, path = 'f' * 70000, '/' + 'd' * 1995 + '.py'\n"
    "space = {'cu': cu}\n"
    "exec(compile('def %s():\\n    return cu.cuCtxSynchronize()\\n' % name, path, 'exec'), space)\n"
    "assert space[name]() == 0\n";

TEST_IMPL(long_python_names_cut_with_their_length)
{
    glob_t g;
    tr_pythons(&g);
    char out[4096], tl[4096], want[2200];
    snprintf(out, sizeof out, "%s/trace", ctt_tmpdir());
    snprintf(tl, sizeof tl, "%s/timeline.json", ctt_tmpdir());
    char *cmd[] = {g.gl_pathv[0], "-c", (char *)LN_PYTHON, NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ctt_proc_free(&p);
    /* dump: the frame's function, as much as fits, then the marker; its file whole */
    char *dump[] = {"dump", out, NULL}, *tlargs[] = {"timeline", "-o", tl, out, NULL};
    char *text = tr_analyze(dump);
    ASSERT(text != NULL);
    snprintf(want, sizeof want, "fff...[truncated, 70000 bytes]\"#");
    ASSERT_CONTAINS(text, want);
    memset(want, 'd', 1995);
    snprintf(want + 1995, sizeof want - 1995, ".py\"#");
    ASSERT_CONTAINS(text, want);
    ASSERT(strstr(text, "<string ") == NULL);
    free(text);
    /* the timeline's stack of the call: the function cut shorter, the marker kept */
    text = tr_analyze(tlargs);
    ASSERT(text != NULL);
    free(text);
    text = ctt_read_file(tl, NULL);
    ASSERT(text != NULL);
    ASSERT_CONTAINS(text, "fff...[truncated, 70000 bytes] (ddd");
    free(text);
    globfree(&g);
    return 0;
}
