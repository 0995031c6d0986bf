/* Running PyTorch's own examples and the bounds of every verdict (see ex.h). */
#define _GNU_SOURCE
#include "ex.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ex_run(ctt_proc *p, char dir[4096], const char *name, const char *fake, const char *const args[],
           const char *const env[])
{
    char main_py[4200];
    snprintf(main_py, sizeof main_py, "%s/%s/main.py", EX_ROOT, name);
    if (access(main_py, R_OK) != 0) {
        char why[4400];
        snprintf(why, sizeof why, "%s: PyTorch's examples are not there (EX_ROOT)", main_py);
        ctt_skip(why);
    }
    const char *argv[48] = {name};
    int argc = 1;
    for (int i = 0; args && args[i] && argc < 47; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    char size[128], root[4200], work[4200];
    snprintf(size, sizeof size, "FAKE_SIZE=%s", fake);
    snprintf(root, sizeof root, "EX_ROOT=%s", EX_ROOT);
    snprintf(work, sizeof work, "EX_WORKDIR=%s", ctt_tmpdir());
    const char *envv[32] = {size, root, work};
    int envc = 3;
    for (int i = 0; env && env[i] && envc < 31; i++)
        envv[envc++] = env[i];
    envv[envc] = NULL;
    return pt_run(p, dir, name, 1, EX_SRC "/example.py", argv, envv);
}

/* The idle time a finding drawn from one cause of idle time may claim, or -1 for the others. */
static double ex_held(const tj *d)
{
    const char *id = tj_str(d, "id");
    /* with the main process's wait for the cores the loader workers held in gpu-gaps' gaps,
     * which dataloader-starvation is owed (cta_diag_idle.c) */
    if (!strcmp(id, "dataloader-starvation"))
        return tj_num(d, "evidence.gap_ns") + (tj_path(d, "evidence.main_wait_for_workers_ns")
                                                   ? tj_num(d, "evidence.main_wait_for_workers_ns")
                                                   : 0);
    if (!strcmp(id, "gpu-gaps"))
        return tj_num(d, "evidence.gap_ns");
    if (!strcmp(id, "excessive-sync") || !strcmp(id, "sync-memcpy"))
        return tj_num(d, "evidence.host_blocked_ns");
    if (!strcmp(id, "launch-bound"))
        return tj_num(d, "evidence.waited_for_launch_ns");
    return -1;
}

int ex_bounds(const tj *s)
{
    const tj *dg = tj_get(s, "diagnoses");
    double idle_claims = 0, window = 0;
    for (size_t i = 0; dg && i < dg->n; i++) {
        const tj *d = dg->v[i];
        double save = tj_num(d, "estimated_saving_ns"), held = ex_held(d);
        if (save > tj_num(d, "window_ns") || (held >= 0 && save > held)) {
            ctt_fail_at(__FILE__, __LINE__, "%s: expected a saving within %.0f ns (window %.0f), found %.0f",
                        tj_str(d, "id"), held, tj_num(d, "window_ns"), save);
            return 1;
        }
        if (held >= 0) {
            idle_claims += save;
            window = tj_num(d, "window_ns");
        }
    }
    if (idle_claims > window) {
        ctt_fail_at(__FILE__, __LINE__, "expected the idle-time findings to save at most the window "
                    "(%.0f ns) together, found %.0f", window, idle_claims);
        return 1;
    }
    return 0;
}

tj *ex_verdict(const char *dir, const tj **lead)
{
    tj *s = an_summary(dir, NULL);
    if (!s || ex_bounds(s)) {
        tj_free(s);
        return NULL;
    }
    if ((*lead = tj_path(s, "diagnoses.0")))
        return s;
    ctt_fail_at(__FILE__, __LINE__, "%s: expected a finding, found none", dir);
    tj_free(s);
    return NULL;
}

int ex_has_cause(const tj *c, const char *name)
{
    const tj *v = tj_get(c, "causes");
    for (size_t i = 0; v && i < v->n; i++)
        if (v->v[i]->type == TJ_STR && !strcmp(v->v[i]->str, name))
            return 1;
    return 0;
}

int ex_loader_cause_fits(const tj *d, int running)
{
    const tj *c = tj_get(d, "cause");
    const char *fix = tj_str(d, "fix");
    ASSERT(c && fix);
    const char *who = running ? "worker" : "main";
    char k1[64], k2[64];
    snprintf(k1, sizeof k1, "%s_cpu_cores", who);
    snprintf(k2, sizeof k2, "%s_runqueue_wait_cores", who);
    double cpu = tj_num(c, k1), wait = tj_num(c, k2), free_cores = tj_num(c, "free_cores");
    /* the main process loading its own batches: more workers, however busy the cores (applying
     * -j 2 to imagenet -j 0 beside other work made it 3.5 times faster: make bench, section 12) */
    if (!running) {
        if (ex_has_cause(c, "cpu-bound")) {
            ctt_fail_at(__FILE__, __LINE__, "expected workers for the main process's loading, "
                        "found cpu-bound; fix: %s", fix);
            return 1;
        }
        ASSERT_CONTAINS(fix, "num_workers");
        return 0;
    }
    int per = running;
    int short_of_cores = cpu + wait >= 0.5 * per && wait >= 0.2 * cpu;
    if (short_of_cores && free_cores < 0.3 && !ex_has_cause(c, "cpu-bound")) {
        ctt_fail_at(__FILE__, __LINE__, "expected cause cpu-bound: the loading (%s, %d at a time) "
                    "on %.2f cores waited %.2f cores for one with %.2f free; found %zu causes, fix: %s",
                    running ? "workers" : "main process", per, cpu, wait, free_cores,
                    tj_len(c, "causes"), fix);
        return 1;
    }
    if (ex_has_cause(c, "cpu-bound") && !ex_has_cause(c, "add-workers"))
        ASSERT_CONTAINS(fix, "more DataLoader workers will not help");
    if (ex_has_cause(c, "add-workers")) {
        if (short_of_cores) {
            ctt_fail_at(__FILE__, __LINE__, "expected no more workers where the %s waited %.2f "
                        "cores for a core (on %.2f)", who, wait, cpu);
            return 1;
        }
        ASSERT(tj_num(c, "workers_recommended") > running);
        ASSERT_CONTAINS(fix, "num_workers");
    }
    return 0;
}

double ex_sum_after(const char *text, const char *prefix, const char *key)
{
    double sum = 0;
    int n = 0;
    size_t plen = strlen(prefix), klen = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *end = strchr(l, '\n'), *k = strncmp(l, prefix, plen) ? NULL : strstr(l, key);
        if (k && (!end || k < end) && k[klen] == ' ') {
            sum += strtod(k + klen + 1, NULL);
            n++;
        }
    }
    return n ? sum : -1;
}

int ex_names_any(const char *text, const char *words)
{
    char list[256];
    snprintf(list, sizeof list, "%s", words);
    for (char *save = NULL, *w = strtok_r(list, "|", &save); w; w = strtok_r(NULL, "|", &save))
        if (strstr(text, w))
            return 1;
    return 0;
}

double ex_share_naming(const tj *d, const char *who, const char *state, const char *words,
                       double *listed)
{
    const tj *h = tj_get(d, "host_activity");
    double share = 0;
    if (listed)
        *listed = 0;
    for (size_t i = 0; h && i < h->n; i++) {
        const char *site = tj_str(h->v[i], "site"), *frame = tj_str(h->v[i], "frame");
        const char *its = tj_str(h->v[i], "who");
        if (who ? !its || strcmp(its, who) : its != NULL)
            continue;
        if (state && strcmp(tj_str(h->v[i], "state"), state))
            continue;
        if (listed)
            *listed += tj_num(h->v[i], "share");
        if ((site && ex_names_any(site, words)) || (frame && ex_names_any(frame, words)))
            share += tj_num(h->v[i], "share");
    }
    return share;
}
