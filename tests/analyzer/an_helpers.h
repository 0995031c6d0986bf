/* What the analyzer's tests share: generating synthetic traces with tracegen, running cutrace
 * (the sanitizer build when the tests themselves are built with sanitizers) and reading its
 * JSON. */
#ifndef AN_HELPERS_H
#define AN_HELPERS_H

#include "ctt.h"
#include "tjson.h"

/* Path of the cutrace binary under test. */
const char *an_cutrace(void);
/* Runs tracegen -o DIR ARGS (space-separated) into a fresh directory under the test's tmpdir;
 * returns DIR (static storage per call site is the caller's: copy it) or NULL on failure. */
const char *an_gen(char dir[4096], const char *name, const char *args);
/* The same, with tracegen's stdout (its "tracegen: key=value" lines) in *out (free it). */
const char *an_gen_out(char dir[4096], const char *name, const char *args, char **out);
/* Writes len bytes of text into the file name of the test's tmpdir, its path into path; returns
 * path, or NULL on failure. */
const char *an_write_tmp(char path[4096], const char *name, const char *text, size_t len);
/* The file of dir whose name starts with prefix "--" (the Kineto traces of ../shared/data/
 * kineto-hta keep their original folder so), its path into path: 0, or -1 when none is there. */
int an_prefixed_file(char path[4096], const char *dir, const char *prefix);
/* Runs `cutrace ARGS` (space-separated; "{}" is replaced by path); p is filled. */
int an_run(ctt_proc *p, const char *args, const char *path);
/* `cutrace summary --json EXTRA PATH`, parsed; NULL (with the reason printed) on failure. */
tj *an_summary(const char *path, const char *extra);
/* `cutrace timeline PATH -o FILE` (FILE in the test's tmpdir), parsed; NULL (with the reason
 * printed) on failure. */
tj *an_timeline(const char *path);
/* The first diagnosis with this id, or NULL. */
const tj *an_diag(const tj *summary, const char *id);
/* Number of diagnoses with this id. */
int an_diag_count(const tj *summary, const char *id);

/* The diagnosis `id` must fire on a trace generated with `bad` and stay silent on one generated
 * with `good`: returns the bad trace's summary (tj_free it), or NULL after printing which check
 * failed. */
tj *an_fires(const char *id, const char *bad, const char *good);

/* Traces a workload (build/tests/workloads/PROG ARGS, space-separated; a PROG with an absolute
 * path, such as an interpreter given a script, is run as is) with `cutrace run
 * --gpu-timing all` on the simulated CUDA into DIR (under the test's tmpdir), with extra env
 * ("NAME=value" list, NULL-terminated, may be NULL; CUTRACE_GPU_TIMING=MODE there replaces
 * `all`). Returns DIR, or NULL when the program did
 * not exit 0 (the trace is still in DIR); *out gets the program's stdout (free it). Skips the
 * test (ctt_skip) when the tracer or the workloads are not built. */
const char *an_trace_workload(char dir[4096], const char *name, const char *prog_args,
                              char *const *env, char **out);
/* The same, also giving the tracer's and the program's stderr in *err (free it). */
const char *an_trace_workload_err(char dir[4096], const char *name, const char *prog_args,
                                  char *const *env, char **out, char **err);
/* The line of the script at path whose comment is "# cutrace: <what>" (how the Python tests know
 * the line a call site must name), 0 if none. */
int an_marker_line(const char *path, const char *what);
/* In `cutrace dump` text: marks in sampled[id] (n of them, cleared first) the stacks THREAD_SAMPLE
 * records name (FORMAT.md 4.12): where a thread was, not a call's site. */
void an_sampled_stacks(const char *dump, unsigned char *sampled, size_t n);
/* Runs the workload as an_trace_workload does, traced into DIR or (traced 0) not; p gets how
 * it ended and its outputs. Returns 0, or -1 if it could not be started. */
int an_run_workload(ctt_proc *p, char dir[4096], const char *name, const char *prog_args,
                    char *const *env, int traced);
#endif
