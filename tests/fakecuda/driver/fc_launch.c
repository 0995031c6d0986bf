/* Kernel launches: the cost model (FAKECUDA_KERNEL_NS, FAKECUDA_LAUNCH_HOLD_NS), host kernels
 * (fakecuda.h), cuLaunchKernel* and occupancy. Apart from fc_module.c because running a kernel
 * is one job and loading it another. */
#define _GNU_SOURCE
#include "fc_module.h"
#include "fc_graph.h"

#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* ---- kernel cost model --------------------------------------------------------------- */

static fc_rules fc_dur_rules = {.var = "FAKECUDA_KERNEL_NS"};
fc_rules fc_hold_rules = {.var = "FAKECUDA_LAUNCH_HOLD_NS", .every_ok = 1};

static void fc_rules_parse(fc_rules *rs, const char *spec)
{
    char *copy = strdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strrchr(tok, '=');
        char *end = NULL;
        long long ns = eq ? strtoll(eq + 1, &end, 10) : -1, every = 1;
        if (rs->every_ok && end && *end == '/' && end[1])
            every = strtoll(end + 1, &end, 10);
        int before = rs->every_ok && end && !strcmp(end, ":before");
        if (before)
            end += strlen(end);
        if (!eq || eq == tok || !end || *end || ns < 0 || every < 1 || eq - tok >= 128)
            fc_fatal("%s: expected pattern=nanoseconds%s, found \"%s\"", rs->var,
                     rs->every_ok ? "[/N][:before]" : "", tok);
        if (rs->n == (int)(sizeof rs->r / sizeof rs->r[0]))
            fc_fatal("%s: more than %d rules", rs->var, rs->n);
        memcpy(rs->r[rs->n].pattern, tok, (size_t)(eq - tok));
        rs->r[rs->n].pattern[eq - tok] = 0;
        rs->r[rs->n].ns = ns;
        rs->r[rs->n].every = (uint64_t)every;
        rs->r[rs->n].before = before;
        rs->n++;
    }
    free(copy);
}

void fc_kernel_ns_parse(const char *spec) { fc_rules_parse(&fc_dur_rules, spec); }
void fc_launch_hold_parse(const char *spec) { fc_rules_parse(&fc_hold_rules, spec); }

/* The first rule that matches the (mangled) name: as an fnmatch pattern if it has a wildcard,
 * else as a substring. */
const fc_kernel_rule *fc_rules_match(const fc_rules *rs, const char *name)
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
        fc_textures_bind(h);
        if (fc_nhost_libs == (int)(sizeof fc_host_libs / sizeof fc_host_libs[0]))
            fc_fatal("FAKECUDA_HOST_KERNELS: more than %d libraries", fc_nhost_libs);
        fc_host_libs[fc_nhost_libs++] = h;
    }
    free(copy);
}

fakecuda_host_kernel fc_host_kernel_find(const char *name)
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

/* ---- launches ------------------------------------------------------------------------ */

typedef struct {
    unsigned grid[3], block[3], smem;
} fc_dims;

void **fc_kernel_args_copy(const struct CUfunc_st *f, void **params)
{
    if (f->nparams <= 0 || !params)
        return NULL;
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
    return arr;
}

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
    op->u.kernel.params = fc_kernel_args_copy(f, params);
    op->staging = op->u.kernel.params;
    return 0;
}

/* What a launch and a kernel node check alike: CUDA_SUCCESS or the launch's error. */
static CUresult fc_launch_check(const struct CUfunc_st *f, fc_dims d, const fc_device_desc *dev,
                                void **params, void **extra)
{
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    if (f->nobinary)
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
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
    return CUDA_SUCCESS;
}

CUresult fc_node_set_kernel(struct CUgraphNode_st *n, const void *func, const unsigned grid[3],
                            const unsigned block[3], unsigned smem, void **params,
                            void **extra, fc_ctx *ctx)
{
    struct CUfunc_st *f = fc_func(func);
    fc_dims d;
    memcpy(d.grid, grid, sizeof d.grid);
    memcpy(d.block, block, sizeof d.block);
    d.smem = smem;
    CUresult r = fc_launch_check(f, d, fc_ctx_dev(ctx)->d, params, extra);
    if (r != CUDA_SUCCESS)
        return r;
    fc_node_params_free(n);
    n->u.k.f = f;
    n->u.k.ctx = ctx;
    memcpy(n->u.k.launch.grid, grid, sizeof d.grid);
    memcpy(n->u.k.launch.block, block, sizeof d.block);
    n->u.k.launch.shared_bytes = smem;
    /* Arguments passed through `extra` reach a host kernel as NULL, as in a launch. */
    n->u.k.args = extra ? NULL : fc_kernel_args_copy(f, params);
    n->u.k.raw = f->nparams < 0 && !extra ? params : NULL;
    return CUDA_SUCCESS;
}

static void fc_launch_held(int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};
    int saved = errno;
    while (nanosleep(&ts, &ts) != 0)
        ;
    errno = saved;
}

static CUresult fc_launch(const void *h, fc_dims d, CUstream hs, void **params, void **extra,
                          int pt)
{
    if (!fc_g.initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    struct CUfunc_st *f = fc_func(h);
    fc_stream *s;
    CUresult r = f ? fc_stream_resolve(hs, pt, &s) : CUDA_ERROR_INVALID_HANDLE;
    if (r != CUDA_SUCCESS || (r = fc_capture_legacy_check(s)) != CUDA_SUCCESS)
        return r;
    const fc_device_desc *dev = fc_ctx_dev(s->ctx)->d;
    if ((r = fc_launch_check(f, d, dev, params, extra)) != CUDA_SUCCESS)
        return r;
    fc_op *op = fc_op_new(FC_OP_KERNEL);
    op->u.kernel.fn = f->host;
    op->u.kernel.f = f;
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
    /* the call held up, a preempted thread: before the kernel is submitted, or after */
    int hold = f->hold_ns > 0 &&
               __atomic_add_fetch(&f->launches, 1, __ATOMIC_RELAXED) % f->hold_every == 0;
    if (hold && f->hold_before)
        fc_launch_held(f->hold_ns);
    uint64_t seq = fc_submit(s, op);
    if (wait)
        fc_stream_wait(s, seq);
    if (hold && !f->hold_before)
        fc_launch_held(f->hold_ns);
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

/* The block size (a multiple of the warp, at most blockSizeLimit or 1024) with the most resident
 * threads per SM, the largest on a tie, and the grid that fills the device with it: what the
 * runtime header's cudaOccupancyMaxPotentialBlockSizeVariableSMem computes the same way. */
static CUresult fc_potential_block_size(int *minGridSize, int *blockSize, CUfunction func,
                                        CUoccupancyB2DSize smem_of, size_t dynamicSMemSize,
                                        int blockSizeLimit, unsigned flags)
{
    if (!minGridSize || !blockSize || (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    const fc_device_desc *d;
    CUresult r = fc_occupancy_dev(func, 32, &d);
    if (r != CUDA_SUCCESS)
        return r;
    int limit = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
    int best = 0, best_blocks = 0, best_threads = 0;
    for (int bs = limit / 32 * 32; bs > 0; bs -= 32) {
        int blocks = fc_blocks_per_sm(d, bs, smem_of ? smem_of(bs) : dynamicSMemSize);
        if (blocks * bs > best_threads) {
            best_threads = blocks * bs;
            best = bs;
            best_blocks = blocks;
        }
    }
    *blockSize = best;
    *minGridSize = best_blocks * d->sm_count;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
                                                            CUfunction func,
                                                            CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                            size_t dynamicSMemSize, int blockSizeLimit)
{
    FC_ENTER("cuOccupancyMaxPotentialBlockSize");
    return fc_potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                   dynamicSMemSize, blockSizeLimit, 0);
}

FC_EXPORT CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(
    int *minGridSize, int *blockSize, CUfunction func, CUoccupancyB2DSize blockSizeToDynamicSMemSize,
    size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags)
{
    FC_ENTER("cuOccupancyMaxPotentialBlockSizeWithFlags");
    return fc_potential_block_size(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                   dynamicSMemSize, blockSizeLimit, flags);
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
