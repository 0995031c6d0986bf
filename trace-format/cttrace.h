/* cttrace: the one library that writes and reads cutrace trace files (format: FORMAT.md, which is
 * normative; this header is its C binding). Used by the tracer (preload/), the analyzer
 * (analyzer/) and the benchmark generator; there is no second implementation. The library also
 * holds the one integer hash map its users share (ct_hash.h).
 *
 * Writer side, three layers:
 *  - ct_enc: record encoder into a caller-provided buffer. Hot-path safe: no allocation, no
 *    system call, no lock, no global state. One ct_enc per stream (per thread buffer); a stream's
 *    timestamps and correlation ids are delta-encoded against its previous record.
 *  - ct_chunk_build: frames (and zstd-compresses) one encoder buffer into a chunk in a caller
 *    buffer. Allocates nothing itself; with a NULL ct_zctx it stores the payload uncompressed,
 *    which is async-signal-safe (for a final flush from a signal handler).
 *  - ct_writer: owns a file descriptor, writes the file header and chunks. Allocates only in
 *    ct_writer_open. Not thread-safe: the caller serializes calls (one background thread).
 *
 * Reader side: ct_reader opens one or many files and delivers records in time order (or in file
 * order, for `cutrace dump`), with memory bounded by the writers' flush lag, not by trace length.
 * Opening a file walks its chunk headers once (no payload) to learn the longest span any record
 * declares (ct_stats.max_span), before the first record is delivered; a reader that reads files
 * on several threads may defer that walk to the thread that reads the file
 * (ct_reader_opts.defer_spans).
 * It never trusts a length or count from a file. Damage (torn tail, corrupt chunk, missing
 * chunks, lost records) is reported as warnings through a callback; errors are returned only when
 * nothing can be read (empty file, not a trace, newer major version, I/O error).
 *
 * All functions returning int return 0 (or a count) on success and a negative CT_E_* code on
 * failure; ct_strerror() names the code. All times are nanoseconds of the writer's
 * CLOCK_MONOTONIC unless said otherwise. */
#ifndef CTTRACE_H
#define CTTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions and limits ------------------------------------------------------------------ */

#define CT_FORMAT_MAJOR 1
#define CT_FORMAT_MINOR 9

#define CT_FILE_MAGIC "CUTRACE\0"      /* 8 bytes at offset 0 */
#define CT_FILE_MAGIC_LEN 8
#define CT_CHUNK_MAGIC 0x4b435443u     /* "CTCK" little-endian */
#define CT_CHUNK_HEADER_SIZE 96u       /* chunk header size this library writes (1.1) */
#define CT_CHUNK_HEADER_MIN 88u        /* smallest a reader accepts (1.0, without max_span) */
#define CT_CHUNK_RAW_MAX (64u << 20)   /* largest decoded chunk payload a reader accepts */
#define CT_HEADER_BODY_MAX (1u << 20)  /* largest file header field area a reader accepts */
#define CT_STRING_MAX 65535u           /* longest string a STRING record may carry */
#define CT_STACK_MAX 512u              /* most frames a STACK record may carry */
/* Most memory a reader gives one file's definitions (strings, frames, stacks: a million kernel
 * names take ~80 MB); beyond it further definitions are ignored with a warning. */
#define CT_DEFS_MAX (256u << 20)
/* Largest encoding of any one record: a maximal STRING or STACK record plus framing. */
#define CT_REC_MAX_BYTES (CT_STRING_MAX + 64u)

/* ---- errors -------------------------------------------------------------------------------- */

enum {
    CT_OK = 0,
    CT_E_IO = -1,        /* a system call failed (errno kept in the message) */
    CT_E_EMPTY = -2,     /* the file is empty */
    CT_E_NOT_TRACE = -3, /* the file does not start with CT_FILE_MAGIC */
    CT_E_VERSION = -4,   /* the file's major version is newer than this library's */
    CT_E_CORRUPT = -5,   /* the file header is damaged, or nothing recoverable */
    CT_E_NOMEM = -6,
    CT_E_FULL = -7,      /* the encoder buffer has no room for the record (nothing written) */
    CT_E_INVAL = -8,     /* an argument is out of range (e.g. string longer than CT_STRING_MAX) */
    CT_E_ZSTD = -9,      /* compression failed */
};
const char *ct_strerror(int code);

/* ---- record types (wire values; FORMAT.md "Records") -------------------------------------- */

enum ct_rec_type {
    CT_REC_STRING = 1,  /* interned string definition */
    CT_REC_FRAME = 2,   /* interned stack frame definition */
    CT_REC_STACK = 3,   /* interned call stack definition */
    CT_REC_THREAD = 4,  /* OS thread: tid, name */
    CT_REC_DEVICE = 5,  /* GPU properties */
    CT_REC_STREAM = 6,  /* stream creation / destruction */
    CT_REC_API = 7,     /* one driver or runtime API call */
    CT_REC_LAUNCH = 8,  /* kernel launch details of an API call */
    CT_REC_COPY = 9,    /* memcpy / memset details of an API call */
    CT_REC_GPU = 10,    /* GPU execution interval of a correlation id */
    CT_REC_MEM = 11,    /* allocation or free */
    CT_REC_SYNC = 12,   /* host blocked in a synchronization */
    CT_REC_CPU = 13,    /* host thread CPU time reading */
    CT_REC_LOSS = 14,   /* records lost */
    CT_REC_END = 15,    /* the process ended (last record of a complete trace) */
    CT_REC_NVTX_RANGE = 16, /* an NVTX push/pop or start/end range (minor 5) */
    CT_REC_NVTX_MARK = 17,  /* an NVTX mark, or the name of a category or OS thread (minor 5) */
    /* Reserved for later minor versions; readers of this version skip them as unknown. */
    CT_REC_GRAPH_LAUNCH = 18,
    CT_REC_PYFRAME = 19,
    CT_REC_GEMM = 20,   /* a cuBLAS / cuBLASLt matrix product's shape and types (minor 2) */
    CT_REC_SHLIB = 21,  /* a CUDA library the process mapped: path and build id (minor 2) */
    CT_REC_PYTHON = 22, /* the CPython the process runs: version, prefixes, search path (minor 4) */
    CT_REC_NVTX_BEGIN = 23, /* an NVTX range's push or start, before its NVTX_RANGE (minor 6) */
    CT_REC_CAPTURE = 24, /* recording of a windowed trace started or stopped (minor 6) */
    CT_REC_GRAPH = 25,  /* a stream capture, CUDA graph or graph exec call's handles (minor 7) */
    CT_REC_PROC = 26,   /* a process of the traced process's tree (minor 8) */
    CT_REC_PROC_SAMPLE = 27, /* a reading of a tree process's or thread's counters (minor 8) */
    CT_REC_HOST_SAMPLE = 28, /* a reading of the machine's counters (minor 8) */
    CT_REC_TYPE_LIMIT = 29, /* first type number this version does not define */
    /* Pseudo types, never on the wire, delivered by the reader: */
    CT_REC_CHUNK = 1000,   /* start of a chunk (only with ct_reader_opts.chunk_records) */
    CT_REC_UNKNOWN = 1001, /* a record of a type this reader does not know (content skipped) */
};
/* "api", "launch", ...; "unknown" for others. */
const char *ct_rec_type_name(uint32_t type);

/* Enumerations used in records. Values are part of the format; new ones may be added in minor
 * versions, so consumers treat unknown values like the *_UNKNOWN / *_OTHER value. */
/* DRIVER set: driver API (cu*); clear: runtime (cuda*) or, with LIBRARY (minor 2), a CUDA
 * math library's entry point (cuBLAS, cuBLASLt) */
enum ct_api_flags { CT_API_DRIVER = 1, CT_API_LIBRARY = 2 };
enum ct_mem_kind {                       /* where a copy's source or destination lives */
    CT_MEMKIND_UNKNOWN = 0, CT_MEMKIND_PAGEABLE = 1, CT_MEMKIND_PINNED = 2,
    CT_MEMKIND_DEVICE = 3, CT_MEMKIND_MANAGED = 4, CT_MEMKIND_ARRAY = 5,
};
enum ct_copy_dir {
    CT_DIR_UNKNOWN = 0, CT_DIR_HTOD = 1, CT_DIR_DTOH = 2, CT_DIR_DTOD = 3, CT_DIR_HTOH = 4,
    CT_DIR_PEER = 5,
};
enum ct_copy_op { CT_COPY_MEMCPY = 0, CT_COPY_MEMSET = 1 };
enum ct_copy_flags {
    CT_COPY_ASYNC = 1, CT_COPY_2D = 2, CT_COPY_3D = 4, CT_COPY_CAPTURED = 8, CT_COPY_UNTIMED = 16,
};
/* CAPTURED: enqueued while its stream was being captured into a CUDA graph: the call added a
 * node to the graph and nothing executed (the graph's launches execute it). UNTIMED: no GPU
 * record will follow and no LOSS names it (timing off, not among the 1 in N timed, not timable
 * where it was enqueued, or the call failed), so a reader need not wait for one. */
/* GRAPH (minor 7): a CUDA graph's launch (cuGraphLaunch), the graph as one operation. */
enum ct_launch_flags { CT_LAUNCH_CAPTURED = 1, CT_LAUNCH_UNTIMED = 2, CT_LAUNCH_GRAPH = 4 };
enum ct_gpu_kind { CT_GPU_OTHER = 0, CT_GPU_KERNEL = 1, CT_GPU_MEMCPY = 2, CT_GPU_MEMSET = 3 };
/* END_BOUND: the end is only an upper bound: the operation had completed when its end event
 * was enqueued (the call waited for it, or the stream was idle by then). */
enum ct_gpu_flags { CT_GPU_END_BOUND = 1 };
enum ct_alloc_kind {
    CT_ALLOC_UNKNOWN = 0,
    CT_ALLOC_DEVICE = 1,        /* cudaMalloc, cuMemAlloc */
    CT_ALLOC_PINNED = 2,        /* cudaMallocHost, cudaHostAlloc, cuMemHostAlloc */
    CT_ALLOC_MANAGED = 3,       /* cudaMallocManaged */
    CT_ALLOC_POOL = 4,          /* stream-ordered: cudaMallocAsync, cuMemAllocFromPoolAsync */
    CT_ALLOC_VMM_PHYSICAL = 5,  /* cuMemCreate / cuMemRelease */
    CT_ALLOC_VMM_MAP = 6,       /* cuMemMap / cuMemUnmap */
    CT_ALLOC_VMM_RESERVE = 7,   /* cuMemAddressReserve / cuMemAddressFree */
    CT_ALLOC_HOST_REGISTER = 8, /* cudaHostRegister / cudaHostUnregister */
};
enum ct_mem_op { CT_MEM_ALLOC = 0, CT_MEM_FREE = 1 };
enum ct_sync_kind {
    CT_SYNC_OTHER = 0, CT_SYNC_DEVICE = 1, CT_SYNC_CONTEXT = 2, CT_SYNC_STREAM = 3,
    CT_SYNC_EVENT = 4, CT_SYNC_STREAM_WAIT_EVENT = 5, CT_SYNC_MEMCPY = 6,
};
enum ct_loss_reason {
    CT_LOSS_OTHER = 0, CT_LOSS_BUFFER_FULL = 1, CT_LOSS_GPU_TIMING = 2, CT_LOSS_WRITE = 3,
    CT_LOSS_STRINGS = 4, CT_LOSS_NVTX_NAMES = 5,
};
enum ct_gpu_lost {  /* why one call's GPU timing is missing (LOSS why) */
    CT_GPU_LOST_NO_EVENT = 1, CT_GPU_LOST_RECORD_FAILED = 2, CT_GPU_LOST_RUNNING_AT_END = 3,
    CT_GPU_LOST_CONTEXT_GONE = 4, CT_GPU_LOST_NO_TIME = 5, CT_GPU_LOST_NO_MEMORY = 6,
};
/* END how (FORMAT.md 4.4). CT_END_EXIT_NOW (format 1.1): _exit/_Exit, no exit handler ran. */
enum ct_shlib_kind { /* which library of the CUDA stack a SHLIB record names (0 other) */
    CT_SHLIB_CUDART = 1, CT_SHLIB_CUDA = 2, CT_SHLIB_CUBLAS = 3, CT_SHLIB_CUBLASLT = 4,
};
enum ct_end_how {
    CT_END_EXIT = 1, CT_END_SIGNAL = 2, CT_END_ABORT = 3, CT_END_DETACH = 4, CT_END_EXIT_NOW = 5,
};
/* UNREAD: a cublasLtMatmul that failed (its descriptors are not read) or whose descriptor or
 * layouts could not be read (fields 0) */
enum ct_gemm_flags { CT_GEMM_UNREAD = 1 };
/* NVTX (minor 5). A range's kind: push/pop (nvtxRangePush/Pop, nested per thread and domain) or
 * start/end (nvtxRangeStart/End, which may end in another thread). */
enum ct_nvtx_kind { CT_NVTX_PUSH_POP = 0, CT_NVTX_START_END = 1 };
enum ct_nvtx_flags {
    CT_NVTX_COLOR = 1,      /* color holds an ARGB color the program gave */
    CT_NVTX_UNMATCHED = 2,  /* range: a pop or end with no open range (start = end, no name) */
    CT_NVTX_CATEGORY_NAME = 4, /* mark: not an event: names `category` (nvtxNameCategory) */
    CT_NVTX_THREAD_NAME = 8,   /* mark: not an event: names the OS thread `payload` */
};
/* Host sampling (minor 8, FORMAT.md 4.11). How a PROC's process relates to the traced one:
 * itself; a child forked without exec (same program image: a multiprocessing "fork" worker, a
 * PyTorch DataLoader worker); a child running another program (exec'd, spawned); a grandchild or
 * deeper. */
enum ct_proc_relation { CT_PROC_SELF = 0, CT_PROC_FORKED = 1, CT_PROC_CHILD = 2, CT_PROC_DESCENDANT = 3 };
/* PROC_SAMPLE flags: which counters /proc did not give (their fields are 0 and mean unknown). */
enum ct_proc_sample_flags {
    CT_PS_NO_IO = 1,      /* rchar, wchar, read_bytes, write_bytes (/proc/PID/io not readable) */
    CT_PS_NO_SCHED = 2,   /* run_ns, wait_ns (no schedstat) */
    CT_PS_PARTIAL = 4,    /* a process record missing threads, or children left unsampled,
                           * past the sampler's tables */
};
/* HOST_SAMPLE flags: which groups of counters the machine did not give (0 = unknown). */
enum ct_host_sample_flags {
    CT_HS_NO_PSI = 1,     /* the psi_* fields (no /proc/pressure) */
    CT_HS_NO_MEM = 2,     /* mem_total, mem_available */
    CT_HS_NO_VM = 4,      /* swap_in, swap_out, majflt */
    CT_HS_NO_CG_USAGE = 8, /* cg_cpu_ns (the limiting cgroup's CPU time not readable) */
};
enum ct_thread_flags { CT_THREAD_TRACER = 1, CT_THREAD_EXITED = 2 };
enum ct_stream_op { CT_STREAM_CREATE = 0, CT_STREAM_DESTROY = 1 };
enum ct_link_kind { CT_LINK_UNKNOWN = 0, CT_LINK_PCIE = 1, CT_LINK_C2C = 2, CT_LINK_INTEGRATED = 3 };

/* ---- records (decoded form; also the encoders' input) ------------------------------------- */
/* String, frame and stack references are ids (uint32_t, 0 = none) resolved with
 * ct_reader_string / ct_reader_frame / ct_reader_stack. Interval records are ordered by their
 * end (ct_rec.ts); `start` is the beginning. Field units are in FORMAT.md. */

typedef struct { uint32_t id; uint32_t len; const char *text; } ct_rec_string;
/* kind (minor 3): enum ct_frame_kind; a Python frame's module is its source file, function its
 * qualified name, line its line (0 if unknown) and offset 0. */
typedef struct { uint32_t id; uint32_t function, module; uint64_t offset; uint32_t kind, line; } ct_rec_frame;
enum ct_frame_kind { CT_FRAME_NATIVE = 0, CT_FRAME_PYTHON = 1 };
typedef struct { uint32_t id; uint32_t nframes; const uint32_t *frames; } ct_rec_stack;
typedef struct { uint32_t tid; uint32_t name; uint32_t flags; } ct_rec_thread;
typedef struct {
    uint32_t device;               /* CUDA ordinal */
    uint32_t name;                 /* string id */
    uint8_t uuid[16];
    uint32_t cc_major, cc_minor;
    uint32_t sm_count;
    uint32_t clock_khz;            /* peak SM clock */
    uint32_t mem_clock_khz;        /* peak memory clock */
    uint32_t mem_bus_bits;         /* memory bus width */
    uint64_t mem_bytes;            /* total global memory */
    uint32_t l2_bytes;
    uint32_t max_threads_per_sm, regs_per_sm, smem_per_sm, warp_size;
    uint32_t async_engines, concurrent_kernels;
    uint32_t link_kind, link_gen, link_width; /* host link: enum ct_link_kind, PCIe gen, lanes */
    uint32_t pci_domain, pci_bus, pci_device;
} ct_rec_device;
typedef struct {
    uint32_t op;                   /* enum ct_stream_op */
    uint64_t stream, context;      /* handle values */
    uint32_t device;
    uint32_t flags;                /* CUstream flags */
    int32_t priority;
} ct_rec_stream;
typedef struct {
    uint64_t start;                /* CPU time of entry; the end is ct_rec.ts */
    uint32_t function;             /* string id of the API function name */
    uint32_t result;               /* CUresult / cudaError_t */
    uint64_t corr;                 /* correlation id (nonzero, unique per file) */
    uint64_t parent;               /* corr of the call this one nests in, 0 if none */
    uint32_t flags;                /* enum ct_api_flags */
    uint32_t stack;                /* stack id of the call site, 0 if not captured */
} ct_rec_api;
typedef struct {
    uint64_t corr;
    uint32_t function;             /* string id of the kernel name (demangled if known) */
    uint32_t symbol;               /* string id of the mangled symbol, 0 if same as function */
    uint32_t grid[3], block[3];
    uint32_t shared_bytes;         /* dynamic shared memory */
    uint64_t stream, context;
    uint32_t device;
    uint32_t flags;
} ct_rec_launch;
typedef struct {
    uint64_t corr;
    uint32_t op;                   /* enum ct_copy_op */
    uint32_t dir;                  /* enum ct_copy_dir */
    uint64_t bytes;
    uint32_t src_kind, dst_kind;   /* enum ct_mem_kind (memset: dst only) */
    uint32_t flags;                /* enum ct_copy_flags */
    uint64_t stream;
    uint32_t device, peer_device;  /* peer_device: the other device of a peer copy */
} ct_rec_copy;
typedef struct {
    uint64_t start;                /* GPU start on the host clock; the end is ct_rec.ts */
    uint64_t corr;
    uint32_t device;
    uint32_t kind;                 /* enum ct_gpu_kind */
    uint64_t stream;
    uint32_t flags;                /* enum ct_gpu_flags (minor 1) */
} ct_rec_gpu;
typedef struct {
    uint32_t op;                   /* enum ct_mem_op */
    uint32_t kind;                 /* enum ct_alloc_kind */
    uint64_t corr;
    uint64_t address, size;
    uint32_t device;
    uint32_t result;
    uint32_t stack;                /* stack id, 0 if none */
    uint64_t stream;               /* stream-ordered allocations */
    uint64_t handle;               /* VMM: CUmemGenericAllocationHandle */
} ct_rec_mem;
typedef struct {
    uint64_t start;                /* entry; the end (ct_rec.ts) minus start is the time blocked */
    uint64_t corr;
    uint32_t kind;                 /* enum ct_sync_kind */
    uint64_t object;               /* stream / event / context handle */
} ct_rec_sync;
typedef struct {
    uint64_t corr;                 /* the cuBLAS / cuBLASLt call's id */
    uint64_t m, n, k;              /* op(A) is m x k, op(B) k x n, C and D m x n */
    uint64_t batch;                /* products in the call (1 unless batched) */
    uint32_t a_type, b_type, c_type, d_type; /* cudaDataType_t of A, B, C, D (D: the output) */
    uint32_t compute_type;         /* cublasComputeType_t */
    uint32_t trans_a, trans_b;     /* cublasOperation_t: 0 N, 1 T, 2 C */
    uint32_t flags;                /* enum ct_gemm_flags */
} ct_rec_gemm;
typedef struct { uint32_t tid; uint64_t user_ns, sys_ns; } ct_rec_cpu;
typedef struct {
    uint32_t reason;               /* enum ct_loss_reason */
    uint64_t count;
    uint32_t tid;
    uint64_t corr;                 /* the one call concerned (count 1), 0 if none (minor 1) */
    uint32_t why;                  /* CT_LOSS_GPU_TIMING of one call: enum ct_gpu_lost (minor 1) */
} ct_rec_loss;
typedef struct {
    uint32_t kind;                 /* enum ct_shlib_kind */
    uint32_t path;                 /* string id: the object's path, symbolic links resolved */
    uint32_t build_id;             /* string id: its GNU build id in lowercase hex, 0 if none */
} ct_rec_shlib;
typedef struct {
    uint32_t version;              /* PY_VERSION_HEX, e.g. 0x030b07f0 for 3.11.7 */
    uint32_t program;              /* string ids: the interpreter's program (sys.executable), */
    uint32_t prefix, exec_prefix;  /* the prefixes of its installation (sys.base_prefix, ...) */
    uint32_t path;                 /* and the module search path it computed, ':'-separated */
} ct_rec_python;
/* A windowed trace (cutrace run --capture-range, --delay, --duration): recording started (op 1)
 * or stopped (op 2) at ts, and why. Outside its windows only allocations, frees and what names
 * things (devices, threads, libraries, strings) are recorded. */
enum ct_capture_op { CT_CAPTURE_START = 1, CT_CAPTURE_STOP = 2 };
enum ct_capture_why {
    CT_CAPTURE_PROFILER = 1, /* cudaProfilerStart / cuProfilerStart, or the matching stop */
    CT_CAPTURE_NVTX = 2,     /* the outermost NVTX range of the capture name began or ended */
    CT_CAPTURE_DELAY = 3,    /* the delay after the process started elapsed */
    CT_CAPTURE_DURATION = 4, /* the duration after recording began elapsed */
    CT_CAPTURE_END = 5,      /* the trace ended while recording */
    CT_CAPTURE_BEGIN = 6,    /* the trace began (recording on or off): the trace is windowed */
};
typedef struct {
    uint32_t op;                   /* enum ct_capture_op */
    uint32_t why;                  /* enum ct_capture_why */
} ct_rec_capture;
/* A call on a stream capture, graph or graph exec (FORMAT.md 4.10): what a reader needs to
 * name a graph launch's kernels, copies and sets: the NODE records of an instantiation or update
 * (the graph's nodes as the driver lists them), else the LAUNCH and COPY records flagged
 * captured between a capture's begin and its end. */
enum ct_graph_op {
    CT_GRAPH_CAPTURE_BEGIN = 1, /* cuStreamBeginCapture*: stream, mode */
    CT_GRAPH_CAPTURE_END = 2,   /* cuStreamEndCapture: stream, graph (0 if the capture failed) */
    CT_GRAPH_INSTANTIATE = 3,   /* cuGraphInstantiate*: graph, exec (0 if it failed) */
    CT_GRAPH_UPDATE = 4,        /* cuGraphExecUpdate: exec now runs graph (0 if it failed) */
    CT_GRAPH_LAUNCH = 5,        /* cuGraphLaunch: exec, stream (before the call's API record) */
    CT_GRAPH_EXEC_DESTROY = 6,  /* cuGraphExecDestroy: exec */
    CT_GRAPH_DESTROY = 7,       /* cuGraphDestroy: graph */
    CT_GRAPH_NODE = 8,          /* a kernel, memcpy or memset node of the graph the instantiation
                                 * or update of the same corr (next) makes the exec run */
    CT_GRAPH_NODE_SET = 9,      /* cuGraphExec*NodeSetParams: exec's node now runs this */
};
/* GRAPH node_type: CUgraphNodeType's values (the tracer passes either). */
enum ct_graph_node { CT_GNODE_KERNEL = 0, CT_GNODE_MEMCPY = 1, CT_GNODE_MEMSET = 2,
                     /* node set: a change the trace does not list (a child graph's, a node
                      * switched on or off, a conditional node's): what the exec runs is
                      * unknown from then on */
                     CT_GNODE_CHANGED = 100 };
/* GRAPH `nodes` of an instantiation or update whose graph holds work the trace cannot list (a
 * conditional node's bodies run as the device decides): what the exec runs is unknown */
#define CT_GRAPH_NODES_UNKNOWN UINT32_MAX
typedef struct {
    uint64_t corr;                 /* the call's correlation id */
    uint32_t op;                   /* enum ct_graph_op */
    uint32_t mode;                 /* capture begin: CUstreamCaptureMode */
    uint64_t graph, exec, stream;  /* handles (0: none or not applicable) */
    uint32_t result;               /* the call's CUresult */
    /* NODE and NODE_SET (minor 7): the node (its handle in the graph it was added to), its
     * enum ct_graph_node; a kernel's names (as LAUNCH's) and configuration; a memcpy's or
     * memset's bytes, direction and memory kinds (as COPY's) */
    uint64_t node;
    uint32_t node_type, function, symbol;
    uint32_t grid[3], block[3], shared_bytes;
    uint64_t bytes;
    uint32_t dir, src_kind, dst_kind;
    uint32_t nodes;                /* instantiate, update: the NODE records written before it */
} ct_rec_graph;
typedef struct {
    uint64_t start;                /* the push or start */
    uint32_t start_tid, end_tid;   /* OS threads that started and ended it */
    uint32_t domain, name, group;  /* string ids: domain (0 default), name as given, normalized */
    uint32_t category, color;      /* NVTX category (0 none), ARGB color (CT_NVTX_COLOR) */
    uint32_t payload_kind;         /* nvtxPayloadType_t (0 none) */
    uint64_t payload;              /* its bits (a double's or float's IEEE bits) */
    uint32_t kind;                 /* enum ct_nvtx_kind */
    uint64_t id;                   /* start/end: the nvtxRangeId_t returned; push/pop: 0 */
    uint32_t depth;                /* push/pop: the level in its thread and domain, 0 outermost */
    uint32_t flags;                /* enum ct_nvtx_flags */
} ct_rec_nvtx_range;
typedef struct {
    uint32_t tid;                  /* the OS thread that pushed or started it */
    uint32_t kind;                 /* enum ct_nvtx_kind */
    uint64_t id;                   /* as in ct_rec_nvtx_range */
    uint32_t domain, name, group, depth;
} ct_rec_nvtx_begin;
typedef struct {
    uint32_t domain, name, group;  /* as in ct_rec_nvtx_range */
    uint32_t category, color, payload_kind;
    uint64_t payload;
    uint32_t flags;                /* enum ct_nvtx_flags */
} ct_rec_nvtx_mark;
typedef struct {
    uint32_t how;                  /* enum ct_end_how */
    int32_t code;                  /* exit status (0-255; -1 unknown) or signal number */
    uint64_t records, lost;        /* totals over the process */
} ct_rec_end;

typedef struct {
    uint32_t pid, ppid;
    uint32_t root;                 /* the traced process, whose file this is */
    uint32_t relation;             /* enum ct_proc_relation */
    uint64_t start;                /* when it started, on the trace's clock (to the kernel's tick) */
    uint32_t comm, cmdline;        /* string ids: its name, its arguments joined by spaces */
} ct_rec_proc;
typedef struct {
    uint32_t pid;
    uint32_t tid;                  /* 0: the process as a whole; else one of its threads */
    uint64_t user_ns, sys_ns;      /* CPU time (process: all its threads, exited ones included) */
    uint64_t run_ns, wait_ns;      /* on a CPU, and runnable waiting for one (live threads) */
    uint32_t state;                /* the (main) thread's state letter: 'R', 'S', 'D', ... */
    uint32_t threads, running, blocked; /* threads, and those in R and in D at the reading */
    uint64_t rchar, wchar;         /* bytes through read/write-like calls (any file, pipe, socket) */
    uint64_t read_bytes, write_bytes; /* bytes the block layer fetched / will write for it */
    uint64_t majflt;               /* major page faults */
    uint32_t flags;                /* enum ct_proc_sample_flags */
    uint64_t children_ns;          /* CPU time of its children it has reaped (a process's) */
} ct_rec_proc_sample;
typedef struct {
    uint32_t cpus;                 /* online CPUs */
    uint64_t busy_ns, idle_ns, iowait_ns, steal_ns; /* summed over the CPUs */
    uint32_t running, blocked;     /* tasks runnable, and in uninterruptible I/O wait, machine-wide */
    uint64_t mem_total, mem_available;
    uint64_t swap_in, swap_out, majflt; /* pages swapped in and out, major faults (machine) */
    uint64_t psi_cpu_some_ns, psi_io_some_ns, psi_io_full_ns, psi_mem_some_ns, psi_mem_full_ns; /* stall ns */
    uint32_t flags;                /* enum ct_host_sample_flags */
    /* (since 1.9) the CPUs the traced process may use: its affinity mask (a batch job's
     * cpuset), and the tightest CPU bandwidth limit of its cgroups */
    uint32_t job_cpus;             /* online CPUs in its affinity mask (0 unknown) */
    uint64_t job_busy_ns, job_iowait_ns; /* as busy_ns and iowait_ns, over those CPUs */
    uint32_t quota_mcpu;           /* the limit in thousandths of a CPU (0: none found) */
    uint64_t cg_cpu_ns, throttled_ns; /* the limiting cgroup's CPU time and time throttled */
} ct_rec_host_sample;

/* Chunk metadata (FORMAT.md "Chunks"). The writer sets the "in" fields; ct_chunk_build fills
 * the rest; the reader decodes all of them (delivered as CT_REC_CHUNK). */
enum ct_chunk_flags {
    CT_CHUNK_RAW = 1,   /* payload stored uncompressed */
    CT_CHUNK_GPU = 2,   /* records come from the GPU-timing harvester */
    CT_CHUNK_FINAL = 4, /* written by the final flush */
};
typedef struct {
    /* in */
    uint32_t tid;       /* OS tid of the stream (thread buffer) the records come from */
    uint16_t flags;
    uint64_t lost;      /* records this stream lost since its previous chunk */
    uint64_t low_water; /* no record in this or any later chunk of the file has ts < low_water */
    uint64_t ts_base, corr_base; /* delta bases: from ct_enc_restart (ct_enc_chunk_info) */
    /* how long before its ts any record of the chunk begins: interval durations and the
     * spacing of the stream's CPU readings (ct_enc_chunk_info; 0 in files of 1.0) */
    uint64_t max_span;
    /* out (set by ct_writer_chunk / ct_chunk_build; read from the file by the reader) */
    uint64_t seq;       /* chunk sequence number in the file, from 0 */
    uint64_t t_min, t_max;
    uint32_t nrecords;
    uint32_t raw_size, payload_size;
    uint64_t offset;    /* reader only: file offset of the chunk header */
} ct_chunk_info;

typedef struct { uint32_t type; uint32_t len; const uint8_t *bytes; } ct_rec_unknown;

typedef struct {
    uint32_t type;      /* enum ct_rec_type */
    uint32_t tid;       /* stream tid of the chunk the record came from */
    uint32_t file;      /* index of the file among those opened */
    uint32_t pad_;
    uint64_t ts;        /* ordering time (interval records: the end) */
    union {
        ct_rec_string string;
        ct_rec_frame frame;
        ct_rec_stack stack;
        ct_rec_thread thread;
        ct_rec_device device;
        ct_rec_stream stream;
        ct_rec_api api;
        ct_rec_launch launch;
        ct_rec_copy copy;
        ct_rec_gpu gpu;
        ct_rec_mem mem;
        ct_rec_sync sync;
        ct_rec_cpu cpu;
        ct_rec_loss loss;
        ct_rec_end end;
        ct_rec_gemm gemm;
        ct_rec_shlib shlib;
        ct_rec_python python;
        ct_rec_capture capture;
        ct_rec_graph graph;
        ct_rec_proc proc;
        ct_rec_proc_sample proc_sample;
        ct_rec_host_sample host_sample;
        ct_rec_nvtx_range nvtx_range;
        ct_rec_nvtx_mark nvtx_mark;
        ct_rec_nvtx_begin nvtx_begin;
        ct_chunk_info chunk;
        ct_rec_unknown unknown;
    } u;
} ct_rec;

/* ---- encoder (hot path) ------------------------------------------------------------------ */

typedef struct {
    uint8_t *buf;
    size_t cap, len;
    uint64_t prev_ts, prev_corr;   /* delta state */
    uint64_t ts_base, corr_base;   /* delta state when the current chunk began */
    uint32_t nrecords;             /* records since the current chunk began */
    uint64_t max_span;             /* of the current chunk (ct_chunk_info.max_span) */
    uint64_t cpu_prev_ts;          /* the stream's last CPU reading (0: none yet) */
} ct_enc;

/* buf/cap: caller memory, kept until the encoder is dropped. Delta state starts at 0. */
void ct_enc_init(ct_enc *e, void *buf, size_t cap);
/* Starts a new chunk in the same buffer: len = 0, the bases become the current delta state. */
void ct_enc_restart(ct_enc *e);
/* Copies ts_base and corr_base into a chunk info (the other "in" fields are the caller's). */
void ct_enc_chunk_info(const ct_enc *e, ct_chunk_info *info);

/* Each appends one record and returns 0, or CT_E_FULL (buffer unchanged) or CT_E_INVAL.
 * ts is the record's ordering time; the interval records (api, gpu, sync) take it from their
 * end, which is the ts argument, with start in the struct. None allocates or blocks. */
int ct_enc_string(ct_enc *e, uint64_t ts, uint32_t id, const char *text, size_t len);
int ct_enc_frame(ct_enc *e, uint64_t ts, const ct_rec_frame *r);
int ct_enc_stack(ct_enc *e, uint64_t ts, uint32_t id, const uint32_t *frames, uint32_t n);
int ct_enc_thread(ct_enc *e, uint64_t ts, const ct_rec_thread *r);
int ct_enc_device(ct_enc *e, uint64_t ts, const ct_rec_device *r);
int ct_enc_stream(ct_enc *e, uint64_t ts, const ct_rec_stream *r);
int ct_enc_api(ct_enc *e, uint64_t end, const ct_rec_api *r);
int ct_enc_launch(ct_enc *e, uint64_t ts, const ct_rec_launch *r);
int ct_enc_copy(ct_enc *e, uint64_t ts, const ct_rec_copy *r);
int ct_enc_gpu(ct_enc *e, uint64_t end, const ct_rec_gpu *r);
int ct_enc_mem(ct_enc *e, uint64_t ts, const ct_rec_mem *r);
int ct_enc_sync(ct_enc *e, uint64_t end, const ct_rec_sync *r);
int ct_enc_cpu(ct_enc *e, uint64_t ts, const ct_rec_cpu *r);
int ct_enc_loss(ct_enc *e, uint64_t ts, const ct_rec_loss *r);
int ct_enc_end(ct_enc *e, uint64_t ts, const ct_rec_end *r);
int ct_enc_gemm(ct_enc *e, uint64_t ts, const ct_rec_gemm *r);
int ct_enc_shlib(ct_enc *e, uint64_t ts, const ct_rec_shlib *r);
int ct_enc_python(ct_enc *e, uint64_t ts, const ct_rec_python *r);
int ct_enc_capture(ct_enc *e, uint64_t ts, const ct_rec_capture *r);
int ct_enc_graph(ct_enc *e, uint64_t ts, const ct_rec_graph *r);
int ct_enc_nvtx_range(ct_enc *e, uint64_t end, const ct_rec_nvtx_range *r);
int ct_enc_nvtx_mark(ct_enc *e, uint64_t ts, const ct_rec_nvtx_mark *r);
int ct_enc_nvtx_begin(ct_enc *e, uint64_t ts, const ct_rec_nvtx_begin *r);
int ct_enc_proc(ct_enc *e, uint64_t ts, const ct_rec_proc *r);
int ct_enc_proc_sample(ct_enc *e, uint64_t ts, const ct_rec_proc_sample *r);
int ct_enc_host_sample(ct_enc *e, uint64_t ts, const ct_rec_host_sample *r);
/* Any record in decoded form (r->type, r->ts, r->u): dispatches to the functions above. */
int ct_enc_rec(ct_enc *e, const ct_rec *r);
/* A record of arbitrary type whose body after the timestamp is `body` (tests, extensions). */
int ct_enc_raw(ct_enc *e, uint32_t type, uint64_t ts, const void *body, size_t len);

/* ---- file header ------------------------------------------------------------------------- */

/* Job identity variables recorded from the environment (NULL-terminated list). */
extern const char *const ct_job_env_vars[];

typedef struct {
    uint16_t major, minor;         /* set by the reader; the writer writes CT_FORMAT_* */
    const char *hostname;
    uint32_t pid, ppid;
    const char *cmdline;           /* argv, each argument NUL-terminated, cmdline_len bytes */
    size_t cmdline_len;
    const char *exe;               /* /proc/self/exe target */
    const char *boot_id;           /* /proc/sys/kernel/random/boot_id: same id = same clock */
    uint64_t realtime_ns;          /* CLOCK_REALTIME ... */
    uint64_t monotonic_ns;         /* ... and CLOCK_MONOTONIC read together */
    uint64_t clock_uncertainty_ns; /* how far apart the two readings may be */
    const char *tracer_version;
    const char *tracer_options;    /* free text, e.g. "CUTRACE_STACKS=1 CUTRACE_GPU_TIMING=1" */
    size_t nenv;
    const char *const *env;        /* "NAME=value" for each ct_job_env_vars present */
    uint64_t frameworks;           /* CT_FW_* bits (format 1.1; 0 in older files): set by the
                                    * tracer, not by ct_header_collect */
} ct_header;

/* Frameworks whose CUDA libraries were loaded in the process when its header was written. */
#define CT_FW_TORCH 1u             /* PyTorch: libtorch_cuda.so mapped */

/* Fills h from the running process (hostname, pid, ppid, /proc/self/cmdline, exe, boot id, the
 * clock pair, job variables), storing strings in scratch (no allocation). version and options
 * are stored as given. Returns 0, or CT_E_INVAL if scratch is too small (8 KiB + cmdline is
 * always enough; the command line is cut, never the rest). */
int ct_header_collect(ct_header *h, const char *version, const char *options, char *scratch,
                      size_t scratch_len);
/* Encodes the file header; returns its size, or CT_E_FULL if cap is too small. */
ssize_t ct_header_encode(const ct_header *h, void *out, size_t cap);

/* ---- chunks ------------------------------------------------------------------------------ */

typedef struct ct_zctx ct_zctx;    /* a zstd compression context (allocates; not hot path) */
/* Level 6: on traced training loops 8% smaller than zstd's default 3 and still ~140 MB/s, far
 * above a tracer's few MB/s of records, so the background thread stays cheap. */
#define CT_ZLEVEL_DEFAULT 6
ct_zctx *ct_zctx_new(int level);   /* level: zstd level, 0 for CT_ZLEVEL_DEFAULT */
void ct_zctx_free(ct_zctx *z);

/* Bytes ct_chunk_build may write for raw_len bytes of records. */
size_t ct_chunk_bound(size_t raw_len);
/* Frames the records raw[0..raw_len) (one stream's, as produced by ct_enc) into out: the chunk
 * header then the payload, compressed with z or stored raw if z is NULL (CT_CHUNK_RAW is then
 * set in info->flags). Fills info's "out" fields except seq, which the caller sets before the
 * call. Checks the records' framing and returns CT_E_INVAL if it is broken. Returns the chunk's
 * size. */
ssize_t ct_chunk_build(ct_zctx *z, ct_chunk_info *info, const void *raw, size_t raw_len,
                       void *out, size_t out_cap);

/* ---- writer (file) ------------------------------------------------------------------------ */

typedef struct ct_writer ct_writer;
typedef struct {
    int zlevel;             /* 0: CT_ZLEVEL_DEFAULT */
    size_t max_chunk_raw;   /* largest encoder content per chunk; 0: 4 MiB */
} ct_writer_opts;
/* Writes the header to fd with one write(). The writer owns fd from then on and closes it,
 * also when this fails. */
int ct_writer_open_fd(ct_writer **w, int fd, const ct_header *h, const ct_writer_opts *o);
/* Creates path (O_EXCL) then as above. */
int ct_writer_open(ct_writer **w, const char *path, const ct_header *h, const ct_writer_opts *o);
/* Writes e's records as the next chunk (one write()) and restarts e. info->tid, flags, lost and
 * low_water are the caller's; the rest (max_span from e) is filled in. A chunk with no records is written only if
 * lost > 0. compress = 0 stores the payload raw (async-signal-safe). Returns 0 or CT_E_*. */
int ct_writer_chunk(ct_writer *w, ct_enc *e, ct_chunk_info *info, int compress);
uint64_t ct_writer_bytes(const ct_writer *w);   /* bytes written so far */
int ct_writer_close(ct_writer *w);              /* closes the fd; 0 or CT_E_IO */

/* ---- reader -------------------------------------------------------------------------------- */

typedef struct ct_reader ct_reader;
/* path: the file; msg: what is wrong and what was done about it. */
typedef void (*ct_warn_fn)(void *ctx, const char *path, const char *msg);

typedef struct {
    ct_warn_fn warn;          /* NULL: "cutrace: warning: PATH: MSG" on stderr */
    void *warn_ctx;
    int file_order;           /* 1: each file in turn, records as stored (not time order) */
    int chunk_records;        /* 1 (with file_order): a CT_REC_CHUNK before each chunk's records */
    size_t max_pending;       /* per-file bound on buffered chunk bytes; 0: 256 MiB. Beyond
                                 it records are delivered early and may be counted late; a
                                 chunk out of time order whose sort would need more (136
                                 bytes a record) is delivered in stored order. */
    int defer_spans;          /* 1: ct_reader_open reads the file headers only; a file's chunk
                                 headers are walked for ct_stats.max_span when it is first read
                                 (ct_reader_next: every file before the first record;
                                 ct_reader_next_in) or by ct_reader_spans_in, so that files read
                                 on worker threads are walked there, not one after another at
                                 open. An I/O error of the walk is then returned by that call. */
} ct_reader_opts;

typedef struct {
    uint64_t chunks;          /* chunks read */
    uint64_t records;         /* records delivered (not counting CT_REC_CHUNK) */
    uint64_t lost;            /* records the writer lost: chunk counts plus LOSS records */
    uint64_t chunks_missing;  /* gaps in chunk sequence numbers */
    uint64_t corrupt_chunks;  /* chunks skipped because damaged */
    uint64_t skipped_bytes;   /* bytes skipped (damage, resynchronization, torn tail) */
    uint64_t torn_tail;       /* bytes of an incomplete chunk at the end of the file */
    uint64_t unknown_records; /* records of unknown types */
    uint64_t bad_records;     /* malformed records skipped */
    uint64_t late_records;    /* delivered after a later-timed record (order not kept) */
    uint64_t peak_pending;    /* most bytes of decoded chunks held at once */
    uint64_t max_span;        /* longest span (ct_chunk_info.max_span) any chunk header of the
                                 file declares, known at open (with defer_spans: once the file's
                                 first record is read or ct_reader_spans_in returned 0): no
                                 record of the file begins more than this before its ts (0 for
                                 files of 1.0) */
    int complete;             /* an END record was read */
    uint64_t nvtx_unnamed;    /* NVTX records past the writer's bound of distinct messages
                                 (LOSS reason 5, not counted in lost): name 0, group kept */
} ct_stats;

/* Opens n files. On error returns CT_E_* and writes "PATH: what was expected, what was found"
 * into err. Files are merged on the time axis of the first file's CLOCK_MONOTONIC: a file
 * from another boot (boot_id) is shifted by the difference of the header clock pairs. */
int ct_reader_open(ct_reader **r, const char *const *paths, size_t n,
                   const ct_reader_opts *opts, char *err, size_t errlen);
/* Next record: 1, 0 at the end, or CT_E_IO (message via ct_reader_error). Pointers in *rec
 * stay valid until the next call; strings, frames and stacks until ct_reader_close. */
int ct_reader_next(ct_reader *r, ct_rec *rec);
const char *ct_reader_error(const ct_reader *r);
/* One file's records on their own, in its time order (times on the merged axis, as
 * ct_reader_next gives them): 1, 0 at the file's end, or CT_E_* (message via
 * ct_reader_error_in). Distinct files of one reader may be read at once from different threads
 * (each gets its own decompression context and error text; nothing the files share is
 * written); a reader is read either this way or by ct_reader_next, never both. At its end a
 * file's decoding memory (chunks, read window, descriptor, decompression context) is freed, so
 * reading many files holds the decoding of those being read, not of all; its header,
 * statistics, strings, frames and stacks stay until ct_reader_close. Warnings go to the
 * reader's warn callback, which must then be safe to call from several threads (the default
 * writes each warning with one call to stderr). */
int ct_reader_next_in(ct_reader *r, uint32_t file, ct_rec *rec);
/* Makes the file's ct_stats.max_span known before its first record (ct_reader_opts.defer_spans:
 * walks its chunk headers if not yet done; else nothing to do): 0, or CT_E_* (message via
 * ct_reader_error_in). For a reader read file by file, as ct_reader_next_in, with which it may
 * run on another thread for another file. */
int ct_reader_spans_in(ct_reader *r, uint32_t file);
const char *ct_reader_error_in(const ct_reader *r, uint32_t file);
size_t ct_reader_nfiles(const ct_reader *r);
const char *ct_reader_path(const ct_reader *r, uint32_t file);
const ct_header *ct_reader_header(const ct_reader *r, uint32_t file);
/* Nanoseconds added to the file's times to place them on the merged axis (0 for file 0). */
int64_t ct_reader_offset(const ct_reader *r, uint32_t file);
const ct_stats *ct_reader_stats(const ct_reader *r, uint32_t file);
/* The text of string id (NUL-terminated), or NULL if its definition was not (yet) read. */
const char *ct_reader_string(const ct_reader *r, uint32_t file, uint32_t id);
/* Same, but never NULL: "<string ID>" in tmp when undefined, "" for id 0. */
#define CT_STRTMP 32
const char *ct_reader_str(const ct_reader *r, uint32_t file, uint32_t id, char tmp[CT_STRTMP]);
/* 0 and *out, or CT_E_INVAL if the frame / stack is undefined. */
int ct_reader_frame(const ct_reader *r, uint32_t file, uint32_t id, ct_rec_frame *out);
int ct_reader_stack(const ct_reader *r, uint32_t file, uint32_t id, const uint32_t **frames,
                    uint32_t *n);
void ct_reader_close(ct_reader *r);

#ifdef __cplusplus
}
#endif
#endif
