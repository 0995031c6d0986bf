/* Helpers of the tracer suite: run a program under `cutrace run` on the simulated CUDA stack,
 * then load the traces it wrote through the trace format's reader and query the records. */
#ifndef TR_H
#define TR_H

#include <glob.h>

#include "ctt.h"
#include "cttrace.h"

/* One record of a loaded trace, with its names resolved: API -> the function; LAUNCH -> the
 * kernel (demangled) and symbol (mangled, or the same); GRAPH of a kernel node -> the kernel
 * (demangled); THREAD -> the thread name; DEVICE -> the device name; THREAD_SAMPLE -> the API
 * function it was inside (NULL: none); NVTX_RANGE, NVTX_MARK and NVTX_BEGIN -> name, symbol:
 * the normalized name (group), domain (NULL for id 0). API, MEM and THREAD_SAMPLE records with
 * a stack: "function@module;" per frame, innermost first ("function@file:line;" for a Python
 * frame). */
typedef struct {
    ct_rec r;
    char *name;
    char *symbol;
    char *stack;
    char *domain;
} tr_rec;

typedef struct {
    tr_rec *v;
    size_t n, cap;
    size_t nfiles;
    size_t nstrings;  /* STRING definitions read */
    char **paths;
    uint32_t pids[64];
    ct_stats stats[64];
} tr_trace;

/* Runs `build/bin/cutrace run -o OUTDIR [opts...] -- cmd...` with the simulation first on
 * LD_LIBRARY_PATH, the workloads' host kernels, and `env` (NULL-terminated, may be NULL).
 * opts is NULL-terminated (may be NULL). */
int tr_run(ctt_proc *p, const char *outdir, char *const opts[], char *const cmd[],
           char *const env[], int timeout_s);
/* Runs cmd with libcutrace in LD_PRELOAD and CUTRACE_OUTPUT=outdir (no `cutrace run`), on the
 * simulation like tr_run, plus env (NULL-terminated, may be NULL). */
int tr_run_preloaded(ctt_proc *p, const char *outdir, char *const cmd[], char *const env[],
                     int timeout_s);
/* stdout of `cutrace ARGS...` (NULL-terminated, e.g. "summary", dir), malloc'd; NULL after
 * failing the test (it did not exit 0). */
char *tr_analyze(char *const args[]);
/* The process exited with status `want`; otherwise fails showing its stderr. */
#define TR_ASSERT_EXIT(p, want)                                                          \
    do {                                                                                 \
        if (!(p).exited || (p).code != (want)) {                                         \
            ctt_fail_at(__FILE__, __LINE__, "expected exit status %d, found %s %d; "  \
                            "stderr:\n%s", (want), (p).exited ? "status" : "signal",    \
                            (p).code, (p).err);                                          \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

/* Path of build/tests/workloads/NAME (static buffer per call site use). */
const char *tr_workload(char buf[4096], const char *name);
/* Loads every *.cutrace file in dir (time-merged). 0, or -1 after printing why. */
int tr_load(tr_trace *t, const char *dir);
void tr_free(tr_trace *t);
/* Records of `type` whose name is `name` (NULL: any); for API also counts by name. */
size_t tr_count(const tr_trace *t, uint32_t type, const char *name);
/* The result of the first API record named `name`, or -1 if there is none. */
long long tr_result(const tr_trace *t, const char *name);
/* The API record with this correlation id, or NULL. */
const tr_rec *tr_api(const tr_trace *t, uint64_t corr);
/* Of GPU record g, the time from its start to its call's return (0 if it began after it, or
 * without an API record): an operation on an idle stream is recorded from the call's
 * submission and began somewhere in that time. *call: g's API record, or NULL. */
uint64_t tr_in_call_ns(const tr_trace *t, const ct_rec *g, const tr_rec **call);
/* The first line of text starting with `prefix`, up to its end (static buffer), or "". */
const char *tr_line(const char *text, const char *prefix);
/* Writes text into the file dir/file (created or truncated); 0 or -1. */
int tr_put(const char *dir, const char *file, const char *text);
/* The integer value of " key=" on a line, or -1. */
long long tr_value(const char *line, const char *key);

/* The CPython 3.8-3.13 interpreters installed (/usr/bin, pyenv) into g; skips the test if none. */
void tr_pythons(glob_t *g);

/* Thread samples (THREAD_SAMPLE, FORMAT.md 4.12) against a program's own clock: programs that
 * time known phases print one line "PREFIX phase NAME START END" each (CLOCK_MONOTONIC ns, the
 * trace's clock). */
#define TR_PHASES 64
typedef struct {
    char name[16];
    uint64_t start, end;
} tr_phase;

/* The lines "PREFIX phase NAME START END" of out; their count. */
size_t tr_phases_of(const char *out, const char *prefix, tr_phase *v);
/* What a sample of the thread was doing, as the test names the phases; NULL: none of them. */
typedef const char *(*tr_classify_fn)(const tr_rec *x, const void *ctx);

/* Over the span of the phases, what the samples of thread tid say it did (cls names a phase, or
 * none) against what the program's clock says. A sample stands for the time from midway after
 * the thread's previous sample to midway before its next (FORMAT.md 4.12: a sampler descheduled
 * on a busy machine, as it is most while the thread it samples keeps a CPU busy, takes fewer
 * samples, each standing for longer). Each phase's share of that sampled time is the share of
 * it whose instant fell in the phase by the program's clock, within 5 points; and the phase's
 * share of the span by the samples is its share by the clock within 10 (a machine that stops the
 * program and the sampler together, as an overloaded one does for hundreds of milliseconds,
 * moves the samples' account by that time, the clock's not). At least one sample per 10 ms of
 * the span. Prints the shares. */
int tr_sample_shares(const tr_trace *t, uint32_t tid, const tr_phase *ph, size_t nph,
                     tr_classify_fn cls, const void *ctx, const char *label);

/* Skips the test (ctt_skip, saying why) unless the trace in dir was sampled with perf_event: its
 * tracer's option native_samples= (FORMAT.md 4.12) says perf, or what failed and why. */
void tr_skip_without_perf(const char *dir);

#endif
