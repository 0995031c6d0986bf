/* No dependency cycle between the modules or the folders of preload/, trace-format/ and
 * analyzer/ (issue 27), by depcheck.py on their sources and the build's objects; and planted
 * trees in which it must find one, so that it can fail. */
#include "st.h"

/* depcheck.py on ST_ROOT/tree and CT_BUILD/tree: exit 0, "no cycle". */
static int no_cycle(const char *tree)
{
    char src[4096], obj[4096];
    snprintf(src, sizeof src, "%s/%s", ST_ROOT, tree);
    ctt_path(obj, tree);
    ctt_proc p;
    ASSERT_INT(st_tool(&p, "depcheck.py", (char *[]){src, obj, NULL}), ==, 0);
    ST_ASSERT_EXIT(p, 0);
    ASSERT_CONTAINS(p.out, "no cycle");
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(cycles_none_in_preload)
{
    return no_cycle("preload");
}

TEST_IMPL(cycles_none_in_trace_format)
{
    return no_cycle("trace-format");
}

TEST_IMPL(cycles_none_in_analyzer)
{
    return no_cycle("analyzer");
}

/* Plants files in TMP/src, compiles their objects into TMP/obj and runs depcheck.py on them;
 * p holds what it did. */
static int planted(ctt_proc *p, const st_file *files, size_t n)
{
    char src[4096], obj[4096];
    snprintf(src, sizeof src, "%s/src", ctt_tmpdir());
    snprintf(obj, sizeof obj, "%s/obj", ctt_tmpdir());
    ASSERT_INT(st_plant(src, files, n), ==, 0);
    ASSERT_INT(st_compile(src, obj, files, n), ==, 0);
    ASSERT_INT(st_tool(p, "depcheck.py", (char *[]){src, obj, NULL}), ==, 0);
    return 0;
}

/* Both kinds of module cycle, inside a subfolder: one through includes alone (b.h includes
 * a.h), one through symbols alone (p calls q's function, q reads p's extern global). The top
 * folder only uses the subfolder, so no folder cycle. */
TEST_IMPL(cycles_planted_in_a_subfolder_are_found)
{
    static const st_file files[] = {
        {"top.c", "#include \"sub/a.h\"\nint top_x;\n"},
        {"sub/a.h", "#pragma once\n#include \"b.h\"\n"},
        {"sub/a.c", "#include \"a.h\"\nint a_x;\n"},
        {"sub/b.h", "#pragma once\n#include \"a.h\"\n"},
        {"sub/b.c", "int b_x;\n"},
        {"sub/p.c", "int q_fn(void);\nint p_var = 1;\nint p_fn(void) { return q_fn(); }\n"},
        {"sub/q.c", "extern int p_var;\nint q_fn(void) { return p_var; }\n"},
    };
    ctt_proc p;
    if (planted(&p, files, sizeof files / sizeof files[0]))
        return 1;
    ST_ASSERT_EXIT(p, 1);
    ASSERT_CONTAINS(p.err, "cycle between modules: sub/a -> sub/b -> sub/a\n");
    ASSERT_CONTAINS(p.err, "  sub/b -> sub/a: sub/b.h includes a.h\n");
    ASSERT_CONTAINS(p.err, "cycle between modules: sub/p -> sub/q -> sub/p\n");
    ASSERT_CONTAINS(p.err, "  sub/q -> sub/p: sub/q.o uses p_var (sub/p.o)\n");
    ASSERT_CONTAINS(p.err, "2 cycles between modules, 0 between folders");
    ctt_proc_free(&p);
    return 0;
}

/* Folders lib/x and lib/y use each other though no two modules do: x/a includes y's b.h (by its
 * path from the tree's top, a -I folder: nothing by that path beside a.c), y/c calls x/a's
 * function. */
TEST_IMPL(cycles_planted_between_folders_are_found)
{
    static const st_file files[] = {
        {"main.c", "#include \"lib/x/a.h\"\nint main(void) { return a_fn(); }\n"},
        {"lib/x/a.h", "#pragma once\nint a_fn(void);\n"},
        {"lib/x/a.c", "#include \"a.h\"\n#include \"lib/y/b.h\"\nint a_fn(void) { return B_ZERO; }\n"},
        {"lib/y/b.h", "#pragma once\n#define B_ZERO 0\n"},
        {"lib/y/b.c", "#include \"b.h\"\nint b_x = B_ZERO;\n"},
        {"lib/y/c.c", "int a_fn(void);\nint c_fn(void) { return a_fn(); }\n"},
    };
    ctt_proc p;
    if (planted(&p, files, sizeof files / sizeof files[0]))
        return 1;
    ST_ASSERT_EXIT(p, 1);
    ASSERT_CONTAINS(p.err, "cycle between folders: src/lib/x/ -> src/lib/y/ -> src/lib/x/\n");
    ASSERT_CONTAINS(p.err, "  src/lib/x/ -> src/lib/y/: lib/x/a -> lib/y/b: lib/x/a.c includes lib/y/b.h\n");
    ASSERT_CONTAINS(p.err, "  src/lib/y/ -> src/lib/x/: lib/y/c -> lib/x/a: lib/y/c.o uses a_fn (lib/x/a.o)\n");
    ASSERT_CONTAINS(p.err, "0 cycles between modules, 1 between folders");
    ctt_proc_free(&p);
    return 0;
}

/* r.c and r2.c share r's internal header r_int.h (which includes r.h), and r calls r2: one way,
 * no cycle. When r2 calls r back, they call each other both ways: a cycle. An include that two
 * files of the tree could answer is bad input. */
TEST_IMPL(cycles_internal_header_may_be_shared)
{
    static const st_file files[] = {
        {"s/r.h", "#pragma once\nint r_fn(void);\n"},
        {"s/r_int.h", "#pragma once\n#include \"r.h\"\nint r2_fn(void);\n"},
        {"s/r.c", "#include \"r_int.h\"\nint r_fn(void) { return r2_fn(); }\n"},
        {"s/r2.c", "#include \"r_int.h\"\nint r2_fn(void) { return 2; }\n"},
    };
    ctt_proc p;
    if (planted(&p, files, sizeof files / sizeof files[0]))
        return 1;
    ST_ASSERT_EXIT(p, 0);
    ctt_proc_free(&p);

    static const st_file back[] = {
        {"s/r2.c", "#include \"r_int.h\"\nint r2_fn(void) { return r_fn(); }\n"},
    };
    if (planted(&p, back, 1))
        return 1;
    ST_ASSERT_EXIT(p, 1);
    ASSERT_CONTAINS(p.err, "cycle between modules: s/r -> s/r2 -> s/r\n");
    ASSERT_CONTAINS(p.err, "  s/r2 -> s/r: s/r2.o uses r_fn (s/r.o)\n");
    ctt_proc_free(&p);

    static const st_file twice[] = {
        {"t/r.h", "#pragma once\n"},
        {"u/v.h", "#include \"r.h\"\n"},
    };
    if (planted(&p, twice, 2))
        return 1;
    ST_ASSERT_EXIT(p, 2);
    ASSERT_CONTAINS(p.err, "u/v.h includes \"r.h\": expected one file of the tree by that name, "
                           "found s/r.h, t/r.h");
    ctt_proc_free(&p);
    return 0;
}
