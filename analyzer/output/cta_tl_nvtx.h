/* The timeline's NVTX tracks (cta_timeline.h says how they look), internal to it: ranges as
 * complete events on tracks per thread and domain, start/end ranges on rows of their own when
 * they overlap, marks as instant events, ranges that never ended drawn until their process's
 * last record. */
#ifndef CTA_TL_NVTX_H
#define CTA_TL_NVTX_H

#include "cta_tl_events.h"

#define CTA_TL_NVTX_ROWS 256 /* rows of a start/end track (ranges open at once in a thread) */

struct cta_tl_nvtx *cta_tl_nvtx_new(void);
void cta_tl_nvtx_free(struct cta_tl_nvtx *nv);
/* An NVTX_BEGIN, NVTX_RANGE or NVTX_MARK record of p, as the model gives it (cta_observer). */
void cta_tl_nvtx_record(cta_tl *t, cta_proc *p, const ct_rec *r);
/* The ranges of p that never ended, until its last record. */
void cta_tl_nvtx_never_ended(cta_tl *t, cta_proc *p);

#endif
