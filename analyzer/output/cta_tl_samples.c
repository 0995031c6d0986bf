/* The timeline's host-activity tracks (cta_tl_samples.h). */
#include "cta_tl_samples.h"

#include <stdlib.h>
#include <string.h>

#include "cta_hostact.h"
#include "cta_out.h"

/* Between the threads' own tracks and the NVTX tracks (cta_tl_nvtx.c, 500000000). */
#define SAMPLE_TID_BASE 400000000u

/* A thread's open run: its samples since `from` showed `text`. */
typedef struct {
    const cta_proc *p;
    uint32_t tid;
    uint64_t from, to, last; /* the run; the thread's previous sample (0: none yet) */
    uint32_t samples, read;  /* in the run; whether its frames were read */
    int named, worker;       /* worker: a loader worker's (tid its pid) */
    char text[700];
} tl_run;

struct cta_tl_samples {
    cta_map threads; /* (file, tid) -> index in run */
    tl_run *run;
    size_t cap;
};

struct cta_tl_samples *cta_tl_samples_new(void)
{
    struct cta_tl_samples *s = cta_xmalloc(sizeof *s, "the timeline's host-activity tracks");
    memset(s, 0, sizeof *s);
    cta_map_init(&s->threads);
    return s;
}

void cta_tl_samples_free(struct cta_tl_samples *s)
{
    cta_map_free(&s->threads);
    free(s->run);
    free(s);
}

static void emit(cta_tl *t, uint32_t idx, tl_run *r)
{
    if (!r->samples || r->to <= r->from || !cta_tl_in_window(t, r->from, r->to) ||
        !cta_tl_room(t, r->from, r->named ? 1 : 3))
        return;
    uint64_t track = SAMPLE_TID_BASE + idx;
    if (!r->named) {
        char name[64];
        snprintf(name, sizeof name, r->worker ? "where loader worker pid %u was"
                                              : "where the host was (tid %u)", r->tid);
        cta_tl_track_meta(t, r->p, track, name);
        r->named = 1;
    }
    cta_tl_ev_open(t, "X", r->p, track, r->from);
    cta_tl_put_us(t->f, "dur", r->to - r->from, 0);
    cta_put_str(t->f, ",\"cat\":\"host_sample\"");
    cta_tl_str_field(t, "name", r->text);
    fprintf(t->f, ",\"args\":{\"samples\":%u%s}}", r->samples,
            r->read ? "" : ",\"unread\":\"the thread's frames changed as they were read\"");
}

void cta_tl_samples_record(cta_tl *t, const cta_proc *p, const ct_rec *r)
{
    struct cta_tl_samples *s = t->samples;
    uint32_t key[2] = {p->file, r->u.thread_sample.tid};
    int added;
    uint32_t i = cta_map_get(&s->threads, key, sizeof key, &added);
    if (added) {
        cta_grow(&s->run, &s->cap, i + 1, sizeof *s->run);
        memset(&s->run[i], 0, sizeof s->run[i]);
        s->run[i].p = p;
        s->run[i].tid = key[1];
        s->run[i].worker = !!(r->u.thread_sample.flags & CT_TS_WORKER);
    }
    tl_run *run = &s->run[i];
    char text[sizeof run->text];
    int read = cta_hostact_describe(t->m, p, &r->u.thread_sample, text, sizeof text);
    uint64_t from = !run->last ? r->ts
                    : r->ts - run->last > CTA_TL_SAMPLE_MAX_NS ? r->ts - CTA_TL_SAMPLE_MAX_NS
                                                                : run->last;
    run->last = r->ts;
    if (run->samples && from == run->to && !strcmp(text, run->text)) {
        run->to = r->ts;
        run->samples++;
        return;
    }
    emit(t, i, run);
    run->from = from;
    run->to = r->ts;
    run->samples = 1;
    run->read = (uint32_t)read;
    memcpy(run->text, text, sizeof text);
}

void cta_tl_samples_flush(cta_tl *t)
{
    for (size_t i = 0; i < cta_map_count(&t->samples->threads); i++)
        emit(t, (uint32_t)i, &t->samples->run[i]);
}
