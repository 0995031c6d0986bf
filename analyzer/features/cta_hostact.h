/* Where the host was while the GPU sat idle (issue 28): the tracer's thread samples
 * (THREAD_SAMPLE, FORMAT.md 4.12: every few milliseconds, each thread that called CUDA, its
 * Python frames or its last call's native stack, its scheduler state, the CUDA call it was in)
 * of the thread that last fed the GPU, counted per device and per cause of the idle time (the sweep's
 * gap causes: a gap after a synchronization in its two parts, by the samples' instants). The
 * output says, for each cause, what that thread was doing as a short list by share of the
 * samples: the user's Python line and the innermost frame under it (a framework's function
 * folded into the user's line that led to it), the CUDA call it was in, "waiting for the
 * DataLoader" (sleeping inside torch.utils.data), and the scheduler state. Beside it, for the
 * data-loading cause, the loader workers' own samples (CT_TS_WORKER: forked workers sampled by
 * their parent), together, folded the same way, each frame led by the stage of the loading it
 * is in (the Dataset's __getitem__, the collate function): what the batches waited for.
 *
 * Contract: a feature of the table (cta_features.c); reads THREAD_SAMPLE records; its output is
 * through the gap hooks of cta_feature.h (cta_feature_gap_text, _gap_json), which the summary's
 * breakdown and the findings drawn from one cause call, each for the gaps of a span (cta_span:
 * a steady state's finding its gaps, a start-up's finding its own, the breakdown all: the
 * samples' time is kept per gap for that, HA_MAX_LOG entries at most). A trace without samples
 * shows nothing. The timeline shows each sample at its instant. */
#ifndef CTA_HOSTACT_H
#define CTA_HOSTACT_H

#include "cta_feature.h"

extern const cta_feature cta_hostact_feature;

/* What thread sample s of p shows, as the summary's lists word one activity ("in CALL at SITE
 * <- FRAME (STATE)"), into out; 0 (and a text saying so) when its frames could not be read. For
 * the timeline, after the model has taken the sample. */
int cta_hostact_describe(const cta_model *m, const cta_proc *p, const ct_rec_thread_sample *s,
                         char *out, size_t n);

#endif
