/* Images: parsing what cuModuleLoadData / cuModuleLoadFatBinary / cuLibraryLoadData take into a
 * module's kernels and globals. Apart from fc_module.c because reading ELF, fatbin, PTX and the
 * text format is one job and the API over modules and libraries another.
 *
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
 * module is loaded. */
#define _GNU_SOURCE
#include "fc_module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

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

void fc_kernels_free(fc_kernels *ks)
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
CUresult fc_get_global(fc_kernels *ks, fc_ctx *c, const char *name, CUdeviceptr *dptr,
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
CUresult fc_load_image(const void *image, int dev, int library, fc_kernels *out)
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
        ps.ks.k[i].f.hold_before = hold && hold->before;
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

struct CUfunc_st *fc_kernels_find(fc_kernels *ks, const char *name)
{
    for (int i = 0; i < ks->n; i++)
        if (strcmp(ks->k[i].f.name, name) == 0)
            return &ks->k[i].f;
    return NULL;
}
