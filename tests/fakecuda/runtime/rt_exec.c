/* Kernels, streams and events of the simulated runtime (contract in fc_rt.h), including the host
 * ABI nvcc 13 generates (crt/host_runtime.h, crt/device_functions.h).
 *
 * Modules load the CUDA 12+ way: __cudaRegisterFatBinary only records nvcc's fatbin wrapper;
 * the first use of one of its kernels loads it with cuLibraryLoadData and gets the kernel with
 * cuLibraryGetKernel by the name given to __cudaRegisterFunction; launches pass that CUkernel to
 * cuLaunchKernel as a CUfunction, as NVIDIA's runtime does. */
#include "fc_rt.h"

#include <fatbinary_section.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct fc_module {
    const __fatBinC_Wrapper_t *wrapper;
    CUlibrary lib; /* NULL until first use */
} fc_module;

typedef struct {
    const void *host_fun; /* the host stub nvcc generated for the kernel */
    const char *name;     /* mangled device name */
    fc_module *mod;
    CUkernel kernel; /* NULL until first use */
} fc_function;

static pthread_mutex_t fc_reg_lock = PTHREAD_MUTEX_INITIALIZER;
/* Why the last kernel lookup failed. nvcc's code keeps a failed __cudaGetKernel's NULL handle
 * and launches with it; such a launch reports this, as NVIDIA's reports, say,
 * cudaErrorNoKernelImageForDevice for a program built for another architecture. */
static _Atomic int fc_lookup_error = cudaErrorInvalidResourceHandle;
static fc_function *fc_funcs;
static size_t fc_nfuncs, fc_capfuncs;

/* Device variables: the host shadow nvcc registers stands for the module global of the same
 * name, found with cuLibraryGetGlobal when a symbol call first needs it. */
typedef struct {
    const void *host_var;
    const char *name;
    fc_module *mod;
} fc_variable;

static fc_variable *fc_vars;
static size_t fc_nvars, fc_capvars;

/* Loads a module's library on first use; call with fc_reg_lock held. */
static CUresult fc_module_load(fc_module *m)
{
    if (m->lib)
        return CUDA_SUCCESS;
    return FC_DRV(fc_drv.cuLibraryLoadData_v12000, &m->lib, m->wrapper->data, NULL, NULL, 0, NULL, NULL, 0);
}


/* ---- registration (runs from static constructors, before main: no driver calls here) ---- */

/* arr (n elements of size, room for *cap) with room for one more. */
static void *fc_room(void *arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return arr;
    *cap = *cap ? 2 * *cap : 64;
    arr = realloc(arr, *cap * size);
    if (!arr)
        abort(); /* nvcc's registration code has no way to report a failure */
    return arr;
}

FC_EXPORT void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin)
{
    fc_module *m = calloc(1, sizeof *m);
    if (!m)
        abort(); /* nvcc's code has no way to report a failure here */
    m->wrapper = fatCubin;
    return (void **)m;
}

FC_EXPORT void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    (void)fatCubinHandle; /* loading is lazy: nothing to finish */
}

FC_EXPORT void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                                const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                                                dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    pthread_mutex_lock(&fc_reg_lock);
    fc_funcs = fc_room(fc_funcs, fc_nfuncs, &fc_capfuncs, sizeof *fc_funcs);
    fc_funcs[fc_nfuncs++] = (fc_function){hostFun, deviceName, (fc_module *)fatCubinHandle, NULL};
    pthread_mutex_unlock(&fc_reg_lock);
}

FC_EXPORT void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    fc_module *m = (fc_module *)fatCubinHandle;
    pthread_mutex_lock(&fc_reg_lock);
    size_t kept = 0;
    for (size_t i = 0; i < fc_nfuncs; i++)
        if (fc_funcs[i].mod != m)
            fc_funcs[kept++] = fc_funcs[i];
    fc_nfuncs = kept;
    kept = 0;
    for (size_t i = 0; i < fc_nvars; i++)
        if (fc_vars[i].mod != m)
            fc_vars[kept++] = fc_vars[i];
    fc_nvars = kept;
    pthread_mutex_unlock(&fc_reg_lock);
    if (m->lib)
        FC_DRV(fc_drv.cuLibraryUnload_v12000, m->lib);
    free(m);
}

FC_EXPORT void CUDARTAPI __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                           const char *deviceName, int ext, size_t size, int constant, int global)
{
    (void)deviceAddress, (void)ext, (void)size, (void)constant, (void)global; /* the module knows them */
    pthread_mutex_lock(&fc_reg_lock);
    fc_vars = fc_room(fc_vars, fc_nvars, &fc_capvars, sizeof *fc_vars);
    fc_vars[fc_nvars++] = (fc_variable){hostVar, deviceName, (fc_module *)fatCubinHandle};
    pthread_mutex_unlock(&fc_reg_lock);
}

cudaError_t fc_rt_symbol(const void *symbol, CUdeviceptr *dptr, size_t *size)
{
    cudaError_t e = fc_rt_ctx();
    if (e != cudaSuccess)
        return e;
    pthread_mutex_lock(&fc_reg_lock);
    const fc_variable *v = NULL;
    for (size_t i = 0; i < fc_nvars && !v; i++)
        if (fc_vars[i].host_var == symbol)
            v = &fc_vars[i];
    /* NVIDIA's answer for an address that is not a registered variable. */
    e = cudaErrorInvalidSymbol;
    if (v) {
        CUresult r = fc_module_load(v->mod);
        if (r == CUDA_SUCCESS)
            r = FC_DRV(fc_drv.cuLibraryGetGlobal_v12000, dptr, size, v->mod->lib, v->name);
        e = r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidSymbol : fc_rt_map(r);
    }
    pthread_mutex_unlock(&fc_reg_lock);
    return e;
}

FC_EXPORT void CUDARTAPI __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                                  char *deviceAddress, const char *deviceName, int ext, size_t size,
                                                  int constant, int global)
{
    (void)fatCubinHandle, (void)hostVarPtrAddress, (void)deviceAddress, (void)deviceName, (void)ext, (void)size,
        (void)constant, (void)global;
}

/* Exported by NVIDIA's runtime but declared in no header; nvcc 13's host code does not call
 * them. Defined without a prototype so any call is well-formed; they do nothing. */
FC_EXPORT void CUDARTAPI __cudaRegisterHostVar() {}
FC_EXPORT void CUDARTAPI __cudaRegisterUnifiedTable() {}
FC_EXPORT cudaError_t CUDARTAPI __cudaGetProcAddress()
{
    return fc_rt_ret(cudaErrorNotSupported);
}

/* ---- kernels ---- */

static fc_function *fc_find(const void *host_fun)
{
    for (size_t i = 0; i < fc_nfuncs; i++)
        if (fc_funcs[i].host_fun == host_fun)
            return &fc_funcs[i];
    return NULL;
}

cudaError_t fc_rt_kernel(const void *host_fun, CUkernel *out)
{
    cudaError_t e = fc_rt_ctx();
    if (e != cudaSuccess)
        return e;
    pthread_mutex_lock(&fc_reg_lock);
    fc_function *f = fc_find(host_fun);
    CUresult r = CUDA_SUCCESS;
    if (!f) {
        e = cudaErrorInvalidDeviceFunction;
    } else if (!f->kernel) {
        r = fc_module_load(f->mod);
        if (r == CUDA_SUCCESS)
            r = FC_DRV(fc_drv.cuLibraryGetKernel_v12000, &f->kernel, f->mod->lib, f->name);
        /* The runtime's word for a kernel the module does not have. */
        e = r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction : fc_rt_map(r);
    }
    if (e == cudaSuccess)
        *out = f->kernel;
    else
        atomic_store(&fc_lookup_error, (int)e);
    pthread_mutex_unlock(&fc_reg_lock);
    return e;
}

const void *fc_rt_host_fun(CUkernel k)
{
    const void *found = NULL;
    pthread_mutex_lock(&fc_reg_lock);
    for (size_t i = 0; i < fc_nfuncs && !found; i++)
        if (fc_funcs[i].kernel == k)
            found = fc_funcs[i].host_fun;
    pthread_mutex_unlock(&fc_reg_lock);
    return found;
}

FC_EXPORT char CUDARTAPI __cudaInitModule(void **fatCubinHandle)
{
    (void)fatCubinHandle; /* modules load with their first kernel */
    return 1;
}

FC_EXPORT cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
    if (!kernel)
        return fc_rt_ret(cudaErrorInvalidValue);
    CUkernel k = NULL;
    cudaError_t e = fc_rt_kernel(hostFun, &k);
    *kernel = (cudaKernel_t)k;
    return fc_rt_ret(e);
}

FC_EXPORT cudaError_t CUDARTAPI cudaFuncGetName(const char **name, const void *func)
{
    if (!name || !func)
        return fc_rt_ret(cudaErrorInvalidValue);
    if (fc_rt_forked())
        return fc_rt_ret(cudaErrorInitializationError);
    pthread_mutex_lock(&fc_reg_lock);
    fc_function *f = fc_find(func);
    *name = f ? f->name : NULL;
    pthread_mutex_unlock(&fc_reg_lock);
    return f ? cudaSuccess : fc_rt_ret(cudaErrorInvalidDeviceFunction);
}

/* Where each field of cudaFuncAttributes lives and which driver attribute fills it. */
#define FC_FA(field, attr) \
    {offsetof(struct cudaFuncAttributes, field), sizeof(((struct cudaFuncAttributes *)0)->field), \
     CU_FUNC_ATTRIBUTE_##attr}
static const struct {
    size_t offset, size;
    CUfunction_attribute attr;
} fc_func_fields[] = {
    FC_FA(sharedSizeBytes, SHARED_SIZE_BYTES),
    FC_FA(constSizeBytes, CONST_SIZE_BYTES),
    FC_FA(localSizeBytes, LOCAL_SIZE_BYTES),
    FC_FA(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK),
    FC_FA(numRegs, NUM_REGS),
    FC_FA(ptxVersion, PTX_VERSION),
    FC_FA(binaryVersion, BINARY_VERSION),
    FC_FA(cacheModeCA, CACHE_MODE_CA),
    FC_FA(maxDynamicSharedSizeBytes, MAX_DYNAMIC_SHARED_SIZE_BYTES),
    FC_FA(preferredShmemCarveout, PREFERRED_SHARED_MEMORY_CARVEOUT),
    FC_FA(clusterDimMustBeSet, CLUSTER_SIZE_MUST_BE_SET),
    FC_FA(requiredClusterWidth, REQUIRED_CLUSTER_WIDTH),
    FC_FA(requiredClusterHeight, REQUIRED_CLUSTER_HEIGHT),
    FC_FA(requiredClusterDepth, REQUIRED_CLUSTER_DEPTH),
    FC_FA(clusterSchedulingPolicyPreference, CLUSTER_SCHEDULING_POLICY_PREFERENCE),
    FC_FA(nonPortableClusterSizeAllowed, NON_PORTABLE_CLUSTER_SIZE_ALLOWED),
};

/* The kernel of a host stub and the CUdevice of the calling thread's current device. */
static cudaError_t fc_kernel_on_device(const void *func, CUkernel *k, CUdevice *dev)
{
    cudaError_t e = fc_rt_kernel(func, k);
    return e == cudaSuccess ? fc_rt_cudevice(fc_rt_device(), dev) : e;
}

FC_EXPORT cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    CUkernel k;
    CUdevice dev;
    if (!attr)
        return fc_rt_ret(cudaErrorInvalidValue);
    cudaError_t e = fc_kernel_on_device(func, &k, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    memset(attr, 0, sizeof *attr);
    CUresult r = CUDA_SUCCESS;
    for (size_t i = 0; r == CUDA_SUCCESS && i < sizeof fc_func_fields / sizeof fc_func_fields[0]; i++) {
        int v = 0;
        r = FC_DRV(fc_drv.cuKernelGetAttribute_v12000, &v, fc_func_fields[i].attr, k, dev);
        fc_rt_set_field(attr, fc_func_fields[i].offset, fc_func_fields[i].size, v);
    }
    return fc_rt_err(r);
}

/* cudaFuncAttribute and CUfunction_attribute share their values. */
FC_EXPORT cudaError_t CUDARTAPI cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    CUkernel k;
    CUdevice dev;
    cudaError_t e = fc_kernel_on_device(func, &k, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuKernelSetAttribute_v12000, (CUfunction_attribute)attr, value, k, dev));
}

/* nvcc pushes the <<<>>> configuration at the call site and the kernel's host stub pops it; a
 * stack, because evaluating the arguments may launch kernels too. */
typedef struct {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} fc_launch_config;

#define FC_CONFIG_DEPTH 16
static __thread fc_launch_config fc_configs[FC_CONFIG_DEPTH];
static __thread int fc_nconfigs;

FC_EXPORT unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                         struct CUstream_st *stream)
{
    if (fc_nconfigs == FC_CONFIG_DEPTH)
        return 1;
    fc_configs[fc_nconfigs++] = (fc_launch_config){gridDim, blockDim, sharedMem, stream};
    return 0;
}

FC_EXPORT cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                                           void *stream)
{
    if (fc_nconfigs == 0)
        return fc_rt_ret(cudaErrorMissingConfiguration);
    const fc_launch_config *c = &fc_configs[--fc_nconfigs];
    *gridDim = c->grid;
    *blockDim = c->block;
    *sharedMem = c->shmem;
    *(cudaStream_t *)stream = c->stream;
    return cudaSuccess;
}

int fc_rt_config_ok(dim3 g, dim3 b)
{
    /* 1024 threads per block is every CUDA 13 GPU's limit (compute capability 7.5 and up). */
    return g.x && g.y && g.z && b.x && b.y && b.z && (unsigned long long)b.x * b.y * b.z <= 1024;
}

static cudaError_t fc_launch(CUkernel k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s, int pt)
{
    FC_CTX();
    if (!k)
        return fc_rt_ret((cudaError_t)atomic_load(&fc_lookup_error));
    if (!fc_rt_config_ok(g, b))
        return fc_rt_ret(cudaErrorInvalidConfiguration);
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuLaunchKernel_v4000, fc_drv.cuLaunchKernel_v7000_ptsz), (CUfunction)k,
                            g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, s, args, NULL));
}

FC_EXPORT cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                                                   size_t sharedMem, cudaStream_t stream)
{
    return fc_launch((CUkernel)kernel, gridDim, blockDim, args, sharedMem, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                        void **args, size_t sharedMem, cudaStream_t stream)
{
    return fc_launch((CUkernel)kernel, gridDim, blockDim, args, sharedMem, stream, 1);
}

static cudaError_t fc_launch_func(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s,
                                  int pt)
{
    CUkernel k;
    cudaError_t e = fc_rt_kernel(func, &k);
    return e != cudaSuccess ? fc_rt_ret(e) : fc_launch(k, g, b, args, shmem, s, pt);
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                 size_t sharedMem, cudaStream_t stream)
{
    return fc_launch_func(func, gridDim, blockDim, args, sharedMem, stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                      size_t sharedMem, cudaStream_t stream)
{
    return fc_launch_func(func, gridDim, blockDim, args, sharedMem, stream, 1);
}

static cudaError_t fc_host_func(cudaStream_t s, cudaHostFn_t fn, void *data, int pt)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuLaunchHostFunc_v10000, fc_drv.cuLaunchHostFunc_v10000_ptsz), s,
                            (CUhostFn)fn, data));
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    return fc_host_func(stream, fn, userData, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    return fc_host_func(stream, fn, userData, 1);
}

/* ---- streams (cudaStream_t is CUstream; flag values are shared) ---- */

FC_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    if (!pStream)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuStreamCreateWithPriority_v5050, pStream, flags, priority));
}

static cudaError_t fc_stream_create(cudaStream_t *pStream, unsigned flags)
{
    if (!pStream)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuStreamCreate_v2000, pStream, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return fc_stream_create(pStream, flags);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
    return fc_stream_create(pStream, cudaStreamDefault);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuStreamDestroy_v4000, stream));
}

static cudaError_t fc_stream_sync(cudaStream_t s, int pt)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuStreamSynchronize_v2000, fc_drv.cuStreamSynchronize_v7000_ptsz), s));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
    return fc_stream_sync(stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    return fc_stream_sync(stream, 1);
}

/* Not ready is an answer, not a failure: NVIDIA does not record it as the last error. */
static cudaError_t fc_not_ready_is_answer(CUresult r)
{
    return r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : fc_rt_err(r);
}

static cudaError_t fc_stream_query(cudaStream_t s, int pt)
{
    FC_CTX();
    return fc_not_ready_is_answer(
        FC_DRV(FC_PT(pt, fc_drv.cuStreamQuery_v2000, fc_drv.cuStreamQuery_v7000_ptsz), s));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream)
{
    return fc_stream_query(stream, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream)
{
    return fc_stream_query(stream, 1);
}

static cudaError_t fc_stream_wait(cudaStream_t s, cudaEvent_t ev, unsigned flags, int pt)
{
    FC_CTX();
    return fc_rt_err(
        FC_DRV(FC_PT(pt, fc_drv.cuStreamWaitEvent_v3020, fc_drv.cuStreamWaitEvent_v7000_ptsz), s, ev, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return fc_stream_wait(stream, event, flags, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    return fc_stream_wait(stream, event, flags, 1);
}

static cudaError_t fc_stream_flags(cudaStream_t s, unsigned *flags, int pt)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuStreamGetFlags_v5050, fc_drv.cuStreamGetFlags_v7000_ptsz), s, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
    return fc_stream_flags(hStream, flags, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int *flags)
{
    return fc_stream_flags(hStream, flags, 1);
}

static cudaError_t fc_stream_priority(cudaStream_t s, int *priority, int pt)
{
    FC_CTX();
    return fc_rt_err(
        FC_DRV(FC_PT(pt, fc_drv.cuStreamGetPriority_v5050, fc_drv.cuStreamGetPriority_v7000_ptsz), s, priority));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{
    return fc_stream_priority(hStream, priority, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{
    return fc_stream_priority(hStream, priority, 1);
}

static cudaError_t fc_stream_callback(cudaStream_t s, cudaStreamCallback_t cb, void *data, unsigned flags, int pt)
{
    FC_CTX();
    /* cudaStreamCallback_t and CUstreamCallback differ only in naming the status type, and
     * cudaError_t and CUresult share their values. */
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuStreamAddCallback_v5000, fc_drv.cuStreamAddCallback_v7000_ptsz), s,
                            (CUstreamCallback)cb, data, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                                      void *userData, unsigned int flags)
{
    return fc_stream_callback(stream, callback, userData, flags, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                                           void *userData, unsigned int flags)
{
    return fc_stream_callback(stream, callback, userData, flags, 1);
}

static cudaError_t fc_stream_id(cudaStream_t s, unsigned long long *id, int pt)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(FC_PT(pt, fc_drv.cuStreamGetId_v12000, fc_drv.cuStreamGetId_v12000_ptsz), s, id));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
    return fc_stream_id(hStream, streamId, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long *streamId)
{
    return fc_stream_id(hStream, streamId, 1);
}

/* ---- events (cudaEvent_t is CUevent; flag values are shared) ---- */

static cudaError_t fc_event_create(cudaEvent_t *event, unsigned flags)
{
    if (!event)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuEventCreate_v2000, event, flags));
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    return fc_event_create(event, flags);
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
    return fc_event_create(event, cudaEventDefault);
}

static cudaError_t fc_event_record(cudaEvent_t ev, cudaStream_t s, unsigned flags, int pt)
{
    FC_CTX();
    CUresult r = flags ? FC_DRV(FC_PT(pt, fc_drv.cuEventRecordWithFlags_v11010,
                                      fc_drv.cuEventRecordWithFlags_v11010_ptsz), ev, s, flags)
                       : FC_DRV(FC_PT(pt, fc_drv.cuEventRecord_v2000, fc_drv.cuEventRecord_v7000_ptsz), ev, s);
    return fc_rt_err(r);
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    return fc_event_record(event, stream, 0, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    return fc_event_record(event, stream, 0, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
    return fc_event_record(event, stream, flags, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                              unsigned int flags)
{
    return fc_event_record(event, stream, flags, 1);
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event)
{
    FC_CTX();
    return fc_not_ready_is_answer(FC_DRV(fc_drv.cuEventQuery_v2000, event));
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuEventSynchronize_v2000, event));
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuEventDestroy_v4000, event));
}

FC_EXPORT cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    FC_CTX();
    return fc_rt_err(FC_DRV(fc_drv.cuEventElapsedTime_v12080, ms, start, end));
}

/* ---- kernel preferences and handles ---- */

/* cudaFuncCache and CUfunc_cache share their values. */
FC_EXPORT cudaError_t CUDARTAPI cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache cacheConfig)
{
    CUkernel k;
    CUdevice dev;
    cudaError_t e = fc_kernel_on_device(func, &k, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuKernelSetCacheConfig_v12000, k, (CUfunc_cache)cacheConfig, dev));
}

FC_EXPORT cudaError_t CUDARTAPI cudaFuncSetSharedMemConfig(const void *func, enum cudaSharedMemConfig config)
{
    CUkernel k;
    cudaError_t e = fc_rt_kernel(func, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuFuncSetSharedMemConfig_v4020, (CUfunction)k, (CUsharedconfig)config));
}

FC_EXPORT cudaError_t CUDARTAPI cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
    if (!kernelPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    CUkernel k;
    cudaError_t e = fc_rt_kernel(entryFuncAddr, &k);
    if (e == cudaSuccess)
        *kernelPtr = (cudaKernel_t)k;
    return fc_rt_ret(e);
}

/* The kernel's function in the current device's context. */
FC_EXPORT cudaError_t CUDARTAPI cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
    if (!functionPtr)
        return fc_rt_ret(cudaErrorInvalidValue);
    CUkernel k;
    cudaError_t e = fc_rt_kernel(symbolPtr, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuKernelGetFunction_v12000, (CUfunction *)functionPtr, k));
}

FC_EXPORT cudaError_t CUDARTAPI cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attr,
                                                                int value, int device)
{
    CUdevice dev;
    cudaError_t e = fc_rt_cudevice(device, &dev);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuKernelSetAttribute_v12000, (CUfunction_attribute)attr, value, (CUkernel)kernel,
                            dev));
}

FC_EXPORT cudaError_t CUDARTAPI cudaFuncGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset,
                                                     size_t *paramSize)
{
    CUkernel k;
    cudaError_t e = fc_rt_kernel(func, &k);
    if (e != cudaSuccess)
        return fc_rt_ret(e);
    return fc_rt_err(FC_DRV(fc_drv.cuKernelGetParamInfo_v12040, k, paramIndex, paramOffset, paramSize));
}

/* ---- a stream's device ---- */

/* The driver answers a CUdevice; the runtime's answer is its ordinal. */
static cudaError_t fc_stream_device(cudaStream_t s, int *device, int pt)
{
    if (!device)
        return fc_rt_ret(cudaErrorInvalidValue);
    FC_CTX();
    CUdevice dev;
    CUresult r = FC_DRV(FC_PT(pt, fc_drv.cuStreamGetDevice_v12080, fc_drv.cuStreamGetDevice_v12080_ptsz), s, &dev);
    if (r != CUDA_SUCCESS)
        return fc_rt_err(r);
    return fc_rt_ret(fc_rt_ordinal(dev, device));
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetDevice(cudaStream_t hStream, int *device)
{
    return fc_stream_device(hStream, device, 0);
}

FC_EXPORT cudaError_t CUDARTAPI cudaStreamGetDevice_ptsz(cudaStream_t hStream, int *device)
{
    return fc_stream_device(hStream, device, 1);
}
