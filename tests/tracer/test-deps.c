/* The tracer's modules depend on each other in one direction only (preload/README.md): the
 * checker (depcheck.py: #include lines of preload/, nm of the objects in build/preload) finds
 * no cycle in the real tree, and finds both kinds of cycle in small synthetic trees, so it can
 * fail. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ctt.h"
#include "tr.h"

static int depcheck(ctt_proc *p, const char *src, const char *obj)
{
    char *cmd[] = {"python3", TR_DEPCHECK, (char *)src, (char *)obj, NULL};
    return ctt_run(p, cmd, NULL, 60);
}

/* Builds TMP/name/src from files (S.c compiled into TMP/name/obj/S.o), runs the checker on it
 * and asserts that it reports `cycle`, citing `why` for one of its edges. */
static int planted(const char *name, const char *const files[][2], size_t n, const char *cycle,
                   const char *why)
{
    char dir[4096], src[4200], obj[4200];
    snprintf(dir, sizeof dir, "%s/%s", ctt_tmpdir(), name);
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(obj, sizeof obj, "%s/obj", dir);
    ASSERT(!mkdir(dir, 0755) && !mkdir(src, 0755) && !mkdir(obj, 0755));
    for (size_t i = 0; i < n; i++)
        ASSERT_INT(tr_put(src, files[i][0], files[i][1]), ==, 0);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(files[i][0]);
        if (files[i][0][len - 1] != 'c')
            continue;
        char in[4400], out[4400];
        snprintf(in, sizeof in, "%s/%s", src, files[i][0]);
        snprintf(out, sizeof out, "%s/%.*s.o", obj, (int)(len - 2), files[i][0]);
        char *cc[] = {"cc", "-c", "-o", out, in, NULL};
        ctt_proc p;
        ASSERT_INT(ctt_run(&p, cc, NULL, 60), ==, 0);
        if (!p.exited || p.code)
            fprintf(stderr, "cc %s: %s", in, p.err);
        ASSERT(p.exited && p.code == 0);
        ctt_proc_free(&p);
    }
    ctt_proc p;
    ASSERT_INT(depcheck(&p, src, obj), ==, 0);
    printf("planted %s: %s", name, p.err);
    ASSERT(p.exited);
    ASSERT_INT(p.code, ==, 1);
    ASSERT_CONTAINS(p.err, cycle);
    ASSERT_CONTAINS(p.err, why);
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(preload_modules_have_no_cycle)
{
    char obj[4096];
    ctt_proc p;
    ASSERT_INT(depcheck(&p, TR_PRELOAD_SRC, ctt_path(obj, "preload")), ==, 0);
    printf("%s%s", p.out, p.err);
    ASSERT(p.exited);
    ASSERT_INT(p.code, ==, 0);
    ASSERT_CONTAINS(p.out, "no cycle");
    ctt_proc_free(&p);

    /* An include cycle (a.c includes b.h, b.h includes a.h), no symbol between them. */
    static const char *const inc[][2] = {
        {"a.h", "#pragma once\n#include \"b.h\"\n"},     {"a.c", "#include \"a.h\"\nint a_x;\n"},
        {"b.h", "#pragma once\n#include \"a.h\"\n"},     {"b.c", "int b_x;\n"},
        {"c.c", "#include \"a.h\"\nint c_x;\n"},
    };
    if (planted("inc", inc, sizeof inc / sizeof inc[0], "a -> b -> a", "b.h includes a.h"))
        return 1;
    /* A cycle through symbols alone: p calls q's function, q reads p's extern global. */
    static const char *const sym[][2] = {
        {"p.c", "int q_fn(void);\nint p_var = 1;\nint p_fn(void) { return q_fn(); }\n"},
        {"q.c", "extern int p_var;\nint q_fn(void) { return p_var; }\n"},
        {"r.c", "int q_fn(void);\nint r_fn(void) { return q_fn(); }\n"},
    };
    return planted("sym", sym, sizeof sym / sizeof sym[0], "p -> q -> p", "q.o uses p_var (p.o)");
}
