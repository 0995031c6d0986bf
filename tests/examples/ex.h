/* Running PyTorch's own examples (EX_ROOT, read-only) through tests/examples/example.py, traced,
 * and the checks every verdict on them must pass whatever the program. */
#ifndef EX_H
#define EX_H

#include "pt.h"

/* Runs example NAME (EX_ROOT/NAME/main.py) with args (NULL-terminated) under `cutrace run` into
 * DIR (the test's tmpdir/NAME), as pt_run does, with FAKE_SIZE=fake (example.py: the datasets'
 * sizes) and extra env
 * (NULL-terminated, may be NULL); its working directory for checkpoints and images is the
 * test's tmpdir. Skips the test when EX_ROOT is absent. Returns 0, or nonzero after a message. */
int ex_run(ctt_proc *p, char dir[4096], const char *name, const char *fake, const char *const args[],
           const char *const env[]);

/* The bounds every finding keeps (issue 28 item 1): each saving at most its window; the
 * findings drawn from idle time (dataloader-starvation, gpu-gaps: their gaps, the loading with
 * what it is owed of gpu-gaps'; excessive-sync: the time the host was blocked) at most that,
 * and together at most the window. Returns 0, or
 * nonzero after a message naming the finding. */
int ex_bounds(const tj *summary);

/* The summary of the traces in dir (NULL after a message), checked with ex_bounds, with its
 * first finding in *lead (there must be one). */
tj *ex_verdict(const char *dir, const tj **lead);

/* Whether the finding's cause of loading (`cause`, from the host samples) is the one they
 * justify, with `running` loader workers at a time (0: the main process loads): when the loading
 * process was short of a core (on a CPU or waiting for one half the time or more per worker,
 * waiting 20% of its CPU time or more) and under 0.3 cores were free, `cpu-bound` and a fix that
 * says more workers will not help; more workers (`add-workers`, a fix naming num_workers) only
 * when it was not short of one. Returns 0, or nonzero after a message. */
int ex_loader_cause_fits(const tj *finding, int running);

/* Whether a finding's cause object lists the cause name ("cpu-bound"). */
int ex_has_cause(const tj *cause, const char *name);

/* The sum of the values after "KEY " on the lines of text that begin with prefix (imagenet's
 * own meters: "Data  0.123 ( 0.456)"); -1 if no line has them. */
double ex_sum_after(const char *text, const char *prefix, const char *key);

/* Whether text contains any of the |-separated words. */
int ex_names_any(const char *text, const char *words);

/* Of the finding's host_activity entries of who (NULL: the thread that fed the GPU's, without
 * "who"; "loader workers": the workers') in state (NULL: any; "running"), the share whose site
 * or frame contains any of the |-separated words; *listed (if not NULL) the share of all those
 * entries. */
double ex_share_naming(const tj *finding, const char *who, const char *state, const char *words,
                       double *listed);

#endif
