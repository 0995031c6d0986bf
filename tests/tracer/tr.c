#define _GNU_SOURCE
#include "tr.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

const char *tr_workload(char buf[4096], const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/workloads/%s", name);
    return ctt_path(buf, rel);
}

int tr_run(ctt_proc *p, const char *outdir, char *const opts[], char *const cmd[],
           char *const env[], int timeout_s)
{
    char cutrace[4096], fake[4096], kernels[4096];
    ctt_path(cutrace, "bin/cutrace");
    ctt_path(fake, "tests/fakecuda");
    ctt_path(kernels, "tests/workloads/libworkload_kernels.so");
    char *argv[64];
    size_t n = 0;
    argv[n++] = cutrace;
    argv[n++] = "run";
    argv[n++] = "-o";
    argv[n++] = (char *)outdir;
    for (size_t i = 0; opts && opts[i] && n < 30; i++)
        argv[n++] = opts[i];
    argv[n++] = "--";
    for (size_t i = 0; cmd[i] && n < 62; i++)
        argv[n++] = cmd[i];
    argv[n] = NULL;
    char llp[4200], hk[4200];
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", fake);
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s", kernels);
    char *e[64];
    size_t m = 0;
    e[m++] = llp;
    e[m++] = hk;
    for (size_t i = 0; env && env[i] && m < 62; i++)
        e[m++] = env[i];
    e[m] = NULL;
    return ctt_run(p, argv, e, timeout_s);
}

int tr_run_preloaded(ctt_proc *p, const char *outdir, char *const cmd[], char *const env[],
                     int timeout_s)
{
    char lib[4096], fake[4096], kernels[4096];
    char pre[4200], out[4200], llp[4200], hk[4200];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", ctt_path(lib, "lib/libcutrace.so"));
    snprintf(out, sizeof out, "CUTRACE_OUTPUT=%s", outdir);
    snprintf(llp, sizeof llp, "LD_LIBRARY_PATH=%s", ctt_path(fake, "tests/fakecuda"));
    snprintf(hk, sizeof hk, "FAKECUDA_HOST_KERNELS=%s",
             ctt_path(kernels, "tests/workloads/libworkload_kernels.so"));
    char *e[64] = {pre, out, llp, hk};
    size_t m = 4;
    for (size_t i = 0; env && env[i] && m < 62; i++)
        e[m++] = env[i];
    e[m] = NULL;
    return ctt_run(p, cmd, e, timeout_s);
}

char *tr_analyze(char *const args[])
{
    char cutrace[4096];
    char *argv[16] = {(char *)ctt_path(cutrace, "bin/cutrace")};
    size_t n = 1;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    ctt_proc p;
    if (ctt_run(&p, argv, NULL, 60) != 0)
        return NULL;
    if (!p.exited || p.code != 0) {
        ctt_fail_at(__FILE__, __LINE__, "cutrace %s %s: expected exit status 0, found %s %d; "
                        "stderr:\n%s", args[0], args[1] ? args[1] : "", p.exited ? "status" : "signal",
                        p.code, p.err);
        ctt_proc_free(&p);
        return NULL;
    }
    char *out = p.out;
    p.out = NULL;
    ctt_proc_free(&p);
    return out;
}

static char *tr_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* "function@module;" per frame of stack `id`, innermost first; NULL for no stack. */
static char *tr_stack(ct_reader *r, uint32_t file, uint32_t id)
{
    const uint32_t *frames;
    uint32_t nf;
    char buf[4096] = "", tmp[CT_STRTMP], tmp2[CT_STRTMP];
    size_t len = 0;
    if (!id || ct_reader_stack(r, file, id, &frames, &nf) != 0)
        return NULL;
    for (uint32_t k = 0; k < nf && len + 300 < sizeof buf; k++) {
        ct_rec_frame fr;
        if (ct_reader_frame(r, file, frames[k], &fr) != 0)
            continue;
        const char *mod = ct_reader_str(r, file, fr.module, tmp2);
        const char *base = strrchr(mod, '/');
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s@%s", ct_reader_str(r, file, fr.function, tmp),
                                base ? base + 1 : mod);
        if (fr.kind == CT_FRAME_PYTHON && len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, ":%u", fr.line);
        len = len < sizeof buf - 2 ? len : sizeof buf - 2; /* a long name fills buf: cut there */
        buf[len++] = ';';
        buf[len] = 0;
    }
    return tr_dup(buf);
}

int tr_load(tr_trace *t, const char *dir)
{
    memset(t, 0, sizeof *t);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "tr_load: %s: no trace directory\n", dir);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) && t->nfiles < 64) {
        size_t len = strlen(e->d_name);
        if (len < 8 || strcmp(e->d_name + len - 8, ".cutrace"))
            continue;
        t->paths = realloc(t->paths, (t->nfiles + 1) * sizeof *t->paths);
        if (asprintf(&t->paths[t->nfiles], "%s/%s", dir, e->d_name) < 0)
            abort();
        t->nfiles++;
    }
    closedir(d);
    if (!t->nfiles) {
        fprintf(stderr, "tr_load: %s: no .cutrace file\n", dir);
        return -1;
    }
    ct_reader *r;
    char err[1024];
    if (ct_reader_open(&r, (const char *const *)t->paths, t->nfiles, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "tr_load: %s\n", err);
        return -1;
    }
    ct_rec rec;
    int rc;
    while ((rc = ct_reader_next(r, &rec)) == 1) {
        t->nstrings += rec.type == CT_REC_STRING;
        if (rec.type == CT_REC_STRING || rec.type == CT_REC_FRAME || rec.type == CT_REC_STACK ||
            rec.type == CT_REC_UNKNOWN)
            continue;
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 4096;
            t->v = realloc(t->v, t->cap * sizeof *t->v);
        }
        tr_rec *x = &t->v[t->n++];
        memset(x, 0, sizeof *x);
        x->r = rec;
        char tmp[CT_STRTMP];
        if (rec.type == CT_REC_API)
            x->name = tr_dup(ct_reader_str(r, rec.file, rec.u.api.function, tmp));
        else if (rec.type == CT_REC_LAUNCH) {
            x->name = tr_dup(ct_reader_str(r, rec.file, rec.u.launch.function, tmp));
            x->symbol = tr_dup(rec.u.launch.symbol
                                   ? ct_reader_str(r, rec.file, rec.u.launch.symbol, tmp)
                                   : x->name);
        } else if (rec.type == CT_REC_GRAPH && rec.u.graph.function) {
            x->name = tr_dup(ct_reader_str(r, rec.file, rec.u.graph.function, tmp));
        } else if (rec.type == CT_REC_THREAD) {
            x->name = tr_dup(ct_reader_str(r, rec.file, rec.u.thread.name, tmp));
        } else if (rec.type == CT_REC_DEVICE) {
            x->name = tr_dup(ct_reader_str(r, rec.file, rec.u.device.name, tmp));
        } else if (rec.type == CT_REC_MEM) {
            x->stack = tr_stack(r, rec.file, rec.u.mem.stack);
        } else if (rec.type == CT_REC_THREAD_SAMPLE) {
            const ct_rec_thread_sample *s = &rec.u.thread_sample;
            x->name = s->function ? tr_dup(ct_reader_str(r, rec.file, s->function, tmp)) : NULL;
            x->stack = tr_stack(r, rec.file, s->stack);
        } else if (rec.type == CT_REC_NVTX_RANGE || rec.type == CT_REC_NVTX_MARK ||
                   rec.type == CT_REC_NVTX_BEGIN) {
            const ct_rec_nvtx_mark *m = &rec.u.nvtx_mark;
            const ct_rec_nvtx_range *g = &rec.u.nvtx_range;
            const ct_rec_nvtx_begin *b = &rec.u.nvtx_begin;
            uint32_t ids[3] = {m->name, m->group, m->domain};
            if (rec.type == CT_REC_NVTX_RANGE)
                memcpy(ids, (uint32_t[3]){g->name, g->group, g->domain}, sizeof ids);
            else if (rec.type == CT_REC_NVTX_BEGIN)
                memcpy(ids, (uint32_t[3]){b->name, b->group, b->domain}, sizeof ids);
            char **to[3] = {&x->name, &x->symbol, &x->domain};
            for (int k = 0; k < 3; k++)
                *to[k] = ids[k] ? tr_dup(ct_reader_str(r, rec.file, ids[k], tmp)) : NULL;
        }
        if (rec.type == CT_REC_API)
            x->stack = tr_stack(r, rec.file, rec.u.api.stack);
    }
    if (rc < 0) {
        fprintf(stderr, "tr_load: %s\n", ct_reader_error(r));
        ct_reader_close(r);
        return -1;
    }
    for (size_t i = 0; i < t->nfiles; i++) {
        t->stats[i] = *ct_reader_stats(r, (uint32_t)i);
        t->pids[i] = ct_reader_header(r, (uint32_t)i)->pid;
    }
    ct_reader_close(r);
    return 0;
}

void tr_free(tr_trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        free(t->v[i].symbol);
        free(t->v[i].domain);
        free(t->v[i].stack);
    }
    for (size_t i = 0; i < t->nfiles; i++)
        free(t->paths[i]);
    free(t->paths);
    free(t->v);
    memset(t, 0, sizeof *t);
}

size_t tr_count(const tr_trace *t, uint32_t type, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == type && (!name || (t->v[i].name && !strcmp(t->v[i].name, name))))
            n++;
    return n;
}

const tr_rec *tr_api(const tr_trace *t, uint64_t corr)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == CT_REC_API && t->v[i].r.u.api.corr == corr)
            return &t->v[i];
    return NULL;
}

uint64_t tr_in_call_ns(const tr_trace *t, const ct_rec *g, const tr_rec **call)
{
    const tr_rec *api = tr_api(t, g->u.gpu.corr);
    if (call)
        *call = api;
    uint64_t ret = api && api->r.ts < g->ts ? api->r.ts : g->ts;
    return api && ret > g->u.gpu.start ? ret - g->u.gpu.start : 0;
}

const char *tr_line(const char *text, const char *prefix)
{
    static char line[4096];
    size_t plen = strlen(prefix);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= plen && !strncmp(p, prefix, plen)) {
            if (len >= sizeof line)
                len = sizeof line - 1;
            memcpy(line, p, len);
            line[len] = 0;
            return line;
        }
        p = nl ? nl + 1 : NULL;
    }
    return "";
}

long long tr_value(const char *line, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

int tr_put(const char *dir, const char *file, const char *text)
{
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

long long tr_result(const tr_trace *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].r.type == CT_REC_API && !strcmp(t->v[i].name, name))
            return t->v[i].r.u.api.result;
    return -1;
}

/* The lines "PREFIX phase NAME START END" of out; their count. */
size_t tr_phases_of(const char *out, const char *prefix, tr_phase *v)
{
    char want[64];
    size_t n = 0;
    snprintf(want, sizeof want, "%s phase ", prefix);
    for (const char *s = strstr(out, want); s && n < TR_PHASES; s = strstr(s + 1, want)) {
        unsigned long long a, b;
        if (sscanf(s + strlen(want), "%15s %llu %llu", v[n].name, &a, &b) == 3) {
            v[n].start = a;
            v[n].end = b;
            n++;
        }
    }
    return n;
}

/* Over the span of the phases, the share of tid's sampled time that cls names after each phase
 * is that phase's share of the span, within 5 points. A sample stands for the time from midway
 * after the thread's previous sample to midway before its next (FORMAT.md 4.12: a sampler
 * descheduled on a busy machine, as it is most while the thread it samples keeps a CPU busy,
 * takes fewer samples, each standing for longer). At least one sample per 10 ms of the span.
 * Prints the shares. */
int tr_sample_shares(const tr_trace *t, uint32_t tid, const tr_phase *ph, size_t nph,
                     tr_classify_fn cls, const void *ctx, const char *label)
{
    ASSERT(nph > 0);
    uint64_t lo = ph[0].start, hi = ph[nph - 1].end;
    const char *names[TR_PHASES];
    size_t of[TR_PHASES], nn = 0, total = 0;
    double clock_ns[TR_PHASES] = {0}, sampled_ns[TR_PHASES] = {0}, at_ns[TR_PHASES] = {0};
    double weight = 0;
    for (size_t i = 0; i < nph; i++) {
        size_t k = 0;
        while (k < nn && strcmp(names[k], ph[i].name))
            k++;
        if (k == nn)
            names[nn++] = ph[i].name;
        of[i] = k;
        clock_ns[k] += (double)(ph[i].end - ph[i].start);
    }
    const tr_rec *prev = NULL, *cur = NULL;
    uint64_t max_gap = 0;
    for (size_t r = 0; r <= t->n; r++) {
        const tr_rec *x = r < t->n ? &t->v[r] : NULL;
        if (x && (x->r.type != CT_REC_THREAD_SAMPLE || x->r.u.thread_sample.tid != tid))
            continue;
        if (cur && cur->r.ts >= lo && cur->r.ts < hi) {
            double from = prev ? (double)(prev->r.ts + cur->r.ts) / 2 : (double)cur->r.ts;
            double to = x ? (double)(cur->r.ts + x->r.ts) / 2 : (double)cur->r.ts;
            from = from < (double)lo ? (double)lo : from;
            to = to > (double)hi ? (double)hi : to;
            const char *c = cls(cur, ctx);
            for (size_t k = 0; c && k < nn; k++)
                if (!strcmp(names[k], c))
                    sampled_ns[k] += to - from;
            for (size_t i = 0; i < nph; i++)
                if (ph[i].start <= cur->r.ts && cur->r.ts < ph[i].end)
                    at_ns[of[i]] += to - from;
            weight += to - from;
            total++;
            if (prev && cur->r.ts - prev->r.ts > max_gap)
                max_gap = cur->r.ts - prev->r.ts;
        }
        prev = cur;
        cur = x;
    }
    ASSERT_UINT(total, >=, (hi - lo) / 10000000);
    ASSERT(weight > 0);
    for (size_t k = 0; k < nn; k++) {
        double by_clock = 100 * clock_ns[k] / (double)(hi - lo);
        double by_samples = 100 * sampled_ns[k] / (double)(hi - lo);
        double at = 100 * at_ns[k] / weight, said = 100 * sampled_ns[k] / weight;
        printf("%s: %s %.1f%% of the span by its clock, %.1f%% by %zu samples (longest gap "
               "%.1f ms); at the samples' instants %.1f%%, the samples say %.1f%%\n", label,
               names[k], by_clock, by_samples, total, (double)max_gap / 1e6, at, said);
        ASSERT_NEAR(said, at, 5);
        ASSERT_NEAR(by_samples, by_clock, 10);
    }
    return 0;
}

void tr_pythons(glob_t *g)
{
    int found = glob("/usr/bin/python3.{8,9,1[0-3]}", GLOB_BRACE, NULL, g);
    glob("/root/.pyenv/versions/3.{8,9,1[0-3]}.*/bin/python3.{8,9,1[0-3]}",
         GLOB_BRACE | (found ? 0 : GLOB_APPEND), NULL, g);
    if (g->gl_pathc == 0)
        ctt_skip("no CPython 3.8 to 3.13 found (/usr/bin, pyenv)");
}

void tr_skip_without_perf(const char *dir)
{
    char *args[] = {"dump", (char *)dir, NULL}, why[160], msg[256];
    char *text = tr_analyze(args);
    const char *at = text ? strstr(text, "native_samples=") : NULL;
    snprintf(why, sizeof why, "%.*s", at ? (int)strcspn(at, " \"\n") : 0, at ? at : "");
    free(text);
    if (!strcmp(why, "native_samples=perf"))
        return;
    snprintf(msg, sizeof msg, "perf_event user-stack sampling not permitted here (%s)",
             why[0] ? why : "the tracer said nothing of it");
    ctt_skip(msg);
}
