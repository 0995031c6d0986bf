#define _GNU_SOURCE
#include "ctp_python.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ctp_clock.h"
#include "ctp_emit.h"
#include "ctp_maps.h"
#include "ctp_pylayout.h"

/* Looking the interpreter up (dlsym) takes long enough that a fork may come in the middle:
 * a pthread_once would leave the child waiting for it forever. The first capture looks; others
 * meanwhile go without Python frames; a child forked meanwhile looks again. */
enum { CTP_PY_UNKNOWN, CTP_PY_LOOKING, CTP_PY_KNOWN };
static _Atomic int ctp_py_state;
static const ctp_py_layout *ctp_py;                  /* NULL: no Python we can read */
static void *(*ctp_py_tstate)(void);                 /* PyGILState_GetThisThreadState */
static int (*ctp_py_finalizing)(void);               /* Py_IsFinalizing (3.13), _Py_IsFinalizing */
/* Py_IsInitialized: before the interpreter is up (a program that embeds Python calls CUDA
 * first) and once finalization has begun, the thread-state key is not created, or deleted:
 * PyGILState_GetThisThreadState would read a key that is another library's. */
static int (*ctp_py_initialized)(void);
/* What the PYTHON record says: PY_VERSION_HEX, and the functions that read the interpreter's path
 * configuration (a global it computed at start-up; no GIL, no allocation). */
static uint32_t ctp_py_version;
static const wchar_t *(*ctp_py_program)(void), *(*ctp_py_prefix)(void), *(*ctp_py_exec_prefix)(void),
    *(*ctp_py_search_path)(void);
static _Atomic int ctp_py_described; /* in this trace file */
/* Up to 3.11 the GIL-state key is bound to a thread's main-interpreter state only: while a
 * sub-interpreter exists, the state it gives may not be the one running (Head() != Main()). */
static void *(*ctp_py_interp_head)(void), *(*ctp_py_interp_main)(void);
static uintptr_t ctp_py_eval_lo, ctp_py_eval_hi;     /* _PyEval_EvalFrameDefault's code */
static uint64_t ctp_py_code_type;                    /* &PyCode_Type: what a code object is */
/* The process reads itself by its pid, kept here (and renewed in a forked child) so that a
 * capture makes no getpid call. */
static pid_t ctp_py_pid;

void ctp_python_fork_child(void)
{
    ctp_py_pid = getpid();
    int looking = CTP_PY_LOOKING;
    atomic_compare_exchange_strong(&ctp_py_state, &looking, CTP_PY_UNKNOWN);
}

static void ctp_py_lookup(void)
{
    void *get = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    if (!get)
        return;
    unsigned long hex = ctp_py_version_hex();
    ctp_py = ctp_py_layout_of(hex);
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    void *eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    void *up = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    void *fin = dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
    fin = fin ? fin : dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    void *head = dlsym(RTLD_DEFAULT, "PyInterpreterState_Head");
    void *main_interp = dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
    void *program = dlsym(RTLD_DEFAULT, "Py_GetProgramFullPath");
    void *prefix = dlsym(RTLD_DEFAULT, "Py_GetPrefix");
    void *exec_prefix = dlsym(RTLD_DEFAULT, "Py_GetExecPrefix");
    void *search_path = dlsym(RTLD_DEFAULT, "Py_GetPath");
    if (ctp_py && eval && up && fin && head && main_interp && program && prefix && exec_prefix &&
        search_path && dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
        ctp_py_finalizing = (int (*)(void))fin;
        ctp_py_initialized = (int (*)(void))up;
        ctp_py_version = (uint32_t)hex;
        ctp_py_program = (const wchar_t *(*)(void))program;
        ctp_py_prefix = (const wchar_t *(*)(void))prefix;
        ctp_py_exec_prefix = (const wchar_t *(*)(void))exec_prefix;
        ctp_py_search_path = (const wchar_t *(*)(void))search_path;
        if (ctp_py->hex_hi <= 0x030c0000) {
            ctp_py_interp_head = (void *(*)(void))head;
            ctp_py_interp_main = (void *(*)(void))main_interp;
        }
        ctp_py_code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
        ctp_py_eval_lo = (uintptr_t)eval;
        ctp_py_eval_hi = (uintptr_t)eval + sym->st_size;
        ctp_py_tstate = (void *(*)(void))get;
        ctp_py_pid = getpid();
        return;
    }
    ctp_py = NULL;
    if (hex)
        fprintf(stderr, "cutrace: Python %lu.%lu runs in this process but cutrace cannot read its "
                        "frames (known: 3.8 to 3.13); its call sites stay native\n", hex >> 24, (hex >> 16) & 0xff);
    else
        fprintf(stderr, "cutrace: a Python whose version cannot be told (neither Py_Version nor "
                        "Py_GetVersion) runs in this process; cutrace does not read its frames; "
                        "its call sites stay native\n");
}

/* Where a walk reads the interpreter's memory: directly, or through process_vm_readv, where
 * an address that is no longer mapped is an error instead of a fault (see the header). */
typedef struct {
    pid_t pid;
    int direct;
} ctp_py_mem;

static int ctp_py_read(const ctp_py_mem *m, uint64_t addr, void *buf, size_t len)
{
    if (!addr)
        return -1;
    if (m->direct) {
        memcpy(buf, (const void *)(uintptr_t)addr, len);
        return 0;
    }
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(m->pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static uint64_t ctp_py_u64(const unsigned char *b, unsigned at)
{
    uint64_t v;
    memcpy(&v, b + at, sizeof v);
    return v;
}

static uint32_t ctp_py_u32(const unsigned char *b, unsigned at)
{
    uint32_t v;
    memcpy(&v, b + at, sizeof v);
    return v;
}

/* The key's fields: the code object (16-byte aligned, below 2^47) and the instruction index. */
#define CTP_PY_LASTI_BITS 20
#define CTP_PY_CODE_BITS 43

/* Whether the interpreter has been looked up (by this call if no one had). */
static int ctp_py_known(void)
{
    int state = atomic_load_explicit(&ctp_py_state, memory_order_acquire);
    if (state == CTP_PY_UNKNOWN &&
        atomic_compare_exchange_strong(&ctp_py_state, &state, CTP_PY_LOOKING)) {
        ctp_py_lookup();
        atomic_store_explicit(&ctp_py_state, CTP_PY_KNOWN, memory_order_release);
        return 1;
    }
    return state == CTP_PY_KNOWN;
}

/* A 64-bit mix (splitmix64's finalizer): identity keys of distinct frames differ. */
static uint64_t ctp_py_mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A frame's code object and instruction index, from its bytes fr (L->fr_size); -1 if they
 * cannot be those of a frame that runs. f_lasti (3.8-3.10) is -1 before the frame's first
 * instruction: its definition's line. A frame whose first instructions have not run
 * (_PyFrame_IsIncomplete, 3.11+) cannot be calling out; it is not told apart here, which would
 * cost a read per frame: its line is then its definition's. */
static int ctp_py_frame_code(const unsigned char *fr, uint64_t *code, int64_t *lasti)
{
    const ctp_py_layout *L = ctp_py;
    *code = ctp_py_u64(fr, L->fr_code);
    if (L->one_per_loop) {
        *lasti = (int64_t)(int32_t)ctp_py_u32(fr, L->fr_lasti) * L->lasti_bytes;
        *lasti = *lasti < 0 ? 0 : *lasti;
    } else {
        *lasti = ((int64_t)ctp_py_u64(fr, L->fr_instr) - (int64_t)(*code + L->co_code)) / 2;
    }
    return *lasti < 0 || *lasti >= (1 << CTP_PY_LASTI_BITS) || (*code & 15) ||
                   *code >> (CTP_PY_CODE_BITS + 4) ? -1 : 0;
}

/* A frame's identity key and frame key (see ctp_python_splice), from its code's bytes co read
 * from co_firstlineno up to the end of co_linetable. The code object's address alone would name
 * a later code object allocated at the same place as this one: its file, name, line table and
 * first line go in too. */
static void ctp_py_keys(uint64_t code, int64_t lasti, const unsigned char *co, uint64_t *key,
                        uint64_t *at)
{
    const ctp_py_layout *L = ctp_py;
    unsigned lo = L->co_firstlineno;
    uint64_t id = ctp_py_mix(code ^ (uint64_t)lasti << 47 ^ ctp_py_u32(co, 0));
    id = ctp_py_mix(id ^ ctp_py_u64(co, L->co_filename - lo));
    id = ctp_py_mix(id ^ ctp_py_u64(co, L->co_qualname - lo));
    id = ctp_py_mix(id ^ ctp_py_u64(co, L->co_linetable - lo));
    *at = CTP_PY_KEY | (uint64_t)lasti << CTP_PY_CODE_BITS | code >> 4;
    *key = CTP_PY_KEY | id;
}

/* One walk of the thread's frames (see ctp_python_splice), reading through m; -1 if the thread
 * state or its current frame cannot be read. */
static int ctp_py_walk(const ctp_py_mem *m, const uint64_t *ips, int n, int cap, uint64_t *out,
                       uint64_t *code_at)
{
    const ctp_py_layout *L = ctp_py;
    unsigned char buf[256];
    void *ts = ctp_py_tstate();
    if (!ts || ctp_py_read(m, (uintptr_t)ts + L->ts_frame, buf, 8) != 0)
        return -1;
    uint64_t cur = ctp_py_u64(buf, 0);
    /* 3.11, 3.12: the state points at a _PyCFrame (a direct read must not follow a null one) */
    if (L->cframe_current != CTP_PY_NONE) {
        if (!cur || ctp_py_read(m, cur + L->cframe_current, buf, 8) != 0)
            return -1;
        cur = ctp_py_u64(buf, 0);
    }
    int kept = 0, py = 0;
    for (int i = 0; i < n && kept < cap; i++) {
        if (ips[i] < ctp_py_eval_lo || ips[i] >= ctp_py_eval_hi || !cur) {
            code_at[kept] = 0;
            out[kept++] = ips[i];
            continue;
        }
        /* This evaluation loop runs the frames from cur to the first entry frame (3.11) or to
         * the shim frame it pushed on entry (3.12+). */
        int entry = 0, any = 0;
        while (cur && !entry && py < CTP_PY_MAX && kept < cap) {
            if (ctp_py_read(m, cur, buf, L->fr_size) != 0)
                return -1;
            cur = ctp_py_u64(buf, L->fr_previous);
            py++;
            if (L->one_per_loop)
                entry = 1;
            else if (buf[L->fr_owner] == L->owner_cstack)
                break;
            else
                entry = L->fr_is_entry != CTP_PY_NONE && buf[L->fr_is_entry] != 0;
            uint64_t code;
            int64_t lasti;
            if (ctp_py_frame_code(buf, &code, &lasti) != 0)
                continue;
            if (ctp_py_read(m, code + L->co_firstlineno, buf, L->co_linetable + 8 - L->co_firstlineno) != 0)
                return -1;
            ctp_py_keys(code, lasti, buf, &out[kept], &code_at[kept]);
            kept++;
            any = 1;
        }
        if (!any) {
            code_at[kept] = 0;
            out[kept++] = ips[i];
        }
    }
    return kept;
}

int ctp_python_splice(uint64_t *ips, int n, int cap, uint64_t *code_at)
{
    if (!ctp_opt.python_frames || !ctp_py_known() || !ctp_py)
        return n;
    /* not up, or going down; or before 3.12 with a sub-interpreter, where the thread state found
     * may not be the running one */
    if (!ctp_py_initialized() ||
        (ctp_py_interp_head && ctp_py_interp_head() != ctp_py_interp_main()))
        return n;
    int saved = errno;
    uint64_t out[CTP_PY_MAX + 64];
    if (cap > (int)(sizeof out / sizeof out[0]))
        cap = (int)(sizeof out / sizeof out[0]);
    /* Read directly unless finalization has begun; if it began during the walk, what the walk
     * read of a thread state freed meanwhile may be garbage: read again, safely. */
    ctp_py_mem m = {ctp_py_pid, !ctp_py_finalizing()};
    int kept = ctp_py_walk(&m, ips, n, cap, out, code_at);
    if (m.direct && ctp_py_finalizing()) {
        m.direct = 0;
        kept = ctp_py_walk(&m, ips, n, cap, out, code_at);
    }
    errno = saved;
    if (kept < 0)
        return n;
    /* the state the thread sampler reads (a thread's state may change: C threads that enter
     * Python now and then get a new one each time) */
    ctp_thread *th = ctp_tls;
    if (th && th != &ctp_untraced)
        atomic_store_explicit(&th->py_tstate, (uintptr_t)ctp_py_tstate(), memory_order_relaxed);
    memcpy(ips, out, (size_t)kept * sizeof *ips);
    return kept;
}

uint64_t ctp_python_tstate(void)
{
    if (!ctp_opt.python_frames || !ctp_py_known() || !ctp_py || !ctp_py_initialized() ||
        ctp_py_finalizing())
        return 0;
    return (uintptr_t)ctp_py_tstate();
}

/* Samples of a thread that use the code objects an earlier one read, before all are read again. */
#define CTP_PY_RECHECK 8

/* The sampler's buffers: the part of a thread's data stack (3.11+) read whole, where its frames
 * lie one after the other (a thread read on its own), and the code objects of its frames that
 * its hint did not have. */
#define CTP_PY_STACK_BYTES 65536
static unsigned char ctp_py_stack[CTP_PY_STACK_BYTES];
static unsigned char ctp_py_codes[CTP_PY_MAX][CTP_PY_CODE_BYTES];

/* One process_vm_readv of up to n pieces (remote address, length, local buffer); the number of
 * leading pieces read whole (the call stops at the first address that is not mapped). */
typedef struct {
    struct iovec local[2 * CTP_PY_MAX + 3], remote[2 * CTP_PY_MAX + 3];
    unsigned n;
} ctp_py_batch;

static void ctp_py_add(ctp_py_batch *b, uint64_t addr, void *buf, size_t len)
{
    b->local[b->n] = (struct iovec){buf, len};
    b->remote[b->n++] = (struct iovec){(void *)(uintptr_t)addr, len};
}

/* The process a sample reads: this one, or a loader worker (ctp_python_sample's pid). */
static pid_t ctp_py_target;

static unsigned ctp_py_readv(ctp_py_batch *b)
{
    ssize_t got = b->n ? process_vm_readv(ctp_py_target, b->local, b->n, b->remote, b->n, 0) : 0;
    unsigned whole = 0;
    for (size_t left = got > 0 ? (size_t)got : 0; whole < b->n && left >= b->local[whole].iov_len; whole++)
        left -= b->local[whole].iov_len;
    return whole;
}

/* One thread's read of its state (ctp_py_state_add, _parse): its buffers and where its pieces
 * are in the batch that reads them. */
typedef struct ctp_py_slot {
    unsigned char tsb[512], tsb2[512], cfb[8], cfb2[8];
    unsigned char *stack;         /* where its data stack is copied */
    unsigned first, at_stack, at_again, at_codes, end;
} ctp_py_slot;

/* Adds to b the pieces of the thread's state read (below), with the hint's code objects (into
 * its bytes) when they are due to be read again; -1 if b has no room (nothing added). */
static int ctp_py_state_add(ctp_py_batch *b, ctp_py_slot *s, uint64_t tstate, ctp_py_hint *hint)
{
    const ctp_py_layout *L = ctp_py;
    int three = L->ts_chunk != CTP_PY_NONE, viacf = L->cframe_current != CTP_PY_NONE;
    unsigned tlen = three ? L->ts_chunk + 24 - L->ts_frame : 8;
    size_t clen = L->co_linetable + 8 - 8; /* from ob_type to the end of co_linetable */
    unsigned nc = hint->age >= CTP_PY_RECHECK ? hint->ncodes : 0;
    if (tlen > sizeof s->tsb || b->n + 5 + nc > sizeof b->local / sizeof b->local[0])
        return -1;
    s->first = b->n;
    ctp_py_add(b, tstate + L->ts_frame, s->tsb, tlen);
    if (viacf && hint->cframe)
        ctp_py_add(b, hint->cframe + L->cframe_current, s->cfb, 8);
    s->at_stack = b->n;
    if (three && hint->chunk)
        ctp_py_add(b, hint->chunk, s->stack, hint->end - hint->chunk);
    /* again after the stack: the state's current frame and top (one piece), the _PyCFrame's */
    s->at_again = b->n;
    ctp_py_add(b, tstate + L->ts_frame, s->tsb2, tlen);
    if (viacf && hint->cframe)
        ctp_py_add(b, hint->cframe + L->cframe_current, s->cfb2, 8);
    s->at_codes = b->n;
    for (uint32_t i = 0; i < nc; i++)
        ctp_py_add(b, hint->codes[i] + 8, hint->bytes[i], clen);
    s->end = b->n;
    return 0;
}

/* The state's current frame (after its _PyCFrame, 3.11 and 3.12) and data stack (3.11+), read in
 * one call (whole: the leading pieces of the call read whole), bracketed: the current frame and
 * the stack's top read again after the stack, in the same call; unchanged, the stack was copied
 * while the thread stayed where it was, and its frames hold together. Read where the previous
 * sample found them (hint): 1 when the thread is still there (updated otherwise: then the caller
 * reads again). Sets *cur, *lo and *hi (the data stack copied into s->stack; 0, 0 before 3.11 or
 * when too large); *codes_ok: leading hint codes read whole. */
static int ctp_py_state_parse(const ctp_py_slot *s, unsigned whole, ctp_py_hint *hint, uint64_t *cur,
                              uint64_t *lo, uint64_t *hi, unsigned *codes_ok)
{
    const ctp_py_layout *L = ctp_py;
    int three = L->ts_chunk != CTP_PY_NONE, viacf = L->cframe_current != CTP_PY_NONE;
    whole = whole < s->first ? s->first : whole > s->end ? s->end : whole;
    *codes_ok = whole > s->at_codes ? whole - s->at_codes : 0;
    if (whole == s->first)
        return -1; /* not even the state */
    /* A piece the hint named that is gone (a data stack chunk freed as the stack shrank: the
     * read stops there) is learnt again from this read of the state, as a move is. */
    if (whole < s->at_codes)
        hint->cframe = hint->chunk = hint->end = 0;
    int learnt = 0;
    uint64_t first = ctp_py_u64(s->tsb, 0), top = 0, chunk = 0;
    if (viacf && first && first != hint->cframe) {
        hint->cframe = first;
        learnt = 1;
    }
    if (three) {
        chunk = ctp_py_u64(s->tsb, L->ts_chunk - L->ts_frame);
        uint64_t limit = ctp_py_u64(s->tsb, L->ts_chunk + 16 - L->ts_frame);
        top = ctp_py_u64(s->tsb, L->ts_chunk + 8 - L->ts_frame);
        if (!chunk || top <= chunk || top - chunk > CTP_PY_STACK_BYTES) {
            chunk = 0;
        } else if (chunk != hint->chunk || top > hint->end || s->at_stack == s->at_again) {
            /* next time: this chunk, up to a little above this top (never past its limit) */
            hint->chunk = chunk;
            hint->end = top + 512 < limit && top + 512 - chunk <= CTP_PY_STACK_BYTES ? top + 512 : top;
            learnt = 1;
        }
    }
    if (learnt || whole < s->at_codes)
        return 0;
    *cur = first;
    *lo = *hi = 0;
    int moved = ctp_py_u64(s->tsb2, 0) != first;
    if (viacf && first) {
        *cur = ctp_py_u64(s->cfb, 0);
        moved |= ctp_py_u64(s->cfb2, 0) != *cur;
    }
    if (three) {
        moved |= ctp_py_u64(s->tsb2, L->ts_chunk + 8 - L->ts_frame) != top;
        if (chunk) {
            *lo = chunk;
            *hi = top;
        }
    }
    return moved ? 0 : 1;
}

/* The state read in a call of its own, the data stack into ctp_py_stack. */
static int ctp_py_state_read(uint64_t tstate, ctp_py_hint *hint, uint64_t *cur, uint64_t *lo,
                             uint64_t *hi, unsigned *codes_ok)
{
    ctp_py_slot s;
    ctp_py_batch b = {.n = 0};
    s.stack = ctp_py_stack;
    if (ctp_py_state_add(&b, &s, tstate, hint) != 0)
        return -1;
    return ctp_py_state_parse(&s, ctp_py_readv(&b), hint, cur, lo, hi, codes_ok);
}

/* One try of ctp_python_sample; pre (if not NULL): the state as read by a batch of several
 * threads' (ctp_python_sample_many), whole its leading pieces read whole, for the first try. */
static int ctp_py_sample1(uint64_t tstate, ctp_py_hint *hint, uint64_t *keys, uint64_t *code_at, int cap,
                          const ctp_py_slot *pre, unsigned whole)
{
    const ctp_py_layout *L = ctp_py;
    const ctp_py_mem m = {ctp_py_target, 0};
    int saved = errno, n = -1, got = 0;
    uint64_t codes[CTP_PY_MAX], lo = 0, hi = 0, cur = 0;
    int64_t lastis[CTP_PY_MAX];
    const unsigned char *cobytes[CTP_PY_MAX];
    unsigned char fr[256];
    size_t clen = L->co_linetable + 8 - 8;
    unsigned codes_ok = 0;
    if (clen > CTP_PY_CODE_BYTES)
        return -1;
    /* where the previous sample found the thread, or (it moved) where this read found it */
    const unsigned char *stk = pre ? pre->stack : ctp_py_stack;
    if (pre)
        got = ctp_py_state_parse(pre, whole, hint, &cur, &lo, &hi, &codes_ok);
    for (int attempt = 0; attempt < 2 && got == 0; attempt++) {
        got = ctp_py_state_read(tstate, hint, &cur, &lo, &hi, &codes_ok);
        stk = ctp_py_stack;
    }
    if (got != 1)
        goto out;
    if (cur >= lo && cur < lo + CTP_PY_STACK_BYTES && cur + L->fr_size > hi && hi)
        goto out; /* the current frame lies above the stack's top: popped meanwhile */
    /* Frames read at two moments make a chain that need not hold together: from 3.11 a
     * thread's first frame is an evaluation loop's entry (3.11: is_entry; 3.12+: the loop's
     * shim frame), and a chain that ends elsewhere was read while a frame was being pushed (its
     * link to its caller not yet written: zeros, or an older frame's); below the innermost
     * frame (which may be one just pushed, not started), every frame has run. */
    uint64_t cur0 = cur, last = 0;
    int k = 0, bottom = 1, seen = 0, alone = 0;
    for (int steps = 0; cur && k < cap && k < CTP_PY_MAX; steps++) {
        const unsigned char *f = fr;
        last = cur;
        if (steps >= 4 * CTP_PY_MAX)
            goto out; /* a cycle: frames changed under the reader */
        if (cur >= lo && cur + L->fr_size <= hi)
            f = stk + (cur - lo);
        else if (ctp_py_read(&m, cur, fr, L->fr_size) != 0)
            goto out;
        else
            alone = 1;
        /* before 3.11 a frame is an object: one freed meanwhile has no references */
        if (L->one_per_loop && (int64_t)ctp_py_u64(f, 0) <= 0)
            goto out;
        cur = ctp_py_u64(f, L->fr_previous);
        bottom = L->one_per_loop || (L->fr_is_entry != CTP_PY_NONE ? f[L->fr_is_entry] != 0
                                                                  : f[L->fr_owner] == L->owner_cstack);
        if (!L->one_per_loop && f[L->fr_owner] == L->owner_cstack)
            continue;
        if (ctp_py_frame_code(f, &codes[k], &lastis[k]) == 0)
            k++;
        else if (seen)
            goto out; /* only the innermost frame may not have started */
        seen = 1;
    }
    if (!cur && !bottom)
        goto out;
    /* A thread's outermost frame stays while it runs (its <module>, threading's _bootstrap):
     * a chain that ends at another frame than last time was read while a frame it passed
     * through was being freed (before 3.11, a frame object's dealloc clears its f_back first),
     * unless the thread did start anew (a C thread entering Python again): once. */
    if (!cur) {
        int moved = hint->bottom && hint->bottom != last;
        hint->bottom = last;
        if (moved)
            goto out;
    }
    /* Then in one more read, if needed: each frame's code object the state's read did not
     * bring (the previous sample's), and, when frames were read one by one (outside the data
     * stack copied, or before 3.11), the current frame again, which must not have moved. Each
     * code object must be one (PyCode_Type). */
    ctp_py_batch more = {.n = 0};
    unsigned char again[8];
    if (alone)
        ctp_py_add(&more, L->cframe_current != CTP_PY_NONE ? hint->cframe + L->cframe_current
                                                            : tstate + L->ts_frame, again, 8);
    unsigned nc = 0;
    int cached = 0;
    for (int i = 0; i < k; i++) {
        cobytes[i] = NULL;
        /* read again now (they were due), or as an earlier sample read them */
        for (uint32_t j = 0; j < codes_ok && !cobytes[i]; j++)
            if (hint->codes[j] == codes[i])
                cobytes[i] = hint->bytes[j];
        for (uint32_t j = 0; hint->age < CTP_PY_RECHECK && j < hint->ncodes && !cobytes[i]; j++)
            if (hint->codes[j] == codes[i]) {
                cobytes[i] = hint->bytes[j];
                cached = 1;
            }
        for (int j = 0; j < i && !cobytes[i]; j++)
            if (codes[j] == codes[i] && cobytes[j] >= ctp_py_codes[0] && cobytes[j] < ctp_py_codes[CTP_PY_MAX])
                cobytes[i] = cobytes[j];
        if (!cobytes[i]) {
            cobytes[i] = ctp_py_codes[nc];
            ctp_py_add(&more, codes[i] + 8, ctp_py_codes[nc++], clen);
        }
    }
    if (ctp_py_readv(&more) != more.n || (alone && ctp_py_u64(again, 0) != cur0))
        goto out;
    uint32_t ncodes = 0;
    uint64_t kept[CTP_PY_MAX];
    static unsigned char keep[CTP_PY_MAX][CTP_PY_CODE_BYTES];
    for (int i = 0; i < k; i++) {
        if (ctp_py_u64(cobytes[i], 0) != ctp_py_code_type)
            goto out;
        ctp_py_keys(codes[i], lastis[i], cobytes[i] + L->co_firstlineno - 8, &keys[i], &code_at[i]);
        int known = 0;
        for (uint32_t j = 0; j < ncodes && !known; j++)
            known = kept[j] == codes[i];
        if (!known) {
            kept[ncodes] = codes[i];
            memcpy(keep[ncodes++], cobytes[i], clen);
        }
    }
    /* the code objects for the next samples (their bytes may be the hint's own: copied first) */
    memcpy(hint->codes, kept, ncodes * sizeof *kept);
    memcpy(hint->bytes, keep, ncodes * sizeof *keep);
    hint->ncodes = ncodes;
    hint->age = cached ? hint->age + 1 : 0;
    n = k;
out:
    if (n < 0)
        hint->ncodes = 0; /* read again from scratch */
    errno = saved;
    return n;
}

/* A thread that calls Python functions without pause (frames pushed and popped every
 * microsecond) moves during a read more often than not; read again at once, warm, a few times:
 * the read after a miss is shorter (its caches, and the hint, are the thread's now). */
#define CTP_PY_TRIES 4

int ctp_python_sample(uint32_t pid, uint64_t tstate, ctp_py_hint *hint, uint64_t *keys,
                      uint64_t *code_at, int cap)
{
    if (!tstate || !hint || !ctp_py_known() || !ctp_py)
        return -1;
    ctp_py_target = pid ? (pid_t)pid : ctp_py_pid;
    int n = -1;
    for (int k = 0; k < CTP_PY_TRIES && n < 0; k++)
        n = ctp_py_sample1(tstate, hint, keys, code_at, cap, NULL, 0);
    return n;
}

/* Threads read together, and the room their data stacks are copied into. */
#define CTP_PY_BATCH 32
#define CTP_PY_ARENA (256 * 1024)

void ctp_python_sample_many(int n, const uint64_t *tstates, ctp_py_hint *const *hints, ctp_py_frames *out)
{
    static ctp_py_slot slots[CTP_PY_BATCH];
    static unsigned char arena[CTP_PY_ARENA];
    static ctp_py_batch b;
    int in[CTP_PY_BATCH];
    size_t used = 0;
    b.n = 0;
    ctp_py_target = ctp_py_pid;
    for (int i = 0; i < n; i++) {
        out[i].n = -1;
        if (i < CTP_PY_BATCH)
            in[i] = 0;
        if (!tstates[i] || !hints[i] || !ctp_py_known() || !ctp_py)
            continue;
        /* a thread whose pieces find no room is read on its own (below) */
        size_t need = hints[i]->chunk ? hints[i]->end - hints[i]->chunk : 0;
        if (i >= CTP_PY_BATCH || used + need > sizeof arena)
            continue;
        slots[i].stack = arena + used;
        if (ctp_py_state_add(&b, &slots[i], tstates[i], hints[i]) == 0) {
            in[i] = 1;
            used += need;
        }
    }
    int saved = errno;
    unsigned whole = ctp_py_readv(&b);
    errno = saved;
    for (int i = 0; i < n; i++) {
        if (!tstates[i] || !hints[i] || !ctp_py)
            continue;
        int got = -1;
        if (i < CTP_PY_BATCH && in[i])
            got = ctp_py_sample1(tstates[i], hints[i], out[i].keys, out[i].code_at, CTP_PY_MAX,
                                 &slots[i], whole);
        /* once more on its own, and as often as one thread's read tries */
        out[i].n = got >= 0 ? got : ctp_python_sample(0, tstates[i], hints[i], out[i].keys,
                                                      out[i].code_at, CTP_PY_MAX);
    }
}

/* A Python str's text, interned (the encoder cuts one too long for the trace, keeping its
 * length); 0 if unreadable or over 1 MiB. */
static uint32_t ctp_py_string(const ctp_py_mem *m, uint64_t obj)
{
    const ctp_py_layout *L = ctp_py;
    unsigned char h[96];
    char text[1024];
    if (ctp_py_read(m, obj, h, sizeof h) != 0)
        return 0;
    uint32_t state = ctp_py_u32(h, L->str_state);
    uint64_t len = ctp_py_u64(h, L->str_length), at;
    /* state bits: interned (2), kind (3), compact (bit 5), ascii (bit 6). */
    if ((state & (1u << 5)) && (state & (1u << 6))) {
        at = obj + L->str_ascii_data;
    } else {
        at = ctp_py_u64(h, L->str_utf8);
        len = ctp_py_u64(h, L->str_utf8_length);
    }
    /* a long one (a generated function, a deep path) is rare: read on the heap */
    char *buf = len < sizeof text ? text : len <= (1u << 20) ? malloc(len) : NULL;
    uint32_t id = buf && ctp_py_read(m, at, buf, len) == 0 ? ctp_intern(buf, len) : 0;
    if (buf != text)
        free(buf);
    return id;
}

static uint64_t ctp_py_varint(const unsigned char **p, const unsigned char *end)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (*p < end && shift < 64) {
        unsigned b = *(*p)++;
        v |= (uint64_t)(b & 63) << shift;
        shift += 6;
        if (!(b & 64))
            break;
    }
    return v;
}

/* The line of instruction lasti from a 3.11 location table (CPython Objects/locations.md):
 * entries of a header byte (bit 7 set; code in bits 3-6; length - 1 in bits 0-2) and operands. */
static uint32_t ctp_py_line(const unsigned char *p, const unsigned char *end, int first, int64_t lasti)
{
    int64_t line = first, addr = 0;
    while (p < end) {
        unsigned h = *p++;
        if (!(h & 128))
            return 0;
        unsigned code = (h >> 3) & 15;
        int64_t len = (h & 7) + 1, delta = 0;
        int none = 0;
        if (code == 15) {
            none = 1;
        } else if (code == 14 || code == 13) {
            uint64_t u = ctp_py_varint(&p, end);
            delta = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
            if (code == 14)
                for (int k = 0; k < 3; k++)
                    ctp_py_varint(&p, end);
        } else if (code >= 10) {
            delta = code - 10;
            p += 2;
        } else {
            p += 1;
        }
        line += delta;
        if (lasti < addr + len)
            return none || line <= 0 ? 0 : (uint32_t)line;
        addr += len;
    }
    return 0;
}

/* The line of byte offset `at` from a 3.8/3.9 co_lnotab (pairs of an unsigned byte-offset
 * increment and a signed line increment; Objects/lnotab_notes.txt) or a 3.10 co_linetable (pairs
 * of a byte-offset length and a signed line delta, -128 for no line). */
static uint32_t ctp_py_line_pairs(const unsigned char *p, const unsigned char *end, int first,
                                  int64_t at, int v310)
{
    int64_t line = first, addr = 0;
    for (; end - p >= 2; p += 2) {
        int64_t next = addr + p[0];
        int delta = (signed char)p[1];
        if (!v310) {
            if (next > at)
                break;
            line += delta;
        } else {
            int none = delta == -128;
            line += none ? 0 : delta;
            if (at < next)
                return none || line <= 0 ? 0 : (uint32_t)line;
        }
        addr = next;
    }
    return !v310 && line > 0 ? (uint32_t)line : 0;
}

int ctp_python_frame(uint64_t key, uint32_t pid, uint32_t *file, uint32_t *function,
                     uint32_t *line)
{
    if (!ctp_py_known() || !ctp_py)
        return -1;
    int saved = errno, rc = -1;
    const ctp_py_layout *L = ctp_py;
    /* rare (once per new frame): the safe reads will do */
    const ctp_py_mem m = {pid ? (pid_t)pid : ctp_py_pid, 0};
    uint64_t code = (key & ((1ull << CTP_PY_CODE_BITS) - 1)) << 4;
    int64_t lasti = (int64_t)((key >> CTP_PY_CODE_BITS) & ((1u << CTP_PY_LASTI_BITS) - 1));
    unsigned char co[256], lt[48];
    if (ctp_py_read(&m, code, co, L->co_code) == 0) {
        *file = ctp_py_string(&m, ctp_py_u64(co, L->co_filename));
        *function = ctp_py_string(&m, ctp_py_u64(co, L->co_qualname));
        *line = 0;
        uint64_t table = ctp_py_u64(co, L->co_linetable);
        unsigned char *bytes = NULL;
        uint64_t size;
        if (ctp_py_read(&m, table, lt, sizeof lt) == 0 &&
            (size = ctp_py_u64(lt, L->bytes_size)) <= (1u << 20) && (bytes = malloc(size ? size : 1)) &&
            ctp_py_read(&m, table + L->bytes_data, bytes, size) == 0) {
            int first = (int)ctp_py_u32(co, L->co_firstlineno);
            *line = L->lines == CTP_PY_LINES_311 ? ctp_py_line(bytes, bytes + size, first, lasti)
                    : ctp_py_line_pairs(bytes, bytes + size, first, lasti, L->lines == CTP_PY_LINES_310);
        }
        free(bytes);
        rc = 0;
    }
    errno = saved;
    return rc;
}

void ctp_python_reset(void)
{
    atomic_store(&ctp_py_described, 0);
}

/* A configuration string (wchar_t is UCS-4 here) in UTF-8, interned; 0 if absent. */
static uint32_t ctp_py_wide(const wchar_t *w)
{
    char buf[4096];
    size_t n = 0;
    for (; w && *w; w++) {
        uint32_t c = (uint32_t)*w;
        int len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (c > 0x10ffff || n + (size_t)len >= sizeof buf)
            break;
        static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
        for (int k = len - 1; k > 0; k--, c >>= 6)
            buf[n + (size_t)k] = (char)(0x80 | (c & 0x3f));
        buf[n] = (char)(len == 1 ? c : (lead[len] | c));
        n += (size_t)len;
    }
    return n ? ctp_intern(buf, n) : 0;
}

void ctp_python_describe(ctp_thread *th)
{
    if (atomic_load_explicit(&ctp_py_described, memory_order_relaxed) || !ctp_py_known() ||
        !ctp_py || !ctp_py_initialized() || ctp_py_finalizing() ||
        atomic_exchange(&ctp_py_described, 1))
        return;
    int saved = errno;
    ct_rec_python r = {ctp_py_version, ctp_py_wide(ctp_py_program()), ctp_py_wide(ctp_py_prefix()),
                       ctp_py_wide(ctp_py_exec_prefix()), ctp_py_wide(ctp_py_search_path())};
    ctp_push_now(th, CT_REC_PYTHON, &r, sizeof r);
    errno = saved;
}
