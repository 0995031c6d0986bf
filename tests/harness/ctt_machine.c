/* The machine shared between suites (ctt.h, ctt_machine_*). Two locks machine-wide, in /tmp:
 * the machine itself (flock, shared by every running test, exclusive for one alone) and a
 * turnstile that a test waiting to be alone holds, so that no other test starts meanwhile
 * (flock lets new shared holders in past a waiting exclusive one, which would wait for ever
 * beside a suite of short tests). */
#define _GNU_SOURCE
#include "ctt.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

/* Opened by the runner before it forks a test, so that the test's process holds the same
 * lock (one open file description: the runner releases what the test took). */
static int ctt_machine_fd = -1, ctt_turn_fd = -1;
/* What this process holds: none, shared or alone (a test's process starts with the runner's),
 * and whether the runner holds it alone for a block of tests (ctt_machine_pin). */
static enum { CTT_NONE, CTT_SHARED, CTT_ALONE } ctt_held;
static int ctt_pinned;

void ctt_machine_pin(int pinned)
{
    ctt_pinned = pinned;
}

static int ctt_open_lock(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        fprintf(stderr, "%s: cannot open (%s): tests of this suite do not wait for other "
                "suites' tests\n", path, strerror(errno));
    return fd;
}

static void ctt_flock(int fd, int op)
{
    if (fd >= 0)
        while (flock(fd, op) != 0 && errno == EINTR)
            ;
}

void ctt_machine_shared(void)
{
    if (ctt_held == CTT_SHARED || ctt_pinned)
        return;
    if (ctt_held == CTT_ALONE) {
        /* not through the turnstile: a runner waiting there for its share would wait for this
         * test, which would wait for it */
        ctt_flock(ctt_machine_fd, LOCK_SH);
        ctt_held = CTT_SHARED;
        return;
    }
    if (ctt_machine_fd < 0) {
        ctt_machine_fd = ctt_open_lock(CTT_MACHINE_LOCK);
        ctt_turn_fd = ctt_open_lock(CTT_MACHINE_TURN);
    }
    ctt_flock(ctt_turn_fd, LOCK_EX);
    ctt_flock(ctt_machine_fd, LOCK_SH);
    ctt_flock(ctt_turn_fd, LOCK_UN);
    ctt_held = CTT_SHARED;
}

void ctt_machine_alone(void)
{
    if (ctt_held == CTT_ALONE)
        return;
    if (ctt_held == CTT_SHARED) {
        /* a test the runner started shared: waiting here for the other suites' current tests,
         * once per such test, is what the runner's block of alone tests is for */
        fprintf(stderr, "tests/harness: this test needs the machine alone (ctt_machine_alone, "
                "tr_cgroup_favour or _enter) but ran shared: expected TEST_ALONE(name) for it "
                "in its suite's list.h, found TEST_ENTRY\n");
        fflush(NULL);
        _exit(1);
    }
    if (ctt_held == CTT_NONE)
        ctt_machine_shared();
    /* the share let go first: two tests each waiting to be alone while holding it would wait
     * for each other */
    ctt_flock(ctt_machine_fd, LOCK_UN);
    ctt_flock(ctt_turn_fd, LOCK_EX);
    ctt_flock(ctt_machine_fd, LOCK_EX);
    ctt_flock(ctt_turn_fd, LOCK_UN);
    ctt_held = CTT_ALONE;
}

void ctt_machine_release(void)
{
    ctt_flock(ctt_machine_fd, LOCK_UN);
    ctt_held = CTT_NONE;
}
