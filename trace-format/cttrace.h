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

#include "ct_records.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions and limits ------------------------------------------------------------------ */

#define CT_FORMAT_MAJOR 1
#define CT_FORMAT_MINOR 11

#define CT_FILE_MAGIC "CUTRACE\0"      /* 8 bytes at offset 0 */
#define CT_FILE_MAGIC_LEN 8
#define CT_CHUNK_MAGIC 0x4b435443u     /* "CTCK" little-endian */
#define CT_CHUNK_HEADER_SIZE 96u       /* chunk header size this library writes (1.1) */
#define CT_CHUNK_HEADER_MIN 88u        /* smallest a reader accepts (1.0, without max_span) */
#define CT_CHUNK_RAW_MAX (64u << 20)   /* largest decoded chunk payload a reader accepts */
#define CT_HEADER_BODY_MAX (1u << 20)  /* largest file header field area a reader accepts */
#define CT_STRING_MAX 65535u           /* longest string a STRING record may carry */
/* A longer text is stored cut (FORMAT.md 4.1): its first bytes, ending on a UTF-8 character
 * boundary, then this marker with the text's length in bytes, in at most CT_STRING_MAX bytes. */
#define CT_STRING_CUT_HEAD "...[truncated, "
#define CT_STRING_CUT_TAIL " bytes]"
#define CT_STRING_CUT_FMT CT_STRING_CUT_HEAD "%zu" CT_STRING_CUT_TAIL
#define CT_STRING_CUT_MAX 48u          /* room for the marker and its NUL */
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
    CT_E_INVAL = -8,     /* an argument is out of range (e.g. a stack over CT_STACK_MAX frames) */
    CT_E_ZSTD = -9,      /* compression failed */
};
const char *ct_strerror(int code);

/* ---- record types (wire values; FORMAT.md "Records") -------------------------------------- */

/* CT_REC_STRING = 1 ... from the table of record types (ct_records.h), which is in number order:
 * CT_REC_TYPE_LIMIT is the first number this version does not define. Reserved numbers (for
 * later minor versions, or retired) are read as unknown records. */
#define CT__REC_ENUM(R, TYPE, member, number, name, form, FIELDS) CT_REC_##TYPE = number,
enum ct_rec_type {
    CT__REC_TABLE(CT__REC_ENUM, ~)
    CT_REC_TYPE_LIMIT,
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
/* LOSS why of reason CT_LOSS_WRITE: the program closed the writer's file descriptor (or made its
 * number another file) and no descriptor could be had to reopen the file with; or (minor 11)
 * the write failed, and the trace stops there (also END CT_END_STOPPED's code): the file system
 * was full (ENOSPC), the user's disk quota was reached (EDQUOT), the file reached the
 * process's file size limit (RLIMIT_FSIZE, EFBIG), another error. */
enum {
    CT_WRITE_LOST_FD = 1, CT_WRITE_NO_SPACE = 2, CT_WRITE_QUOTA = 3, CT_WRITE_FILE_LIMIT = 4,
    CT_WRITE_ERROR = 5,
};
/* END how (FORMAT.md 4.4). CT_END_EXIT_NOW (format 1.1): _exit/_Exit, no exit handler ran.
 * CT_END_STOPPED (format 1.11): the trace stopped, the process did not end (code: the LOSS why
 * of CT_LOSS_WRITE that says why). */
enum ct_shlib_kind { /* which library of the CUDA stack a SHLIB record names (0 other) */
    CT_SHLIB_CUDART = 1, CT_SHLIB_CUDA = 2, CT_SHLIB_CUBLAS = 3, CT_SHLIB_CUBLASLT = 4,
    CT_SHLIB_CUDNN = 5, /* any libcudnn*.so* (written since minor 11; earlier readers: other) */
};
enum ct_end_how {
    CT_END_EXIT = 1, CT_END_SIGNAL = 2, CT_END_ABORT = 3, CT_END_DETACH = 4, CT_END_EXIT_NOW = 5,
    CT_END_STOPPED = 6, /* minor 11: a write failed, the process went on untraced; code: why */
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
/* THREAD_SAMPLE flags (minor 10, FORMAT.md 4.12): what its stack holds, and what could not be
 * read. */
enum ct_thread_sample_flags {
    CT_TS_PYTHON = 1,      /* stack: the thread's Python frames at ts, innermost first */
    CT_TS_NATIVE_LAST = 2, /* stack: the native stack of the thread's last CUDA call that
                            * captured one (no Python frames on the thread) */
    CT_TS_READ_FAILED = 4, /* its Python frames could not be read whole (changed under the
                            * reader, or unreadable): stack 0 */
    CT_TS_NO_STATE = 8,    /* state unknown (its /proc stat not readable) */
    CT_TS_PERF = 16,       /* the thread is sampled with perf_event too: its state came from
                            * its switches on and off a CPU, its native stacks (bit 5) from it */
    CT_TS_NATIVE_PERF = 32, /* stack: native frames of a perf_event user-stack sample of the
                             * thread taken since its previous sample (no Python frames on it) */
    CT_TS_WORKER = 64,     /* the sampled thread is a loader worker's (a child process forked
                            * without exec, running the traced process's Python; tid its pid) */
};
enum ct_thread_flags { CT_THREAD_TRACER = 1, CT_THREAD_EXITED = 2 };
enum ct_stream_op { CT_STREAM_CREATE = 0, CT_STREAM_DESTROY = 1 };
enum ct_link_kind { CT_LINK_UNKNOWN = 0, CT_LINK_PCIE = 1, CT_LINK_C2C = 2, CT_LINK_INTEGRATED = 3 };

/* ---- records (decoded form; also the encoders' input) ------------------------------------- */
/* ct_rec_frame, ct_rec_thread, ...: one struct per fixed-layout record type, its fields in wire
 * order, generated from the field lists of ct_records.h (which say what each holds; units in
 * FORMAT.md). STRING and STACK are written out by hand. */
#define CT__REC_STRUCT(TYPE, member, FIELDS)                                                \
    typedef struct { FIELDS(CT__DECL_FIELD) } ct_rec_##member;
CT_RECORDS(CT__REC_STRUCT)

typedef struct { uint32_t id; uint32_t len; const char *text; } ct_rec_string;
enum ct_frame_kind { CT_FRAME_NATIVE = 0, CT_FRAME_PYTHON = 1 };
typedef struct { uint32_t id; uint32_t nframes; const uint32_t *frames; } ct_rec_stack;
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

#define CT__REC_MEMBER(TYPE, member, ...) ct_rec_##member member;
typedef struct {
    uint32_t type;      /* enum ct_rec_type */
    uint32_t tid;       /* stream tid of the chunk the record came from */
    uint32_t file;      /* index of the file among those opened */
    uint32_t pad_;
    uint64_t ts;        /* ordering time (interval records: the end) */
    union {
        CT_REC_LIST(CT__REC_MEMBER)
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
 * end, which is the ts argument, with start in the struct. None allocates or blocks. A text
 * longer than CT_STRING_MAX is stored cut, as ct_string_cut says. */
int ct_enc_string(ct_enc *e, uint64_t ts, uint32_t id, const char *text, size_t len);
/* How text[0..len) is cut to at most max bytes (at least CT_STRING_CUT_MAX), as a STRING record
 * stores it with max CT_STRING_MAX: the bytes of it kept, and in mark the marker that follows
 * them (NUL-terminated; "" when the text fits whole, len <= max). A text that already ends with
 * a marker keeps the length that one names. */
size_t ct_string_cut(const char *text, size_t len, size_t max, char mark[CT_STRING_CUT_MAX]);
/* The marker of a text of full bytes cut (NUL-terminated in mark); its length. For a producer
 * that cuts a text it never holds whole (a wide one converted as it goes). Async-signal-safe. */
size_t ct_string_cut_mark(uint64_t full, char mark[CT_STRING_CUT_MAX]);
/* Where the marker of a cut text (ct_string_cut's) starts in text[0..len), the original length
 * in *full; len (and *full untouched) if the text does not end with one. */
size_t ct_string_cut_at(const char *text, size_t len, uint64_t *full);
int ct_enc_stack(ct_enc *e, uint64_t ts, uint32_t id, const uint32_t *frames, uint32_t n);
/* ct_enc_frame, ct_enc_thread, ...: one per fixed-layout record type (ct_records.h). */
#define CT__ENC_PROTO(TYPE, member, FIELDS)                                                 \
    int ct_enc_##member(ct_enc *e, uint64_t ts, const ct_rec_##member *r);
CT_RECORDS(CT__ENC_PROTO)
/* A fixed-layout record of the given type whose struct (ct_rec_<member>) is at body: dispatches
 * to the functions above; CT_E_INVAL for another type. */
int ct_enc_fixed(ct_enc *e, uint32_t type, uint64_t ts, const void *body);
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
    /* Called just before each chunk's write with the descriptor the writer holds: returns the
     * descriptor to write through (the same, or one that replaces it, which the writer owns from
     * then on; the old one is left as it is), or -1 to write nothing (the chunk fails with
     * CT_E_IO). Called again (twice at most) when the write fails with EBADF: the descriptor
     * was closed since. NULL: the descriptor is used as it is. For a writer whose process may
     * close or reuse descriptors it does not know of. */
    int (*fd_check)(void *arg, int fd);
    void *fd_check_arg;
    /* Bytes kept for a last chunk (0: none), so that a full disk still lets the writer say why
     * the trace stops there (END CT_END_STOPPED): kept allocated past the file's end
     * (fallocate FALLOC_FL_KEEP_SIZE, where the file system can) and under the process's
     * RLIMIT_FSIZE. A chunk that would take them fails with CT_E_IO, errno ENOSPC, EDQUOT or
     * EFBIG, and writes nothing; the next chunk may then use them. ct_writer_close gives back
     * what is held past the end; a process killed leaves up to 17 reserves allocated there. */
    size_t reserve;
} ct_writer_opts;
/* Writes the header to fd with one write(). The writer owns fd from then on and closes it,
 * also when this fails. */
int ct_writer_open_fd(ct_writer **w, int fd, const ct_header *h, const ct_writer_opts *o);
/* Creates path (O_EXCL) then as above. */
int ct_writer_open(ct_writer **w, const char *path, const ct_header *h, const ct_writer_opts *o);
/* Writes e's records as the next chunk (one write()) and restarts e. info->tid, flags, lost and
 * low_water are the caller's; the rest (max_span from e) is filled in. A chunk with no records is written only if
 * lost > 0. compress = 0 stores the payload raw (async-signal-safe). Returns 0 or CT_E_*; a
 * write that failed part-way is cut back (the file ends with its last whole chunk). */
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
    uint64_t lost_full;       /* of them, for buffers full (chunk counts and LOSS reason 1): the
                                 writer did not keep up with the threads' records */
    uint64_t lost_fd;         /* of them, while the program had closed the trace's descriptor and
                                 none was left to reopen it with (LOSS reason 3, why 1) */
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
