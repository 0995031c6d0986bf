/* The Kineto conversion's trace writer (cta_kconv_write.h). */
#include "cta_kconv_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ENC_BYTES (1u << 20)

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
    if (++o->since_flush >= CTA_KCONV_FLUSH_EVERY)
        flush_all(o, r->ts);
}

static void emit_defs(cta_ktrace *c, kout *o, const cta_kmeta *meta, uint64_t t0)
{
    ct_rec r = {.ts = t0};
    r.type = CT_REC_STRING;
    /* names later records need are interned now too, so that the table is complete here */
    uint32_t dev_name[CTA_KINETO_MAX_DEVICES] = {0};
    for (int d = 0; d < meta->ndevices && d < CTA_KINETO_MAX_DEVICES; d++)
        if (meta->devices[d].name[0])
            dev_name[d] = cta_ktrace_str_id(c, meta->devices[d].name);
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

static void emit_item(kout *o, const cta_kit *it, uint32_t pid)
{
    ct_rec r = {0};
    r.ts = it->key;
    switch (it->kind) {
    case CTA_KR_API:
        r.type = CT_REC_API;
        r.ts = it->end;
        r.u.api = (ct_rec_api){.start = it->start, .function = it->name, .corr = it->corr,
                               .flags = it->driver ? CT_API_DRIVER : 0};
        break;
    case CTA_KR_LAUNCH:
        r.type = CT_REC_LAUNCH;
        r.u.launch = (ct_rec_launch){.corr = it->corr, .function = it->name, .shared_bytes = it->shared,
                                     .stream = it->stream, .device = it->dev};
        memcpy(r.u.launch.grid, it->grid, sizeof it->grid);
        memcpy(r.u.launch.block, it->block, sizeof it->block);
        break;
    case CTA_KR_COPY:
        r.type = CT_REC_COPY;
        r.u.copy = (ct_rec_copy){.corr = it->corr,
                                 .op = it->gkind == CT_GPU_MEMSET ? CT_COPY_MEMSET : CT_COPY_MEMCPY,
                                 .dir = it->dir, .bytes = it->bytes, .src_kind = it->src,
                                 .dst_kind = it->dst, .flags = it->async ? CT_COPY_ASYNC : 0,
                                 .stream = it->stream, .device = it->dev};
        break;
    case CTA_KR_SYNC:
        r.type = CT_REC_SYNC;
        r.ts = it->end;
        r.u.sync = (ct_rec_sync){it->start, it->corr, it->synckind, it->stream};
        break;
    case CTA_KR_GPU:
        r.type = CT_REC_GPU;
        r.ts = it->end;
        r.u.gpu = (ct_rec_gpu){.start = it->start, .corr = it->corr, .device = it->dev,
                               .kind = it->gkind, .stream = it->stream};
        emit(o, pid, 1, &r);
        return;
    case CTA_KR_MEM:
        r.type = CT_REC_MEM;
        r.u.mem = (ct_rec_mem){.op = it->synckind ? CT_MEM_FREE : CT_MEM_ALLOC, .kind = CT_ALLOC_POOL,
                               .address = it->stream, .size = it->bytes, .device = it->dev};
        break;
    case CTA_KR_NVTX_BEGIN:
        r.type = CT_REC_NVTX_BEGIN;
        r.u.nvtx_begin = (ct_rec_nvtx_begin){.tid = it->tid, .kind = CT_NVTX_START_END, .id = it->corr,
                                             .domain = it->domain, .name = it->name, .group = it->group};
        break;
    case CTA_KR_NVTX_RANGE:
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

int cta_kconv_write(cta_ktrace *c, int fd, const cta_kmeta *meta)
{
    if (cta_ksort_finish(&c->by_time) != 0) {
        close(fd);
        return -1;
    }
    cta_kit it;
    int got = cta_ksort_next(&c->by_time, &it);
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
    for (; got > 0 && !o.failed; got = cta_ksort_next(&c->by_time, &it))
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
