/* What the rules share to build a finding (cta_diag_int.h): the threshold, evidence, where it
 * happened, the call sites and their rendering, the fix naming the user's lines. */
#include "cta_diag_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cta_out.h"

cta_diag *cta_diag_add(cta_diags *ds, const cta_proc *p, int dev, uint64_t saving, uint64_t window,
                       const char *fix)
{
    int exempt = ds->rule->always;
    uint64_t of = ds->whole > window ? ds->whole : window;
    if (!exempt && (window == 0 || saving == 0 ||
                    (double)saving < ds->o->min_saving_pct / 100.0 * (double)of))
        return NULL;
    cta_grow(&ds->v, &ds->cap, ds->n + 1, sizeof *ds->v);
    cta_diag *d = &ds->v[ds->n++];
    memset(d, 0, sizeof *d);
    d->id = ds->rule->id;
    d->gap = ds->rule->gap;
    d->proc = p;
    d->dev = dev;
    d->saving_ns = saving;
    d->window_ns = window;
    snprintf(d->fix, sizeof d->fix, "%s", fix);
    d->severity = "error";
    if (!exempt)
        cta_diag_reprice(d, saving);
    return d;
}

void cta_diag_reprice(cta_diag *d, uint64_t saving)
{
    d->saving_ns = saving;
    double share = d->window_ns ? (double)saving / (double)d->window_ns : 1;
    d->severity = share >= 0.25 ? "high" : share >= 0.05 ? "medium" : "low";
}

void cta_diag_ev(cta_diag *d, const char *key, double v, cta_ev_unit u)
{
    /* dropping a figure quietly lost main_wait_for_workers_ns once a rule had 17: the saving
     * then exceeded the idle time its evidence showed */
    if (d->nev == CTA_DIAG_MAX_EV) {
        fprintf(stderr, "cutrace: internal error: finding %s: evidence %s is its %dth figure, "
                "expected at most CTA_DIAG_MAX_EV (%d)\n", d->id, key, d->nev + 1, CTA_DIAG_MAX_EV);
        abort();
    }
    d->ev[d->nev++] = (cta_evidence){key, v, u};
}

void cta_diag_msg(cta_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    va_end(ap);
}

void cta_diag_at_span(cta_diag *x, int dev, uint64_t start, uint64_t len)
{
    x->at = (cta_diag_at){1, dev, start, start + len};
}

void cta_diag_at_call(cta_diag *x, const cta_proc *p, int kind, int dev)
{
    const cta_site_longest *l = &p->site_longest[kind];
    if (l->set)
        cta_diag_at_span(x, l->dev >= 0 ? l->dev : dev, l->start, l->len);
}

void cta_diag_at_gap(cta_diag *x, const cta_proc *p, int d, int cls, const unsigned *band,
                     int kind)
{
    const cta_dev *dv = &p->dev[d];
    const cta_gap *g = NULL;
    for (int i = dv->ntop - 1; i >= 0; i--) {
        unsigned b = cta_sketch_bucket(dv->top[i].len);
        if (dv->top[i].cls == cls && (!g || !band || (b >= band[0] && b <= band[1])))
            g = &dv->top[i];
    }
    if (g)
        cta_diag_at_span(x, d, g->start, g->len);
    else if (kind >= 0)
        cta_diag_at_call(x, p, kind, d);
}

void cta_diag_detail(cta_diag *d, const char *fmt, ...)
{
    size_t o = strlen(d->detail);
    if (o + 1 >= sizeof d->detail)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->detail + o, sizeof d->detail - o, fmt, ap);
    va_end(ap);
}

/* Fills the next site of d (the calls of stacks, first stacks.ids[0]) and its one-line text: a
 * stack with a Python frame in user code is shown by that frame. */
static void site_out(const cta_model *m, const cta_proc *p, cta_diag *d, const char *call,
                     const cta_stackset *stacks, uint64_t count, uint64_t bytes, uint64_t ns,
                     const char *unit)
{
    if (d->nsites >= CTA_DIAG_MAX_SITES)
        return;
    cta_diag_site *s = &d->sites[d->nsites++];
    char stack[400];
    cta_model_site(m, p, stacks->n ? stacks->ids[0] : 0, NULL, 0, stack, sizeof stack, 4);
    s->python = stacks->n && cta_model_py_site(m, p, stacks->ids[0], stack, sizeof stack);
    s->stacks = *stacks;
    cta_text_safe(s->call, sizeof s->call, call, 80);
    cta_text_safe(s->stack, sizeof s->stack, stack, 300);
    s->count = count;
    s->bytes = bytes;
    s->ns = ns;
    char b1[32], b2[32], nums[96];
    int o = snprintf(nums, sizeof nums, "%llu %s%s", (unsigned long long)count, unit,
                     count == 1 ? "" : "s");
    if (bytes)
        o += snprintf(nums + o, sizeof nums - (size_t)o, ", %s", cta_fmt_bytes(b1, (double)bytes));
    if (ns)
        snprintf(nums + o, sizeof nums - (size_t)o, ", %s", cta_fmt_ns(b2, (double)ns));
    char text[sizeof s->text];
    const char *c = s->call, *st = s->stack;
    snprintf(text, sizeof text, "%s%s%s: %s", c, *c && *st ? " at " : "",
             *st ? st : *c ? "" : "(no call stack)", nums);
    memcpy(s->text, text, sizeof text);
}

void cta_diag_sites(const cta_model *m, const cta_proc *p, int kind, cta_diag *d)
{
    int idx[CTA_DIAG_MAX_SITES], n = 0;
    for (uint32_t i = 0; i < cta_map_count(&p->sites); i++) {
        uint32_t key[3];
        memcpy(key, cta_map_key(&p->sites, i), sizeof key);
        if ((int)key[0] != kind)
            continue;
        int j = n < CTA_DIAG_MAX_SITES ? n++ : CTA_DIAG_MAX_SITES;
        if (j == CTA_DIAG_MAX_SITES) {
            if (p->site[i].ns <= p->site[idx[j - 1]].ns)
                continue;
            j--;
        }
        while (j > 0 && p->site[idx[j - 1]].ns < p->site[i].ns) {
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = (int)i;
    }
    for (int k = 0; k < n; k++) {
        uint32_t key[3];
        memcpy(key, cta_map_key(&p->sites, (uint32_t)idx[k]), sizeof key);
        const cta_site *s = &p->site[idx[k]];
        char call[96], st[400], what[160];
        static const char *const sync_kinds[] = {"other", "device", "context", "stream", "event",
                                                 "stream-wait-event", "implicit (sync copy)", "?"};
        /* the site's own first stack: the site's key may be another kind's stack on that line */
        cta_model_site(m, p, s->stacks.n ? s->stacks.ids[0] : 0, call, sizeof call, st, sizeof st, 4);
        if (kind == CTA_SITE_SYNC) {
            snprintf(what, sizeof what, "%s%s%s synchronization%s", call, *call ? " (" : "",
                     sync_kinds[key[1] < 7 ? key[1] : 7], *call ? ")" : "");
        } else {
            snprintf(what, sizeof what, "%s",
                     *call ? call
                     : key[1] < cta_map_count(&m->api_names) ? cta_map_key(&m->api_names, key[1])
                                                            : "(unknown call)");
        }
        site_out(m, p, d, what, &s->stacks, s->count, s->bytes, s->ns, "call");
    }
}

void cta_diag_holders(const cta_model *m, const cta_proc *p, cta_diag *d, const cta_holder *h,
                      int n)
{
    for (int i = 0; i < n; i++) {
        char call[96], st[400];
        cta_model_site(m, p, h[i].stack, call, sizeof call, st, sizeof st, 4);
        site_out(m, p, d, call, &h[i].stacks, h[i].count, h[i].bytes, 0, "allocation");
    }
}

void cta_diag_fix_at_line(const cta_model *m, const cta_proc *p, cta_diag *x, const char *what,
                          const char *does, const char *advice, int pageable)
{
    static const char *const who[] = {NULL, "`.item()`", "`x.cuda()`", "`x.to()`",
                                      "a tensor copy (`.to()`, `.cuda()` or `.copy_()`)",
                                      "formatting a GPU tensor (`format()`, `print()`, `str()`)"};
    /* what to do instead of a hidden synchronization, where the line's method says it */
    static const char *const instead[] = {
        [CTA_TORCH_ITEM] = " - instead, add the value into a tensor on the GPU "
                           "(`total += loss.detach()`) and read that once every N steps",
        [CTA_TORCH_FORMAT] = " - instead, format numbers already on the host (read once with "
                             "`.item()`), or only every N steps"};
    char lines[1400], own[160]; /* lines: the fix's advice (< 600) fits after them */
    size_t o = 0;
    for (int i = 0; i < x->nsites; i++) {
        const cta_diag_site *s = &x->sites[i];
        if (!s->python)
            continue;
        int op = cta_model_torch_op(m, p, &s->stacks);
        if (advice != own && pageable && (op == CTA_TORCH_CUDA || op == CTA_TORCH_TO)) {
            snprintf(own, sizeof own,
                     "pin the host tensor (DataLoader(pin_memory=True), or tensor.pin_memory()) "
                     "and copy with `%s`",
                     op == CTA_TORCH_CUDA ? ".cuda(non_blocking=True)" : ".to(device, non_blocking=True)");
            advice = own;
        }
        const char *alt = !pageable && op < (int)(sizeof instead / sizeof *instead) && instead[op]
                              ? instead[op] : "";
        int w = snprintf(lines + o, sizeof lines - o, "%s%s at %s %s (%llu call%s)%s", o ? "; " : "",
                         op ? who[op] : what, s->stack, does, (unsigned long long)s->count,
                         s->count == 1 ? "" : "s", alt);
        if (w < 0 || o + (size_t)w >= sizeof lines)
            break; /* the lines named so far, whole */
        o += (size_t)w;
    }
    if (o)
        snprintf(x->fix, sizeof x->fix, "%.*s: %s", (int)o, lines, advice);
}

void cta_diag_cause_names(const cta_starve_cause *c, char *buf, size_t n)
{
    buf[0] = 0;
    for (int k = 0; k < CTA_CAUSE_N; k++)
        if (c->causes & (1 << k))
            snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", buf[0] ? ", " : "", cta_cause_names[k]);
}
