/* The module component's shared state (fc_module.c: the module, library and kernel API;
 * fc_image.c: parsing images; fc_launch.c: launches and occupancy). A CUkernel embeds its
 * CUfunction as first member, so a CUkernel cast to CUfunction launches, as CUDA 12+ allows. */
#ifndef FC_MODULE_H
#define FC_MODULE_H

#include "fc.h"
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
    uint64_t hold_every, launches; /* ... for every hold_every-th launch, */
    int hold_before;               /* before submitting the kernel */
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

typedef struct {
    char pattern[128];
    int64_t ns;
    uint64_t every; /* FAKECUDA_LAUNCH_HOLD_NS's /N: every Nth launch (1: each) */
    int before;     /* ... and its :before: held before the kernel is submitted */
} fc_kernel_rule;

/* pattern=ns rules of FAKECUDA_KERNEL_NS (durations) and FAKECUDA_LAUNCH_HOLD_NS (holds) */
typedef struct {
    const char *var;
    int every_ok; /* pattern=ns/N allowed */
    fc_kernel_rule r[64];
    int n;
} fc_rules;

/* fc_launch.c: the FAKECUDA_LAUNCH_HOLD_NS rules, a kernel's first matching rule (NULL if
 * none), and its host implementation (NULL if none). */
extern fc_rules fc_hold_rules;
const fc_kernel_rule *fc_rules_match(const fc_rules *rs, const char *name);
fakecuda_host_kernel fc_host_kernel_find(const char *name);

/* fc_image.c: load an image's kernels and globals for device dev (library: a library without
 * code for the device loads, its kernels marked nobinary); free them; a global by name,
 * allocated on first request; a kernel by name (NULL if none). */
CUresult fc_load_image(const void *image, int dev, int library, fc_kernels *out);
void fc_kernels_free(fc_kernels *ks);
CUresult fc_get_global(fc_kernels *ks, fc_ctx *c, const char *name, CUdeviceptr *dptr,
                       size_t *bytes);
struct CUfunc_st *fc_kernels_find(fc_kernels *ks, const char *name);

/* fc_module.c: the function of a CUfunction or CUkernel handle (NULL if invalid). */
struct CUfunc_st *fc_func(const void *h);

#endif
