/* Modules, libraries and kernels: the API over loaded images (fc_image.c parses them,
 * fc_launch.c runs their kernels). */
#define _GNU_SOURCE
#include "fc_module.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct CUfunc_st *fc_func(const void *h)
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

FC_EXPORT CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
    FC_ENTER_INIT("cuModuleGetLoadingMode");
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = fc_g.eager ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
    return CUDA_SUCCESS;
}
