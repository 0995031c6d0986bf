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

/* Makes the cgroup with the highest CPU weight, limited to half a CPU if limit, and moves this
 * process into it: 0, or -1 with why. */
static int cg_enter(tr_cgroup *g, int limit, char *why, size_t whylen)
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
            return snprintf(why, whylen, "the cgroup v1 cpu controller is mounted but /proc/self/cgroup "
                            "has no line for it"), -1;
        snprintf(g->back[0], sizeof g->back[0], "/sys/fs/cgroup/%s%s", v1cpu, path);
        snprintf(g->dir[0], sizeof g->dir[0], "/sys/fs/cgroup/%s/%s", v1cpu, name);
        if (!strcmp(v1cpu, "cpu") && cg_path_of("cpuacct", path, sizeof path) == 0) {
            snprintf(g->back[1], sizeof g->back[1], "/sys/fs/cgroup/cpuacct%s", path);
            snprintf(g->dir[1], sizeof g->dir[1], "/sys/fs/cgroup/cpuacct/%s", name);
        }
    } else {
        FILE *f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "re");
        char ctl[256] = "";
        int have = f && fgets(ctl, sizeof ctl, f) && strstr(ctl, "cpu");
        if (f)
            fclose(f);
        if (!have)
            return snprintf(why, whylen, "no cgroup cpu controller at /sys/fs/cgroup (v1 cpu/ or v2 "
                            "with cpu enabled)"), -1;
        g->v2 = 1;
        if (cg_path_of("", path, sizeof path) != 0)
            return snprintf(why, whylen, "/proc/self/cgroup has no cgroup v2 line"), -1;
        snprintf(g->back[0], sizeof g->back[0], "/sys/fs/cgroup%s", strcmp(path, "/") ? path : "");
        snprintf(g->dir[0], sizeof g->dir[0], "/sys/fs/cgroup/%s", name);
    }
    for (int i = 0; i < 2; i++)
        if (g->dir[i][0] && mkdir(g->dir[i], 0755) != 0) {
            int e = errno;
            if (i)
                rmdir(g->dir[0]);
            return snprintf(why, whylen, "cannot make a cgroup (%s: %s)", g->dir[i], strerror(e)), -1;
        }
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    const char *weight = g->v2 ? "cpu.weight" : "cpu.shares";
    const char *quota = g->v2 ? "cpu.max" : "cpu.cfs_quota_us", *file = weight;
    int rc = cg_write(g->dir[0], weight, g->v2 ? "10000\n" : "262144\n");
    if (rc == 0 && limit)
        rc = cg_write(g->dir[0], file = quota, g->v2 ? "50000 100000\n" : "50000\n");
    for (int i = 0; i < 2 && rc == 0; i++)
        if (g->dir[i][0])
            rc = cg_write(g->dir[i], "cgroup.procs", pid);
    if (rc != 0) {
        snprintf(why, whylen, "cannot set %s of %s and move into it: %s", file, g->dir[0],
                 strerror(errno));
        for (int i = 0; i < 2; i++)
            if (g->dir[i][0]) {
                cg_write(g->back[i], "cgroup.procs", pid);
                rmdir(g->dir[i]);
            }
        return -1;
    }
    return 0;
}

void tr_cgroup_enter(tr_cgroup *g)
{
    char why[800];
    if (cg_enter(g, 1, why, sizeof why) != 0)
        ctt_skip(why);
    ctt_machine_alone();
}

int tr_cgroup_hasten(tr_cgroup *g)
{
    char why[800];
    int favoured = cg_enter(g, 0, why, sizeof why) == 0;
    if (!favoured) {
        fprintf(stderr, "not favoured over other work on the machine: %s\n", why);
        memset(g, 0, sizeof *g);
    }
    return favoured;
}

int tr_cgroup_favour(tr_cgroup *g)
{
    ctt_machine_alone();
    return tr_cgroup_hasten(g);
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

