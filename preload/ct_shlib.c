/* SHLIB records (see ct_shlib.h). */
#define _GNU_SOURCE
#include "ct_shlib.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ct_clock.h"
#include "ct_emit.h"
#include "ct_maps.h"

/* A process maps a handful of these; more than this are not described. */
#define CT_SHLIB_MAX 32
/* Build ids are 20 bytes (SHA-1) in practice; longer ones are cut. */
#define CT_BUILD_ID_MAX 64

typedef struct {
    uintptr_t base;
    uint32_t kind;
    char name[PATH_MAX];
    char id[2 * CT_BUILD_ID_MAX + 1];
} ct_shlib_found;

typedef struct {
    int first;
    unsigned long long adds;
    unsigned n;
    ct_shlib_found found[CT_SHLIB_MAX];
} ct_shlib_walk;

static pthread_mutex_t ct_shlib_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long ct_shlib_adds; /* the loader's count of objects added, at the last scan */
static int ct_shlib_scanned;
static uintptr_t ct_shlib_described[CT_SHLIB_MAX];
static unsigned ct_shlib_ndescribed;

void ct_shlib_reset(void)
{
    pthread_mutex_lock(&ct_shlib_mu);
    ct_shlib_scanned = 0;
    ct_shlib_ndescribed = 0;
    pthread_mutex_unlock(&ct_shlib_mu);
}

void ct_shlib_fork_child(void)
{
    pthread_mutex_init(&ct_shlib_mu, NULL);
}

/* Matched on the file name in any directory, with any version suffix. */
static uint32_t ct_shlib_kind(const char *path)
{
    static const struct { const char *prefix; uint32_t kind; } kinds[] = {
        {"libcudart.so", CT_SHLIB_CUDART}, {"libcuda.so", CT_SHLIB_CUDA},
        {"libcublas.so", CT_SHLIB_CUBLAS}, {"libcublasLt.so", CT_SHLIB_CUBLASLT},
    };
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strncmp(base, kinds[i].prefix, strlen(kinds[i].prefix)))
            return kinds[i].kind;
    return 0;
}

/* The NT_GNU_BUILD_ID note of a mapped object, from its PT_NOTE segments, as hex; "" if none. */
static void ct_build_id(const struct dl_phdr_info *info, char *out)
{
    out[0] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        size_t align = ph->p_align == 8 ? 8 : 4;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            ElfW(Nhdr) nh;
            memcpy(&nh, p, sizeof nh);
            size_t name_at = sizeof nh, desc_at = name_at + ((nh.n_namesz + align - 1) & ~(align - 1));
            size_t next = desc_at + ((nh.n_descsz + align - 1) & ~(align - 1));
            if (next > (size_t)(end - p))
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(p + name_at, "GNU", 4)) {
                size_t n = nh.n_descsz < CT_BUILD_ID_MAX ? nh.n_descsz : CT_BUILD_ID_MAX;
                for (size_t k = 0; k < n; k++)
                    snprintf(out + 2 * k, 3, "%02x", p[desc_at + k]);
                return;
            }
            p += next;
        }
    }
}

static int ct_shlib_described_already(uintptr_t base)
{
    for (unsigned i = 0; i < ct_shlib_ndescribed; i++)
        if (ct_shlib_described[i] == base)
            return 1;
    return 0;
}

/* Runs under the loader's lock: notes what to describe; the describing (realpath, interning)
 * happens after it. */
static int ct_shlib_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    ct_shlib_walk *w = arg;
    if (w->first) {
        w->first = 0;
        if (size < offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
            w->adds = 0; /* no count to compare: every scan walks all */
        else if (ct_shlib_scanned && ct_shlib_adds == info->dlpi_adds)
            return 1;
        else
            w->adds = info->dlpi_adds;
    }
    const char *name = info->dlpi_name;
    uint32_t kind = name && *name ? ct_shlib_kind(name) : 0;
    if (!kind || w->n == CT_SHLIB_MAX || ct_shlib_described_already(info->dlpi_addr))
        return 0;
    ct_shlib_found *f = &w->found[w->n++];
    f->base = info->dlpi_addr;
    f->kind = kind;
    snprintf(f->name, sizeof f->name, "%s", name);
    ct_build_id(info, f->id);
    return 0;
}

static ct_shlib_walk ct_walk; /* under ct_shlib_mu; too large for a thread's stack */

void ct_shlib_scan(ct_thread *th)
{
    int saved = errno;
    pthread_mutex_lock(&ct_shlib_mu);
    ct_walk.first = 1;
    ct_walk.n = 0;
    dl_iterate_phdr(ct_shlib_object, &ct_walk);
    if (!ct_walk.first) {
        ct_shlib_adds = ct_walk.adds;
        ct_shlib_scanned = ct_walk.adds != 0;
    }
    for (unsigned i = 0; i < ct_walk.n && ct_shlib_ndescribed < CT_SHLIB_MAX; i++) {
        ct_shlib_found *f = &ct_walk.found[i];
        char real[PATH_MAX];
        const char *path = realpath(f->name, real) ? real : f->name;
        ct_rec_shlib r = {f->kind, ct_intern(path, strlen(path)),
                          f->id[0] ? ct_intern(f->id, strlen(f->id)) : 0};
        ct_push(th, CT_REC_SHLIB, 0, ct_ticks(), &r, sizeof r);
        ct_shlib_described[ct_shlib_ndescribed++] = f->base;
    }
    pthread_mutex_unlock(&ct_shlib_mu);
    errno = saved;
}
