/* Kineto traces converted into cutrace traces (cta_kineto_conv.h). Three passes over bounded
 * memory: (1) the JSON is read once, each event becoming items: the CUDA runtime calls and their
 * GPU work into a sort by correlation id, everything else into a sort by time; (2) the groups of
 * one correlation id are joined (a launch call and its kernel, a copy call and its copy) into the
 * records the tracer writes for such a call, into the sort by time; (3) the records are written
 * in time order, each thread's in its own stream, as a cutrace trace. */
#define _GNU_SOURCE
#include "cta_kineto_conv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cta_cli.h"
#include "cta_kineto_report.h"
#include "cta_map.h"

/* ---- items and the external sort ---------------------------------------------------------- */

enum {
    /* sort by correlation id */
    KI_CALL = 1, /* a runtime (or driver) call */
    KI_WORK,     /* a kernel, memcpy or memset */
    KI_SYNCEV,   /* Kineto's cuda_sync event: the stream a synchronization waited for */
    /* sort by time: the records */
    KR_API, KR_LAUNCH, KR_COPY, KR_SYNC, KR_GPU, KR_NVTX_BEGIN, KR_NVTX_RANGE, KR_MEM,
};

typedef struct {
    uint64_t key, sub, seq; /* the order: by key, then sub, then emission order */
    uint64_t start, end, corr, stream, bytes;
    uint32_t tid, name, domain, group;
    uint32_t grid[3], block[3], shared;
    uint16_t kind;
    uint8_t dev, gkind, dir, src, dst, synckind;
    uint8_t async, driver; /* a copy's call is asynchronous; a call is of the driver API */
} kit;

typedef struct {
    uint64_t off, n, pos; /* in items */
    kit buf[64];
    size_t bn, bi;
} krun;

typedef struct {
    kit *mem;
    size_t n, cap;
    int fd; /* the spilled runs, one after another (unlinked) */
    uint64_t spilled;
    krun *runs;
    size_t nruns, runs_cap;
    uint32_t *heap; /* run indices, by their head item */
    size_t nheap;
    size_t mi;      /* iteration over mem when nothing was spilled */
    const char *tmpdir;
    int failed;
} ksort;

static int kit_cmp(const kit *a, const kit *b)
{
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->sub != b->sub)
        return a->sub < b->sub ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int kit_qcmp(const void *a, const void *b) { return kit_cmp(a, b); }

static void ks_init(ksort *s, const char *tmpdir)
{
    memset(s, 0, sizeof *s);
    s->cap = CTA_KCONV_SORT_BYTES / sizeof(kit);
    s->fd = -1;
    s->tmpdir = tmpdir;
}

static int tmp_fd(const char *dir, char *path, size_t len)
{
    snprintf(path, len, "%s/cutrace-kineto-XXXXXX", dir);
    return mkstemp(path);
}

static int ks_spill(ksort *s)
{
    if (s->fd < 0) {
        char path[4096];
        s->fd = tmp_fd(s->tmpdir, path, sizeof path);
        if (s->fd < 0)
            return -1;
        unlink(path);
    }
    qsort(s->mem, s->n, sizeof *s->mem, kit_qcmp);
    size_t bytes = s->n * sizeof *s->mem;
    if (pwrite(s->fd, s->mem, bytes, (off_t)(s->spilled * sizeof(kit))) != (ssize_t)bytes)
        return -1;
    cta_grow(&s->runs, &s->runs_cap, s->nruns + 1, sizeof *s->runs);
    s->runs[s->nruns++] = (krun){.off = s->spilled, .n = s->n};
    s->spilled += s->n;
    s->n = 0;
    return 0;
}

static void ks_add(ksort *s, const kit *it)
{
    if (s->failed)
        return;
    if (!s->mem)
        s->mem = cta_xmalloc(s->cap * sizeof *s->mem, "the Kineto conversion's sort");
    if (s->n == s->cap && ks_spill(s) != 0) {
        s->failed = errno ? errno : EIO;
        return;
    }
    s->mem[s->n++] = *it;
}

static int run_fill(ksort *s, krun *r)
{
    size_t want = r->n - r->pos < 64 ? (size_t)(r->n - r->pos) : 64;
    ssize_t got = pread(s->fd, r->buf, want * sizeof(kit), (off_t)((r->off + r->pos) * sizeof(kit)));
    if (got != (ssize_t)(want * sizeof(kit)))
        return -1;
    r->bn = want;
    r->bi = 0;
    r->pos += want;
    return 0;
}

static const kit *run_head(const ksort *s, uint32_t i) { return &s->runs[i].buf[s->runs[i].bi]; }

static void heap_down(ksort *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->nheap && kit_cmp(run_head(s, s->heap[l]), run_head(s, s->heap[m])) < 0)
            m = l;
        if (l + 1 < s->nheap && kit_cmp(run_head(s, s->heap[l + 1]), run_head(s, s->heap[m])) < 0)
            m = l + 1;
        if (m == i)
            return;
        uint32_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* Ends the adding: sorts what is in memory (spilled as a last run when others were). */
static int ks_finish(ksort *s)
{
    if (s->failed)
        return -1;
    if (!s->nruns) {
        if (s->n)
            qsort(s->mem, s->n, sizeof *s->mem, kit_qcmp);
        s->mi = 0;
        return 0;
    }
    if (s->n && ks_spill(s) != 0)
        return -1;
    free(s->mem);
    s->mem = NULL;
    s->heap = cta_xmalloc(s->nruns * sizeof *s->heap, "the Kineto conversion's merge");
    for (uint32_t i = 0; i < s->nruns; i++) {
        if (run_fill(s, &s->runs[i]) != 0)
            return -1;
        s->heap[s->nheap++] = i;
    }
    for (size_t i = s->nheap / 2; i-- > 0;)
        heap_down(s, i);
    return 0;
}

/* The next item in order: 1, 0 at the end, -1 on an I/O error. */
static int ks_next(ksort *s, kit *out)
{
    if (!s->nruns) {
        if (s->mi >= s->n)
            return 0;
        *out = s->mem[s->mi++];
        return 1;
    }
    if (!s->nheap)
        return 0;
    krun *r = &s->runs[s->heap[0]];
    *out = r->buf[r->bi++];
    if (r->bi == r->bn) {
        if (r->pos < r->n) {
            if (run_fill(s, r) != 0)
                return -1;
        } else {
            s->heap[0] = s->heap[--s->nheap];
        }
    }
    heap_down(s, 0);
    return 1;
}

static void ks_free(ksort *s)
{
    free(s->mem);
    free(s->runs);
    free(s->heap);
    if (s->fd >= 0)
        close(s->fd);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* ---- pass 1: the events --------------------------------------------------------------------- */

#define NVTX_NAMES_MAX 1024 /* the tracer's bound on distinct range messages (FORMAT.md 4.8) */
#define SYNTH_CORR (1ull << 62) /* correlation ids cutrace gives work Kineto gave none */

typedef struct {
    uint32_t tid, name;
} kthread;

typedef struct {
    const char *path;
    ksort by_corr, by_time;
    cta_map names;        /* string id - 1 */
    cta_map nvtx_names;   /* distinct range messages (bounded) */
    uint64_t seq, synth;
    int have_pid;
    uint32_t pid;
    uint32_t proc_name;   /* string id of the process's name (process_name metadata) */
    kthread *threads;
    size_t nthreads, threads_cap;
    uint32_t devices_used; /* bit per device with GPU work */
    cta_kconv_stats st;
} kconv;

static uint32_t str_id(kconv *c, const char *s)
{
    size_t n = strlen(s);
    if (n > CT_STRING_MAX)
        n = CT_STRING_MAX;
    return cta_map_get(&c->names, s, n, NULL) + 1;
}

/* Microseconds as Kineto writes them (a double, with a fraction in nanosecond-resolution
 * traces) to nanoseconds: the whole microseconds exactly, the fraction rounded half up. */
static int64_t us_ns(double us)
{
    double w = floor(us);
    return (int64_t)w * 1000 + (int64_t)floor((us - w) * 1000.0 + 0.5);
}

static void thread_named(kconv *c, uint32_t tid, uint32_t name)
{
    for (size_t i = 0; i < c->nthreads; i++)
        if (c->threads[i].tid == tid) {
            if (name)
                c->threads[i].name = name;
            return;
        }
    cta_grow(&c->threads, &c->threads_cap, c->nthreads + 1, sizeof *c->threads);
    c->threads[c->nthreads++] = (kthread){tid, name};
}

/* "Memcpy HtoD (Pageable -> Device)": direction and, when the name says them, the kinds. */
static void copy_kinds(const char *name, kit *it)
{
    static const struct {
        const char *code;
        uint8_t dir;
    } dirs[] = {{"HtoD", CT_DIR_HTOD}, {"DtoH", CT_DIR_DTOH}, {"DtoD", CT_DIR_DTOD},
                {"HtoH", CT_DIR_HTOH}, {"PtoP", CT_DIR_PEER}};
    static const struct {
        const char *word;
        uint8_t kind;
    } kinds[] = {{"Pageable", CT_MEMKIND_PAGEABLE}, {"Pinned", CT_MEMKIND_PINNED},
                 {"Device", CT_MEMKIND_DEVICE}, {"Managed", CT_MEMKIND_MANAGED},
                 {"Array", CT_MEMKIND_ARRAY}};
    it->dir = CT_DIR_UNKNOWN;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strstr(name, dirs[i].code))
            it->dir = dirs[i].dir;
    /* a device side needs no saying; a host side does */
    it->src = it->dir == CT_DIR_DTOH || it->dir == CT_DIR_DTOD || it->dir == CT_DIR_PEER ? CT_MEMKIND_DEVICE : 0;
    it->dst = it->dir == CT_DIR_HTOD || it->dir == CT_DIR_DTOD || it->dir == CT_DIR_PEER ? CT_MEMKIND_DEVICE : 0;
    const char *paren = strchr(name, '('), *arrow = paren ? strstr(paren, "->") : NULL;
    for (size_t i = 0; arrow && i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *at = strstr(paren, kinds[i].word);
        if (at && at < arrow)
            it->src = kinds[i].kind;
        if (strstr(arrow, kinds[i].word))
            it->dst = kinds[i].kind;
    }
}

static int is_cat(const cta_kevent *e, const char *cat) { return !strcmp(e->cat, cat); }

static uint64_t corr_of(kconv *c, const cta_kevent *e)
{
    if (e->correlation.has && e->correlation.v > 0 && e->correlation.v < (double)SYNTH_CORR)
        return (uint64_t)e->correlation.v;
    return SYNTH_CORR + ++c->synth;
}

/* A range's message grouped as the tracer groups NVTX messages: each run of digits one '#'. */
static void normalize(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (; *s && o + 1 < len; s++) {
        if (*s >= '0' && *s <= '9') {
            if (o == 0 || out[o - 1] != '#' || !(s[-1] >= '0' && s[-1] <= '9'))
                out[o++] = '#';
            continue;
        }
        out[o++] = *s;
    }
    out[o] = '\0';
}

static void range_event(kconv *c, const cta_kevent *e, uint32_t tid, int64_t start, int64_t end)
{
    int step = !strncmp(e->name, "ProfilerStep#", 13);
    char group[512];
    normalize(e->name, group, sizeof group);
    kit it = {0};
    it.tid = tid;
    it.domain = step ? 0 : str_id(c, e->cat);
    it.group = str_id(c, group);
    if (cta_map_find(&c->nvtx_names, e->name, strlen(e->name)) != UINT32_MAX ||
        cta_map_count(&c->nvtx_names) < NVTX_NAMES_MAX) {
        cta_map_get(&c->nvtx_names, e->name, strlen(e->name), NULL);
        it.name = str_id(c, e->name);
    }
    it.start = (uint64_t)start;
    it.end = (uint64_t)end;
    it.corr = ++c->seq; /* the start/end range's id */
    /* a range ending at an instant comes after the calls that end then (they are inside it),
     * the inner of two first; one beginning then after those ending, the outer first (times
     * are below 2^62 ns: on_event) */
    const uint64_t tier = 1ull << 62;
    it.kind = KR_NVTX_RANGE;
    it.key = (uint64_t)end;
    it.sub = end == start ? 3 * tier : tier + (tier - 1 - (uint64_t)start / 4); /* after its begin */
    it.seq = ++c->seq;
    ks_add(&c->by_time, &it);
    it.kind = KR_NVTX_BEGIN;
    it.key = (uint64_t)start;
    it.sub = 2 * tier + (tier - 1 - (uint64_t)(end - start) / 4);
    it.seq = ++c->seq;
    ks_add(&c->by_time, &it);
    c->st.ranges++;
    c->st.steps += step;
    c->st.python_functions += is_cat(e, "python_function");
}

static int on_event(void *ctx, const cta_kevent *e)
{
    kconv *c = ctx;
    if (!strcmp(e->ph, "M")) {
        if (!e->pid.has)
            return 0;
        if (!strcmp(e->name, "process_name") && (!c->have_pid || (uint32_t)e->pid.v == c->pid) &&
            !c->proc_name && e->arg_name[0])
            c->proc_name = str_id(c, e->arg_name);
        if (!strcmp(e->name, "thread_name") && e->tid.has && e->arg_name[0])
            thread_named(c, (uint32_t)e->tid.v, str_id(c, e->arg_name));
        return 0;
    }
    if (!strcmp(e->ph, "i") && !strcmp(e->name, "[memory]")) {
        /* PyTorch's caching allocator giving a block to a tensor (Bytes > 0) or taking it back:
         * device memory only (Device Type 1), by address */
        if (!e->ts.has || e->ts.v < 0 || e->ts.v > 4.5e15 || !e->mem_bytes.has || !e->mem_addr.has ||
            e->mem_bytes.v == 0 || !e->mem_dev_type.has || e->mem_dev_type.v != 1 || !e->tid.has ||
            e->tid.v < 0)
            return 0;
        kit it = {0};
        it.kind = KR_MEM;
        it.key = (uint64_t)us_ns(e->ts.v);
        it.tid = (uint32_t)(uint64_t)e->tid.v;
        it.stream = (uint64_t)(int64_t)e->mem_addr.v; /* the address */
        it.bytes = (uint64_t)fabs(e->mem_bytes.v);
        it.synckind = e->mem_bytes.v < 0; /* a free */
        int64_t dev = e->mem_dev_id.has ? (int64_t)e->mem_dev_id.v : 0;
        it.dev = (uint8_t)(dev >= 0 && dev < CTA_KINETO_MAX_DEVICES ? dev : CTA_KINETO_MAX_DEVICES - 1);
        it.seq = ++c->seq;
        ks_add(&c->by_time, &it);
        c->st.memory_events++;
        return 0;
    }
    if (strcmp(e->ph, "X") || !e->ts.has || !e->dur.has || e->ts.v < 0 || e->dur.v < 0 ||
        e->ts.v + e->dur.v > 4.5e15) /* 2^52 us, as the hta block: ends below 2^62 ns */
        return 0;
    int64_t start = us_ns(e->ts.v), end = start + us_ns(e->dur.v);
    int work = is_cat(e, "kernel") ? CT_GPU_KERNEL
             : is_cat(e, "gpu_memcpy") ? CT_GPU_MEMCPY
             : is_cat(e, "gpu_memset") ? CT_GPU_MEMSET : 0;
    kit it = {0};
    it.start = (uint64_t)start;
    it.end = (uint64_t)end;
    if (work) {
        it.kind = KI_WORK;
        it.gkind = (uint8_t)work;
        it.corr = corr_of(c, e);
        it.name = str_id(c, e->name);
        int64_t dev = e->device.has ? (int64_t)e->device.v : 0;
        it.dev = (uint8_t)(dev >= 0 && dev < CTA_KINETO_MAX_DEVICES ? dev : CTA_KINETO_MAX_DEVICES - 1);
        c->devices_used |= 1u << it.dev;
        it.stream = e->stream.has && e->stream.v >= 0 ? (uint64_t)e->stream.v : 0;
        it.bytes = e->bytes.has && e->bytes.v >= 0 ? (uint64_t)e->bytes.v : 0;
        for (int i = 0; i < 3; i++) {
            it.grid[i] = (uint32_t)(e->grid[i] > 0 && e->grid[i] < 1ll << 32 ? e->grid[i] : 0);
            it.block[i] = (uint32_t)(e->block[i] > 0 && e->block[i] < 1ll << 32 ? e->block[i] : 0);
        }
        it.shared = e->shared_memory.has && e->shared_memory.v >= 0 && e->shared_memory.v < 4294967296.0
                        ? (uint32_t)e->shared_memory.v : 0;
        if (work == CT_GPU_MEMCPY) {
            copy_kinds(e->name, &it);
            int host_src = it.dir == CT_DIR_HTOD || it.dir == CT_DIR_HTOH;
            int host_dst = it.dir == CT_DIR_DTOH || it.dir == CT_DIR_HTOH;
            if ((host_src && !it.src) || (host_dst && !it.dst))
                c->st.copies_kind_unknown++;
            c->st.copies++;
        } else if (work == CT_GPU_MEMSET) {
            it.dst = CT_MEMKIND_DEVICE;
            c->st.sets++;
        } else {
            c->st.kernels++;
        }
        it.key = it.corr;
        it.sub = 1;
        it.seq = ++c->seq;
        ks_add(&c->by_corr, &it);
        return 0;
    }
    if (is_cat(e, "cuda_sync")) {
        if (!e->correlation.has)
            return 0;
        it.kind = KI_SYNCEV;
        it.corr = corr_of(c, e);
        it.stream = e->stream.has && e->stream.v >= 0 ? (uint64_t)e->stream.v : 0;
        it.key = it.corr;
        it.sub = 2;
        it.seq = ++c->seq;
        ks_add(&c->by_corr, &it);
        return 0;
    }
    int call = is_cat(e, "cuda_runtime") || is_cat(e, "cuda_driver");
    int range = is_cat(e, "cpu_op") || is_cat(e, "user_annotation") || is_cat(e, "python_function");
    if (!(call || range) || !e->pid.has || !e->tid.has || e->tid.v < 0)
        return 0;
    if (!c->have_pid) {
        c->have_pid = 1;
        c->pid = (uint32_t)e->pid.v;
    }
    uint32_t tid = (uint32_t)(uint64_t)e->tid.v;
    thread_named(c, tid, 0);
    if (range) {
        range_event(c, e, tid, start, end);
        return 0;
    }
    it.kind = KI_CALL;
    it.tid = tid;
    it.driver = !strncmp(e->name, "cu", 2) && strncmp(e->name, "cuda", 4);
    it.corr = corr_of(c, e);
    it.name = str_id(c, e->name);
    it.key = it.corr;
    it.sub = 0;
    it.seq = ++c->seq;
    ks_add(&c->by_corr, &it);
    c->st.runtime++;
    return 0;
}

/* ---- pass 2: a call joined with its GPU work ---------------------------------------------- */

static int sync_kind(const char *api, const kit *work)
{
    if (strstr(api, "StreamSynchronize"))
        return CT_SYNC_STREAM;
    if (strstr(api, "DeviceSynchronize"))
        return CT_SYNC_DEVICE;
    if (strstr(api, "CtxSynchronize"))
        return CT_SYNC_CONTEXT;
    if (strstr(api, "EventSynchronize"))
        return CT_SYNC_EVENT;
    if (strstr(api, "StreamWaitEvent"))
        return CT_SYNC_STREAM_WAIT_EVENT;
    /* a copy the host waited for, as the tracer records it: a synchronous copy, or an
     * asynchronous one from or to pageable memory (staged by the host) */
    if (strstr(api, "Memcpy") && (!strstr(api, "Async") ||
                                  (work && (work->src == CT_MEMKIND_PAGEABLE || work->dst == CT_MEMKIND_PAGEABLE))))
        return CT_SYNC_MEMCPY;
    if (strstr(api, "Memset") && !strstr(api, "Async"))
        return CT_SYNC_MEMCPY;
    return -1;
}

static void put_time(kconv *c, kit it, uint16_t kind, uint64_t key)
{
    it.kind = kind;
    it.key = key;
    it.sub = 0;
    it.seq = ++c->seq;
    ks_add(&c->by_time, &it);
}

/* The GPU work's detail (LAUNCH or COPY) at key, and its GPU record. */
static void put_work(kconv *c, kit w, uint64_t corr, uint64_t detail_at, uint32_t tid, int async)
{
    w.corr = corr;
    w.tid = tid;
    w.async = (uint8_t)async;
    put_time(c, w, w.gkind == CT_GPU_KERNEL ? KR_LAUNCH : KR_COPY, detail_at);
    put_time(c, w, KR_GPU, w.end);
}

static void join_group(kconv *c, const kit *call, const kit *work, size_t nwork, const kit *syncev)
{
    if (!call) {
        /* work whose call Kineto did not keep (its runtime event filtered out): the work and its
         * detail, without a call */
        for (size_t i = 0; i < nwork; i++) {
            put_work(c, work[i], i ? SYNTH_CORR + ++c->synth : work[i].corr, work[i].start, c->pid, 1);
            c->st.gpu_without_call++;
        }
        return;
    }
    const char *api = cta_map_key(&c->names, call->name - 1);
    int async = strstr(api, "Async") != NULL || strstr(api, "Launch") != NULL;
    if (nwork)
        put_work(c, work[0], call->corr, call->end, call->tid, async);
    int sk = sync_kind(api, nwork ? &work[0] : NULL);
    if (sk >= 0) {
        kit s = *call;
        s.synckind = (uint8_t)sk;
        s.stream = syncev ? syncev->stream : nwork ? work[0].stream : 0;
        put_time(c, s, KR_SYNC, call->end);
        c->st.syncs++;
    }
    put_time(c, *call, KR_API, call->end);
    /* a graph launch's further kernels: their own ids, launched by the same call */
    for (size_t i = 1; i < nwork; i++)
        put_work(c, work[i], SYNTH_CORR + ++c->synth, work[i].start, call->tid, 1);
}

static int join_all(kconv *c)
{
    if (ks_finish(&c->by_corr) != 0)
        return -1;
    kit it, call, syncev, *work = NULL;
    size_t nwork = 0, work_cap = 0;
    int have_call = 0, have_sync = 0, got;
    uint64_t corr = 0;
    while ((got = ks_next(&c->by_corr, &it)) > 0) {
        if (it.corr != corr) {
            if (have_call || nwork)
                join_group(c, have_call ? &call : NULL, work, nwork, have_sync ? &syncev : NULL);
            corr = it.corr;
            have_call = have_sync = 0;
            nwork = 0;
        }
        if (it.kind == KI_CALL) {
            if (have_call) /* a second call with the id: alone */
                join_group(c, &it, NULL, 0, NULL);
            else
                call = it, have_call = 1;
        } else if (it.kind == KI_SYNCEV) {
            syncev = it;
            have_sync = 1;
        } else {
            cta_grow(&work, &work_cap, nwork + 1, sizeof *work);
            work[nwork++] = it;
        }
    }
    if (got == 0 && (have_call || nwork))
        join_group(c, have_call ? &call : NULL, work, nwork, have_sync ? &syncev : NULL);
    free(work);
    ks_free(&c->by_corr);
    return got < 0 ? -1 : 0;
}

/* ---- pass 3: the cutrace trace -------------------------------------------------------------- */

#define ENC_BYTES (1u << 20)
#define FLUSH_EVERY 65536 /* records: every stream's chunk is written, so the low-water mark moves */

typedef struct {
    uint32_t tid;
    int gpu;
    ct_enc e;
    uint8_t *buf;
    uint64_t first; /* time of its first record since its last chunk */
} kstream;

typedef struct {
    ct_writer *w;
    kstream *s;
    size_t n, cap;
    uint64_t since_flush;
    int failed;
} kout;

static kstream *stream_of(kout *o, uint32_t tid, int gpu)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->s[i].tid == tid && o->s[i].gpu == gpu)
            return &o->s[i];
    cta_grow(&o->s, &o->cap, o->n + 1, sizeof *o->s);
    kstream *s = &o->s[o->n++];
    s->tid = tid;
    s->gpu = gpu;
    s->buf = cta_xmalloc(ENC_BYTES, "the Kineto conversion's stream buffer");
    ct_enc_init(&s->e, s->buf, ENC_BYTES);
    return s;
}

/* No record still to be written is older than the oldest unwritten one. */
static uint64_t low_water(const kout *o, uint64_t now)
{
    uint64_t lw = now;
    for (size_t i = 0; i < o->n; i++)
        if (o->s[i].e.nrecords && o->s[i].first < lw)
            lw = o->s[i].first;
    return lw;
}

static void flush(kout *o, kstream *s, uint64_t now)
{
    if (!s->e.nrecords || o->failed)
        return;
    ct_chunk_info info = {.tid = s->tid, .flags = (uint16_t)(s->gpu ? CT_CHUNK_GPU : 0),
                          .low_water = low_water(o, now)};
    ct_enc_chunk_info(&s->e, &info);
    if (ct_writer_chunk(o->w, &s->e, &info, 1) != 0)
        o->failed = 1;
}

static void flush_all(kout *o, uint64_t now)
{
    for (size_t i = 0; i < o->n; i++)
        flush(o, &o->s[i], now);
    o->since_flush = 0;
}

/* Appends r to the stream of (tid, gpu), writing its chunk first when it is full. */
static void emit(kout *o, uint32_t tid, int gpu, const ct_rec *r)
{
    kstream *s = stream_of(o, tid, gpu);
    if (!s->e.nrecords)
        s->first = r->ts;
    int rc = ct_enc_rec(&s->e, r);
    if (rc == CT_E_FULL) {
        flush(o, s, r->ts);
        s->first = r->ts;
        rc = ct_enc_rec(&s->e, r);
    }
    if (rc != 0)
        o->failed = 1;
    if (++o->since_flush >= FLUSH_EVERY)
        flush_all(o, r->ts);
}

static void emit_defs(kconv *c, kout *o, const cta_kmeta *meta, uint64_t t0)
{
    ct_rec r = {.ts = t0};
    r.type = CT_REC_STRING;
    /* names later records need are interned now too, so that the table is complete here */
    uint32_t dev_name[CTA_KINETO_MAX_DEVICES] = {0};
    for (int d = 0; d < meta->ndevices && d < CTA_KINETO_MAX_DEVICES; d++)
        if (meta->devices[d].name[0])
            dev_name[d] = str_id(c, meta->devices[d].name);
    for (uint32_t i = 0; i < cta_map_count(&c->names); i++) {
        const char *s = cta_map_key(&c->names, i);
        r.u.string = (ct_rec_string){i + 1, (uint32_t)c->names.lens[i], s};
        emit(o, c->pid, 0, &r);
    }
    for (size_t i = 0; i < c->nthreads; i++) {
        r.type = CT_REC_THREAD;
        r.u.thread = (ct_rec_thread){c->threads[i].tid, c->threads[i].name, 0};
        emit(o, c->threads[i].tid, 0, &r);
    }
    /* the devices the trace's GPU work ran on, as deviceProperties describes them (by id) */
    for (uint32_t dev = 0; dev < CTA_KINETO_MAX_DEVICES; dev++) {
        if (!(c->devices_used >> dev & 1))
            continue;
        r.type = CT_REC_DEVICE;
        memset(&r.u.device, 0, sizeof r.u.device);
        r.u.device.device = dev;
        for (int d = 0; d < meta->ndevices && d < CTA_KINETO_MAX_DEVICES; d++) {
            const cta_kdevice *k = &meta->devices[d];
            if (k->id != (int64_t)dev)
                continue;
            r.u.device.name = dev_name[d];
            r.u.device.cc_major = (uint32_t)k->cc_major;
            r.u.device.cc_minor = (uint32_t)k->cc_minor;
            r.u.device.sm_count = (uint32_t)k->sms;
            r.u.device.mem_bytes = k->mem_bytes;
            r.u.device.max_threads_per_sm = (uint32_t)k->threads_per_sm;
            r.u.device.regs_per_sm = (uint32_t)k->regs_per_sm;
            r.u.device.smem_per_sm = (uint32_t)k->smem_per_sm;
            r.u.device.warp_size = (uint32_t)k->warp_size;
            r.u.device.concurrent_kernels = 1;
        }
        emit(o, c->pid, 0, &r);
    }
}

static void emit_item(kout *o, const kit *it, uint32_t pid)
{
    ct_rec r = {0};
    r.ts = it->key;
    switch (it->kind) {
    case KR_API:
        r.type = CT_REC_API;
        r.ts = it->end;
        r.u.api = (ct_rec_api){.start = it->start, .function = it->name, .corr = it->corr,
                               .flags = it->driver ? CT_API_DRIVER : 0};
        break;
    case KR_LAUNCH:
        r.type = CT_REC_LAUNCH;
        r.u.launch = (ct_rec_launch){.corr = it->corr, .function = it->name, .shared_bytes = it->shared,
                                     .stream = it->stream, .device = it->dev};
        memcpy(r.u.launch.grid, it->grid, sizeof it->grid);
        memcpy(r.u.launch.block, it->block, sizeof it->block);
        break;
    case KR_COPY:
        r.type = CT_REC_COPY;
        r.u.copy = (ct_rec_copy){.corr = it->corr,
                                 .op = it->gkind == CT_GPU_MEMSET ? CT_COPY_MEMSET : CT_COPY_MEMCPY,
                                 .dir = it->dir, .bytes = it->bytes, .src_kind = it->src,
                                 .dst_kind = it->dst, .flags = it->async ? CT_COPY_ASYNC : 0,
                                 .stream = it->stream, .device = it->dev};
        break;
    case KR_SYNC:
        r.type = CT_REC_SYNC;
        r.ts = it->end;
        r.u.sync = (ct_rec_sync){it->start, it->corr, it->synckind, it->stream};
        break;
    case KR_GPU:
        r.type = CT_REC_GPU;
        r.ts = it->end;
        r.u.gpu = (ct_rec_gpu){.start = it->start, .corr = it->corr, .device = it->dev,
                               .kind = it->gkind, .stream = it->stream};
        emit(o, pid, 1, &r);
        return;
    case KR_MEM:
        r.type = CT_REC_MEM;
        r.u.mem = (ct_rec_mem){.op = it->synckind ? CT_MEM_FREE : CT_MEM_ALLOC, .kind = CT_ALLOC_POOL,
                               .address = it->stream, .size = it->bytes, .device = it->dev};
        break;
    case KR_NVTX_BEGIN:
        r.type = CT_REC_NVTX_BEGIN;
        r.u.nvtx_begin = (ct_rec_nvtx_begin){.tid = it->tid, .kind = CT_NVTX_START_END, .id = it->corr,
                                             .domain = it->domain, .name = it->name, .group = it->group};
        break;
    case KR_NVTX_RANGE:
        r.type = CT_REC_NVTX_RANGE;
        r.u.nvtx_range = (ct_rec_nvtx_range){.start = it->start, .start_tid = it->tid, .end_tid = it->tid,
                                             .domain = it->domain, .name = it->name, .group = it->group,
                                             .kind = CT_NVTX_START_END, .id = it->corr};
        break;
    default:
        return;
    }
    emit(o, it->tid, 0, &r);
}

static int write_trace(kconv *c, int fd, const cta_kmeta *meta)
{
    if (ks_finish(&c->by_time) != 0) {
        close(fd);
        return -1;
    }
    kit it;
    int got = ks_next(&c->by_time, &it);
    uint64_t t0 = got > 0 ? it.key : 0;
    char rank[48], cmd[512];
    const char *env[1] = {rank};
    snprintf(rank, sizeof rank, "RANK=%lld", (long long)meta->rank);
    const char *pname = c->proc_name ? cta_map_key(&c->names, c->proc_name - 1) : "";
    size_t cl = (size_t)snprintf(cmd, sizeof cmd, "%s", pname);
    ct_header h = {.hostname = "(host not in the trace)", .pid = c->pid, .cmdline = cmd, .cmdline_len = cl < sizeof cmd ? cl + 1 : sizeof cmd,
                   .exe = c->path, .boot_id = "", .realtime_ns = t0, .monotonic_ns = t0,
                   .tracer_version = "kineto", .tracer_options = "source=kineto gpu_timing=1",
                   .frameworks = CT_FW_TORCH, /* the PyTorch profiler wrote it */
                   .nenv = meta->has_rank ? 1 : 0, .env = env};
    kout o = {0};
    if (ct_writer_open_fd(&o.w, fd, &h, NULL) != 0)
        return -1;
    emit_defs(c, &o, meta, t0);
    flush_all(&o, t0);
    for (; got > 0 && !o.failed; got = ks_next(&c->by_time, &it))
        emit_item(&o, &it, c->pid);
    uint64_t end = UINT64_MAX;
    flush_all(&o, end);
    int rc = got < 0 || o.failed ? -1 : 0;
    if (ct_writer_close(o.w) != 0)
        rc = -1;
    for (size_t i = 0; i < o.n; i++)
        free(o.s[i].buf);
    free(o.s);
    return rc;
}

/* ---- the files of a command ------------------------------------------------------------------ */

static const char *tmpdir(void)
{
    const char *d = getenv("TMPDIR");
    return d && d[0] ? d : "/tmp";
}

int cta_kineto_convert(const char *path, char *out, size_t outlen, cta_kmeta *meta,
                       cta_kconv_stats *st, char *err, size_t errlen)
{
    kconv c;
    memset(&c, 0, sizeof c);
    c.path = path;
    ks_init(&c.by_corr, tmpdir());
    ks_init(&c.by_time, tmpdir());
    cta_map_init(&c.names);
    cta_map_init(&c.nvtx_names);
    int rc = cta_kineto_read(path, on_event, &c, meta, err, errlen);
    if (rc == 0 && (c.by_corr.failed || c.by_time.failed || join_all(&c) != 0 || c.by_time.failed)) {
        snprintf(err, errlen, "%s: cannot convert it: writing the sort's runs in %s failed: %s", path,
                 tmpdir(), strerror(errno ? errno : EIO));
        rc = -1;
    }
    if (rc == 0) {
        int fd = tmp_fd(tmpdir(), out, outlen);
        if (fd < 0 || write_trace(&c, fd, meta) != 0) {
            snprintf(err, errlen, "%s: cannot convert it: writing a trace in %s failed: %s", path,
                     tmpdir(), strerror(errno ? errno : EIO));
            if (fd >= 0)
                unlink(out);
            rc = -1;
        }
    }
    if (st)
        *st = c.st;
    ks_free(&c.by_corr);
    ks_free(&c.by_time);
    cta_map_free(&c.names);
    cta_map_free(&c.nvtx_names);
    free(c.threads);
    return rc;
}

typedef struct {
    char *orig, *conv;
    cta_kconv_stats st;
} kdone;

static kdone *done;
static size_t ndone, done_cap;

/* Also from a signal handler: unlink alone, on names complete before they were counted. */
static void unlink_converted(void)
{
    for (size_t i = 0; i < ndone; i++)
        unlink(done[i].conv);
}

static void on_fatal(int sig)
{
    unlink_converted();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_converted(void)
{
    for (size_t i = 0; i < ndone; i++) {
        unlink(done[i].conv);
        free(done[i].orig);
        free(done[i].conv);
    }
    free(done);
    done = NULL;
    ndone = done_cap = 0;
}

static const kdone *done_conv(const char *conv)
{
    for (size_t i = 0; conv && i < ndone; i++)
        if (!strcmp(done[i].conv, conv))
            return &done[i];
    return NULL;
}

/* The converted trace of Kineto file path: converted now if it was not yet. */
static const char *converted(const char *cmd, const char *path)
{
    for (size_t i = 0; i < ndone; i++)
        if (!strcmp(done[i].orig, path))
            return done[i].conv;
    static int registered;
    if (!registered) {
        atexit(remove_converted);
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
            struct sigaction old;
            if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
                signal(sigs[i], on_fatal);
        }
        registered = 1;
    }
    char out[4096], err[1024];
    cta_kmeta meta;
    cta_kconv_stats st;
    if (cta_kineto_convert(path, out, sizeof out, &meta, &st, err, sizeof err) != 0) {
        fprintf(stderr, "cutrace %s: error: %s\n", cmd, err);
        return NULL;
    }
    kdone d = {strdup(path), strdup(out), st};
    if (!d.orig || !d.conv) {
        unlink(out);
        fprintf(stderr, "cutrace %s: error: out of memory\n", cmd);
        exit(CTA_EXIT_FAIL);
    }
    /* a signal may come while the list grows: the handler sees the old list until the new
     * one holds the entry */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    cta_grow(&done, &done_cap, ndone + 1, sizeof *done);
    done[ndone++] = d;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return d.conv;
}

/* The reader's warnings about a converted trace name the Kineto file; the missing END record
 * is how every Kineto trace is (the summary says so), not damage. */
static void warn_kineto(void *ctx, const char *path, const char *msg)
{
    (void)ctx;
    if (strstr(msg, "no end record"))
        return;
    const kdone *d = done_conv(path);
    fprintf(stderr, "cutrace: warning: %s: %s\n", d ? d->orig : path, msg);
}

int cta_kineto_open(const char *cmd, char *const *paths, int npaths, int kineto, ct_reader **rd)
{
    if (kineto < 0) {
        fprintf(stderr, "cutrace %s: error: expected either cutrace traces or Kineto traces, found both\n", cmd);
        return CTA_EXIT_INPUT;
    }
    char **files = NULL;
    size_t n = 0;
    cta_kineto_files(paths, npaths, &files, &n);
    const char **conv = cta_xmalloc((n ? n : 1) * sizeof *conv, "the converted traces' names");
    int rc = CTA_EXIT_OK;
    for (size_t i = 0; i < n && rc == CTA_EXIT_OK; i++)
        if (!(conv[i] = converted(cmd, files[i])))
            rc = CTA_EXIT_INPUT;
    if (rc == CTA_EXIT_OK) {
        ct_reader_opts opts = {.warn = warn_kineto};
        rc = cta_cli_open(rd, (char *const *)conv, n, &opts);
    }
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
    free(conv);
    return rc;
}

const char *cta_kineto_source(const ct_reader *rd, uint32_t file)
{
    const ct_header *h = ct_reader_header(rd, file);
    if (!h || !h->tracer_version || strcmp(h->tracer_version, "kineto"))
        return NULL;
    const kdone *d = done_conv(ct_reader_path(rd, file));
    return d ? d->orig : h->exe ? h->exe : "";
}

const char *cta_kineto_display_path(const ct_reader *rd, uint32_t file)
{
    const char *k = cta_kineto_source(rd, file);
    return k ? k : ct_reader_path(rd, file);
}

const cta_kconv_stats *cta_kineto_source_stats(const ct_reader *rd, uint32_t file)
{
    /* a trace whose header merely says "kineto" (not converted by this command) has none */
    const kdone *d = cta_kineto_source(rd, file) ? done_conv(ct_reader_path(rd, file)) : NULL;
    return d ? &d->st : NULL;
}

const char cta_kineto_lacks[] =
    "the host's CPU time (what the host did outside CUDA is unknown, not idle), call stacks, "
    "the process's exit, the pinned or pageable kind of copies whose name does not say it, "
    "device memory allocated before the profile began (and all of it without profile_memory)";

const char cta_kineto_no_gpu[] =
    "no GPU activity in this Kineto trace (no kernel, gpu_memcpy or gpu_memset event): the "
    "breakdown has nothing to measure";
