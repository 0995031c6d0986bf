/* Files and names: trace files are created safely in shared directories (never through a
 * symlink, never over an existing file, never writable by others), and names holding quotes,
 * control characters or invalid UTF-8 come out escaped in every text and JSON output. */
#define _GNU_SOURCE
#include "rb.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tjson.h"

/* The file name libcutrace gives the trace of process pid (and its -N variants). */
static void rb_trace_name(char *buf, size_t cap, const char *dir, pid_t pid, int variant)
{
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    for (char *h = host; *h; h++)
        if (*h == '/' || *h == '.')
            *h = '_';
    if (variant)
        snprintf(buf, cap, "%s/%s-%d-%d.cutrace", dir, host, (int)pid, variant);
    else
        snprintf(buf, cap, "%s/%s-%d.cutrace", dir, host, (int)pid);
}

/* Runs vram_peak with libcutrace preloaded directly (so its pid, and so its trace name, is
 * known), umask 0, output in dir (NULL: untraced); before exec, an attacker's symlink takes the trace's first
 * name and somebody's file the second. stdout into out (malloc'd). Exit status or -1. */
static int rb_run_planted(const char *dir, const char *victim, char **out, pid_t *pidp)
{
    char prog[4096], lib[4096], fake[4096], outfile[4096];
    ctt_path(prog, "tests/workloads/vram_peak");
    ctt_path(lib, "lib/libcutrace.so");
    ctt_path(fake, "tests/fakecuda");
    snprintf(outfile, sizeof outfile, "%s/stdout", ctt_tmpdir());
    pid_t pid = fork();
    if (pid == 0) {
        char name[4096];
        if (victim) {
            rb_trace_name(name, sizeof name, dir, getpid(), 0);
            if (symlink(victim, name) != 0)
                _exit(120);
            rb_trace_name(name, sizeof name, dir, getpid(), 1);
            if (rb_spit(name, "somebody's file\n", 16) != 0)
                _exit(121);
        }
        umask(0);
        int fd = open(outfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        if (setenv("LD_LIBRARY_PATH", fake, 1) ||
            (dir && (setenv("LD_PRELOAD", lib, 1) || setenv("CUTRACE_OUTPUT", dir, 1))))
            _exit(122);
        execl(prog, prog, (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    *pidp = pid;
    *out = ctt_read_file(outfile, NULL);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST_IMPL(trace_file_safe_in_shared_dir)
{
    char dir[4096], victim[4096], name[4096];
    snprintf(dir, sizeof dir, "%s/shared", ctt_tmpdir());
    ASSERT_INT(mkdir(dir, 0777), ==, 0);
    ASSERT_INT(chmod(dir, 01777), ==, 0); /* like /tmp: anybody may create files here */
    snprintf(victim, sizeof victim, "%s/victim", ctt_tmpdir());
    ASSERT_INT(rb_spit(victim, "precious\n", 9), ==, 0);

    /* What the program prints untraced. */
    char *plain, *traced;
    pid_t pid;
    int rc0 = rb_run_planted(NULL, NULL, &plain, &pid);
    ASSERT_INT(rc0, ==, 0);
    int rc = rb_run_planted(dir, victim, &traced, &pid);
    ASSERT_INT(rc, ==, rc0);
    ASSERT_STR(traced, plain);

    /* The symlink was not followed and somebody's file not overwritten. */
    size_t len;
    char *v = ctt_read_file(victim, &len);
    ASSERT_STR(v, "precious\n");
    free(v);
    struct stat st;
    rb_trace_name(name, sizeof name, dir, pid, 0);
    ASSERT_INT(lstat(name, &st), ==, 0);
    ASSERT(S_ISLNK(st.st_mode));
    rb_trace_name(name, sizeof name, dir, pid, 1);
    v = ctt_read_file(name, &len);
    ASSERT_STR(v, "somebody's file\n");
    free(v);
    /* The trace took the next free name, is ours, a regular file, and not writable by others
     * even under umask 0. */
    rb_trace_name(name, sizeof name, dir, pid, 2);
    ASSERT_INT(lstat(name, &st), ==, 0);
    ASSERT(S_ISREG(st.st_mode));
    ASSERT_UINT(st.st_uid, ==, getuid());
    ASSERT_UINT(st.st_mode & 0022, ==, 0);
    ct_stats cs;
    ASSERT_INT(rb_read(name, CT_REC_MEM, &cs, NULL, 0), ==, 13); /* 7 cudaMalloc, 6 cudaFree */
    ASSERT_INT(cs.complete, ==, 1);

    /* A directory the tracer creates is not writable by others either. */
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/new/deeper", ctt_tmpdir());
    free(traced);
    ASSERT_INT(rb_run_planted(sub, NULL, &traced, &pid), ==, rc0);
    ASSERT_STR(traced, plain);
    rb_trace_name(name, sizeof name, sub, pid, 0);
    ASSERT_INT(stat(name, &st), ==, 0);
    ASSERT_UINT(st.st_mode & 0022, ==, 0);
    for (int up = 0; up < 2; up++) {
        ASSERT_INT(stat(sub, &st), ==, 0);
        ASSERT_UINT(st.st_mode & 0022, ==, 0);
        *strrchr(sub, '/') = 0;
    }
    ASSERT_UINT(st.st_mode & 0022, ==, 0);
    free(plain);
    free(traced);
    return 0;
}

/* No byte of out is a control character other than a newline (or a tab, if tabs are allowed),
 * and out is valid UTF-8 (ascii: only ASCII at all). Returns the offset of the first bad byte,
 * or -1. */
static long rb_bad_byte(const char *out, int ascii)
{
    const unsigned char *s = (const unsigned char *)out;
    for (size_t i = 0; s[i]; i++) {
        unsigned c = s[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f || (ascii && c >= 0x80))
            return (long)i;
        if (c >= 0x80) {
            int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : -1;
            if (n < 0 || c > 0xf4)
                return (long)i;
            for (int k = 1; k <= n; k++)
                if ((s[i + k] & 0xc0) != 0x80)
                    return (long)i;
            i += (size_t)n;
        }
    }
    return -1;
}

#define RB_CLEAN(out, ascii) \
    do { \
        long at_ = rb_bad_byte(out, ascii); \
        if (at_ >= 0) { \
            ctt_fail_at(__FILE__, __LINE__, "unescaped byte 0x%02x at %ld in:\n%.300s", \
                            (unsigned char)(out)[at_], at_, (out) + (at_ > 100 ? at_ - 100 : 0)); \
            return 1; \
        } \
    } while (0)

/* A trace whose header, file name, kernel, thread and API names hold quotes, backslashes,
 * control characters (newline, escape sequences), invalid UTF-8 and printf directives. */
TEST_IMPL(names_escaped_in_every_output)
{
    static const char *const names[] = {
        "k\"quoted\"<float>", "ctrl\x01\x1b[31mred\x1b[0m\nnewline", "bad\xff\xfe utf8 \xc3\x28",
        "back\\slash\\", "%s%n%p%x", "tab\there\rcr",
    };
    const size_t nn = sizeof names / sizeof names[0];
    char path[4096];
    snprintf(path, sizeof path, "%s/we\"ird\nname\x01%%s\xff.cutrace", ctt_tmpdir());
    static const char cmdline[] = "prog\0--name=\"x\"\n\0\x1b[2J\0";
    const char *env[] = {"RANK=1\n\"x\"\x7f"};
    ct_header h = {.hostname = "host\"\n\x01\xff", .pid = 42, .cmdline = cmdline,
                   .cmdline_len = sizeof cmdline - 1, .exe = "/bin/\"evil\"\tname\xc3\x28",
                   .boot_id = "", .realtime_ns = 1, .monotonic_ns = 1,
                   .tracer_version = "v\n1", .tracer_options = "\x1b]0;title\x07", .nenv = 1,
                   .env = env};
    rb_trace t;
    memset(&t, 0, sizeof t);
    t.buf = malloc(1 << 20);
    ASSERT_INT(ct_writer_open(&t.w, path, &h, NULL), ==, 0);
    ct_enc_init(&t.e, t.buf, 1 << 20);
    t.tid = 7;
    ASSERT_INT(ct_enc_string(&t.e, 1, 1, "cudaLaunchKernel", 16), ==, 0);
    for (uint32_t i = 0; i < nn; i++)
        ASSERT_INT(ct_enc_string(&t.e, 1, 10 + i, names[i], strlen(names[i])), ==, 0);
    ct_rec_thread th = {7, 10 + 1, 0};
    ASSERT_INT(ct_enc_thread(&t.e, 2, &th), ==, 0);
    for (uint32_t i = 0; i < 3 * nn; i++) {
        uint64_t ts = 1000000 + i * 100000, corr = i + 1;
        ct_rec_api a = {.start = ts - 2000, .function = i % nn == 4 ? 14 : 1, .corr = corr};
        ct_rec_launch l = {.corr = corr, .function = 10 + i % nn, .symbol = 10 + (i + 1) % nn,
                           .grid = {1, 1, 1}, .block = {64, 1, 1}, .stream = 5};
        ct_rec_gpu g = {.start = ts + 1000, .corr = corr, .kind = CT_GPU_KERNEL, .stream = 5};
        ASSERT_INT(ct_enc_launch(&t.e, ts, &l), ==, 0);
        ASSERT_INT(ct_enc_api(&t.e, ts, &a), ==, 0);
        ASSERT_INT(ct_enc_gpu(&t.e, ts + 30000, &g), ==, 0);
    }
    ASSERT_INT(rb_close(&t, 9000000), ==, 0);

    ctt_proc p;
    /* dump: one line per record (no raw newline inside one), ASCII only, C escapes. */
    char *dump[] = {"dump", path, NULL};
    if (rb_cutrace(&p, 1, dump, 0, NULL))
        return 1;
    RB_CLEAN(p.out, 1);
    for (const char *l = p.out; *l; l = strchr(l, '\n') + 1) {
        ASSERT(strncmp(l, "header ", 7) == 0 || strncmp(l, "chunk ", 6) == 0 ||
               (*l >= '0' && *l <= '9'));
        ASSERT(strchr(l, '\n') != NULL);
    }
    ASSERT_CONTAINS(p.out, "kernel=\"k\\\"quoted\\\"<float>\"");
    ASSERT_CONTAINS(p.out, "\"ctrl\\x01\\x1b[31mred\\x1b[0m\\x0anewline\"");
    ASSERT_CONTAINS(p.out, "\"bad\\xff\\xfe utf8 \\xc3(\"");
    ASSERT_CONTAINS(p.out, "\"back\\\\slash\\\\\"");
    ASSERT_CONTAINS(p.out, "\"%s%n%p%x\"");
    ASSERT_CONTAINS(p.out, "path=\"");
    ASSERT_CONTAINS(p.out, "we\\\"ird\\x0aname\\x01%s\\xff.cutrace\"");
    ASSERT_CONTAINS(p.out, "host=\"host\\\"\\x0a\\x01\\xff\"");
    ASSERT_CONTAINS(p.out, "cmdline=\"prog\" \"--name=\\\"x\\\"\\x0a\" \"\\x1b[2J\"");
    ASSERT_CONTAINS(p.out, "header env \"RANK=1\\x0a\\\"x\\\"\\x7f\"");
    ctt_proc_free(&p);

    /* summary as text: no control character reaches the terminal, valid UTF-8. */
    char *sum[] = {"summary", "--top", "0", path, NULL};
    if (rb_cutrace(&p, 1, sum, 0, NULL))
        return 1;
    RB_CLEAN(p.out, 0);
    RB_CLEAN(p.err, 0);
    ASSERT_CONTAINS(p.out, "k\"quoted\"<float>");
    ASSERT_CONTAINS(p.out, "%s%n%p%x");
    ctt_proc_free(&p);

    /* summary --json and the timeline: valid JSON whose strings decode to the names (invalid
     * UTF-8 replaced by U+FFFD). */
    char *js[] = {"summary", "--json", path, NULL};
    if (rb_cutrace(&p, 1, js, 0, NULL))
        return 1;
    char err[256];
    tj *j = tj_parse(p.out, err, sizeof err);
    if (!j) {
        ctt_fail_at(__FILE__, __LINE__, "summary --json: %s", err);
        return 1;
    }
    for (size_t i = 0; i < nn; i++)
        if (i != 2)
            ASSERT(tj_find(tj_get(j, "kernels"), "name", names[i]) != NULL);
    ASSERT(tj_find(tj_get(j, "kernels"), "name", "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd(") != NULL);
    ASSERT_CONTAINS(tj_str(j, "processes.0.file"), "/we\"ird\nname\x01%s\xef\xbf\xbd.cutrace");
    ASSERT_CONTAINS(tj_str(j, "processes.0.host"), "host\"\n\x01");
    ASSERT_CONTAINS(tj_str(j, "processes.0.command"), "--name=\"x\"\n");
    tj_free(j);
    ctt_proc_free(&p);
    char tl[4096];
    snprintf(tl, sizeof tl, "%s/timeline.json", ctt_tmpdir());
    char *tla[] = {"timeline", "-o", tl, path, NULL};
    if (rb_cutrace(&p, 1, tla, 0, NULL))
        return 1;
    ctt_proc_free(&p);
    char *text = ctt_read_file(tl, NULL);
    ASSERT(text != NULL);
    j = tj_parse(text, err, sizeof err);
    if (!j) {
        ctt_fail_at(__FILE__, __LINE__, "timeline: %s", err);
        return 1;
    }
    ASSERT_CONTAINS(text, "k\\\"quoted\\\"<float>");
    ASSERT_CONTAINS(text, "ctrl\\u0001\\u001b[31mred\\u001b[0m\\u000anewline");
    tj_free(j);
    free(text);
    return 0;
}
