/* Helpers of the structure suite: run one of its checkers (depcheck.py, namecheck.py,
 * linecheck.py) and plant the small trees that prove each can fail. */
#ifndef ST_H
#define ST_H

#include "ctt.h"

/* One file of a planted tree: its path under the tree's root (folders are made) and text. */
typedef struct {
    const char *path;
    const char *text;
} st_file;

/* Runs `python3 tests/structure/SCRIPT ARGS...` (args NULL-terminated) and prints what it
 * printed, for the test's log. 0, or -1 if it could not be started. */
int st_tool(ctt_proc *p, const char *script, char *const args[]);
/* Writes root/PATH for each file, making the folders. 0, or -1 after printing why. */
int st_plant(const char *root, const st_file *files, size_t n);
/* Compiles each root/X.c of files into obj/X.o (the build's mirrored layout), root being a -I
 * folder. 0, or -1 after printing the compiler's complaint. */
int st_compile(const char *root, const char *obj, const st_file *files, size_t n);
/* The tool exited with status `want` (what it printed is above in the log). */
#define ST_ASSERT_EXIT(p, want)                                                          \
    do {                                                                                 \
        if (!(p).exited || (p).code != (want)) {                                         \
            ctt_fail_at(__FILE__, __LINE__, "expected exit status %d, found %s %d",     \
                            (want), (p).exited ? "status" : "signal", (p).code);         \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

#endif
