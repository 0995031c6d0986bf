/* NVTX ranges in the model (cta_nvtx.c): per range name, the host time of its instances and the
 * GPU work launched inside them; per repeating range, its iterations and the slowest of them;
 * the range each diagnosis happened in.
 *
 * Contract. A range covers the CUDA calls made, between its push (or start) and its pop (or
 * end), by the thread that pushed or started it: the GPU work of those calls is its GPU work,
 * as Nsight Systems projects ranges onto the GPU. A feature of the model (cta_feature.h,
 * cta_nvtx_feature): in record order, the NVTX_BEGIN and NVTX_RANGE records (files before format
 * 1.6 have no NVTX_BEGIN, so their ranges count with their host time only); a call's context
 * (ctx_ref) is the set of ranges open on its thread when it is made (0: none open), which the
 * call holds until it is dropped (ctx_unref) after its GPU interval, if any, was added
 * (call_gpu); a synchronization's blocked time goes to the ranges open on its thread (sync), an
 * event of a diagnosis to its call's (where). In time order (the sweep): each range's begin and
 * end points (point), a device's idle time with the thread that last called CUDA (idle), and the
 * class of each idle gap once decided (gap): a gap is in the innermost range that was open (on
 * that thread) for most of it.
 *
 * An instance is folded into its name's statistics once it has ended, every call inside it has
 * been dropped and the sweep has passed its end, so memory follows the ranges open or in flight,
 * not the trace's length. The finish hook folds the rest (a range never ended counts as open at
 * the end, until its process's last record). Everything is a no-op for a process without NVTX. */
#ifndef CTA_NVTX_H
#define CTA_NVTX_H

#include "cta_feature.h"
#include "cta_feature_slots.h"
#include "cta_out.h"

#include <stdio.h>


/* The pairing of NVTX_BEGIN with NVTX_RANGE records (FORMAT.md 4.8), one rule for the model
 * (cta_nvtx_begin, cta_nvtx_end) and the timeline's NVTX tracks, each keeping its own open
 * ranges. A push/pop range open on a thread (kind, domain, depth of its NVTX_BEGIN) lost its pop
 * when the thread begins another push/pop at its level or above in its domain: it ends there.
 * The NVTX_RANGE of a pop ends the innermost open one of its thread (start_tid) at its domain and
 * depth. A start/end range is ended by the NVTX_RANGE of its id; an id begun again ends the
 * first one there. */
static inline int cta_nvtx_pop_lost(uint32_t kind, uint32_t domain, uint32_t depth,
                                    const ct_rec_nvtx_begin *b)
{
    return kind == CT_NVTX_PUSH_POP && b->kind == CT_NVTX_PUSH_POP && domain == b->domain &&
           depth >= b->depth;
}
static inline int cta_nvtx_popped(uint32_t kind, uint32_t domain, uint32_t depth,
                                  const ct_rec_nvtx_range *e)
{
    return kind == CT_NVTX_PUSH_POP && e->kind != CT_NVTX_START_END && domain == e->domain &&
           depth == e->depth;
}


/* The feature (defined in cta_nvtx_report.c, with the renderings) and its hooks (cta_nvtx.c). */
extern const cta_feature cta_nvtx_feature;
void cta_nvtx_record(cta_model *m, cta_proc *p, const ct_rec *r);
uint32_t cta_nvtx_ref(cta_proc *p, cta_thread *th);
void cta_nvtx_unref(cta_model *m, cta_proc *p, uint32_t set);
void cta_nvtx_call_gpu(cta_model *m, cta_proc *p, uint32_t set, uint64_t start, uint64_t end,
                       int kernel, uint64_t start_late, uint64_t end_early);
void cta_nvtx_sync(cta_model *m, cta_proc *p, cta_thread *th, uint64_t ns);
void cta_nvtx_where(cta_model *m, cta_proc *p, uint32_t set, int kind, uint64_t ns);
void cta_nvtx_idle(cta_model *m, cta_proc *p, int dev, uint32_t tid, uint64_t ns);
void cta_nvtx_gap(cta_model *m, cta_proc *p, int dev, const cta_gap_parts *g);
void cta_nvtx_point(cta_model *m, cta_proc *p, const cta_pt *pt);
void cta_nvtx_finish(cta_model *m, cta_proc *p);
void cta_nvtx_merge(cta_model *dst, cta_model *src);
void cta_nvtx_proc_free(cta_proc *p);
void cta_nvtx_free(cta_model *m);

enum { CTA_NVTX_KIDS = 8, CTA_NVTX_SLOW = 5 };

/* One instance as the per-iteration view shows it (the slowest ones of a repeating range). */
typedef struct {
    uint64_t start, dur, seq;      /* seq: its number among its range's instances, from 1 */
    uint32_t pid;
    uint64_t gpu_ns, kern_ns, span_ns, sync_ns, self_ns; /* self: outside its child ranges */
    uint64_t span_lo_ns;           /* the projected span at least (span_ns: at most) */
    uint32_t kid_group[CTA_NVTX_KIDS];
    uint64_t kid_ns[CTA_NVTX_KIDS];
    int nkids;
} cta_nvtx_step;

/* Per range name (domain and normalized message), over every process. */
typedef struct {
    cta_sketch host;               /* instances' durations (ended ones) */
    cta_sketch span;               /* their projected GPU spans (those with GPU work): from
                                    * the records, an upper bound where an end was bounded or
                                    * a start began inside its call */
    uint64_t span_lo;              /* the spans' sum at least (cta_nvtx_gpu) */
    uint64_t span_bounded;         /* instances whose span is not known exactly */
    uint64_t kern_ns, gpu_ns, ops; /* kernels' GPU time, all GPU operations' time, operations */
    uint64_t open_at_end, open_ns; /* never ended: how many, their time until the trace's end */
    uint64_t top;                  /* instances with no range around them on their thread */
    uint64_t with_gpu;             /* instances with GPU work */
    int kinds;                     /* 1 push/pop, 2 start/end seen */
    int unprojected;               /* some instances came without NVTX_BEGIN (files before 1.6) */
    /* Per-iteration view: the slowest instances and the distribution of each part of an
     * instance (child ranges: of the first NV_TRACKED_GROUPS groups that have any) */
    cta_nvtx_step slow[CTA_NVTX_SLOW];
    int nslow;
    int kid_track;                 /* components tracked: 0 not yet, 1 yes, -1 past the bound */
    uint32_t kid_group[CTA_NVTX_KIDS];
    cta_sketch kid[CTA_NVTX_KIDS], sync, self; /* per ended instance (kid, sync: 0 not kept) */
    int nkids;
} cta_nvtx_group;

/* Events of one kind in one range (its innermost): the two outermost ranges open around it
 * (group index + 1; the range itself where none was) and which of their instances. */
typedef struct {
    uint64_t ns, n;                /* events' time (gap or call time), and how many */
    uint32_t outer[2];
    uint64_t seq_min[2], seq_max[2];
} cta_nvtx_place;

struct cta_nvtx_model {
    cta_map names;                 /* "domain\x1fmessage" -> group index */
    cta_nvtx_group *g;
    size_t cap;
    /* per (where kind, group, process): index in place */
    cta_map where;                 /* key {kind, group, process's file index} */
    cta_nvtx_place *place;
    size_t place_cap;
};

/* The model's ranges (NULL: none, or the feature is not plugged). */
static inline struct cta_nvtx_model *cta_nvtx_of(const cta_model *m)
{
    return m->feat[CTA_FEAT_NVTX];
}
static inline const char *cta_nvtx_group_name(const cta_model *m, uint32_t g)
{
    return cta_map_key(&cta_nvtx_of(m)->names, g);
}
/* The name shown for group g: its message; with its domain first ("domain: message") when it
 * is not the default one. Into buf. */
const char *cta_nvtx_display(const cta_model *m, uint32_t g, char *buf, size_t len);
/* Where p's events of kind happened: the range (group) holding most of their time (*share of
 * all of them), with the ranges around it. NULL if no range held any. */
const cta_nvtx_place *cta_nvtx_where_best(const cta_model *m, const cta_proc *p, int kind,
                                          uint32_t *group, double *share);
/* The median of a component over n instances, of which s->count had it (the others: 0). */
uint64_t cta_nvtx_median(const cta_sketch *s, uint64_t n);
/* Groups ordered for the tables: by host time, descending. Returns how many (*out: malloc'd). */
size_t cta_nvtx_order(const cta_model *m, uint32_t **out);

/* ---- the summary's renderings (cta_nvtx_report.c) ---- */
/* The per-range table and the per-iteration views (nothing without NVTX ranges). */
void cta_nvtx_text(FILE *f, const cta_model *m, int top);
/* JSON.md "nvtx". */
void cta_nvtx_json(cta_json *j, const cta_model *m);
/* Where p's events of a diagnosis (kind CTA_WHERE_*) happened, for people: "in NVTX range
 * `data_load` (97% of it), instances 3-20 of `train_step`". 0 (w unset) if in no range. */
typedef struct {
    char range[200], outer[200];   /* outer: "" where no range around it repeats */
    double share;
    uint64_t first, last;          /* which of outer's instances */
    char text[600];
} cta_nvtx_where_info;
int cta_nvtx_where_text(const cta_model *m, const cta_proc *p, int kind, cta_nvtx_where_info *w);

#endif
