/* No hand-written file outside tests/ over 800 lines (issue 27), by linecheck.py on the
 * project's files; and a planted tree in which it must find the long ones, walked as a copy of
 * the sources and then as a git checkout. What counts as hand-written, and why, is said in
 * linecheck.py. */
#include <stdlib.h>

#include "st.h"

TEST_IMPL(lines_none_over_800_outside_tests)
{
    ctt_proc p;
    ASSERT_INT(st_tool(&p, "linecheck.py", (char *[]){ST_ROOT, NULL}), ==, 0);
    ST_ASSERT_EXIT(p, 0);
    ctt_proc_free(&p);
    return 0;
}

/* n lines of text ("x\n" each), malloc'd. */
static char *lines_of(size_t n)
{
    char *s = malloc(2 * n + 1);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        memcpy(s + 2 * i, "x\n", 2);
    s[2 * n] = 0;
    return s;
}

/* linecheck.py on root: exit 1, naming the two long files among the four it counts. */
static int finds_long_files(const char *root, const char *how)
{
    ctt_proc p;
    ASSERT_INT(st_tool(&p, "linecheck.py", (char *[]){(char *)root, NULL}), ==, 0);
    ST_ASSERT_EXIT(p, 1);
    ASSERT_CONTAINS(p.err, "linecheck: a/long.c: 801 lines, expected at most 800\n");
    ASSERT_CONTAINS(p.err, "linecheck: docs.md: 801 lines, expected at most 800\n");
    ASSERT_CONTAINS(p.err, "2 of 4 hand-written files are over 800 lines");
    ASSERT_CONTAINS(p.err, how);
    ctt_proc_free(&p);
    return 0;
}

/* Counted: a/long.c (801 lines), docs.md (801), a/ok.c (800, the limit), .gitignore. Not: a
 * long test, a long data listing, a long binary, and a long file in the ignored build/. */
TEST_IMPL(lines_planted_long_file_is_found)
{
    char *l800 = lines_of(800), *l801 = lines_of(801), *l900 = lines_of(900);
    ASSERT(l800 && l801 && l900);
    const st_file files[] = {
        {"a/long.c", l801}, {"a/ok.c", l800}, {"docs.md", l801}, {"tests/huge.c", l900},
        {"data/points.json", l900}, {"build/gen.c", l900}, {".gitignore", "/build/\n"},
    };
    char root[4096], png[4200];
    snprintf(root, sizeof root, "%s/proj", ctt_tmpdir());
    ASSERT_INT(st_plant(root, files, sizeof files / sizeof files[0]), ==, 0);
    /* The binary, with its NUL byte, written apart (st_plant writes C strings). */
    snprintf(png, sizeof png, "%s/a/shot.png", root);
    FILE *f = fopen(png, "wb");
    ASSERT(f);
    ASSERT_INT(fwrite("\x89PNG\0", 1, 5, f), ==, 5);
    ASSERT_INT(fputs(l900, f), >=, 0);
    ASSERT_INT(fclose(f), ==, 0);
    free(l800), free(l801), free(l900);

    if (finds_long_files(root, "(files under it (no git checkout))"))
        return 1;

    ctt_proc p;
    ASSERT_INT(ctt_run(&p, (char *[]){"git", "-C", root, "init", "-q", NULL}, NULL, 60), ==, 0);
    int have_git = p.exited && p.code == 0;
    ctt_proc_free(&p);
    if (!have_git) {
        printf("git init failed: the walk alone was checked\n");
        return 0;
    }
    return finds_long_files(root, "(files git tracks or does not ignore)");
}
