#include "fmt.h"

/* A file from a newer major version is refused, naming the file and both versions. */
TEST_IMPL(newer_major_version_refused)
{
    char path[4096], err[1024] = "";
    snprintf(path, sizeof path, "%s/t.ct", ctt_tmpdir());
    fmt_api_trace(path, 1, 5, NULL);
    ASSERT_INT(fmt_set_version(path, CT_FORMAT_MAJOR + 1, 3), ==, 0);
    fmt_log l;
    const char *paths[] = {path};
    ASSERT_INT(fmt_read(&l, paths, 1, NULL, err, sizeof err), ==, CT_E_VERSION);
    char want[4400];
    snprintf(want, sizeof want, "%s: trace format %d.3 is newer than this cutrace reads (%d.%d)",
             path, CT_FORMAT_MAJOR + 1, CT_FORMAT_MAJOR, CT_FORMAT_MINOR);
    ASSERT_CONTAINS(err, want);
    ASSERT_STR(ct_strerror(CT_E_VERSION), "unsupported trace format version");
    return 0;
}
