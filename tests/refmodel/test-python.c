/* py_loader (tests/workloads/py_loader.py): Python driving the driver through ctypes, fed by a
 * forked loader pool whose workers never call CUDA, under `cutrace run`. Its breakdown and tables
 * must match the reference, and the workers must leave no trace files. The thread sampler is off:
 * with its samples the analyzer tells a batch copy by the host's frames (a loader of its own, not
 * torch.utils.data, makes its gaps the host's own work), which the reference does not model. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "an_helpers.h"
#include "refmodel.h"

TEST_IMPL(python_ctypes_workload)
{
    if (system("python3 -c 'import ctypes, multiprocessing' >/dev/null 2>&1") != 0)
        ctt_skip("python3 with ctypes and multiprocessing is not installed");
    char dir[4096], *out;
    char *env[] = {"CUTRACE_THREAD_SAMPLE_US=0", NULL};
    ASSERT(an_trace_workload(dir, "py", "py_loader --steps 20 --loader-ms 20 --workers 3", env, &out));
    ASSERT_CONTAINS(out, "py_loader: verify=ok");
    free(out);
    /* one file, the main process's: the workers leave none */
    DIR *d = opendir(dir);
    ASSERT(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ASSERT_INT(stat(path, &st), ==, 0);
        ASSERT_INT(st.st_size, >, 1000);
        files++;
    }
    closedir(d);
    ASSERT_INT(files, ==, 1);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "processes.0.late_points"), ==, 0);
    tj_free(s);
    rm_result *r = NULL;
    ASSERT_INT(rm_check(dir, NULL, "py_loader", &r), ==, 0);
    /* the program's shape, from the reference: every step after the first waits for its batch */
    ASSERT_UINT(r->nbd, ==, 1);
    ASSERT_UINT(r->bd[0].gap_count[RM_GAP_STARVE], >=, 19);
    ASSERT_UINT(r->nkernels, ==, 1);
    ASSERT_UINT(rm_timed(&r->kernels[0]), ==, 160);
    rm_free(r);
    return 0;
}
