/* Helpers of the fault-injection suite (tests/faults): run a program traced (under `cutrace
 * run`, or with libcutrace preloaded directly when its pid must be known) and untraced on the
 * simulated CUDA stack, and compare what it printed and how it ended. Traces are read with the
 * tracer suite's tr_load (tests/tracer/tr.h). */
#ifndef FL_H
#define FL_H

#include "tr.h"

/* Path of build/tests/faults/victim (see victim.c). */
const char *fl_victim(char buf[4096]);
/* Runs cmd untraced with the simulation's environment plus env (NULL-terminated, may be NULL). */
int fl_plain(ctt_proc *p, char *const cmd[], char *const env[], int timeout_s);
/* Fails the test unless a and b ended the same way and printed the same stdout, ignoring the
 * "t_ms=" clock readings victim prints. */
#define FL_ASSERT_SAME(a, b) \
    do { \
        if (fl_differ(&(a), &(b))) \
            return 1; \
    } while (0)
int fl_differ(const ctt_proc *a, const ctt_proc *b);
/* Starts cmd with libcutrace preloaded (CUTRACE_OUTPUT=outdir), stdout to the file out; returns
 * its pid (the caller waits) or -1. */
pid_t fl_spawn_traced(char *const cmd[], const char *outdir, const char *out);
/* API records named `name` in file `file` of t (file -1: all). */
size_t fl_count(const tr_trace *t, int file, const char *name);
/* The END record of file `file`, or NULL. */
const ct_rec *fl_end(const tr_trace *t, uint32_t file);

#endif
