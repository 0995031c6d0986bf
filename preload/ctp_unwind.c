/* libunwind's own descriptors (see ctp_unwind.h). What libunwind does with its pipe was read in
 * its source (libunwind 1.6.2, src/x86_64/Ginit.c: open_pipe, write_validate); nothing of it is
 * copied here. */
#define _GNU_SOURCE
#include "ctp_unwind.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctp_fds.h"
#include "ctp_loader.h"

static int ctp_uw_pipe2(int fds[2], int flags)
{
    if (pipe2(fds, flags) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        fds[i] = ctp_fd_aside(fds[i], flags & O_CLOEXEC);
        ctp_fd_keep(fds[i]);
    }
    return 0;
}

static int ctp_uw_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if (flags & (O_CREAT | __O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    int fd = open(path, flags, mode);
    ctp_fd_keep(fd);
    return fd;
}

/* Whether fd is a number libunwind opened that the program has since taken. */
static int ctp_uw_taken(long fd)
{
    if (fd < 0 || fd > INT32_MAX || ctp_fd_state((int)fd) != 0)
        return 0;
    errno = EBADF;
    return 1;
}

static ssize_t ctp_uw_read(int fd, void *buf, size_t n)
{
    return ctp_uw_taken(fd) ? -1 : read(fd, buf, n);
}

static ssize_t ctp_uw_write(int fd, const void *buf, size_t n)
{
    return ctp_uw_taken(fd) ? -1 : write(fd, buf, n);
}

/* syscall(2) reads six arguments whatever the call takes; so does this. */
static long ctp_uw_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if ((nr == SYS_read || nr == SYS_write) && ctp_uw_taken(a[0]))
        return -1;
    return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A kept number is closed only if still libunwind's. One the program has taken stays recorded
 * as libunwind's old file (told closed, closing nothing): libunwind keeps it in its pipe's slot
 * when it cannot open a new pipe (no descriptor left), and would read, write and close it again. */
static int ctp_uw_close(int fd)
{
    switch (ctp_fd_state(fd)) {
    case -1:
        return close(fd);
    case 1:
        ctp_fd_drop(fd);
        break;
    }
    return 0;
}

static const struct {
    const char *name;
    void *to;
} ctp_uw_imports[] = {
    {"pipe2", (void *)ctp_uw_pipe2}, {"open", (void *)ctp_uw_open},
    {"read", (void *)ctp_uw_read},   {"write", (void *)ctp_uw_write},
    {"syscall", (void *)ctp_uw_syscall}, {"close", (void *)ctp_uw_close},
};

#if defined(__x86_64__)
#define CTP_UW_JUMP_SLOT R_X86_64_JUMP_SLOT
#define CTP_UW_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define CTP_UW_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define CTP_UW_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

/* glibc relocates the addresses of an object's dynamic section in place on these machines;
 * one still relative to the object is made absolute. */
static uintptr_t ctp_uw_addr(const struct dl_phdr_info *info, uintptr_t v)
{
    return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

/* Sets the slot at `at` to `to`; a slot inside the part made read-only after relocation
 * (RELRO: an object linked with -z now) is made writable for the store. */
static void ctp_uw_store(uintptr_t at, void *to, uintptr_t ro_lo, uintptr_t ro_hi)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t p = at & ~(uintptr_t)(page - 1);
    int ro = at >= ro_lo && at < ro_hi;
    if (ro && mprotect((void *)p, (size_t)page, PROT_READ | PROT_WRITE) != 0)
        return;
    __atomic_store_n((void **)at, to, __ATOMIC_RELAXED);
    if (ro)
        mprotect((void *)p, (size_t)page, PROT_READ);
}

static void ctp_uw_relocs(const struct dl_phdr_info *info, const ElfW(Rela) *r, size_t bytes,
                          const ElfW(Sym) *syms, const char *names, uintptr_t ro_lo,
                          uintptr_t ro_hi)
{
    for (size_t i = 0; i < bytes / sizeof *r; i++) {
        unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
        if (type != CTP_UW_JUMP_SLOT && type != CTP_UW_GLOB_DAT)
            continue;
        const char *name = names + syms[ELF64_R_SYM(r[i].r_info)].st_name;
        for (size_t k = 0; k < sizeof ctp_uw_imports / sizeof *ctp_uw_imports; k++)
            if (!strcmp(name, ctp_uw_imports[k].name))
                ctp_uw_store(info->dlpi_addr + r[i].r_offset, ctp_uw_imports[k].to, ro_lo, ro_hi);
    }
}

static int ctp_uw_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    base = base ? base + 1 : info->dlpi_name;
    if (!base || strncmp(base, "libunwind", 9) != 0)
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t ro_lo = 0, ro_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        else if (ph->p_type == PT_GNU_RELRO)
            ro_lo = info->dlpi_addr + ph->p_vaddr, ro_hi = ro_lo + ph->p_memsz;
    }
    uintptr_t jmprel = 0, rela = 0, symtab = 0, strtab = 0;
    size_t jmpsz = 0, relasz = 0;
    int pltrela = 1;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_JMPREL: jmprel = ctp_uw_addr(info, dyn->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmpsz = dyn->d_un.d_val; break;
        case DT_PLTREL: pltrela = dyn->d_un.d_val == DT_RELA; break;
        case DT_RELA: rela = ctp_uw_addr(info, dyn->d_un.d_ptr); break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        case DT_SYMTAB: symtab = ctp_uw_addr(info, dyn->d_un.d_ptr); break;
        case DT_STRTAB: strtab = ctp_uw_addr(info, dyn->d_un.d_ptr); break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
    if (jmprel && pltrela)
        ctp_uw_relocs(info, (const ElfW(Rela) *)jmprel, jmpsz, syms, (const char *)strtab, ro_lo,
                      ro_hi);
    if (rela)
        ctp_uw_relocs(info, (const ElfW(Rela) *)rela, relasz, syms, (const char *)strtab, ro_lo,
                      ro_hi);
    return 0;
}

static void ctp_uw_guard_once(void)
{
    ctp_loader_walk(ctp_uw_object, NULL);
}

void ctp_unwind_guard(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ctp_uw_guard_once);
}
