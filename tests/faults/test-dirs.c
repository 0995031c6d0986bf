/* Where the trace goes and what stops it being written: a missing directory (created), one the
 * program may not write (untraced, one warning), a full disk (tracing stops, the program goes
 * on), a program that changes directory or limits its file sizes. The program's output and end
 * are those of an untraced run. */
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

/* A directory the program's user may not write: as root (who may write anywhere) the program
 * runs as nobody through setpriv. */
TEST_IMPL(trace_dir_not_writable)
{
    char dir[4096], victim[4096], cutrace[4096], fake[4096], llp[4200];
    snprintf(dir, sizeof dir, "%s/readonly", ctt_tmpdir());
    ASSERT_INT(mkdir(dir, 0555), ==, 0);
    ASSERT_INT(chmod(ctt_tmpdir(), 0755), ==, 0);
    char *cmd[] = {(char *)fl_victim(victim), "steps", "3", NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    char *argv[16];
    size_t n = 0;
    if (geteuid() == 0) {
        if (access("/usr/bin/setpriv", X_OK) != 0)
            ctt_skip("running as root without setpriv to drop privileges");
        argv[n++] = "/usr/bin/setpriv";
        argv[n++] = "--reuid=65534";
        argv[n++] = "--regid=65534";
        argv[n++] = "--clear-groups";
        argv[n++] = "--";
    }
    argv[n++] = (char *)ctt_path(cutrace, "bin/cutrace");
    argv[n++] = "run";
    argv[n++] = "-o";
    argv[n++] = dir;
    argv[n++] = "--";
    argv[n++] = victim;
    argv[n++] = "steps";
    argv[n++] = "3";
    argv[n] = NULL;
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *env[] = {llp, NULL};
    ASSERT_INT(ctt_run(&traced, argv, env, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    ASSERT_CONTAINS(traced.err, "cutrace: warning: cannot create a trace file in");
    ASSERT_CONTAINS(traced.err, "runs untraced");
    struct stat st;
    char any[4200];
    snprintf(any, sizeof any, "%s/.", dir);
    ASSERT_INT(stat(any, &st), ==, 0);
    ASSERT_UINT(st.st_nlink, ==, 2); /* still empty */
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

/* The disk fills up after 4 KiB of trace (libenospc.so): a write is cut short, the next fails
 * with ENOSPC. The tracer warns once and stops; the program is unaffected; what was written is
 * readable. */
TEST_IMPL(disk_full_enospc)
{
    char dir[4096], shim[4096], pre[4200], victim[4096];
    snprintf(dir, sizeof dir, "%s/full", ctt_tmpdir());
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", ctt_path(shim, "tests/faults/libenospc.so"));
    char *env[] = {pre, "ENOSPC_AFTER=4096", NULL};
    char *cmd[] = {(char *)fl_victim(victim), "steps", "300", NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, env, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    const char *w = strstr(traced.err, "cutrace: warning: writing");
    ASSERT(w != NULL);
    ASSERT_CONTAINS(w, "No space left on device");
    ASSERT(strstr(w + 1, "cutrace: warning: writing") == NULL); /* once */
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    struct stat st;
    ASSERT_INT(stat(t.paths[0], &st), ==, 0);
    ASSERT_INT(st.st_size, <=, 4096);
    ASSERT_INT(t.stats[0].complete, ==, 0);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), <, 300);
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}

/* A real full file system: a 64 KiB tmpfs mounted in a private mount namespace (needs root and
 * unshare; skipped otherwise, libenospc.so covers the same path everywhere). */
TEST_IMPL(disk_full_tmpfs)
{
    char mnt[4096], victim[4096], cutrace[4096], fake[4096], script[20000], llp[4200];
    snprintf(mnt, sizeof mnt, "%s/small", ctt_tmpdir());
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
             "exec '%s' run -o '%s/traces' -- '%s' steps 2000",
             mnt, mnt, ctt_path(cutrace, "bin/cutrace"), mnt, victim);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    char *env[] = {llp, NULL};
    char *argv[] = {"unshare", "-m", "sh", "-c", script, NULL};
    ASSERT_INT(ctt_run(&p, argv, env, 60), ==, 0);
    FL_ASSERT_SAME(p, plain);
    ASSERT_CONTAINS(p.err, "No space left on device");
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
    char *cmd[] = {(char *)fl_victim(victim), "fsize", "3000", "16384", NULL};
    ctt_proc plain, traced;
    ASSERT_INT(fl_plain(&plain, cmd, NULL, 60), ==, 0);
    ASSERT_INT(tr_run(&traced, dir, NULL, cmd, NULL, 60), ==, 0);
    FL_ASSERT_SAME(traced, plain);
    tr_trace t;
    ASSERT_INT(tr_load(&t, dir), ==, 0);
    struct stat st;
    ASSERT_INT(stat(t.paths[0], &st), ==, 0);
    ASSERT_INT(st.st_size, <=, 16384);
    ASSERT_UINT(fl_count(&t, 0, "cudaStreamSynchronize"), <, 3000);
    tr_free(&t);
    ctt_proc_free(&plain);
    ctt_proc_free(&traced);
    return 0;
}
