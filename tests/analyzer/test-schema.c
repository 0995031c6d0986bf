/* Every field the issue and analyzer/JSON.md promise is present, with its type, in a summary
 * that has every section (two ranks, an OOM, diagnoses). */
#include "an_helpers.h"

static int has(const tj *o, const char *const *keys, tj_type want_num_or_str)
{
    for (int i = 0; keys[i]; i++) {
        const tj *v = tj_get(o, keys[i]);
        if (!v || (want_num_or_str == TJ_NUM && v->type != TJ_NUM && v->type != TJ_NULL) ||
            (want_num_or_str == TJ_STR && v->type != TJ_STR)) {
            fprintf(stderr, "missing or mistyped field \"%s\"\n", keys[i]);
            return 0;
        }
    }
    return 1;
}

TEST_IMPL(json_schema_fields)
{
    char dir[4096];
    ASSERT(an_gen(dir, "t", "--ranks 2 --iters 8 --oom"));
    tj *s = an_summary(dir, NULL);
    ASSERT(s);
    ASSERT_INT(tj_num(s, "schema_version"), ==, 2);
    static const char *const proc_s[] = {"host", "command", NULL};
    static const char *const proc_n[] = {"pid", "rank", "wall_ns", NULL};
    static const char *const kern_s[] = {"name", NULL};
    static const char *const kern_n[] = {"instances", "timed_instances", "launch_calls_ns", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", NULL};
    static const char *const copy_s[] = {"op", "host_kind", NULL};
    static const char *const copy_n[] = {"count", "bytes", "timed_count", "timed_bytes", "total_ns", "gbps", NULL};
    static const char *const api_s[] = {"name", "layer", NULL};
    static const char *const api_n[] = {"calls", "total_ns", "failures", NULL};
    static const char *const vram_n[] = {"pid", "device", "peak_bytes", "peak_time_ns", NULL};
    static const char *const fail_n[] = {"requested_bytes", "in_use_bytes", NULL};
    static const char *const bd_n[] = {"pid", "device", "window_ns", "gpu_busy_ns", "gpu_idle_ns",
                                       "idle_in_api_ns", "idle_blocked_ns", "idle_host_compute_ns",
                                       "idle_host_wait_ns", "max_speedup_gpu", "max_speedup_host", NULL};
    static const char *const dg_s[] = {"id", "severity", "message", NULL};
    static const char *const dg_n[] = {"estimated_saving_ns", NULL};
    struct { const char *arr; const char *const *s, *const *n; } sec[] = {
        {"processes", proc_s, proc_n}, {"kernels", kern_s, kern_n}, {"copies", copy_s, copy_n},
        {"api", api_s, api_n}, {"vram", NULL, vram_n}, {"breakdown", NULL, bd_n},
        {"diagnoses", dg_s, dg_n}};
    for (size_t i = 0; i < sizeof sec / sizeof *sec; i++) {
        const tj *a = tj_get(s, sec[i].arr);
        ASSERT(a && a->type == TJ_ARR && a->n > 0);
        for (size_t k = 0; k < a->n; k++) {
            if (sec[i].s)
                ASSERT(has(a->v[k], sec[i].s, TJ_STR));
            ASSERT(has(a->v[k], sec[i].n, TJ_NUM));
        }
    }
    const tj *v = tj_get(s, "vram");
    for (size_t k = 0; k < v->n; k++) {
        const tj *f = tj_get(v->v[k], "failed_allocs");
        ASSERT(f && f->type == TJ_ARR && f->n == 1);
        ASSERT(has(f->v[0], fail_n, TJ_NUM));
    }
    const tj *d = tj_get(s, "diagnoses");
    for (size_t k = 0; k < d->n; k++)
        ASSERT(tj_get(d->v[k], "evidence") && tj_get(d->v[k], "evidence")->type == TJ_OBJ);
    static const char *const ops[] = {"H2D", "D2H", "D2D", "P2P", "H2H", "memset"};
    const tj *c = tj_get(s, "copies");
    for (size_t k = 0; k < c->n; k++) {
        int ok = 0;
        for (int o = 0; o < 6; o++)
            ok |= !strcmp(tj_str(c->v[k], "op"), ops[o]);
        ASSERT(ok);
    }
    ASSERT_UINT(tj_len(s, "ranks"), ==, 2);
    tj_free(s);
    return 0;
}
