#define _GNU_SOURCE
#include "ctp_stack.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "ctp_maps.h"
#include "ctp_python.h"

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
    ctp_hmap_init(&ctp_frame_ids, CTP_MAP_LOG2);
    ctp_hmap_init(&ctp_stack_ids, CTP_MAP_LOG2);
    dl_iterate_phdr(ctp_find_self, NULL);
}

/* Function symbols of one module from its ELF .symtab (static functions that dladdr, which
 * sees only dynamic symbols, cannot name), loaded once per module, sorted by address. A name
 * is read from the file and interned only when a frame falls in its function: a library such
 * as PyTorch's has hundreds of thousands, and interning them all put each into the trace and
 * took seconds of the program's time at its first captured stack. */
typedef struct {
    uint64_t lo, hi;
    uint64_t name_at;            /* file offset of the NUL-terminated name */
} ctp_sym;
typedef struct {
    const void *base;            /* dli_fbase of the module */
    ctp_sym *syms;
    size_t n;
    char *path;                  /* the file the names are read from, as it was when loaded */
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
} ctp_module;
static ctp_module ctp_modules[256];
static size_t ctp_nmodules;

static int ctp_sym_cmp(const void *a, const void *b)
{
    uint64_t x = ((const ctp_sym *)a)->lo, y = ((const ctp_sym *)b)->lo;
    return x < y ? -1 : x > y;
}

/* Never trusts the file: every offset is checked against its size. */
static void ctp_load_symtab(ctp_module *m, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        close(fd);
        return;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *f = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f == MAP_FAILED)
        return;
    const ElfW(Ehdr) *eh = (const void *)f;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
        eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(ElfW(Shdr))) {
        munmap((void *)f, size);
        return;
    }
    const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum && !m->syms; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
            strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
            break;
        const ElfW(Sym) *sym = (const void *)(f + sh[i].sh_offset);
        size_t nsym = sh[i].sh_size / sizeof(ElfW(Sym)), n = 0;
        ctp_sym *out = malloc(nsym * sizeof *out);
        if (!out)
            break;
        for (size_t k = 0; k < nsym; k++) {
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
                sym[k].st_name >= strs->sh_size)
                continue;
            const char *name = (const char *)f + strs->sh_offset + sym[k].st_name;
            if (!memchr(name, 0, strs->sh_size - sym[k].st_name))
                continue;
            out[n++] = (ctp_sym){sym[k].st_value, sym[k].st_value + (sym[k].st_size ? sym[k].st_size : 1),
                                strs->sh_offset + sym[k].st_name};
        }
        qsort(out, n, sizeof *out, ctp_sym_cmp);
        m->syms = out;
        m->n = n;
        m->path = strdup(path);
        m->dev = st.st_dev;
        m->ino = st.st_ino;
        m->mtime = st.st_mtim;
    }
    munmap((void *)f, size);
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
    int fd = open(m->path, O_RDONLY | O_CLOEXEC);
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
    close(fd);
    if (buf && got > 0 && memchr(buf, 0, (size_t)got))
        id = ctp_intern_demangled(buf);
    if (buf != small)
        free(buf);
    return id;
}

/* The function containing a module offset (link-time address for executables and libraries
 * alike, as PIE and shared objects are linked at 0), from .symtab; 0 if unknown. */
static uint32_t ctp_symtab_name(const Dl_info *info, uint64_t offset)
{
    ctp_module *m = NULL;
    for (size_t i = 0; i < ctp_nmodules && !m; i++)
        if (ctp_modules[i].base == info->dli_fbase)
            m = &ctp_modules[i];
    if (!m) {
        if (ctp_nmodules == sizeof ctp_modules / sizeof ctp_modules[0])
            return 0;
        m = &ctp_modules[ctp_nmodules++];
        m->base = info->dli_fbase;
        ctp_load_symtab(m, info->dli_fname);
    }
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].lo <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && offset < m->syms[lo - 1].hi ? ctp_sym_name(m, m->syms[lo - 1].name_at) : 0;
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
    Dl_info info;
    ctp_frame_def f = {0, 0, ip, CT_FRAME_NATIVE, 0};
    if (ip & CTP_PY_KEY) {
        f.offset = 0;
        f.kind = CT_FRAME_PYTHON;
        ctp_python_frame(code_at, pid, &f.module, &f.function, &f.line);
    } else if (dladdr((void *)(ip - 1), &info)) {
        f.module = info.dli_fname ? ctp_intern(info.dli_fname, strlen(info.dli_fname)) : 0;
        f.offset = ip - (uintptr_t)info.dli_fbase;
        f.function = info.dli_sname ? ctp_intern_demangled(info.dli_sname)
                                    : ctp_symtab_name(&info, f.offset - 1);
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
    int n = unw_backtrace(ips, CTP_STACK_DEPTH + 8);
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
