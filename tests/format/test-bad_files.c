#include "fmt.h"

#include <fcntl.h>
#include <unistd.h>

static int fmt_write(const char *path, const void *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0 && write(fd, data, n) == (ssize_t)n;
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

/* Opens path expecting failure with code and a message containing want (after "PATH: "). */
static int fmt_expect_error(const char *path, int code, const char *want)
{
    char err[1024] = "", full[1200];
    fmt_log l;
    const char *paths[] = {path};
    ASSERT_INT(fmt_read(&l, paths, 1, NULL, err, sizeof err), ==, code);
    snprintf(full, sizeof full, "%s: %s", path, want);
    ASSERT_CONTAINS(err, full);
    return 0;
}

/* Files that hold nothing recoverable fail with a message naming the file and the problem;
 * a header with no chunk after it is an empty trace, not an error. */
TEST_IMPL(empty_foreign_and_cut_header_files)
{
    char p[4096], trace[4096];
    const char *dir = ctt_tmpdir();
#define MAGIC_FOUND "not a cutrace trace: expected magic 43 55 54 52 41 43 45 00 (\"CUTRACE\\0\") " \
                    "at offset 0, found "
    static const struct {
        const char *name, *bytes;
        size_t len;
        int err;
        const char *msg;
    } files[] = {
        {"empty.ct", "", 0, CT_E_EMPTY, "empty file (0 bytes): expected a cutrace trace"},
        {"elf.ct", "\x7f" "ELF\2\1\1\0 and more", 17, CT_E_NOT_TRACE,
         MAGIC_FOUND "7f 45 4c 46 02 01 01 00"},
        {"short.ct", "CUT", 3, CT_E_NOT_TRACE, MAGIC_FOUND "43 55 54 (file too short)"},
        /* text says what the file is better than its bytes' values */
        {"passwd", "root:x:0:0:root:/root:/bin/bash\n", 32, CT_E_NOT_TRACE,
         "not a cutrace trace: a text file (it begins \"root:x:0:0:root:\"); a trace begins "
         "with the bytes \"CUTRACE\\0\""},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i].name);
        ASSERT_INT(fmt_write(p, files[i].bytes, files[i].len), ==, 0);
        if (fmt_expect_error(p, files[i].err, files[i].msg))
            return 1;
    }

    snprintf(p, sizeof p, "%s/missing.ct", dir);
    if (fmt_expect_error(p, CT_E_IO, "cannot open: No such file or directory"))
        return 1;
    if (fmt_expect_error(dir, CT_E_NOT_TRACE, "not a regular file"))
        return 1;

    snprintf(trace, sizeof trace, "%s/trace.ct", dir);
    uint64_t off[1];
    fmt_api_trace(trace, 1, 5, off);
    snprintf(p, sizeof p, "%s/cuthdr.ct", dir);
    ASSERT_INT(fmt_copy(trace, p, 40), ==, 0);
    if (fmt_expect_error(p, CT_E_CORRUPT, "file header truncated or damaged"))
        return 1;

    ASSERT_INT(fmt_copy(trace, p, off[0]), ==, 0);
    uint8_t b;
    ASSERT_INT(fmt_peek(p, 20, &b, 1), ==, 0);
    b ^= 1;
    ASSERT_INT(fmt_poke(p, 20, &b, 1), ==, 0);
    if (fmt_expect_error(p, CT_E_CORRUPT, "file header damaged: checksum mismatch"))
        return 1;

    ASSERT_INT(fmt_copy(trace, p, off[0]), ==, 0); /* header only */
    fmt_log l;
    ASSERT_INT(fmt_read1(&l, p), ==, 0);
    ASSERT_INT(l.n, ==, 0);
    ASSERT_INT(l.rc, ==, 0);
    ASSERT_INT(l.nwarn, ==, 1);
    ASSERT_CONTAINS(l.warn, "no end record");
    fmt_free(&l);
    return 0;
}
