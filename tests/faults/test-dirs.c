/* Where the trace goes and what stops it being written: a missing directory (created), one the
 * program may not write (cutrace run refuses it; preloaded, untraced with one warning and the
 * count of calls at the end), a path too long (the same), a full disk or quota, a program that
 * limits its file sizes (tracing stops and the trace says why), a directory removed while the
 * program runs (made again, nothing lost), a program that changes directory. The program's
 * output and end are those of an untraced run. */
#define _GNU_SOURCE
#include "fl.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* victim steps 3 untraced, then traced into dir with extra env: same output and end. */
static int fl_steps(const char *dir, char *const env[], ctt_proc *traced)
{
    char victim[4096];
    char *cmd[] = {(char *)fl_victim(victim), "steps", "3", NULL};
    ctt_proc plain;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(traced, dir, NULL, cmd, env, 60), ==, 0);
    FL_ASSERT_SAME(*traced, plain);
    ctt_proc_free(&plain);
    return 0;
}

/* The trace in dir stopped early because writing failed for `why` and says so: a LOSS of the
 * write failure, END CT_END_STOPPED with that code, the summary in `words`, JSON's stopped_by
 * `key`; the tracer told stderr (err) once when it happened, and at the end what it held. */
static int fl_stopped(const char *dir, const char *err, unsigned why, const char *words,
                      const char *key)
{
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    const ct_rec *end = fl_end(&t, 0), *loss = NULL;
    ASSERT(end != NULL);
    ASSERT_UINT(end->u.end.how, ==, CT_END_STOPPED);
    ASSERT_INT(end->u.end.code, ==, (int)why);
    for (size_t i = 0; i < t.n && !loss; i++)
        if (t.v[i].r.type == CT_REC_LOSS && t.v[i].r.u.loss.reason == CT_LOSS_WRITE)
            loss = &t.v[i].r;
    ASSERT(loss != NULL);
    ASSERT_UINT(loss->u.loss.why, ==, why);
    ASSERT_UINT(loss->u.loss.count, >, 0);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), >, 0);
    tr_free(&t);
    const char *w = strstr(err, "cutrace: warning: writing");
    ASSERT(w != NULL);
    ASSERT(strstr(w + 1, "cutrace: warning: writing") == NULL); /* once */
    ASSERT_CONTAINS(err, "holds the trace up to where writing failed");
    char *summary[] = {"summary", (char *)dir, NULL}, line[300];
    char *text = tr_analyze(summary);
    ASSERT(text != NULL);
    snprintf(line, sizeof line, ", ended: trace stopped early: %s; the program went on untraced",
             words);
    ASSERT_CONTAINS(text, line);
    ASSERT(strstr(text, "no END record") == NULL);
    free(text);
    char *jargs[] = {"summary", "--json", (char *)dir, NULL};
    char *json = tr_analyze(jargs);
    ASSERT(json != NULL);
    ASSERT_CONTAINS(json, "\"end\": \"stopped\",");
    snprintf(line, sizeof line, "\"stopped_by\": \"%s\",", key);
    ASSERT_CONTAINS(json, line);
    free(json);
    return 0;
}

TEST_IMPL(trace_dir_missing_is_created)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/not/yet/there", ctt_tmpdir());
    ctt_proc p;
    if (fl_steps(dir, NULL, &p))
        return 1;
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), ==, 3);
    tr_free(&t);
    ctt_proc_free(&p);
    return 0;
}

/* The untraced run of cmd with libcutrace preloaded into an output directory it cannot use
 * (CUTRACE_OUTPUT=dir, argv0 before cmd: a privilege drop or NULL): one warning naming the
 * directory at the first CUDA call, the program's output and end unchanged, and at its end the
 * count of its CUDA calls, none traced: exactly the API records a traced run of cmd holds. */
static int fl_untraced_count(const char *dir, char *const pre[], char *const cmd[],
                             const char *problem)
{
    char lib[4096], fake[4096], preload[4200], out[8300], llp[4200], good[4096];
    char *argv[16];
    size_t n = 0;
    for (; pre && pre[n]; n++)
        argv[n] = pre[n];
    for (size_t k = 0; cmd[k]; k++)
        argv[n++] = cmd[k];
    argv[n] = NULL;
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", ctt_path(lib, "lib/libcutrace.so"));
    snprintf(out, sizeof out, "CUTRACE_OUTPUT=%s", dir);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *env[] = {preload, out, llp, NULL};
    ctt_proc plain, p, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(ctt_run(&p, argv, env, 60), ==, 0);
    FL_ASSERT_SAME(p, plain);
    const char *w = strstr(p.err, "cutrace: warning: cannot create a trace file in");
    ASSERT(w != NULL);
    ASSERT_CONTAINS(w, problem);
    ASSERT_CONTAINS(w, "runs untraced");
    static int runs;
    snprintf(good, sizeof good, "%s/counted%d", ctt_tmpdir(), runs++);
    ASSERT_INT(tr_run_preloaded(&traced, good, cmd, NULL, 60), ==, 0);
    tr_trace t;
    ASSERT_INT(tr_load(&t, good), ==, 0);
    char want[200];
    snprintf(want, sizeof want, " made %zu CUDA calls, none traced: cannot create a trace file in",
             tr_count(&t, CT_REC_API, NULL));
    ASSERT_CONTAINS(p.err, want);
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&p);
    ctt_proc_free(&traced);
    return 0;
}

/* cutrace run (after argv0 pre, or NULL) with an output directory it cannot use: refused
 * before the command runs, with a message naming the directory and `problem`. */
static int fl_run_refused(char *const pre[], const char *dir, const char *problem)
{
    char victim[4096], cutrace[4096];
    char *argv[16];
    size_t n = 0;
    for (; pre && pre[n]; n++)
        argv[n] = pre[n];
    char *run[] = {(char *)ctt_path(cutrace, "bin/cutrace"), "run", "-o", (char *)dir, "--",
                   (char *)fl_victim(victim), "steps", "3", NULL};
    for (size_t k = 0; k < sizeof run / sizeof *run; k++)
        argv[n++] = run[k];
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
    ASSERT(p.exited && p.code == 1);
    ASSERT_CONTAINS(p.err, "cutrace run: error: output directory ");
    ASSERT_CONTAINS(p.err, problem);
    ASSERT(strstr(p.out, "victim:") == NULL); /* not run */
    ctt_proc_free(&p);
    return 0;
}

/* A directory the program's user may not write: as root (who may write anywhere) the program
 * runs as nobody through setpriv. */
TEST_IMPL(trace_dir_not_writable)
{
    char dir[4096], victim[4096];
    snprintf(dir, sizeof dir, "%s/readonly", ctt_tmpdir());
    ASSERT_INT(mkdir(dir, 0555), ==, 0);
    ASSERT_INT(chmod(ctt_tmpdir(), 0755), ==, 0);
    char *privs[] = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                     "--", NULL};
    if (geteuid() == 0 && access("/usr/bin/setpriv", X_OK) != 0)
        ctt_skip("running as root without setpriv to drop privileges");
    char *const *pre = geteuid() == 0 ? privs : NULL;
    char *cmd[] = {(char *)fl_victim(victim), "steps", "3", NULL};
    if (fl_untraced_count(dir, pre, cmd, "Permission denied"))
        return 1;
    struct stat st;
    char any[4200];
    snprintf(any, sizeof any, "%s/.", dir);
    ASSERT_INT(stat(any, &st), ==, 0);
    ASSERT_UINT(st.st_nlink, ==, 2); /* still empty */
    /* cutrace run refuses it before running anything, for the directory and one under it */
    if (fl_run_refused(pre, dir, "Permission denied"))
        return 1;
    strcat(dir, "/sub");
    return fl_run_refused(pre, dir, "cannot be made");
}

/* A trace directory whose name is longer than PATH_MAX, or holds a name longer than NAME_MAX:
 * cutrace run refuses it; preloaded, the tracer does not write into a directory cut short. */
TEST_IMPL(output_path_too_long)
{
    static char dir[9000];
    char victim[4096];
    int n = snprintf(dir, sizeof dir, "%s", ctt_tmpdir());
    while (n < 5000)
        n += snprintf(dir + n, sizeof dir - (size_t)n, "/%s", "a-directory-name");
    if (fl_run_refused(NULL, dir, "characters long: expected at most"))
        return 1;
    char *cmd[] = {(char *)fl_victim(victim), "steps", "3", NULL};
    if (fl_untraced_count(dir, NULL, cmd, "longer than the"))
        return 1;
    snprintf(dir, sizeof dir, "%s/", ctt_tmpdir());
    size_t at = strlen(dir);
    memset(dir + at, 'n', 300);
    dir[at + 300] = 0;
    if (fl_run_refused(NULL, dir, "(NAME_MAX)"))
        return 1;
    return fl_untraced_count(dir, NULL, cmd, "File name too long");
}

/* The trace directory removed while the program runs (its files with it): the tracer makes it
 * again with what it had written, tells so, and the trace is whole. */
TEST_IMPL(trace_dir_removed)
{
    char dir[4096], victim[4096];
    snprintf(dir, sizeof dir, "%s/removed", ctt_tmpdir());
    char *cmd[] = {(char *)fl_victim(victim), "rmdir", "40", dir, NULL};
    ctt_proc plain, traced;
    char other[4096];
    snprintf(other, sizeof other, "%s/removed-plain", ctt_tmpdir());
    ASSERT_INT(mkdir(other, 0755), ==, 0);
    cmd[3] = other;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    cmd[3] = dir;
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    ASSERT_CONTAINS(traced.err, "was removed while the program ran");
    ASSERT_CONTAINS(traced.err, "nothing lost");
    ASSERT_CONTAINS(traced.err, "cutrace: 1 trace file in");
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    ASSERT_UINT(t.nfiles, ==, 1);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(t.stats[0].lost, ==, 0);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), ==, 40);
    const ct_rec *end = fl_end(&t, 0);
    ASSERT(end != NULL);
    ASSERT_UINT(end->u.end.how, ==, CT_END_EXIT);
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

/* The disk fills up after 16 KiB of trace (libenospc.so; with quota: the user's quota, EDQUOT;
 * whole: exactly where a write ended, so that no partial write is there to cut back): the
 * tracer's room for its last chunk is refused first, and that chunk says why the trace stops
 * there. The program is unaffected; what was written is readable. */
static int fl_disk_full(const char *name, int quota, int whole)
{
    char dir[4096], shim[4096], pre[4200], victim[4096];
    snprintf(dir, sizeof dir, "%s/%s", ctt_tmpdir(), name);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", ctt_path(shim, "tests/faults/libenospc.so"));
    /* 64 KiB: several of the trace's chunks (each thread's and the writer's, 1 to 11 KiB) fit
     * before the disk fills, whatever the machine's speed puts in each (at 16 KiB, a faster
     * simulation put the first sync records in the one chunk that did not fit) */
    char *env[] = {pre, "ENOSPC_AFTER=65536", whole ? "ENOSPC_WHOLE=1" : "ENOSPC_WHOLE=0",
                   quota ? "ENOSPC_QUOTA=1" : NULL, NULL};
    char *cmd[] = {(char *)fl_victim(victim), "steps", "3000", NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, env, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    ASSERT_CONTAINS(traced.err, quota ? "Disk quota exceeded" : "No space left on device");
    if (fl_stopped(dir, traced.err, quota ? CT_WRITE_QUOTA : CT_WRITE_NO_SPACE,
                   quota ? "the disk quota was reached (EDQUOT)"
                         : "the file system was full (ENOSPC)",
                   quota ? "quota" : "disk_full"))
        return 1;
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    struct stat st;
    ASSERT_INT(stat(t.paths[0], &st), ==, 0);
    ASSERT_INT(st.st_size, <=, 65536);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), <, 3000);
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

TEST_IMPL(disk_full_enospc)
{
    return fl_disk_full("full", 0, 0);
}

TEST_IMPL(disk_quota_edquot)
{
    return fl_disk_full("quota", 1, 0);
}

/* The disk full exactly where a chunk ended: only the room the writer keeps past the file's end
 * (ct_writer_opts.reserve) holds the LOSS and END that say so; without it the trace would end
 * with no END, read as killed. */
TEST_IMPL(disk_full_at_chunk_boundary)
{
    return fl_disk_full("boundary", 0, 1);
}

/* A real full file system: a 64 KiB tmpfs mounted in a private mount namespace (needs root and
 * unshare; skipped otherwise, libenospc.so covers the same path everywhere). The trace is
 * copied out of it before the namespace goes. */
TEST_IMPL(disk_full_tmpfs)
{
    char mnt[4096], victim[4096], cutrace[4096], fake[4096], script[32768], llp[4200], out[4096];
    snprintf(mnt, sizeof mnt, "%s/small", ctt_tmpdir());
    snprintf(out, sizeof out, "%s/copied", ctt_tmpdir());
    ASSERT_INT(mkdir(mnt, 0755), ==, 0);
    char *probe[] = {"unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k none \"$0\"", mnt, NULL};
    ctt_proc p;
    ASSERT_INT(ctt_run(&p, probe, NULL, 10), ==, 0);
    if (!p.exited || p.code != 0)
        ctt_skip("cannot mount a tmpfs in a private mount namespace (needs root)");
    ctt_proc_free(&p);
    char *cmd[] = {(char *)fl_victim(victim), "steps", "2000", NULL};
    ctt_proc plain;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    /* Fill all but ~20 KiB with a file of somebody else's, then trace into the rest. */
    snprintf(script, sizeof script,
             "mount -t tmpfs -o size=64k none '%s' && "
             "head -c 45000 /dev/zero > '%s/other' && "
             "'%s' run -o '%s/traces' -- '%s' steps 2000; rc=$?; cp -r '%s/traces' '%s'; exit $rc",
             mnt, mnt, ctt_path(cutrace, "bin/cutrace"), mnt, victim, mnt, out);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *env[] = {llp, NULL};
    char *argv[] = {"unshare", "-m", "sh", "-c", script, NULL};
    ASSERT_INT(ctt_run(&p, argv, env, 60), ==, 0);
    FL_ASSERT_SAME(p, plain);
    ASSERT_CONTAINS(p.err, "No space left on device");
    if (fl_stopped(out, p.err, CT_WRITE_NO_SPACE, "the file system was full (ENOSPC)",
                   "disk_full"))
        return 1;
    ctt_proc_free(&p);
    ctt_proc_free(&plain);
    return 0;
}

TEST_IMPL(program_changes_directory)
{
    char victim[4096], cutrace[4096], fake[4096], script[20000], llp[4200], dir[4096];
    snprintf(dir, sizeof dir, "%s/elsewhere", ctt_tmpdir());
    ASSERT_INT(mkdir(dir, 0755), ==, 0);
    char *cmd[] = {(char *)fl_victim(victim), "chdir", "3", dir, NULL};
    ctt_proc plain, p;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    /* A relative output directory means relative to where cutrace run started. */
    snprintf(script, sizeof script, "cd '%s' && exec '%s' run -q -o traces -- '%s' chdir 3 '%s'",
             ctt_tmpdir(), ctt_path(cutrace, "bin/cutrace"), victim, dir);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *env[] = {llp, NULL};
    char *argv[] = {"sh", "-c", script, NULL};
    ASSERT_INT(ctt_run(&p, argv, env, 60), ==, 0);
    FL_ASSERT_SAME(p, plain);
    char traces[4200];
    snprintf(traces, sizeof traces, "%s/traces", ctt_tmpdir());
    tr_trace t;
    ASSERT_INT(tr_load(&t, traces), ==, 0);
    ASSERT_INT(t.stats[0].complete, ==, 1);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), ==, 3);
    tr_free(&t);
    ctt_proc_free(&p);
    ctt_proc_free(&plain);
    return 0;
}

/* setrlimit(RLIMIT_FSIZE) below the trace's size: the tracer's writes fail (EFBIG), never with
 * a SIGXFSZ that would kill the program. */
TEST_IMPL(program_limits_file_size)
{
    char dir[4096], victim[4096];
    snprintf(dir, sizeof dir, "%s/fsize", ctt_tmpdir());
    char *cmd[] = {(char *)fl_victim(victim), "fsize", "3000", "65536", NULL}; /* as above */
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    struct stat st;
    ASSERT_INT(stat(t.paths[0], &st), ==, 0);
    ASSERT_INT(st.st_size, <=, 65536);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), <, 3000);
    tr_free(&t);
    if (fl_stopped(dir, traced.err, CT_WRITE_FILE_LIMIT,
                   "the file reached the process's file size limit (RLIMIT_FSIZE)",
                   "file_size_limit"))
        return 1;
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}
