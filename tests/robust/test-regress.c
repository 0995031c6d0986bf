/* Replays every input the fuzzers broke something with (tests/robust/regress/, see its
 * README.md) the way the fuzz targets ran it: checksums repaired, read in-process every way
 * (fz_read_all, under this suite's ASan/UBSan) and through cutrace in both builds. */
#define _GNU_SOURCE
#include "rb.h"

#include <dirent.h>
#include <stdlib.h>

#include "fz.h"

/* Runs check(path-of-fixed-copy) on each regress/ file; 0 or 1. */
static int rb_each_regress(int (*check)(const char *orig, const char *fixed))
{
    DIR *d = opendir(RB_SRC "/regress");
    ASSERT(d != NULL);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 8, ".cutrace"))
            continue;
        char orig[4096], fixed[4096];
        snprintf(orig, sizeof orig, "%s/regress/%s", RB_SRC, e->d_name);
        snprintf(fixed, sizeof fixed, "%s/%s", ctt_tmpdir(), e->d_name);
        size_t size;
        uint8_t *img = rb_slurp(orig, &size);
        fz_fix_checksums(img, size);
        ASSERT_INT(rb_spit(fixed, img, size), ==, 0);
        free(img);
        printf("%s\n", e->d_name);
        if (check(orig, fixed)) {
            closedir(d);
            return 1;
        }
        n++;
    }
    closedir(d);
    ASSERT_INT(n, >, 0);
    return 0;
}

static int rb_reader_and_dump(const char *orig, const char *fixed)
{
    fz_read_all(orig);
    fz_read_all(fixed);
    for (int asan = 0; asan < 2; asan++) {
        for (size_t c = 0; fz_commands[c] && !strcmp(fz_commands[c][0], "dump"); c++) {
            char *args[16];
            fz_argv(c, fixed, args);
            ctt_proc p;
            if (rb_cutrace(&p, asan, args, -1, NULL))
                return 1;
            ctt_proc_free(&p);
        }
    }
    return 0;
}

TEST_IMPL(regress_reader_and_dump)
{
    return rb_each_regress(rb_reader_and_dump);
}

static int rb_commands(const char *orig, const char *fixed)
{
    (void)orig;
    return rb_all_commands(fixed, -1, 512, NULL);
}

TEST_IMPL(regress_all_commands)
{
    return rb_each_regress(rb_commands);
}
