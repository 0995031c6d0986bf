/* The background writer and the flush (see ctp_writer.h). */
#define _GNU_SOURCE
#include "ctp_writer.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "ctp_capture.h"
#include "ctp_clock.h"
#include "ctp_fns.h"
#include "ctp_gpu.h"
#include "ctp_harvest.h"
#include "ctp_host.h"
#include "ctp_maps.h"
#include "ctp_nvtxw.h"
#include "ctp_output.h"
#include "ctp_real.h"
#include "ctp_stack.h"
#include "ctp_tsample.h"
#include "ctp_wake.h"

/* A record is in the file at most 100 ms after its call returned (README, Guarantees), whether
 * or not its thread calls again: the writer comes by at least every CTP_WRITER_PERIOD_NS, drains
 * every ring, and writes an encoder once its oldest record is CTP_CHUNK_AGE_NS old. A record
 * waits at most one period to be drained and, drained younger than the age, one more to be
 * written: under 75 ms plus the flush's own time. Waiting for the age instead of writing at
 * every drain keeps a busy thread's chunks ~25 ms long rather than one per 5 ms pass, since a
 * chunk compresses better the more records it holds (README, trace bytes per event). */
#define CTP_WRITER_PERIOD_NS 50000000ull  /* when the rings are nearly empty */
#define CTP_WRITER_BUSY_NS 5000000ull      /* when a ring held an eighth of its size */
#define CTP_CHUNK_AGE_NS 25000000ull
#define CTP_FINAL_WAIT_NS 2000000000ull    /* a handler's wait for the writer's final flush */
/* What a low-water mark leaves below the flush's start besides the holds (ctp_ring.h): a hold's
 * store may become visible to the writer after its thread read its clock (microseconds at
 * most), and a tick's conversion to ns may move by the calibration's reading error between the
 * flush that reads a hold and the one that converts the record (hundreds of ns). */
#define CTP_LW_MARGIN_NS 1000000ull

uint64_t ctp_ring_words = 1u << 17;

static int ctp_write_failed;
/* Records lost while the program had left the writer no descriptor (CT_WRITE_LOST_FD): while
 * not 0, nothing is written, and each flush tries to reopen the file first. */
static uint64_t ctp_fd_lost;
static ct_enc ctp_wenc;                         /* the writer's own stream: definitions, END */
static void *ctp_wbuf;
static ct_enc ctp_genc;                         /* GPU activity from the harvester */
static void *ctp_gbuf;
static uint64_t ctp_gpu_oldest = UINT64_MAX;    /* CPU submit time of the oldest pending GPU op */
static uint64_t ctp_gpu_lost_reported;
static uint64_t ctp_genc_min = UINT64_MAX;      /* earliest ts in ctp_genc */
static uint64_t ctp_max_drained;                /* most words one ring held at the last flush */
static uint8_t ctp_fn_defined[CTP_NFNS];         /* STRING of the function name written */
static uint32_t ctp_writer_tid;
static _Atomic uint32_t ctp_flush_owner;        /* tid of the flushing thread, 0 if none */
static uint64_t ctp_low_water;
static uint64_t ctp_lw_base;                    /* no record appended after the snapshot is earlier */
static uint64_t ctp_ts_held, ctp_ts_floor;      /* the thread samples' ring: t->held, t->floor */
/* The floors of the threads retired during this flush: their GPU timings, collected by the
 * drain, are pending in no harvest yet. */
static uint64_t ctp_retired_floor;
static uint64_t ctp_records_total;
static uint64_t ctp_nvtx_lost_reported;
static uint64_t ctp_ts_snap;                    /* the thread samples' ring head at this flush */
static uint64_t ctp_wenc_min = UINT64_MAX;      /* earliest thread sample in ctp_wenc */
static uint64_t ctp_wenc_since = UINT64_MAX;    /* the flush that put ctp_wenc's first record */

static pthread_t ctp_writer_thread;
static _Atomic int ctp_writer_stop;
static _Atomic uint32_t ctp_final_req;           /* how << 8 | signal: a handler asks for the end */
static _Atomic uint32_t ctp_final_done;          /* the writer wrote it */


static void ctp_write_stop(int rc, uint64_t unwritten, int compress);

static void ctp_def_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    (void)ctx;
    if (ct_enc_string(&ctp_wenc, ctp_low_water, id, s, len) == CT_E_FULL) {
        ct_chunk_info info = {.tid = ctp_writer_tid, .low_water = ctp_low_water};
        uint64_t n = ctp_wenc.nrecords;
        int rc = 0;
        if (!ctp_write_failed && !ctp_fd_lost)
            rc = ct_writer_chunk(ctp_w, &ctp_wenc, &info, 1);
        if (rc != 0 && ctp_fd >= 0)
            ctp_write_stop(rc, n, 1);
        ct_enc_restart(&ctp_wenc);
        ct_enc_string(&ctp_wenc, ctp_low_water, id, s, len);
    }
}

uint64_t *ctp_ring_alloc(void)
{
    void *p = mmap(NULL, ctp_ring_words * 8, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void ctp_ring_free(uint64_t *words)
{
    if (words)
        munmap(words, ctp_ring_words * 8);
}

/* The earliest time of a record that r's words before snap, or the hold read with them (ticks,
 * 0: none), may still put in the file: the records' own times (a ring is not in time order: a
 * call's detail stamped during its hooks precedes its API record) and, for a timed GPU
 * operation, its submission (its GPU record ends no earlier). UINT64_MAX: none. Read at the
 * flush's start, it stays a bound while the flush drains the ring. */
static uint64_t ctp_ring_floor(const ctp_ring *r, uint64_t snap, uint64_t held)
{
    uint64_t lo = held ? ctp_ticks_to_ns(held) : UINT64_MAX;
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (uint64_t n; tail < snap; tail += n) {
        const uint64_t *w = r->words + (tail & r->mask);
        if ((n = ctp_raw_len(w)) == 0)
            break; /* cannot happen with a well-formed ring; never spin */
        unsigned kind = ctp_raw_kind(w[0]);
        const ctp_gpu_pend *p = (const ctp_gpu_pend *)(w + 2);
        uint64_t ts = kind == CTP_RAW_PAD ? UINT64_MAX
                      : kind != CTP_RAW_GPU_PEND ? ctp_ticks_to_ns(w[1])
                      : p->kind ? p->submit : UINT64_MAX;
        if (ts < lo)
            lo = ts;
    }
    return lo;
}

/* An encoder whose earliest record is min_ts (UINT64_MAX: empty) is to be written now. */
static int ctp_chunk_due(uint64_t min_ts, uint64_t now)
{
    return min_ts != UINT64_MAX && min_ts + CTP_CHUNK_AGE_NS <= now;
}

/* The promise of a chunk written now: no record written later has an earlier ts. Records not
 * yet written are in thread encoders, in rings (drained or not: their floors, taken at the
 * flush's start, with the holds of records stamped and not appended then), in the GPU encoder,
 * pending GPU timings (their GPU end is after their CPU submission), or stamped after the
 * snapshot (ctp_lw_base). */
static void ctp_update_low_water(void)
{
    uint64_t lw = ctp_lw_base;
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next) {
        if (t->dead)
            continue;
        if (t->enc_min_ts < lw)
            lw = t->enc_min_ts;
        if (t->floor < lw)
            lw = t->floor;
    }
    if (ctp_ts_floor < lw)
        lw = ctp_ts_floor;
    if (ctp_retired_floor < lw)
        lw = ctp_retired_floor;
    if (ctp_genc_min < lw)
        lw = ctp_genc_min;
    if (ctp_wenc_min < lw)
        lw = ctp_wenc_min;
    if (ctp_gpu_oldest != UINT64_MAX && ctp_gpu_oldest - 1000000 < lw)
        lw = ctp_gpu_oldest - 1000000;
    if (lw > ctp_low_water)
        ctp_low_water = lw;
}

/* At the start of a flush in that state: once the file is reopened, every definition is written
 * again before the records that follow (those written before the gap may be among the lost),
 * after the LOSS record that says how much the gap took. */
static void ctp_fd_regain(void)
{
    if (ctp_fd_check(NULL, ctp_fd) < 0)
        return;
    ct_rec_loss l = {CT_LOSS_WRITE, ctp_fd_lost, 0, 0, CT_WRITE_LOST_FD};
    ct_enc_loss(&ctp_wenc, ctp_low_water, &l);
    ctp_fd_lost = 0;
    ctp_intern_rewind();
    ctp_stack_rewind();
    memset(ctp_fn_defined, 0, sizeof ctp_fn_defined);
}

/* Records lost in total: those the rings could not take, and those not written since a write
 * failed. */
static uint64_t ctp_stop_lost;
static uint64_t ctp_lost_total(void)
{
    uint64_t lost = ctp_stop_lost + atomic_load(&ctp_tsample_ring()->dropped);
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        lost += atomic_load(&t->ring.dropped);
    return lost;
}

/* A failed write (CT_E_IO: errno says why), as LOSS why of CT_LOSS_WRITE and in words. */
static unsigned ctp_write_why(int rc, int err, const char **words)
{
    static const char *const text[] = {
        [CT_WRITE_NO_SPACE] = "the file system is full",
        [CT_WRITE_QUOTA] = "the disk quota is reached",
        [CT_WRITE_FILE_LIMIT] = "the file reached the process's file size limit (RLIMIT_FSIZE)",
        [CT_WRITE_ERROR] = "a write failed",
    };
    unsigned why = rc != CT_E_IO ? CT_WRITE_ERROR : err == ENOSPC ? CT_WRITE_NO_SPACE
                   : err == EDQUOT ? CT_WRITE_QUOTA : err == EFBIG ? CT_WRITE_FILE_LIMIT
                                                                 : CT_WRITE_ERROR;
    *words = text[why];
    return why;
}

/* A chunk of unwritten records could not be written to the trace (still ours): tracing stops,
 * told on stderr now, and in the file by a last chunk in the room the writer keeps for it
 * (ct_writer_opts.reserve): LOSS (what failed, the chunk's records) and END CT_END_STOPPED. The
 * records drained from then on are counted (ctp_stop_lost) for the message at the end. */
static void ctp_write_stop(int rc, uint64_t unwritten, int compress)
{
    int err = errno;
    const char *words;
    unsigned why = ctp_write_why(rc, err, &words);
    ctp_write_failed = 1;
    ctp_stop_lost += unwritten;
    if (compress)
        fprintf(stderr, "cutrace: warning: writing %s failed: %s (%s); the trace ends there and "
                "says so, the program continues untraced\n", ctp_path, words,
                rc == CT_E_IO ? strerror(err) : ct_strerror(rc));
    static uint64_t buf[16];
    ct_enc e;
    ct_enc_init(&e, buf, sizeof buf);
    uint64_t now = ctp_now(), ts = now > ctp_low_water ? now : ctp_low_water;
    ct_rec_loss l = {CT_LOSS_WRITE, unwritten, 0, 0, why};
    ct_rec_end end = {CT_END_STOPPED, (int)why, ctp_records_total + 2, ctp_lost_total()};
    ct_enc_loss(&e, ts, &l);
    ct_enc_end(&e, ts, &end);
    ct_chunk_info info = {.tid = ctp_writer_tid, .low_water = ctp_low_water,
                          .flags = CT_CHUNK_FINAL};
    ct_writer_chunk(ctp_w, &e, &info, compress);
    errno = err;
}

static void ctp_write_chunk_flags(ct_enc *e, uint32_t tid, uint64_t lost, unsigned flags,
                                 int compress)
{
    ctp_update_low_water();
    /* Definitions (in the writer's stream) go to the file before the records that use them. */
    if (e != &ctp_wenc && ctp_wenc.nrecords)
        ctp_write_chunk_flags(&ctp_wenc, ctp_writer_tid, 0, 0, compress);
    if (ctp_fd_lost) {
        ctp_fd_lost += e->nrecords + lost;
    } else if (ctp_write_failed) {
        ctp_stop_lost += e->nrecords + lost;
    } else if (e->nrecords || lost) {
        ct_chunk_info info = {0};
        info.tid = tid;
        info.lost = lost;
        info.low_water = ctp_low_water;
        info.flags = (uint16_t)flags;
        uint64_t n = e->nrecords;
        int rc = ct_writer_chunk(ctp_w, e, &info, compress);
        if (rc == 0)
            ctp_records_total += n;
        else if (ctp_fd < 0 && (ctp_fd_errno == EMFILE || ctp_fd_errno == ENFILE)) {
            /* No descriptor to reopen the trace with: the records are counted, and every later
             * chunk tries again (the program may close some of its own). */
            if (!ctp_fd_lost && compress)
                fprintf(stderr, "cutrace: warning: the program closed the descriptor of the "
                        "trace %s and none is left to reopen it with (%s); records are lost "
                        "until one is, the program continues\n", ctp_path,
                        strerror(ctp_fd_errno));
            ctp_fd_lost += n + lost;
        } else if (ctp_fd >= 0) {
            ctp_write_stop(rc, n + lost, compress);
        } else {
            ctp_write_failed = 1;
            if (compress)
                fprintf(stderr, "cutrace: warning: writing %s failed (the program closed its "
                        "descriptor, and reopening the trace failed: %s); tracing stops, the "
                        "program continues\n", ctp_path, ctp_fd_errno == ESTALE ?
                        "the path names another file now" : strerror(ctp_fd_errno));
        }
    }
    ct_enc_restart(e);
    if (e == &ctp_wenc)
        ctp_wenc_min = ctp_wenc_since = UINT64_MAX;
}

static void ctp_write_chunk(ct_enc *e, uint32_t tid, uint64_t lost, int final, int compress)
{
    ctp_write_chunk_flags(e, tid, lost, final ? CT_CHUNK_FINAL : 0, compress);
}

/* The SYNC record of a copy the host waited for: a synchronous copy, or an asynchronous one
 * staged from pageable memory. 0 if there is none. */
static int ctp_copy_sync(ct_enc *e, uint64_t ts, uint64_t start, const ct_rec_copy *k)
{
    if ((k->flags & CT_COPY_ASYNC) && k->src_kind != CT_MEMKIND_PAGEABLE &&
        k->dst_kind != CT_MEMKIND_PAGEABLE)
        return 0;
    ct_rec_sync s = {start, k->corr, CT_SYNC_MEMCPY, k->stream};
    return ct_enc_sync(e, ts, &s);
}

/* A call's detail record (wire type `type`, payload body) at ts; start: the call's entry. */
static int ctp_encode_detail(ct_enc *e, unsigned type, uint64_t ts, uint64_t start,
                            const void *body)
{
    switch (type) {
    case CT_REC_COPY: {
        ct_rec_copy k;
        memcpy(&k, body, sizeof k);
        int rc = ct_enc_copy(e, ts, &k);
        return rc ? rc : ctp_copy_sync(e, ts, start, &k);
    }
    case CT_REC_SYNC: {
        ct_rec_sync r;
        memcpy(&r, body, sizeof r);
        r.start = start;
        return ct_enc_sync(e, ts, &r);
    }
    default: return ct_enc_fixed(e, type, ts, body);
    }
}

/* The STRING naming API function fn (string id fn + 1), the first time a record uses it. */
static void ctp_fn_define(unsigned fn)
{
    if (!ctp_fn_defined[fn]) {
        ctp_def_string(NULL, fn + 1, ctp_fns[fn].name, strlen(ctp_fns[fn].name));
        ctp_fn_defined[fn] = 1;
    }
}

/* Encodes one raw record of t, its ticks converted to ns; a call's API record and detail go into
 * e together or not at all (CT_E_FULL leaves e as it was, for a retry in the next chunk).
 * CTP_NVTXW_WAIT: an NVTX end whose start is not known yet (give_up: record it unmatched). */
static int ctp_encode(ctp_thread *t, ct_enc *e, const uint64_t *w, int give_up, int nolock)
{
    unsigned kind = ctp_raw_kind(w[0]);
    const void *body = w + 2;
    uint64_t ts = ctp_ticks_to_ns(w[1]);
    switch (kind) {
    case CTP_RAW_API: {
        unsigned fn = ctp_raw_fn(w[0]);
        ctp_fn_define(fn);
        unsigned nw = ctp_raw_nwords(w[0]);
        ct_rec_api a = {ctp_ticks_to_ns(w[2]), fn + 1, ctp_raw_aux(w[0]), w[3],
                        nw > 4 ? w[4] : 0,
                        ((ctp_fns[fn].flags & CTP_FN_DRIVER) ? CT_API_DRIVER : 0) |
                        ((ctp_fns[fn].flags & CTP_FN_LIBRARY) ? CT_API_LIBRARY : 0),
                        nw > 5 ? (uint32_t)w[5] : 0};
        ct_enc before = *e;
        int rc = ct_enc_api(e, ts, &a);
        if (rc == 0 && nw > 6)
            rc = ctp_encode_detail(e, (unsigned)(w[5] >> 32), ts, a.start, w + 6);
        if (rc == CT_E_FULL)
            *e = before;
        return rc;
    }
    case CT_REC_GRAPH: { /* a graph launch's or a graph node's, before its call */
        ct_rec_graph g = {0};
        size_t len = (ctp_raw_nwords(w[0]) - 2) * sizeof *w; /* a launch's stops before node */
        memcpy(&g, body, len < sizeof g ? len : sizeof g);
        return ct_enc_graph(e, ts, &g);
    }
    case CTP_RAW_NVTX: return ctp_nvtxw_encode(t, e, w, give_up, nolock, ctp_def_string);
    default: return ct_enc_fixed(e, kind, ts, body); /* a record pushed as its struct */
    }
}

/* GPU timings a signal-handler flush could not hand to the harvester. */
static uint64_t ctp_gpu_dropped;

/* Drains t's ring up to t->snap into its encoder, writing chunks as the buffer fills. GPU
 * timings to collect go to the harvester (not from a signal handler, which counts them lost).
 * Stops early (t->nvtx_stuck counts it) at an NVTX end whose start another thread's ring may
 * still hold, unless give_up. */
static void ctp_drain(ctp_thread *t, int final, int compress, int in_signal, int nolock,
                      uint64_t now, int give_up)
{
    uint64_t tail = atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
    uint64_t lost = atomic_load_explicit(&t->ring.dropped, memory_order_relaxed) - t->lost_reported;
    if (t->snap - tail > ctp_max_drained)
        ctp_max_drained = t->snap - tail;
    while (tail < t->snap) {
        const uint64_t *w = t->ring.words + (tail & t->ring.mask);
        unsigned kind = ctp_raw_kind(w[0]);
        uint64_t n = ctp_raw_len(w);
        if (n == 0)
            break; /* cannot happen with a well-formed ring; never spin */
        if (kind == CTP_RAW_GPU_PEND) {
            if (!in_signal)
                ctp_gpu_collect(t, (const ctp_gpu_pend *)(w + 2));
            else if (((const ctp_gpu_pend *)(w + 2))->kind || ((const ctp_gpu_pend *)(w + 2))->why)
                ctp_gpu_dropped++;
        } else if (kind != CTP_RAW_PAD) {
            int rc = ctp_encode(t, &t->enc, w, give_up, nolock);
            if (rc == CTP_NVTXW_WAIT) {
                t->nvtx_stuck++;
                break;
            }
            if (rc == CT_E_FULL) {
                ctp_write_chunk(&t->enc, t->tid, lost, 0, compress);
                t->enc_min_ts = UINT64_MAX;
                t->lost_reported += lost;
                lost = 0;
                continue; /* retry this record in the empty buffer */
            }
            if (ctp_ticks_to_ns(w[1]) < t->enc_min_ts)
                t->enc_min_ts = ctp_ticks_to_ns(w[1]);
        }
        tail += n;
        atomic_store_explicit(&t->ring.tail, tail, memory_order_release);
    }
    if (tail == t->snap)
        t->nvtx_stuck = 0;
    if (final || lost || ctp_chunk_due(t->enc_min_ts, now) || t->enc.len > t->enc.cap / 2) {
        ctp_write_chunk(&t->enc, t->tid, lost, final, compress);
        t->enc_min_ts = UINT64_MAX;
        t->lost_reported += lost;
    }
}

/* The thread samples (ctp_tsample.h) up to ctp_ts_snap into the writer's stream. */
static void ctp_drain_samples(int compress)
{
    ctp_ring *r = ctp_tsample_ring();
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    while (tail < ctp_ts_snap) {
        const uint64_t *w = r->words + (tail & r->mask);
        unsigned kind = ctp_raw_kind(w[0]);
        uint64_t n = ctp_raw_len(w);
        if (n == 0)
            break; /* cannot happen with a well-formed ring; never spin */
        if (kind != CTP_RAW_PAD) {
            ct_rec_thread_sample k;
            memcpy(&k, w + 2, sizeof k);
            uint64_t ts = ctp_ticks_to_ns(w[1]);
            if (k.function)
                ctp_fn_define(k.function - 1);
            if (ct_enc_thread_sample(&ctp_wenc, ts, &k) == CT_E_FULL) {
                ctp_write_chunk(&ctp_wenc, ctp_writer_tid, 0, 0, compress);
                continue; /* retry this record in the empty buffer */
            }
            if (ts < ctp_wenc_min)
                ctp_wenc_min = ts;
        }
        tail += n;
        atomic_store_explicit(&r->tail, tail, memory_order_release);
    }
}

/* A THREAD record with the thread's name (interning needs a lock: not under CTP_FL_NOLOCK). */
static void ctp_thread_record(ctp_thread *t, unsigned flags, int nolock)
{
    char name[sizeof t->name];
    memcpy(name, t->name, sizeof name);
    name[sizeof name - 1] = 0;
    ct_rec_thread r = {t->tid, name[0] && !nolock ? ctp_intern(name, strlen(name)) : 0, flags};
    if (!nolock)
        ctp_intern_pending(ctp_def_string, NULL);
    ct_enc_thread(&ctp_wenc, ctp_low_water, &r);
}

/* The GPU records' encoder filled during a harvest (never in a signal handler): out it goes. */
static void ctp_genc_full(void)
{
    ctp_write_chunk_flags(&ctp_genc, ctp_writer_tid, 0, CT_CHUNK_GPU, 1);
    ctp_genc_min = UINT64_MAX;
}

/* A host sample's record (ctp_host.h) into the writer's stream, after the strings it names. */
static void ctp_host_put(const ct_rec *r)
{
    ctp_intern_pending(ctp_def_string, NULL);
    if (ct_enc_rec(&ctp_wenc, r) == CT_E_FULL) {
        ctp_write_chunk(&ctp_wenc, ctp_writer_tid, 0, 0, 1);
        ct_enc_rec(&ctp_wenc, r);
    }
}

/* GPU timings lost so far that no per-operation LOSS record reports: by the harvester and the
 * signal-handler flush. */
static uint64_t ctp_gpu_lost_total(void)
{
    return ctp_gpu_lost() + ctp_gpu_dropped;
}

void ctp_flush(unsigned fl, unsigned how, int code, uint64_t retire)
{
    int final = !!(fl & CTP_FL_FINAL), in_signal = !!(fl & CTP_FL_SIGNAL);
    int nolock = in_signal || (fl & CTP_FL_NOLOCK);
    uint32_t me = ctp_gettid(), none = 0;
    for (int spins = 0; !atomic_compare_exchange_strong(&ctp_flush_owner, &none, me); spins++) {
        if (none == me || spins > 2000)
            return; /* a signal interrupted our own flush, or the writer is stuck */
        none = 0;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    int compress = !in_signal;
    ctp_max_drained = 0;
    if (final)
        atomic_store(&ctp_room_open, 0); /* nothing drains the rings after this flush */
    /* Records appended before this point had their strings interned before. */
    /* exited is read before head: a thread that had exited then appended nothing later. A
     * record not appended by the time its ring's head is read was stamped after `base` (its
     * thread read the clock after this), or is held, its hold published before its stamp and
     * released after its append, so read here before the head (acquire: a hold released had
     * its records' head published before). */
    uint64_t base = ctp_ticks();
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        if (!t->dead) {
            t->snap_exited = atomic_load_explicit(&t->exited, memory_order_acquire);
            t->held = atomic_load_explicit(&t->ring.hold, memory_order_acquire);
            t->snap = atomic_load_explicit(&t->ring.head, memory_order_acquire);
        }
    ctp_ts_held = atomic_load_explicit(&ctp_tsample_ring()->hold, memory_order_acquire);
    ctp_ts_snap = atomic_load_explicit(&ctp_tsample_ring()->head, memory_order_acquire);
    /* after the heads: the records drained now lie between two calibration points */
    uint64_t now = ctp_calibrate();
    base = ctp_ticks_to_ns(base);
    ctp_lw_base = base > CTP_LW_MARGIN_NS ? base - CTP_LW_MARGIN_NS : 0;
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        if (!t->dead)
            t->floor = ctp_ring_floor(&t->ring, t->snap, t->held);
    ctp_ts_floor = ctp_ring_floor(ctp_tsample_ring(), ctp_ts_snap, ctp_ts_held);
    ctp_retired_floor = UINT64_MAX;
    if (ctp_fd_lost && !ctp_write_failed)
        ctp_fd_regain();
    if (nolock)
        ctp_intern_pending_try(ctp_def_string, NULL);
    else
        ctp_intern_pending(ctp_def_string, NULL);
    while (ctp_stack_pending(&ctp_wenc, ctp_low_water, nolock, ctp_def_string, NULL) == CT_E_FULL)
        ctp_write_chunk(&ctp_wenc, ctp_writer_tid, 0, 0, compress);
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        if (!t->announced) {
            ctp_thread_record(t, 0, nolock);
            t->announced = 1;
        }
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next) {
        if (t->dead)
            continue;
        int exited = t->snap_exited;
        ctp_drain(t, final || exited, compress, in_signal, nolock, now, 0);
        if (exited && !nolock && atomic_load(&t->ring.tail) == t->snap) {
            ctp_thread_record(t, CT_THREAD_EXITED, 0);
            ctp_gpu_thread_dead(t);
            ctp_nvtxw_thread_dead(t);
            ctp_ring_free(t->ring.words);
            free(t->encbuf);
            if (t->floor < ctp_retired_floor)
                ctp_retired_floor = t->floor;
            t->dead = 1;
            pthread_mutex_lock(&ctp_reg_mu); /* the budget is shared with registration */
            ctp_buffer_used -= ctp_ring_words * 8 + CTP_ENC_BYTES;
            pthread_mutex_unlock(&ctp_reg_mu);
        }
    }
    /* Threads stopped at an NVTX end: its start, published before the end, is drained by now
     * unless it came after its thread's snapshot; one more flush settles that. */
    for (ctp_thread *t = atomic_load(&ctp_threads); t; t = t->next)
        if (!t->dead && t->nvtx_stuck)
            ctp_drain(t, final || t->snap_exited, compress, in_signal, nolock, now,
                      final || t->nvtx_stuck >= 3);
    if (ctp_opt.gpu_every) {
        /* In a handler, the GPU records harvested earlier are still written (raw). */
        if (!in_signal)
            ctp_gpu_oldest = ctp_gpu_harvest(&ctp_genc, final, &ctp_genc_min, retire, ctp_genc_full);
        else if (final)
            ctp_gpu_dropped += ctp_gpu_pending();
        if (final || ctp_chunk_due(ctp_genc_min, now)) {
            ctp_write_chunk_flags(&ctp_genc, ctp_writer_tid, 0, CT_CHUNK_GPU | (final ? CT_CHUNK_FINAL : 0),
                                 compress);
            ctp_genc_min = UINT64_MAX;
        }
    }
    ctp_drain_samples(compress);
    uint64_t gpu_lost = ctp_gpu_lost_total();
    if (gpu_lost > ctp_gpu_lost_reported) {
        ct_rec_loss l = {CT_LOSS_GPU_TIMING, gpu_lost - ctp_gpu_lost_reported, 0, 0, 0};
        ct_enc_loss(&ctp_wenc, now, &l);
        ctp_gpu_lost_reported = gpu_lost;
    }
    if (ctp_nvtxw_names_lost() > ctp_nvtx_lost_reported) {
        ct_rec_loss l = {CT_LOSS_NVTX_NAMES, ctp_nvtxw_names_lost() - ctp_nvtx_lost_reported, 0, 0, 0};
        ct_enc_loss(&ctp_wenc, now, &l);
        ctp_nvtx_lost_reported = ctp_nvtxw_names_lost();
    }
    /* on the writer's thread, or ending the process: never inside a program's CUDA call (a
     * context's retirement flushes on the program's thread) */
    if (!nolock && (final || me == ctp_writer_tid))
        ctp_host_sample(now, final, ctp_host_put);
    ct_rec_capture cap[2];
    for (int i = 0, n = ctp_capture_timers(now, cap); i < n; i++)
        ct_enc_capture(&ctp_wenc, now, &cap[i]);
    if (final) {
        cap[0] = ctp_capture_final();
        if (cap[0].op)
            ct_enc_capture(&ctp_wenc, ctp_now(), &cap[0]);
        ct_rec_end e = {how, code, ctp_records_total + ctp_wenc.nrecords + 1, ctp_lost_total()};
        ct_enc_end(&ctp_wenc, ctp_now(), &e);
    }
    /* The writer's own stream waits as a thread's does (a chunk per pass of thread samples made
     * train_loop's trace 7% larger); any other chunk takes it along first, definitions included. */
    if (ctp_wenc.nrecords && ctp_wenc_since == UINT64_MAX)
        ctp_wenc_since = now;
    if (final || ctp_chunk_due(ctp_wenc_since < ctp_wenc_min ? ctp_wenc_since : ctp_wenc_min, now))
        ctp_write_chunk(&ctp_wenc, ctp_writer_tid, 0, final, compress);
    if (final && ctp_write_failed && ctp_fd >= 0 && compress)
        fprintf(stderr, "cutrace: %s holds the trace up to where writing failed: %llu records "
                "written, %llu after them not\n", ctp_path,
                (unsigned long long)ctp_records_total, (unsigned long long)ctp_stop_lost);
    atomic_store(&ctp_flush_owner, 0);
    ctp_writer_drained();
}

void ctp_flush_final_here(unsigned fl, unsigned how, int code)
{
    sigset_t xfsz, old, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    int had = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    ctp_flush(CTP_FL_FINAL | fl, how, code, 0);
    if (!had) {
        struct timespec zero = {0, 0};
        sigtimedwait(&xfsz, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The writer runs this many nice levels above the program's threads where the process may
 * (root, CAP_SYS_NICE, RLIMIT_NICE). The kernel's fair scheduler shares the CPU among runnable
 * threads by weight: 64 threads calling on 2 cores leave a writer at their priority 1/65 of it,
 * less than the quarter of a core it needs at 5 M records/s, and its rings overflow below the
 * rate they sustain when they wait for it (64 threads at 2.7 M calls/s: up to half the records
 * lost in 3 of 4 runs; none in 4 at -10). Its work is bounded by what the threads record, so the
 * priority cannot take more from them than that. Unprivileged, setpriority fails and nothing
 * changes. */
#define CTP_WRITER_NICE 10

static void ctp_writer_priority(void)
{
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, ctp_writer_tid);
    if (nice == -1 && errno)
        return;
    setpriority(PRIO_PROCESS, ctp_writer_tid,
                nice - CTP_WRITER_NICE < -20 ? -20 : nice - CTP_WRITER_NICE);
}

/* arg: ctp_wake_seq read before the thread was created. The writer waits on the value read
 * before its previous flush (or its start), not after: a wake that arrives while it flushes or
 * starts (a ring passing a quarter full, which is reported once per drain) then ends the next wait
 * at once instead of being missed. */
static void *ctp_writer_main(void *arg)
{
    ctp_writer_tid = ctp_gettid();
    /* named so that top -H and the fault tests (its state and CPU wait) can tell it apart */
    prctl(PR_SET_NAME, "cutrace-writer");
    ctp_writer_priority();
    uint32_t seq = (uint32_t)(uintptr_t)arg;
    for (;;) {
        /* Poll faster while threads fill their rings quickly, so bursts are not dropped. */
        uint64_t period = ctp_max_drained > ctp_ring_words / 8 ? CTP_WRITER_BUSY_NS
                          : ctp_max_drained > ctp_ring_words / 64 ? CTP_WRITER_BUSY_NS * 4
                                                                 : CTP_WRITER_PERIOD_NS;
        uint64_t cap = ctp_capture_wait(ctp_now()); /* a delay or duration ends on time */
        if (cap < period)
            period = cap;
        uint64_t host = ctp_host_wait(ctp_now()); /* so does a host sample */
        if (host < period)
            period = host;
        if (!atomic_load(&ctp_writer_stop) && !atomic_load(&ctp_final_req))
            ctp_futex_wait(&ctp_wake_seq, seq, period);
        seq = atomic_load(&ctp_wake_seq);
        if (atomic_load(&ctp_writer_stop))
            break;
        uint32_t req = atomic_load(&ctp_final_req);
        if (req) {
            /* A fatal signal: the final flush with everything a normal thread may do (harvest
             * GPU timings, compress) but no wait on a lock the dying thread may hold. */
            ctp_flush(CTP_FL_FINAL | CTP_FL_NOLOCK, req >> 8, (int)(req & 0xff), 0);
            atomic_store(&ctp_final_done, 1);
            ctp_futex_wake(&ctp_final_done);
            break;
        }
        ctp_flush(0, 0, 0, 0);
    }
    return NULL;
}

int ctp_writer_start(void)
{
    if (!ctp_wbuf)
        ctp_wbuf = malloc(CTP_ENC_BYTES);
    if (!ctp_wbuf || ctp_nvtxw_init() != 0)
        return -1;
    ct_enc_init(&ctp_wenc, ctp_wbuf, CTP_ENC_BYTES);
    if (ctp_opt.gpu_every) {
        if (!ctp_gbuf)
            ctp_gbuf = malloc(CTP_ENC_BYTES);
        if (!ctp_gbuf)
            ctp_opt.gpu_every = 0;
        else
            ct_enc_init(&ctp_genc, ctp_gbuf, CTP_ENC_BYTES);
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&ctp_writer_thread, NULL, ctp_writer_main,
                            (void *)(uintptr_t)atomic_load(&ctp_wake_seq));
    if (rc == 0) {
        ctp_tsample_start();
        atomic_store(&ctp_room_open, ctp_opt.on_full_block);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fprintf(stderr, "cutrace: warning: cannot start the writer thread; untraced\n");
        return -1;
    }
    return 0;
}

void ctp_writer_join(void)
{
    atomic_store(&ctp_room_open, 0);
    ctp_tsample_stop();
    atomic_store(&ctp_writer_stop, 1);
    ctp_writer_wake();
    pthread_join(ctp_writer_thread, NULL);
}

void ctp_writer_end_anywhere(unsigned how, int code)
{
    atomic_store(&ctp_room_open, 0);
    atomic_store(&ctp_final_req, how << 8 | (unsigned)code);
    ctp_writer_wake();
    uint64_t t0 = ctp_now(), waited = 0;
    while (!atomic_load(&ctp_final_done) && waited < CTP_FINAL_WAIT_NS) {
        ctp_futex_wait(&ctp_final_done, 0, CTP_FINAL_WAIT_NS - waited);
        waited = ctp_now() - t0;
    }
    if (!atomic_load(&ctp_final_done))
        ctp_flush_final_here(CTP_FL_NOLOCK | CTP_FL_SIGNAL, how, code);
}

void ctp_writer_new_file(void)
{
    atomic_store(&ctp_flush_owner, 0);
    ctp_write_failed = 0;
    ctp_fd_lost = 0;
    ctp_stop_lost = 0;
    ctp_low_water = 0;
    ctp_records_total = 0;
    atomic_store(&ctp_writer_stop, 0);
    atomic_store(&ctp_final_req, 0);
    atomic_store(&ctp_final_done, 0);
    ctp_genc_min = UINT64_MAX;
    memset(ctp_fn_defined, 0, sizeof ctp_fn_defined);
    ctp_nvtxw_new_file();
    ctp_nvtx_lost_reported = 0;
    ctp_gpu_oldest = UINT64_MAX;
}

void ctp_writer_fork_child(void)
{
    atomic_store(&ctp_room_open, 0); /* no writer here until the child's trace starts */
    ctp_tsample_fork_child();
    ctp_gpu_dropped = 0;
    ctp_gpu_reset();
    ctp_gpu_lost_reported = 0;
}

void ctp_writer_continue(void)
{
    ctp_gpu_lost_reported = ctp_gpu_lost_total();
}
