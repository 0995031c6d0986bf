/* CUDA graph checks the tracer and nvrt suites share: the simulation's ground truth
 * (FAKECUDA_TRUTH, tests/fakecuda/driver/README.md) and a trace of tests/workloads/graph_built
 * checked against it and against what the program states it does. */
#ifndef GR_TRUTH_H
#define GR_TRUTH_H

#include <stddef.h>
#include <stdint.h>

/* One FAKECUDA_TRUTH line: a kernel, copy or set executed (kind "kernel", "copy", "set") in
 * process pid, by graph launch `graph` of its thread (0: not by a graph launch) as node idx of the launch,
 * else as its thread's idx-th. */
typedef struct {
    int64_t start, end;
    int pid;
    uint32_t tid;
    uint64_t idx, graph;
    char kind[8];
} gr_truth;

/* Every line of the truth file at path (*out: free it); 0 if none or unreadable. */
size_t gr_read_truth(const char *path, gr_truth **out);

/* A trace of graph_built in dir, whose run wrote the truth file at truth: every graph launch's
 * kernels (by name, from the timeline), copies and sets are those the truth says it executed
 * and the program says it ran; the summary counts each kernel, copy and set exactly, none
 * timed. 0, or 1 after failing the test. */
int gr_built_check(const char *dir, const char *truth);

#endif
