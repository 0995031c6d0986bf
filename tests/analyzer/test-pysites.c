/* py_sites (tests/workloads/py_sites.py): a Python training loop calling the driver through ctypes
 * (issue 14). The pageable copy and the per-step synchronization must be reported at the exact
 * file:line of the user's code, read from the script's `# cutrace: <what>` markers. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "an_helpers.h"

/* The line of the script whose comment is "# cutrace: <what>", 0 if none. */
static int marker_line(const char *what)
{
    char path[4096];
    return an_marker_line(ctt_path(path, "tests/workloads/py_sites"), what);
}

/* The CPythons of the machine whose frames the tracer reads (3.8 to 3.13): the system's, the
 * PyTorch virtual environment's and pyenv's; the ones not installed are left out. Before 3.11 a
 * code object has no qualified name: a frame is named by its function's plain name. */
static const struct {
    const char *path;
    int qualname;
} interpreters[] = {
    {"/usr/bin/python3.11", 1},
    {"~/.cache/cutrace/venv/bin/python3", 1},
    {"/root/.pyenv/versions/3.8.18/bin/python3.8", 0},
    {"/root/.pyenv/versions/3.9.18/bin/python3.9", 0},
    {"/root/.pyenv/versions/3.10.13/bin/python3.10", 0},
    {"/root/.pyenv/versions/3.11.7/bin/python3.11", 1},
    {"/root/.pyenv/versions/3.12.1/bin/python3.12", 1},
    {"/root/.pyenv/versions/3.13.0/bin/python3.13", 1},
};

/* Every diagnosis `id` of the summary (one per traced process) has one site, the marked line,
 * with the 10 calls of the loop. */
static int site_at_marker(const tj *s, const char *id, const char *marker, int procs)
{
    char want[128];
    int line = marker_line(marker);
    ASSERT_INT(line, >, 0);
    snprintf(want, sizeof want, "py_sites:%d in train_step", line);
    ASSERT_INT(an_diag_count(s, id), ==, procs);
    const tj *all = tj_get(s, "diagnoses");
    for (size_t i = 0; i < all->n; i++) {
        const tj *d = all->v[i];
        if (strcmp(tj_str(d, "id"), id) != 0)
            continue;
        ASSERT_STR(tj_str(d, "sites.0.stack"), want);
        ASSERT_INT(tj_num(d, "sites.0.count"), ==, 10);
        ASSERT(!tj_path(d, "sites.1"));
    }
    return 0;
}

/* Whether some STACK of the trace in dir (one file) has exactly these Python frames, innermost
 * first (each function name followed by a space), whatever native frames lie between them: read
 * from `cutrace dump`. */
static int has_python_stack(const char *dir, const char *want)
{
    char file[4400] = "", args[64];
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    ctt_proc p;
    snprintf(args, sizeof args, "dump {}");
    if (!*file || an_run(&p, args, file) != 0)
        return 0;
    static char names[4096][64]; /* Python frame id -> function name, "" for a native frame */
    memset(names, 0, sizeof names);
    int found = 0;
    for (char *line = strtok(p.out, "\n"); line && !found; line = strtok(NULL, "\n")) {
        unsigned id;
        char fn[64];
        const char *f = strstr(line, " frame "), *st = strstr(line, " stack ");
        if (f && strstr(line, " kind=1 ") && sscanf(strstr(f, " id="), " id=%u function=\"%63[^\"]", &id, fn) == 2 &&
            id < 4096)
            snprintf(names[id], sizeof names[id], "%s", fn);
        if (st && strstr(st, " frames=")) {
            char seq[1024] = "";
            for (char *q = strstr(st, " frames=") + 8; *q;) {
                unsigned fid = (unsigned)strtoul(q, &q, 10);
                if (fid < 4096 && names[fid][0] && strlen(seq) + strlen(names[fid]) + 2 < sizeof seq)
                    strcat(strcat(seq, names[fid]), " ");
                if (*q == ',')
                    q++;
                else
                    break;
            }
            found = !strcmp(seq, want);
        }
    }
    ctt_proc_free(&p);
    return found;
}

/* Traces py_sites under one interpreter and checks both diagnoses name the marked lines. */
static int python_sites(const char *python, int qualname, int n, const char *extra)
{
    char dir[4096], script[4096], args[8300], name[32], *out;
    int procs = strstr(extra, "--fork") ? 2 : 1;
    snprintf(name, sizeof name, "pysites-%d", n);
    snprintf(args, sizeof args, "%s %s --steps 10%s", python,
             ctt_path(script, "tests/workloads/py_sites"), extra);
    ASSERT(an_trace_workload(dir, name, args, NULL, &out));
    ASSERT_CONTAINS(out, "py_sites: steps=10");
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(site_at_marker(s, "pageable-memcpy", "pageable-copy", procs), ==, 0);
    ASSERT_INT(site_at_marker(s, "excessive-sync", "step-sync", procs), ==, 0);
    if (strstr(extra, "--callback")) {
        /* the callback's frame after the allocating one (up to 3.10 each Python frame has its
         * own evaluation loop, so native frames lie between them) */
        char want[160];
        const char *compare = qualname ? "main.<locals>.compare" : "compare";
        const char *text = tj_str(s, "vram.0.peak_holders.0.stack");
        snprintf(want, sizeof want, "train (py_sites:%d) <- ", marker_line("alloc"));
        ASSERT_CONTAINS(text, want);
        text = strstr(text, want);
        snprintf(want, sizeof want, "<- %s (py_sites:%d) <- ", compare, marker_line("callback"));
        ASSERT_CONTAINS(text, want);
        snprintf(want, sizeof want, "train %s main <module> ", compare);
        ASSERT(has_python_stack(dir, want));
    }
    tj_free(s);
    return 0;
}

static int every_python(const char *extra)
{
    int verified = 0;
    for (size_t i = 0; i < sizeof interpreters / sizeof interpreters[0]; i++) {
        char path[4096];
        const char *home = getenv("HOME");
        const char *want = interpreters[i].path;
        if (want[0] == '~')
            snprintf(path, sizeof path, "%s%s", home ? home : "", want + 1);
        else
            snprintf(path, sizeof path, "%s", want);
        if (access(path, X_OK) != 0)
            continue;
        if (python_sites(path, interpreters[i].qualname, (int)i, extra) != 0) {
            fprintf(stderr, "python call sites: wrong under %s\n", path);
            return 1;
        }
        fprintf(stderr, "python call sites: verified under %s\n", path);
        verified++;
    }
    if (!verified)
        ctt_skip("no CPython 3.8 to 3.13 is installed");
    return 0;
}

TEST_IMPL(python_call_sites_main_thread)
{
    return every_python("");
}

TEST_IMPL(python_call_sites_in_a_thread)
{
    return every_python(" --thread");
}

TEST_IMPL(python_call_sites_across_fork)
{
    return every_python(" --fork");
}

/* A CPython whose frames the tracer cannot read (before 3.8) is reported once, and its call
 * sites stay native: never a guessed Python line. */
TEST_IMPL(python_unknown_version_reported_once)
{
    static const char *const old[] = {
        "/root/.pyenv/versions/3.7.16/bin/python3.7",
        "/root/.pyenv/versions/3.6.15/bin/python3.6",
    };
    int tried = 0;
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
        if (access(old[i], X_OK) != 0)
            continue;
        char dir[4096], script[4096], args[8300], name[32], *out, *err;
        snprintf(name, sizeof name, "pyold-%zu", i);
        snprintf(args, sizeof args, "%s %s --steps 10 --thread", old[i],
                 ctt_path(script, "tests/workloads/py_sites"));
        ASSERT(an_trace_workload_err(dir, name, args, NULL, &out, &err));
        free(out);
        const char *w = strstr(err, "cutrace cannot read its frames");
        ASSERT(w);
        ASSERT(!strstr(w + 1, "cutrace cannot read its frames"));
        free(err);
        tj *s = an_summary(dir, NULL);
        ASSERT(s);
        const tj *d = an_diag(s, "pageable-memcpy");
        ASSERT(d);
        ASSERT(!strstr(tj_str(d, "sites.0.stack"), "py_sites"));
        ASSERT_CONTAINS(tj_str(d, "sites.0.stack"), "ffi_call");
        tj_free(s);
        tried++;
    }
    if (!tried)
        ctt_skip("no CPython older than 3.8 is installed");
    return 0;
}

TEST_IMPL(python_call_sites_through_a_c_callback)
{
    return every_python(" --callback");
}

/* The user's script in a directory whose path has "lib/python3" in it (a project's
 * lib/python3_tools/): it is the user's, not the standard library, since it is not under the lib
 * directory of the interpreter's prefixes recorded in the trace (PYTHON record). */
TEST_IMPL(python_user_code_under_a_lib_python3_directory)
{
    char dir[4096], src[4096], copy[4200], args[8400], *out;
    snprintf(copy, sizeof copy, "%s/proj/lib/python3_tools", ctt_tmpdir());
    char *mk[] = {"mkdir", "-p", copy, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, mk, NULL, 10), ==, 0);
    ctt_proc_free(&p);
    strcat(copy, "/py_sites");
    char *cp[] = {"cp", (char *)ctt_path(src, "tests/workloads/py_sites"), copy, NULL};
    ASSERT_INT(ctt_run(&p, cp, NULL, 10), ==, 0);
    ctt_proc_free(&p);
    if (access("/usr/bin/python3.11", X_OK) != 0)
        ctt_skip("/usr/bin/python3.11 is not installed");
    snprintf(args, sizeof args, "/usr/bin/python3.11 %s --steps 10", copy);
    ASSERT(an_trace_workload(dir, "pylib", args, NULL, &out));
    ASSERT_CONTAINS(out, "py_sites: steps=10");
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(site_at_marker(s, "pageable-memcpy", "pageable-copy", 1), ==, 0);
    tj_free(s);
    return 0;
}
