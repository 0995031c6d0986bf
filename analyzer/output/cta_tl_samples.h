/* The timeline's host-activity tracks (cta_timeline.h says how they look), internal to it: per
 * sampled thread, a track "where the host was (tid N)" of complete events, each a run of the
 * thread's samples (THREAD_SAMPLE, FORMAT.md 4.12) that showed the same activity, worded as the
 * summary's lists word it (cta_hostact_describe), over the time they stand for (since the
 * thread's previous sample, at most CTA_TL_SAMPLE_MAX_NS). Runs, not samples: a sample every
 * few milliseconds per thread would be most of a long run's events. */
#ifndef CTA_TL_SAMPLES_H
#define CTA_TL_SAMPLES_H

#include "cta_tl_events.h"

/* As the summary's shares count them (cta_hostact.c, HA_MAX_US): a sampler that fell silent
 * does not make its last sample stand for the silence. */
#define CTA_TL_SAMPLE_MAX_NS 100000000ull

struct cta_tl_samples *cta_tl_samples_new(void);
void cta_tl_samples_free(struct cta_tl_samples *s);
/* A THREAD_SAMPLE record of p, after the model took it (cta_observer.on_record). */
void cta_tl_samples_record(cta_tl *t, const cta_proc *p, const ct_rec *r);
/* The runs still open, at the end. */
void cta_tl_samples_flush(cta_tl *t);

#endif
