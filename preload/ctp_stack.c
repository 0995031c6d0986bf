#define _GNU_SOURCE
#include "ctp_stack.h"

#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "ctp_fds.h"
#include "ctp_loader.h"
#include "ctp_maps.h"
#include "ctp_python.h"
#include "ctp_unwind.h"

typedef struct {
    uint32_t function, module;
    uint64_t offset;
    uint32_t kind, line;
} ctp_frame_def;

typedef struct {
    uint32_t n;
    uint32_t *frames;
} ctp_stack_def;

static pthread_mutex_t ctp_stk_mu = PTHREAD_MUTEX_INITIALIZER;
static ctp_hmap ctp_frame_ids;   /* return address -> frame id */
static ctp_hmap ctp_stack_ids;   /* hash of the addresses -> stack id */
static ctp_frame_def *ctp_frames;
static ctp_stack_def *ctp_stacks;
static uint32_t ctp_nframes, ctp_nstacks, ctp_frames_cap, ctp_stacks_cap;
static uint32_t ctp_frames_emitted, ctp_stacks_emitted;
static pthread_once_t ctp_stk_once = PTHREAD_ONCE_INIT;
/* Table sizes: the lookup maps (2^16 slots) cache up to 3/4 of their slots; beyond these a
 * stack or frame could never be found again, and each capture would lock and allocate. */
#define CTP_MAP_LOG2 16
#define CTP_MAX_STACKS (3u << (CTP_MAP_LOG2 - 2))
#define CTP_MAX_FRAMES (3u << (CTP_MAP_LOG2 - 2))
static _Atomic int ctp_stk_full;            /* no new stack can be interned */
static uintptr_t ctp_self_lo, ctp_self_hi; /* libcutrace's executable segment */

static int ctp_find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    uintptr_t me = (uintptr_t)&ctp_stack_capture;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo && me < hi) {
            ctp_self_lo = lo;
            ctp_self_hi = hi;
            return 1;
        }
    }
    return 0;
}

static void ctp_stack_init(void)
{
    ctp_unwind_guard();
    ctp_hmap_init(&ctp_frame_ids, CTP_MAP_LOG2);
    ctp_hmap_init(&ctp_stack_ids, CTP_MAP_LOG2);
    ctp_loader_walk(ctp_find_self, NULL);
}

/* Naming a return address. glibc's dladdr scans every dynamic symbol of the object for the
 * nearest one: 530 us an address in PyTorch's libtorch_cuda.so (12 us in libc), under the
 * table's lock, for each new frame of the sampler's native stacks and of the program's own
 * captures. Each loaded object's symbols are read here instead, once, from its file, sorted by
 * address: its .dynsym's code symbols as dladdr matches them (the symbol of largest value whose
 * extent holds the address, or a sized-0 one exactly at it; of aliases the first) and, for addresses
 * no dynamic symbol holds, its .symtab's functions (static ones, which dladdr cannot name). A
 * name is read from the file and interned only when a frame falls in its symbol: a library such
 * as PyTorch's has hundreds of thousands, and interning them all put each into the trace and
 * took seconds of the program's time at its first captured stack. */
typedef struct {
    uint64_t lo, hi;             /* link-time extent; hi = lo + 1 for a symbol of size 0 */
    uint64_t name_at;            /* file offset of its name (read, and checked, when named) */
    uint32_t index;              /* in its table: of aliases, dladdr names the first */
} ctp_sym;
typedef struct {
    ctp_sym *v;
    size_t n;
    uint64_t widest;             /* the largest extent: how far back a holder may start */
} ctp_symtab;
typedef struct {
    uintptr_t lo, hi;            /* where its loadable segments are mapped */
    uintptr_t bias;              /* dlpi_addr: what symbol values are relative to */
    uintptr_t base;              /* the start of its mapping (dladdr's dli_fbase) */
    char *shown;                 /* its file name as dladdr gives it (argv[0]: the program) */
    uint32_t name;               /* ... interned, once a frame is in it (0 before) */
    int read[2];                 /* its .dynsym, .symtab were read (or could not be) */
    ctp_symtab dyn, all;         /* .dynsym, and .symtab's functions (read when dyn lacks one) */
    char *path;                  /* the file the names are read from, as it was when read */
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
} ctp_module;
static ctp_module ctp_modules[512];
static size_t ctp_nmodules;
static unsigned long long ctp_modules_adds; /* dlpi_adds when they were listed */

static int ctp_sym_cmp(const void *a, const void *b)
{
    const ctp_sym *x = a, *y = b;
    return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->index > y->index) - (x->index < y->index);
}

/* An object that dl_iterate_phdr lists: added to ctp_modules unless known (by its mapping). */
static int ctp_module_add(struct dl_phdr_info *info, size_t size, void *arg)
{
    /* nothing loaded since the last listing: an address in no object stays in none (a perf
     * stack's JIT or garbage frames would list them all again, each) */
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs)) {
        if (info->dlpi_adds == ctp_modules_adds)
            return 1;
        *(unsigned long long *)arg = info->dlpi_adds;
    }
    uintptr_t lo = UINTPTR_MAX, hi = 0, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t l = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1), h = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        lo = l < lo ? l : lo;
        hi = h > hi ? h : hi;
    }
    if (lo >= hi)
        return 0;
    for (size_t i = 0; i < ctp_nmodules; i++)
        if (ctp_modules[i].lo == lo && ctp_modules[i].hi == hi)
            return 0;
    if (ctp_nmodules == sizeof ctp_modules / sizeof ctp_modules[0])
        return 1;
    /* the program itself has no name here: dladdr names it by argv[0], its file is /proc/self/exe */
    int prog = !info->dlpi_name || !*info->dlpi_name;
    const char *shown = prog ? program_invocation_name : info->dlpi_name;
    ctp_modules[ctp_nmodules++] = (ctp_module){
        .lo = lo, .hi = hi, .bias = info->dlpi_addr, .base = lo, .shown = shown ? strdup(shown) : NULL,
        .path = strdup(prog ? "/proc/self/exe" : info->dlpi_name)};
    return 0;
}

/* The loaded object holding address a, the list read again when none does (a library
 * dlopen'ed since); NULL if none. Unloaded objects' entries stay (an address they held may be
 * another's now: the first listed wins, as at the time). */
static ctp_module *ctp_module_of(uintptr_t a)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < ctp_nmodules; i++)
            if (a >= ctp_modules[i].lo && a < ctp_modules[i].hi)
                return &ctp_modules[i];
        if (!pass) {
            unsigned long long adds = ctp_modules_adds;
            ctp_loader_walk(ctp_module_add, &adds);
            ctp_modules_adds = adds;
        }
    }
    return NULL;
}

/* A symbol table section's symbols into t: of .dynsym (dyn) those dladdr matches, of .symtab
 * the functions. Never trusts the file: every offset is checked against its size. */
static void ctp_symtab_read(ctp_symtab *t, const unsigned char *f, size_t size, const ElfW(Shdr) *sh,
                            const ElfW(Shdr) *strs, int dyn)
{
    if (t->v || sh->sh_offset > size || sh->sh_size > size - sh->sh_offset ||
        strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
        return;
    const ElfW(Sym) *sym = (const void *)(f + sh->sh_offset);
    size_t nsym = sh->sh_size / sizeof(ElfW(Sym)), n = 0;
    ctp_sym *out = malloc((nsym ? nsym : 1) * sizeof *out);
    if (!out)
        return;
    for (size_t k = 0; k < nsym; k++) {
        unsigned type = ELF64_ST_TYPE(sym[k].st_info);
        /* code only: a return address is in no data object, and cuBLAS's fatbins (dynamic
         * objects of hundreds of MB) would make every lookup walk back across them */
        int code = type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE;
        int keep = dyn ? code && sym[k].st_shndx != SHN_ABS &&
                             (sym[k].st_shndx != SHN_UNDEF || sym[k].st_value)
                       : type == STT_FUNC && sym[k].st_value;
        /* (the name itself is not touched: PyTorch's .strtab is 78 MB) */
        if (!keep || !sym[k].st_name || sym[k].st_name >= strs->sh_size)
            continue;
        uint64_t ext = sym[k].st_size ? sym[k].st_size : 1;
        out[n++] = (ctp_sym){sym[k].st_value, sym[k].st_value + ext, strs->sh_offset + sym[k].st_name,
                             (uint32_t)k};
        t->widest = ext > t->widest ? ext : t->widest;
    }
    qsort(out, n, sizeof *out, ctp_sym_cmp);
    t->v = out;
    t->n = n;
}

/* m's .dynsym (dyn) or .symtab's functions, from its file. */
static void ctp_module_read(ctp_module *m, int dyn)
{
    m->read[!dyn] = 1;
    int fd = m->path ? ctp_fd_open(m->path, 0) : -1;
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        ctp_fd_drop(fd);
        return;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ctp_fd_drop(fd);
    if (f == MAP_FAILED)
        return;
    const ElfW(Ehdr) *eh = (const void *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_shentsize == sizeof(ElfW(Shdr)) &&
        eh->e_shoff <= size && eh->e_shnum <= (size - eh->e_shoff) / sizeof(ElfW(Shdr))) {
        const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
        for (unsigned i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (dyn ? SHT_DYNSYM : SHT_SYMTAB) && sh[i].sh_link < eh->e_shnum)
                ctp_symtab_read(dyn ? &m->dyn : &m->all, f, size, &sh[i], &sh[sh[i].sh_link], dyn);
        /* names are read from the file as it was when its first table was */
        if (!m->read[dyn]) {
            m->dev = st.st_dev;
            m->ino = st.st_ino;
            m->mtime = st.st_mtim;
        } else if (m->dev != st.st_dev || m->ino != st.st_ino ||
                   m->mtime.tv_sec != st.st_mtim.tv_sec || m->mtime.tv_nsec != st.st_mtim.tv_nsec) {
            free(m->all.v);
            m->all = (ctp_symtab){0};
        }
    }
    munmap((void *)f, size);
}

/* The symbol of t holding link-time address x: of those whose extent holds it, the one that
 * starts last; NULL if none. */
static const ctp_sym *ctp_symtab_find(const ctp_symtab *t, uint64_t x)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].lo <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && x - t->v[i].lo < t->widest;)
        if (x < t->v[i].hi) {
            while (i > 0 && t->v[i - 1].lo == t->v[i].lo)
                i--;
            return &t->v[i];
        }
    return NULL;
}

/* Longest symbol name read: 16 times what a STRING record holds, whose cut (ct_string_cut) then
 * keeps the name's start and length; a C++ template's mangled name may exceed the record. */
#define CTP_SYM_MAX (16 * (CT_STRING_MAX + 1))

/* The name at file offset `at` of m's file, interned demangled; 0 if the file changed since its
 * symbols were read, or the name cannot be read whole (at most CTP_SYM_MAX bytes). */
static uint32_t ctp_sym_name(const ctp_module *m, uint64_t at)
{
    if (!m->path)
        return 0;
    int fd = ctp_fd_open(m->path, 0);
    struct stat st;
    if (fd < 0)
        return 0;
    uint32_t id = 0;
    char small[512], *buf = small;
    ssize_t got = 0;
    if (fstat(fd, &st) == 0 && st.st_dev == m->dev && st.st_ino == m->ino &&
        st.st_mtim.tv_sec == m->mtime.tv_sec && st.st_mtim.tv_nsec == m->mtime.tv_nsec) {
        got = pread(fd, buf, sizeof small, (off_t)at);
        if (got == (ssize_t)sizeof small && !memchr(buf, 0, (size_t)got) &&
            (buf = malloc(CTP_SYM_MAX)))
            got = pread(fd, buf, CTP_SYM_MAX, (off_t)at);
    }
    ctp_fd_drop(fd);
    if (buf && got > 0 && memchr(buf, 0, (size_t)got))
        id = ctp_intern_demangled(buf);
    if (buf != small)
        free(buf);
    return id;
}

/* ip's frame id; code_at: for a Python frame (ip its identity key) the key that reads it in
 * process pid (0: this one). */
static uint32_t ctp_frame_of(uint64_t ip, uint64_t code_at, uint32_t pid)
{
    uint64_t id;
    if (ctp_hmap_get(&ctp_frame_ids, ip, &id))
        return (uint32_t)id;
    if (ctp_nframes == ctp_frames_cap) {
        uint32_t cap = ctp_frames_cap ? ctp_frames_cap * 2 : 256;
        ctp_frame_def *v = realloc(ctp_frames, cap * sizeof *v);
        if (!v)
            return 0;
        ctp_frames = v;
        ctp_frames_cap = cap;
    }
    /* ip - 1: a return address may already belong to the next function. */
    ctp_frame_def f = {0, 0, ip, CT_FRAME_NATIVE, 0};
    ctp_module *m;
    if (ip & CTP_PY_KEY) {
        f.offset = 0;
        f.kind = CT_FRAME_PYTHON;
        ctp_python_frame(code_at, pid, &f.module, &f.function, &f.line);
    } else if ((m = ctp_module_of((uintptr_t)ip - 1))) {
        if (!m->read[0])
            ctp_module_read(m, 1);
        /* (interned here, not when listed: a process maps hundreds of objects, few in stacks) */
        if (!m->name && m->shown)
            m->name = ctp_intern(m->shown, strlen(m->shown));
        f.module = m->name;
        f.offset = ip - m->base;
        const ctp_sym *y = ctp_symtab_find(&m->dyn, ip - 1 - m->bias);
        if (!y && !m->read[1])
            ctp_module_read(m, 0);
        if (!y)
            y = ctp_symtab_find(&m->all, ip - 1 - m->bias);
        f.function = y ? ctp_sym_name(m, y->name_at) : 0;
    }
    ctp_frames[ctp_nframes++] = f;
    ctp_hmap_put(&ctp_frame_ids, ip, ctp_nframes);
    return ctp_nframes;
}

uint32_t ctp_stack_capture(void)
{
    pthread_once(&ctp_stk_once, ctp_stack_init);
    void *ips[CTP_STACK_DEPTH + 8];
    uint64_t at[CTP_STACK_DEPTH + 8], code_at[CTP_STACK_DEPTH + 8];
    ctp_loader_enter();
    int n = unw_backtrace(ips, CTP_STACK_DEPTH + 8);
    ctp_loader_leave();
    /* cutrace's own frames (this function, the hook, the wrappers of the driver and of the
     * runtime) are not the program's: leave them out wherever they are. */
    int kept = 0;
    for (int i = 0; i < n && kept < CTP_STACK_DEPTH; i++)
        if ((uintptr_t)ips[i] < ctp_self_lo || (uintptr_t)ips[i] >= ctp_self_hi)
            at[kept++] = (uintptr_t)ips[i];
    n = ctp_python_splice(at, kept, CTP_STACK_DEPTH, code_at);
    return ctp_stack_intern(0, at, code_at, n);
}

uint32_t ctp_stack_intern(uint32_t pid, const uint64_t *at, const uint64_t *code_at, int n)
{
    pthread_once(&ctp_stk_once, ctp_stack_init);
    if (n <= 0)
        return 0;
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ at[i]) * 1099511628211ull;
    h |= 1; /* never the empty key */
    uint64_t id;
    if (ctp_hmap_get(&ctp_stack_ids, h, &id))
        return (uint32_t)id;
    if (atomic_load_explicit(&ctp_stk_full, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&ctp_stk_mu);
    uint32_t sid = 0;
    if (ctp_hmap_get(&ctp_stack_ids, h, &id)) {
        sid = (uint32_t)id;
    } else if (ctp_nstacks >= CTP_MAX_STACKS || ctp_nframes + (uint32_t)n > CTP_MAX_FRAMES) {
        atomic_store_explicit(&ctp_stk_full, 1, memory_order_relaxed);
    } else if (ctp_nstacks == ctp_stacks_cap) {
        uint32_t cap = ctp_stacks_cap ? ctp_stacks_cap * 2 : 256;
        ctp_stack_def *v = realloc(ctp_stacks, cap * sizeof *v);
        if (v) {
            ctp_stacks = v;
            ctp_stacks_cap = cap;
        }
    }
    if (!sid && !atomic_load_explicit(&ctp_stk_full, memory_order_relaxed) &&
        ctp_nstacks < ctp_stacks_cap) {
        uint32_t *frames = malloc((size_t)n * sizeof *frames);
        if (frames) {
            for (int i = 0; i < n; i++)
                frames[i] = ctp_frame_of(at[i], at[i] & CTP_PY_KEY ? code_at[i] : 0, pid);
            ctp_stacks[ctp_nstacks] = (ctp_stack_def){(uint32_t)n, frames};
            sid = ++ctp_nstacks;
            ctp_hmap_put(&ctp_stack_ids, h, sid);
        }
    }
    pthread_mutex_unlock(&ctp_stk_mu);
    return sid;
}

int ctp_stack_pending(ct_enc *e, uint64_t ts, int try, ctp_intern_fn strings, void *ctx)
{
    if (try ? pthread_mutex_trylock(&ctp_stk_mu) != 0 : pthread_mutex_lock(&ctp_stk_mu) != 0)
        return -1;
    /* A stack interned while the caller wrote the strings out interned its frames' strings
     * after that: they go first, now that no stack is being interned. */
    if (try)
        ctp_intern_pending_try(strings, ctx);
    else
        ctp_intern_pending(strings, ctx);
    int rc = 0;
    while (rc == 0 && ctp_frames_emitted < ctp_nframes) {
        const ctp_frame_def *f = &ctp_frames[ctp_frames_emitted];
        ct_rec_frame r = {ctp_frames_emitted + 1, f->function, f->module, f->offset, f->kind, f->line};
        if ((rc = ct_enc_frame(e, ts, &r)) == 0)
            ctp_frames_emitted++;
    }
    while (rc == 0 && ctp_stacks_emitted < ctp_nstacks) {
        const ctp_stack_def *s = &ctp_stacks[ctp_stacks_emitted];
        if ((rc = ct_enc_stack(e, ts, ctp_stacks_emitted + 1, s->frames, s->n)) == 0)
            ctp_stacks_emitted++;
    }
    pthread_mutex_unlock(&ctp_stk_mu);
    return rc;
}

void ctp_stack_rewind(void)
{
    ctp_frames_emitted = ctp_stacks_emitted = 0;
}

void ctp_stack_lock(void)
{
    pthread_mutex_lock(&ctp_stk_mu);
}

void ctp_stack_unlock(void)
{
    pthread_mutex_unlock(&ctp_stk_mu);
}
