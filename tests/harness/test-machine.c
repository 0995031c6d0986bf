/* The machine shared between suites (ctt_machine_*): a test alone waits for the other suites'
 * running tests, and none starts while it is alone or waiting to be. The other suites' tests
 * are flock(1) processes taking the locks as a runner does. */
#define _GNU_SOURCE
#include "ctt.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static pid_t start_sh(const char *script)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Until path exists (a process wrote it) or, with a blocked flock on the machine lock, until
 * /proc/locks shows one waiting for it. */
static int wait_for(const char *path, int blocked)
{
    struct stat st = {0};
    if (blocked && stat(CTT_MACHINE_LOCK, &st) != 0)
        return -1;
    char ino[64];
    snprintf(ino, sizeof ino, ":%lu ", (unsigned long)st.st_ino);
    for (int i = 0; i < 6000; i++) {
        if (!blocked && access(path, F_OK) == 0)
            return 0;
        if (blocked) {
            char *locks = ctt_read_file("/proc/locks", NULL);
            for (char *l = locks ? strtok(locks, "\n") : NULL; l; l = strtok(NULL, "\n"))
                if (strstr(l, "-> FLOCK") && strstr(l, ino)) {
                    free(locks);
                    return 0;
                }
            free(locks);
        }
        usleep(10000);
    }
    return -1;
}

static double read_time(const char *path)
{
    char *t = ctt_read_file(path, NULL);
    double v = t ? atof(t) : -1;
    free(t);
    return v;
}

TEST_IMPL(machine_alone_waits_and_holds_off_others)
{
    /* this test's share let go: it waits for lock takers, which may wait (in the turnstile,
     * behind another suite's test waiting to be alone) until that share ends */
    ctt_machine_release();
    char script[2400], a[600], b[600], p[600];
    snprintf(a, sizeof a, "%s/a", ctt_tmpdir());
    snprintf(b, sizeof b, "%s/b", ctt_tmpdir());
    snprintf(p, sizeof p, "%s/p", ctt_tmpdir());
    /* another suite's test, running: the machine shared for 0.5 s, its end written */
    snprintf(script, sizeof script, "flock -s %s sh -c 'touch %s.held; sleep 0.5; date +%%s.%%N > %s'",
             CTT_MACHINE_LOCK, a, a);
    pid_t pa = start_sh(script);
    char held[700];
    snprintf(held, sizeof held, "%s.held", a);
    ASSERT_INT(wait_for(held, 0), ==, 0);
    /* this test asks to be alone (in a child, to be seen waiting), holds it 0.3 s, shares again */
    pid_t pp = fork();
    if (pp == 0) {
        ctt_machine_alone();
        double got = now_s();
        usleep(300000);
        double left = now_s();
        ctt_machine_shared();
        ctt_machine_release(); /* the lock outlives this process in the test's, which waits */
        FILE *f = fopen(p, "w");
        _exit(f && fprintf(f, "%.6f %.6f\n", got, left) > 0 && fclose(f) == 0 ? 0 : 1);
    }
    ASSERT_INT(wait_for(NULL, 1), ==, 0);
    /* another suite's next test, starting while this one waits: through the turnstile */
    snprintf(script, sizeof script, "flock %s true && flock -s %s date +%%s.%%N > %s",
             CTT_MACHINE_TURN, CTT_MACHINE_LOCK, b);
    pid_t pb = start_sh(script);
    int st[3];
    waitpid(pa, &st[0], 0);
    waitpid(pp, &st[1], 0);
    waitpid(pb, &st[2], 0);
    for (int i = 0; i < 3; i++)
        ASSERT(WIFEXITED(st[i]) && WEXITSTATUS(st[i]) == 0);
    double a_end = read_time(a), b_got = read_time(b), got = -1, left = -1;
    char *pt = ctt_read_file(p, NULL);
    ASSERT(pt && sscanf(pt, "%lf %lf", &got, &left) == 2);
    free(pt);
    printf("other test ended %.3f s, alone from %.3f to %.3f s, next other test began %.3f s\n",
           0.0, got - a_end, left - a_end, b_got - a_end);
    ASSERT(got >= a_end);
    ASSERT(b_got >= left);
    return 0;
}

/* A test alone shares the machine again while another suite's runner waits in the turnstile
 * for its share: it does not queue behind that runner, which waits for it (they deadlocked so
 * when the way back went through the turnstile). */
TEST_IMPL(machine_shared_again_past_a_waiting_runner)
{
    ctt_machine_release(); /* as above */
    char alone[600], go[600], shared[600], b[600], script[2400];
    snprintf(alone, sizeof alone, "%s/alone", ctt_tmpdir());
    snprintf(go, sizeof go, "%s/go", ctt_tmpdir());
    snprintf(shared, sizeof shared, "%s/shared", ctt_tmpdir());
    snprintf(b, sizeof b, "%s/b", ctt_tmpdir());
    pid_t q = fork();
    if (q == 0) {
        alarm(20); /* a deadlock ends here, by SIGALRM */
        ctt_machine_alone();
        if (!fopen(alone, "w") || wait_for(go, 0) != 0)
            _exit(1);
        ctt_machine_shared();
        ctt_machine_release();
        _exit(fopen(shared, "w") ? 0 : 1);
    }
    ASSERT_INT(wait_for(alone, 0), ==, 0);
    snprintf(script, sizeof script, "flock %s flock -s %s touch %s", CTT_MACHINE_TURN,
             CTT_MACHINE_LOCK, b);
    pid_t pb = start_sh(script);
    ASSERT_INT(wait_for(NULL, 1), ==, 0);
    FILE *f = fopen(go, "w");
    ASSERT(f && fclose(f) == 0);
    int st[2];
    waitpid(q, &st[0], 0);
    if (WIFSIGNALED(st[0])) {
        fprintf(stderr, "the test alone was killed by signal %d (SIGALRM: it never shared again)\n",
                WTERMSIG(st[0]));
        kill(pb, SIGKILL); /* it waits for a share this test's process still holds alone */
    }
    waitpid(pb, &st[1], 0);
    ASSERT(WIFEXITED(st[0]) && WEXITSTATUS(st[0]) == 0);
    ASSERT(WIFEXITED(st[1]) && WEXITSTATUS(st[1]) == 0);
    ASSERT_INT(access(shared, F_OK), ==, 0);
    ASSERT_INT(access(b, F_OK), ==, 0);
    return 0;
}

/* A test listed TEST_ALONE runs in the runner's block, the machine held alone: another
 * suite's test cannot take its share meanwhile (flock -n fails), and the test's own
 * ctt_machine_alone and _shared (tr_cgroup_favour's, _leave's) change nothing. */
TEST_IMPL(machine_alone_block_holds_it)
{
    char script[600];
    snprintf(script, sizeof script, "flock -n -s %s true", CTT_MACHINE_LOCK);
    for (int k = 0; k < 2; k++) {
        if (k)
            ctt_machine_shared();
        else
            ctt_machine_alone();
        pid_t p = start_sh(script);
        int st = 0;
        waitpid(p, &st, 0);
        ASSERT(WIFEXITED(st));
        ASSERT_INT(WEXITSTATUS(st), ==, 1);
    }
    return 0;
}

/* A test the runner started shared that asks for the machine alone fails, naming the fix
 * (its TEST_ALONE entry), instead of waiting for the other suites' current tests. */
TEST_IMPL(machine_alone_asked_by_a_shared_test_fails)
{
    char err[600];
    snprintf(err, sizeof err, "%s/err", ctt_tmpdir());
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        if (!freopen(err, "w", stderr))
            _exit(2);
        ctt_machine_alone();
        _exit(0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    ASSERT(WIFEXITED(st));
    ASSERT_INT(WEXITSTATUS(st), ==, 1);
    char *text = ctt_read_file(err, NULL);
    ASSERT(text);
    ASSERT_CONTAINS(text, "expected TEST_ALONE(name) for it in its suite's list.h");
    free(text);
    return 0;
}
