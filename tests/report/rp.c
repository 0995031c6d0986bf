/* The report suite's steps (see rp.h). */
#define _GNU_SOURCE
#include "rp.h"

#include <stdlib.h>
#include <string.h>

/* The browser tests/report/chromium.sh found, or a skip. */
static const char *rp_browser(void)
{
    return ctt_status_ok(RP_STATUS, "browser for the report tests", "tests/report/chromium.sh");
}

void rp_name(rp_files *f, const char *name)
{
    rp_browser(); /* skip before any work when there is no browser */
    const char *t = ctt_tmpdir();
    snprintf(f->html, sizeof f->html, "%s/%s.html", t, name);
    snprintf(f->summary, sizeof f->summary, "%s/%s.json", t, name);
    snprintf(f->dom, sizeof f->dom, "%s/%s.dom.html", t, name);
    snprintf(f->log, sizeof f->log, "%s/%s.log", t, name);
    snprintf(f->netlog, sizeof f->netlog, "%s/%s.netlog.json", t, name);
}

int rp_write(const char *path, const char *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    int ok = fp && fwrite(data, 1, len, fp) == len;
    if (fp && fclose(fp) != 0)
        ok = 0;
    if (!ok)
        ctt_fail_at(__FILE__, __LINE__, "%s: could not be written", path);
    return !ok;
}

/* cutrace FIRST RP_OPTS PATHS [LAST...]: argv with RP_OPTS split on spaces. */
static int rp_cutrace(ctt_proc *p, const char *first, const char *const paths[],
                      const char *const last[])
{
    char opts[1024] = RP_OPTS;
    char *argv[128] = {(char *)an_cutrace(), (char *)first};
    int n = 2;
    if (!strcmp(first, "summary"))
        argv[n++] = "--json";
    for (char *tok = strtok(opts, " "); tok && n < 64; tok = strtok(NULL, " "))
        argv[n++] = tok;
    for (int i = 0; paths[i] && n < 120; i++)
        argv[n++] = (char *)paths[i];
    for (int i = 0; last && last[i] && n < 127; i++)
        argv[n++] = (char *)last[i];
    argv[n] = NULL;
    if (ctt_run(p, argv, NULL, 120) != 0) {
        ctt_fail_at(__FILE__, __LINE__, "cutrace %s: could not be started", first);
        return 1;
    }
    if (!p->exited || p->code != 0) {
        ctt_fail_at(__FILE__, __LINE__, "cutrace %s %s ...: expected exit status 0, found %s %d; stderr:\n%s",
                    first, RP_OPTS, p->exited ? "exit status" : "signal", p->code, p->err);
        ctt_proc_free(p);
        return 1;
    }
    return 0;
}

int rp_report(const rp_files *f, const char *const paths[], const char *const only[])
{
    ctt_proc p;
    const char *out[16] = {"-o", f->html};
    for (int i = 0; only && only[i] && i < 13; i++)
        out[2 + i] = only[i];
    if (rp_cutrace(&p, "report", paths, out) != 0)
        return 1;
    ctt_proc_free(&p);
    if (rp_cutrace(&p, "summary", paths, NULL) != 0)
        return 1;
    int rc = rp_write(f->summary, p.out, p.out_len);
    ctt_proc_free(&p);
    return rc;
}

tj *rp_summary(const rp_files *f)
{
    char *text = ctt_read_file(f->summary, NULL), err[256];
    tj *j = text ? tj_parse(text, err, sizeof err) : NULL;
    if (!j)
        ctt_fail_at(__FILE__, __LINE__, "%s: expected the summary's JSON, found %s", f->summary,
                    text ? err : "no file");
    free(text);
    return j;
}

int rp_demo(rp_files *f, const char *name)
{
    char dir[4096], nvtx[4200], args[4400], *out = NULL;
    snprintf(nvtx, sizeof nvtx, "%s/%s.nvtx", ctt_tmpdir(), name);
    snprintf(args, sizeof args, "train_loop --verify --nvtx %s", nvtx);
    char *const env[] = {"FAKECUDA_DEVICES=h100", NULL};
    rp_name(f, name);
    const char *traces = an_trace_workload(dir, name, args, env, &out);
    free(out);
    if (!traces) {
        ctt_fail_at(__FILE__, __LINE__, "cutrace run -- %s: expected exit status 0", args);
        return 1;
    }
    const char *const paths[] = {traces, NULL};
    return rp_report(f, paths, NULL);
}

int rp_chromium(const rp_files *f, const char *const extra[], const char *out)
{
    static int runs;
    char profile[4200], url[4200], cache[4300], config[4300];
    /* a fresh profile and caches per run: nothing from an earlier page or from $HOME */
    snprintf(profile, sizeof profile, "%s/chromium-%d", ctt_tmpdir(), runs++);
    snprintf(cache, sizeof cache, "XDG_CACHE_HOME=%s/cache", profile);
    snprintf(config, sizeof config, "XDG_CONFIG_HOME=%s/config", profile);
    char udd[4300], net[4200];
    snprintf(udd, sizeof udd, "--user-data-dir=%s", profile);
    snprintf(net, sizeof net, "--log-net-log=%s", f->netlog);
    snprintf(url, sizeof url, "file://%s", f->html);
    /* the virtual time budget: the page's timers run (and their errors show) before the DOM
     * is dumped, and a screenshot waits for the whole page to be painted */
    char *argv[32] = {(char *)rp_browser(), "--headless", "--no-sandbox", "--disable-gpu",
                      "--enable-logging=stderr", "--v=0",
                      "--host-resolver-rules=MAP * ~NOTFOUND", udd, net,
                      "--virtual-time-budget=3000"};
    int n = 10;
    for (int i = 0; extra[i] && n < 30; i++)
        argv[n++] = (char *)extra[i];
    argv[n++] = url;
    argv[n] = NULL;
    char *const env[] = {cache, config, NULL};
    ctt_proc p;
    /* about 2 s here; a page that never finishes loading (an alert(), a hung script) is
     * killed at the limit */
    if (ctt_run(&p, argv, env, 30) != 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s: could not be started", argv[0]);
        return 1;
    }
    int rc = rp_write(f->log, p.err, p.err_len) || (out && rp_write(out, p.out, p.out_len));
    if (!p.exited || p.code != 0) {
        ctt_fail_at(__FILE__, __LINE__, "chromium %s: expected exit status 0, found %s %d; stderr:\n%s",
                    f->html, p.exited ? "exit status" : "signal", p.code, p.err);
        rc = 1;
    }
    ctt_proc_free(&p);
    return rc;
}

int rp_check(const rp_files *f, const char *hostile, char **out)
{
    char *argv[] = {"python3", RP_SRC "/check_report.py", (char *)f->dom, (char *)f->log,
                    (char *)f->summary, "--netlog", (char *)f->netlog,
                    hostile ? "--hostile" : NULL, (char *)hostile, NULL};
    ctt_proc p;
    *out = NULL;
    if (ctt_run(&p, argv, NULL, 60) != 0 || !p.exited || p.code > 1) {
        ctt_fail_at(__FILE__, __LINE__, "check_report.py %s: did not run: %s", f->dom, p.err ? p.err : "");
        ctt_proc_free(&p);
        return -1;
    }
    *out = p.out;
    p.out = NULL;
    int code = p.code;
    ctt_proc_free(&p);
    return code;
}

int rp_render_ok(const rp_files *f, const char *hostile, char **out)
{
    const char *const dump[] = {"--dump-dom", NULL};
    if (rp_chromium(f, dump, f->dom) != 0)
        return 1;
    char *res;
    int rc = rp_check(f, hostile, &res);
    if (rc != 0) {
        ctt_fail_at(__FILE__, __LINE__, "%s as Chromium rendered it (%s) does not match %s:\n%s",
                    f->html, f->dom, f->summary, res ? res : "");
        free(res);
        return 1;
    }
    if (out)
        *out = res;
    else
        free(res);
    return 0;
}

long rp_count(const char *out, const char *key)
{
    const char *line = out ? strstr(out, "checked: ") : NULL;
    char want[64];
    snprintf(want, sizeof want, " %s ", key);
    const char *k = line ? strstr(line, want) : NULL;
    return k ? strtol(k + strlen(want), NULL, 10) : -1;
}
