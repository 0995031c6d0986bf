#define _GNU_SOURCE
#include "sf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctt.h"

int sf_start(sf_mount *m, uint64_t size, uint64_t rate)
{
    static int seq;
    snprintf(m->dir, sizeof m->dir, "%s/slowfs-%d", ctt_tmpdir(), seq++);
    if (mkdir(m->dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "sf_start: mkdir %s: %s\n", m->dir, strerror(errno));
        return -1;
    }
    char bin[4096], sz[32], rt[32];
    snprintf(bin, sizeof bin, "%s/tests/slowfs/slowfs", ctt_build());
    snprintf(sz, sizeof sz, "%llu", (unsigned long long)size);
    snprintf(rt, sizeof rt, "%llu", (unsigned long long)rate);
    char log[4200];
    snprintf(log, sizeof log, "%s.log", m->dir);
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        return -1;
    m->pid = fork();
    if (m->pid == 0) {
        /* a test killed at its time limit takes its mount with it */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        /* its messages to a file, not a pipe: nobody reads a pipe once it is up */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out[1], 1);
        if (fd >= 0)
            dup2(fd, 2);
        execl(bin, "slowfs", m->dir, "--size", sz, "--rate", rt, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", bin, strerror(errno));
        _exit(1);
    }
    close(out[1]);
    char line[8192] = "";
    FILE *f = fdopen(out[0], "r");
    int ready = f && fgets(line, sizeof line, f) && !strncmp(line, "ready ", 6);
    if (f)
        fclose(f);
    if (!ready) {
        int st;
        waitpid(m->pid, &st, 0);
        m->pid = 0;
        char *err = ctt_read_file(log, NULL);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
            ctt_skip(err && *err ? err : "slowfs: no FUSE mount here");
        fprintf(stderr, "sf_start: slowfs on %s did not get ready (status 0x%x): %s\n", m->dir, st,
                err ? err : "");
        free(err);
        return -1;
    }
    line[strcspn(line, "\n")] = 0;
    snprintf(m->file, sizeof m->file, "%s", line + 6);
    return 0;
}

int sf_stop(sf_mount *m)
{
    if (m->pid <= 0)
        return 0;
    kill(m->pid, SIGTERM);
    int st;
    if (waitpid(m->pid, &st, 0) != m->pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "sf_stop: slowfs on %s ended with status 0x%x\n", m->dir, st);
        m->pid = 0;
        return -1;
    }
    m->pid = 0;
    rmdir(m->dir);
    char log[4200];
    snprintf(log, sizeof log, "%s.log", m->dir);
    unlink(log);
    return 0;
}
