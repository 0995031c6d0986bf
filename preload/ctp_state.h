/* What every layer of the tracer shares (the preload's internal.h): the per-thread state, the
 * per-call state of a wrapper, the options, the list of traced threads, and the raw record kinds
 * the recorder writes into rings and the writer reads back.
 *
 * Contract: the data is defined here (ctp_state.c) and nothing here calls anything. The session
 * (ctp_session.c) sets ctp_opt before the first record and registers threads (ctp_tls,
 * ctp_threads); the writer (ctp_writer.c) retires them (frees their buffers under ctp_reg_mu). A
 * thread's fields above "Writer-private" belong to the thread itself, those below to whoever
 * holds the flush. This module depends on no other preload module but the ring (ctp_ring.h). */
#ifndef CTP_STATE_H
#define CTP_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "cttrace.h"
#include "ctp_ring.h"

/* Raw kinds beyond the wire record types (which are used as raw kinds for detail records). */
enum {
    CTP_RAW_API = 100,     /* API record: aux = result; words: ts, start, corr[, parent[, stack
                           * | detail type << 32[, detail]]] (parent is present, maybe 0,
                           * whenever stack is; stack, maybe 0, whenever a detail is) */
    CTP_RAW_GPU_PEND = 101, /* GPU timing to harvest: payload ctp_gpu_pend */
    CTP_RAW_NVTX = 102     /* an NVTX call: fn = enum ctp_nvtx_op, aux = domain index; payload
                           * ctp_nvtx_raw, then its message's bytes (push, start, mark; see
                           * CTP_NVTX_PLAIN), or one word (pop: level | flags << 32; end: id) */
};

/* NVTX (ctp_nvtx.c records, ctp_nvtxw.c joins): what one call puts in the ring. */
enum ctp_nvtx_op { CTP_NVTX_PUSH = 1, CTP_NVTX_POP, CTP_NVTX_START, CTP_NVTX_END, CTP_NVTX_MARK,
                   CTP_NVTX_PLAIN = 0x100 /* or'd: one word (push: level, else id), then the
                                           * message; aux = domain | its length << 16 */ };
enum { CTP_NVTX_DOMAINS = 64,     /* domains a process may create (index 0: the default one) */
       CTP_NVTX_TEXT = 512 };     /* bytes of a message kept */
typedef struct {
    uint64_t id;                  /* start/end: the range id; mark naming a thread: its tid */
    uint64_t payload;
    const char *registered;       /* a registered string (ctp_nvtx.c keeps it), else NULL */
    uint32_t category, color, payload_kind, flags; /* flags: enum ct_nvtx_flags */
    uint32_t depth;               /* push/pop: the level in the thread and domain */
    uint32_t len;                 /* bytes of message after this struct */
} ctp_nvtx_raw;
/* Set in the id of a start/end range whose start went to a ring (bits 32-62: the starting
 * thread's number, 0-31: its count): an end without it has no start to wait for. */
#define CTP_NVTX_ID_RECORDED (1ull << 63)
/* Set instead in the id of a range started outside the capture windows (ctp_capture.h): its end
 * is not recorded either (thread numbers stay below 2^30). */
#define CTP_NVTX_ID_UNKEPT (1ull << 62)
/* Domain index -> the domain's name (set once by nvtxDomainCreate, never freed); 0: default. */
extern const char *_Atomic ctp_nvtx_domain_names[CTP_NVTX_DOMAINS];

typedef struct ctp_thread {
    ctp_ring ring;
    int *errp;                   /* the thread's errno (its address never changes) */
    uint64_t corr_next;          /* next correlation id (thread index in the high bits) */
    uint64_t parent;             /* correlation id of the runtime call in progress, or 0 */
    uint64_t last_return;        /* ctp_ticks of the last return to the program */
    uint32_t tid;
    uint32_t cache_dev;          /* device of cache_ctx */
    uint64_t cache_ctx;          /* last current context seen by this thread */
    struct ctp_gpu_stash *gpu;    /* GPU-timing events (ctp_gpu.h), NULL when timing is off */
    /* What the thread sampler (ctp_tsample.h) reads of the thread while it runs, written by the
     * thread with relaxed stores: the string id (fn + 1) of the outermost traced call in
     * progress (0: none), the stack id of its last call that captured one, and its Python
     * thread state (ctp_python_tstate: at registration and at each stack capture). */
    _Atomic uint32_t in_fn;
    _Atomic uint32_t last_stack;
    _Atomic uint64_t py_tstate;
    /* Writer-private from here. */
    ct_enc enc;
    void *encbuf;
    uint64_t enc_min_ts;         /* earliest ts in enc (UINT64_MAX when empty) */
    uint64_t lost_reported;
    char name[16];               /* thread name at registration, then at exit */
    uint64_t snap;               /* ring head at the start of the current flush */
    uint64_t held;               /* ring hold read just before snap (ticks, 0: none) */
    uint64_t floor;              /* no record of the ring before snap, nor any it held, is
                                  * earlier (ns; UINT64_MAX: none) */
    int snap_exited;             /* exited, read just before snap */
    int announced;               /* THREAD record written */
    int dead;                    /* exited, drained, buffers freed */
    struct ctp_nvtx_open *nvtx_open; /* this thread's pushed ranges not yet popped (ctp_nvtxw) */
    unsigned nvtx_stuck;         /* drains that stopped at an end whose start was not seen */
    _Atomic int exited;          /* set by the thread's exit; the writer then retires it */
    struct ctp_ts_thread *sampled; /* the thread sampler's own (ctp_tsample.c) */
    struct ctp_thread *next;
} ctp_thread;

typedef struct {
    ctp_thread *th;
    unsigned fn;
    int err;                      /* errno to hand back to the program */
    uint32_t result;              /* what the real call returned */
    int recorded;                 /* words of the record ctp_emit_begin reserved, 0 if none */
    uint64_t t0, t1, corr, parent; /* t0, t1: ctp_ticks */
    void *gpu_ev0;                /* start event of GPU timing, NULL if not timed */
    uint64_t gpu_stream, gpu_ctx; /* where gpu_ev0 was recorded */
    uint64_t gpu_submit;          /* host time after gpu_ev0 was recorded */
    uint32_t captured;            /* CT_LAUNCH_CAPTURED: the stream was capturing (set by
                                   * ctp_gpu_begin, read only by the hooks of calls that have it) */
    uint32_t gpu_why;             /* enum ct_gpu_lost: why it could not be timed, 0 if it was
                                   * or was not to be (set by ctp_gpu_begin, like captured) */
    uint32_t stack;               /* call-site stack id for the API record, 0 if none */
    uint32_t outer_fn;            /* th->in_fn at entry: the call this one runs inside, 0 none */
    uint64_t unhold;              /* the ring's hold to restore at ctp_finish (ctp_ring_hold's
                                   * return), CTP_UNHELD before ctp_call_hold */
} ctp_call;
#define CTP_UNHELD UINT64_MAX

extern __thread ctp_thread *ctp_tls __attribute__((tls_model("initial-exec")));
/* ctp_tls of a thread that is not traced (process untraced, over the memory budget, exiting). */
extern ctp_thread ctp_untraced;
/* CUDA calls made while the thread was not traced: for the message at the end of a process whose
 * trace could not be written at all (relaxed increments, on that path only). */
extern _Atomic uint64_t ctp_untraced_calls;
/* Every registered thread, newest first (pushed under the session's registration lock, read
 * by the writer and the GPU harvester; a forked child empties it). */
extern _Atomic(ctp_thread *) ctp_threads;

/* The registration lock: held while a thread registers or the trace starts (ctp_session.c), and
 * by the writer while it gives a retired thread's buffers back to the budget it guards. */
extern pthread_mutex_t ctp_reg_mu;
extern uint64_t ctp_buffer_used; /* bytes of rings and encoders of registered threads */

/* Options (read by the session when the trace starts, CUTRACE_* variables). */
typedef struct {
    int stacks;                   /* 0 none, 1 default (alloc/copy/sync), 2 all */
    int python_frames;            /* 0: stacks stay native in a Python process */
    unsigned gpu_every;           /* 0 off, 1 all, N: 1 in N */
    uint64_t cpu_gap_ns;          /* read thread CPU time after this long outside CUDA */
    uint64_t cpu_gap_ticks;       /* the same in ctp_ticks units */
    uint64_t host_ns;             /* host sampling period (ctp_host.h), 0 off */
    uint64_t thread_sample_ns;    /* thread sampling period (ctp_tsample.h), 0 off */
    int host_scan;                /* find the tree's children by scanning /proc, as where the
                                   * kernel has no children files (CUTRACE_HOST_CHILDREN=scan) */
    int on_full_block;            /* a full ring makes its thread wait for the writer instead
                                   * of losing the record (CUTRACE_ON_FULL=block) */
} ctp_options;
extern ctp_options ctp_opt;

#endif
