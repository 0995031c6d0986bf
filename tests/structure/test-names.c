/* Every symbol the objects of a component export carries its prefix (issue 27, DEVELOPERS.md):
 * ct_ (ct__ internal) for trace-format/, ctp_ for preload/ but for the entry points libcutrace
 * exports on purpose, cta_ for analyzer/ but main; by namecheck.py on the build's objects, and on
 * a planted object with a bad name, so that it can fail. */
#include "st.h"

/* namecheck.py ARGS... exits 0. */
static int all_named(char *const args[])
{
    ctt_proc p;
    ASSERT_INT(st_tool(&p, "namecheck.py", args), ==, 0);
    ST_ASSERT_EXIT(p, 0);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(names_prefixed_in_trace_format)
{
    char src[4096], obj[4096];
    snprintf(src, sizeof src, "%s/trace-format", ST_ROOT);
    return all_named((char *[]){"--prefix", "ct_", src, (char *)ctt_path(obj, "trace-format"), NULL});
}

/* The exceptions are the exports of the version script the library is linked with, which
 * preload/gen/gen_wrappers.py writes beside the generated wrappers (checked too). */
TEST_IMPL(names_prefixed_in_preload)
{
    char src[4096], obj[4096], gen[4096], map[4096];
    snprintf(src, sizeof src, "%s/preload", ST_ROOT);
    ctt_path(obj, "preload");
    ctt_path(gen, "preload/gen");
    ctt_path(map, "preload/gen/libcutrace.map");
    return all_named((char *[]){"--prefix", "ctp_", "--except-map", map, src, obj, gen, gen, NULL});
}

TEST_IMPL(names_prefixed_in_analyzer)
{
    char src[4096], obj[4096];
    snprintf(src, sizeof src, "%s/analyzer", ST_ROOT);
    return all_named((char *[]){"--prefix", "cta_", "--except", "main", src,
                                (char *)ctt_path(obj, "analyzer"), NULL});
}

/* A subfolder's object exports a well-named function, a badly named global and an entry point
 * a version script exports; its static function is its own business. */
TEST_IMPL(names_planted_bad_name_is_found)
{
    static const st_file files[] = {
        {"src/sub/mixed.c", "static int own(void) { return 1; }\nint ct_ok(void) { return own(); }\n"
                            "int bad_name = 2;\nint cuInit(unsigned f) { return (int)f; }\n"},
        {"lib.map", "/* exports */\nV1 {\n  global:\n    cuInit;\n  local:\n    *;\n};\n"},
    };
    char src[4096], obj[4096], map[4096];
    snprintf(src, sizeof src, "%s/src", ctt_tmpdir());
    snprintf(obj, sizeof obj, "%s/obj", ctt_tmpdir());
    snprintf(map, sizeof map, "%s/lib.map", ctt_tmpdir());
    ASSERT_INT(st_plant(ctt_tmpdir(), files, 2), ==, 0);
    ASSERT_INT(st_compile(src, obj, (st_file[]){{"sub/mixed.c", ""}}, 1), ==, 0);
    char want[4200];
    snprintf(want, sizeof want, "namecheck: %s/sub/mixed.o defines bad_name: expected a name "
             "starting with ct_\n", obj);

    ctt_proc p;
    ASSERT_INT(st_tool(&p, "namecheck.py", (char *[]){"--prefix", "ct_", "--except-map", map,
                                                      src, obj, NULL}), ==, 0);
    ST_ASSERT_EXIT(p, 1);
    ASSERT_CONTAINS(p.err, want);
    ASSERT(!strstr(p.err, "cuInit") && !strstr(p.err, "ct_ok") && !strstr(p.err, "own"));
    ASSERT_CONTAINS(p.err, "1 of the symbols exported by 1 objects lack the prefix ct_");
    ctt_proc_free(&p);

    /* Without the script, the entry point is an offender too. */
    ASSERT_INT(st_tool(&p, "namecheck.py", (char *[]){"--prefix", "ct_", src, obj, NULL}), ==, 0);
    ST_ASSERT_EXIT(p, 1);
    ASSERT_CONTAINS(p.err, "defines cuInit: expected");
    ASSERT_CONTAINS(p.err, want);
    ctt_proc_free(&p);
    return 0;
}
