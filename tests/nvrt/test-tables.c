/* The simulated driver's private export tables (cuGetExportTable), called directly. That
 * NVIDIA's runtime accepts them end to end (the integrity check included) is the workload tests'
 * part (test-runtime.c). */
#define _GNU_SOURCE
#include "ctt.h"
#include "fc_integrity.h"

#include <cuda.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define U(...) {{__VA_ARGS__}}
static const CUuuid cudart_interface = U(0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9);
static const CUuuid tools_tls = U(0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc);
static const CUuuid hooks = U(0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66);
static const CUuuid cls = U(0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93);
static const CUuuid checks = U(0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e);
static const CUuuid integrity = U(0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2);
static const CUuuid ctx_ids = U(0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2);
static const CUuuid lt_unnamed = U(0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca);
static const CUuuid refused = U(0xf8, 0xcf, 0xf9, 0x51, 0x21, 0x46, 0x8b, 0x4e, 0xb9, 0xe2, 0xfb, 0x46, 0x9e, 0x7c, 0x0d, 0xd9);
static const CUuuid ctx_create_bypass = U(0x0c, 0xa5, 0x0b, 0x8c, 0x10, 0x04, 0x92, 0x9a, 0xa7, 0x89, 0xd0, 0xdf, 0x10, 0xe7, 0x72, 0x86);

static void *const *table(const CUuuid *id)
{
    const void *t = NULL;
    return cuGetExportTable(&t, id) == CUDA_SUCCESS ? (void *const *)t : NULL;
}

/* A table slot as a function of the given type. */
#define SLOT(type, t, i) ((type)(t)[i])

TEST_IMPL(export_tables_answered_or_refused)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    const struct {
        const CUuuid *id;
        size_t slots; /* slot 0 holds slots * 8 */
    } sized[] = {{&cudart_interface, 13}, {&tools_tls, 4}, {&hooks, 7}, {&checks, 4},
                 {&integrity, 3}, {&ctx_ids, 8}, {&lt_unnamed, 6}};
    for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++) {
        void *const *t = table(sized[i].id);
        ASSERT(t);
        ASSERT_UINT((uintptr_t)t[0], ==, sized[i].slots * sizeof(void *));
        for (size_t s = 1; s < sized[i].slots; s++)
            ASSERT(t[s] != NULL);
    }
    void *const *c = table(&cls); /* no size slot: put, delete, get */
    ASSERT(c && c[0] && c[1] && c[2]);
    const void *t = (const void *)1;
    ASSERT_INT(cuGetExportTable(&t, &refused), ==, CUDA_ERROR_NOT_FOUND);
    ASSERT(t == NULL);
    ASSERT_INT(cuGetExportTable(&t, &ctx_create_bypass), ==, CUDA_ERROR_NOT_SUPPORTED);
    ASSERT_INT(cuGetExportTable(NULL, &tools_tls), ==, CUDA_ERROR_INVALID_VALUE);
    /* a slot of unknown meaning refuses instead of crashing: cuBLASLt calls 1734dc26[4] and
     * takes the refusal */
    ASSERT_INT(SLOT(CUresult(*)(void), table(&tools_tls), 1)(), ==, CUDA_ERROR_NOT_SUPPORTED);
    void *o1 = NULL, *o2 = NULL;
    ASSERT_INT(SLOT(CUresult(*)(void **, void **), table(&lt_unnamed), 4)(&o1, &o2), ==, CUDA_ERROR_NOT_SUPPORTED);
    /* HOOKS[2] and [6]: zeroed buffers of 1024 and 14 u32 */
    void *const *h = table(&hooks);
    uint32_t *buf;
    size_t n;
    SLOT(void (*)(uint32_t **, size_t *), h, 2)(&buf, &n);
    ASSERT_UINT(n, ==, 1024);
    ASSERT(buf[0] == 0 && buf[1023] == 0);
    SLOT(void (*)(uint32_t **, size_t *), h, 6)(&buf, &n);
    ASSERT_UINT(n, ==, 14);
    /* CONTEXT_CHECKS[2] writes 0, [3] returns 0 */
    uint32_t r1 = 7;
    const void *r2 = NULL;
    ASSERT_INT(SLOT(CUresult(*)(CUcontext, uint32_t *, const void **), table(&checks), 2)(NULL, &r1, &r2), ==, 0);
    ASSERT_UINT(r1, ==, 0);
    ASSERT_UINT(SLOT(uint32_t(*)(void), table(&checks), 3)(), ==, 0);
    return 0;
}

static void *other_thread_ctx(void *arg)
{
    CUcontext *out = arg;
    SLOT(CUresult(*)(CUcontext *), table(&tools_tls), 2)(out);
    return NULL;
}

/* cuBLASLt looks up its kernel registry by this before every GEMM. */
TEST_IMPL(tools_tls_writes_current_context)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUcontext ctx, got = NULL, other = (CUcontext)1;
    ASSERT_INT(cuCtxCreate(&ctx, NULL, 0, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(SLOT(CUresult(*)(CUcontext *), table(&tools_tls), 2)(&got), ==, CUDA_SUCCESS);
    ASSERT(got == ctx);
    pthread_t th;
    pthread_create(&th, NULL, other_thread_ctx, &other);
    pthread_join(th, NULL);
    ASSERT(other == NULL);
    ASSERT_INT(cuCtxDestroy(ctx), ==, CUDA_SUCCESS);
    return 0;
}

typedef CUresult (*cls_put_fn)(CUcontext, void *, void *, void (*)(CUcontext, void *, void *));
typedef CUresult (*cls_delete_fn)(CUcontext, void *);
typedef CUresult (*cls_get_fn)(void **, CUcontext, void *);

static int dtor_calls;
static CUcontext dtor_ctx;
static void *dtor_key, *dtor_value;

static void dtor(CUcontext c, void *key, void *value)
{
    dtor_calls++;
    dtor_ctx = c, dtor_key = key, dtor_value = value;
}

TEST_IMPL(context_local_storage)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    void *const *t = table(&cls);
    cls_put_fn put = (cls_put_fn)t[0];
    cls_delete_fn del = (cls_delete_fn)t[1];
    cls_get_fn get = (cls_get_fn)t[2];
    CUcontext a, b;
    ASSERT_INT(cuCtxCreate(&a, NULL, 0, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuCtxCreate(&b, NULL, 0, 0), ==, CUDA_SUCCESS); /* b is current */
    int k1, k2;
    void *v = NULL;
    ASSERT_INT(get(&v, a, &k1), ==, CUDA_ERROR_INVALID_HANDLE);
    ASSERT_INT(put(a, &k1, (void *)11, dtor), ==, CUDA_SUCCESS);
    ASSERT_INT(put(NULL, &k1, (void *)22, NULL), ==, CUDA_SUCCESS); /* NULL: current (b) */
    ASSERT_INT(get(&v, a, &k1), ==, CUDA_SUCCESS);
    ASSERT(v == (void *)11);
    ASSERT_INT(get(&v, b, &k1), ==, CUDA_SUCCESS);
    ASSERT(v == (void *)22);
    ASSERT_INT(put(a, &k1, (void *)33, dtor), ==, CUDA_SUCCESS); /* replaced, no destructor */
    ASSERT_INT(put(a, &k2, (void *)44, NULL), ==, CUDA_SUCCESS);
    ASSERT_INT(get(&v, a, &k1), ==, CUDA_SUCCESS);
    ASSERT(v == (void *)33);
    ASSERT_INT(del(a, &k2), ==, CUDA_SUCCESS);
    ASSERT_INT(get(&v, a, &k2), ==, CUDA_ERROR_INVALID_HANDLE);
    ASSERT_INT(dtor_calls, ==, 0);
    /* destroying a runs its destructor once, with its context, key and value */
    ASSERT_INT(cuCtxDestroy(a), ==, CUDA_SUCCESS);
    ASSERT_INT(dtor_calls, ==, 1);
    ASSERT(dtor_ctx == a && dtor_key == &k1 && dtor_value == (void *)33);
    ASSERT_INT(cuCtxDestroy(b), ==, CUDA_SUCCESS); /* its entry had no destructor */
    ASSERT_INT(dtor_calls, ==, 1);
    /* the primary context: destructors run at its last release */
    CUcontext p;
    ASSERT_INT(cuDevicePrimaryCtxRetain(&p, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(put(p, &k2, (void *)55, dtor), ==, CUDA_SUCCESS);
    ASSERT_INT(cuDevicePrimaryCtxRetain(&p, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuDevicePrimaryCtxRelease(0), ==, CUDA_SUCCESS);
    ASSERT_INT(dtor_calls, ==, 1);
    ASSERT_INT(cuDevicePrimaryCtxRelease(0), ==, CUDA_SUCCESS);
    ASSERT_INT(dtor_calls, ==, 2);
    ASSERT(dtor_ctx == p && dtor_key == &k2 && dtor_value == (void *)55);
    return 0;
}

TEST_IMPL(context_id_table)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    typedef CUresult (*id_fn)(CUcontext, unsigned long long *);
    id_fn id = SLOT(id_fn, table(&ctx_ids), 4);
    CUcontext a, b;
    ASSERT_INT(cuCtxCreate(&a, NULL, 0, 0), ==, CUDA_SUCCESS);
    ASSERT_INT(cuCtxCreate(&b, NULL, 0, 0), ==, CUDA_SUCCESS);
    unsigned long long ia, ib, ta = 0, tb = 0, tcur = 0;
    ASSERT_INT(cuCtxGetId(a, &ia), ==, CUDA_SUCCESS);
    ASSERT_INT(cuCtxGetId(b, &ib), ==, CUDA_SUCCESS);
    ASSERT(ia != ib);
    ASSERT_INT(id(a, &ta), ==, CUDA_SUCCESS);
    ASSERT_INT(id(b, &tb), ==, CUDA_SUCCESS);
    ASSERT_INT(id(NULL, &tcur), ==, CUDA_SUCCESS);
    ASSERT_UINT(ta, ==, ia);
    ASSERT_UINT(tb, ==, ib);
    ASSERT_UINT(tcur, ==, ib);
    return 0;
}

/* [2] gives the primary context without retaining it: the state stays inactive, and a later
 * retain returns the same handle. */
TEST_IMPL(cudart_interface_primary_context)
{
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    CUcontext dark = NULL, primary = NULL;
    typedef CUresult (*primary_fn)(CUcontext *, CUdevice);
    ASSERT_INT(SLOT(primary_fn, table(&cudart_interface), 2)(&dark, 0), ==, CUDA_SUCCESS);
    ASSERT(dark != NULL);
    unsigned flags = 99;
    int active = 99;
    ASSERT_INT(cuDevicePrimaryCtxGetState(0, &flags, &active), ==, CUDA_SUCCESS);
    ASSERT_INT(active, ==, 0);
    ASSERT_INT(flags, ==, 0);
    ASSERT_INT(cuDevicePrimaryCtxRetain(&primary, 0), ==, CUDA_SUCCESS);
    ASSERT(primary == dark);
    ASSERT_INT(SLOT(primary_fn, table(&cudart_interface), 2)(&dark, 1), ==, CUDA_ERROR_INVALID_DEVICE);
    return 0;
}

/* RFC 1319, appendix A.5. */
TEST_IMPL(md2_rfc1319_vectors)
{
    static const char *const vec[][2] = {
        {"", "8350e5a3e24c153df2275c9f80692773"},
        {"a", "32ec01ec4a6dac72c0ab96fb34c0b5d1"},
        {"abc", "da853b0d3f88d99b30283a69e6ded6bb"},
        {"message digest", "ab4f496bfb2a530b219ff33031fe06b0"},
        {"abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
         "da33def2a42df13975352846c30338cd"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "d5976f79d83d3a0dc9806c3c66f3efd8"},
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        uint8_t d[16];
        char hex[33];
        fc_md2(vec[i][0], strlen(vec[i][0]), d);
        for (int k = 0; k < 16; k++)
            snprintf(hex + 2 * k, 3, "%02x", d[k]);
        ASSERT_STR(hex, vec[i][1]);
    }
    return 0;
}

/* The driver hashes exactly what the runtime can see: this process and thread, the two tables'
 * addresses and the check function, the caller's time, and each device's UUID and PCI ids as
 * the public functions report them. Recomputed here from those public answers. */
TEST_IMPL(integrity_check_inputs)
{
    setenv("FAKECUDA_DEVICES", "h100,t4", 1);
    ASSERT_INT(cuInit(0), ==, CUDA_SUCCESS);
    void *const *ic = table(&integrity), *const *rt = table(&cudart_interface);
    typedef CUresult (*check_fn)(uint32_t, uint64_t, uint64_t *);
    check_fn check = SLOT(check_fn, ic, 1);
    uint64_t got[2];
    ASSERT_INT(check(13000, 5, got), ==, CUDA_SUCCESS); /* versions ending in 0 and 1: fixed */
    ASSERT_UINT(got[0], ==, 0x3341181c03cb675cull);
    ASSERT_UINT(got[1], ==, 0x8ed383aa1f4cd1e8ull);
    ASSERT_INT(check(13021, 5, got), ==, CUDA_SUCCESS);
    ASSERT_UINT(got[0], ==, 0x1841181c03cb675cull);
    fc_integrity_input in = {.driver_version = 13000, .version = 13002,
                             .pid = (uint32_t)getpid(), .tid = (uint32_t)pthread_self(),
                             .cudart_table = (uintptr_t)rt, .check_table = (uintptr_t)ic,
                             .check_fn = (uintptr_t)ic[1], .seconds = 1795530094};
    int dv;
    ASSERT_INT(cuDriverGetVersion(&dv), ==, CUDA_SUCCESS);
    ASSERT_INT(dv, ==, 13000);
    fc_integrity_device devs[2];
    int n;
    ASSERT_INT(cuDeviceGetCount(&n), ==, CUDA_SUCCESS);
    ASSERT_INT(n, ==, 2);
    for (int d = 0; d < n; d++) {
        CUuuid u;
        ASSERT_INT(cuDeviceGetUuid(&u, d), ==, CUDA_SUCCESS);
        memcpy(devs[d].uuid, u.bytes, 16);
        ASSERT_INT(cuDeviceGetAttribute(&devs[d].pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d), ==, 0);
        ASSERT_INT(cuDeviceGetAttribute(&devs[d].pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d), ==, 0);
        ASSERT_INT(cuDeviceGetAttribute(&devs[d].pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d), ==, 0);
    }
    uint64_t want[2];
    fc_integrity_hash(&in, devs, n, want);
    ASSERT_INT(check(13002, 1795530094, got), ==, CUDA_SUCCESS);
    ASSERT_UINT(got[0], ==, want[0]);
    ASSERT_UINT(got[1], ==, want[1]);
    /* every input matters: another second, another answer */
    ASSERT_INT(check(13002, 1795530095, got), ==, CUDA_SUCCESS);
    ASSERT(got[0] != want[0] || got[1] != want[1]);
    return 0;
}
