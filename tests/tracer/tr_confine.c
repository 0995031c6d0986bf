/* Confining a test's run (see tr_confine.h). */
#define _GNU_SOURCE
#include "tr_confine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cg_write(const char *dir, const char *file, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* This process's cgroup path in the hierarchy whose controllers line is ctrls ("" for v2). */
static int cg_path_of(const char *ctrls, char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 && (size_t)(c2 - c1 - 1) == strlen(ctrls) && !strncmp(c1 + 1, ctrls, strlen(ctrls)) &&
            (*ctrls || line[0] == '0')) {
            snprintf(out, n, "%s", c2 + 1);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

void tr_cgroup_enter(tr_cgroup *g)
{
    memset(g, 0, sizeof *g);
    char name[48], path[256];
    snprintf(name, sizeof name, "cutrace-test-%d", (int)getpid());
    struct stat st;
    const char *v1cpu = stat("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", &st) == 0 ? "cpu,cpuacct"
                        : stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &st) == 0     ? "cpu"
                                                                                     : NULL;
    if (v1cpu) {
        if (cg_path_of(v1cpu, path, sizeof path) != 0)
            ctt_skip("the cgroup v1 cpu controller is mounted but /proc/self/cgroup has no line for it");
        snprintf(g->back[0], sizeof g->back[0], "/sys/fs/cgroup/%s%s", v1cpu, path);
        snprintf(g->dir[0], sizeof g->dir[0], "/sys/fs/cgroup/%s/%s", v1cpu, name);
        if (!strcmp(v1cpu, "cpu") && cg_path_of("cpuacct", path, sizeof path) == 0) {
            snprintf(g->back[1], sizeof g->back[1], "/sys/fs/cgroup/cpuacct%s", path);
            snprintf(g->dir[1], sizeof g->dir[1], "/sys/fs/cgroup/cpuacct/%s", name);
        }
    } else {
        FILE *f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "re");
        char ctl[256] = "";
        if (!f || !fgets(ctl, sizeof ctl, f) || !strstr(ctl, "cpu"))
            ctt_skip("no cgroup cpu controller at /sys/fs/cgroup (v1 cpu/ or v2 with cpu enabled)");
        fclose(f);
        g->v2 = 1;
        if (cg_path_of("", path, sizeof path) != 0)
            ctt_skip("/proc/self/cgroup has no cgroup v2 line");
        snprintf(g->back[0], sizeof g->back[0], "/sys/fs/cgroup%s", strcmp(path, "/") ? path : "");
        snprintf(g->dir[0], sizeof g->dir[0], "/sys/fs/cgroup/%s", name);
    }
    for (int i = 0; i < 2; i++)
        if (g->dir[i][0] && mkdir(g->dir[i], 0755) != 0) {
            int e = errno;
            if (i)
                rmdir(g->dir[0]);
            char why[700];
            snprintf(why, sizeof why, "cannot make a cgroup (%s: %s)", g->dir[i], strerror(e));
            ctt_skip(why);
        }
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    int rc = g->v2 ? cg_write(g->dir[0], "cpu.max", "50000 100000\n")
                   : cg_write(g->dir[0], "cpu.cfs_quota_us", "50000\n");
    for (int i = 0; i < 2 && rc == 0; i++)
        if (g->dir[i][0])
            rc = cg_write(g->dir[i], "cgroup.procs", pid);
    if (rc != 0) {
        char why[700];
        snprintf(why, sizeof why, "cannot limit %s and move into it: %s", g->dir[0], strerror(errno));
        for (int i = 0; i < 2; i++)
            if (g->dir[i][0]) {
                cg_write(g->back[i], "cgroup.procs", pid);
                rmdir(g->dir[i]);
            }
        ctt_skip(why);
    }
}

void tr_cgroup_leave(tr_cgroup *g)
{
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    for (int i = 0; i < 2; i++)
        if (g->dir[i][0]) {
            cg_write(g->back[i], "cgroup.procs", pid);
            rmdir(g->dir[i]);
        }
}

