/* Exit codes: 0 success, 2 usage error, 3 unreadable input; damaged input warns and is analyzed. */
#include "an_helpers.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int code_of(const char *args, const char *path, char **err)
{
    ctt_proc p;
    if (an_run(&p, args, path) != 0)
        return -1;
    int c = p.exited ? p.code : 128 + p.code;
    if (err)
        *err = strdup(p.err);
    ctt_proc_free(&p);
    return c;
}

TEST_IMPL(cli_exit_codes)
{
    char dir[4096], bad[4200], *err = NULL;
    ASSERT(an_gen(dir, "t", "--iters 3"));
    ASSERT_INT(code_of("summary {}", dir, NULL), ==, 0);
    ASSERT_INT(code_of("summary", dir, NULL), ==, 2);
    ASSERT_INT(code_of("summary --bogus {}", dir, NULL), ==, 2);
    ASSERT_INT(code_of("summary --min-saving x {}", dir, NULL), ==, 2);
    ASSERT_INT(code_of("timeline {}", dir, NULL), ==, 2); /* no -o */
    ASSERT_INT(code_of("summary {}", "/nonexistent/trace", &err), ==, 3);
    ASSERT_CONTAINS(err, "/nonexistent/trace");
    free(err);
    /* a file that is not a trace */
    snprintf(bad, sizeof bad, "%s/not-a-trace", ctt_tmpdir());
    FILE *f = fopen(bad, "w");
    ASSERT(f);
    fputs("hello, world\n", f);
    fclose(f);
    ASSERT_INT(code_of("summary {}", bad, &err), ==, 3);
    ASSERT_CONTAINS(err, "not-a-trace");
    free(err);
    char out[4200], args[4300];
    snprintf(out, sizeof out, "%s/tl.json", ctt_tmpdir());
    snprintf(args, sizeof args, "timeline {} -o %s", out);
    ASSERT_INT(code_of(args, bad, NULL), ==, 3);
    ASSERT(access(out, F_OK) != 0); /* nothing created for unreadable input */
    /* an empty directory */
    snprintf(bad, sizeof bad, "%s/empty", ctt_tmpdir());
    ASSERT_INT(mkdir(bad, 0755), ==, 0);
    ASSERT_INT(code_of("summary {}", bad, &err), ==, 3);
    ASSERT_CONTAINS(err, "no cutrace trace files");
    free(err);
    return 0;
}

TEST_IMPL(cli_damaged_trace_is_analyzed)
{
    char dir[4096], path[4200], *err = NULL;
    ASSERT(an_gen(dir, "t", "--iters 40"));
    snprintf(path, sizeof path, "%s/rank-0.cutrace", dir);
    struct stat st;
    ASSERT_INT(stat(path, &st), ==, 0);
    /* cut the file in its last chunk, as a killed writer leaves it */
    ASSERT_INT(truncate(path, st.st_size - 50), ==, 0);
    ASSERT_INT(code_of("summary {}", path, &err), ==, 0);
    ASSERT_CONTAINS(err, "warning");
    free(err);
    tj *s = an_summary(path, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.complete"), ==, 0);
    ASSERT(tj_num(s, "processes.0.torn_tail_bytes") > 0);
    ASSERT(tj_len(s, "kernels") > 0);
    tj_free(s);
    return 0;
}
