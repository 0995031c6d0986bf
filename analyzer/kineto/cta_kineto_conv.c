/* Kineto traces converted into cutrace traces (cta_kineto_conv.h). Three passes over bounded
 * memory: (1) the JSON is read once, each event becoming items: the CUDA runtime calls and their
 * GPU work into a sort by correlation id, everything else into a sort by time; (2) the groups of
 * one correlation id are joined (a launch call and its kernel, a copy call and its copy) into the
 * records the tracer writes for such a call, into the sort by time; (3) the records are written
 * in time order, each thread's in its own stream, as a cutrace trace (cta_kconv_write.c). The
 * sorts are cta_ksort.c's. */
#define _GNU_SOURCE
#include "cta_kineto_conv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cta_kconv_write.h"
#include "cta_map.h"

/* ---- pass 1: the events --------------------------------------------------------------------- */

#define NVTX_NAMES_MAX 1024 /* the tracer's bound on distinct range messages (FORMAT.md 4.8) */
#define SYNTH_CORR (1ull << 62) /* correlation ids cutrace gives work Kineto gave none */

/* cta_kit.kind of the items in the sort by correlation id */
enum {
    KI_CALL = 1, /* a runtime (or driver) call */
    KI_WORK,     /* a kernel, memcpy or memset */
    KI_SYNCEV,   /* Kineto's cuda_sync event: the stream a synchronization waited for */
};

typedef struct {
    cta_ktrace t;         /* what the trace is made of */
    cta_ksort by_corr;
    cta_map nvtx_names;   /* distinct range messages (bounded) */
    uint64_t seq, synth;
    int have_pid;
    cta_kconv_stats st;
} kconv;

/* Microseconds as Kineto writes them (a double, with a fraction in nanosecond-resolution
 * traces) to nanoseconds: the whole microseconds exactly, the fraction rounded half up. */
static int64_t us_ns(double us)
{
    double w = floor(us);
    return (int64_t)w * 1000 + (int64_t)floor((us - w) * 1000.0 + 0.5);
}

static void thread_named(kconv *c, uint32_t tid, uint32_t name)
{
    for (size_t i = 0; i < c->t.nthreads; i++)
        if (c->t.threads[i].tid == tid) {
            if (name)
                c->t.threads[i].name = name;
            return;
        }
    cta_grow(&c->t.threads, &c->t.threads_cap, c->t.nthreads + 1, sizeof *c->t.threads);
    c->t.threads[c->t.nthreads++] = (cta_kthread){tid, name};
}

/* "Memcpy HtoD (Pageable -> Device)": direction and, when the name says them, the kinds. */
static void copy_kinds(const char *name, cta_kit *it)
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
    cta_kit it = {0};
    it.tid = tid;
    it.domain = step ? 0 : cta_ktrace_str_id(&c->t, e->cat);
    it.group = cta_ktrace_str_id(&c->t, group);
    if (cta_map_find(&c->nvtx_names, e->name, strlen(e->name)) != UINT32_MAX ||
        cta_map_count(&c->nvtx_names) < NVTX_NAMES_MAX) {
        cta_map_get(&c->nvtx_names, e->name, strlen(e->name), NULL);
        it.name = cta_ktrace_str_id(&c->t, e->name);
    }
    it.start = (uint64_t)start;
    it.end = (uint64_t)end;
    it.corr = ++c->seq; /* the start/end range's id */
    /* a range ending at an instant comes after the calls that end then (they are inside it),
     * the inner of two first; one beginning then after those ending, the outer first (times
     * are below 2^62 ns: on_event) */
    const uint64_t tier = 1ull << 62;
    it.kind = CTA_KR_NVTX_RANGE;
    it.key = (uint64_t)end;
    it.sub = end == start ? 3 * tier : tier + (tier - 1 - (uint64_t)start / 4); /* after its begin */
    it.seq = ++c->seq;
    cta_ksort_add(&c->t.by_time, &it);
    it.kind = CTA_KR_NVTX_BEGIN;
    it.key = (uint64_t)start;
    it.sub = 2 * tier + (tier - 1 - (uint64_t)(end - start) / 4);
    it.seq = ++c->seq;
    cta_ksort_add(&c->t.by_time, &it);
    c->st.ranges++;
    c->st.steps += step;
    c->st.python_functions += is_cat(e, "python_function");
}

/* 2^52 us (142 years): the hta block's bound too; times below it end below 2^62 ns */
#define MAX_US 4.5e15

/* Why the number n of an event is not a time: the first of four reasons (missing, not a number,
 * negative, out of range) from `first`, or -1 when it is one. */
static int bad_time(cta_knum n, int first)
{
    if (!n.has)
        return first + (n.why == CTA_KNUM_ABSENT ? 0 : n.why == CTA_KNUM_NOT_NUMBER ? 1 : 3);
    return n.v < 0 ? first + 2 : n.v > MAX_US ? first + 3 : -1;
}

/* Why the event's thread (and process, when with_pid) is not known, or -1. */
static int bad_thread(const cta_kevent *e, int with_pid)
{
    if ((with_pid && !e->pid.has) || !e->tid.has)
        return CTA_KDROP_PID_TID;
    return e->tid.v < 0 ? CTA_KDROP_TID_NEGATIVE : -1;
}

/* Why an event of a kind the conversion reads cannot be used, or -1: its ts, its dur when
 * with_dur (an end beyond the bound is the dur's fault), its thread when with_thread. */
static int bad_event(const cta_kevent *e, int with_dur, int with_thread)
{
    int why = bad_time(e->ts, CTA_KDROP_TS_MISSING);
    if (why < 0 && with_dur) {
        why = bad_time(e->dur, CTA_KDROP_DUR_MISSING);
        if (why < 0 && e->ts.v + e->dur.v > MAX_US)
            why = CTA_KDROP_DUR_RANGE;
    }
    if (why < 0 && with_thread)
        why = bad_thread(e, 1);
    return why;
}

static int dropped(kconv *c, int why, int gpu)
{
    c->st.dropped[why]++;
    c->st.dropped_events++;
    c->st.dropped_gpu += gpu;
    return 0;
}

static int on_event(void *ctx, const cta_kevent *e)
{
    kconv *c = ctx;
    int why;
    c->st.events++;
    if (!strcmp(e->ph, "M")) {
        int proc = !strcmp(e->name, "process_name"), thread = !strcmp(e->name, "thread_name");
        if (!proc && !thread)
            return 0;
        if ((why = !e->pid.has ? CTA_KDROP_PID_TID : thread ? bad_thread(e, 0) : -1) >= 0)
            return dropped(c, why, 0);
        if (proc && (!c->have_pid || (uint32_t)e->pid.v == c->t.pid) && !c->t.proc_name && e->arg_name[0])
            c->t.proc_name = cta_ktrace_str_id(&c->t, e->arg_name);
        if (thread && e->arg_name[0])
            thread_named(c, (uint32_t)e->tid.v, cta_ktrace_str_id(&c->t, e->arg_name));
        return 0;
    }
    if (!strcmp(e->ph, "i") && !strcmp(e->name, "[memory]")) {
        /* PyTorch's caching allocator giving a block to a tensor (Bytes > 0) or taking it back:
         * device memory only (Device Type 1), by address */
        if (!e->mem_dev_type.has)
            return dropped(c, CTA_KDROP_MEMORY_FIELDS, 0);
        if (e->mem_dev_type.v != 1)
            return 0;
        if ((why = bad_event(e, 0, 0)) >= 0)
            return dropped(c, why, 0);
        if (!e->mem_bytes.has || !e->mem_addr.has)
            return dropped(c, CTA_KDROP_MEMORY_FIELDS, 0);
        if ((why = bad_thread(e, 0)) >= 0)
            return dropped(c, why, 0);
        if (e->mem_bytes.v == 0)
            return 0;
        cta_kit it = {0};
        it.kind = CTA_KR_MEM;
        it.key = (uint64_t)us_ns(e->ts.v);
        it.tid = (uint32_t)(uint64_t)e->tid.v;
        it.stream = (uint64_t)(int64_t)e->mem_addr.v; /* the address */
        it.bytes = (uint64_t)fabs(e->mem_bytes.v);
        it.synckind = e->mem_bytes.v < 0; /* a free */
        int64_t dev = e->mem_dev_id.has ? (int64_t)e->mem_dev_id.v : 0;
        it.dev = (uint8_t)(dev >= 0 && dev < CTA_KINETO_MAX_DEVICES ? dev : CTA_KINETO_MAX_DEVICES - 1);
        it.seq = ++c->seq;
        cta_ksort_add(&c->t.by_time, &it);
        c->st.memory_events++;
        return 0;
    }
    if (strcmp(e->ph, "X"))
        return 0;
    int work = is_cat(e, "kernel") ? CT_GPU_KERNEL
             : is_cat(e, "gpu_memcpy") ? CT_GPU_MEMCPY
             : is_cat(e, "gpu_memset") ? CT_GPU_MEMSET : 0;
    int call = is_cat(e, "cuda_runtime") || is_cat(e, "cuda_driver");
    int range = is_cat(e, "cpu_op") || is_cat(e, "user_annotation") || is_cat(e, "python_function");
    if (!work && !call && !range && !is_cat(e, "cuda_sync"))
        return 0;
    if ((why = bad_event(e, 1, call || range)) >= 0)
        return dropped(c, why, work != 0);
    int64_t start = us_ns(e->ts.v), end = start + us_ns(e->dur.v);
    cta_kit it = {0};
    it.start = (uint64_t)start;
    it.end = (uint64_t)end;
    if (work) {
        it.kind = KI_WORK;
        it.gkind = (uint8_t)work;
        it.corr = corr_of(c, e);
        it.name = cta_ktrace_str_id(&c->t, e->name);
        int64_t dev = e->device.has ? (int64_t)e->device.v : 0;
        it.dev = (uint8_t)(dev >= 0 && dev < CTA_KINETO_MAX_DEVICES ? dev : CTA_KINETO_MAX_DEVICES - 1);
        c->t.devices_used |= 1u << it.dev;
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
        cta_ksort_add(&c->by_corr, &it);
        return 0;
    }
    if (!call && !range) { /* cuda_sync */
        if (!e->correlation.has)
            return dropped(c, CTA_KDROP_CORRELATION, 0);
        it.kind = KI_SYNCEV;
        it.corr = corr_of(c, e);
        it.stream = e->stream.has && e->stream.v >= 0 ? (uint64_t)e->stream.v : 0;
        it.key = it.corr;
        it.sub = 2;
        it.seq = ++c->seq;
        cta_ksort_add(&c->by_corr, &it);
        return 0;
    }
    if (!c->have_pid) {
        c->have_pid = 1;
        c->t.pid = (uint32_t)e->pid.v;
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
    it.name = cta_ktrace_str_id(&c->t, e->name);
    it.key = it.corr;
    it.sub = 0;
    it.seq = ++c->seq;
    cta_ksort_add(&c->by_corr, &it);
    c->st.runtime++;
    return 0;
}

/* ---- pass 2: a call joined with its GPU work ---------------------------------------------- */

static int sync_kind(const char *api, const cta_kit *work)
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

static void put_time(kconv *c, cta_kit it, uint16_t kind, uint64_t key)
{
    it.kind = kind;
    it.key = key;
    it.sub = 0;
    it.seq = ++c->seq;
    cta_ksort_add(&c->t.by_time, &it);
}

/* The GPU work's detail (LAUNCH or COPY) at key, and its GPU record. */
static void put_work(kconv *c, cta_kit w, uint64_t corr, uint64_t detail_at, uint32_t tid, int async)
{
    w.corr = corr;
    w.tid = tid;
    w.async = (uint8_t)async;
    put_time(c, w, w.gkind == CT_GPU_KERNEL ? CTA_KR_LAUNCH : CTA_KR_COPY, detail_at);
    put_time(c, w, CTA_KR_GPU, w.end);
}

static void join_group(kconv *c, const cta_kit *call, const cta_kit *work, size_t nwork, const cta_kit *syncev)
{
    if (!call) {
        /* work whose call Kineto did not keep (its runtime event filtered out): the work and its
         * detail, without a call */
        for (size_t i = 0; i < nwork; i++) {
            put_work(c, work[i], i ? SYNTH_CORR + ++c->synth : work[i].corr, work[i].start, c->t.pid, 1);
            c->st.gpu_without_call++;
        }
        return;
    }
    const char *api = cta_map_key(&c->t.names, call->name - 1);
    int async = strstr(api, "Async") != NULL || strstr(api, "Launch") != NULL;
    if (nwork)
        put_work(c, work[0], call->corr, call->end, call->tid, async);
    int sk = sync_kind(api, nwork ? &work[0] : NULL);
    if (sk >= 0) {
        cta_kit s = *call;
        s.synckind = (uint8_t)sk;
        s.stream = syncev ? syncev->stream : nwork ? work[0].stream : 0;
        put_time(c, s, CTA_KR_SYNC, call->end);
        c->st.syncs++;
    }
    put_time(c, *call, CTA_KR_API, call->end);
    /* a graph launch's further kernels: their own ids, launched by the same call */
    for (size_t i = 1; i < nwork; i++)
        put_work(c, work[i], SYNTH_CORR + ++c->synth, work[i].start, call->tid, 1);
}

static int join_all(kconv *c)
{
    if (cta_ksort_finish(&c->by_corr) != 0)
        return -1;
    cta_kit it, call, syncev, *work = NULL;
    size_t nwork = 0, work_cap = 0;
    int have_call = 0, have_sync = 0, got;
    uint64_t corr = 0;
    while ((got = cta_ksort_next(&c->by_corr, &it)) > 0) {
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
    cta_ksort_free(&c->by_corr);
    return got < 0 ? -1 : 0;
}

/* ---- the conversion of one file ------------------------------------------------------------ */

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
    c.t.path = path;
    cta_ksort_init(&c.by_corr, tmpdir());
    cta_ksort_init(&c.t.by_time, tmpdir());
    cta_map_init(&c.t.names);
    cta_map_init(&c.nvtx_names);
    int rc = cta_kineto_read(path, on_event, &c, meta, err, errlen);
    if (rc == 0 && (c.by_corr.failed || c.t.by_time.failed || join_all(&c) != 0 || c.t.by_time.failed)) {
        snprintf(err, errlen, "%s: cannot convert it: writing the sort's runs in %s failed: %s", path,
                 tmpdir(), strerror(errno ? errno : EIO));
        rc = -1;
    }
    if (rc == 0) {
        int fd = cta_ksort_tmpfile(tmpdir(), out, outlen);
        if (fd < 0 || cta_kconv_write(&c.t, fd, meta) != 0) {
            snprintf(err, errlen, "%s: cannot convert it: writing a trace in %s failed: %s", path,
                     tmpdir(), strerror(errno ? errno : EIO));
            if (fd >= 0)
                unlink(out);
            rc = -1;
        }
    }
    if (st)
        *st = c.st;
    cta_ksort_free(&c.by_corr);
    cta_ksort_free(&c.t.by_time);
    cta_map_free(&c.t.names);
    cta_map_free(&c.nvtx_names);
    free(c.t.threads);
    return rc;
}


const char cta_kineto_lacks[] =
    "the host's CPU time (what the host did outside CUDA is unknown, not idle), call stacks, "
    "the process's exit, the pinned or pageable kind of copies whose name does not say it, "
    "device memory allocated before the profile began (and all of it without profile_memory)";

#define CTA_KDROP_KEY_(id, key, words) key,
#define CTA_KDROP_WORDS_(id, key, words) words,
const char *const cta_kdrop_key[CTA_KDROP_N] = {CTA_KDROPS(CTA_KDROP_KEY_)};
const char *const cta_kdrop_words[CTA_KDROP_N] = {CTA_KDROPS(CTA_KDROP_WORDS_)};
#undef CTA_KDROP_KEY_
#undef CTA_KDROP_WORDS_

const char *cta_kconv_dropped_text(const cta_kconv_stats *st, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < CTA_KDROP_N && o < len; i++) {
        if (!st->dropped[i])
            continue;
        int n = snprintf(buf + o, len - o, "%s%llu %s", o ? ", " : "",
                         (unsigned long long)st->dropped[i], cta_kdrop_words[i]);
        o += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

const char cta_kineto_gpu_dropped[] =
    "no GPU activity left in this Kineto trace: its kernel, gpu_memcpy and gpu_memset events "
    "were all dropped for faulty fields (source.dropped says why): the breakdown has nothing to "
    "measure";

const char cta_kineto_no_gpu[] =
    "no GPU activity in this Kineto trace (no kernel, gpu_memcpy or gpu_memset event): the "
    "breakdown has nothing to measure";
