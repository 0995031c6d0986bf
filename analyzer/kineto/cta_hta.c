/* Each rule below is HTA's (analyzer/KINETO.md numbers them); where HTA's pandas code has an
 * edge (intervals rounded to a negative length, a filter that keeps nothing) the arithmetic
 * follows it rather than what would look tidier. */
#include "cta_hta.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cta_map.h"

typedef struct {
    int64_t ts, end, corr;
    uint8_t gpu;     /* HTA's "GPU event": stream >= 0 and correlation >= 0, or a sync */
    uint8_t compute; /* rule 6 */
} row;

struct cta_hta {
    row *rows; /* the events with a stream (rule 4) */
    size_t n, cap;
    cta_map corr;    /* correlation of a CPU event -> index into cpu_ts */
    int64_t *cpu_ts; /* earliest start of the CPU events with that correlation */
    size_t cpu_cap;
    char *step_name; /* the first name containing "ProfilerStep" (rule 3) */
    int step_names;  /* distinct such names, counted to 2 */
    int64_t last_step;
    int has_last_step;
};

cta_hta *cta_hta_new(void)
{
    cta_hta *h = cta_xmalloc(sizeof *h, "HTA breakdown");
    cta_map_init(&h->corr);
    return h;
}

void cta_hta_free(cta_hta *h)
{
    if (!h)
        return;
    free(h->rows);
    free(h->cpu_ts);
    free(h->step_name);
    cta_map_free(&h->corr);
    free(h);
}

/* Does the first line of s contain w (HTA's `.*w` under re.match: '.' stops at a newline)? */
static int line_has(const char *s, const char *w)
{
    size_t line = strcspn(s, "\n");
    const char *p = strstr(s, w);
    return p && (size_t)(p - s) + strlen(w) <= line;
}

static int starts(const char *s, const char *w) { return strncmp(s, w, strlen(w)) == 0; }

int cta_hta_is_compute(const char *n)
{
    /* HTA 0.5.0's hta/utils/utils.py: communication ^nccl.*Kernel, memory (^Memcpy)|(^Memset)|
     * (^dma), and not compute (^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync): the grouping
     * there makes Memset count only at the start */
    if (starts(n, "nccl") && line_has(n + 4, "Kernel"))
        return 0;
    if (starts(n, "Memset") || starts(n, "dma"))
        return 0;
    return !line_has(n, "Memcpy") && !line_has(n, "Sync");
}

static void note_step_name(cta_hta *h, const char *s)
{
    if (h->step_names >= 2 || !strstr(s, "ProfilerStep"))
        return;
    if (!h->step_name) {
        h->step_name = cta_xmalloc(strlen(s) + 1, "ProfilerStep name");
        strcpy(h->step_name, s);
        h->step_names = 1;
    } else if (strcmp(h->step_name, s) != 0) {
        h->step_names = 2;
    }
}

/* pandas' to_numeric(...).fillna(-1).astype(int) of a JSON number */
static int64_t as_int(cta_knum n) { return n.has && isfinite(n.v) ? (int64_t)n.v : -1; }

int cta_hta_event(void *ctx, const cta_kevent *e)
{
    cta_hta *h = ctx;
    /* rule 1; an event without ts is dropped too (HTA would fail on it), and so is one with a
     * negative duration or a time beyond 2^52 us (142 years: HTA takes them, but then the sums
     * could overflow, and nanoseconds would not fit in 64 bits) */
    if (!e->has_cat || !e->dur.has || !e->ts.has || !strcmp(e->cat, "Trace") || e->dur.v < 0 ||
        fabs(e->ts.v) > 4503599627370496.0 || e->ts.v + e->dur.v > 4503599627370496.0)
        return 0;
    note_step_name(h, e->cat);
    note_step_name(h, e->name);
    /* rule 2 */
    int64_t ts = (int64_t)ceil(e->ts.v), end = (int64_t)floor(e->ts.v + e->dur.v);
    int64_t stream = as_int(e->stream), corr = as_int(e->correlation);
    int gpu = (stream >= 0 && corr >= 0) || !strcmp(e->name, "Event Sync") ||
              !strcmp(e->name, "Context Sync");
    if (!gpu) {
        if (strstr(e->name, "ProfilerStep") && (!h->has_last_step || ts > h->last_step)) {
            h->last_step = ts;
            h->has_last_step = 1;
        }
        int added;
        uint32_t i = cta_map_get(&h->corr, &corr, sizeof corr, &added);
        cta_grow(&h->cpu_ts, &h->cpu_cap, (size_t)i + 1, sizeof *h->cpu_ts);
        if (added || ts < h->cpu_ts[i])
            h->cpu_ts[i] = ts;
    }
    if (stream == -1)
        return 0;
    cta_grow(&h->rows, &h->cap, h->n + 1, sizeof *h->rows);
    h->rows[h->n++] = (row){ts, end, corr, (uint8_t)gpu, (uint8_t)cta_hta_is_compute(e->name)};
    return 0;
}

static int by_ts(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* HTA's merge_kernel_intervals over rows (sorted), only those with want set (compute_only):
 * a row starts a new group when it starts after every earlier end; returns the sum of the
 * groups' (last end - first start), and the span from the first group's start to the last
 * group's end in *span. */
static int64_t merged(const row *rows, size_t n, int compute_only, int64_t *span)
{
    int64_t total = 0, gts = 0, gend = 0, first = 0, cummax = 0;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        if (compute_only && !r->compute)
            continue;
        if (!any || r->ts > cummax) {
            if (any)
                total += gend - gts;
            else
                first = r->ts;
            gts = r->ts;
            gend = r->end;
        } else if (r->end > gend) {
            gend = r->end;
        }
        cummax = !any || r->end > cummax ? r->end : cummax;
        any = 1;
    }
    if (!any) {
        *span = 0;
        return 0;
    }
    *span = gend - first;
    return total + gend - gts;
}

int cta_hta_step_names(const cta_hta *h, const char **first)
{
    *first = h->step_name;
    return h->step_names;
}

void cta_hta_result(cta_hta *h, int drop_last_step, cta_hta_res *out)
{
    memset(out, 0, sizeof *out);
    size_t k = 0;
    /* rule 3: keep a GPU event when a CPU event before the last step shares its correlation,
     * any other event when it starts before the last step */
    out->last_step_dropped = drop_last_step < 0 ? h->step_names >= 2 : drop_last_step;
    for (size_t i = 0; i < h->n; i++) {
        row r = h->rows[i];
        int keep = 1;
        if (out->last_step_dropped) {
            if (r.gpu) {
                uint32_t c = cta_map_find(&h->corr, &r.corr, sizeof r.corr);
                keep = h->has_last_step && c != UINT32_MAX && h->cpu_ts[c] < h->last_step;
            } else {
                keep = h->has_last_step && r.ts < h->last_step;
            }
        }
        if (keep)
            h->rows[k++] = r;
    }
    h->n = k;
    out->kernels = k;
    if (!k)
        return;
    qsort(h->rows, k, sizeof *h->rows, by_ts);
    int64_t span, unused;
    int64_t busy = merged(h->rows, k, 0, &span);
    out->kernel_us = span;
    out->idle_us = span - busy;
    out->compute_us = merged(h->rows, k, 1, &unused);
    out->non_compute_us = span - out->compute_us - out->idle_us;
}
