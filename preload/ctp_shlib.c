/* SHLIB records (see ctp_shlib.h). */
#define _GNU_SOURCE
#include "ctp_shlib.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctp_clock.h"
#include "ctp_emit.h"
#include "ctp_loader.h"
#include "ctp_maps.h"

/* A process maps a handful of these; more than this are not described. */
#define CTP_SHLIB_MAX 32
/* Build ids are 20 bytes (SHA-1) in practice; longer ones are cut. */
#define CTP_BUILD_ID_MAX 64

typedef struct {
    uintptr_t base;
    uint32_t kind;
    char name[PATH_MAX];
    char id[2 * CTP_BUILD_ID_MAX + 1];
} ctp_shlib_found;

typedef struct {
    int first;
    unsigned long long adds;
    unsigned n;
    ctp_shlib_found found[CTP_SHLIB_MAX];
} ctp_shlib_walk;

static pthread_mutex_t ctp_shlib_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long ctp_shlib_adds; /* the loader's count of objects added, at the last scan */
static int ctp_shlib_scanned;
static uintptr_t ctp_shlib_described[CTP_SHLIB_MAX];
static unsigned ctp_shlib_ndescribed;

void ctp_shlib_reset(void)
{
    pthread_mutex_lock(&ctp_shlib_mu);
    ctp_shlib_scanned = 0;
    ctp_shlib_ndescribed = 0;
    pthread_mutex_unlock(&ctp_shlib_mu);
}

void ctp_shlib_fork_child(void)
{
    pthread_mutex_init(&ctp_shlib_mu, NULL);
}

/* Matched on the file name in any directory, with any version suffix. */
static uint32_t ct_shlib_kind(const char *path)
{
    static const struct { const char *prefix; uint32_t kind; } kinds[] = {
        {"libcudart.so", CT_SHLIB_CUDART}, {"libcuda.so", CT_SHLIB_CUDA},
        {"libcublas.so", CT_SHLIB_CUBLAS}, {"libcublasLt.so", CT_SHLIB_CUBLASLT},
        {"libcudnn", CT_SHLIB_CUDNN}, /* libcudnn.so.9 and the libraries it loads as needed */
    };
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strncmp(base, kinds[i].prefix, strlen(kinds[i].prefix)))
            return kinds[i].kind;
    return 0;
}

/* The NT_GNU_BUILD_ID note of a mapped object, from its PT_NOTE segments, as hex; "" if none. */
static void ctp_build_id(const struct dl_phdr_info *info, char *out)
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
                size_t n = nh.n_descsz < CTP_BUILD_ID_MAX ? nh.n_descsz : CTP_BUILD_ID_MAX;
                for (size_t k = 0; k < n; k++)
                    snprintf(out + 2 * k, 3, "%02x", p[desc_at + k]);
                return;
            }
            p += next;
        }
    }
}

static int ctp_shlib_described_already(uintptr_t base)
{
    for (unsigned i = 0; i < ctp_shlib_ndescribed; i++)
        if (ctp_shlib_described[i] == base)
            return 1;
    return 0;
}

/* Runs under the loader's lock: notes what to describe; the describing (realpath, interning)
 * happens after it. */
static int ctp_shlib_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    ctp_shlib_walk *w = arg;
    if (w->first) {
        w->first = 0;
        if (size < offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
            w->adds = 0; /* no count to compare: every scan walks all */
        else if (ctp_shlib_scanned && ctp_shlib_adds == info->dlpi_adds)
            return 1;
        else
            w->adds = info->dlpi_adds;
    }
    const char *name = info->dlpi_name;
    uint32_t kind = name && *name ? ct_shlib_kind(name) : 0;
    if (!kind || w->n == CTP_SHLIB_MAX || ctp_shlib_described_already(info->dlpi_addr))
        return 0;
    ctp_shlib_found *f = &w->found[w->n++];
    f->base = info->dlpi_addr;
    f->kind = kind;
    snprintf(f->name, sizeof f->name, "%s", name);
    ctp_build_id(info, f->id);
    return 0;
}

static ctp_shlib_walk ctp_walk; /* under ctp_shlib_mu; too large for a thread's stack */

void ctp_shlib_scan(ctp_thread *th)
{
    int saved = errno;
    pthread_mutex_lock(&ctp_shlib_mu);
    ctp_walk.first = 1;
    ctp_walk.n = 0;
    ctp_loader_walk(ctp_shlib_object, &ctp_walk);
    if (!ctp_walk.first) {
        ctp_shlib_adds = ctp_walk.adds;
        ctp_shlib_scanned = ctp_walk.adds != 0;
    }
    for (unsigned i = 0; i < ctp_walk.n && ctp_shlib_ndescribed < CTP_SHLIB_MAX; i++) {
        ctp_shlib_found *f = &ctp_walk.found[i];
        char real[PATH_MAX];
        const char *path = realpath(f->name, real) ? real : f->name;
        ct_rec_shlib r = {f->kind, ctp_intern(path, strlen(path)),
                          f->id[0] ? ctp_intern(f->id, strlen(f->id)) : 0};
        ctp_push_now(th, CT_REC_SHLIB, &r, sizeof r);
        ctp_shlib_described[ctp_shlib_ndescribed++] = f->base;
    }
    pthread_mutex_unlock(&ctp_shlib_mu);
    errno = saved;
}
