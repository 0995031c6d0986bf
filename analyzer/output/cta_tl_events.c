/* The timeline's JSON events (cta_tl_events.h). */
#include "cta_tl_events.h"

#include "cta_out.h"

int cta_tl_room(cta_tl *t, uint64_t ts, uint64_t n)
{
    if (!t->max_events || (!t->stopped_at && t->events + n <= t->max_events))
        return 1;
    if (!t->stopped_at)
        t->stopped_at = ts ? ts : 1;
    return 0;
}

void cta_tl_put_us(FILE *f, const char *key, uint64_t ns, int neg)
{
    unsigned frac = (unsigned)(ns % 1000);
    cta_put_str(f, ",\"");
    cta_put_str(f, key);
    cta_put_str(f, neg && ns ? "\":-" : "\":");
    cta_put_dec(f, ns / 1000);
    if (frac) {
        char d[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                     (char)('0' + frac % 10)};
        size_t n = sizeof d;
        while (d[n - 1] == '0')
            n--;
        for (size_t i = 0; i < n; i++)
            putc_unlocked(d[i], f);
    }
}

void cta_tl_ev_open(cta_tl *t, const char *ph, const cta_proc *p, uint64_t tid, uint64_t ts)
{
    cta_put_str(t->f, t->first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
    cta_put_str(t->f, ph);
    cta_put_str(t->f, "\",\"pid\":");
    cta_put_dec(t->f, p->file + 1);
    cta_put_str(t->f, ",\"tid\":");
    cta_put_dec(t->f, tid);
    if (ts >= t->base)
        cta_tl_put_us(t->f, "ts", ts - t->base, 0);
    else
        cta_tl_put_us(t->f, "ts", t->base - ts, 1);
    t->first = 0;
    t->events++;
}

void cta_tl_str_field(cta_tl *t, const char *key, const char *v)
{
    cta_put_str(t->f, ",\"");
    cta_put_str(t->f, key);
    cta_put_str(t->f, "\":\"");
    cta_json_escape(t->f, v);
    putc_unlocked('"', t->f);
}

void cta_tl_meta(cta_tl *t, const cta_proc *p, uint64_t tid, const char *what, const char *name)
{
    fprintf(t->f, "%s\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%llu,\"name\":\"%s\",\"args\":{\"name\":\"",
            t->first ? "" : ",", p->file + 1, (unsigned long long)tid, what);
    cta_json_escape(t->f, name);
    fputs("\"}}", t->f);
    t->first = 0;
}

void cta_tl_track_meta(cta_tl *t, const cta_proc *p, uint64_t tid, const char *name)
{
    cta_tl_meta(t, p, tid, "thread_name", name);
    fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%llu,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%llu}}",
            p->file + 1, (unsigned long long)tid, (unsigned long long)tid);
}
