/* Modules, libraries, kernels and launches.
 *
 * Images accepted by cuModuleLoadData / cuModuleLoadFatBinary / cuLibraryLoadData:
 *   - nvcc fatbins (magic 0xBA55ED50), also behind a __fatBinC_Wrapper_t (magic 0x466243B1);
 *     entries may be LZ4 (nvcc -compress-mode=speed) or zstd (nvcc 13's default when it
 *     compresses) compressed. A cubin entry is usable on a device with the same major compute
 *     capability and a minor at least its own, a PTX entry on any device at least its
 *     version; a module from a fatbin with neither fails with CUDA_ERROR_NO_BINARY_FOR_GPU,
 *     a library loads and its kernels fail so when used (fc_load_image).
 *   - cubins (ELF): kernels are the STT_FUNC symbols flagged STO_CUDA_ENTRY; parameter sizes
 *     come from each kernel's .nv.info.<name> section (EIATTR_KPARAM_INFO); __device__ and
 *     __constant__ variables are the STT_OBJECT symbols of .nv.global* and .nv.constant3.
 *   - PTX text: kernels are the .entry directives, parameter sizes from their .param lists,
 *     variables the module-scope .global and .const declarations.
 *   - the text format of README.md ("fakecuda-module 1" then "kernel NAME [SIZE...]" lines).
 * No device code runs. A kernel's host implementation (fakecuda.h) is looked up when its
 * module is loaded. A CUkernel embeds its CUfunction as first member, so a CUkernel cast to
 * CUfunction launches, as CUDA 12+ allows. */
#define _GNU_SOURCE
#include "fc.h"

#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#define FC_FUNC_MAGIC 0xf0f0cafeu
#define FC_MOD_MAGIC 0x30d0e1e5u
#define FC_LIB_MAGIC 0x11b7a7e1u
#define FC_MAX_PARAMS 256

struct CUfunc_st {
    uint32_t magic;
    char *name;
    int nparams;                 /* -1: unknown */
    uint32_t param_size[FC_MAX_PARAMS], param_off[FC_MAX_PARAMS];
    fakecuda_host_kernel host;
    int64_t ns_override; /* FAKECUDA_KERNEL_NS, -1 if none */
    int64_t hold_ns;     /* FAKECUDA_LAUNCH_HOLD_NS, -1 if none ... */
    uint64_t hold_every, launches; /* ... for every hold_every-th launch */
    struct CUmod_st *mod;
    struct CUlib_st *lib;
    /* cuFuncSetAttribute / cuKernelSetAttribute */
    int max_dyn_smem;         /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    int non_portable_cluster; /* CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED */
    int nobinary;             /* of a library without code for the device: never runs */
};

/* A CUkernel is its function (first member), so either handle launches. */
struct CUkern_st {
    struct CUfunc_st f;
};

/* A __device__ or __constant__ variable: device memory allocated, and initialized from the
 * image, when first asked for (cuModuleGetGlobal / cuLibraryGetGlobal). */
typedef struct {
    char *name;
    size_t size;
    unsigned char *init; /* NULL: zero-initialized */
    CUdeviceptr dptr;    /* 0 until allocated */
    fc_ctx *ctx;
} fc_global;

typedef struct {
    int n;
    struct CUkern_st *k; /* array of n */
    int nglobals;
    fc_global *globals;
    pthread_mutex_t lock; /* global allocation */
} fc_kernels;

struct CUmod_st {
    uint32_t magic;
    fc_ctx *ctx;
    fc_kernels ks;
};

struct CUlib_st {
    uint32_t magic;
    fc_kernels ks;
};

/* ---- kernel cost model --------------------------------------------------------------- */

typedef struct {
    char pattern[128];
    int64_t ns;
    uint64_t every; /* FAKECUDA_LAUNCH_HOLD_NS's /N: every Nth launch (1: each) */
} fc_kernel_rule;

/* pattern=ns rules of FAKECUDA_KERNEL_NS (durations) and FAKECUDA_LAUNCH_HOLD_NS (holds) */
typedef struct {
    const char *var;
    int every_ok; /* pattern=ns/N allowed */
    fc_kernel_rule r[64];
    int n;
} fc_rules;

static fc_rules fc_dur_rules = {.var = "FAKECUDA_KERNEL_NS"};
static fc_rules fc_hold_rules = {.var = "FAKECUDA_LAUNCH_HOLD_NS", .every_ok = 1};

static void fc_rules_parse(fc_rules *rs, const char *spec)
{
    char *copy = strdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strrchr(tok, '=');
        char *end = NULL;
        long long ns = eq ? strtoll(eq + 1, &end, 10) : -1, every = 1;
        if (rs->every_ok && end && *end == '/' && end[1])
            every = strtoll(end + 1, &end, 10);
        if (!eq || eq == tok || !end || *end || ns < 0 || every < 1 || eq - tok >= 128)
            fc_fatal("%s: expected pattern=nanoseconds%s, found \"%s\"", rs->var,
                     rs->every_ok ? "[/N]" : "", tok);
        if (rs->n == (int)(sizeof rs->r / sizeof rs->r[0]))
            fc_fatal("%s: more than %d rules", rs->var, rs->n);
        memcpy(rs->r[rs->n].pattern, tok, (size_t)(eq - tok));
        rs->r[rs->n].pattern[eq - tok] = 0;
        rs->r[rs->n].ns = ns;
        rs->r[rs->n].every = (uint64_t)every;
        rs->n++;
    }
    free(copy);
}

void fc_kernel_ns_parse(const char *spec) { fc_rules_parse(&fc_dur_rules, spec); }
void fc_launch_hold_parse(const char *spec) { fc_rules_parse(&fc_hold_rules, spec); }

/* The first rule that matches the (mangled) name: as an fnmatch pattern if it has a wildcard,
 * else as a substring. */
static const fc_kernel_rule *fc_rules_match(const fc_rules *rs, const char *name)
{
    for (int i = 0; i < rs->n; i++) {
        const char *p = rs->r[i].pattern;
        int wild = strpbrk(p, "*?[") != NULL;
        if (wild ? fnmatch(p, name, 0) == 0 : strstr(name, p) != NULL)
            return &rs->r[i];
    }
    return NULL;
}

int64_t fc_kernel_ns_override(const char *name)
{
    const fc_kernel_rule *r = fc_rules_match(&fc_dur_rules, name);
    return r ? r->ns : -1;
}

/* Without an override: 2 us of launch and drain, plus 3 us per wave, a wave being as many
 * blocks as the SMs hold at once (by threads and blocks per SM). */
int64_t fc_kernel_ns(int64_t override, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                     unsigned by, unsigned bz, const fc_device_desc *d)
{
    if (override >= 0)
        return override;
    unsigned long long blocks = (unsigned long long)gx * gy * gz;
    unsigned threads = bx * by * bz;
    unsigned per_sm = (unsigned)d->max_threads_per_sm / (threads ? threads : 1);
    if (per_sm > (unsigned)d->max_blocks_per_sm)
        per_sm = (unsigned)d->max_blocks_per_sm;
    if (per_sm == 0)
        per_sm = 1;
    unsigned long long slots = (unsigned long long)per_sm * (unsigned)d->sm_count;
    unsigned long long waves = (blocks + slots - 1) / slots;
    return 2000 + (int64_t)waves * 3000;
}

/* ---- host kernels -------------------------------------------------------------------- */

static void *fc_host_libs[16];
static int fc_nhost_libs;
static pthread_once_t fc_host_once = PTHREAD_ONCE_INIT;

static void fc_host_libs_open(void)
{
    const char *e = getenv("FAKECUDA_HOST_KERNELS");
    if (!e || !*e)
        return;
    char *copy = strdup(e), *save = NULL;
    for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
        void *h = dlopen(tok, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            fc_fatal("FAKECUDA_HOST_KERNELS: cannot load \"%s\": %s", tok, dlerror());
        if (fc_nhost_libs == (int)(sizeof fc_host_libs / sizeof fc_host_libs[0]))
            fc_fatal("FAKECUDA_HOST_KERNELS: more than %d libraries", fc_nhost_libs);
        fc_host_libs[fc_nhost_libs++] = h;
    }
    free(copy);
}

static fakecuda_host_kernel fc_host_kernel_find(const char *name)
{
    pthread_once(&fc_host_once, fc_host_libs_open);
    size_t n = strlen(FAKECUDA_HOST_KERNEL_PREFIX) + strlen(name) + 1;
    char *sym = malloc(n);
    if (!sym)
        return NULL;
    snprintf(sym, n, "%s%s", FAKECUDA_HOST_KERNEL_PREFIX, name);
    void *p = NULL;
    for (int i = 0; i < fc_nhost_libs && !p; i++)
        p = dlsym(fc_host_libs[i], sym);
    if (!p)
        p = dlsym(RTLD_DEFAULT, sym);
    free(sym);
    fakecuda_host_kernel fn;
    memcpy(&fn, &p, sizeof fn);
    return fn;
}

/* ---- image parsing ------------------------------------------------------------------- */

typedef struct {
    const fc_device_desc *dev;
    fc_kernels ks;
    int usable;          /* a usable code entry was seen */
    int any_arch;        /* take every code entry, whatever its architecture (for names) */
} fc_parse;

static struct CUfunc_st *fc_kernel_add(fc_parse *ps, const char *name, size_t len)
{
    for (int i = 0; i < ps->ks.n; i++)
        if (strlen(ps->ks.k[i].f.name) == len && memcmp(ps->ks.k[i].f.name, name, len) == 0)
            return &ps->ks.k[i].f;
    struct CUkern_st *k = realloc(ps->ks.k, (size_t)(ps->ks.n + 1) * sizeof *k);
    if (!k)
        fc_fatal("out of host memory for kernel tables");
    ps->ks.k = k;
    struct CUfunc_st *f = &k[ps->ks.n++].f;
    memset(f, 0, sizeof *f);
    f->magic = FC_FUNC_MAGIC;
    f->name = strndup(name, len);
    f->nparams = -1;
    f->max_dyn_smem = 49152;
    return f;
}

static void fc_global_add(fc_parse *ps, const char *name, size_t size, const unsigned char *init)
{
    for (int i = 0; i < ps->ks.nglobals; i++)
        if (strcmp(ps->ks.globals[i].name, name) == 0)
            return;
    fc_global *g = realloc(ps->ks.globals, (size_t)(ps->ks.nglobals + 1) * sizeof *g);
    if (!g)
        fc_fatal("out of host memory for module globals");
    ps->ks.globals = g;
    g = &g[ps->ks.nglobals++];
    memset(g, 0, sizeof *g);
    g->name = strdup(name);
    g->size = size;
    if (init) {
        g->init = malloc(size);
        if (!g->init)
            fc_fatal("out of host memory for module globals");
        memcpy(g->init, init, size);
    }
}

static uint16_t fc_rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t fc_rd32(const unsigned char *p) { return fc_rd16(p) | (uint32_t)fc_rd16(p + 2) << 16; }
static uint64_t fc_rd64(const unsigned char *p) { return fc_rd32(p) | (uint64_t)fc_rd32(p + 4) << 32; }

/* .nv.info records: a 4-byte header (format, attribute, a 16-bit value or the size of a
 * payload that follows); EIATTR_KPARAM_INFO (0x17) payloads give each parameter's ordinal,
 * offset and size. */
static void fc_parse_nvinfo(struct CUfunc_st *f, const unsigned char *p, size_t n)
{
    size_t i = 0;
    int count = 0;
    while (i + 2 <= n) {
        unsigned fmt = p[i], attr = p[i + 1];
        size_t len;
        if (fmt >= 1 && fmt <= 3) /* no value, byte, half: all within the 4-byte header */
            len = 4;
        else if (fmt == 4 && i + 4 <= n)
            len = 4 + (size_t)fc_rd16(p + i + 2);
        else
            break;
        if (i + len > n)
            break;
        if (fmt == 4 && attr == 0x17 && len >= 16) {
            unsigned ord = fc_rd16(p + i + 8), off = fc_rd16(p + i + 10);
            uint32_t size = (fc_rd32(p + i + 12) >> 18) & 0x3fff;
            if (ord < FC_MAX_PARAMS) {
                f->param_off[ord] = off;
                f->param_size[ord] = size;
                if ((int)ord + 1 > count)
                    count = (int)ord + 1;
            }
        }
        i += len;
    }
    if (f->nparams < 0 || count > f->nparams)
        f->nparams = count;
}

static int fc_cubin_usable(unsigned arch, const fc_device_desc *d)
{
    return arch / 10 == (unsigned)d->cc_major && arch % 10 <= (unsigned)d->cc_minor;
}

/* The SM a cubin is for, from e_flags: CUDA 13's ELF ABI version 8 keeps it in bits 8-15
 * (sm_90: 0x6005a04); version 7 and older, still shipped inside cuBLASLt, in bits 0-7
 * (0x5a055a). */
static unsigned fc_cubin_arch(const unsigned char *img)
{
    uint32_t flags = fc_rd32(img + 48);
    return img[8] /* EI_ABIVERSION */ >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

static CUresult fc_parse_elf(fc_parse *ps, const unsigned char *img, size_t size, int check_arch)
{
    if (size < 64 || img[4] != 2 /* ELFCLASS64 */)
        return CUDA_ERROR_INVALID_IMAGE;
    if (check_arch && !ps->any_arch && !fc_cubin_usable(fc_cubin_arch(img), ps->dev))
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    uint64_t shoff = fc_rd64(img + 0x28);
    unsigned shentsize = fc_rd16(img + 0x3a), shnum = fc_rd16(img + 0x3c),
             shstrndx = fc_rd16(img + 0x3e);
    if (shentsize < 64 || shoff + (uint64_t)shnum * shentsize > size || shstrndx >= shnum)
        return CUDA_ERROR_INVALID_IMAGE;
#define SH(i) (img + shoff + (uint64_t)(i) * shentsize)
    const unsigned char *shstr = SH(shstrndx);
    uint64_t shstr_off = fc_rd64(shstr + 0x18), shstr_size = fc_rd64(shstr + 0x20);
    if (shstr_off + shstr_size > size)
        return CUDA_ERROR_INVALID_IMAGE;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = SH(i);
        if (fc_rd32(sh + 4) != 2 /* SHT_SYMTAB */)
            continue;
        uint64_t off = fc_rd64(sh + 0x18), sz = fc_rd64(sh + 0x20);
        unsigned link = fc_rd32(sh + 0x28);
        if (link >= shnum || off + sz > size)
            return CUDA_ERROR_INVALID_IMAGE;
        const unsigned char *strsh = SH(link);
        uint64_t stroff = fc_rd64(strsh + 0x18), strsz = fc_rd64(strsh + 0x20);
        if (stroff + strsz > size)
            return CUDA_ERROR_INVALID_IMAGE;
        for (uint64_t s = off; s + 24 <= off + sz; s += 24) {
            uint32_t name = fc_rd32(img + s);
            unsigned info = img[s + 4], other = img[s + 5], shndx = fc_rd16(img + s + 6);
            if (name >= strsz)
                continue;
            const char *nm = (const char *)img + stroff + name;
            if ((info & 0xf) == 2 /* STT_FUNC */ && (other & 0x10) /* STO_CUDA_ENTRY */) {
                fc_kernel_add(ps, nm, strnlen(nm, strsz - name));
            } else if ((info & 0xf) == 1 /* STT_OBJECT */ && shndx > 0 && shndx < shnum) {
                /* Variables live in .nv.global (zeroed), .nv.global.init or .nv.constant3
                 * (initialized from the section's bytes at the symbol's offset). */
                const unsigned char *vsh = SH(shndx);
                uint32_t vname = fc_rd32(vsh);
                const char *sec = vname < shstr_size ? (const char *)img + shstr_off + vname : "";
                uint64_t value = fc_rd64(img + s + 8), vsize = fc_rd64(img + s + 16);
                uint64_t voff = fc_rd64(vsh + 0x18), vsecsz = fc_rd64(vsh + 0x20);
                int nobits = fc_rd32(vsh + 4) == 8;
                if (strncmp(sec, ".nv.global", 10) != 0 && strcmp(sec, ".nv.constant3") != 0)
                    continue;
                if (!vsize || value + vsize > vsecsz || (!nobits && voff + vsecsz > size))
                    continue;
                fc_global_add(ps, nm, vsize, nobits ? NULL : img + voff + value);
            }
        }
    }
    /* Parameter layouts from .nv.info.<kernel>. */
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = SH(i);
        uint32_t nameoff = fc_rd32(sh);
        if (nameoff >= shstr_size)
            continue;
        const char *secname = (const char *)img + shstr_off + nameoff;
        if (strncmp(secname, ".nv.info.", 9) != 0)
            continue;
        uint64_t off = fc_rd64(sh + 0x18), sz = fc_rd64(sh + 0x20);
        if (off + sz > size)
            continue;
        for (int k = 0; k < ps->ks.n; k++)
            if (strcmp(ps->ks.k[k].f.name, secname + 9) == 0)
                fc_parse_nvinfo(&ps->ks.k[k].f, img + off, sz);
    }
#undef SH
    ps->usable = 1;
    return CUDA_SUCCESS;
}

/* Bytes of a PTX scalar type: ".u64" -> 8, ".f32" -> 4, ".b8" -> 1, ".pred" -> 1. */
static uint32_t fc_ptx_type_size(const char *t, size_t n)
{
    unsigned bits = n > 2 ? (unsigned)strtoul(t + 2, NULL, 10) : 0;
    return bits >= 8 ? bits / 8 : 1;
}

/* One initializer value of a PTX variable: 0fXXXXXXXX (f32 bits), 0dX..X (f64 bits) or an
 * integer, stored little-endian in elem bytes. */
static const char *fc_ptx_value(const char *q, const char *end, unsigned char *out, uint32_t elem)
{
    while (q < end && (*q == ' ' || *q == '\t' || *q == '{' || *q == ','))
        q++;
    char *e;
    unsigned long long bits;
    if (q + 1 < end && q[0] == '0' && (q[1] == 'f' || q[1] == 'd'))
        bits = strtoull(q + 2, &e, 16);
    else
        bits = (unsigned long long)strtoll(q, &e, 0);
    for (uint32_t i = 0; i < elem && i < 8; i++)
        out[i] = (unsigned char)(bits >> (8 * i));
    return e;
}

/* Module-scope ".global [.align N] .TYPE name[[DIM]] [= init];" and ".const ..." lines. */
static void fc_parse_ptx_globals(fc_parse *ps, const char *text, size_t size)
{
    const char *end = text + size;
    for (const char *line = text; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            eol = end;
        const char *q = line;
        if (strncmp(q, ".visible ", 9) == 0)
            q += 9;
        if (strncmp(q, ".global ", 8) == 0 || strncmp(q, ".const ", 7) == 0) {
            q = strchr(q, ' ') + 1;
            if (strncmp(q, ".align ", 7) == 0) {
                q += 7;
                while (q < eol && *q != ' ')
                    q++;
                q++;
            }
            const char *t = q;
            while (q < eol && *q != ' ')
                q++;
            uint32_t elem = fc_ptx_type_size(t, (size_t)(q - t));
            while (q < eol && *q == ' ')
                q++;
            const char *nm = q;
            while (q < eol && *q != '[' && *q != ' ' && *q != ';' && *q != '=')
                q++;
            char name[256];
            size_t nlen = (size_t)(q - nm) < sizeof name - 1 ? (size_t)(q - nm) : sizeof name - 1;
            memcpy(name, nm, nlen);
            name[nlen] = 0;
            size_t count = *q == '[' ? strtoul(q + 1, NULL, 10) : 1;
            size_t bytes = count * elem;
            const char *eq = memchr(q, '=', (size_t)(eol - q));
            unsigned char *init = bytes ? calloc(1, bytes) : NULL;
            if (init && eq) {
                const char *v = eq + 1;
                for (size_t i = 0; i < count && v < eol && *v != ';' && *v != '}'; i++)
                    v = fc_ptx_value(v, eol, init + i * elem, elem);
            }
            if (bytes && nlen)
                fc_global_add(ps, name, bytes, init);
            free(init);
        }
        line = eol + 1;
    }
}

/* ".entry NAME( .param .u64 a, .param .align 8 .b8 b[16] )" */
static void fc_parse_ptx(fc_parse *ps, const char *text, size_t size)
{
    const char *end = text + size, *p = text;
    while ((p = memmem(p, (size_t)(end - p), ".entry", 6)) != NULL) {
        p += 6;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        const char *nm = p;
        while (p < end && *p != '(' && *p != ' ' && *p != '\n' && *p != '\t')
            p++;
        struct CUfunc_st *f = fc_kernel_add(ps, nm, (size_t)(p - nm));
        const char *close = memchr(p, ')', (size_t)(end - p));
        if (!close)
            break;
        int n = 0;
        uint32_t off = 0;
        for (const char *q = p; (q = memmem(q, (size_t)(close - q), ".param", 6)) && n < FC_MAX_PARAMS;) {
            q += 6;
            while (q < close && *q == ' ')
                q++;
            uint32_t align = 0, sz;
            if (strncmp(q, ".align", 6) == 0) {
                align = (uint32_t)strtoul(q + 6, (char **)&q, 10);
                while (q < close && *q == ' ')
                    q++;
            }
            const char *t = q;
            while (q < close && *q != ' ')
                q++;
            sz = fc_ptx_type_size(t, (size_t)(q - t));
            const char *lb = memchr(q, '[', (size_t)(close - q));
            const char *comma = memchr(q, ',', (size_t)(close - q));
            if (lb && (!comma || lb < comma))
                sz *= (uint32_t)strtoul(lb + 1, NULL, 10);
            uint32_t a = align ? align : sz;
            off = (off + a - 1) / a * a;
            f->param_off[n] = off;
            f->param_size[n] = sz;
            off += sz;
            n++;
        }
        f->nparams = n;
        p = close;
    }
    fc_parse_ptx_globals(ps, text, size);
    ps->usable = 1;
}

/* LZ4 block format (no frame): sequences of literals and back-references. */
static long fc_lz4_block(const unsigned char *src, size_t n, unsigned char *dst, size_t cap)
{
    size_t i = 0, o = 0;
    while (i < n) {
        unsigned token = src[i++];
        size_t lit = token >> 4;
        if (lit == 15) {
            unsigned b;
            do {
                if (i >= n)
                    return -1;
                b = src[i++];
                lit += b;
            } while (b == 255);
        }
        if (i + lit > n || o + lit > cap)
            return -1;
        memcpy(dst + o, src + i, lit);
        i += lit;
        o += lit;
        if (i >= n)
            break;
        if (i + 2 > n)
            return -1;
        size_t off = fc_rd16(src + i);
        i += 2;
        size_t len = (token & 15) + 4;
        if ((token & 15) == 15) {
            unsigned b;
            do {
                if (i >= n)
                    return -1;
                b = src[i++];
                len += b;
            } while (b == 255);
        }
        if (off == 0 || off > o || o + len > cap)
            return -1;
        for (size_t k = 0; k < len; k++, o++)
            dst[o] = dst[o - off];
    }
    return (long)o;
}

#define FC_FATBIN_MAGIC 0xBA55ED50u
#define FC_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define FC_FATBIN_FLAG_LZ4 0x2000u
#define FC_FATBIN_FLAG_ZSTD 0x8000u

static CUresult fc_parse_fatbin(fc_parse *ps, const unsigned char *img)
{
    uint16_t hsize = fc_rd16(img + 6);
    uint64_t total = fc_rd64(img + 8);
    const unsigned char *p = img + hsize, *end = img + hsize + total;
    int saw_code = 0;
    while (p + 64 <= end) {
        unsigned kind = fc_rd16(p), ehsize = fc_rd32(p + 4);
        uint64_t payload = fc_rd64(p + 8);
        uint32_t csize = fc_rd32(p + 16);
        unsigned arch = fc_rd32(p + 28);
        uint64_t flags = fc_rd64(p + 40), usize = fc_rd64(p + 56);
        const unsigned char *data = p + ehsize;
        if (ehsize < 64 || data + payload > end)
            return CUDA_ERROR_INVALID_IMAGE;
        int is_ptx = kind == 1, is_elf = kind == 2;
        int usable = is_elf ? ps->any_arch || fc_cubin_usable(arch, ps->dev)
                            : is_ptx && (ps->any_arch ||
                                         arch <= (unsigned)(ps->dev->cc_major * 10 + ps->dev->cc_minor));
        saw_code |= is_ptx || is_elf;
        if (usable) {
            const unsigned char *code = data;
            size_t code_size = payload;
            unsigned char *buf = NULL;
            if (flags & (FC_FATBIN_FLAG_LZ4 | FC_FATBIN_FLAG_ZSTD)) {
                buf = malloc(usize + 1);
                if (!buf)
                    return CUDA_ERROR_OUT_OF_MEMORY;
                long got;
                if (flags & FC_FATBIN_FLAG_ZSTD) {
                    size_t r = ZSTD_decompress(buf, usize, data, csize ? csize : payload);
                    got = ZSTD_isError(r) ? -1 : (long)r;
                } else {
                    got = fc_lz4_block(data, csize ? csize : payload, buf, usize);
                }
                if (got < 0) {
                    free(buf);
                    return CUDA_ERROR_INVALID_IMAGE;
                }
                buf[got] = 0;
                code = buf;
                code_size = (size_t)got;
            }
            CUresult r = CUDA_SUCCESS;
            if (is_elf)
                r = fc_parse_elf(ps, code, code_size, 0);
            else
                fc_parse_ptx(ps, (const char *)code, strnlen((const char *)code, code_size));
            free(buf);
            if (r != CUDA_SUCCESS)
                return r;
        }
        p = data + payload;
    }
    if (!ps->usable)
        return saw_code ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_ERROR_INVALID_IMAGE;
    return CUDA_SUCCESS;
}

#define FC_TEXT_MAGIC "fakecuda-module 1"

static CUresult fc_parse_text(fc_parse *ps, const char *text)
{
    const char *line = text + strlen(FC_TEXT_MAGIC);
    while (*line) {
        const char *eol = strchrnul(line, '\n');
        const char *q = line;
        while (q < eol && (*q == ' ' || *q == '\t'))
            q++;
        if (q < eol && *q != '#') {
            if (strncmp(q, "kernel ", 7) != 0)
                return CUDA_ERROR_INVALID_IMAGE;
            q += 7;
            while (q < eol && *q == ' ')
                q++;
            const char *nm = q;
            while (q < eol && *q != ' ' && *q != '\t')
                q++;
            if (q == nm)
                return CUDA_ERROR_INVALID_IMAGE;
            struct CUfunc_st *f = fc_kernel_add(ps, nm, (size_t)(q - nm));
            int n = 0;
            uint32_t off = 0;
            while (q < eol && n < FC_MAX_PARAMS) {
                char *e;
                unsigned long sz = strtoul(q, &e, 10);
                if (e == q || (e < eol && *e != ' ' && *e != '\t'))
                    break;
                f->param_off[n] = off;
                f->param_size[n] = (uint32_t)sz;
                off += (uint32_t)sz;
                n++;
                q = e;
                while (q < eol && (*q == ' ' || *q == '\t'))
                    q++;
            }
            if (q < eol)
                return CUDA_ERROR_INVALID_IMAGE;
            f->nparams = n;
        }
        line = *eol ? eol + 1 : eol;
    }
    ps->usable = 1;
    return CUDA_SUCCESS;
}

static void fc_kernels_free(fc_kernels *ks)
{
    for (int i = 0; i < ks->n; i++) {
        ks->k[i].f.magic = 0;
        free(ks->k[i].f.name);
    }
    for (int i = 0; i < ks->nglobals; i++) {
        if (ks->globals[i].dptr)
            fc_mem_free_device((uintptr_t)ks->globals[i].dptr);
        free(ks->globals[i].name);
        free(ks->globals[i].init);
    }
    free(ks->k);
    free(ks->globals);
    memset(ks, 0, sizeof *ks);
}

/* cuModuleGetGlobal / cuLibraryGetGlobal: allocates and initializes on first use, in c. */
static CUresult fc_get_global(fc_kernels *ks, fc_ctx *c, const char *name, CUdeviceptr *dptr,
                              size_t *bytes)
{
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    fc_global *g = NULL;
    for (int i = 0; i < ks->nglobals && !g; i++)
        if (strcmp(ks->globals[i].name, name) == 0)
            g = &ks->globals[i];
    if (!g)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&ks->lock);
    if (!g->dptr) {
        r = fc_mem_alloc_device(c, g->size, &g->dptr);
        if (r == CUDA_SUCCESS) {
            void *p = (void *)(uintptr_t)g->dptr;
            if (g->init)
                memcpy(p, g->init, g->size);
            else
                memset(p, 0, g->size);
            g->ctx = c;
        }
    }
    pthread_mutex_unlock(&ks->lock);
    if (r != CUDA_SUCCESS)
        return r;
    if (dptr)
        *dptr = g->dptr;
    if (bytes)
        *bytes = g->size;
    return CUDA_SUCCESS;
}

static CUresult fc_parse_image(fc_parse *ps, const unsigned char *img)
{
    if (fc_rd32(img) == FC_FATBIN_MAGIC)
        return fc_parse_fatbin(ps, img);
    if (memcmp(img, "\177ELF", 4) == 0)
        return fc_parse_elf(ps, img, (size_t)fc_rd64(img + 0x28) +
                                         (size_t)fc_rd16(img + 0x3a) * fc_rd16(img + 0x3c), 1);
    if (strncmp((const char *)img, FC_TEXT_MAGIC, strlen(FC_TEXT_MAGIC)) == 0)
        return fc_parse_text(ps, (const char *)img);
    if (strstr((const char *)img, ".entry") || strstr((const char *)img, ".version")) {
        fc_parse_ptx(ps, (const char *)img, strlen((const char *)img));
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_IMAGE;
}

/* Parses any accepted image into kernels, resolving their host implementations. A library
 * (context-independent, loaded for whichever device runs it) that holds code only for other
 * architectures still loads, as on NVIDIA's driver, where an eager load of cuBLAS's sm_75-only
 * fatbins must not fail the whole library load: its kernels fail with
 * CUDA_ERROR_NO_BINARY_FOR_GPU when used (cuKernelGetFunction, a launch). A module (bound to
 * its context's device) fails to load, as documented for cuModuleLoadData. */
static CUresult fc_load_image(const void *image, int dev, int library, fc_kernels *out)
{
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    const unsigned char *img = image;
    if (fc_rd32(img) == FC_FATBIN_WRAPPER_MAGIC) {
        const void *data;
        memcpy(&data, img + 8, sizeof data);
        img = data;
        if (!img)
            return CUDA_ERROR_INVALID_IMAGE;
    }
    fc_parse ps = {.dev = fc_devs[dev].d};
    CUresult r = fc_parse_image(&ps, img);
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU && library) {
        fc_kernels_free(&ps.ks);
        ps = (fc_parse){.dev = fc_devs[dev].d, .any_arch = 1};
        r = fc_parse_image(&ps, img);
        for (int i = 0; r == CUDA_SUCCESS && i < ps.ks.n; i++)
            ps.ks.k[i].f.nobinary = 1;
    }
    if (r != CUDA_SUCCESS) {
        fc_kernels_free(&ps.ks);
        return r;
    }
    for (int i = 0; i < ps.ks.n; i++) {
        ps.ks.k[i].f.host = fc_host_kernel_find(ps.ks.k[i].f.name);
        ps.ks.k[i].f.ns_override = fc_kernel_ns_override(ps.ks.k[i].f.name);
        const fc_kernel_rule *hold = fc_rules_match(&fc_hold_rules, ps.ks.k[i].f.name);
        ps.ks.k[i].f.hold_ns = hold ? hold->ns : -1;
        ps.ks.k[i].f.hold_every = hold ? hold->every : 1;
    }
    pthread_mutex_init(&ps.ks.lock, NULL);
    *out = ps.ks;
    return CUDA_SUCCESS;
}

CUresult fc_image_check(const void *image, int dev)
{
    fc_kernels ks;
    CUresult r = fc_load_image(image, dev, 0, &ks);
    if (r == CUDA_SUCCESS)
        fc_kernels_free(&ks);
    return r;
}

static struct CUfunc_st *fc_kernels_find(fc_kernels *ks, const char *name)
{
    for (int i = 0; i < ks->n; i++)
        if (strcmp(ks->k[i].f.name, name) == 0)
            return &ks->k[i].f;
    return NULL;
}

/* ---- module API ---------------------------------------------------------------------- */

CUresult fc_module_load(CUmodule *mod, const void *image)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!mod)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    r = fc_load_image(image, c->dev, 0, &m->ks);
    if (r != CUDA_SUCCESS) {
        free(m);
        return r;
    }
    m->magic = FC_MOD_MAGIC;
    m->ctx = c;
    for (int i = 0; i < m->ks.n; i++)
        m->ks.k[i].f.mod = m;
    *mod = m;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    FC_ENTER("cuModuleLoadData");
    return fc_module_load(module, image);
}

FC_EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
                                              unsigned int numOptions, CUjit_option *options,
                                              void **optionValues)
{
    FC_ENTER("cuModuleLoadDataEx");
    if (numOptions && (!options || !optionValues))
        return CUDA_ERROR_INVALID_VALUE;
    return fc_module_load(module, image);
}

FC_EXPORT CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    FC_ENTER("cuModuleLoadFatBinary");
    return fc_module_load(module, fatCubin);
}

void *fc_read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *b = realloc(buf, 2 * cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = 0;
    if (size)
        *size = n;
    return buf;
}

FC_EXPORT CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    FC_ENTER("cuModuleLoad");
    if (!fname)
        return CUDA_ERROR_INVALID_VALUE;
    void *img = fc_read_whole(fname, NULL);
    if (!img)
        return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = fc_module_load(module, img);
    free(img);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    FC_ENTER_INIT("cuModuleGetFunction");
    if (!hmod || hmod->magic != FC_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUfunc_st *f = fc_kernels_find(&hmod->ks, name);
    if (!f)
        return CUDA_ERROR_NOT_FOUND;
    *hfunc = f;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                               const char *name)
{
    FC_ENTER_INIT("cuModuleGetGlobal_v2");
    if (!hmod || hmod->magic != FC_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    return fc_get_global(&hmod->ks, hmod->ctx, name, dptr, bytes);
}

FC_EXPORT CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr_v1 *dptr, unsigned int *bytes,
                                             CUmodule hmod, const char *name)
{
    FC_ENTER_INIT("cuModuleGetGlobal");
    if (!hmod || hmod->magic != FC_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    CUdeviceptr p;
    size_t n;
    CUresult r = fc_get_global(&hmod->ks, hmod->ctx, name, &p, &n);
    if (r == CUDA_SUCCESS && p > 0xffffffffu)
        return CUDA_ERROR_NOT_SUPPORTED; /* the 32-bit ABI cannot return this address */
    if (r == CUDA_SUCCESS && dptr)
        *dptr = (CUdeviceptr_v1)p;
    if (r == CUDA_SUCCESS && bytes)
        *bytes = (unsigned)n;
    return r;
}

FC_EXPORT CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    FC_ENTER_INIT("cuModuleGetFunctionCount");
    if (!mod || mod->magic != FC_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = (unsigned)mod->ks.n;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    FC_ENTER_INIT("cuModuleUnload");
    if (!hmod || hmod->magic != FC_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Queued launches may still name its functions. */
    fc_ctx_sync(hmod->ctx);
    hmod->magic = 0;
    fc_kernels_free(&hmod->ks);
    free(hmod);
    return CUDA_SUCCESS;
}

/* ---- library API --------------------------------------------------------------------- */

static CUresult fc_library_load(CUlibrary *library, const void *code)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!library)
        return CUDA_ERROR_INVALID_VALUE;
    /* Libraries are context-independent; code is checked against the current context's
     * device, or device 0. */
    fc_ctx *c = fc_ctx_current();
    struct CUlib_st *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = fc_load_image(code, c ? c->dev : 0, 1, &l->ks);
    if (r != CUDA_SUCCESS) {
        free(l);
        return r;
    }
    l->magic = FC_LIB_MAGIC;
    for (int i = 0; i < l->ks.n; i++)
        l->ks.k[i].f.lib = l;
    *library = l;
    return CUDA_SUCCESS;
}

/* CU_LIBRARY_BINARY_IS_PRESERVED takes no value, so values may be NULL when it is the only
 * option (cuBLASLt passes exactly that); it is invalid for a file. */
static CUresult fc_library_options(const CUlibraryOption *opts, void **values, unsigned n,
                                   int from_file)
{
    if (n && !opts)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == CU_LIBRARY_BINARY_IS_PRESERVED && !from_file)
            continue;
        if (opts[i] != CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE || !values)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
                                             CUjit_option *jitOptions, void **jitOptionsValues,
                                             unsigned int numJitOptions,
                                             CUlibraryOption *libraryOptions,
                                             void **libraryOptionValues,
                                             unsigned int numLibraryOptions)
{
    FC_ENTER("cuLibraryLoadData");
    if (numJitOptions && (!jitOptions || !jitOptionsValues))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_library_options(libraryOptions, libraryOptionValues, numLibraryOptions, 0);
    return r != CUDA_SUCCESS ? r : fc_library_load(library, code);
}

FC_EXPORT CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                                 CUjit_option *jitOptions,
                                                 void **jitOptionsValues,
                                                 unsigned int numJitOptions,
                                                 CUlibraryOption *libraryOptions,
                                                 void **libraryOptionValues,
                                                 unsigned int numLibraryOptions)
{
    FC_ENTER("cuLibraryLoadFromFile");
    if (!fileName || (numJitOptions && (!jitOptions || !jitOptionsValues)))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fc_library_options(libraryOptions, libraryOptionValues, numLibraryOptions, 1);
    if (r != CUDA_SUCCESS)
        return r;
    void *img = fc_read_whole(fileName, NULL);
    if (!img)
        return CUDA_ERROR_FILE_NOT_FOUND;
    r = fc_library_load(library, img);
    free(img);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library,
                                              const char *name)
{
    FC_ENTER_INIT("cuLibraryGetKernel");
    if (!library || library->magic != FC_LIB_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUfunc_st *f = fc_kernels_find(&library->ks, name);
    if (!f)
        return CUDA_ERROR_NOT_FOUND;
    *pKernel = (struct CUkern_st *)f;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                              const char *name)
{
    FC_ENTER("cuLibraryGetGlobal");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!library || library->magic != FC_LIB_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    return fc_get_global(&library->ks, c, name, dptr, bytes);
}

FC_EXPORT CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    FC_ENTER_INIT("cuLibraryGetKernelCount");
    if (!lib || lib->magic != FC_LIB_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = (unsigned)lib->ks.n;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    FC_ENTER_INIT("cuLibraryUnload");
    if (!library || library->magic != FC_LIB_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    fc_ctx *c = fc_ctx_current();
    if (c)
        fc_ctx_sync(c);
    library->magic = 0;
    fc_kernels_free(&library->ks);
    free(library);
    return CUDA_SUCCESS;
}

static struct CUfunc_st *fc_func(const void *h)
{
    const struct CUfunc_st *f = h;
    return f && f->magic == FC_FUNC_MAGIC ? (struct CUfunc_st *)f : NULL;
}

FC_EXPORT CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
    FC_ENTER_INIT("cuKernelGetLibrary");
    struct CUfunc_st *f = fc_func(kernel);
    if (!f || !f->lib)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!pLib)
        return CUDA_ERROR_INVALID_VALUE;
    *pLib = f->lib;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
    FC_ENTER_INIT("cuFuncGetModule");
    struct CUfunc_st *f = fc_func(hfunc);
    if (!f || !f->mod)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!hmod)
        return CUDA_ERROR_INVALID_VALUE;
    *hmod = f->mod;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    FC_ENTER("cuKernelGetFunction");
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    struct CUfunc_st *f = fc_func(kernel);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    if (f->nobinary)
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    *pFunc = f;
    return CUDA_SUCCESS;
}

static CUresult fc_get_name(const char **name, const void *h)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    struct CUfunc_st *f = fc_func(h);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    *name = f->name;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
    FC_ENTER("cuFuncGetName");
    return fc_get_name(name, hfunc);
}

FC_EXPORT CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
    FC_ENTER("cuKernelGetName");
    return fc_get_name(name, hfunc);
}

static CUresult fc_param_info(const void *h, size_t i, size_t *off, size_t *size)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    struct CUfunc_st *f = fc_func(h);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (f->nparams < 0 || i >= (size_t)f->nparams || (!off && !size))
        return CUDA_ERROR_INVALID_VALUE;
    if (off)
        *off = f->param_off[i];
    if (size)
        *size = f->param_size[i];
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex,
                                              size_t *paramOffset, size_t *paramSize)
{
    FC_ENTER("cuFuncGetParamInfo");
    return fc_param_info(func, paramIndex, paramOffset, paramSize);
}

FC_EXPORT CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
                                                size_t *paramOffset, size_t *paramSize)
{
    FC_ENTER("cuKernelGetParamInfo");
    return fc_param_info(kernel, paramIndex, paramOffset, paramSize);
}

/* Plausible compiled-kernel figures: no device code is analysed. */
static CUresult fc_func_attribute(int *pi, CUfunction_attribute a, const void *h, int dev)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    struct CUfunc_st *f = fc_func(h);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    const fc_device_desc *d = fc_devs[dev].d;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = d->cc_major * 10 + d->cc_minor; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->max_dyn_smem; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *pi = f->non_portable_cluster; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    FC_ENTER("cuFuncGetAttribute");
    fc_ctx *c = fc_ctx_current();
    return fc_func_attribute(pi, attrib, hfunc, c ? c->dev : 0);
}

FC_EXPORT CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib,
                                                CUkernel kernel, CUdevice dev)
{
    FC_ENTER("cuKernelGetAttribute");
    CUresult r = fc_check_device(dev);
    return r != CUDA_SUCCESS ? r : fc_func_attribute(pi, attrib, kernel, dev);
}

/* Settable attributes are kept per function (a CUkernel's for every device); the others are
 * accepted and have no effect on the simulation. */
static CUresult fc_func_set_attribute(const void *h, CUfunction_attribute attrib, int value,
                                      int dev)
{
    struct CUfunc_st *f = fc_func(h);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        if (value < 0 || value > fc_devs[dev].d->smem_per_block_optin)
            return CUDA_ERROR_INVALID_VALUE;
        f->max_dyn_smem = value;
    } else if (attrib == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
        f->non_portable_cluster = value != 0;
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    FC_ENTER_INIT("cuFuncSetAttribute");
    fc_ctx *c = fc_ctx_current();
    return fc_func_set_attribute(hfunc, attrib, value, c ? c->dev : 0);
}

FC_EXPORT CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                                CUkernel kernel, CUdevice dev)
{
    FC_ENTER_INIT("cuKernelSetAttribute");
    CUresult r = fc_check_device(dev);
    return r != CUDA_SUCCESS ? r : fc_func_set_attribute(kernel, attrib, val, dev);
}

FC_EXPORT CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    FC_ENTER_INIT("cuFuncSetCacheConfig");
    (void)config;
    return fc_func(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- launches ------------------------------------------------------------------------ */

typedef struct {
    unsigned grid[3], block[3], smem;
} fc_dims;

/* Copies the launch's arguments, as the real driver does at launch time, so the caller may
 * reuse them at once. Returns 0, or -1 when the layout is unknown. */
static int fc_snapshot_params(fc_op *op, const struct CUfunc_st *f, void **params, void **extra)
{
    if (extra) {
        const void *buf = NULL;
        size_t size = 0;
        for (void **e = extra; *e != CU_LAUNCH_PARAM_END; e += 2) {
            if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                buf = e[1];
            else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                size = *(size_t *)e[1];
        }
        op->staging = malloc(size ? size : 1);
        if (!op->staging)
            fc_fatal("out of host memory for launch arguments");
        if (buf)
            memcpy(op->staging, buf, size);
        op->u.kernel.params = NULL;
        return 0;
    }
    if (f->nparams < 0)
        return -1;
    size_t data = 0;
    for (int i = 0; i < f->nparams; i++)
        data += (f->param_size[i] + 15) / 16 * 16;
    char *blk = malloc((size_t)f->nparams * sizeof(void *) + data + 1);
    if (!blk)
        fc_fatal("out of host memory for launch arguments");
    void **arr = (void **)blk;
    char *q = blk + (size_t)f->nparams * sizeof(void *);
    for (int i = 0; i < f->nparams; i++) {
        memcpy(q, params[i], f->param_size[i]);
        arr[i] = q;
        q += (f->param_size[i] + 15) / 16 * 16;
    }
    op->staging = blk;
    op->u.kernel.params = arr;
    return 0;
}

static CUresult fc_launch(const void *h, fc_dims d, CUstream hs, void **params, void **extra,
                          int pt)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    struct CUfunc_st *f = fc_func(h);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (f->nobinary)
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    fc_stream *s;
    CUresult r = fc_stream_resolve(hs, pt, &s);
    if (r != CUDA_SUCCESS || (r = fc_capture_legacy_check(s)) != CUDA_SUCCESS)
        return r;
    const fc_device_desc *dev = fc_ctx_dev(s->ctx)->d;
    unsigned long long threads = (unsigned long long)d.block[0] * d.block[1] * d.block[2];
    if (!d.grid[0] || !d.grid[1] || !d.grid[2] || !threads || threads > 1024 ||
        d.block[2] > 64 || d.grid[1] > 65535 || d.grid[2] > 65535)
        return CUDA_ERROR_INVALID_VALUE;
    if (d.smem > (unsigned)dev->smem_per_block_optin)
        return CUDA_ERROR_INVALID_VALUE;
    if (params && extra)
        return CUDA_ERROR_INVALID_VALUE;
    if (f->nparams > 0 && !params && !extra)
        return CUDA_ERROR_INVALID_VALUE;
    fc_op *op = fc_op_new(FC_OP_KERNEL);
    op->u.kernel.fn = f->host;
    fakecuda_launch *l = &op->u.kernel.launch;
    memcpy(l->grid, d.grid, sizeof l->grid);
    memcpy(l->block, d.block, sizeof l->block);
    l->shared_bytes = d.smem;
    op->dur_ns = fc_kernel_ns(f->ns_override, d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1],
                              d.block[2], dev);
    /* the driver's host work before the GPU can see the launch (a real one takes microseconds
     * to check and encode it): the host is busy, the kernel not yet submitted */
    for (int64_t until = fc_now_ns() + fc_g.launch_ns; fc_g.launch_ns && fc_now_ns() < until;)
        ;
    int wait = 0;
    if (fc_g.instant) {
        op->u.kernel.params = extra ? NULL : params;
    } else if (f->host && fc_snapshot_params(op, f, params, extra) != 0) {
        /* Unknown layout: the host kernel must read the caller's arguments before the call
         * returns, so this launch is synchronous. */
        op->u.kernel.params = params;
        wait = 1;
    }
    uint64_t seq = fc_submit(s, op);
    if (wait)
        fc_stream_wait(s, seq);
    /* the call held up after the work was submitted: a preempted thread */
    if (f->hold_ns > 0 && __atomic_add_fetch(&f->launches, 1, __ATOMIC_RELAXED) % f->hold_every == 0) {
        struct timespec ts = {f->hold_ns / 1000000000, f->hold_ns % 1000000000};
        int saved = errno;
        while (nanosleep(&ts, &ts) != 0)
            ;
        errno = saved;
    }
    return CUDA_SUCCESS;
}

#define FC_DIMS(gx, gy, gz, bx, by, bz, sm) ((fc_dims){{gx, gy, gz}, {bx, by, bz}, sm})

FC_EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                          unsigned int gz, unsigned int bx, unsigned int by,
                                          unsigned int bz, unsigned int smem, CUstream hStream,
                                          void **kernelParams, void **extra)
{
    FC_ENTER("cuLaunchKernel");
    return fc_launch(f, FC_DIMS(gx, gy, gz, bx, by, bz, smem), hStream, kernelParams, extra, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                               unsigned int gz, unsigned int bx, unsigned int by,
                                               unsigned int bz, unsigned int smem,
                                               CUstream hStream, void **kernelParams, void **extra)
{
    FC_ENTER("cuLaunchKernel_ptsz");
    return fc_launch(f, FC_DIMS(gx, gy, gz, bx, by, bz, smem), hStream, kernelParams, extra, 1);
}

FC_EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gx,
                                                     unsigned int gy, unsigned int gz,
                                                     unsigned int bx, unsigned int by,
                                                     unsigned int bz, unsigned int smem,
                                                     CUstream hStream, void **kernelParams)
{
    FC_ENTER("cuLaunchCooperativeKernel");
    return fc_launch(f, FC_DIMS(gx, gy, gz, bx, by, bz, smem), hStream, kernelParams, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx,
                                                          unsigned int gy, unsigned int gz,
                                                          unsigned int bx, unsigned int by,
                                                          unsigned int bz, unsigned int smem,
                                                          CUstream hStream, void **kernelParams)
{
    FC_ENTER("cuLaunchCooperativeKernel_ptsz");
    return fc_launch(f, FC_DIMS(gx, gy, gz, bx, by, bz, smem), hStream, kernelParams, NULL, 1);
}

static CUresult fc_launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                             int pt)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (c->numAttrs && !c->attrs)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_launch(f, FC_DIMS(c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                                c->blockDimY, c->blockDimZ, c->sharedMemBytes),
                     c->hStream, params, extra, pt);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                            void **kernelParams, void **extra)
{
    FC_ENTER("cuLaunchKernelEx");
    return fc_launch_ex(config, f, kernelParams, extra, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                                 void **kernelParams, void **extra)
{
    FC_ENTER("cuLaunchKernelEx_ptsz");
    return fc_launch_ex(config, f, kernelParams, extra, 1);
}

/* ---- occupancy ------------------------------------------------------------------------ */

/* Blocks of blockSize threads, each with smem bytes of dynamic shared memory, resident on one
 * SM at once: limited by threads, blocks, registers (the 32 per thread fc_func_attribute
 * reports) and shared memory (with the 1 KiB per block the driver reserves from cc 8.0). */
static int fc_blocks_per_sm(const fc_device_desc *d, int blockSize, size_t smem)
{
    int n = d->max_threads_per_sm / blockSize;
    if (n > d->max_blocks_per_sm)
        n = d->max_blocks_per_sm;
    int regs = d->regs_per_sm / (32 * blockSize);
    if (n > regs)
        n = regs;
    size_t per_block = smem + (d->cc_major >= 8 ? 1024 : 0);
    if (per_block && (size_t)n > d->smem_per_sm / per_block)
        n = (int)(d->smem_per_sm / per_block);
    return n;
}

/* The context's device for an occupancy query on func; or an error. */
static CUresult fc_occupancy_dev(const void *func, int blockSize, const fc_device_desc **d)
{
    fc_ctx *c;
    CUresult r = fc_ctx_get(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!fc_func(func))
        return CUDA_ERROR_INVALID_HANDLE;
    if (blockSize <= 0 || blockSize > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    *d = fc_ctx_dev(c)->d;
    return CUDA_SUCCESS;
}

static CUresult fc_max_active_blocks(int *numBlocks, CUfunction func, int blockSize,
                                     size_t dynamicSMemSize)
{
    const fc_device_desc *d;
    CUresult r = fc_occupancy_dev(func, blockSize, &d);
    if (r != CUDA_SUCCESS)
        return r;
    if (!numBlocks)
        return CUDA_ERROR_INVALID_VALUE;
    *numBlocks = fc_blocks_per_sm(d, blockSize, dynamicSMemSize);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                                       CUfunction func,
                                                                       int blockSize,
                                                                       size_t dynamicSMemSize)
{
    FC_ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor");
    return fc_max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize);
}

FC_EXPORT CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags)
{
    FC_ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags");
    /* CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE changes nothing: there is no L1 to configure. */
    if (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
        return CUDA_ERROR_INVALID_VALUE;
    return fc_max_active_blocks(numBlocks, func, blockSize, dynamicSMemSize);
}

/* The most dynamic shared memory a block may use with numBlocks blocks on each SM. */
FC_EXPORT CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
                                                                   CUfunction func,
                                                                   int numBlocks, int blockSize)
{
    FC_ENTER("cuOccupancyAvailableDynamicSMemPerBlock");
    const fc_device_desc *d;
    CUresult r = fc_occupancy_dev(func, blockSize, &d);
    if (r != CUDA_SUCCESS)
        return r;
    if (!dynamicSmemSize || numBlocks <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fc_blocks_per_sm(d, blockSize, 0) < numBlocks) {
        *dynamicSmemSize = 0;
        return CUDA_SUCCESS;
    }
    size_t per = (size_t)d->smem_per_sm / (size_t)numBlocks - (d->cc_major >= 8 ? 1024 : 0);
    *dynamicSmemSize = per < (size_t)d->smem_per_block_optin ? per : (size_t)d->smem_per_block_optin;
    return CUDA_SUCCESS;
}

/* Clusters run inside one GPC. The model: TPCs of two SMs spread as evenly as they go over the
 * GPCs (H100 SXM5: 66 TPCs over 8 GPCs, so six GPCs of 16 SMs and two of 18). */
static int fc_gpcs(const fc_device_desc *d)
{
    return d->cc_major >= 9 ? 8 : 0;
}

FC_EXPORT CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
                                                        const CUlaunchConfig *config)
{
    FC_ENTER("cuOccupancyMaxActiveClusters");
    if (!config || !numClusters || (config->numAttrs && !config->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned block = config->blockDimX * config->blockDimY * config->blockDimZ;
    const fc_device_desc *d;
    CUresult r = fc_occupancy_dev(func, (int)block, &d);
    if (r != CUDA_SUCCESS)
        return r;
    unsigned cluster = 1;
    for (unsigned i = 0; i < config->numAttrs; i++)
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            cluster = config->attrs[i].value.clusterDim.x * config->attrs[i].value.clusterDim.y *
                      config->attrs[i].value.clusterDim.z;
    struct CUfunc_st *f = fc_func(func);
    unsigned max_cluster = f->non_portable_cluster ? 16 : 8;
    int gpcs = fc_gpcs(d);
    if (!gpcs || cluster == 0 || cluster > max_cluster)
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    int per_sm = fc_blocks_per_sm(d, (int)block, config->sharedMemBytes);
    int tpcs = d->sm_count / 2, n = 0;
    for (int g = 0; g < gpcs; g++) {
        int sms = 2 * (tpcs / gpcs + (g < tpcs % gpcs));
        n += sms * per_sm / (int)cluster;
    }
    *numClusters = n;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    FC_ENTER_INIT("cuModuleGetLoadingMode");
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = fc_g.eager ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}
