/* The trace of one process: thread registration, the background writer, and the paths that end
 * a trace (exit, fatal signals) or restart it (fork).
 *
 * A trace starts on the process's first traced CUDA call (so a process that never uses CUDA
 * writes nothing): options are read, the file is created (O_EXCL|O_NOFOLLOW, mode 0640, in
 * CUTRACE_OUTPUT with %h %p %j %r expanded), the writer thread starts and the flushing signal
 * handlers are installed where the disposition is SIG_DFL. If the file cannot be created,
 * one warning is printed and the process runs untraced.
 *
 * The writer wakes every 100 ms (every 5 to 20 ms while rings fill quickly, at once when a
 * ring passes half full or a synchronization returns): it snapshots every ring's head, writes the strings interned
 * so far (so every record it then drains has its definitions earlier in the file), drains each
 * ring into that thread's encoder, and writes a thread's chunk when it is 500 ms old (or its
 * buffer is half full). One flush runs at a time (ct_flush_owner); the signal-handler flush
 * waits for the writer's current cycle, then writes raw (uncompressed) chunks with
 * async-signal-safe code only. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ct_session.h"

#include "ct_clock.h"
#include "ct_device.h"
#include "ct_emit.h"
#include "ct_frameworks.h"
#include "ct_fns.h"
#include "ct_gpu.h"
#include "ct_harvest.h"
#include "ct_maps.h"
#include "ct_real.h"
#include "ct_stack.h"
#include "ct_state.h"
#include "ct_wake.h"

#define CT_VERSION "0.1"
/* Words per thread ring (CUTRACE_RING_KB): 1 MiB, ~8,700 launches between drains. */
static uint64_t ct_ring_words = 1u << 17;
#define CT_ENC_BYTES (1u << 20)       /* encoded records per thread between chunks */
#define CT_WRITER_PERIOD_NS 100000000ull /* when the rings are nearly empty */
#define CT_WRITER_BUSY_NS 5000000ull      /* when a ring held an eighth of its size */
#define CT_CHUNK_PERIOD_NS 500000000ull


enum { CT_OFF = 0, CT_RUNNING = 1, CT_FAILED = 2, CT_ENDED = 3 };
static _Atomic int ct_state;
static pid_t ct_pid;                            /* the process whose trace this is */
static pthread_mutex_t ct_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t ct_thread_count;
static uint64_t ct_buffer_budget = 512ull << 20;
static uint64_t ct_buffer_used;
static pthread_key_t ct_exit_key;

static ct_writer *ct_w;
static char ct_path[PATH_MAX];
static int ct_fd = -1;                         /* ct_w's descriptor ... */
static dev_t ct_fd_dev;                        /* ... and the file it must still be */
static ino_t ct_fd_ino;
static int ct_write_failed;
static ct_enc ct_wenc;                         /* the writer's own stream: definitions, END */
static void *ct_wbuf;
static ct_enc ct_genc;                         /* GPU activity from the harvester */
static void *ct_gbuf;
static uint64_t ct_gpu_oldest = UINT64_MAX;    /* CPU submit time of the oldest pending GPU op */
static uint64_t ct_gpu_lost_reported;
static uint64_t ct_gpu_last_chunk;
static uint64_t ct_genc_min = UINT64_MAX;      /* earliest ts in ct_genc */
static uint64_t ct_cycle_start;                /* when the current flush began */
static uint64_t ct_max_drained;                /* most words one ring held at the last flush */
static uint8_t ct_fn_defined[CT_NFNS];         /* STRING of the function name written */
static uint32_t ct_writer_tid;
static _Atomic uint32_t ct_flush_owner;        /* tid of the flushing thread, 0 if none */
static uint64_t ct_low_water;
static uint64_t ct_records_total;

static pthread_t ct_writer_thread;
static _Atomic int ct_writer_stop;
static _Atomic uint32_t ct_final_req;           /* how << 8 | signal: a handler asks for the end */
static _Atomic uint32_t ct_final_done;          /* the writer wrote it */
#define CT_FINAL_WAIT_NS 2000000000ull          /* a handler's wait for the writer's final flush */
static char ct_options_text[256];

static uint32_t ct_gettid(void) { return (uint32_t)syscall(SYS_gettid); }

/* ---- options and output file ---- */

static void ct_read_options(void)
{
    const char *s = getenv("CUTRACE_STACKS");
    ct_opt.stacks = !s || !*s || !strcmp(s, "default") ? 1 : !strcmp(s, "all") ? 2 : 0;
    s = getenv("CUTRACE_GPU_TIMING");
    ct_opt.gpu_every = !s || !*s || !strcmp(s, "all") ? 1 : !strcmp(s, "off") ? 0
                                                         : (unsigned)strtoul(s, NULL, 10);
    s = getenv("CUTRACE_CPU_GAP_US");
    if (s && *s)
        ct_opt.cpu_gap_ns = strtoull(s, NULL, 10) * 1000;
    s = getenv("CUTRACE_BUFFER_MB");
    if (s && *s)
        ct_buffer_budget = strtoull(s, NULL, 10) << 20;
    s = getenv("CUTRACE_RING_KB");
    if (s && *s) {
        char *end;
        unsigned long long kb = strtoull(s, &end, 10);
        if (*end || kb < 4 || kb > 65536 || (kb & (kb - 1)))
            fprintf(stderr, "cutrace: warning: CUTRACE_RING_KB: expected a power of two from 4 "
                    "to 65536, found '%s'; rings keep %llu KiB\n", s,
                    (unsigned long long)(ct_ring_words / 128));
        else
            ct_ring_words = kb * 128;
    }
    snprintf(ct_options_text, sizeof ct_options_text,
             "stacks=%s gpu_timing=%u cpu_gap_us=%llu buffer_mb=%llu ring_kb=%llu",
             ct_opt.stacks == 2 ? "all" : ct_opt.stacks ? "default" : "none", ct_opt.gpu_every,
             (unsigned long long)(ct_opt.cpu_gap_ns / 1000),
             (unsigned long long)(ct_buffer_budget >> 20),
             (unsigned long long)(ct_ring_words / 128));
}

static const char *ct_env_first(const char *const *names, const char *dflt)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v)
            return v;
    }
    return dflt;
}

/* CUTRACE_OUTPUT with %h (host), %p (pid), %j (slurm job), %r (rank), %% expanded. */
static void ct_expand(const char *pat, char *out, size_t cap)
{
    static const char *const rank_vars[] = {"SLURM_PROCID", "RANK", "OMPI_COMM_WORLD_RANK",
                                            "PMI_RANK", NULL};
    static const char *const job_vars[] = {"SLURM_JOB_ID", NULL};
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    size_t o = 0;
    for (const char *p = pat; *p && o + 1 < cap; p++) {
        char tmp[32];
        const char *ins = NULL;
        if (*p == '%' && p[1]) {
            p++;
            switch (*p) {
            case 'h': ins = host; break;
            case 'p': snprintf(tmp, sizeof tmp, "%d", (int)getpid()); ins = tmp; break;
            case 'j': ins = ct_env_first(job_vars, "nojob"); break;
            case 'r': ins = ct_env_first(rank_vars, "0"); break;
            case '%': ins = "%"; break;
            default: tmp[0] = '%'; tmp[1] = *p; tmp[2] = 0; ins = tmp;
            }
            o += (size_t)snprintf(out + o, cap - o, "%s", ins);
        } else {
            out[o++] = *p;
        }
    }
    out[o < cap ? o : cap - 1] = 0;
}

static int ct_mkdirs(char *dir)
{
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int rc = mkdir(dir, 0750);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(dir, 0750) == 0 || errno == EEXIST ? 0 : -1;
}

/* Creates the trace file; -1 after one warning. */
static int ct_open_output(void)
{
    const char *pat = getenv("CUTRACE_OUTPUT");
    char dir[PATH_MAX - 64];
    ct_expand(pat && *pat ? pat : ".", dir, sizeof dir);
    char host[64] = "host";
    gethostname(host, sizeof host - 1);
    for (char *h = host; *h; h++)
        if (*h == '/' || *h == '.')
            *h = '_';
    int fd = -1;
    if (ct_mkdirs(dir) == 0) {
        for (int i = 0; i < 1000 && fd < 0; i++) {
            if (i == 0)
                snprintf(ct_path, sizeof ct_path, "%s/%s-%d.cutrace", dir, host, (int)getpid());
            else
                snprintf(ct_path, sizeof ct_path, "%s/%s-%d-%d.cutrace", dir, host, (int)getpid(), i);
            fd = open(ct_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
            if (fd < 0 && errno != EEXIST)
                break;
        }
    }
    if (fd < 0) {
        fprintf(stderr, "cutrace: warning: cannot create a trace file in %s (%s); this process "
                "(pid %d) runs untraced\n", dir, strerror(errno), (int)getpid());
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0) {
        ct_fd = fd;
        ct_fd_dev = st.st_dev;
        ct_fd_ino = st.st_ino;
    }
    static char scratch[16384 + 8192];
    ct_header h;
    /* zstd level 3, not the format's default 6: the writer is one thread compressing what every
     * traced thread produces, and at 6 it falls behind a loop of back-to-back launches (61% of
     * 800,000 records lost in instant mode, against 8% at 3) for 10% smaller files (2.02
     * against 2.22 bytes per train_loop event). */
    const ct_writer_opts wo = {.zlevel = 3};
    if (ct_header_collect(&h, CT_VERSION, ct_options_text, scratch, sizeof scratch) != 0 ||
        (h.frameworks = ct_frameworks_loaded(), ct_writer_open_fd(&ct_w, fd, &h, &wo)) != 0) {
        fprintf(stderr, "cutrace: warning: cannot write the trace header to %s (%s); this "
                "process (pid %d) runs untraced\n", ct_path, strerror(errno), (int)getpid());
        close(fd);
        unlink(ct_path);
        return -1;
    }
    return 0;
}

/* The trace's descriptor is still the trace file: a program may close descriptors it did not
 * open and get the same number for a file of its own, which must not receive trace chunks
 * (async-signal-safe). */
static int ct_fd_ours(void)
{
    struct stat st;
    return ct_fd >= 0 && fstat(ct_fd, &st) == 0 && st.st_dev == ct_fd_dev &&
           st.st_ino == ct_fd_ino;
}

/* Closes the trace file, unless its descriptor now belongs to the program (then the writer's
 * few bytes of state are left). */
static void ct_close_output(void)
{
    if (ct_w && ct_fd_ours())
        ct_writer_close(ct_w);
    ct_w = NULL;
    ct_fd = -1;
}

/* ---- writer ---- */

/* How a flush runs. NOLOCK: a fatal signal interrupted a thread that may hold a tracer lock, so
 * never block on one (definitions that cannot be had now stay unwritten). SIGNAL: in the
 * handler itself: additionally no allocation, compression or CUDA call (raw chunks; pending GPU
 * timings are counted as lost). */
enum { CT_FL_FINAL = 1, CT_FL_NOLOCK = 2, CT_FL_SIGNAL = 4 };

static void ct_def_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    (void)ctx;
    if (ct_enc_string(&ct_wenc, ct_low_water, id, s, len) == CT_E_FULL) {
        ct_chunk_info info = {.tid = ct_writer_tid, .low_water = ct_low_water};
        if (!ct_write_failed)
            ct_writer_chunk(ct_w, &ct_wenc, &info, 1);
        ct_enc_restart(&ct_wenc);
        ct_enc_string(&ct_wenc, ct_low_water, id, s, len);
    }
}

/* Ring memory, its pages faulted in now: a first touch costs microseconds here (more on a
 * virtual machine), far more than a call the ring records, and would otherwise fall on the
 * traced calls, one page in every ~30 launches. */
static uint64_t *ct_ring_alloc(void)
{
    void *p = mmap(NULL, ct_ring_words * 8, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void ct_ring_free(uint64_t *words)
{
    if (words)
        munmap(words, ct_ring_words * 8);
}

/* The promise of a chunk written now: no record written later has an earlier ts. Records not
 * yet written are in thread encoders, in rings (not drained yet), in the GPU encoder, pending
 * GPU timings (their GPU end is after their CPU submission), or not appended yet (their ts is
 * at most a short delay before the current flush began). */
static void ct_update_low_water(void)
{
    uint64_t lw = ct_cycle_start > 20000000 ? ct_cycle_start - 20000000 : 0;
    for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
        if (t->dead)
            continue;
        if (t->enc_min_ts < lw)
            lw = t->enc_min_ts;
        uint64_t tail = atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
        if (tail < t->snap) {
            const uint64_t *w = t->ring.words + (tail & t->ring.mask);
            if (ct_raw_kind(w[0]) != CT_RAW_PAD && ct_ticks_to_ns(w[1]) < lw)
                lw = ct_ticks_to_ns(w[1]);
        }
    }
    if (ct_genc_min < lw)
        lw = ct_genc_min;
    if (ct_gpu_oldest != UINT64_MAX && ct_gpu_oldest - 1000000 < lw)
        lw = ct_gpu_oldest - 1000000;
    if (lw > ct_low_water)
        ct_low_water = lw;
}

static void ct_write_chunk_flags(ct_enc *e, uint32_t tid, uint64_t lost, unsigned flags,
                                 int compress)
{
    ct_update_low_water();
    /* Definitions (in the writer's stream) go to the file before the records that use them. */
    if (e != &ct_wenc && ct_wenc.nrecords)
        ct_write_chunk_flags(&ct_wenc, ct_writer_tid, 0, 0, compress);
    if (!ct_write_failed && (e->nrecords || lost) && !ct_fd_ours()) {
        ct_write_failed = 1;
        if (compress)
            fprintf(stderr, "cutrace: warning: the program closed or reused the descriptor of "
                    "%s (fd %d); tracing stops, the program continues\n", ct_path, ct_fd);
    }
    if (!ct_write_failed && (e->nrecords || lost)) {
        ct_chunk_info info = {0};
        info.tid = tid;
        info.lost = lost;
        info.low_water = ct_low_water;
        info.flags = (uint16_t)flags;
        ct_records_total += e->nrecords;
        int rc = ct_writer_chunk(ct_w, e, &info, compress);
        if (rc != 0) {
            ct_write_failed = 1;
            if (compress) {
                int err = errno;
                fprintf(stderr, "cutrace: warning: writing %s failed (%s: %s); tracing stops, "
                        "the program continues\n", ct_path, ct_strerror(rc), strerror(err));
            }
        }
    }
    ct_enc_restart(e);
}

static void ct_write_chunk(ct_enc *e, uint32_t tid, uint64_t lost, int final, int compress)
{
    ct_write_chunk_flags(e, tid, lost, final ? CT_CHUNK_FINAL : 0, compress);
}

/* The SYNC record of a copy the host waited for: a synchronous copy, or an asynchronous one
 * staged from pageable memory. 0 if there is none. */
static int ct_copy_sync(ct_enc *e, uint64_t ts, uint64_t start, const ct_rec_copy *k)
{
    if ((k->flags & CT_COPY_ASYNC) && k->src_kind != CT_MEMKIND_PAGEABLE &&
        k->dst_kind != CT_MEMKIND_PAGEABLE)
        return 0;
    ct_rec_sync s = {start, k->corr, CT_SYNC_MEMCPY, k->stream};
    return ct_enc_sync(e, ts, &s);
}

/* A call's detail record (wire type `type`, payload body) at ts; start: the call's entry. */
static int ct_encode_detail(ct_enc *e, unsigned type, uint64_t ts, uint64_t start,
                            const void *body)
{
    switch (type) {
    case CT_REC_LAUNCH: return ct_enc_launch(e, ts, body);
    case CT_REC_COPY: {
        ct_rec_copy k;
        memcpy(&k, body, sizeof k);
        int rc = ct_enc_copy(e, ts, &k);
        return rc ? rc : ct_copy_sync(e, ts, start, &k);
    }
    case CT_REC_MEM: return ct_enc_mem(e, ts, body);
    case CT_REC_SYNC: {
        ct_rec_sync r;
        memcpy(&r, body, sizeof r);
        r.start = start;
        return ct_enc_sync(e, ts, &r);
    }
    case CT_REC_STREAM: return ct_enc_stream(e, ts, body);
    default: return 0;
    }
}

/* Encodes one raw record, its ticks converted to ns; a call's API record and detail go into e
 * together or not at all (CT_E_FULL leaves e as it was, for a retry in the next chunk). */
static int ct_encode(ct_enc *e, const uint64_t *w)
{
    unsigned kind = ct_raw_kind(w[0]);
    const void *body = w + 2;
    uint64_t ts = ct_ticks_to_ns(w[1]);
    switch (kind) {
    case CT_RAW_API: {
        unsigned fn = ct_raw_fn(w[0]);
        if (!ct_fn_defined[fn]) {
            ct_def_string(NULL, fn + 1, ct_fns[fn].name, strlen(ct_fns[fn].name));
            ct_fn_defined[fn] = 1;
        }
        unsigned nw = ct_raw_nwords(w[0]);
        ct_rec_api a = {ct_ticks_to_ns(w[2]), fn + 1, ct_raw_aux(w[0]), w[3],
                        nw > 4 ? w[4] : 0,
                        (ct_fns[fn].flags & CT_FN_DRIVER) ? CT_API_DRIVER : 0,
                        nw > 5 ? (uint32_t)w[5] : 0};
        ct_enc before = *e;
        int rc = ct_enc_api(e, ts, &a);
        if (rc == 0 && nw > 6)
            rc = ct_encode_detail(e, (unsigned)(w[5] >> 32), ts, a.start, w + 6);
        if (rc == CT_E_FULL)
            *e = before;
        return rc;
    }
    case CT_REC_DEVICE: return ct_enc_device(e, ts, body);
    case CT_REC_CPU: return ct_enc_cpu(e, ts, body);
    default: return 0;
    }
}

/* GPU timings a signal-handler flush could not hand to the harvester. */
static uint64_t ct_gpu_dropped;

/* Drains t's ring up to t->snap into its encoder, writing chunks as the buffer fills. GPU
 * timings to collect go to the harvester (not from a signal handler, which counts them lost). */
static void ct_drain(ct_thread *t, int final, int compress, int in_signal, uint64_t now)
{
    uint64_t tail = atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
    uint64_t lost = atomic_load_explicit(&t->ring.dropped, memory_order_relaxed) - t->lost_reported;
    if (t->snap - tail > ct_max_drained)
        ct_max_drained = t->snap - tail;
    while (tail < t->snap) {
        const uint64_t *w = t->ring.words + (tail & t->ring.mask);
        unsigned kind = ct_raw_kind(w[0]);
        uint64_t n = kind == CT_RAW_PAD ? ct_raw_aux(w[0]) : ct_raw_nwords(w[0]);
        if (n == 0)
            break; /* cannot happen with a well-formed ring; never spin */
        if (kind == CT_RAW_GPU_PEND) {
            if (!in_signal)
                ct_gpu_collect(t, (const ct_gpu_pend *)(w + 2));
            else if (((const ct_gpu_pend *)(w + 2))->kind || ((const ct_gpu_pend *)(w + 2))->why)
                ct_gpu_dropped++;
        } else if (kind != CT_RAW_PAD) {
            if (ct_encode(&t->enc, w) == CT_E_FULL) {
                ct_write_chunk(&t->enc, t->tid, lost, 0, compress);
                t->enc_min_ts = UINT64_MAX;
                t->lost_reported += lost;
                lost = 0;
                t->last_chunk = now;
                continue; /* retry this record in the empty buffer */
            }
            if (ct_ticks_to_ns(w[1]) < t->enc_min_ts)
                t->enc_min_ts = ct_ticks_to_ns(w[1]);
        }
        tail += n;
        atomic_store_explicit(&t->ring.tail, tail, memory_order_release);
    }
    if (final || lost || now - t->last_chunk >= CT_CHUNK_PERIOD_NS || t->enc.len > t->enc.cap / 2) {
        ct_write_chunk(&t->enc, t->tid, lost, final, compress);
        t->enc_min_ts = UINT64_MAX;
        t->lost_reported += lost;
        t->last_chunk = now;
    }
}

/* A THREAD record with the thread's name (interning needs a lock: not under CT_FL_NOLOCK). */
static void ct_thread_record(ct_thread *t, unsigned flags, int nolock)
{
    char name[sizeof t->name];
    memcpy(name, t->name, sizeof name);
    name[sizeof name - 1] = 0;
    ct_rec_thread r = {t->tid, name[0] && !nolock ? ct_intern(name, strlen(name)) : 0, flags};
    if (!nolock)
        ct_intern_pending(ct_def_string, NULL);
    ct_enc_thread(&ct_wenc, ct_low_water, &r);
}

/* The GPU records' encoder filled during a harvest (never in a signal handler): out it goes. */
static void ct_genc_full(void)
{
    ct_write_chunk_flags(&ct_genc, ct_writer_tid, 0, CT_CHUNK_GPU, 1);
    ct_genc_min = UINT64_MAX;
}

/* GPU timings lost so far that no per-operation LOSS record reports: by the harvester and the
 * signal-handler flush. */
static uint64_t ct_gpu_lost_total(void)
{
    return ct_gpu_lost() + ct_gpu_dropped;
}

/* One flush of every thread (fl: CT_FL_*). CT_FL_FINAL: drain everything and end the trace
 * with END (how, code). retire: a context about to be destroyed, whose GPU timings are
 * collected now (0: none). */
static void ct_flush(unsigned fl, unsigned how, int code, uint64_t retire)
{
    int final = !!(fl & CT_FL_FINAL), in_signal = !!(fl & CT_FL_SIGNAL);
    int nolock = in_signal || (fl & CT_FL_NOLOCK);
    uint32_t me = ct_gettid(), none = 0;
    for (int spins = 0; !atomic_compare_exchange_strong(&ct_flush_owner, &none, me); spins++) {
        if (none == me || spins > 2000)
            return; /* a signal interrupted our own flush, or the writer is stuck */
        none = 0;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    uint64_t now = ct_calibrate();
    int compress = !in_signal;
    ct_cycle_start = now;
    ct_max_drained = 0;
    /* Records appended before this point had their strings interned before. */
    /* exited is read before head: a thread that had exited then appended nothing later. */
    for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next)
        if (!t->dead) {
            t->snap_exited = atomic_load_explicit(&t->exited, memory_order_acquire);
            t->snap = atomic_load_explicit(&t->ring.head, memory_order_acquire);
        }
    if (nolock)
        ct_intern_pending_try(ct_def_string, NULL);
    else
        ct_intern_pending(ct_def_string, NULL);
    while (ct_stack_pending(&ct_wenc, ct_low_water, nolock) == CT_E_FULL)
        ct_write_chunk(&ct_wenc, ct_writer_tid, 0, 0, compress);
    for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next)
        if (!t->announced) {
            ct_thread_record(t, 0, nolock);
            t->announced = 1;
        }
    ct_write_chunk(&ct_wenc, ct_writer_tid, 0, 0, compress);
    for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
        if (t->dead)
            continue;
        int exited = t->snap_exited;
        ct_drain(t, final || exited, compress, in_signal, now);
        if (exited && !nolock && atomic_load(&t->ring.tail) == t->snap) {
            ct_thread_record(t, CT_THREAD_EXITED, 0);
            ct_gpu_thread_dead(t);
            ct_ring_free(t->ring.words);
            free(t->encbuf);
            t->dead = 1;
            pthread_mutex_lock(&ct_reg_mu); /* the budget is shared with registration */
            ct_buffer_used -= ct_ring_words * 8 + CT_ENC_BYTES;
            pthread_mutex_unlock(&ct_reg_mu);
        }
    }
    if (ct_opt.gpu_every) {
        /* In a handler, the GPU records harvested earlier are still written (raw). */
        if (!in_signal)
            ct_gpu_oldest = ct_gpu_harvest(&ct_genc, final, &ct_genc_min, retire, ct_genc_full);
        else if (final)
            ct_gpu_dropped += ct_gpu_pending();
        if (final || now - ct_gpu_last_chunk >= CT_CHUNK_PERIOD_NS) {
            ct_write_chunk_flags(&ct_genc, ct_writer_tid, 0, CT_CHUNK_GPU | (final ? CT_CHUNK_FINAL : 0),
                                 compress);
            ct_genc_min = UINT64_MAX;
            ct_gpu_last_chunk = now;
        }
    }
    uint64_t gpu_lost = ct_gpu_lost_total();
    if (gpu_lost > ct_gpu_lost_reported) {
        ct_rec_loss l = {CT_LOSS_GPU_TIMING, gpu_lost - ct_gpu_lost_reported, 0, 0, 0};
        ct_enc_loss(&ct_wenc, now, &l);
        ct_gpu_lost_reported = gpu_lost;
    }
    if (final) {
        ct_rec_end e = {how, code, ct_records_total + ct_wenc.nrecords + 1, 0};
        for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next)
            e.lost += atomic_load(&t->ring.dropped);
        ct_enc_end(&ct_wenc, ct_now(), &e);
    }
    ct_write_chunk(&ct_wenc, ct_writer_tid, 0, final, compress);
    atomic_store(&ct_flush_owner, 0);
}

/* The final flush on a program's thread (exit, exec, _exit, a fatal signal). A trace write past
 * RLIMIT_FSIZE raises SIGXFSZ in the writing thread, and its default action would kill the
 * program (the writer thread blocks every signal; this one may not): it is blocked meanwhile,
 * and one that the flush's writes raised is taken back. fl: CT_FL_* besides CT_FL_FINAL.
 * Async-signal-safe when fl has CT_FL_SIGNAL. */
static void ct_flush_final_here(unsigned fl, unsigned how, int code)
{
    sigset_t xfsz, old, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    int had = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    ct_flush(CT_FL_FINAL | fl, how, code, 0);
    if (!had) {
        struct timespec zero = {0, 0};
        sigtimedwait(&xfsz, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* arg: ct_wake_seq read before the thread was created. The writer waits on the value read
 * before its previous flush (or its start), not after: a wake that arrives while it flushes or
 * starts (a ring passing half full, which is reported once per drain) then ends the next wait
 * at once instead of being missed. */
static void *ct_writer_main(void *arg)
{
    ct_writer_tid = ct_gettid();
    uint32_t seq = (uint32_t)(uintptr_t)arg;
    for (;;) {
        /* Poll faster while threads fill their rings quickly, so bursts are not dropped. */
        uint64_t period = ct_max_drained > ct_ring_words / 8 ? CT_WRITER_BUSY_NS
                          : ct_max_drained > ct_ring_words / 64 ? CT_WRITER_BUSY_NS * 4
                                                                 : CT_WRITER_PERIOD_NS;
        if (!atomic_load(&ct_writer_stop) && !atomic_load(&ct_final_req))
            ct_futex_wait(&ct_wake_seq, seq, period);
        seq = atomic_load(&ct_wake_seq);
        if (atomic_load(&ct_writer_stop))
            break;
        uint32_t req = atomic_load(&ct_final_req);
        if (req) {
            /* A fatal signal: the final flush with everything a normal thread may do (harvest
             * GPU timings, compress) but no wait on a lock the dying thread may hold. */
            ct_flush(CT_FL_FINAL | CT_FL_NOLOCK, req >> 8, (int)(req & 0xff), 0);
            atomic_store(&ct_final_done, 1);
            ct_futex_wake(&ct_final_done);
            break;
        }
        ct_flush(0, 0, 0, 0);
    }
    return NULL;
}

static void ct_session_retire(uint64_t ctx)
{
    if (atomic_load(&ct_state) == CT_RUNNING && ct_opt.gpu_every)
        ct_flush(0, 0, 0, ctx);
}

void ct_session_ctx_gone(uint64_t ctx)
{
    if (!ct_opt.gpu_every || !ctx)
        return;
    int saved = errno;
    ct_session_retire(ctx);
    errno = saved;
}

void ct_session_primary_gone(CUdevice dev)
{
    if (!ct_opt.gpu_every)
        return;
    int saved = errno, active = 0;
    unsigned flags;
    CUcontext ctx = NULL;
    /* The primary context's handle, without changing its reference count in the end. */
    if (CT_REAL(cuDevicePrimaryCtxGetState)(dev, &flags, &active) == CUDA_SUCCESS && active &&
        CT_REAL(cuDevicePrimaryCtxRetain)(&ctx, dev) == CUDA_SUCCESS) {
        CT_REAL(cuDevicePrimaryCtxRelease_v2)(dev);
        ct_session_retire((uint64_t)(uintptr_t)ctx);
    }
    errno = saved;
}

/* ---- the end of the process ---- */

/* The caller is to write this process's END: the trace runs, and this is its process (a vfork
 * child has a pid of its own: getpid is a system call, never cached; it shares the parent's
 * memory, so it must not touch the parent's trace). At most one caller gets 1. The state is
 * read first: processes that never traced (every _exit of a shell under `cutrace run`) make no
 * system call here. */
static int ct_end_claim(void)
{
    int expected = CT_RUNNING;
    return atomic_load(&ct_state) == CT_RUNNING && getpid() == ct_pid &&
           atomic_compare_exchange_strong(&ct_state, &expected, CT_ENDED);
}

/* The final flush from where no lock may be awaited (a fatal-signal handler, _exit, which may
 * run in one): the writer does it (it may harvest GPU timings and compress, which a handler may
 * not); if it has not finished within CT_FINAL_WAIT_NS (it waits on something the interrupted
 * thread holds), the caller flushes raw itself. code: 0-255. Async-signal-safe. */
static void ct_end_anywhere(unsigned how, int code)
{
    atomic_store(&ct_final_req, how << 8 | (unsigned)code);
    ct_writer_wake();
    uint64_t t0 = ct_now(), waited = 0;
    while (!atomic_load(&ct_final_done) && waited < CT_FINAL_WAIT_NS) {
        ct_futex_wait(&ct_final_done, 0, CT_FINAL_WAIT_NS - waited);
        waited = ct_now() - t0;
    }
    if (!atomic_load(&ct_final_done))
        ct_flush_final_here(CT_FL_NOLOCK | CT_FL_SIGNAL, how, code);
}

/* The status exit() was given, modulo 256 as the parent sees it; -1 before exit. glibc hands
 * it to on_exit handlers only: the destructor that writes END (after every later exit handler
 * and library destructor, which may still call CUDA) learns it from here. */
static _Atomic int ct_exit_status = -1;

static void ct_on_exit(int status, void *arg)
{
    (void)arg;
    atomic_store(&ct_exit_status, status & 0xff);
}

/* on_exit handlers run in the reverse order of registration, and the C library registers the
 * one that runs library destructors (the loader's) before main: a handler registered when
 * libcutrace loads (before that) would run after the destructor. Registered when the trace
 * starts (in main or later, for nearly every program), it runs before. Once per process: a
 * forked child inherits it. The handler's code must stay mapped until exit: libcutrace is
 * linked -z nodelete. */
static void ct_watch_exit(void)
{
    static int registered;
    if (!registered)
        registered = on_exit(ct_on_exit, NULL) == 0;
}

void ct_exit_now(int status)
{
    if (!ct_end_claim())
        return;
    int saved = errno;
    ct_end_anywhere(CT_END_EXIT_NOW, status & 0xff);
    errno = saved;
}

/* ---- signals ---- */

/* The signals whose default action ends the process, but for: SIGKILL (cannot be caught),
 * SIGXFSZ (a trace write past RLIMIT_FSIZE raises it in the writing thread, where the write
 * must just fail), SIGTRAP (debuggers) and the realtime signals (the C library's). */
static const int ct_fatal_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV,
                                       SIGBUS, SIGFPE, SIGILL, SIGUSR1, SIGUSR2, SIGXCPU,
                                       SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGSYS, SIGPOLL,
                                       SIGPWR, SIGSTKFLT};

static void ct_on_signal(int sig)
{
    int saved = errno;
    if (ct_end_claim())
        ct_end_anywhere(sig == SIGABRT ? CT_END_ABORT : CT_END_SIGNAL, sig);
    signal(sig, SIG_DFL);
    errno = saved;
    raise(sig); /* blocked until we return: then the default action, as without cutrace */
}

static void ct_install_signals(void)
{
    for (size_t i = 0; i < sizeof ct_fatal_signals / sizeof ct_fatal_signals[0]; i++) {
        struct sigaction old;
        if (sigaction(ct_fatal_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = ct_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(ct_fatal_signals[i], &sa, NULL);
    }
}

/* ---- fork, exec ---- */

/* What a new trace file starts from: no definition written yet, no writer; state OFF (the next
 * start opens the file). */
static void ct_new_file_state(void)
{
    atomic_store(&ct_flush_owner, 0);
    ct_write_failed = 0;
    ct_low_water = 0;
    ct_records_total = 0;
    atomic_store(&ct_writer_stop, 0);
    atomic_store(&ct_final_req, 0);
    atomic_store(&ct_final_done, 0);
    ct_intern_rewind();
    ct_stack_rewind();
    ct_device_reset();
    ct_genc_min = UINT64_MAX;
    memset(ct_fn_defined, 0, sizeof ct_fn_defined);
    ct_gpu_oldest = UINT64_MAX;
    atomic_store(&ct_state, CT_OFF);
}

/* The tables the child keeps (strings, stacks, ranges) are locked around fork so it gets them
 * consistent; their locks are held only briefly. ct_reg_mu is not: it is held while a trace
 * starts (file creation, clock calibration, 2 ms and more), and a prepare handler that waits
 * that long lets other threads register fork handlers of their own that glibc then does not run
 * in the child (a driver initializing meanwhile would not learn of the fork). What it protects
 * (threads, the session) the child discards, so the child re-initializes it. */
/* Lock order: the stack table's lock before the maps' (interning a new stack interns its
 * frames' strings under it). */
static void ct_fork_prepare(void)
{
    ct_stack_lock();
    ct_maps_lock_all();
}

static void ct_fork_parent(void)
{
    ct_maps_unlock_all();
    ct_stack_unlock();
}

/* The child has only the forking thread: it forgets the parent's buffers and writer (their
 * records belong to the parent's file) and starts its own trace on its first CUDA call. */
static void ct_fork_child(void)
{
    ct_maps_unlock_all();
    ct_stack_unlock();
    pthread_mutex_init(&ct_reg_mu, NULL);
    ct_tls = NULL;
    atomic_store(&ct_threads, NULL);
    atomic_store(&ct_thread_count, 0);
    ct_buffer_used = 0;
    ct_w = NULL; /* the parent's file stays the parent's: the descriptor is close-on-exec */
    ct_gpu_dropped = 0;
    ct_gpu_reset();
    ct_gpu_lost_reported = 0;
    ct_new_file_state();
}

/* ---- threads ---- */

static void ct_thread_exit(void *arg)
{
    ct_thread *t = arg;
    ct_tls = &ct_untraced;
    prctl(PR_GET_NAME, t->name); /* the name it had at the end (set after its first call?) */
    atomic_store_explicit(&t->exited, 1, memory_order_release);
}

/* The fork handlers are in place from the moment libcutrace is loaded: a fork while another
 * thread starts the trace (holding ct_reg_mu) must not leave the child with that lock held. */
__attribute__((constructor)) static void ct_session_load(void)
{
    pthread_key_create(&ct_exit_key, ct_thread_exit);
    pthread_atfork(ct_fork_prepare, ct_fork_parent, ct_fork_child);
}

static int ct_session_start_locked(void)
{
    static int maps_ready;
    if (atomic_load(&ct_state) != CT_OFF)
        return atomic_load(&ct_state) == CT_RUNNING ? 0 : -1;
    ct_read_options();
    ct_time_init();
    ct_opt.cpu_gap_ticks = ct_ns_to_ticks(ct_opt.cpu_gap_ns);
    if (!maps_ready) {
        ct_maps_init();
        ct_intern_reserve(CT_NFNS); /* string id fn + 1 names API function fn */
        maps_ready = 1;
    }
    if (ct_open_output() != 0) {
        atomic_store(&ct_state, CT_FAILED);
        return -1;
    }
    if (!ct_wbuf)
        ct_wbuf = malloc(CT_ENC_BYTES);
    if (!ct_wbuf) {
        atomic_store(&ct_state, CT_FAILED);
        return -1;
    }
    ct_enc_init(&ct_wenc, ct_wbuf, CT_ENC_BYTES);
    if (ct_opt.gpu_every) {
        if (!ct_gbuf)
            ct_gbuf = malloc(CT_ENC_BYTES);
        if (!ct_gbuf)
            ct_opt.gpu_every = 0;
        else
            ct_enc_init(&ct_genc, ct_gbuf, CT_ENC_BYTES);
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&ct_writer_thread, NULL, ct_writer_main,
                            (void *)(uintptr_t)atomic_load(&ct_wake_seq));
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fprintf(stderr, "cutrace: warning: cannot start the writer thread; untraced\n");
        atomic_store(&ct_state, CT_FAILED);
        return -1;
    }
    ct_install_signals();
    ct_watch_exit();
    ct_pid = getpid();
    atomic_store(&ct_state, CT_RUNNING);
    return 0;
}

ct_thread *ct_thread_slow(void)
{
    int saved = errno;
    ct_real_load_all();
    ct_thread *t = NULL;
    pthread_mutex_lock(&ct_reg_mu);
    if (ct_session_start_locked() == 0 &&
        ct_buffer_used + ct_ring_words * 8 + CT_ENC_BYTES <= ct_buffer_budget) {
        t = calloc(1, sizeof *t);
        uint64_t *words = ct_ring_alloc();
        void *encbuf = malloc(CT_ENC_BYTES);
        ct_gpu_stash *gpu = ct_opt.gpu_every ? calloc(1, sizeof *gpu) : NULL;
        if (t && words && encbuf && (gpu || !ct_opt.gpu_every)) {
            t->gpu = gpu;
            t->ring.words = words;
            t->errp = &errno;
            t->ring.mask = ct_ring_words - 1;
            t->encbuf = encbuf;
            ct_enc_init(&t->enc, encbuf, CT_ENC_BYTES);
            t->tid = ct_gettid();
            t->enc_min_ts = UINT64_MAX;
            prctl(PR_GET_NAME, t->name);
            t->corr_next = (atomic_fetch_add(&ct_thread_count, 1) + 1) << 40 | 1;
            t->last_return = ct_ticks();
            t->cache_ctx = ~0ull;
            t->last_chunk = ct_now();
            t->next = atomic_load(&ct_threads);
            atomic_store(&ct_threads, t);
            ct_buffer_used += ct_ring_words * 8 + CT_ENC_BYTES;
            pthread_setspecific(ct_exit_key, t);
        } else {
            free(t);
            ct_ring_free(words);
            free(encbuf);
            free(gpu);
            t = NULL;
        }
    }
    pthread_mutex_unlock(&ct_reg_mu);
    ct_tls = t ? t : &ct_untraced;
    errno = saved;
    return t;
}

void ct_record_cpu(ct_thread *th, uint64_t now)
{
    struct rusage ru;
    int saved = errno; /* before the real call: the program's errno must reach it unchanged */
    int rc = getrusage(RUSAGE_THREAD, &ru);
    errno = saved;
    if (rc != 0)
        return;
    ct_rec_cpu r = {th->tid, (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u,
                    (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u};
    ct_push(th, CT_REC_CPU, 0, now, &r, sizeof r);
}

static void ct_writer_join(void)
{
    atomic_store(&ct_writer_stop, 1);
    ct_writer_wake();
    pthread_join(ct_writer_thread, NULL);
}

int ct_exec_begin(void)
{
    if (!ct_end_claim())
        return 0;
    int saved = errno;
    ct_writer_join();
    ct_flush_final_here(0, CT_END_DETACH, 0);
    errno = saved;
    return 1;
}

void ct_exec_failed(void)
{
    int saved = errno;
    pthread_mutex_lock(&ct_reg_mu);
    ct_close_output();
    ct_gpu_lost_reported = ct_gpu_lost_total();
    ct_new_file_state();
    uint64_t now = ct_now();
    for (ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
        t->announced = 0; /* their THREAD records go to the new file too */
        t->last_chunk = now;
    }
    ct_session_start_locked();
    pthread_mutex_unlock(&ct_reg_mu);
    errno = saved;
}

/* exit() or a return from main: stop the writer, flush everything, end the trace with the exit
 * status ct_on_exit saw (-1 if it has not run: the trace started before main). */
__attribute__((destructor)) static void ct_at_exit(void)
{
    if (!ct_end_claim())
        return;
    int saved = errno;
    ct_writer_join();
    ct_flush_final_here(0, CT_END_EXIT, atomic_load(&ct_exit_status));
    ct_close_output();
    errno = saved;
}
