/* What a person reads: names as the user wrote them (nvcc's internal launch entry point, mangled
 * kernel names), the runtime and driver API in separate tables, sentences that say what a bound
 * or a missing reading means, `cutrace dump DIR`, and straggler verdicts only among ranks. */
#include "an_helpers.h"

#include <stdlib.h>

static int text_of(ctt_proc *p, const char *args, const char *dir)
{
    return an_run(p, args, dir) == 0 && p->exited && p->code == 0;
}

/* The whole file at path (free it), or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b)
        b[n] = 0;
    fclose(f);
    return b;
}

/* `cutrace timeline DIR` into the test's tmpdir; returns the JSON text (free it) or NULL. */
static char *timeline_of(const char *dir, const char *name)
{
    char out[4096], arg[4200];
    snprintf(out, sizeof out, "%s/%s.json", ctt_tmpdir(), name);
    snprintf(arg, sizeof arg, "timeline {} -o %s", out);
    ctt_proc p;
    int ok = text_of(&p, arg, dir);
    ctt_proc_free(&p);
    return ok ? slurp(out) : NULL;
}

/* The text and JSON summaries and the timeline of dir all show `name` and none shows `hidden`. */
static int shown_as(const char *dir, const char *name, const char *hidden)
{
    static const char *const cmds[] = {"summary --variants {}", "summary --json {}"};
    int ok = 1;
    for (int i = 0; i < 2 && ok; i++) {
        ctt_proc p;
        ok = text_of(&p, cmds[i], dir) && strstr(p.out, name) && !strstr(p.out, hidden);
        ctt_proc_free(&p);
    }
    char *tl = timeline_of(dir, "tl");
    ok = ok && tl && strstr(tl, name) && !strstr(tl, hidden);
    free(tl);
    if (!ok)
        fprintf(stderr, "%s: \"%s\" not shown, or \"%s\" shown\n", dir, name, hidden);
    return ok;
}

TEST_IMPL(api_tables_by_layer)
{
    char dir[4096];
    ASSERT(an_gen(dir, "t", "--iters 5"));
    ctt_proc p;
    ASSERT(text_of(&p, "summary {}", dir));
    const char *rt = strstr(p.out, "== CUDA runtime API ==");
    const char *drv = strstr(p.out, "== CUDA driver API =="), *end = strstr(p.out, "== VRAM ==");
    ASSERT(rt && drv && end && rt < drv && drv < end);
    *(char *)end = 0; /* the tables only */
    /* each call in its layer's table only: the runtime launch and its nested driver launch */
    const char *rl = strstr(rt, "cudaLaunchKernel"), *dl = strstr(rt, "cuLaunchKernel");
    ASSERT(rl && rl < drv);
    ASSERT(dl && dl > drv);
    ASSERT(!strstr(drv, "cudaLaunchKernel") && !strstr(drv, "cudaMemcpyAsync"));
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(nvcc_internal_names_shown_as_written)
{
    /* tracegen's launches call __cudaLaunchKernel (as nvcc 13's code does), with their call
     * sites (--stacks-all) whose CUDA frame is __cudaLaunchKernel as well */
    char dir[4096];
    ASSERT(an_gen(dir, "t", "--iters 5 --kernel-us 2 --launch-us 8 --loader-ms 0 --pinned "
                            "--batch-bytes 65536 --host-us 0 --stacks-all"));
    ASSERT(shown_as(dir, "cudaLaunchKernel", "__cuda"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(tj_find(tj_get(s, "api"), "name", "cudaLaunchKernel"), "calls"), ==, 150);
    ASSERT_STR(tj_str(an_diag(s, "launch-bound"), "sites.0.call"), "cudaLaunchKernel");
    tj_free(s);
    return 0;
}

/* driver_api's kernels come from cuModuleGetFunction / cuLibraryGetKernel by their mangled
 * names (_Z5scaleIfEvPT_S0_i); every output shows them demangled. */
TEST_IMPL(workload_driver_api_kernels_demangled)
{
    char dir[4096];
    char *out = NULL;
    ASSERT(an_trace_workload(dir, "drv", "driver_api", NULL, &out));
    free(out);
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    const tj *k = tj_get(s, "kernels");
    ASSERT_UINT(k->n, ==, 2);
    ASSERT_INT(tj_num(tj_find(k, "name", "void scale<float>(float*, float, int)"), "instances"), ==, 2);
    ASSERT_INT(tj_num(tj_find(k, "name", "vec_add"), "instances"), ==, 2);
    tj_free(s);
    ASSERT(shown_as(dir, "void scale<float>(float*, float, int)", "_Z5scale"));
    return 0;
}

TEST_IMPL(breakdown_words)
{
    /* one step of one kernel between two copies, each starting as the previous ends: the GPU is
     * never idle in the window, and the bound says so instead of "unbounded" */
    char dir[4096];
    ASSERT(an_gen(dir, "busy", "--iters 1 --kernels 1 --loader-ms 0 --pinned --host-us 0"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "breakdown.0.gpu_idle_ns"), ==, 0);
    tj_free(s);
    ctt_proc p;
    ASSERT(text_of(&p, "summary {}", dir));
    ASSERT_CONTAINS(p.out, "Amdahl: the GPU is never idle in the window: GPU work alone sets its length");
    ASSERT(!strstr(p.out, "unbounded"));
    ctt_proc_free(&p);
    /* no CPU-time readings: the time outside CUDA is explained */
    ASSERT(an_gen(dir, "noreadings", "--iters 5 --no-cpu-readings"));
    s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT(tj_num(s, "breakdown.0.idle_host_unknown_ns") > 0);
    tj_free(s);
    ASSERT(text_of(&p, "summary {}", dir));
    ASSERT_CONTAINS(p.out, "host outside CUDA, computing or waiting (*)");
    ASSERT_CONTAINS(p.out, "(*) no CPU-time readings of the thread cover this time, so computing "
                           "cannot be told from waiting");
    ASSERT_CONTAINS(p.out, "CUTRACE_CPU_GAP_US");
    ASSERT_CONTAINS(p.out, "Amdahl: the GPU is busy");
    ctt_proc_free(&p);
    return 0;
}

/* The simulated driver has no sysfs: without CUTRACE_SYSFS the host link is unknown, and the
 * summary says what that costs and what to do. */
TEST_IMPL(workload_host_link_unknown_says_why)
{
    char dir[4096];
    char *out = NULL;
    ASSERT(an_trace_workload(dir, "nolink", "train_loop --iters 2 --loader-ms 0", NULL, &out));
    free(out);
    ctt_proc p;
    ASSERT(text_of(&p, "summary {}", dir));
    ASSERT_CONTAINS(p.out, "host link unknown: the tracer found no PCIe speed and width in sysfs "
                           "(with /sys mounted elsewhere, set CUTRACE_SYSFS), so copies have no % of peak");
    ctt_proc_free(&p);
    return 0;
}

TEST_IMPL(dump_directory)
{
    char dir[4096];
    ASSERT(an_gen(dir, "t", "--iters 2 --ranks 2"));
    ctt_proc p, q;
    ASSERT(text_of(&p, "dump {}", dir));
    ASSERT_CONTAINS(p.out, "header file=0");
    ASSERT_CONTAINS(p.out, "header file=1");
    /* the same as naming the files */
    char args[8400];
    snprintf(args, sizeof args, "dump %s/rank-0.cutrace %s/rank-1.cutrace", dir, dir);
    ASSERT(text_of(&q, args, dir));
    ASSERT_STR(p.out, q.out);
    ctt_proc_free(&p);
    ctt_proc_free(&q);
    return 0;
}

/* A fork tree (no rank variable): a process table, no straggler verdicts, even where one
 * process does 1.5 times the GPU work of the others. */
TEST_IMPL(fork_tree_has_no_stragglers)
{
    char dir[4096];
    ASSERT(an_gen(dir, "fork", "--ranks 3 --straggler 1.5 --iters 5 --no-rank"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_UINT(tj_len(s, "ranks"), ==, 3);
    for (int i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "ranks.%d.straggler", i);
        ASSERT(tj_path(s, path)->type == TJ_NULL);
        snprintf(path, sizeof path, "processes.%d.straggler", i);
        ASSERT(tj_path(s, path)->num == 0);
        snprintf(path, sizeof path, "processes.%d.rank", i);
        ASSERT(tj_path(s, path)->type == TJ_NULL);
    }
    tj_free(s);
    ctt_proc p;
    ASSERT(text_of(&p, "summary {}", dir));
    ASSERT_CONTAINS(p.out, "== Processes ==");
    ASSERT_CONTAINS(p.out, "No straggler verdicts");
    ASSERT(!strstr(p.out, "GPU work\n"));
    ctt_proc_free(&p);
    /* the same processes with ranks: rank 1 is the straggler */
    ASSERT(an_gen(dir, "ranked", "--ranks 3 --straggler 1.5 --iters 5"));
    s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_STR(tj_str(s, "ranks.1.straggler"), "GPU work");
    tj_free(s);
    return 0;
}

/* The Run line shows the whole command: cut at 120 characters, imagenet's command lost the
 * "-j 0" its verdict was about. */
TEST_IMPL(run_line_shows_the_whole_command)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/longcmd", ctt_tmpdir());
    ASSERT(an_gen(dir, "longcmd", "--iters 2 --name /root/.cache/venv/lib/python3.11/examples/"
                  "imagenet/main.py:-a:resnet18:--dummy:--epochs:1:-p:1:-b:32:--lr:0.1:-j:0"));
    ctt_proc p;
    ASSERT(text_of(&p, "summary {}", dir));
    ASSERT_CONTAINS(p.out, ": python train.py --rank 0 /root/.cache/venv/lib/python3.11/examples/"
                           "imagenet/main.py:-a:resnet18:--dummy:--epochs:1:-p:1:-b:32:--lr:0.1:"
                           "-j:0\n");
    ctt_proc_free(&p);
    return 0;
}

