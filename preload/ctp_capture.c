/* Capture windows (see ctp_capture.h). */
#define _GNU_SOURCE
#include "ctp_capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctp_clock.h"
#include "ctp_emit.h"

/* What holds recording back: the delay has not elapsed; the capture range is not open; the
 * duration has elapsed. Recording runs when none does. */
enum { CTP_CAP_DELAY = 1, CTP_CAP_RANGE = 2, CTP_CAP_OVER = 4 };
enum { CTP_RANGE_NONE, CTP_RANGE_PROFILER, CTP_RANGE_NVTX };

_Atomic unsigned ctp_capture_gate;

static struct {
    int range;                     /* CTP_RANGE_* */
    char name[CTP_NVTX_TEXT + 1];  /* nvtx:NAME[@DOMAIN] */
    char domain[CTP_NVTX_TEXT + 1]; /* "" the default domain */
    uint64_t delay_ns, duration_ns;
    uint64_t loaded;               /* when libcutrace loaded (the process started) */
    char text[CTP_NVTX_TEXT * 2 + 96];
} ctp_cap;
static _Atomic uint64_t ctp_cap_first;   /* when recording first began (the duration's start) */
static _Atomic int ctp_cap_announced;    /* the file's first CAPTURE record is written */
/* The NVTX range holding the window open: 0 none, 1 a push (its thread's ctp_cap_level), else
 * the id of a start/end range without its flag bits (ctp_nvtx.c adds them once the window is
 * decided). */
#define CTP_CAP_ID(id) ((id) & ~(CTP_NVTX_ID_RECORDED | CTP_NVTX_ID_UNKEPT))
static _Atomic uint64_t ctp_cap_owner;
static __thread unsigned ctp_cap_level, ctp_cap_dom; /* the owning push: level + 1, domain */

/* Seconds (a decimal number >= 0) into ns; -1 if s is not one. */
static int ctp_cap_seconds(const char *var, const char *s, uint64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < 0 || v > 1e9) {
        fprintf(stderr, "cutrace: warning: %s: expected seconds (a number >= 0), found '%s'; "
                "ignored\n", var, s);
        return -1;
    }
    *ns = (uint64_t)(v * 1e9 + 0.5);
    return 0;
}

static void ctp_cap_range(const char *s)
{
    if (!strcmp(s, "cudaProfilerApi")) {
        ctp_cap.range = CTP_RANGE_PROFILER;
        return;
    }
    const char *at = strncmp(s, "nvtx:", 5) == 0 ? strrchr(s + 5, '@') : NULL;
    size_t n = at ? (size_t)(at - s - 5) : strlen(s) - 5;
    if (strncmp(s, "nvtx:", 5) != 0 || n == 0 || n > CTP_NVTX_TEXT ||
        (at && (!at[1] || strlen(at + 1) > CTP_NVTX_TEXT))) {
        fprintf(stderr, "cutrace: warning: CUTRACE_CAPTURE_RANGE: expected cudaProfilerApi or "
                "nvtx:NAME[@DOMAIN], found '%s'; ignored\n", s);
        return;
    }
    memcpy(ctp_cap.name, s + 5, n);
    if (at)
        strcpy(ctp_cap.domain, at + 1);
    ctp_cap.range = CTP_RANGE_NVTX;
}

__attribute__((constructor)) static void ctp_capture_load(void)
{
    ctp_cap.loaded = ctp_now();
    const char *s = getenv("CUTRACE_CAPTURE_RANGE");
    if (s && *s && strcmp(s, "none") != 0)
        ctp_cap_range(s);
    s = getenv("CUTRACE_DELAY");
    if (s && *s)
        ctp_cap_seconds("CUTRACE_DELAY", s, &ctp_cap.delay_ns);
    s = getenv("CUTRACE_DURATION");
    if (s && *s && ctp_cap_seconds("CUTRACE_DURATION", s, &ctp_cap.duration_ns) == 0 &&
        !ctp_cap.duration_ns)
        fprintf(stderr, "cutrace: warning: CUTRACE_DURATION: 0 records nothing; ignored\n");
    if (ctp_cap.range == CTP_RANGE_NONE && !ctp_cap.delay_ns && !ctp_cap.duration_ns)
        return;
    snprintf(ctp_cap.text, sizeof ctp_cap.text, " capture=%s%s%s%s delay_s=%.9g duration_s=%.9g",
             ctp_cap.range == CTP_RANGE_PROFILER ? "cudaProfilerApi"
             : ctp_cap.range == CTP_RANGE_NVTX ? "nvtx:" : "none",
             ctp_cap.name, *ctp_cap.domain ? "@" : "", ctp_cap.domain, ctp_cap.delay_ns / 1e9,
             ctp_cap.duration_ns / 1e9);
    unsigned gate = (ctp_cap.delay_ns ? CTP_CAP_DELAY : 0) | (ctp_cap.range ? CTP_CAP_RANGE : 0);
    atomic_store(&ctp_capture_gate, gate);
    if (!gate) /* --duration alone: from the start */
        atomic_store(&ctp_cap_first, ctp_cap.loaded);
}

const char *ctp_capture_options(void)
{
    return ctp_cap.text;
}

/* Sets and clears gate bits; the record to write if that started or stopped recording. */
static ct_rec_capture ctp_cap_change(unsigned set, unsigned clear, unsigned why)
{
    unsigned old = atomic_load(&ctp_capture_gate), nw;
    do
        nw = (old | set) & ~clear;
    while (!atomic_compare_exchange_weak(&ctp_capture_gate, &old, nw));
    if (!old == !nw)
        return (ct_rec_capture){0, 0};
    if (!nw) {
        uint64_t none = 0;
        atomic_compare_exchange_strong(&ctp_cap_first, &none, ctp_now());
    }
    return (ct_rec_capture){nw ? CT_CAPTURE_STOP : CT_CAPTURE_START, why};
}

void ctp_capture_mark(ctp_thread *th, ct_rec_capture r)
{
    if (r.op && th)
        ctp_push_now(th, CT_REC_CAPTURE, &r, sizeof r);
}

void ctp_capture_begin(ctp_thread *th)
{
    if (!*ctp_cap.text || atomic_load(&ctp_cap_announced) || atomic_exchange(&ctp_cap_announced, 1))
        return;
    /* a delay that elapsed before the trace began (the writer looks only once it runs) */
    if (ctp_cap.delay_ns && ctp_now() - ctp_cap.loaded >= ctp_cap.delay_ns)
        ctp_cap_change(0, CTP_CAP_DELAY, 0);
    unsigned gate = atomic_load(&ctp_capture_gate);
    ctp_capture_mark(th, (ct_rec_capture){gate ? CT_CAPTURE_STOP : CT_CAPTURE_START,
                                          CT_CAPTURE_BEGIN});
}

void ctp_capture_new_file(void)
{
    atomic_store(&ctp_cap_announced, 0);
}

ct_rec_capture ctp_capture_profiler(unsigned op)
{
    if (ctp_cap.range != CTP_RANGE_PROFILER)
        return (ct_rec_capture){0, 0};
    return op == CT_CAPTURE_START ? ctp_cap_change(0, CTP_CAP_RANGE, CT_CAPTURE_PROFILER)
                                  : ctp_cap_change(CTP_CAP_RANGE, 0, CT_CAPTURE_PROFILER);
}

int ctp_capture_nvtx(void)
{
    return ctp_cap.range == CTP_RANGE_NVTX;
}

/* msg (len bytes) in domain dom is the capture range's name, and no range holds the window:
 * take it (owner: 1 for a push, the id of a start). */
static int ctp_cap_take(unsigned dom, const char *msg, size_t len, uint64_t owner)
{
    const char *dname = dom ? atomic_load(&ctp_nvtx_domain_names[dom]) : "";
    if (!ctp_capture_nvtx() || !msg || len != strlen(ctp_cap.name) ||
        memcmp(msg, ctp_cap.name, len) != 0 || !dname || strcmp(dname, ctp_cap.domain) != 0)
        return 0;
    uint64_t none = 0;
    return atomic_compare_exchange_strong(&ctp_cap_owner, &none, owner);
}

ct_rec_capture ctp_capture_push(unsigned dom, unsigned level, const char *msg, size_t len)
{
    if (!ctp_cap_take(dom, msg, len, 1))
        return (ct_rec_capture){0, 0};
    ctp_cap_level = level + 1;
    ctp_cap_dom = dom;
    return ctp_cap_change(0, CTP_CAP_RANGE, CT_CAPTURE_NVTX);
}

ct_rec_capture ctp_capture_pop(unsigned dom, unsigned level)
{
    if (ctp_cap_level != level + 1 || ctp_cap_dom != dom)
        return (ct_rec_capture){0, 0};
    ctp_cap_level = 0;
    atomic_store(&ctp_cap_owner, 0);
    return ctp_cap_change(CTP_CAP_RANGE, 0, CT_CAPTURE_NVTX);
}

ct_rec_capture ctp_capture_start(unsigned dom, uint64_t id, const char *msg, size_t len)
{
    return ctp_cap_take(dom, msg, len, CTP_CAP_ID(id)) ? ctp_cap_change(0, CTP_CAP_RANGE, CT_CAPTURE_NVTX)
                                           : (ct_rec_capture){0, 0};
}

ct_rec_capture ctp_capture_end(uint64_t id)
{
    uint64_t owner = CTP_CAP_ID(id);
    if (owner <= 1 || !atomic_compare_exchange_strong(&ctp_cap_owner, &owner, 0))
        return (ct_rec_capture){0, 0};
    return ctp_cap_change(CTP_CAP_RANGE, 0, CT_CAPTURE_NVTX);
}

int ctp_capture_timers(uint64_t now, ct_rec_capture out[2])
{
    int n = 0;
    unsigned gate = atomic_load(&ctp_capture_gate);
    if ((gate & CTP_CAP_DELAY) && now - ctp_cap.loaded >= ctp_cap.delay_ns) {
        out[n] = ctp_cap_change(0, CTP_CAP_DELAY, CT_CAPTURE_DELAY);
        n += out[n].op != 0;
    }
    uint64_t first = atomic_load(&ctp_cap_first);
    if (ctp_cap.duration_ns && first && !(gate & CTP_CAP_OVER) && now >= first + ctp_cap.duration_ns) {
        out[n] = ctp_cap_change(CTP_CAP_OVER, 0, CT_CAPTURE_DURATION);
        n += out[n].op != 0;
    }
    return n;
}

uint64_t ctp_capture_wait(uint64_t now)
{
    unsigned gate = atomic_load(&ctp_capture_gate);
    uint64_t first = atomic_load(&ctp_cap_first), at = UINT64_MAX;
    if (gate & CTP_CAP_DELAY)
        at = ctp_cap.loaded + ctp_cap.delay_ns;
    else if (ctp_cap.duration_ns && first && !(gate & CTP_CAP_OVER))
        at = first + ctp_cap.duration_ns;
    return at == UINT64_MAX ? at : at > now ? at - now : 0;
}

ct_rec_capture ctp_capture_final(void)
{
    int on = *ctp_cap.text && !atomic_load(&ctp_capture_gate);
    return (ct_rec_capture){on ? CT_CAPTURE_STOP : 0, on ? CT_CAPTURE_END : 0};
}
