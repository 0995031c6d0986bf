#include "cta_load.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cta_cli.h"
#include "cta_kineto_open.h"
#include "cta_paths.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cta_load_open(const char *cmd, char *const *paths, int npaths, int by_file, ct_reader **rd)
{
    int kineto = cta_paths_kineto(paths, npaths);
    if (kineto)
        return cta_kineto_open(cmd, paths, npaths, kineto, rd);
    char **files;
    size_t n;
    if (cta_paths_expand(cmd, paths, npaths, &files, &n) != 0)
        return CTA_EXIT_INPUT;
    ct_reader_opts opts = {.defer_spans = by_file};
    int rc = cta_cli_open(rd, files, n, &opts);
    cta_paths_free(files);
    return rc;
}

uint64_t cta_load_start(const ct_reader *rd)
{
    uint64_t start = UINT64_MAX;
    for (uint32_t i = 0; i < ct_reader_nfiles(rd); i++) {
        const ct_header *h = ct_reader_header(rd, i);
        int64_t t = h ? (int64_t)h->monotonic_ns + ct_reader_offset(rd, i) : 0;
        if (t < 0)
            t = 0;
        if ((uint64_t)t < start)
            start = (uint64_t)t;
    }
    return start == UINT64_MAX ? 0 : start;
}

int cta_load_run(const char *cmd, ct_reader *rd, const cta_observer *obs, int variants, cta_model *m)
{
    cta_model_init(m, rd, obs);
    m->variants_on = variants;
    int tty = isatty(2);
    double t0 = now_s(), last = t0;
    ct_rec r;
    int got;
    int stopped = 0;
    while ((got = ct_reader_next(rd, &r)) > 0) {
        cta_model_feed(m, &r);
        if (obs && obs->on_record && obs->on_record(obs->ctx, &r)) {
            stopped = 1;
            break;
        }
        if (tty && (m->records & 0xFFFFF) == 0) {
            double t = now_s();
            if (t - last >= 0.5) {
                fprintf(stderr, "\rcutrace %s: %llu records read (%.1f M/s)...", cmd,
                        (unsigned long long)m->records, (double)m->records / (t - t0) / 1e6);
                last = t;
            }
        }
    }
    if (tty && last > t0)
        fprintf(stderr, "\r%*s\r", 70, "");
    if (got < 0 || stopped) {
        if (got < 0)
            fprintf(stderr, "cutrace %s: error: %s\n", cmd, ct_reader_error(rd));
        cta_model_free(m);
        return got < 0 ? CTA_EXIT_INPUT : CTA_EXIT_FAIL;
    }
    cta_model_finish(m);
    return CTA_EXIT_OK;
}

void cta_load_close(ct_reader *rd, cta_model *m)
{
    cta_model_free(m);
    ct_reader_close(rd);
}

/* ---- file by file, on worker threads -------------------------------------------------------- */

typedef struct {
    cta_model m;
    cta_observer obs;
    void *state;
    int rc;                       /* CTA_EXIT_* of its pass */
} file_part;

typedef struct {
    const char *cmd;
    ct_reader *rd;
    const cta_file_observers *fo;
    int variants;
    uint32_t nfiles;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t next;                /* the next file to take */
    int stop;                     /* a file failed: take no more */
    file_part **done;             /* per file: its finished part, NULL until then */
    uint64_t records;             /* read so far, for the progress line (atomic) */
} pass;

/* Models one file into a part of its own: nothing here is shared with another worker but the
 * reader's per-file state of files no other worker reads. */
static file_part *model_file(pass *ps, uint32_t file)
{
    file_part *fp = cta_xmalloc(sizeof *fp, "a file's model");
    /* the sweep of the file's process lags by its span from the start (cta_model.h) */
    int got = ct_reader_spans_in(ps->rd, file);
    if (ps->fo)
        fp->state = ps->fo->begin(ps->fo->ctx, file, &fp->m, &fp->obs);
    const cta_observer *obs = ps->fo ? &fp->obs : NULL;
    cta_model_init_file(&fp->m, ps->rd, obs, file);
    fp->m.variants_on = ps->variants;
    ct_rec r;
    uint64_t counted = 0;
    while (got >= 0 && (got = ct_reader_next_in(ps->rd, file, &r)) > 0) {
        cta_model_feed(&fp->m, &r);
        if (obs && obs->on_record && obs->on_record(obs->ctx, &r)) {
            fp->rc = CTA_EXIT_FAIL;
            break;
        }
        if ((fp->m.records & 0xFFFF) == 0) {
            __atomic_fetch_add(&ps->records, fp->m.records - counted, __ATOMIC_RELAXED);
            counted = fp->m.records;
        }
    }
    __atomic_fetch_add(&ps->records, fp->m.records - counted, __ATOMIC_RELAXED);
    if (got < 0)
        fp->rc = CTA_EXIT_INPUT;
    if (fp->rc == CTA_EXIT_OK)
        cta_model_finish(&fp->m);
    if (ps->fo && ps->fo->done)
        ps->fo->done(ps->fo->ctx, fp->state);
    return fp;
}

static void *worker(void *arg)
{
    pass *ps = arg;
    for (;;) {
        pthread_mutex_lock(&ps->mu);
        uint32_t file = ps->next;
        int go = !ps->stop && file < ps->nfiles;
        if (go)
            ps->next++;
        pthread_mutex_unlock(&ps->mu);
        if (!go)
            return NULL;
        file_part *fp = model_file(ps, file);
        pthread_mutex_lock(&ps->mu);
        ps->done[file] = fp;
        if (fp->rc != CTA_EXIT_OK)
            ps->stop = 1;
        pthread_cond_broadcast(&ps->cv);
        pthread_mutex_unlock(&ps->mu);
    }
}

/* Waits for file's part, showing progress on a terminal; NULL if it will never come (an
 * earlier failure stopped the workers before they took it). */
static file_part *wait_part(pass *ps, uint32_t file, int tty, double t0, double *last)
{
    pthread_mutex_lock(&ps->mu);
    while (!ps->done[file] && !(ps->stop && file >= ps->next)) {
        if (!tty) {
            pthread_cond_wait(&ps->cv, &ps->mu);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 500000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&ps->cv, &ps->mu, &ts);
        double t = now_s();
        if (t - *last >= 0.5) {
            uint64_t n = __atomic_load_n(&ps->records, __ATOMIC_RELAXED);
            fprintf(stderr, "\rcutrace %s: %llu records read (%.1f M/s)...", ps->cmd,
                    (unsigned long long)n, (double)n / (t - t0) / 1e6);
            *last = t;
        }
    }
    file_part *fp = ps->done[file];
    pthread_mutex_unlock(&ps->mu);
    return fp;
}

int cta_load_default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int cta_load_run_jobs(const char *cmd, ct_reader *rd, const cta_file_observers *fo, int variants,
                      int jobs, cta_model *m)
{
    uint32_t n = (uint32_t)ct_reader_nfiles(rd);
    pass ps = {.cmd = cmd, .rd = rd, .fo = fo, .variants = variants, .nfiles = n};
    pthread_mutex_init(&ps.mu, NULL);
    pthread_cond_init(&ps.cv, NULL);
    ps.done = cta_xmalloc(n * sizeof *ps.done, "the files' models");
    cta_model_init_merged(m, rd, variants);
    if ((uint32_t)jobs > n)
        jobs = (int)n;
    pthread_t *th = cta_xmalloc((size_t)jobs * sizeof *th, "the workers");
    int started = 0;
    for (; started < jobs; started++)
        if (pthread_create(&th[started], NULL, worker, &ps) != 0)
            break;
    int rc = CTA_EXIT_OK;
    if (!started) {
        fprintf(stderr, "cutrace %s: error: cannot start a thread to read the traces\n", cmd);
        rc = CTA_EXIT_FAIL;
        ps.stop = 1;
    }
    int tty = isatty(2);
    double t0 = now_s(), last = t0;
    for (uint32_t f = 0; f < n; f++) {
        file_part *fp = rc == CTA_EXIT_OK ? wait_part(&ps, f, tty, t0, &last) : NULL;
        if (!fp) {
            if (rc == CTA_EXIT_OK) /* cannot happen: the failure is at an earlier file */
                rc = CTA_EXIT_FAIL;
            continue;
        }
        if (rc == CTA_EXIT_OK && fp->rc != CTA_EXIT_OK) {
            rc = fp->rc;
            if (rc == CTA_EXIT_INPUT)
                fprintf(stderr, "cutrace %s: error: %s\n", cmd, ct_reader_error_in(rd, f));
        }
        if (rc == CTA_EXIT_OK)
            cta_model_merge(m, &fp->m);
        if (fo && fo->end(fo->ctx, f, fp->state, rc == CTA_EXIT_OK ? m : NULL, &fp->m) &&
            rc == CTA_EXIT_OK)
            rc = CTA_EXIT_FAIL;
        if (rc != CTA_EXIT_OK) {
            pthread_mutex_lock(&ps.mu);
            ps.stop = 1;
            pthread_mutex_unlock(&ps.mu);
        }
        cta_model_free(&fp->m);
        free(fp);
        ps.done[f] = NULL;
    }
    if (rc != CTA_EXIT_OK && fo && fo->abort)
        fo->abort(fo->ctx);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    /* parts finished after the failure stopped the merge */
    for (uint32_t f = 0; f < n; f++)
        if (ps.done[f]) {
            if (fo)
                fo->end(fo->ctx, f, ps.done[f]->state, NULL, &ps.done[f]->m);
            cta_model_free(&ps.done[f]->m);
            free(ps.done[f]);
        }
    free(th);
    free(ps.done);
    pthread_mutex_destroy(&ps.mu);
    pthread_cond_destroy(&ps.cv);
    if (tty && last > t0)
        fprintf(stderr, "\r%*s\r", 70, "");
    if (rc != CTA_EXIT_OK)
        cta_model_free(m); /* every process was finished with its part */
    return rc;
}
