#include "cta_load.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cta_cli.h"
#include "cta_kineto_conv.h"
#include "cta_kineto_report.h"
#include "cta_paths.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cta_load_open(const char *cmd, char *const *paths, int npaths, ct_reader **rd)
{
    int kineto = cta_kineto_inputs(paths, npaths);
    if (kineto)
        return cta_kineto_open(cmd, paths, npaths, kineto, rd);
    char **files;
    size_t n;
    if (cta_paths_expand(cmd, paths, npaths, &files, &n) != 0)
        return CTA_EXIT_INPUT;
    int rc = cta_cli_open(rd, files, n, NULL);
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

int cta_load(const char *cmd, char *const *paths, int npaths, const cta_observer *obs,
            int variants, ct_reader **rd, cta_model *m)
{
    int rc = cta_load_open(cmd, paths, npaths, rd);
    if (rc != CTA_EXIT_OK)
        return rc;
    rc = cta_load_run(cmd, *rd, obs, variants, m);
    if (rc != CTA_EXIT_OK) {
        ct_reader_close(*rd);
        *rd = NULL;
    }
    return rc;
}

void cta_load_close(ct_reader *rd, cta_model *m)
{
    cta_model_free(m);
    ct_reader_close(rd);
}
