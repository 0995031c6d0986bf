/* The overview: the busiest stretch of a run as at most N slices, for a report's zoomable
 * timeline (JSON `overview`, analyzer/JSON.md).
 *
 * A slice is a top-level API call (not nested in another call) on its host thread's track, a
 * GPU interval (kernel, copy, set) on its stream's track, or an NVTX range (not an unmatched pop
 * or end) on the track of the thread that started it. The stretch is found in a pass over the
 * raw records (cta_overview_find): the shortest span [start, end] in which N slices end (records
 * come in the order of their time, a slice's end), O(1) per record with a ring of the last N
 * ends; a run with fewer than N slices is its own stretch, from its first slice's start to its
 * last one's end. The model pass then observes the slices (cta_overview_observer: attach it to
 * the pass that builds the model, so no further pass is made) and keeps those that overlap the
 * stretch (end >= start, start <= end). They are N and the slices open at the stretch's end, so
 * usually a few more: then only the N that start first are kept (a max-heap by start), the
 * stretch ends just before the first start left out (end = that start - 1) and is marked
 * truncated. The slices kept are exactly those overlapping the (cut) stretch, none twice.
 *
 * Memory: the search holds each file's slice ends (a few bytes each: 2 to 3 for ends microseconds
 * apart) and the decoding of `jobs` files at once; then it is bounded by N (the ring; the heap,
 * whose slices point at names the model and the reader keep; the tracks and names interned when
 * the JSON is written). */
#ifndef CTA_OVERVIEW_H
#define CTA_OVERVIEW_H

#include "cta_model.h"
#include "cta_out.h"

/* Slice categories, as the JSON writes them */
enum { CTA_OV_API, CTA_OV_KERNEL, CTA_OV_MEMCPY, CTA_OV_MEMSET, CTA_OV_SYNC, CTA_OV_ALLOC,
       CTA_OV_NVTX };

typedef struct cta_overview cta_overview;

/* Reads the traces in paths once (the format library's reader, no model; `jobs` files at once,
 * each file's slice ends kept in a few bytes a slice, then merged in time order) and returns the
 * overview of at most n (>= 1) slices to fill, with its stretch found; NULL after printing why
 * when the files cannot be read. The stretch depends on the ends' values alone, so not on jobs. */
cta_overview *cta_overview_find(const char *cmd, char *const *paths, int npaths, uint32_t n, int jobs);
/* A file's part of o (cta_load_run_jobs): the same stretch and bound, no slice yet; merged into
 * o (as if its slices had been observed by o after o's own) with cta_overview_merge, once the
 * file's partial model is merged into m (the slices then name m's kernels). */
cta_overview *cta_overview_part(const cta_overview *o);
void cta_overview_merge(cta_overview *o, const cta_overview *part, const cta_model *m);
/* The observer that collects the stretch's slices during the model pass (its ctx is o). */
cta_observer cta_overview_observer(cta_overview *o);
/* Writes `"overview": {...}` (times relative to m->t0) into the open JSON object. */
void cta_overview_json(cta_json *j, const cta_model *m, const cta_overview *o);
void cta_overview_free(cta_overview *o);

#endif
