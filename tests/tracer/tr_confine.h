/* Confining what a test runs, as a batch job or a container is: a cgroup of its own limited to
 * half a CPU, which this process enters (its children inherit it) and leaves. The cgroup is
 * favoured over everything else on the machine (the highest CPU weight), so that a test of how
 * its own processes share the cores is not blurred by other work there: the limited one gets its
 * half CPU whenever it can use it (and is throttled, as the tests expect, rather than starved by
 * other work), and an unlimited one, for tests that need the cores alone, gets a core whenever
 * its processes can use one. The hierarchies are looked for where systemd mounts them,
 * /sys/fs/cgroup (v1 cpu, with cpuacct where mounted apart, or v2 with the cpu controller
 * enabled). No cgroup weight holds off another suite's test, run at once (tests/run.sh): its
 * simulated devices run at real-time priority, and two favoured tests would contend as equals.
 * So a confined or favoured test also needs the machine alone (ctt_machine_alone: listed
 * TEST_ALONE, ctt.h), whether or not the cgroup could be made; one favoured only to finish
 * within its time limit is not (tr_cgroup_hasten). */
#ifndef TR_CONFINE_H
#define TR_CONFINE_H

#include "ctt.h"

typedef struct {
    int v2;
    char dir[2][320];  /* the cpu controller's cgroup; v1: cpuacct's when mounted apart */
    char back[2][320]; /* where this process was */
} tr_cgroup;

/* Makes the cgroup, limits it to 0.5 CPU and moves this process into it; ctt_skip (the test
 * counted as skipped) when the machine cannot: not root, no cpu controller there. */
void tr_cgroup_enter(tr_cgroup *g);
/* Makes the cgroup without a limit and moves this process into it: 1, or 0 when the machine
 * cannot (not root, no cpu controller), which it says on stderr; the test then runs as it
 * would have. The weight: v1 cpu.shares 262144, v2 cpu.weight 10000 (256 and 100 times the
 * default). */
int tr_cgroup_favour(tr_cgroup *g);
/* The same for a test whose verdict does not depend on how its processes share the cores, only
 * its run time on a busy machine (host kernels): the machine is not asked alone. */
int tr_cgroup_hasten(tr_cgroup *g);
/* Moves this process back where it was and removes the cgroup (nothing if it was not made). */
void tr_cgroup_leave(tr_cgroup *g);

#endif
