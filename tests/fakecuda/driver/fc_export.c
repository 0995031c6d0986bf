/* cuGetExportTable: the private function tables NVIDIA's runtime (libcudart, and the copies of
 * it linked into cuBLAS, cuBLASLt, cuDNN, NCCL...) fetches from the driver by UUID. A driver
 * that refuses them makes every runtime call fail with 801, so NVIDIA's own runtime could not
 * run on the simulation at all. What each table must hold, and in which order the runtime asks,
 * was measured with CUDA 13.0 and 13.2 (/work/shared/reference/nvidia-private-driver-tables.md);
 * the table names and the meaning of their slots are ZLUDA's (github.com/vosen/ZLUDA, MIT or
 * Apache-2.0; dark_api/src/lib.rs and zluda/src/impl/driver.rs), implemented here on our own.
 *
 * Slot 0 holds the table's size in bytes except in CONTEXT_LOCAL_STORAGE, which has none. A
 * slot whose meaning is unknown answers CUDA_ERROR_NOT_SUPPORTED (logged like any unsupported
 * call with FAKECUDA_TRACE_UNSUPPORTED) instead of being a null pointer to crash on.
 * Context-local storage is real: values per (context, key), and their destructors run when the
 * context is destroyed (cuCtxDestroy, the primary context's reset or last release). */
#define _GNU_SOURCE
#include "fc.h"
#include "fc_integrity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*fc_cls_dtor)(CUcontext ctx, void *key, void *value);

struct fc_cls_entry {
    struct fc_cls_entry *next;
    void *key, *value;
    fc_cls_dtor dtor;
};

#define FC_SLOT(fn) ((const void *)(fn))
#define FC_SIZE(n) ((const void *)(uintptr_t)((n) * sizeof(void *)))

/* A slot nobody has seen used: says which one if it ever is. */
#define FC_UNKNOWN(table, idx)                                                   \
    static CUresult fc_unknown_##table##_##idx(void)                            \
    {                                                                            \
        return fc_unsupported("cuGetExportTable " #table "[" #idx "]");         \
    }

static CUresult fc_ctx_arg(CUcontext ctx, fc_ctx **out)
{
    if (!ctx)
        return fc_ctx_get(out);
    if (!fc_ctx_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = ctx;
    return CUDA_SUCCESS;
}

/* ---- CUDART_INTERFACE 6bd5fb6c-5bf4-e74a-8987-d93912fd9df9 ---------------------------- */

/* [1]: a module from a __fatBinC_Wrapper_t, in the current context. */
static CUresult fc_rt_module_from_wrapper(CUmodule *mod, const void *wrapper)
{
    return fc_module_load(mod, wrapper);
}

/* [2]: the device's primary context, neither retained nor activated (the runtime retains it
 * through cuDevicePrimaryCtxRetain). */
static CUresult fc_rt_primary_ctx(CUcontext *pctx, CUdevice dev)
{
    CUresult r = fc_check_device(dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fc_primary_handle(dev);
    return *pctx ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* [6] and [8]: module loaders with extra arguments, which plain fatbins leave empty. */
static CUresult fc_rt_module_ext1(CUmodule *mod, const void *wrapper, void *a3, void *a4,
                                  unsigned a5)
{
    if (a3 || a4 || a5)
        return fc_unsupported("cuGetExportTable CUDART_INTERFACE[6] with options");
    return fc_module_load(mod, wrapper);
}

static CUresult fc_rt_module_ext2(const void *fatbin, CUmodule *mod, void *a3, void *a4,
                                  unsigned a5)
{
    if (a3 || a4 || a5)
        return fc_unsupported("cuGetExportTable CUDART_INTERFACE[8] with options");
    return fc_module_load(mod, fatbin);
}

static void fc_rt_noop(size_t arg) /* [7] */
{
    (void)arg;
}

static CUresult fc_rt_load_compilers(void) /* [12]: there are none to load */
{
    return CUDA_SUCCESS;
}

FC_UNKNOWN(CUDART_INTERFACE, 3)
FC_UNKNOWN(CUDART_INTERFACE, 4)
FC_UNKNOWN(CUDART_INTERFACE, 5)
FC_UNKNOWN(CUDART_INTERFACE, 9)
FC_UNKNOWN(CUDART_INTERFACE, 10)
FC_UNKNOWN(CUDART_INTERFACE, 11)

static const void *const fc_cudart_interface[13] = {
    FC_SIZE(13),
    FC_SLOT(fc_rt_module_from_wrapper),
    FC_SLOT(fc_rt_primary_ctx),
    FC_SLOT(fc_unknown_CUDART_INTERFACE_3),
    FC_SLOT(fc_unknown_CUDART_INTERFACE_4),
    FC_SLOT(fc_unknown_CUDART_INTERFACE_5),
    FC_SLOT(fc_rt_module_ext1),
    FC_SLOT(fc_rt_noop),
    FC_SLOT(fc_rt_module_ext2),
    FC_SLOT(fc_unknown_CUDART_INTERFACE_9),
    FC_SLOT(fc_unknown_CUDART_INTERFACE_10),
    FC_SLOT(fc_unknown_CUDART_INTERFACE_11),
    FC_SLOT(fc_rt_load_compilers),
};

/* ---- TOOLS_TLS 42d85a81-23f6-cb47-8298-f6e78a3aecdc ----------------------------------- */

/* [2]: the calling thread's current context. cuBLASLt finds its kernel registry by it before
 * every GEMM; an answer that writes nothing makes it reject every kernel. */
static CUresult fc_tls_current_ctx(CUcontext *out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    *out = fc_ctx_current();
    return CUDA_SUCCESS;
}

FC_UNKNOWN(TOOLS_TLS, 1)
FC_UNKNOWN(TOOLS_TLS, 3)

static const void *const fc_tools_tls[4] = {
    FC_SIZE(4),
    FC_SLOT(fc_unknown_TOOLS_TLS_1),
    FC_SLOT(fc_tls_current_ctx),
    FC_SLOT(fc_unknown_TOOLS_TLS_3),
};

/* ---- TOOLS_RUNTIME_CALLBACK_HOOKS a094798c-2e74-2e74-93f2-0800200c0a66 ---------------- */

/* [2] and [6]: buffers the runtime reads hook settings from; zeroed means no tool attached. */
static uint32_t fc_hooks_buf2[1024], fc_hooks_buf6[14];

static void fc_hooks_buffer2(void **p, size_t *n)
{
    *p = fc_hooks_buf2;
    *n = sizeof fc_hooks_buf2 / sizeof fc_hooks_buf2[0];
}

static void fc_hooks_buffer6(void **p, size_t *n)
{
    *p = fc_hooks_buf6;
    *n = sizeof fc_hooks_buf6 / sizeof fc_hooks_buf6[0];
}

FC_UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 1)
FC_UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 3)
FC_UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 4)
FC_UNKNOWN(TOOLS_RUNTIME_CALLBACK_HOOKS, 5)

static const void *const fc_callback_hooks[7] = {
    FC_SIZE(7),
    FC_SLOT(fc_unknown_TOOLS_RUNTIME_CALLBACK_HOOKS_1),
    FC_SLOT(fc_hooks_buffer2),
    FC_SLOT(fc_unknown_TOOLS_RUNTIME_CALLBACK_HOOKS_3),
    FC_SLOT(fc_unknown_TOOLS_RUNTIME_CALLBACK_HOOKS_4),
    FC_SLOT(fc_unknown_TOOLS_RUNTIME_CALLBACK_HOOKS_5),
    FC_SLOT(fc_hooks_buffer6),
};

/* ---- CONTEXT_LOCAL_STORAGE_INTERFACE_V0301 c693336e-1121-df11-a8c3-68f355d89593 ------- */

/* [0]: sets (or replaces, without calling the old destructor) the value of key in ctx (NULL:
 * the current context). */
static CUresult fc_cls_put(CUcontext ctx, void *key, void *value, fc_cls_dtor dtor)
{
    fc_ctx *c;
    CUresult r = fc_ctx_arg(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&c->lock);
    struct fc_cls_entry *e = c->cls;
    while (e && e->key != key)
        e = e->next;
    if (!e && (e = calloc(1, sizeof *e))) {
        e->key = key;
        e->next = c->cls;
        c->cls = e;
    }
    if (e) {
        e->value = value;
        e->dtor = dtor;
    }
    pthread_mutex_unlock(&c->lock);
    return e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* [1]: forgets key (its destructor is not called). */
static CUresult fc_cls_delete(CUcontext ctx, void *key)
{
    fc_ctx *c;
    CUresult r = fc_ctx_arg(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&c->lock);
    struct fc_cls_entry **pp = &c->cls, *e;
    while ((e = *pp) && e->key != key)
        pp = &e->next;
    if (e)
        *pp = e->next;
    pthread_mutex_unlock(&c->lock);
    free(e);
    return CUDA_SUCCESS;
}

/* [2]: the value of key; CUDA_ERROR_INVALID_HANDLE if there is none. */
static CUresult fc_cls_get(void **value, CUcontext ctx, void *key)
{
    fc_ctx *c;
    CUresult r = fc_ctx_arg(ctx, &c);
    if (r != CUDA_SUCCESS)
        return r;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&c->lock);
    struct fc_cls_entry *e = c->cls;
    while (e && e->key != key)
        e = e->next;
    if (e)
        *value = e->value;
    pthread_mutex_unlock(&c->lock);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

void fc_cls_destroy(fc_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    struct fc_cls_entry *e = c->cls;
    c->cls = NULL;
    pthread_mutex_unlock(&c->lock);
    /* Unlocked: a destructor may call the driver. */
    while (e) {
        struct fc_cls_entry *next = e->next;
        if (e->dtor)
            e->dtor(c, e->key, e->value);
        free(e);
        e = next;
    }
}

static const void *const fc_context_local_storage[3] = {
    FC_SLOT(fc_cls_put),
    FC_SLOT(fc_cls_delete),
    FC_SLOT(fc_cls_get),
};

/* ---- CONTEXT_CHECKS 263e8860-7cd2-6143-92f6-bbd5006dfa7e ------------------------------ */

/* [2] and [3]: checks of state a simulated context never has. */
static CUresult fc_checks_context(CUcontext ctx, uint32_t *result, const void **unused)
{
    (void)ctx, (void)unused;
    if (result)
        *result = 0;
    return CUDA_SUCCESS;
}

static uint32_t fc_checks_3(void)
{
    return 0;
}

FC_UNKNOWN(CONTEXT_CHECKS, 1)

static const void *const fc_context_checks[4] = {
    FC_SIZE(4),
    FC_SLOT(fc_unknown_CONTEXT_CHECKS_1),
    FC_SLOT(fc_checks_context),
    FC_SLOT(fc_checks_3),
};

/* ---- INTEGRITY_CHECK d4082055-bde6-704b-8d34-ba123c66e1f2 ----------------------------- */

static CUresult fc_integrity_check(uint32_t version, uint64_t seconds, uint64_t out[2]);

FC_UNKNOWN(INTEGRITY_CHECK, 2)

static const void *const fc_integrity_table[3] = {
    FC_SIZE(3),
    FC_SLOT(fc_integrity_check),
    FC_SLOT(fc_unknown_INTEGRITY_CHECK_2),
};

/* [1]: the runtime recomputes this from its side of the same facts (fc_integrity.h). */
static CUresult fc_integrity_check(uint32_t version, uint64_t seconds, uint64_t out[2])
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    fc_integrity_input in = {
        .driver_version = CUDA_VERSION,
        .version = version,
        .pid = (uint32_t)getpid(),
        .tid = (uint32_t)pthread_self(),
        .cudart_table = (uintptr_t)fc_cudart_interface,
        .check_table = (uintptr_t)fc_integrity_table,
        .check_fn = (uintptr_t)fc_integrity_table[1],
        .seconds = seconds,
    };
    fc_integrity_device devs[FC_MAX_DEVICES];
    for (int i = 0; i < fc_g.ndev; i++) {
        CUuuid u;
        fc_device_uuid(&u, i);
        memcpy(devs[i].uuid, u.bytes, 16);
        const fc_device_desc *d = fc_devs[i].d;
        int v;
        fc_device_attribute(&v, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d), devs[i].pci_domain = v;
        fc_device_attribute(&v, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d), devs[i].pci_bus = v;
        fc_device_attribute(&v, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d), devs[i].pci_device = v;
    }
    fc_integrity_hash(&in, devs, fc_g.ndev, out);
    return CUDA_SUCCESS;
}

/* ---- 21318c60-9714-3248-8ca6-41ff7324c8f2 (unnamed; cuBLASLt) ------------------------- */

/* [4](ctx, out): the context's id, as cuCtxGetId. */

FC_UNKNOWN(UNNAMED_21318c60, 1)
FC_UNKNOWN(UNNAMED_21318c60, 2)
FC_UNKNOWN(UNNAMED_21318c60, 3)
FC_UNKNOWN(UNNAMED_21318c60, 5)
FC_UNKNOWN(UNNAMED_21318c60, 6)
FC_UNKNOWN(UNNAMED_21318c60, 7)

static const void *const fc_unnamed_21318c60[8] = {
    FC_SIZE(8),
    FC_SLOT(fc_unknown_UNNAMED_21318c60_1),
    FC_SLOT(fc_unknown_UNNAMED_21318c60_2),
    FC_SLOT(fc_unknown_UNNAMED_21318c60_3),
    FC_SLOT(fc_ctx_id),
    FC_SLOT(fc_unknown_UNNAMED_21318c60_5),
    FC_SLOT(fc_unknown_UNNAMED_21318c60_6),
    FC_SLOT(fc_unknown_UNNAMED_21318c60_7),
};

/* ---- 1734dc26-800d-4745-8726-c0f1e7dd8bca (unnamed; CUDA 13.0's cuBLASLt) ------------- */

/* cuBLASLt's half-precision heuristics fetch this table, ignore whether that worked and call
 * [4](void **out, void *out2): a refused table is a call through NULL. With a table whose
 * slots refuse, [4]'s nonzero answer sends cuBLASLt down its fallback path. What the slots do
 * on NVIDIA's driver is unknown. */
FC_UNKNOWN(UNNAMED_1734dc26, 1)
FC_UNKNOWN(UNNAMED_1734dc26, 2)
FC_UNKNOWN(UNNAMED_1734dc26, 3)
FC_UNKNOWN(UNNAMED_1734dc26, 4)
FC_UNKNOWN(UNNAMED_1734dc26, 5)

static const void *const fc_unnamed_1734dc26[6] = {
    FC_SIZE(6),
    FC_SLOT(fc_unknown_UNNAMED_1734dc26_1),
    FC_SLOT(fc_unknown_UNNAMED_1734dc26_2),
    FC_SLOT(fc_unknown_UNNAMED_1734dc26_3),
    FC_SLOT(fc_unknown_UNNAMED_1734dc26_4),
    FC_SLOT(fc_unknown_UNNAMED_1734dc26_5),
};

/* ---- the lookup ----------------------------------------------------------------------- */

static const struct {
    const char *name;
    unsigned char uuid[16];
    const void *const *table; /* NULL: refused with CUDA_ERROR_NOT_FOUND */
} fc_export_tables[] = {
    {"CUDART_INTERFACE",
     {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9},
     fc_cudart_interface},
    {"TOOLS_TLS",
     {0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc},
     fc_tools_tls},
    {"TOOLS_RUNTIME_CALLBACK_HOOKS",
     {0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66},
     fc_callback_hooks},
    {"CONTEXT_LOCAL_STORAGE_INTERFACE_V0301",
     {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     fc_context_local_storage},
    {"CONTEXT_CHECKS",
     {0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     fc_context_checks},
    {"INTEGRITY_CHECK",
     {0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2},
     fc_integrity_table},
    {"21318c60",
     {0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2},
     fc_unnamed_21318c60},
    {"1734dc26",
     {0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca},
     fc_unnamed_1734dc26},
    /* A table of stubs here changes how NVIDIA's runtime starts; refusing it is what works. */
    {"f8cff951",
     {0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9},
     NULL},
};

FC_EXPORT CUresult CUDAAPI cuGetExportTable(const void **ppExportTable,
                                            const CUuuid *pExportTableId)
{
    FC_ENTER("cuGetExportTable");
    if (!ppExportTable || !pExportTableId)
        return CUDA_ERROR_INVALID_VALUE;
    *ppExportTable = NULL;
    for (size_t i = 0; i < sizeof fc_export_tables / sizeof fc_export_tables[0]; i++) {
        if (memcmp(fc_export_tables[i].uuid, pExportTableId->bytes, 16) != 0)
            continue;
        if (!fc_export_tables[i].table)
            return CUDA_ERROR_NOT_FOUND;
        *ppExportTable = fc_export_tables[i].table;
        return CUDA_SUCCESS;
    }
    /* The others (CTX_CREATE_BYPASS, HEAP_ACCESS, DEVICE_EXTENDED_RT, ...) are not simulated. */
    char what[80];
    const unsigned char *u = (const unsigned char *)pExportTableId->bytes;
    snprintf(what, sizeof what,
             "cuGetExportTable %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
    return fc_unsupported(what);
}
