/* The cutrace test harness: each test is a TEST_IMPL(name) in a test-TOPIC.c file (a topic's
 * tests share a file and its helpers, as libuv groups them), listed once in its suite's list.h
 * as TEST_ENTRY(name) (or TEST_ALONE(name): below). The runner (runner.c) runs every listed test
 * in a forked child with a time limit, so a crash or hang fails that test alone, and prints one
 * line per test ("ok SUITE.NAME" or "not ok SUITE.NAME: why") then "SUITE: N passed, N failed".
 *
 * A test returns 0 on success; the ASSERT macros print where and why and return 1. A test may
 * call ctt_skip() to report that it cannot run here (counted as skipped, never as passed). */
#ifndef CTT_H
#define CTT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>

#define TEST_IMPL(name) int ctt_##name(void)

/* Exit code a test process uses to say "skipped"; the runner counts it apart. */
#define CTT_SKIP_CODE 77

void ctt_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ctt_skip(const char *why) __attribute__((noreturn));

#define ASSERT(expr)                                                                   \
    do {                                                                               \
        if (!(expr)) {                                                                 \
            ctt_fail_at(__FILE__, __LINE__, "assertion failed: %s", #expr);        \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* Integer comparisons print both values; op is one of == != < <= > >=. */
#define ASSERT_INT(a, op, b)                                                           \
    do {                                                                               \
        long long ctt_a_ = (long long)(a), ctt_b_ = (long long)(b);                      \
        if (!(ctt_a_ op ctt_b_)) {                                                       \
            ctt_fail_at(__FILE__, __LINE__, "%s %s %s: %lld vs %lld", #a, #op, #b, \
                            ctt_a_, ctt_b_);                                             \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

#define ASSERT_UINT(a, op, b)                                                          \
    do {                                                                               \
        unsigned long long ctt_a_ = (unsigned long long)(a),                            \
                           ctt_b_ = (unsigned long long)(b);                            \
        if (!(ctt_a_ op ctt_b_)) {                                                       \
            ctt_fail_at(__FILE__, __LINE__, "%s %s %s: %llu vs %llu", #a, #op, #b, \
                            ctt_a_, ctt_b_);                                             \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* |a - b| <= tol, for durations and rates. */
#define ASSERT_NEAR(a, b, tol)                                                         \
    do {                                                                               \
        double ctt_a_ = (double)(a), ctt_b_ = (double)(b), ctt_t_ = (double)(tol);        \
        if (!(ctt_a_ - ctt_b_ <= ctt_t_ && ctt_b_ - ctt_a_ <= ctt_t_)) {                     \
            ctt_fail_at(__FILE__, __LINE__, "%s ~ %s (tol %g): %g vs %g", #a, #b,  \
                            ctt_t_, ctt_a_, ctt_b_);                                      \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

#define ASSERT_STR(a, b)                                                               \
    do {                                                                               \
        const char *ctt_a_ = (a), *ctt_b_ = (b);                                         \
        if (!ctt_a_ || !ctt_b_ || strcmp(ctt_a_, ctt_b_) != 0) {                           \
            ctt_fail_at(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b,  \
                            ctt_a_ ? ctt_a_ : "(null)", ctt_b_ ? ctt_b_ : "(null)");       \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* haystack contains needle */
#define ASSERT_CONTAINS(hay, needle)                                                   \
    do {                                                                               \
        const char *ctt_h_ = (hay), *ctt_n_ = (needle);                                  \
        if (!ctt_h_ || !strstr(ctt_h_, ctt_n_)) {                                         \
            ctt_fail_at(__FILE__, __LINE__, "%s does not contain \"%s\"; it is:\n%s", \
                            #hay, ctt_n_, ctt_h_ ? ctt_h_ : "(null)");                    \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* Result of running a child process. */
typedef struct {
    int exited;      /* 1 if it exited, 0 if a signal ended it */
    int code;        /* exit status, or the signal number */
    char *out;       /* stdout, NUL-terminated, malloc'd */
    char *err;       /* stderr, NUL-terminated, malloc'd */
    size_t out_len, err_len;
} ctt_proc;

/* Runs argv[0] (searched in PATH) with the current environment plus `env` (a NULL-terminated
 * list of "NAME=value"; "NAME=" with nothing after unsets NAME), capturing both outputs. Kills
 * it after timeout_s seconds. Returns 0, or -1 if it could not be started. */
int ctt_run(ctt_proc *p, char *const argv[], char *const env[], int timeout_s);
void ctt_proc_free(ctt_proc *p);

/* The build directory (absolute), from CT_BUILD, set by the runner. */
const char *ctt_build(void);
/* A fresh empty directory for this test, removed by the runner after the test. */
const char *ctt_tmpdir(void);
/* Path in the build dir: ctt_path(buf, "tests/fakecuda/libcuda.so.1"). */
const char *ctt_path(char buf[4096], const char *rel);
/* Reads a whole file; NULL on failure. Caller frees. */
char *ctt_read_file(const char *path, size_t *len);
/* The machine, shared by the tests of suites run at once (tests/run.sh). A test of how its own
 * processes share the cores needs it alone: other suites' simulated devices, at real-time
 * priority, would take the cores from it whatever the cgroups say (tr_confine.h). Such a test is
 * listed TEST_ALONE(name) in its suite's list.h, and the runner runs the suite's alone tests
 * first, in one block: it waits once (ctt_machine_alone: until no other suite's test runs,
 * keeping the next from starting) and holds the machine for the whole block, so that neither
 * suite waits for the other's current test once per such test. Otherwise the runner holds it
 * shared for each test (ctt_machine_shared), and lets it go when the test ended
 * (ctt_machine_release). In a test, ctt_machine_alone says the test needs it alone: nothing in
 * the block, and the test fails with the fix named when it runs shared (not listed
 * TEST_ALONE); ctt_machine_shared is nothing in the block. */
void ctt_machine_shared(void);
void ctt_machine_alone(void);
void ctt_machine_release(void);
/* The runner's block of alone tests: pinned, the processes it forks hold the machine alone
 * until it says otherwise (their ctt_machine_shared and _alone are nothing). */
void ctt_machine_pin(int pinned);
#define CTT_MACHINE_LOCK "/tmp/cutrace-tests-machine.lock"
#define CTT_MACHINE_TURN "/tmp/cutrace-tests-machine.turn"
/* What a suite's set-up script found (a browser, a virtual environment): its status file says
 * "ok PATH" (PATH is returned, static storage) or "skip WHY" / "fail WHY"; then, or when the
 * file is missing, the test is skipped, the reason naming `what` and the script. */
const char *ctt_status_ok(const char *status, const char *what, const char *script);

#endif
