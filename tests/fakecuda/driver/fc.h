/* Internal contract of the simulated CUDA driver (libcuda.so.1). See README.md in this
 * directory for what it simulates and the environment variables it reads.
 *
 * Modules:
 *   fc_core.c    init, environment, fault injection, errors, cuGetProcAddress, profiler control
 *   fc_ctx.c     contexts: the per-thread stack, cuCtx*, limits, primary contexts
 *   fc_devices.c the table of real GPUs and cuDeviceGetAttribute
 *   fc_mem.c     allocations and the address-range map (pointer classification, attributes)
 *   fc_pool.c    stream-ordered allocation, the default pools
 *   fc_vmm.c     virtual memory management (cuMemCreate, cuMemMap, ...)
 *   fc_exec.c    the time engine: ops, streams' in-order worker threads, sync
 *   fc_stream.c  the stream API, host functions and callbacks
 *   fc_event.c   the event API
 *   fc_copy.c    copies and memsets: cost model and API synchronization behaviour
 *   fc_module.c  modules, libraries, kernels, globals (fc_module.h: shared with the two below)
 *   fc_image.c   parsing images: cubin, fatbin (LZ4, zstd), PTX, the text format
 *   fc_launch.c  the kernel cost model, host kernels, launches, occupancy
 *   fc_misc.c    capture status queries, managed-memory advice, cache preferences
 *   fc_graph.c   stream capture (fc_graph.h: the graphs' shared contract)
 *   fc_gnode.c   graphs built node by node, queries, node parameters
 *   fc_gexec.c   executable graphs: instantiation, updates, launches, conditional handles
 *   fc_export.c  cuGetExportTable: NVIDIA's private tables, context-local storage
 *   fc_integrity.c the integrity check's keyed hash (self-contained, fc_integrity.h)
 *   fc_report.c  FAKECUDA_CUDART_REPORT: which libcudart.so the process runs on
 *   fc_link.c    the JIT linker API (cuLinkCreate ... cuLinkDestroy)
 *   fc_array.c   CUDA arrays, texture and surface objects, sampling for host kernels
 *
 * The CUDA headers are included in NVIDIA's internal mode, so every ABI variant (cuMemAlloc and
 * cuMemAlloc_v2, cuMemcpyHtoD_v2 and cuMemcpyHtoD_v2_ptds) is declared under its own name. */
#ifndef FC_H
#define FC_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "fakecuda.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define FC_EXPORT __attribute__((visibility("default")))

/* ---- core ---------------------------------------------------------------------------- */

typedef struct {
    int initialized;
    int instant;        /* FAKECUDA_INSTANT=1 */
    int64_t launch_ns;  /* FAKECUDA_LAUNCH_NS: the host's cost of a kernel launch */
    int ndev;
    int have_faults;    /* FAKECUDA_FAIL set */
    int forked;         /* this process is a fork() child of one that initialized */
    int truth_fd;       /* FAKECUDA_TRUTH file (appended), -1 if none */
    int eager;          /* CUDA_MODULE_LOADING=EAGER (NVIDIA's default is lazy since 12.2) */
} fc_globals;
extern fc_globals fc_g;

/* Every implemented entry point starts with FC_ENTER(symbol): it fails with the injected
 * CUresult when FAKECUDA_FAIL names this call. */
CUresult fc_fault_check(const char *symbol);
#define FC_ENTER(sym)                                                     \
    do {                                                                  \
        if (__builtin_expect(fc_g.have_faults, 0)) {                      \
            CUresult fc_r_ = fc_fault_check(sym);                         \
            if (fc_r_ != CUDA_SUCCESS)                                    \
                return fc_r_;                                             \
        }                                                                 \
    } while (0)
/* Like FC_ENTER, and also requires cuInit. */
#define FC_ENTER_INIT(sym)                                                \
    do {                                                                  \
        FC_ENTER(sym);                                                    \
        if (__builtin_expect(!fc_g.initialized, 0))                       \
            return CUDA_ERROR_NOT_INITIALIZED;                            \
    } while (0)

/* An entry point that is one call (its variants: _v2, _ptsz, ...), with FC_ENTER or
 * FC_ENTER_INIT. */
#define FC_DEF(name, params, call)                 \
    FC_EXPORT CUresult CUDAAPI name params         \
    {                                              \
        FC_ENTER(#name);                           \
        return call;                               \
    }
#define FC_DEF_INIT(name, params, call)            \
    FC_EXPORT CUresult CUDAAPI name params         \
    {                                              \
        FC_ENTER_INIT(#name);                      \
        return call;                               \
    }

CUresult fc_unsupported(const char *symbol);
/* FAKECUDA_CUDART_REPORT (fc_report.c); called by cuInit. */
void fc_report_cudart(void);

/* Every CUresult of cuda.h (generated fc_errors.c). */
typedef struct {
    CUresult code;
    const char *name; /* "CUDA_ERROR_OUT_OF_MEMORY" */
    const char *doc;  /* the header comment's first sentence */
} fc_error_name;
extern const fc_error_name fc_error_names[];
extern const unsigned fc_error_name_count;
int64_t fc_now_ns(void);         /* CLOCK_MONOTONIC */
void fc_sleep_until(int64_t ns); /* absolute CLOCK_MONOTONIC */
void fc_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ---- devices ------------------------------------------------------------------------- */

typedef struct {
    const char *key;        /* FAKECUDA_DEVICES name: "h100" */
    const char *name;       /* cuDeviceGetName */
    int sm_count, cc_major, cc_minor;
    int clock_khz;          /* SM boost clock */
    int mem_clock_khz;      /* memory clock; bandwidth = 2 * clock * bus_bits / 8 */
    int bus_bits;
    size_t total_mem;
    int pcie_gen, pcie_width;
    int l2_bytes;
    int smem_per_sm, smem_per_block_optin, max_threads_per_sm, max_blocks_per_sm;
    int regs_per_sm;
    int pci_bus;
} fc_device_desc;

typedef struct CUctx_st fc_ctx;
typedef struct CUstream_st fc_stream;

typedef struct {
    const fc_device_desc *d;
    size_t budget;                /* min(total_mem, FAKECUDA_MEM_LIMIT) */
    _Atomic size_t used;
    pthread_mutex_t lock;         /* primary context state */
    fc_ctx *primary;
    int primary_refs;
    unsigned primary_flags;
    struct CUmemPoolHandle_st *default_pool, *current_pool;
    /* The host link's copy engines, one per direction (FC_ENGINE_*): a transfer holds its
     * engine from start to end, so concurrent copies in one direction share the link by
     * running one after another, as on the card. */
    pthread_mutex_t engine_lock;
    int64_t engine_free_ns[2];
} fc_device;

extern fc_device fc_devs[];
#define FC_MAX_DEVICES 8

int fc_devices_parse(const char *spec, const fc_device_desc **out, int max);
double fc_dev_mem_bw(const fc_device_desc *d);   /* bytes/s */
double fc_dev_link_bw(const fc_device_desc *d);  /* practical pinned host<->device, bytes/s */
CUresult fc_device_attribute(int *pi, CUdevice_attribute a, const fc_device_desc *d);
CUresult fc_check_device(CUdevice dev);
CUresult fc_device_uuid(CUuuid *uuid, CUdevice dev); /* cuDeviceGetUuid's answer */

/* ---- contexts ------------------------------------------------------------------------ */

struct CUctx_st {
    uint32_t magic;
    int dev;
    unsigned flags;
    int is_primary;
    unsigned long long id;        /* cuCtxGetId: unique in the process */
    _Atomic int alive;
    fc_stream *legacy;            /* the context's legacy default stream */
    pthread_mutex_t lock;         /* streams list */
    fc_stream *streams;           /* every live stream, linked by ctx_next */
    pthread_key_t ptds_key;       /* this thread's per-thread default stream */
    pthread_mutex_t limits_lock;
    size_t limits[CU_LIMIT_MAX];  /* cuCtxSetLimit / cuCtxGetLimit */
    struct fc_cls_entry *cls;     /* context-local storage (fc_export.c), under lock */
};
#define FC_CTX_MAGIC 0xc7c7c7c7u

fc_ctx *fc_ctx_current(void);
/* The current context, or an error (no context, destroyed). */
CUresult fc_ctx_get(fc_ctx **out);
fc_device *fc_ctx_dev(fc_ctx *c);
/* cuCtxGetId's answer (ctx NULL: the current context). */
CUresult fc_ctx_id(CUcontext ctx, unsigned long long *id);
/* A context handle (magic checked), alive or not. */
int fc_ctx_valid(CUcontext c);
/* The device's primary context for NVIDIA's runtime (CUDART_INTERFACE[2]): created if need be
 * and usable, but not retained (cuDevicePrimaryCtxGetState still says inactive, as NVIDIA's
 * does; a release to zero references deactivates it as usual). */
fc_ctx *fc_primary_handle(CUdevice dev);
/* Runs and forgets the context-local storage's destructors (the context goes away). */
void fc_cls_destroy(fc_ctx *c);

/* ---- memory -------------------------------------------------------------------------- */

typedef enum {
    FC_MEM_PAGEABLE = 0, /* not known to the driver */
    FC_MEM_DEVICE,
    FC_MEM_PINNED,       /* cuMemAllocHost / cuMemHostAlloc */
    FC_MEM_REGISTERED,   /* cuMemHostRegister */
    FC_MEM_MANAGED,
    FC_MEM_VMM,          /* a cuMemAddressReserve range */
} fc_mem_kind;

typedef struct {
    uintptr_t base;
    size_t size;
    fc_mem_kind kind;
    int dev;
    fc_ctx *ctx;
    unsigned long long id;
    struct CUmemPoolHandle_st *pool;
    unsigned flags;
} fc_range;

/* A memory pool: only the devices' default pools exist (cuMemPoolCreate is not simulated);
 * freed blocks return to the device at once, so reserved memory equals used memory. */
struct CUmemPoolHandle_st {
    uint32_t magic;
    int dev;
    _Atomic size_t used, used_high;
    cuuint64_t release_threshold;
    int reuse[3]; /* CU_MEMPOOL_ATTR_REUSE_* */
};

/* Finds the tracked range containing p; returns 0 and copies it, or -1 (pageable). */
int fc_mem_lookup(uintptr_t p, fc_range *out);
/* Whether memory of this kind is page-locked host memory (allocated or registered). */
int fc_mem_is_pinned_kind(fc_mem_kind k);
/* Allocates device memory in c's device budget, as cuMemAlloc does. */
CUresult fc_mem_alloc_device(fc_ctx *c, size_t bytesize, CUdeviceptr *out);
/* Releases a device or managed allocation (stream-ordered frees, module globals). */
void fc_mem_free_device(uintptr_t p);
/* Shared by fc_mem.c, fc_pool.c and fc_vmm.c: a device allocation of a kind (device, managed,
 * pool) from c's budget; n rounded up to a multiple of a; adding a range to the map (0, or -1
 * if it overlaps one) and removing the one based at base whose kind is in kinds_mask (a mask of
 * FC_KIND bits; 0 and the range, or -1); taking n bytes from a device's budget (0, or -1 when
 * it has not that many) and giving them back. */
#define FC_KIND(k) (1u << (k))
CUresult fc_alloc_device(CUdeviceptr *dptr, size_t bytesize, fc_mem_kind kind,
                         struct CUmemPoolHandle_st *pool, fc_ctx *c);
size_t fc_round(size_t n, size_t a);
int fc_map_insert(fc_range r);
int fc_map_remove(uintptr_t base, unsigned kinds_mask, fc_range *out);
int fc_budget_take(fc_device *d, size_t n);
void fc_budget_give(fc_device *d, size_t n);

/* ---- arrays (fc_array.c) ------------------------------------------------------------ */

/* One side of a 2D/3D copy: if *type is CU_MEMORYTYPE_ARRAY, checks that the copied box
 * (x_bytes, y, z; width_bytes x height x depth) lies in array a and turns the side into device
 * memory: *type CU_MEMORYTYPE_DEVICE, *dev the array's memory, *pitch its row bytes, *slice_rows
 * (if not NULL) its rows per slice. Other sides are left alone. CUDA_SUCCESS or the copy's error. */
CUresult fc_array_side(CUmemorytype *type, CUarray a, CUdeviceptr *dev, size_t *pitch,
                       size_t x_bytes, size_t y, size_t z, size_t width_bytes, size_t height,
                       size_t depth, size_t *slice_rows);

/* Fills a host-kernel library's fakecuda_texture_api (fakecuda.h), if it defines one. */
void fc_textures_bind(void *lib);

/* ---- modules ------------------------------------------------------------------------- */

/* cuModuleLoadData's work: a module from any accepted image, in the current context. */
CUresult fc_module_load(CUmodule *mod, const void *image);
/* Whether an image would load on device dev: CUDA_SUCCESS or cuModuleLoadData's error. */
CUresult fc_image_check(const void *image, int dev);
/* A whole file, NUL-terminated, malloc'd; its size in *size (may be NULL). NULL if unreadable. */
void *fc_read_whole(const char *path, size_t *size);

/* ---- streams, events, time engine ---------------------------------------------------- */

typedef enum { FC_OP_WAIT, FC_OP_RECORD, FC_OP_COPY, FC_OP_COPY2D, FC_OP_MEMSET, FC_OP_KERNEL,
               FC_OP_HOSTFN, FC_OP_CALLBACK, FC_OP_FREE,
               FC_OP_DEVICE /* work decided when it runs (a graph's conditional node) */
} fc_op_kind;

typedef struct {
    fc_stream *s;
    uint64_t seq;
} fc_dep;

enum { FC_ENGINE_NONE = -1, FC_ENGINE_H2D = 0, FC_ENGINE_D2H = 1 };

/* A set of graph nodes with (zeroed) edge data of the same length (fc_graph.c). */
typedef struct {
    struct CUgraphNode_st **v;
    CUgraphEdgeData *e;
    size_t n, cap;
} fc_nodeset;

typedef struct fc_op {
    struct fc_op *next;
    fc_op_kind kind;
    int engine;      /* FC_ENGINE_*: the copy engine a host<->device transfer occupies */
    uint64_t seq;
    uint32_t truth_tid;  /* FAKECUDA_TRUTH: submitting thread and the op's index among its */
    uint64_t truth_idx;  /* kernels, copies and sets (from 1); 0: not logged */
    uint64_t truth_graph; /* a graph's node: the launching thread's graph launch (from 1) */
    int64_t submit_ns;
    int64_t dur_ns;
    int ndeps;
    fc_dep *deps;
    fc_dep dep_inline[2];
    void *staging;  /* freed after the op */
    size_t staging_cap; /* nonzero: staging is a pooled copy staging buffer of this size */
    union {
        struct { void *dst; const void *src; size_t n; } copy;
        struct { CUDA_MEMCPY2D p; } copy2d;
        /* height rows of count elements, pitch bytes apart */
        struct { char *dst; unsigned value, elem; size_t count, pitch, height; } memset;
        struct {
            fakecuda_host_kernel fn;
            void **params;
            fakecuda_launch launch;
            struct CUfunc_st *f;
        } kernel;
        struct { CUhostFn fn; void *user; } hostfn;
        struct { CUstreamCallback fn; CUstream h; void *user; } callback;
        struct { struct CUevent_st *ev; uint64_t gen; } record;
        struct { uintptr_t p; } free;
        /* run(arg, stream, start) does the work starting at start and returns its end;
         * release(arg) when the op is freed */
        struct {
            int64_t (*run)(void *arg, fc_stream *s, int64_t start);
            void *arg;
            void (*release)(void *arg);
        } device;
    } u;
} fc_op;

#define FC_STREAM_MAGIC 0x57e4a3f1u
#define FC_RING 1024

struct CUstream_st {
    uint32_t magic;
    fc_ctx *ctx;
    unsigned flags;      /* CU_STREAM_NON_BLOCKING */
    int priority;
    int legacy;          /* the context's legacy default stream */
    CUstreamAttrValue attr[5]; /* cuStreamSetAttribute's (fc_stream.c: fc_attr_slot), ... */
    unsigned attr_set;   /* ... which of them were set (bit per slot) */
    unsigned long long id;
    _Atomic int refs;
    pthread_mutex_t m;
    pthread_cond_t work, done;
    fc_op *head, *tail;
    _Atomic uint64_t submitted, completed;
    int64_t tail_end_ns; /* end time of the last completed op */
    struct { uint64_t seq; int64_t end; } ring[FC_RING];
    int worker_started, destroyed;
    pthread_t worker;
    fc_stream *ctx_next;
    struct fc_capture *capture; /* the capture sequence it takes part in (fc_graph.c), or NULL */
    fc_nodeset capdeps;         /* while capturing: the nodes its next operation depends on */
};

/* Resolves a CUstream argument: NULL means the legacy stream unless per_thread (the _ptsz
 * entry points), CU_STREAM_LEGACY and CU_STREAM_PER_THREAD mean what they say. */
CUresult fc_stream_resolve(CUstream h, int per_thread, fc_stream **out);
fc_op *fc_op_new(fc_op_kind kind);
/* Makes op wait for op seq of s (taking a reference to s); frees op with its references. */
void fc_op_add_dep(fc_op *op, fc_stream *s, uint64_t seq);
void fc_op_free(fc_op *op);
/* Enqueues op on s (legacy-stream barriers added here); returns its sequence number. In
 * instant mode it runs the op inline. */
uint64_t fc_submit(fc_stream *s, fc_op *op);
/* Runs op as s's worker does (its data effect, host code, modelled duration: sleeping until its
 * end, FAKECUDA_TRUTH) from start, ignoring its dependencies; returns its end. The caller frees
 * it. A conditional node's body runs this way inside its op. */
int64_t fc_op_run_at(fc_stream *s, fc_op *op, int64_t start);
/* Blocks until op seq of s has completed. */
void fc_stream_wait(fc_stream *s, uint64_t seq);
fc_stream *fc_stream_new(fc_ctx *ctx, unsigned flags, int priority, int legacy);
void fc_stream_ref(fc_stream *s);
void fc_stream_unref(fc_stream *s);
void fc_ctx_sync(fc_ctx *c);
/* Retires a stream (cuStreamDestroy; a per-thread default stream at its thread's exit). */
void fc_stream_retire(void *stream);

/* ---- stream capture (fc_graph.c) ------------------------------------------------------- */

extern __thread CUstreamCaptureMode fc_capture_mode; /* cuThreadExchangeStreamCaptureMode */
/* cuStreamIsCapturing's answer for s. */
CUresult fc_capture_status(fc_stream *s, CUstreamCaptureStatus *st, cuuint64_t *id);
/* Before work on s: on the legacy stream while a blocking stream of its context captures, that
 * capture is invalidated and the call fails with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT. */
CUresult fc_capture_legacy_check(fc_stream *s);
/* s is capturing: the op (a kernel, copy, memset, host function or stream-ordered free) becomes
 * a node of the
 * capture's graph instead of running, and the caller frees it; returns 1. 0: s is not
 * capturing. */
int fc_capture_add(fc_stream *s, const fc_op *op);
/* cuEventRecord(WithFlags) on a capturing s: the event takes s's capture dependencies (an
 * external record is a node); returns 1. 0: s is not capturing. */
int fc_capture_event_record(fc_stream *s, struct CUevent_st *ev, unsigned flags);
/* cuStreamWaitEvent: s joins the capture ev was recorded in, or, capturing, gets an event wait
 * node for an event recorded outside; returns 1 and *r. 0: neither captures. */
int fc_capture_event_wait(fc_stream *s, struct CUevent_st *ev, CUresult *r);
/* cuMemAllocAsync on a capturing s: a memory-allocation node, its address in *dptr; returns 1
 * and *r. 0: s is not capturing. */
int fc_capture_alloc(fc_stream *s, size_t bytesize, CUdeviceptr *dptr, CUresult *r);
/* Frees a retired stream's capture state. */
void fc_nodeset_free(fc_nodeset *ns);
/* A "potentially unsafe" call under the thread's capture mode: 0, or
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED after invalidating the captures it conflicts with. */
CUresult fc_capture_unsafe(void);
/* A captured event was queried or waited for: its capture is invalidated. */
void fc_capture_event_used(fc_stream *s);

#define FC_EVENT_MAGIC 0xe7e7e7e7u
struct CUevent_st {
    uint32_t magic;
    fc_ctx *ctx;
    unsigned flags;
    _Atomic int refs;
    pthread_mutex_t m;
    uint64_t gen;              /* records made */
    _Atomic uint64_t done_gen; /* records completed */
    int64_t time_ns;           /* GPU-side time of the last completed record */
    fc_stream *s;              /* stream of the last record (a reference) */
    uint64_t seq;
    int captured;              /* last recorded into a capturing stream (s) */
    unsigned long long cap_id; /* ... of this capture, */
    fc_nodeset cap_deps;       /* ... after these nodes (fc_graph.c) */
};
void fc_event_unref(struct CUevent_st *e);
/* A live event of a live context. */
int fc_event_valid(CUevent e);

/* ---- cost model ---------------------------------------------------------------------- */

#define FC_COPY_LATENCY_NS 1500
int64_t fc_bytes_ns(size_t bytes, double rate);
/* Staging buffers of pageable host-to-device copies, reused like a driver's own: a fresh
 * buffer each copy would cost its page faults every time (about 1 ms for 4 MiB on these
 * virtual machines, five times the modelled staging). fc_staging_take returns a buffer of at
 * least n bytes and its size in *cap; fc_staging_give takes it back. */
void *fc_staging_take(size_t n, size_t *cap);
void fc_staging_give(void *p, size_t cap);
/* A kernel's duration: its FAKECUDA_KERNEL_NS override (fc_kernel_ns_override, looked up
 * once per kernel; -1 if none), else the default model for its launch dimensions. */
int64_t fc_kernel_ns_override(const char *name);
int64_t fc_kernel_ns(int64_t override, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                     unsigned by, unsigned bz, const fc_device_desc *d);
void fc_kernel_ns_parse(const char *spec);
/* FAKECUDA_LAUNCH_HOLD_NS: launches of matching kernels return that long after submitting. */
void fc_launch_hold_parse(const char *spec);

#endif
