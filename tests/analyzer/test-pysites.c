/* py_sites (tests/workloads/py_sites.py): a Python training loop calling the driver through ctypes
 * (issue 14). The pageable copy and the per-step synchronization must be reported at the exact
 * file:line of the user's code, read from the script's `# cutrace: <what>` markers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_helpers.h"

/* The line of the script whose comment is "# cutrace: <what>", 0 if none. */
static int marker_line(const char *what)
{
    char path[4096], line[1024], want[128];
    FILE *f = fopen(ctt_path(path, "tests/workloads/py_sites"), "r");
    if (!f)
        return 0;
    snprintf(want, sizeof want, "# cutrace: %s\n", what);
    int n = 0, found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        n++;
        const char *c = strstr(line, "# cutrace: ");
        found = c && !strcmp(c, want);
    }
    fclose(f);
    return found ? n : 0;
}

static int python_sites(const char *name, const char *args)
{
    if (system("python3.11 -c 'import ctypes' >/dev/null 2>&1") != 0)
        ctt_skip("python3.11 with ctypes is not installed");
    char dir[4096], *out, want[128];
    ASSERT(an_trace_workload(dir, name, args, NULL, &out));
    ASSERT_CONTAINS(out, "py_sites: steps=10");
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    int copy = marker_line("pageable-copy"), sync = marker_line("step-sync");
    ASSERT_INT(copy, >, 0);
    ASSERT_INT(sync, >, 0);
    const tj *d = an_diag(s, "pageable-memcpy");
    ASSERT(d);
    snprintf(want, sizeof want, "py_sites:%d in train_step", copy);
    ASSERT_STR(tj_str(d, "sites.0.stack"), want);
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 10);
    ASSERT(!tj_path(d, "sites.1"));
    d = an_diag(s, "excessive-sync");
    ASSERT(d);
    snprintf(want, sizeof want, "py_sites:%d in train_step", sync);
    ASSERT_STR(tj_str(d, "sites.0.stack"), want);
    ASSERT_INT(tj_num(d, "sites.0.count"), ==, 10);
    tj_free(s);
    return 0;
}

TEST_IMPL(python_call_sites_main_thread)
{
    return python_sites("pysites", "py_sites --steps 10");
}

TEST_IMPL(python_call_sites_in_a_thread)
{
    return python_sites("pysites-thread", "py_sites --steps 10 --thread");
}
