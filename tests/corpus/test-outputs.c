/* Each command on every trace directory of tests/corpus/traces/ against the file update.sh wrote
 * in tests/corpus/expected/, run from the top directory with the same relative paths (dump
 * prints them). A difference names the trace, the command and the first line that differs. */
#define _GNU_SOURCE
#include "ctt.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* The first line where got and want differ, for the message. */
static size_t first_diff_line(const char *got, const char *want)
{
    size_t line = 1;
    for (; *got && *got == *want; got++, want++)
        line += *got == '\n';
    return line;
}

/* Runs `cutrace ARGS... DIR` (timeline: `-o -` after DIR) on every corpus trace directory and
 * compares its stdout with expected/NAME.SUFFIX. */
static int corpus_check(const char *cmd, const char *flag, const char *suffix)
{
    ASSERT_INT(chdir(CORPUS_ROOT), ==, 0);
    struct dirent **ents;
    int n = scandir("tests/corpus/traces", &ents, NULL, by_name);
    ASSERT_INT(n, >, 2);
    int checked = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        if (name[0] == '.')
            continue;
        char dir[512], want_path[512], cutrace[4096];
        snprintf(dir, sizeof dir, "tests/corpus/traces/%s/", name);
        snprintf(want_path, sizeof want_path, "tests/corpus/expected/%s.%s", name, suffix);
        char *argv[8];
        int k = 0;
        argv[k++] = (char *)ctt_path(cutrace, "bin/cutrace");
        argv[k++] = (char *)cmd;
        if (flag)
            argv[k++] = (char *)flag;
        argv[k++] = dir;
        if (!strcmp(cmd, "timeline")) {
            argv[k++] = "-o";
            argv[k++] = "-";
        }
        argv[k] = NULL;
        ctt_proc p;
        ASSERT_INT(ctt_run(&p, argv, NULL, 60), ==, 0);
        ASSERT_INT(p.exited, ==, 1);
        ASSERT_INT(p.code, ==, 0);
        size_t want_len;
        char *want = ctt_read_file(want_path, &want_len);
        ASSERT(want != NULL);
        if (want_len != p.out_len || memcmp(want, p.out, want_len)) {
            printf("%s: cutrace %s%s%s differs from %s from line %zu on (%zu bytes, expected "
                   "%zu)\n", name, cmd, flag ? " " : "", flag ? flag : "", want_path,
                   first_diff_line(p.out, want), p.out_len, want_len);
            failed++;
        }
        checked++;
        free(want);
        ctt_proc_free(&p);
        free(ents[i]);
    }
    free(ents);
    ASSERT_INT(checked, >=, 8);
    ASSERT_INT(failed, ==, 0);
    return 0;
}

TEST_IMPL(corpus_summary_text)
{
    return corpus_check("summary", NULL, "summary.txt");
}

TEST_IMPL(corpus_summary_json)
{
    return corpus_check("summary", "--json", "summary.json");
}

TEST_IMPL(corpus_timeline)
{
    return corpus_check("timeline", NULL, "timeline.json");
}

TEST_IMPL(corpus_dump)
{
    return corpus_check("dump", NULL, "dump.txt");
}
