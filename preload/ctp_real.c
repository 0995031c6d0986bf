#define _GNU_SOURCE
#include "ctp_real.h"

#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctp_fds.h"
#include "ctp_fns.h"
#include "ctp_loader.h"
#include "ct_hash.h"

#define CTP_DRIVER_SONAME "libcuda.so.1"

static void *ctp_real_h;
static char ctp_real_file[PATH_MAX];
static char ctp_last_error[512];   /* why the last candidate was refused */
static pthread_once_t ctp_real_once = PTHREAD_ONCE_INIT;
static int ctp_real_status = -1;

/* Identity of this object's file, to refuse opening ourselves as "the real driver". */
static struct stat ctp_self_st;
static int ctp_self_st_ok;

static int ctp_is_self_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 1; /* unusable: treat like ourselves, i.e. skip */
    return ctp_self_st_ok && st.st_dev == ctp_self_st.st_dev && st.st_ino == ctp_self_st.st_ino;
}

/* dlopens path if it is a driver other than libcutrace; returns 1 on success. */
static int ctp_try(const char *path, char *tried, size_t tried_len)
{
    size_t used = strlen(tried);
    if (used + strlen(path) + 3 < tried_len)
        snprintf(tried + used, tried_len - used, "%s%s", used ? ", " : "", path);
    if (access(path, R_OK) != 0) {
        snprintf(ctp_last_error, sizeof ctp_last_error, "%s: not readable", path);
        return 0;
    }
    if (ctp_is_self_file(path)) {
        snprintf(ctp_last_error, sizeof ctp_last_error, "%s: is libcutrace itself", path);
        return 0;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(ctp_last_error, sizeof ctp_last_error, "%s", e ? e : path);
        return 0;
    }
    /* A copy of libcutrace under another inode (or a loader that matched our soname) would
     * hand back our own entry points: refuse it, or every call would recurse. */
    void *theirs = dlsym(h, "cuGetProcAddress_v2");
    if (!theirs || theirs == (void *)&cuGetProcAddress_v2) {
        snprintf(ctp_last_error, sizeof ctp_last_error, "%s: %s", path,
                 theirs ? "hands back libcutrace's own entry points" : "no cuGetProcAddress_v2");
        dlclose(h);
        return 0;
    }
    ctp_real_h = h;
    snprintf(ctp_real_file, sizeof ctp_real_file, "%s", path);
    return 1;
}

static int ctp_try_dir(const char *dir, size_t dirlen, char *tried, size_t tried_len)
{
    char path[PATH_MAX];
    if (dirlen == 0 || dirlen + sizeof CTP_DRIVER_SONAME + 1 > sizeof path)
        return 0;
    memcpy(path, dir, dirlen);
    path[dirlen] = '/';
    memcpy(path + dirlen + 1, CTP_DRIVER_SONAME, sizeof CTP_DRIVER_SONAME);
    return ctp_try(path, tried, tried_len);
}

/* The ld.so cache in glibc's current format ("glibc-ld.so.cache1.1"): a 48-byte header, nlibs
 * entries of 24 bytes (flags, key, value, osversion, hwcap), string offsets from the file
 * start. Entries for other ABIs fail dlopen and are skipped by ctp_try. */
static int ctp_try_ldcache(char *tried, size_t tried_len)
{
    int fd = ctp_fd_open("/etc/ld.so.cache", 0);
    if (fd < 0)
        return 0;
    struct stat st;
    int found = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 48) {
        size_t size = (size_t)st.st_size;
        const char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            if (memcmp(m, "glibc-ld.so.cache1.1", 20) == 0) {
                uint32_t nlibs;
                memcpy(&nlibs, m + 20, 4);
                for (uint64_t i = 0; i < nlibs && !found && 48 + (i + 1) * 24 <= size; i++) {
                    uint32_t key, value;
                    memcpy(&key, m + 48 + i * 24 + 4, 4);
                    memcpy(&value, m + 48 + i * 24 + 8, 4);
                    if (key >= size || value >= size ||
                        !memchr(m + key, 0, size - key) || !memchr(m + value, 0, size - value))
                        continue;
                    if (strcmp(m + key, CTP_DRIVER_SONAME) == 0)
                        found = ctp_try(m + value, tried, tried_len);
                }
            }
            munmap((void *)m, size);
        }
    }
    ctp_fd_drop(fd);
    return found;
}

static void ctp_real_find(void)
{
    Dl_info self;
    if (dladdr((void *)&ctp_real_open, &self) && self.dli_fname)
        ctp_self_st_ok = stat(self.dli_fname, &ctp_self_st) == 0;

    char tried[2048] = "";
    const char *forced = getenv("CUTRACE_LIBCUDA");
    if (forced && *forced) {
        if (!ctp_try(forced, tried, sizeof tried)) {
            fprintf(stderr, "cutrace: warning: CUTRACE_LIBCUDA=%s (cutrace run --libcuda): "
                    "expected a CUDA driver other than libcutrace that dlopen accepts, found: %s; "
                    "CUDA calls will fail\n", forced, ctp_last_error);
            return;
        }
        ctp_real_status = 0;
        return;
    }
    const char *llp = getenv("LD_LIBRARY_PATH");
    for (const char *p = llp; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (ctp_try_dir(p, len, tried, sizeof tried)) {
            ctp_real_status = 0;
            return;
        }
        p = end ? end + 1 : p + len;
    }
    if (ctp_try_ldcache(tried, sizeof tried)) {
        ctp_real_status = 0;
        return;
    }
    static const char *const dirs[] = {
        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
        "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/wsl/lib",
        "/run/nvidia/driver/usr/lib/x86_64-linux-gnu",
    };
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (ctp_try_dir(dirs[i], strlen(dirs[i]), tried, sizeof tried)) {
            ctp_real_status = 0;
            return;
        }
    fprintf(stderr, "cutrace: warning: expected the real CUDA driver %s, found none (looked at: "
            "%s%s%s); name it with cutrace run --libcuda /path/to/libcuda.so.1 (or "
            "CUTRACE_LIBCUDA=/path/to/libcuda.so.1 with LD_PRELOAD)\n", CTP_DRIVER_SONAME,
            tried[0] ? tried : "nothing", ctp_last_error[0] ? "; last: " : "", ctp_last_error);
}

/* A fork while the driver is loaded must wait for it (ctp_loader.h). */
static void ctp_real_open_once(void)
{
    ctp_loader_enter();
    ctp_real_find();
    ctp_loader_leave();
}

int ctp_real_open(void)
{
    pthread_once(&ctp_real_once, ctp_real_open_once);
    return ctp_real_status;
}

void *ctp_real_handle(void) { return ctp_real_h; }
const char *ctp_real_path(void) { return ctp_real_file; }

void *ctp_real_sym(const char *name)
{
    return ctp_real_h ? dlsym(ctp_real_h, name) : NULL;
}

void *ctp_lib_sym(const char *name, const char *soname)
{
    void *p = dlvsym(RTLD_NEXT, name, soname);
    if (!p) {
        void *h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlvsym(h, name, soname);
            if (!p)
                p = dlsym(h, name);
            dlclose(h);
        }
    }
    if (!p)
        p = dlsym(RTLD_NEXT, name);
    return p;
}

/* ---- the table of real entry points ---- */

void *ctp_real_fn[CTP_NFNS];
_Atomic int ctp_real_loaded;
extern void *const ctp_wrapper_of[CTP_NDRIVER];

/* Real entry point of a traced variant -> its function id, whose wrapper cuGetProcAddress answers
 * with. Built (and allocated) once by ctp_real_load_once, under pthread_once; only read
 * afterwards, by ctp_gpa_fix once its own ctp_real_load_all has returned, so readers take no lock
 * and never see the table change or grow. */
static ct_hash ctp_gpa_map;

static pthread_once_t ctp_load_once = PTHREAD_ONCE_INIT;

static void ctp_real_load_once(void)
{
    int saved = errno;
    if (ctp_real_open() == 0) {
        for (unsigned i = 0; i < CTP_NDRIVER; i++)
            ctp_real_fn[i] = ctp_real_sym(ctp_fns[i].name);
        /* Reserved first, so that no insertion can fail: the table is whole or empty. */
        if (ct_hash_reserve(&ctp_gpa_map, CTP_NDRIVER) < 0)
            fprintf(stderr, "cutrace: warning: no memory for the table of the driver's entry "
                            "points: those cuGetProcAddress returns are not traced\n");
        else
            for (unsigned i = 0; i < CTP_NDRIVER; i++)
                if (ctp_wrapper_of[i] && ctp_real_fn[i])
                    ct_hash_put(&ctp_gpa_map, (uintptr_t)ctp_real_fn[i], i);
    }
    atomic_store_explicit(&ctp_real_loaded, 1, memory_order_release);
    errno = saved;
}

void ctp_real_load_all(void)
{
    pthread_once(&ctp_load_once, ctp_real_load_once);
}

void *ctp_rt_resolve_slow(unsigned fid)
{
    int saved = errno;
    void *p = ctp_lib_sym(ctp_fns[fid].name, ctp_fn_soname[fid]);
    if (p)
        __atomic_store_n(&ctp_real_fn[fid], p, __ATOMIC_RELAXED);
    errno = saved;
    return p;
}

void ctp_gpa_fix(int ok, void **pfn)
{
    if (!ok || !pfn || !*pfn)
        return;
    ctp_real_load_all();
    const uint32_t *fid = ct_hash_find(&ctp_gpa_map, (uintptr_t)*pfn);
    if (fid)
        *pfn = ctp_wrapper_of[*fid];
}
