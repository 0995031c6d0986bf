/* Test runner, compiled once per suite with -DCTT_SUITE=name and -I pointing at the suite's
 * list.h. Usage: test-SUITE [NAME...] runs all tests or the named ones: those listed
 * TEST_ALONE first, in one block with the machine alone (ctt.h), then the others in their order.
 * Each test runs in its own process group with a time limit (CT_TEST_TIMEOUT seconds, default
 * 120) and a fresh temporary directory in CT_TEST_TMPDIR. */
#define _GNU_SOURCE
#include "ctt.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CTT_STR2(x) #x
#define CTT_STR(x) CTT_STR2(x)

/* The suite's list.h by full path (tests/build.mk sets CTT_LIST): a plain "list.h" would find
 * tests/harness/list.h, next to this file, for every suite. */
#ifndef CTT_LIST
#define CTT_LIST "list.h"
#endif

#define TEST_ENTRY(name) TEST_IMPL(name);
#define TEST_ALONE(name) TEST_IMPL(name);
#include CTT_LIST
#undef TEST_ENTRY
#undef TEST_ALONE

typedef struct {
    const char *name;
    int (*fn)(void);
    int alone;
} ctt_entry;

static const ctt_entry ctt_tests[] = {
#define TEST_ENTRY(name) {#name, ctt_##name, 0},
#define TEST_ALONE(name) {#name, ctt_##name, 1},
#include CTT_LIST
#undef TEST_ENTRY
#undef TEST_ALONE
};

static int ctt_selected(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

static void ctt_rm_rf(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
}

/* Runs one test in a child (the machine held shared for it, unless the runner holds it alone
 * for its block of alone tests); returns 0 pass, 1 fail, 2 skip. */
static int ctt_run_one(const ctt_entry *t, int timeout_s, double *secs)
{
    char tmpl[] = "/tmp/cutrace-test-XXXXXX";
    if (!mkdtemp(tmpl)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(NULL);
    if (!t->alone)
        ctt_machine_shared();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        setenv("CT_TEST_TMPDIR", tmpl, 1);
        if (chdir(tmpl) != 0)
            _exit(1);
        alarm((unsigned)timeout_s);
        int r = t->fn();
        fflush(NULL);
        _exit(r == 0 ? 0 : 1);
    }
    int st = 0, result;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL); /* anything the test left running */
    if (!t->alone)
        ctt_machine_release();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        result = 0;
    else if (WIFEXITED(st) && WEXITSTATUS(st) == CTT_SKIP_CODE)
        result = 2;
    else {
        if (WIFSIGNALED(st))
            fprintf(stderr, "  %s: killed by signal %d%s\n", t->name, WTERMSIG(st),
                    WTERMSIG(st) == SIGALRM ? " (time limit)" : "");
        result = 1;
    }
    if (!getenv("CT_KEEP_TMP"))
        ctt_rm_rf(tmpl);
    else
        fprintf(stderr, "  %s: kept %s\n", t->name, tmpl);
    return result;
}

int main(int argc, char **argv)
{
    const char *suite = CTT_STR(CTT_SUITE);
    const char *to = getenv("CT_TEST_TIMEOUT");
    int timeout_s = to ? atoi(to) : 120;
    if (!getenv("CT_BUILD")) {
        /* The runner lives in BUILD/tests/; derive BUILD from its own path. */
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = 0;
            for (int i = 0; i < 2; i++) {
                char *slash = strrchr(self, '/');
                if (slash)
                    *slash = 0;
            }
            setenv("CT_BUILD", self, 1);
        }
    }
    int pass = 0, fail = 0, skip = 0;
    size_t n = sizeof ctt_tests / sizeof ctt_tests[0];
    /* the alone tests (k < n), the machine taken alone before the first, then the others */
    int alone = 0;
    for (size_t k = 0; k < 2 * n; k++) {
        size_t i = k % n;
        int block = k < n;
        if (k == n && alone) {
            ctt_machine_pin(0);
            ctt_machine_release();
        }
        if (ctt_tests[i].alone != block || !ctt_selected(ctt_tests[i].name, argc, argv))
            continue;
        if (block && !alone) {
            ctt_machine_alone();
            ctt_machine_pin(1);
            alone = 1;
        }
        double secs = 0;
        int r = ctt_run_one(&ctt_tests[i], timeout_s, &secs);
        if (r == 0) {
            pass++;
            printf("ok %s.%s (%.2fs)\n", suite, ctt_tests[i].name, secs);
        } else if (r == 2) {
            skip++;
            printf("skip %s.%s\n", suite, ctt_tests[i].name);
        } else {
            fail++;
            printf("not ok %s.%s (%.2fs)\n", suite, ctt_tests[i].name, secs);
        }
        fflush(stdout);
    }
    printf("%s: %d passed, %d failed, %d skipped\n", suite, pass, fail, skip);
    return fail ? 1 : 0;
}
