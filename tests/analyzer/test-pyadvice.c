/* Python call sites everywhere a site is shown (issue 14 items 2 and 3), on py_sites
 * (tests/workloads/py_sites.py): one Python line reached through two native paths is one
 * diagnosis row whose figures are those of the trace's records; the VRAM holders, the timeline's
 * call events and the fix name the line; no PyTorch terms without PyTorch. The lines come from the
 * script's `# cutrace: <what>` markers. */
#include <stdlib.h>
#include <string.h>

#include "an_helpers.h"
#include "tr_confine.h"

/* "py_sites:LINE in FUNCTION" for the marker `what` (py_sites as the traced script is named). */
static int site_of(char *buf, size_t len, const char *what, const char *function)
{
    char path[4096];
    int line = an_marker_line(ctt_path(path, "tests/workloads/py_sites"), what);
    snprintf(buf, len, "py_sites:%d in %s", line, function);
    return line;
}

/* From `cutrace dump` alone: the calls of fn, and of the host-to-device copies (py_sites makes
 * them only on the line under test) the bytes of their COPY records and the time of their GPU
 * records (joined by correlation id). */
static int dump_counts(const char *dir, const char *fn, uint64_t *calls, uint64_t *bytes,
                       uint64_t *gpu_ns)
{
    ctt_proc d;
    char want[96];
    unsigned long long h2d[64];
    int nh2d = 0;
    ASSERT_INT(an_run(&d, "dump {}", dir), ==, 0);
    snprintf(want, sizeof want, " fn=\"%s\"#", fn);
    *calls = *bytes = *gpu_ns = 0;
    /* two passes: a GPU record may come before its COPY record */
    for (int pass = 0; pass < 2; pass++)
        for (const char *l = d.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            unsigned long long corr, v;
            const char *f, *e = strchr(l, '\n');
            char line[1024];
            snprintf(line, sizeof line, "%.*s", e ? (int)(e - l) : (int)strlen(l), l);
            if (pass == 0) {
                *calls += strstr(line, " api ") && strstr(line, want);
                if (strstr(line, " copy ") && strstr(line, " dir=1 ") && (f = strstr(line, " corr=")) &&
                    sscanf(f, " corr=%llu", &corr) == 1 && (f = strstr(line, " bytes=")) &&
                    sscanf(f, " bytes=%llu", &v) == 1) {
                    ASSERT_INT(nh2d, <, 64);
                    h2d[nh2d++] = corr;
                    *bytes += v;
                }
            } else if (strstr(line, " gpu ") && (f = strstr(line, " corr=")) &&
                       sscanf(f, " corr=%llu", &corr) == 1 && (f = strstr(line, " dur=")) &&
                       sscanf(f, " dur=%llu", &v) == 1) {
                for (int i = 0; i < nh2d; i++)
                    *gpu_ns += h2d[i] == corr ? v : 0;
            }
        }
    ctt_proc_free(&d);
    return 0;
}

/* The timeline's events of fn: how many have args.site == site, and how many distinct args.stack
 * texts they have (each event's own stack, not grouped). */
static int timeline_sites(const char *dir, const char *fn, const char *site, int *at_site,
                          int *stacks)
{
    tj *t = an_timeline(dir);
    ASSERT(t);
    const tj *ev = tj_get(t, "traceEvents");
    const char *seen[8];
    *at_site = *stacks = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const tj *e = ev->v[i];
        if (strcmp(tj_str(e, "ph"), "X") || strcmp(tj_str(e, "name"), fn))
            continue;
        *at_site += !strcmp(tj_str(e, "args.site"), site);
        const char *st = tj_str(e, "args.stack");
        ASSERT_CONTAINS(st, "ffi_call");
        int k = 0;
        while (k < *stacks && strcmp(seen[k], st))
            k++;
        if (k == *stacks && k < 8)
            seen[(*stacks)++] = st;
    }
    tj_free(t);
    return 0;
}

/* No PyTorch word in a fix of a process without PyTorch. */
static int no_torch_terms(const char *fix)
{
    static const char *const words[] = {"DataLoader", ".item()", ".cuda(", ".to(", "pin_memory",
                                        "torch"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(fix, words[i])) {
            ctt_fail_at(__FILE__, __LINE__, "PyTorch term '%s' in a fix without PyTorch: %s",
                        words[i], fix);
            return 1;
        }
    return 0;
}

TEST_IMPL(python_line_through_two_native_paths_is_one_site)
{
    char dir[4096], site[128], want[256], *out;
    ASSERT_INT(site_of(site, sizeof site, "two-paths", "two_paths"), >, 0);
    /* favoured (tr_confine.h): the blocking copies' wait is a diagnosis only while the host
     * keeps up, which beside two CPU-bound processes and another suite it did not */
    tr_cgroup g;
    tr_cgroup_favour(&g);
    const char *traced = an_trace_workload(dir, "twopaths", "py_sites --steps 10 --two-paths", NULL, &out);
    tr_cgroup_leave(&g);
    ASSERT(traced);
    ASSERT_CONTAINS(out, "py_sites: steps=10");
    free(out);
    uint64_t calls, bytes, gpu_ns;
    ASSERT_INT(dump_counts(dir, "cuMemcpyHtoD_v2", &calls, &bytes, &gpu_ns), ==, 0);
    ASSERT_UINT(calls, ==, 10);
    /* each call's own stack: the line, through two native paths */
    int at_site, stacks;
    ASSERT_INT(timeline_sites(dir, "cuMemcpyHtoD_v2", site, &at_site, &stacks), ==, 0);
    ASSERT_INT(at_site, ==, (int)calls);
    ASSERT_INT(stacks, ==, 2);
    /* every diagnosis, however small: the blocking copies save ~0.8 ms of a ~3 ms window, and a
     * host preempted beside CPU-bound work (a longer window) put them under the default bound */
    tj *s = an_summary(dir, "--min-saving 0");
    ASSERT(s);
    const tj *d = an_diag(s, "pageable-memcpy");
    ASSERT(d);
    ASSERT_INT(tj_len(d, "sites"), ==, 1);
    ASSERT_STR(tj_str(d, "sites.0.stack"), site);
    ASSERT_UINT(tj_num(d, "sites.0.count"), ==, calls);
    ASSERT_UINT(tj_num(d, "sites.0.bytes"), ==, bytes);
    ASSERT_UINT(tj_num(d, "sites.0.total_ns"), ==, gpu_ns);
    ASSERT_INT(tj_len(d, "sites.0.stacks"), ==, 2);
    ASSERT(strcmp(tj_str(d, "sites.0.stacks.0"), tj_str(d, "sites.0.stacks.1")) != 0);
    ASSERT(tj_num(d, "sites.0.more_stacks") == 0);
    snprintf(want, sizeof want, "the copy at %s copies from pageable memory (%llu calls): pin host buffers",
             site, (unsigned long long)calls);
    ASSERT_CONTAINS(tj_str(d, "fix"), want);
    ASSERT_INT(no_torch_terms(tj_str(d, "fix")), ==, 0);
    /* the blocking copies: the two-path line is one row too, and the fix names both lines */
    char readback[128];
    ASSERT_INT(site_of(readback, sizeof readback, "readback", "two_paths"), >, 0);
    const tj *sc = an_diag(s, "sync-memcpy");
    ASSERT(sc);
    ASSERT_INT(tj_len(sc, "sites"), ==, 2);
    ASSERT_UINT(tj_num(tj_find(tj_get(sc, "sites"), "stack", site), "count"), ==, calls);
    snprintf(want, sizeof want, "the blocking copy at %s waits for the GPU (10 calls)", readback);
    ASSERT_CONTAINS(tj_str(sc, "fix"), want);
    snprintf(want, sizeof want, "the blocking copy at %s waits for the GPU (%llu calls)", site,
             (unsigned long long)calls);
    ASSERT_CONTAINS(tj_str(sc, "fix"), want);
    ASSERT_INT(no_torch_terms(tj_str(sc, "fix")), ==, 0);
    /* the two allocations of one line, through the two paths, hold the peak as one holder */
    ctt_proc dump;
    ASSERT_INT(an_run(&dump, "dump {}", dir), ==, 0);
    int allocs = 0;
    for (const char *l = strstr(dump.out, " op=alloc "); l; l = strstr(l + 1, " op=alloc "))
        allocs++;
    ctt_proc_free(&dump);
    ASSERT_INT(allocs, ==, 2);
    ASSERT_INT(site_of(site, sizeof site, "two-paths-alloc", "two_paths"), >, 0);
    ASSERT_INT(tj_len(s, "vram.0.peak_holders"), ==, 1);
    ASSERT_STR(tj_str(s, "vram.0.peak_holders.0.site"), site);
    ASSERT_UINT(tj_num(s, "vram.0.peak_holders.0.allocations"), ==, allocs);
    ASSERT_UINT(tj_num(s, "vram.0.peak_holders.0.bytes"), ==, tj_num(s, "vram.0.peak_bytes"));
    ASSERT_INT(tj_len(s, "vram.0.peak_holders.0.stacks"), ==, 2);
    tj_free(s);
    return 0;
}

TEST_IMPL(python_line_in_holders_timeline_and_fix)
{
    char dir[4096], alloc[128], copy[128], sync[128], want[256], *out;
    ASSERT_INT(site_of(alloc, sizeof alloc, "alloc", "train"), >, 0);
    ASSERT_INT(site_of(copy, sizeof copy, "pageable-copy", "train_step"), >, 0);
    ASSERT_INT(site_of(sync, sizeof sync, "step-sync", "train_step"), >, 0);
    /* as python_sites's (test-pysites.c): 8 MiB copies, whose staging, the host in CUDA,
     * outweighs the Python between the calls, in a cgroup favoured over other work, so that
     * each step's gap after its synchronization stays the sync's (once fakecuda's device no
     * longer woke late, a host descheduled in that Python made it a data-loading gap in 1 run
     * of 10, with 1 MiB or 8) */
    tr_cgroup g;
    tr_cgroup_favour(&g);
    const char *traced =
        an_trace_workload(dir, "pysites", "py_sites --steps 10 --mib 8", NULL, &out);
    tr_cgroup_leave(&g);
    ASSERT(traced);
    free(out);
    /* every finding, however small: its synchronization waits for nothing (the copy before it
     * is synchronous), so it is owed little of the Python work after it */
    tj *s = an_summary(dir, "--min-saving 0");
    ASSERT(s);
    /* the holder at the peak: shown by the line, its full stack kept */
    ASSERT_STR(tj_str(s, "vram.0.peak_holders.0.site"), alloc);
    ASSERT_UINT(tj_num(s, "vram.0.peak_holders.0.bytes"), ==, 8 << 20);
    ASSERT_CONTAINS(tj_str(s, "vram.0.peak_holders.0.stack"), "ffi_call");
    ASSERT_CONTAINS(tj_str(s, "vram.0.peak_holders.0.stacks.0"), "train (py_sites:");
    const tj *y = an_diag(s, "excessive-sync");
    ASSERT(y);
    snprintf(want, sizeof want, "the synchronization at %s waits for the GPU (10 calls): remove", sync);
    ASSERT_CONTAINS(tj_str(y, "fix"), want);
    ASSERT_INT(no_torch_terms(tj_str(y, "fix")), ==, 0);
    const tj *pg = an_diag(s, "pageable-memcpy");
    ASSERT(pg);
    snprintf(want, sizeof want, "the copy at %s copies from pageable memory (10 calls): ", copy);
    ASSERT_CONTAINS(tj_str(pg, "fix"), want);
    ASSERT_INT(no_torch_terms(tj_str(pg, "fix")), ==, 0);
    tj_free(s);
    /* the text: the VRAM row and the fixes by the line */
    ctt_proc p;
    ASSERT_INT(an_run(&p, "summary {}", dir), ==, 0);
    snprintf(want, sizeof want, "8.00 MiB in 1  %s\n", alloc);
    ASSERT_CONTAINS(p.out, want);
    snprintf(want, sizeof want, "fix: the copy at %s copies", copy);
    ASSERT_CONTAINS(p.out, want);
    ctt_proc_free(&p);
    /* the timeline: each call with a stack has its site and full stack */
    int at_site, stacks;
    ASSERT_INT(timeline_sites(dir, "cuCtxSynchronize", sync, &at_site, &stacks), ==, 0);
    ASSERT_INT(at_site, ==, 10);
    ASSERT_INT(stacks, ==, 1);
    return 0;
}
