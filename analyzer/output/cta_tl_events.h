/* The timeline's JSON events (cta_timeline.h), internal to it: its state and the writing of one
 * event, shared by cta_timeline.c (processes, calls, GPU work, counters), cta_tl_nvtx.c (the
 * NVTX tracks) and cta_tl_samples.c (the host-activity tracks). */
#ifndef CTA_TL_EVENTS_H
#define CTA_TL_EVENTS_H

#include <stdio.h>

#include "cta_map.h"
#include "cta_model.h"

typedef struct {
    FILE *f;
    int first;
    uint64_t base;               /* ns mapped to ts 0 */
    uint64_t from, to;           /* window, ns on the trace axis (to 0: no end) */
    long pid;                    /* -1: all */
    cta_map streams;              /* (file, device, stream) -> index */
    cta_map stream_devs;          /* (file, device) -> index in stream_n */
    uint32_t *stream_n;           /* streams named so far on each: the next one's number */
    size_t stream_n_cap;
    uint64_t events;
    uint64_t max_events;         /* 0: no limit */
    uint64_t stopped_at;         /* time of the first event left out (0: none) */
    uint64_t flows;              /* flow ids handed out */
    int driver_calls;            /* also driver calls nested in runtime calls */
    const cta_model *m;          /* names the stacks */
    cta_map stacks;              /* (file, stack index) -> index in stack_text */
    char **stack_text;           /* site\0stack of each, resolved once */
    size_t stack_cap;
    struct cta_tl_nvtx *nv;      /* the NVTX tracks (cta_tl_nvtx.h) */
    uint64_t nvtx_crowded;       /* start/end ranges left out: CTA_TL_NVTX_ROWS rows were busy */
    struct cta_tl_samples *samples; /* the host-activity tracks (cta_tl_samples.h) */
} cta_tl;

static inline int cta_tl_keep_proc(const cta_tl *t, const cta_proc *p) { return t->pid < 0 || (long)p->pid == t->pid; }

static inline int cta_tl_in_window(const cta_tl *t, uint64_t a, uint64_t b)
{
    return b >= t->from && (!t->to || a <= t->to);
}


/* Whether n events at ts (one item: a GPU interval with its counters and flow) still fit under
 * --max-events; the first item that does not marks where the timeline stops (items come in time
 * order), and nothing after it is written. */
int cta_tl_room(cta_tl *t, uint64_t ts, uint64_t n);
/* ,"key":V with V the nanoseconds `neg ? -ns : ns` in microseconds, without trailing zeros. */
void cta_tl_put_us(FILE *f, const char *key, uint64_t ns, int neg);
/* Opens one event object: {"ph":PH,"pid":..,"tid":..,"ts":..  (the caller adds the rest). */
void cta_tl_ev_open(cta_tl *t, const char *ph, const cta_proc *p, uint64_t tid, uint64_t ts);
/* ,"key":"v" (escaped). */
void cta_tl_str_field(cta_tl *t, const char *key, const char *v);
/* A metadata event: what ("process_name", "thread_name") of (p, tid) is name. */
void cta_tl_meta(cta_tl *t, const cta_proc *p, uint64_t tid, const char *what, const char *name);
/* Names a track of the timeline's own (not an OS thread) and sorts it by its tid: NVTX tracks
 * after the host threads, stream tracks last. */
void cta_tl_track_meta(cta_tl *t, const cta_proc *p, uint64_t tid, const char *name);

#endif
