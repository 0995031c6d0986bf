#include "tr.h"

#include <glob.h>
#include <stdlib.h>
#include <unistd.h>

/* Runs train_loop (2 iterations) with `--stacks mode` and counts, per API function group, the
 * records carrying a call site that reaches main. */
static int stacks_run(const char *mode, size_t *copies, size_t *copies_with, size_t *syncs,
                      size_t *syncs_with, size_t *launches, size_t *launches_with)
{
    char prog[4096], out[4096];
    snprintf(out, sizeof out, "%s/out-%s", ctt_tmpdir(), mode);
    char *opts[] = {"--stacks", (char *)mode, NULL};
    char *cmd[] = {(char *)tr_workload(prog, "train_loop"), "--iters", "2", "--loader-ms", "1",
                   NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, opts, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    *copies = *copies_with = *syncs = *syncs_with = *launches = *launches_with = 0;
    for (size_t i = 0; i < t.n; i++) {
        const tr_rec *x = &t.v[i];
        if (x->r.type != CT_REC_API || !(x->r.u.api.flags & CT_API_DRIVER))
            continue;
        size_t *n, *with;
        if (strncmp(x->name, "cuMemcpy", 8) == 0)
            n = copies, with = copies_with;
        else if (strcmp(x->name, "cuStreamSynchronize") == 0)
            n = syncs, with = syncs_with;
        else if (strcmp(x->name, "cuLaunchKernel") == 0)
            n = launches, with = launches_with;
        else
            continue;
        (*n)++;
        if (x->stack) {
            /* The user's call site, through the runtime, without cutrace's own frames. */
            ASSERT_CONTAINS(x->stack, "main@train_loop;");
            ASSERT(!strstr(x->stack, "libcutrace"));
            (*with)++;
        }
    }
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* Default stacks cover copies and synchronizations (allocations are checked with vram_peak);
 * `all` adds every other call, launches included; `none` records no call site. */
TEST_IMPL(stacks_on_copies_and_syncs)
{
    size_t c, cw, s, sw, l, lw;
    ASSERT_INT(stacks_run("default", &c, &cw, &s, &sw, &l, &lw), ==, 0);
    ASSERT_UINT(c, ==, 5); /* 1 setup H2D + per iteration an H2D and a D2H */
    ASSERT_UINT(cw, ==, c);
    ASSERT_UINT(s, ==, 2);
    ASSERT_UINT(sw, ==, s);
    ASSERT_UINT(l, ==, 66);
    ASSERT_UINT(lw, ==, 0);
    ASSERT_INT(stacks_run("all", &c, &cw, &s, &sw, &l, &lw), ==, 0);
    ASSERT_UINT(lw, ==, 66);
    ASSERT_UINT(cw, ==, 5);
    ASSERT_INT(stacks_run("none", &c, &cw, &s, &sw, &l, &lw), ==, 0);
    ASSERT_UINT(cw + sw + lw, ==, 0);
    return 0;
}

/* The value of " key=" in line (up to the next space) into buf; "" if absent. */
static const char *field(const char *line, const char *key, char *buf, size_t len)
{
    char k[64];
    snprintf(k, sizeof k, " %s=", key);
    const char *at = strstr(line, k);
    buf[0] = 0;
    if (at) {
        at += strlen(k);
        if (*at == '"')
            at++;
        size_t n = strcspn(at, "\" \n");
        snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), at);
    }
    return buf;
}

/* The trace in dir has one PYTHON record, and it says what the interpreter said of itself on
 * pycode.py's second line: version, program, base prefixes; each entry of its search path is on
 * sys.path. */
static int same_interpreter(const char *dir, const char *out)
{
    char *args[] = {"dump", (char *)dir, NULL};
    char *dump = tr_analyze(args);
    ASSERT(dump);
    const char *rec = strstr(dump, " python tid=");
    ASSERT(rec);
    ASSERT(!strstr(rec + 1, " python tid="));
    const char *said = tr_line(out, "pycode: hexversion=");
    char a[4096], b[4096], path[4096], syspath[8192];
    ASSERT_STR(field(rec, "version", a, sizeof a), field(said, "hexversion", b, sizeof b));
    ASSERT_STR(field(rec, "program", a, sizeof a), field(said, "executable", b, sizeof b));
    ASSERT_STR(field(rec, "prefix", a, sizeof a), field(said, "base_prefix", b, sizeof b));
    ASSERT_STR(field(rec, "exec_prefix", a, sizeof a), field(said, "base_exec_prefix", b, sizeof b));
    field(rec, "path", path, sizeof path);
    snprintf(syspath, sizeof syspath, ":%s:", field(said, "path", b, sizeof b));
    ASSERT(path[0]);
    for (char *save = NULL, *e = strtok_r(path, ":", &save); e; e = strtok_r(NULL, ":", &save)) {
        snprintf(a, sizeof a, ":%s:", e);
        ASSERT_CONTAINS(syspath, a);
    }
    free(dump);
    return 0;
}

/* Python code objects freed and made again at the same addresses (pycode.py): the i-th call is
 * named after its own code object, gen_i.py line i + 2, on each CPython 3.8-3.13 installed; the
 * trace's PYTHON record describes that interpreter as it describes itself; and with
 * CUTRACE_PYTHON_FRAMES=0 the stacks stay native. */
TEST_IMPL(stacks_python_code_reused)
{
    glob_t g;
    tr_pythons(&g);
    for (size_t k = 0; k < g.gl_pathc; k++) {
        char out[4096], want[64];
        snprintf(out, sizeof out, "%s/pycode-%zu", ctt_tmpdir(), k);
        char *cmd[] = {g.gl_pathv[k], TR_PYCODE_PY, "200", NULL};
        ctt_proc p;
        ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
        TR_ASSERT_EXIT(p, 0);
        ASSERT_CONTAINS(p.out, "pycode: calls=200\n");
        tr_trace t;
        ASSERT_INT(tr_load(&t, out), ==, 0);
        int i = 0;
        for (size_t r = 0; r < t.n; r++) {
            const tr_rec *x = &t.v[r];
            if (x->r.type != CT_REC_API || strcmp(x->name, "cuCtxSynchronize") != 0)
                continue;
            snprintf(want, sizeof want, ";gen@gen_%d.py:%d;", i, i + 2);
            ASSERT(x->stack);
            ASSERT_CONTAINS(x->stack, want);
            i++;
        }
        ASSERT_INT(i, ==, 200);
        printf("%s: 200 calls named after their own code objects\n", g.gl_pathv[k]);
        if (same_interpreter(out, p.out))
            return 1;
        /* CUTRACE_PYTHON_FRAMES=0: the same calls, their stacks native */
        char *off[] = {"CUTRACE_PYTHON_FRAMES=0", NULL};
        ctt_proc q;
        tr_trace u;
        snprintf(out, sizeof out, "%s/pycode-%zu-native", ctt_tmpdir(), k);
        ASSERT_INT(tr_run(&q, out, NULL, cmd, off, 60), ==, 0);
        TR_ASSERT_EXIT(q, 0);
        ASSERT_INT(tr_load(&u, out), ==, 0);
        ASSERT_UINT(tr_count(&u, CT_REC_API, "cuCtxSynchronize"), ==, 200);
        for (size_t r = 0; r < u.n; r++)
            ASSERT(!u.v[r].stack || !strstr(u.v[r].stack, ".py:"));
        tr_free(&u);
        ctt_proc_free(&q);
        tr_free(&t);
        ctt_proc_free(&p);
    }
    globfree(&g);
    return 0;
}

/* CUDA calls from a sub-interpreter (pysub.py), on each CPython 3.8-3.13 installed: the program
 * runs as untraced, and each call's Python frames are either the sub-interpreter's own, at the
 * marked lines (3.12 and later, where the thread-state key follows the running interpreter), or
 * none (earlier versions, whose key names the main interpreter's state: stacks stay native). */
TEST_IMPL(stacks_python_subinterpreter)
{
    glob_t g;
    int found = glob("/root/.pyenv/versions/3.{8,9,1[0-3]}.*/bin/python3.{8,9,1[0-3]}",
                     GLOB_BRACE, NULL, &g);
    if (found != 0 || g.gl_pathc == 0)
        ctt_skip("no CPython 3.8 to 3.13 found (pyenv)");
    for (size_t k = 0; k < g.gl_pathc; k++) {
        char out[4096], want[128];
        snprintf(out, sizeof out, "%s/pysub-%zu", ctt_tmpdir(), k);
        char *cmd[] = {g.gl_pathv[k], TR_PYSUB_PY, NULL};
        ctt_proc p;
        ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
        TR_ASSERT_EXIT(p, 0);
        ASSERT_CONTAINS(p.out, "pysub: ok\n");
        const char *said = tr_line(p.out, "pysub: sync_line=");
        long long sync = tr_value(said, "sync_line"), loop = tr_value(said, "module_line");
        int reads = strstr(g.gl_pathv[k], "/python3.12") || strstr(g.gl_pathv[k], "/python3.13");
        tr_trace t;
        ASSERT_INT(tr_load(&t, out), ==, 0);
        int calls = 0;
        for (size_t r = 0; r < t.n; r++) {
            const tr_rec *x = &t.v[r];
            if (x->r.type != CT_REC_API || strcmp(x->name, "cuCtxSynchronize") != 0)
                continue;
            ASSERT(x->stack);
            snprintf(want, sizeof want, ";sub_step@<string>:%lld;<module>@<string>:%lld;", sync, loop);
            if (reads)
                ASSERT_CONTAINS(x->stack, want);
            else
                ASSERT(!strstr(x->stack, "@<string>:") && !strstr(x->stack, ".py:"));
            calls++;
        }
        ASSERT_INT(calls, ==, 3);
        printf("%s: sub-interpreter frames %s\n", g.gl_pathv[k], reads ? "read" : "left native");
        tr_free(&t);
        ctt_proc_free(&p);
    }
    globfree(&g);
    return 0;
}

/* CUDA calls before CPython starts, from it, and after it finished, in a program that embeds it
 * (pyembed.c, built at test time against the system's libpython3.11): it runs as untraced, and
 * only the 3 calls made from Python have Python frames, embedded.py:4 in step. */
TEST_IMPL(stacks_python_embedded_start_and_end)
{
    char bin[4096], src[4096];
    ctt_path(bin, "tests/tracer/pyembed");
    snprintf(src, sizeof src, "%s/pyembed.c", TR_SRCDIR);
    char *cc[] = {"sh", "-c", "cc -O2 -I/usr/local/cuda/include $(/usr/bin/python3.11-config --cflags) "
                  "-o \"$0\" \"$1\" -L/usr/local/cuda/lib64/stubs -lcuda "
                  "$(/usr/bin/python3.11-config --embed --ldflags)", bin, src, NULL};
    ctt_proc b;
    if (access("/usr/bin/python3.11-config", X_OK) != 0 || ctt_run(&b, cc, NULL, 60) != 0 ||
        !b.exited || b.code != 0)
        ctt_skip("no libpython3.11 to embed (/usr/bin/python3.11-config, python3.11-dev)");
    ctt_proc_free(&b);
    char out[4096];
    snprintf(out, sizeof out, "%s/pyembed", ctt_tmpdir());
    char *cmd[] = {bin, NULL};
    ctt_proc p;
    ASSERT_INT(tr_run(&p, out, NULL, cmd, NULL, 60), ==, 0);
    TR_ASSERT_EXIT(p, 0);
    ASSERT_STR(p.out, "pyembed: before=0 python=0 after=0\n");
    tr_trace t;
    ASSERT_INT(tr_load(&t, out), ==, 0);
    int calls = 0, python = 0;
    for (size_t r = 0; r < t.n; r++) {
        const tr_rec *x = &t.v[r];
        if (x->r.type != CT_REC_API || strcmp(x->name, "cuCtxSynchronize") != 0)
            continue;
        ASSERT(x->stack);
        int in_python = calls >= 3 && calls < 6;
        if (in_python)
            ASSERT_CONTAINS(x->stack, ";step@embedded.py:4;<module>@embedded.py:7;");
        else
            ASSERT(!strstr(x->stack, ".py:"));
        python += in_python;
        calls++;
    }
    ASSERT_INT(calls, ==, 9);
    ASSERT_INT(python, ==, 3);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}
